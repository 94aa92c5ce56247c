"""The diagnostics family: influence measures, residuals, diagnostic tests and plots of a fit.

``influence`` (the mixin of the fit's residuals and influence measures), ``loo`` (their
leave-one-out closed forms), the test battery (heteroskedasticity, autocorrelation,
specification, collinearity, outliers) and ``plots`` (R's ``plot.lm``).
"""
