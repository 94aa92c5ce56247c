#!/usr/bin/env Rscript
# Reference values for an IV fit's weak-instrument block and AER's diagnostics under the
# covariances beyond classical/HC0/HC1/one-way vcovCL(HC1): the Wald F of the excluded
# instruments in each first-stage lm (the robust first-stage F, fixest's ivwald; AER's
# "Weak instruments" row) and the Wald F of the first-stage residuals in the
# control-function lm y ~ x + d + v (AER's robust "Wu-Hausman" row), each by
# car::linearHypothesis(lm, ..., vcov. = V, test = "F") with V from sandwich: vcovHC
# HC2-HC5, vcovCL one-way HC0 and two-way (~ a + b, types HC1 and HC0), NeweyWest(lag = 3,
# prewhite = FALSE) and vcovHAC (quadratic-spectral kernel, Andrews' bandwidth). For the
# effective F it records the first stage's coefficients and covariances (NeweyWest, vcovCL
# ~ a + b unscaled: type = "HC0", cadjust = FALSE). Checked by tests/iv/test_iv_weak_vcov.py.
#
# The data are those of tests/reference/score_vcov_r.json (made by make_score_vcov.R).
# Regenerate from the repository root (needs car, sandwich, jsonlite):
#   Rscript tests/reference/make_iv_weak_vcov.R
# It overwrites tests/reference/iv_weak_vcov_r.json.
suppressPackageStartupMessages({ library(jsonlite); library(car); library(sandwich) })

dat <- as.data.frame(fromJSON("tests/reference/score_vcov_r.json")$data)
inst <- c("z1", "z2", "z3")

covs <- list(
  HC2 = function(m) vcovHC(m, type = "HC2"),
  HC3 = function(m) vcovHC(m, type = "HC3"),
  HC4 = function(m) vcovHC(m, type = "HC4"),
  HC5 = function(m) vcovHC(m, type = "HC5"),
  CL_a_HC0 = function(m) vcovCL(m, cluster = ~a, type = "HC0"),
  CL_ab = function(m) vcovCL(m, cluster = ~ a + b, type = "HC1"),
  CL_ab_HC0 = function(m) vcovCL(m, cluster = ~ a + b, type = "HC0"),
  NW3 = function(m) NeweyWest(m, lag = 3, prewhite = FALSE),
  HAC_qs = function(m) vcovHAC(m))

wald_f <- function(m, hyp, V) linearHypothesis(m, hyp, vcov. = V, test = "F")$F[2]

first_stage <- function(endog, w) {
  f <- as.formula(paste(endog, "~ x1 + x2 + z1 + z2 + z3"))
  if (w) lm(f, data = dat, weights = w) else lm(f, data = dat)
}

model <- function(endog, w) {
  fs <- lapply(endog, first_stage, w = w)
  cf <- dat
  for (j in seq_along(endog)) cf[[paste0("v", j)]] <- residuals(fs[[j]])
  vs <- paste0("v", seq_along(endog))
  f <- as.formula(paste("y ~ x1 + x2 +", paste(c(endog, vs), collapse = " + ")))
  aux <- if (w) lm(f, data = cf, weights = w) else lm(f, data = cf)
  out <- lapply(covs, function(V) list(
    weak = sapply(fs, function(m) wald_f(m, paste(inst, "= 0"), V(m))),
    wu_hausman = wald_f(aux, paste(vs, "= 0"), V(aux))))
  out
}

one <- first_stage("d1", FALSE)
raw_ab <- vcovCL(one, cluster = ~ a + b, type = "HC0", cadjust = FALSE)
out <- list(
  header = list(R = R.version.string, car = as.character(packageVersion("car")),
                sandwich = as.character(packageVersion("sandwich")),
                jsonlite = as.character(packageVersion("jsonlite")),
                script = "tests/reference/make_iv_weak_vcov.R",
                data = "tests/reference/score_vcov_r.json"),
  one = model("d1", FALSE), two = model(c("d1", "d2"), FALSE),
  one_weighted = model("d1", TRUE), two_weighted = model(c("d1", "d2"), TRUE),
  first_stage_one = list(
    coef = unname(coef(one)),
    NW3 = unname(NeweyWest(one, lag = 3, prewhite = FALSE)),
    CL_ab_raw = unname(raw_ab),
    CL_ab_raw_wald = linearHypothesis(one, paste(inst, "= 0"), vcov. = raw_ab,
                                      test = "Chisq")$Chisq[2]))
write_json(out, "tests/reference/iv_weak_vcov_r.json", digits = NA, auto_unbox = TRUE,
           pretty = FALSE)
