"""The linear (spectral) family: methods as filters (``rules``) of one decomposition (``spectral``,
``left_vectors``, ``scaling``, ``_tallqr``), and everything a fit gives (``fit``, ``results``).

``filters`` (coefficients, hat values, RSS), ``selection`` (GCV/LOO), ``refinement``,
``inference`` and ``coefficients`` (covariances, tests), ``dual`` (the attention embedding),
``estimability`` and ``views`` (prediction, attention).
"""
