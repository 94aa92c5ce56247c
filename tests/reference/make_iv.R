#!/usr/bin/env Rscript
# Reference values for attnreg.iv: AER::ivreg coefficients and covariances (classical with
# sigma^2 = RSS/(n - k); sandwich HC0, HC1 and vcovCL(type = "HC1")) and the diagnostics of
# summary(ivreg, diagnostics = TRUE) (weak instruments F, Wu-Hausman, Sargan), unweighted and
# weighted. Checked by tests/iv/test_against_r.py.
#
# Regenerate from the repository root (needs r-cran-aer, r-cran-sandwich, r-cran-jsonlite):
#   Rscript tests/reference/make_iv.R
# It overwrites tests/reference/iv_r.json. The data are drawn here and rounded to 6 decimals,
# so the JSON holds R's doubles exactly and the Python tests refit the same numbers.
suppressPackageStartupMessages({ library(jsonlite); library(AER); library(sandwich) })

set.seed(20261203)
n <- 200
r6 <- function(x) round(x, 6)
x1 <- r6(rnorm(n)); x2 <- r6(rnorm(n)); x3 <- r6(rnorm(n))
z <- matrix(r6(rnorm(n * 4)), n, 4)
u <- rnorm(n) * (0.5 + abs(x1))
d1 <- r6(0.5 * x1 + z %*% c(0.6, 0.4, 0.3, 0.5) + rnorm(n) + 0.6 * u)
d2 <- r6(-0.4 * x2 + z %*% c(0.3, 0.7, 0.5, 0.2) + rnorm(n) + 0.6 * u)
y <- r6(1 + 0.5 * x1 - 0.3 * x2 + 0.2 * x3 + 1.0 * d1 - 1.0 * d2 + u)
w <- r6(runif(n, 0.5, 2))
g <- sample(0:29, n, replace = TRUE)
dat <- data.frame(y = c(y), x1, x2, x3, d1 = c(d1), d2 = c(d2), z1 = z[, 1], z2 = z[, 2],
                  z3 = z[, 3], z4 = z[, 4], w, g)
f <- y ~ x1 + x2 + x3 + d1 + d2 | x1 + x2 + x3 + z1 + z2 + z3 + z4

one <- function(weighted) {
  fit <- if (weighted) ivreg(f, data = dat, weights = w) else ivreg(f, data = dat)
  s <- summary(fit, diagnostics = TRUE)
  dg <- s$diagnostics
  list(coef = unname(coef(fit)), vcov = unname(vcov(fit)),
       HC0 = unname(vcovHC(fit, type = "HC0")), HC1 = unname(vcovHC(fit, type = "HC1")),
       CL_HC1 = unname(vcovCL(fit, cluster = ~g, type = "HC1")),
       weak_f = unname(dg[1:2, "statistic"]), weak_df2 = unname(dg[1:2, "df2"]),
       wu_hausman = unname(dg["Wu-Hausman", "statistic"]),
       wu_hausman_df2 = unname(dg["Wu-Hausman", "df2"]),
       sargan = unname(dg["Sargan", "statistic"]))
}

out <- list(
  header = list(R = R.version.string, AER = as.character(packageVersion("AER")),
                sandwich = as.character(packageVersion("sandwich")),
                jsonlite = as.character(packageVersion("jsonlite")),
                script = "tests/reference/make_iv.R"),
  data = as.list(dat), unweighted = one(FALSE), weighted = one(TRUE))
write_json(out, "tests/reference/iv_r.json", digits = NA, auto_unbox = TRUE, pretty = FALSE)
