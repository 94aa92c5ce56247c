# Reference values for attnreg's generalised linear models (tests/glm/).
# Run from the repository root:  Rscript tests/reference/make_glm.R
# Writes tests/reference/glm_r.json: for every case the data, then R's glm() under its
# default control ("r"), under epsilon = 1e-14, maxit = 100 ("tight": Fisher scoring with a
# non-canonical link converges linearly, and this rule can still stop ~1e-6 short of the
# optimum) and iterated to the optimum ("optimum": glm() restarted from its own coefficients,
# one more IRLS step each time, until they stop changing; a smaller epsilon cannot do it,
# as the deviance stops changing in floating point before the coefficients do), with
# print(summary(glm)) from "Coefficients:" on, sandwich's vcovHC (HC0, HC1; and lmtest's
# coeftest with HC1) and vcovCL
# (clustered by a factor of the data, HC0 and HC1).
suppressPackageStartupMessages({library(jsonlite); library(sandwich); library(lmtest)})
options(useFancyQuotes = FALSE)  # the legend in ASCII quotes, as attnreg prints it

set.seed(27)
n <- 200
sim <- data.frame(x = round(runif(n, 0, 2), 4), g = sample(c("a", "b", "c"), n, TRUE))
sim$z <- round(rnorm(n), 4)
eta <- -0.5 + 0.8 * sim$x + c(a = 0, b = 0.4, c = -0.3)[sim$g]
sim$yb <- rbinom(n, 1, plogis(eta))
sim$ylog <- rbinom(n, 1, exp(-2 + 0.5 * sim$x))
mu_g <- exp(0.3 + 0.5 * sim$x + c(a = 0, b = 0.2, c = -0.1)[sim$g])
sim$ygam <- round(rgamma(n, shape = 3, scale = mu_g / 3), 6)
sim$yid <- round(rgamma(n, shape = 4, scale = (2 + sim$x) / 4), 6)
sim$w <- sample(1:4, n, TRUE)
sim$pyears <- round(runif(n, 50, 500), 2)
sim$deaths <- rpois(n, sim$pyears * exp(-4 + 0.6 * sim$x + 0.3 * (sim$g == "b")))

esoph2 <- data.frame(agegp = as.character(esoph$agegp), tobgp = as.character(esoph$tobgp),
                     ntot = esoph$ncases + esoph$ncontrols)
esoph2$prop <- esoph$ncases / esoph2$ntot
wb <- data.frame(breaks = warpbreaks$breaks, wool = as.character(warpbreaks$wool),
                 tension = as.character(warpbreaks$tension))
wb$wt <- rep(c(1, 2, 3), length.out = nrow(wb))
insects <- data.frame(count = InsectSprays$count, spray = as.character(InsectSprays$spray))
mt <- mtcars[, c("mpg", "wt", "hp", "am")]

# fits whose IRLS steps R halves (a deviance that is not finite; means out of bounds)
halving <- function(seed, k) {
  set.seed(seed); n <- 40
  x <- round(runif(n, 0, 3), 3)
  y <- list(rbinom(n, 1, exp(-2.5 + 0.8 * x)), rpois(n, 0.05 + 0.5 * x),
            rgamma(n, 2, scale = (0.05 + x) / 2))
  data.frame(x = x, y = round(y[[k]], 6))
}
halv_gamma <- halving(5, 3)
halv_binomial <- halving(13, 1)
halv_poisson <- halving(63, 2)

cases <- list(
  list(name = "binomial_logit_mtcars", data = "mt", r = "am ~ wt", py = "am ~ wt",
       family = "binomial", link = "logit"),
  list(name = "binomial_logit_factor", data = "sim", r = "yb ~ x + g", py = "yb ~ x + C(g)",
       family = "binomial", link = "logit"),
  list(name = "binomial_probit_esoph", data = "esoph2", r = "prop ~ agegp + tobgp",
       py = "prop ~ C(agegp) + C(tobgp)", family = "binomial", link = "probit", weights = "ntot"),
  list(name = "binomial_cloglog", data = "sim", r = "yb ~ x + g", py = "yb ~ x + C(g)",
       family = "binomial", link = "cloglog"),
  list(name = "binomial_cauchit", data = "mt", r = "am ~ wt", py = "am ~ wt",
       family = "binomial", link = "cauchit"),
  list(name = "binomial_log", data = "sim", r = "ylog ~ x", py = "ylog ~ x",
       family = "binomial", link = "log"),
  list(name = "poisson_log_warpbreaks", data = "wb", r = "breaks ~ wool + tension",
       py = "breaks ~ C(wool) + C(tension)", family = "poisson", link = "log"),
  list(name = "poisson_log_weights", data = "wb", r = "breaks ~ wool + tension",
       py = "breaks ~ C(wool) + C(tension)", family = "poisson", link = "log", weights = "wt"),
  list(name = "poisson_identity_insects", data = "insects", r = "count ~ spray",
       py = "count ~ C(spray)", family = "poisson", link = "identity"),
  list(name = "poisson_sqrt_insects", data = "insects", r = "count ~ spray",
       py = "count ~ C(spray)", family = "poisson", link = "sqrt"),
  list(name = "poisson_offset", data = "sim", r = "deaths ~ x + g", py = "deaths ~ x + C(g)",
       family = "poisson", link = "log", offset = "log(pyears)", py_offset = "np.log(pyears)"),
  list(name = "gaussian_identity_mtcars", data = "mt", r = "mpg ~ wt + hp", py = "mpg ~ wt + hp",
       family = "gaussian", link = "identity"),
  list(name = "gaussian_log_mtcars", data = "mt", r = "mpg ~ wt", py = "mpg ~ wt",
       family = "gaussian", link = "log"),
  list(name = "gaussian_inverse_mtcars", data = "mt", r = "mpg ~ wt", py = "mpg ~ wt",
       family = "gaussian", link = "inverse"),
  list(name = "gamma_log", data = "sim", r = "ygam ~ x + g", py = "ygam ~ x + C(g)",
       family = "Gamma", link = "log"),
  list(name = "gamma_inverse", data = "sim", r = "ygam ~ x + g", py = "ygam ~ x + C(g)",
       family = "Gamma", link = "inverse"),
  list(name = "gamma_identity", data = "sim", r = "yid ~ x", py = "yid ~ x",
       family = "Gamma", link = "identity"),
  list(name = "gamma_log_weights", data = "sim", r = "ygam ~ x + z", py = "ygam ~ x + z",
       family = "Gamma", link = "log", weights = "w"),
  list(name = "inverse_gaussian_canonical", data = "sim", r = "yid ~ x", py = "yid ~ x",
       family = "inverse.gaussian", link = "1/mu^2"),
  list(name = "inverse_gaussian_inverse", data = "sim", r = "ygam ~ x + g", py = "ygam ~ x + C(g)",
       family = "inverse.gaussian", link = "inverse"),
  list(name = "inverse_gaussian_identity", data = "sim", r = "yid ~ x", py = "yid ~ x",
       family = "inverse.gaussian", link = "identity"),
  list(name = "inverse_gaussian_log", data = "sim", r = "ygam ~ x + z", py = "ygam ~ x + z",
       family = "inverse.gaussian", link = "log"),
  list(name = "halving_gamma_identity", data = "halv_gamma", r = "y ~ x", py = "y ~ x",
       family = "Gamma", link = "identity", halving = TRUE),
  list(name = "halving_binomial_log", data = "halv_binomial", r = "y ~ x", py = "y ~ x",
       family = "binomial", link = "log", halving = TRUE),
  list(name = "halving_poisson_identity", data = "halv_poisson", r = "y ~ x", py = "y ~ x",
       family = "poisson", link = "identity", halving = TRUE)
)

one_fit <- function(cs, d, control, polish = FALSE) {
  fam <- get(cs$family)(link = cs$link)
  args <- list(formula = as.formula(cs$r), family = fam, data = d, control = control)
  if (!is.null(cs$weights)) args$weights <- d[[cs$weights]]
  if (!is.null(cs$offset)) args$offset <- eval(parse(text = cs$offset), d)
  fit <- suppressWarnings(do.call(glm, args))  # the halving cases warn as they halve
  if (polish) for (i in 1:100) {
    args$start <- coef(fit)
    new <- do.call(glm, args)
    change <- max(abs(coef(new) - coef(fit)))
    fit <- new
    if (change <= 4 * .Machine$double.eps * max(abs(coef(fit)))) break
  }
  s <- summary(fit)
  out <- capture.output(print(s))
  from <- grep("^Coefficients", out)[1]
  list(coef = unname(coef(fit)), names = names(coef(fit)), se = unname(s$coefficients[, 2]),
       stat = unname(s$coefficients[, 3]), p = unname(s$coefficients[, 4]),
       deviance = fit$deviance, null_deviance = fit$null.deviance,
       df_residual = fit$df.residual, df_null = fit$df.null, aic = fit$aic,
       dispersion = s$dispersion, iter = fit$iter, converged = fit$converged,
       summary = paste(out[from:length(out)], collapse = "\n"),
       fitted = unname(fitted(fit)), linear_predictor = unname(fit$linear.predictors),
       resid_deviance = unname(residuals(fit, "deviance")),
       resid_pearson = unname(residuals(fit, "pearson")),
       resid_working = unname(residuals(fit, "working")),
       resid_response = unname(residuals(fit, "response")),
       vcov = unname(vcov(fit)), vcov_hc0 = unname(vcovHC(fit, type = "HC0")),
       vcov_hc1 = unname(vcovHC(fit, type = "HC1")),
       coeftest_hc1 = unname(coeftest(fit, vcov. = vcovHC(fit, type = "HC1"))[, 2:4]),
       vcov_cl_hc0 = if (is.null(cs$cluster)) NULL else
         unname(vcovCL(fit, cluster = d[[cs$cluster]], type = "HC0")),
       vcov_cl_hc1 = if (is.null(cs$cluster)) NULL else
         unname(vcovCL(fit, cluster = d[[cs$cluster]], type = "HC1")))
}

clusters <- c(sim = "g", wb = "tension", esoph2 = "agegp")  # not insects: spray is its only regressor
out <- list()
for (cs in cases) {
  d <- get(cs$data)
  if (cs$data %in% names(clusters)) cs$cluster <- clusters[[cs$data]]
  out[[cs$name]] <- list(
    formula = cs$py, family = cs$family, link = cs$link,
    weights = if (is.null(cs$weights)) NULL else cs$weights,
    offset = if (is.null(cs$py_offset)) NULL else cs$py_offset,
    cluster = if (is.null(cs$cluster)) NULL else cs$cluster,
    data = as.list(d),
    halving = isTRUE(cs$halving),
    r = one_fit(cs, d, glm.control()),
    # at a boundary a restart's first step is out of bounds and R stops: no "optimum" there
    tight = if (isTRUE(cs$halving)) NULL else
      one_fit(cs, d, glm.control(epsilon = 1e-14, maxit = 100))[c("coef", "iter")],
    optimum = if (isTRUE(cs$halving)) NULL else
      one_fit(cs, d, glm.control(epsilon = 1e-14, maxit = 100), polish = TRUE))
}
header <- list(generator = "tests/reference/make_glm.R", r_version = R.version.string,
               sandwich = as.character(packageVersion("sandwich")))
writeLines(toJSON(list(header = header, cases = out), digits = NA, auto_unbox = TRUE,
                  null = "null", pretty = FALSE),
           "tests/reference/glm_r.json")
