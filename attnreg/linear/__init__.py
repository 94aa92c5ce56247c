"""The linear (spectral) family: methods as filters (``rules``) of one decomposition (``spectral``,
``left_vectors``, ``decompositions``, ``tallqr``), and everything a fit gives (``fit``, ``results``).

``filters`` (coefficients, hat values, RSS), ``selection`` (GCV/LOO), ``refinement``,
``coefficients`` and ``fitstats`` (the covariance of the fit, from
:mod:`attnreg.inference.vcov`), ``subfits`` (the decompositions the inference and diagnostics
families ask of a fit) and ``score_vcov`` (the spectral adapter that computes any registered
covariance for an estimator that hands over its score design). The covariances, tests,
diagnostics and views are in their own families, which import nothing of this one.
"""
