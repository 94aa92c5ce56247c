"""The covariances of a fit's coefficients, computed once for every estimator.

``registry`` (:data:`~attnreg.inference.vcov.registry.VCOV_REGISTRY`: classical and
HC0–HC3, and :func:`~attnreg.inference.vcov.registry.register_vcov`), ``vcov_coords`` (the
coordinates they compute in and the maps to the coefficients), ``scorestats`` (the score
statistics that serve in-memory, chunked and dask fits alike), ``hac`` and ``hac_kernels``
(kernel HAC), ``hc45`` (HC4, HC4m, HC5), ``cluster`` with ``cluster_ids`` and
``cluster_columns`` (one- and multi-way cluster, Driscoll–Kraay), ``cr2`` and
``satterthwaite`` (Bell–McCaffrey and its degrees of freedom).

Nothing here imports the linear family: a fit hands over its decomposition (a
:class:`~attnreg.linear.spectral.Spectrum`, read through its attributes only) and
:mod:`attnreg.linear.score_vcov` decomposes the score design of other estimators.
"""
