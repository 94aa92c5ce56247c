#!/usr/bin/env Rscript
# Reference values for CR2 (Bell-McCaffrey) cluster-robust covariances of GLM fits:
# clubSandwich::vcovCR(glm_fit, cluster, type = "CR2") (its working model for a glm: the
# weight matrix diag(w / V(mu)) and the target its inverse, inverse_var = TRUE) on logit,
# probit, Poisson (with and without prior weights), Gaussian (prior weights) and two-column
# binomial (cbind(succ, fail), trials drawn here and stored) glms.
# Checked by tests/glm/test_glm_cr2.py.
#
# Regenerate from the repository root (needs clubSandwich, jsonlite):
#   Rscript tests/reference/make_glm_cr2.R
# It overwrites tests/reference/glm_cr2_r.json. The data are those of score_vcov_r.json
# (written by make_score_vcov.R), read back here, so both files describe the same rows.
# GLM fits use glm.control(epsilon = 1e-14, maxit = 100) (attnreg's default: the optimum).
suppressPackageStartupMessages({ library(jsonlite); library(clubSandwich) })

dat <- as.data.frame(fromJSON("tests/reference/score_vcov_r.json")$data)
set.seed(20261204)
dat$trials <- sample(1:20, nrow(dat), replace = TRUE)
dat$succ <- rbinom(nrow(dat), dat$trials, plogis(-0.2 + 0.6 * dat$x1 - 0.4 * dat$x2))
dat$fail <- dat$trials - dat$succ
ctl <- glm.control(epsilon = 1e-14, maxit = 100)
fits <- list(
  logit = list(glm(yb ~ x1 + x2, family = binomial, data = dat, control = ctl), "a"),
  probit = list(glm(yb ~ x1 + x2, family = binomial(link = "probit"), data = dat,
                    control = ctl), "b"),
  poisson = list(glm(yc ~ x1 + x2, family = poisson, data = dat, control = ctl), "b"),
  poisson_w = list(glm(yc ~ x1 + x2, family = poisson, data = dat, weights = w,
                       control = ctl), "a"),
  gaussian_w = list(glm(y ~ x1 + x2 + d1, family = gaussian, data = dat, weights = w,
                        control = ctl), "a"),
  cbind = list(glm(cbind(succ, fail) ~ x1 + x2, family = binomial, data = dat,
                   control = ctl), "b"))
out <- list(header = list(R = R.version.string,
                          clubSandwich = as.character(packageVersion("clubSandwich")),
                          jsonlite = as.character(packageVersion("jsonlite")),
                          script = "tests/reference/make_glm_cr2.R"),
            data = list(succ = dat$succ, fail = dat$fail))
for (name in names(fits)) {
  fit <- fits[[name]][[1]]
  cl <- fits[[name]][[2]]
  V <- vcovCR(fit, cluster = dat[[cl]], type = "CR2")
  out[[name]] <- list(cluster = cl, coef = unname(coef(fit)),
                      CR2 = unname(matrix(as.numeric(V), nrow(V))))
}
writeLines(toJSON(out, digits = NA, auto_unbox = TRUE, pretty = TRUE),
           "tests/reference/glm_cr2_r.json")
