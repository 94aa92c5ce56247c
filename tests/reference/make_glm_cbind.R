# Reference values for attnreg's two-column binomial response, glm(cbind(successes, failures) ~ ...)
# (tests/glm/test_glm_cbind.py).
# Run from the repository root:  Rscript tests/reference/make_glm_cbind.R
# Writes tests/reference/glm_cbind_r.json: the data, and for every case R's glm() under its
# default control ("r": coefficients, standard errors, deviances, AIC, df, iterations and
# print(summary(glm)) from "Coefficients:" on) and iterated to the optimum ("optimum": glm()
# restarted from its own coefficients until they stop changing), with predict(type =
# "response") on new rows. Prior weights multiply the trials (R's binomial()$initialize); an
# offset is written in R's formula (predict() then evaluates it on the new rows).
suppressPackageStartupMessages({library(jsonlite)})
options(useFancyQuotes = FALSE)  # the legend in ASCII quotes, as attnreg prints it

set.seed(2724)
n <- 90
d <- data.frame(x = round(runif(n, 0, 2), 4), z = round(rnorm(n), 4),
                g = sample(c("a", "b", "c"), n, TRUE))
d$trials <- sample(1:25, n, TRUE)
d$succ <- rbinom(n, d$trials, pnorm(-0.4 + 0.6 * d$x - 0.3 * d$z +
                                      c(a = 0, b = 0.3, c = -0.2)[d$g]))
d$fail <- d$trials - d$succ
d$w <- sample(1:3, n, TRUE)
d$expo <- round(runif(n, -0.5, 0.5), 3)
d0 <- d
d0$succ[c(5, 17)] <- 0  # two rows with no trials: prior weight 0 (R's n.ok leaves them out)
d0$fail[c(5, 17)] <- 0
new <- data.frame(x = c(0.2, 1.1, 1.9), z = c(-1, 0.3, 1.5), g = c("a", "b", "c"),
                  expo = c(0, 0.2, -0.3))

cases <- list(
  list(name = "logit_factor", data = "d", r = "cbind(succ, fail) ~ x + z + g",
       py = "cbind(succ, fail) ~ x + z + C(g)", link = "logit"),
  list(name = "probit_weights_offset", data = "d", r = "cbind(succ, fail) ~ x + z + offset(expo)",
       py = "cbind(succ, fail) ~ x + z", link = "probit", weights = "w", offset = "expo"),
  list(name = "cloglog_zero_trials", data = "d0", r = "cbind(succ, fail) ~ x + g",
       py = "cbind(succ, fail) ~ x + C(g)", link = "cloglog", weights = "w")
)

one_fit <- function(cs, dd, control, polish = FALSE) {
  args <- list(formula = as.formula(cs$r), family = binomial(link = cs$link), data = dd,
               control = control)
  if (!is.null(cs$weights)) args$weights <- dd[[cs$weights]]
  fit <- do.call(glm, args)
  if (polish) for (i in 1:100) {
    args$start <- coef(fit)
    new_fit <- do.call(glm, args)
    change <- max(abs(coef(new_fit) - coef(fit)))
    fit <- new_fit
    if (change <= 4 * .Machine$double.eps * max(abs(coef(fit)))) break
  }
  s <- summary(fit)
  out <- capture.output(print(s))
  from <- grep("^Coefficients", out)[1]
  nd <- new
  list(coef = unname(coef(fit)), names = names(coef(fit)), se = unname(s$coefficients[, 2]),
       stat = unname(s$coefficients[, 3]), p = unname(s$coefficients[, 4]),
       deviance = fit$deviance, null_deviance = fit$null.deviance,
       df_residual = fit$df.residual, df_null = fit$df.null, aic = fit$aic,
       iter = fit$iter, converged = fit$converged,
       summary = paste(out[from:length(out)], collapse = "\n"),
       fitted = unname(fitted(fit)), prior_weights = unname(fit$prior.weights),
       resid_deviance = unname(residuals(fit, "deviance")),
       resid_pearson = unname(residuals(fit, "pearson")),
       predict_response = unname(predict(fit, newdata = nd, type = "response")))
}

out <- list()
for (cs in cases) {
  dd <- get(cs$data)
  out[[cs$name]] <- list(
    formula = cs$py, link = cs$link, data = as.list(dd),
    weights = if (is.null(cs$weights)) NULL else cs$weights,
    offset = if (is.null(cs$offset)) NULL else cs$offset,
    r = one_fit(cs, dd, glm.control()),
    optimum = one_fit(cs, dd, glm.control(epsilon = 1e-14, maxit = 100), polish = TRUE))
}
header <- list(generator = "tests/reference/make_glm_cbind.R", r_version = R.version.string,
               jsonlite = as.character(packageVersion("jsonlite")))
writeLines(toJSON(list(header = header, new = as.list(new), cases = out), digits = NA,
                  auto_unbox = TRUE, null = "null", pretty = FALSE),
           "tests/reference/glm_cbind_r.json")
