#!/usr/bin/env Rscript
# R's lm() with prior weights of zero: the reference for tests/formula/test_input_rules.py.
# Rows of weight zero are not part of the fit (nobs, df), but keep fitted values and
# residuals; print(summary()) counts their weighted residual (0) in the quantiles.
# Regenerate from the repository root: Rscript tests/reference/make_zero_weights.R
suppressPackageStartupMessages(library(jsonlite))
set.seed(1)
n <- 30
x <- rnorm(n)
y <- 1 + x + rnorm(n)
w <- runif(n, 1, 2)
w[c(1, 6, 18)] <- 0
fit <- lm(y ~ x, weights = w)
s <- summary(fit)
out <- list(
  r_version = R.version.string,
  data = list(x = x, y = y, w = w),
  coef = unname(coef(fit)), std_err = unname(s$coefficients[, 2]), sigma = s$sigma,
  nobs = nobs(fit), df_resid = df.residual(fit), r_squared = s$r.squared,
  fitted = unname(fitted(fit)), resid = unname(residuals(fit)),
  hat = unname(hatvalues(fit)),
  summary = paste(capture.output(print(s)), collapse = "\n")
)
here <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)))
write_json(out, file.path(here, "zero_weights.json"), digits = NA, auto_unbox = TRUE, pretty = TRUE)
