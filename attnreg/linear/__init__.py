"""The linear (spectral) family: the decomposition (``spectral``, ``_tallqr``), the fitter
(``fit``), lambda/k selection, refinement, covariances (``inference``) and ``results``.
"""
