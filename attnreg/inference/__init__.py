"""The inference family: what is computed from a fit's coefficients and their covariance,
whatever estimator produced them.

``hypotheses`` (Wald and t tests of linear restrictions, parsed by ``restrictions``),
``tstats`` (the t or z reference distribution), ``anova`` (with ``anova_rss`` and
``anova_wald``), ``tidy`` (broom's tidy, glance and augment) and ``bootstrap`` (wild, pairs
and residual replications).
"""
