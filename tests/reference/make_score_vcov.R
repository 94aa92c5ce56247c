#!/usr/bin/env Rscript
# Reference values for the covariances of IV and GLM fits computed by the shared covariance
# registry (attnreg.linear.score_vcov): sandwich on AER::ivreg and on glm (logit, Poisson):
# vcovHC HC0-HC5 (HC4m too), vcovCL one- and two-way (~a + b; types HC1 and HC0), NeweyWest(lag = 3, prewhite = FALSE)
# and vcovHAC (Andrews' quadratic-spectral kernel, adjust = TRUE); for ivreg also
# clubSandwich::vcovCR(type = "CR2"). Checked by
# tests/iv/test_iv_vcov_r.py and tests/glm/test_glm_vcov_r.py.
#
# Regenerate from the repository root (needs AER, sandwich, clubSandwich, jsonlite):
#   Rscript tests/reference/make_score_vcov.R
# It overwrites tests/reference/score_vcov_r.json. The data are drawn here and rounded to 6
# decimals, so the JSON holds R's doubles exactly and the Python tests refit the same numbers.
# GLM fits use glm.control(epsilon = 1e-14, maxit = 100) (attnreg's default: the optimum).
suppressPackageStartupMessages({ library(jsonlite); library(AER); library(sandwich)
                                  library(clubSandwich) })

set.seed(20261204)
n <- 240
r6 <- function(x) round(x, 6)
x1 <- r6(rnorm(n)); x2 <- r6(rnorm(n))
z <- matrix(r6(rnorm(n * 3)), n, 3)
a <- sample(1:12, n, replace = TRUE)
b <- sample(1:8, n, replace = TRUE)
u <- rnorm(n) * (0.5 + abs(x1)) + 0.3 * rnorm(12)[a]
u <- as.numeric(stats::filter(u, 0.5, method = "recursive"))  # serially correlated
d1 <- r6(0.5 * x1 + z %*% c(0.7, 0.4, 0.3) + rnorm(n) + 0.6 * u)
d2 <- r6(-0.4 * x2 + z %*% c(0.2, 0.6, 0.5) + rnorm(n) + 0.5 * u)
y <- r6(1 + 0.5 * x1 - 0.3 * x2 + 1.0 * d1 - 0.5 * d2 + u)
w <- r6(runif(n, 0.5, 2))
yb <- rbinom(n, 1, plogis(-0.3 + 0.8 * x1 - 0.5 * x2 + 0.2 * rnorm(12)[a]))
yc <- rpois(n, exp(0.4 + 0.5 * x1 + 0.3 * x2 + 0.2 * rnorm(8)[b]))
dat <- data.frame(y = c(y), x1, x2, d1 = c(d1), d2 = c(d2), z1 = z[, 1], z2 = z[, 2],
                  z3 = z[, 3], w, a, b, yb, yc)

covs <- function(fit, hc = c("HC0", "HC1", "HC2", "HC3", "HC4", "HC4m", "HC5")) {
  out <- lapply(hc, function(t) unname(vcovHC(fit, type = t)))
  names(out) <- hc
  c(out, list(
    CL_a = unname(vcovCL(fit, cluster = ~a, type = "HC1")),
    CL_a_HC0 = unname(vcovCL(fit, cluster = ~a, type = "HC0")),  # vcovCL's default type here
    CL_ab = unname(vcovCL(fit, cluster = ~a + b, type = "HC1")),
    CL_ab_HC0 = unname(vcovCL(fit, cluster = ~a + b, type = "HC0")),
    NW3 = unname(NeweyWest(fit, lag = 3, prewhite = FALSE)),
    HAC_qs = unname(vcovHAC(fit)),
    coef = unname(coef(fit))))
}

f_iv <- y ~ x1 + x2 + d1 + d2 | x1 + x2 + z1 + z2 + z3
iv <- ivreg(f_iv, data = dat)
ivw <- ivreg(f_iv, data = dat, weights = w)
ctl <- glm.control(epsilon = 1e-14, maxit = 100)
logit <- glm(yb ~ x1 + x2, family = binomial, data = dat, control = ctl)
poisson <- glm(yc ~ x1 + x2, family = poisson, data = dat, control = ctl)

out <- list(
  header = list(R = R.version.string, AER = as.character(packageVersion("AER")),
                sandwich = as.character(packageVersion("sandwich")),
                clubSandwich = as.character(packageVersion("clubSandwich")),
                jsonlite = as.character(packageVersion("jsonlite")),
                script = "tests/reference/make_score_vcov.R"),
  data = as.list(dat),
  iv = c(covs(iv), list(CR2_a = unname(as.matrix(vcovCR(iv, cluster = dat$a, type = "CR2"))))),
  iv_weighted = covs(ivw, c("HC0", "HC1")),
  logit = covs(logit), poisson = covs(poisson))
write_json(out, "tests/reference/score_vcov_r.json", digits = NA, auto_unbox = TRUE,
           pretty = FALSE)
