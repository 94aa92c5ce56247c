# Reference values for attnreg's GLM predictions with standard errors and for the two-column
# binomial response (tests/glm/test_glm_predict.py).
# Run from the repository root:  Rscript tests/reference/make_glm_predict.R
# Writes tests/reference/glm_predict_r.json: the data; for each case R's
# predict(glm, newdata, type = "link" | "response", se.fit = TRUE) on new rows; and the fit of
# glm(cbind(succ, fail) ~ ...) (coefficients, standard errors, deviance, AIC, df and the
# printed summary). Fits use glm.control(epsilon = 1e-14, maxit = 100) so that they stop at
# the optimum (attnreg's default control).
suppressPackageStartupMessages({library(jsonlite)})
options(useFancyQuotes = FALSE)

set.seed(2728)
n <- 120
d <- data.frame(x = round(runif(n, 0, 2), 4), g = sample(c("a", "b", "c"), n, TRUE),
                z = round(rnorm(n), 4))
d$yb <- rbinom(n, 1, plogis(-0.5 + 0.8 * d$x + c(a = 0, b = 0.4, c = -0.3)[d$g]))
d$pyears <- round(runif(n, 50, 500), 2)
d$deaths <- rpois(n, d$pyears * exp(-4 + 0.6 * d$x + 0.3 * (d$g == "b")))
d$ygam <- round(rgamma(n, shape = 3, scale = exp(0.3 + 0.5 * d$x + 0.1 * d$z) / 3), 6)
d$trials <- sample(5:30, n, TRUE)
d$succ <- rbinom(n, d$trials, plogis(-0.2 + 0.7 * d$x - 0.4 * d$z))
d$fail <- d$trials - d$succ
new <- data.frame(x = c(0.1, 0.9, 1.7, 2.5), g = c("a", "b", "c", "b"), z = c(-1, 0, 0.5, 2),
                  pyears = c(60, 200, 480, 100))

ctl <- glm.control(epsilon = 1e-14, maxit = 100)
specs <- list(
  list(name = "logit", family = "binomial", link = "logit", offset = NULL,
       formula = "yb ~ g + x + z", fit = function() glm(yb ~ g + x + z, binomial(), d, control = ctl)),
  list(name = "probit", family = "binomial", link = "probit", offset = NULL,
       formula = "yb ~ x + z",
       fit = function() glm(yb ~ x + z, binomial(link = "probit"), d, control = ctl)),
  list(name = "poisson_offset", family = "poisson", link = "log", offset = "np.log(pyears)",
       formula = "deaths ~ g + x",
       fit = function() glm(deaths ~ g + x, poisson(), d, offset = log(pyears), control = ctl)),
  list(name = "gamma_log", family = "Gamma", link = "log", offset = NULL,
       formula = "ygam ~ x + z",
       fit = function() glm(ygam ~ x + z, Gamma(link = "log"), d, control = ctl)))
cases <- list()
for (s in specs) {
  f <- s$fit()
  pl <- predict(f, newdata = new, type = "link", se.fit = TRUE)
  pr <- predict(f, newdata = new, type = "response", se.fit = TRUE)
  cases[[s$name]] <- list(family = s$family, link = s$link, formula = s$formula,
                          offset = s$offset, dispersion = summary(f)$dispersion,
                          df_resid = f$df.residual,
                          link_fit = unname(pl$fit), link_se = unname(pl$se.fit),
                          response_fit = unname(pr$fit), response_se = unname(pr$se.fit))
}
fb <- glm(cbind(succ, fail) ~ x + z, binomial(), d, control = ctl)
sb <- summary(fb)
binom <- list(formula = "cbind(succ, fail) ~ x + z", coef = unname(coef(fb)),
              names = names(coef(fb)), se = unname(sb$coefficients[, 2]),
              deviance = fb$deviance, null_deviance = fb$null.deviance, aic = fb$aic,
              df_resid = fb$df.residual, df_null = fb$df.null,
              fitted = unname(fitted(fb)), prior_weights = unname(fb$prior.weights),
              printed = capture.output(print(sb)))
out <- list(header = list(R = R.version.string, jsonlite = as.character(packageVersion("jsonlite")),
                          script = "tests/reference/make_glm_predict.R"),
            data = d, new = new, cases = cases, cbind = binom)
writeLines(toJSON(out, digits = NA, auto_unbox = TRUE, null = "null"),
           "tests/reference/glm_predict_r.json")
