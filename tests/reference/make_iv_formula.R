#!/usr/bin/env Rscript
# Reference values for attnreg("y ~ x | d ~ z", data): AER::ivreg fitted from formulas with a
# factor among the exogenous regressors and one among the instruments, and missing values in
# y, x, d and z (one model frame: the same rows dropped). For each model: the coefficient
# table of summary(fit, diagnostics = TRUE) under the classical covariance and under
# sandwich's HC0, HC1 and vcovCL(type = "HC1") covariances, sigma, df, R-squared, the Wald test,
# the diagnostics matrix, the printed summary text (checked digit for digit), and
# car::linearHypothesis(fit, c("d1 + x1 = 1", "x1 = 0")) under each covariance.
# Checked by tests/iv/test_iv_formula_r.py and tests/iv/test_iv_summary.py.
#
# Regenerate from the repository root (needs r-cran-aer, r-cran-sandwich, r-cran-car,
# r-cran-jsonlite):
#   Rscript tests/reference/make_iv_formula.R
# It overwrites tests/reference/iv_formula_r.json. The data are drawn here and rounded to 6
# decimals, so the JSON holds R's doubles exactly and the Python tests refit the same numbers.
options(useFancyQuotes = FALSE)  # the legend with ASCII quotes, as attnreg prints it
suppressPackageStartupMessages({ library(jsonlite); library(AER); library(sandwich); library(car) })

set.seed(20261204)
n <- 150
r6 <- function(x) round(x, 6)
x1 <- r6(rnorm(n)); x2 <- r6(rnorm(n))
grp <- sample(c("a", "b", "c"), n, replace = TRUE)
zf <- sample(c("p", "q", "r"), n, replace = TRUE)
z1 <- r6(rnorm(n)); z2 <- r6(rnorm(n))
u <- rnorm(n) * (0.5 + abs(x1))
zeff <- c(p = 0, q = 0.8, r = -0.6)[zf]
d1 <- r6(0.5 * x1 + 0.7 * z1 + 0.4 * z2 + zeff + rnorm(n) + 0.6 * u)
d2 <- r6(-0.4 * x2 + 0.3 * z1 + 0.8 * z2 - zeff + rnorm(n) + 0.6 * u)
geff <- c(a = 0, b = 0.5, c = -0.5)[grp]
y <- r6(1 + 0.5 * x1 - 0.3 * x2 + geff + 1.0 * d1 - 1.0 * d2 + u)
w <- r6(runif(n, 0.5, 2))
g <- sample(0:24, n, replace = TRUE)
y[3] <- NA; x1[10] <- NA; d2[20] <- NA; z1[30] <- NA; zf[40] <- NA
dat <- data.frame(y, x1, x2, grp, d1, d2, z1, z2, zf, w, g)

models <- list(
  two = y ~ x1 + x2 + grp + d1 + d2 | x1 + x2 + grp + z1 + z2 + zf,
  one = y ~ x1 + d1 | x1 + z1 + z2)

table <- function(s) unname(s$coefficients)
one_fit <- function(f, weighted) {
  fit <- if (weighted) ivreg(f, data = dat, weights = w) else ivreg(f, data = dat)
  s <- summary(fit, diagnostics = TRUE)
  rows <- as.integer(names(residuals(fit)))  # the rows of the model frame
  cl <- function(x) vcovCL(x, cluster = dat$g[rows], type = "HC1")
  hc0 <- function(x) vcovHC(x, type = "HC0")
  hc1 <- function(x) vcovHC(x, type = "HC1")
  hyp <- c("d1 + x1 = 1", "x1 = 0")  # car::linearHypothesis: F on (2, n - k) df
  lh <- function(v = NULL) {
    h <- if (is.null(v)) linearHypothesis(fit, hyp, test = "F") else
      linearHypothesis(fit, hyp, vcov. = v(fit), test = "F")
    unname(c(h[2, "F"], h[2, "Pr(>F)"], h[2, "Df"], h[2, "Res.Df"]))
  }
  robust <- function(v) {
    sv <- summary(fit, vcov. = v, diagnostics = TRUE)
    list(table = table(sv), vcov = unname(v(fit)), wald = unname(sv$waldtest),
         diagnostics = unname(sv$diagnostics), hypothesis = lh(v))
  }
  list(names = names(coef(fit)), nobs = length(fit$residuals),
       table = table(s), vcov = unname(vcov(fit)), sigma = fit$sigma,
       df = unname(s$df), r2 = s$r.squared, adj_r2 = s$adj.r.squared, wald = unname(s$waldtest),
       diagnostics = unname(s$diagnostics), diagnostic_names = rownames(s$diagnostics),
       resid = unname(residuals(fit)), fitted = unname(fitted(fit)),
       printed = capture.output(print(s)), hypothesis = lh(),
       HC0 = robust(hc0), HC1 = robust(hc1), cluster = robust(cl))
}

out <- list(
  header = list(R = R.version.string, AER = as.character(packageVersion("AER")),
                sandwich = as.character(packageVersion("sandwich")),
                car = as.character(packageVersion("car")),
                jsonlite = as.character(packageVersion("jsonlite")),
                script = "tests/reference/make_iv_formula.R"),
  data = as.list(dat),
  two = one_fit(models$two, FALSE), two_weighted = one_fit(models$two, TRUE),
  one = one_fit(models$one, FALSE))
write_json(out, "tests/reference/iv_formula_r.json", digits = NA, auto_unbox = TRUE,
           pretty = FALSE, na = "null")
