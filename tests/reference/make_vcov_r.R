#!/usr/bin/env Rscript
# sandwich's HC4 / HC4m / HC5 and HAC conventions, and lmtest's z tests (df = Inf): the
# reference for tests/inference/vcov/test_vcov_r.py.
#
# vcovHC(type = "HC4", "HC4m", "HC5") with sandwich's default constants, for OLS and WLS;
# NeweyWest, vcovHAC, kernHAC with Bartlett / Parzen / Quadratic Spectral kernels, fixed,
# Andrews (1991) and Newey-West (1994) bandwidths, prewhitening of order 0, 1 and 2 and
# adjust TRUE / FALSE, on two data sets (R's LakeHuron with an intercept-only and a trend
# model; a simulated regression with AR(1) regressors and errors: unweighted, weighted,
# without intercept, and with an aliased column, whose row and column are null);
# lmtest::coeftest(fit, vcov. = V, df = Inf) (z values, p-values and its printout),
# lmtest::coefci(df = Inf) and lmtest::waldtest(test = "Chisq").
#
# Regenerate from the repository root, in the C locale (ASCII quotes in the significance
# legend); needs r-cran-sandwich, r-cran-lmtest, r-cran-jsonlite:
#
#   LC_ALL=C Rscript tests/reference/make_vcov_r.R
#
# The simulated data are rounded to 10 significant digits before the fit, so R and the
# Python tests fit exactly the numbers written to the JSON.
suppressPackageStartupMessages({library(sandwich); library(lmtest); library(jsonlite)})
stopifnot(l10n_info()$`UTF-8` == FALSE)
options(width = 80, digits = 7, scipen = 0, OutDec = ".", show.signif.stars = TRUE)

mat <- function(V) unname(lapply(seq_len(nrow(V)), function(i) unname(V[i, ])))
entry <- function(V, call) list(call = call, vcov = mat(V), se = unname(sqrt(diag(V))))

hc_entries <- function(fit) {
  out <- list()
  for (type in c("HC4", "HC4m", "HC5"))
    out[[type]] <- entry(vcovHC(fit, type = type), sprintf("vcovHC(fit, type = \"%s\")", type))
  out
}

# Each HAC entry: the R call, the attnreg with_vcov keywords, the covariance.
hac_cases <- list(
  list("NeweyWest(fit)", list(maxlags = "newey-west", prewhite = TRUE),
       function(f) NeweyWest(f)),
  list("NeweyWest(fit, lag = 4, prewhite = FALSE)", list(maxlags = 4),
       function(f) NeweyWest(f, lag = 4, prewhite = FALSE)),
  list("NeweyWest(fit, lag = 4, prewhite = FALSE, adjust = TRUE)",
       list(maxlags = 4, adjust = TRUE),
       function(f) NeweyWest(f, lag = 4, prewhite = FALSE, adjust = TRUE)),
  list("NeweyWest(fit, prewhite = FALSE)", list(maxlags = "newey-west"),
       function(f) NeweyWest(f, prewhite = FALSE)),
  list("NeweyWest(fit, lag = 3, prewhite = 2, adjust = TRUE)",
       list(maxlags = 3, prewhite = 2, adjust = TRUE),
       function(f) NeweyWest(f, lag = 3, prewhite = 2, adjust = TRUE)),
  list("vcovHAC(fit)", list(kernel = "qs", bandwidth = "andrews", adjust = TRUE),
       function(f) vcovHAC(f)),
  list("kernHAC(fit)", list(kernel = "qs", bandwidth = "andrews", prewhite = 1, adjust = TRUE),
       function(f) kernHAC(f)),
  list("kernHAC(fit, kernel = \"Bartlett\", prewhite = FALSE, adjust = FALSE)",
       list(kernel = "bartlett", bandwidth = "andrews"),
       function(f) kernHAC(f, kernel = "Bartlett", prewhite = FALSE, adjust = FALSE)),
  list("kernHAC(fit, kernel = \"Parzen\")",
       list(kernel = "parzen", bandwidth = "andrews", prewhite = 1, adjust = TRUE),
       function(f) kernHAC(f, kernel = "Parzen")),
  list("kernHAC(fit, kernel = \"Bartlett\", bw = bwNeweyWest, adjust = FALSE)",
       list(kernel = "bartlett", bandwidth = "newey-west", prewhite = 1),
       function(f) kernHAC(f, kernel = "Bartlett", bw = bwNeweyWest, adjust = FALSE)),
  list("kernHAC(fit, kernel = \"Parzen\", bw = bwNeweyWest, prewhite = FALSE)",
       list(kernel = "parzen", bandwidth = "newey-west", adjust = TRUE),
       function(f) kernHAC(f, kernel = "Parzen", bw = bwNeweyWest, prewhite = FALSE)),
  list("kernHAC(fit, bw = bwNeweyWest, prewhite = 2)",
       list(kernel = "qs", bandwidth = "newey-west", prewhite = 2, adjust = TRUE),
       function(f) kernHAC(f, bw = bwNeweyWest, prewhite = 2)),
  list("kernHAC(fit, kernel = \"Parzen\", bw = 3.7, prewhite = FALSE, adjust = FALSE)",
       list(kernel = "parzen", bandwidth = 3.7),
       function(f) kernHAC(f, kernel = "Parzen", bw = 3.7, prewhite = FALSE, adjust = FALSE)),
  list("kernHAC(fit, bw = 2.5, prewhite = FALSE)",
       list(kernel = "qs", bandwidth = 2.5, adjust = TRUE),
       function(f) kernHAC(f, bw = 2.5, prewhite = FALSE))
)

bandwidths <- function(fit) {
  out <- list()
  for (k in c("Bartlett", "Parzen", "Quadratic Spectral")) for (p in 0:1) {
    out[[sprintf("andrews_%s_%d", k, p)]] <- bwAndrews(fit, kernel = k, prewhite = p)
    out[[sprintf("newey-west_%s_%d", k, p)]] <- bwNeweyWest(fit, kernel = k, prewhite = p)
  }
  out
}

ztests <- function(fit, V, what) {
  ct <- coeftest(fit, vcov. = V, df = Inf)
  ci <- coefci(fit, vcov. = V, df = Inf, level = 0.9)
  wt <- waldtest(fit, vcov = V, test = "Chisq")
  list(vcov = what, z_value = unname(ct[, 3]), p_value = unname(ct[, 4]),
       conf_int_90 = mat(ci), wald_chisq = unname(wt$Chisq[2]), wald_df = unname(wt$Df[2]),
       wald_p = unname(wt$`Pr(>Chisq)`[2]), printed = capture.output(print(ct)))
}

hac_entries <- function(fit) {
  out <- list()
  for (case in hac_cases) {
    V <- case[[3]](fit)
    out[[length(out) + 1]] <- c(entry(V, case[[1]]), list(options = case[[2]]))
  }
  out
}

model <- function(data, r_formula, py_formula, weights = NULL, hac = TRUE) {
  fit <- if (is.null(weights)) lm(as.formula(r_formula), data = data)
         else lm(as.formula(r_formula), data = data, weights = data[[weights]])
  out <- list(r_formula = r_formula, py_formula = py_formula, weights = weights,
              coef = unname(coef(fit)), nobs = nobs(fit), hc = hc_entries(fit))
  if (hac) {
    out$hac <- hac_entries(fit)
    out$bandwidths <- bandwidths(fit)
  }
  out
}

# --- LakeHuron: annual level 1875-1972 (n = 98), strongly autocorrelated ----------------
lake <- data.frame(level = as.numeric(LakeHuron), year = as.numeric(time(LakeHuron)) - 1920)

# --- simulated: AR(1) regressors and AR(1) errors, prior weights -----------------------
set.seed(20261203)
n <- 150
ar1 <- function(n, rho, sd = 1) as.numeric(arima.sim(list(ar = rho), n, sd = sd))
sim <- data.frame(x1 = ar1(n, 0.6), x2 = ar1(n, 0.3, 2), w = runif(n, 0.5, 2))
sim$y <- 1 + 0.5 * sim$x1 - 0.2 * sim$x2 + ar1(n, 0.5) * (1 + 0.3 * abs(sim$x1))
sim[] <- lapply(sim, signif, digits = 10)
sim$x3 <- sim$x1 + sim$x2  # aliased: lm drops it, sandwich works on the other columns

# --- mtcars: HC4-HC5 where some hat values are large ------------------------------------
cars <- mtcars[, c("mpg", "wt", "hp", "disp")]

datasets <- list(
  lake = list(data = lake, models = list(
    intercept = model(lake, "level ~ 1", "level ~ 1"),
    trend = model(lake, "level ~ year", "level ~ year"))),
  sim = list(data = sim, models = list(
    ols = model(sim, "y ~ x1 + x2", "y ~ x1 + x2"),
    wls = model(sim, "y ~ x1 + x2", "y ~ x1 + x2", weights = "w"),
    noint = model(sim, "y ~ 0 + x1 + x2", "y ~ 0 + x1 + x2"),
    aliased = model(sim, "y ~ x1 + x2 + x3", "y ~ x1 + x2 + x3"))),
  mtcars = list(data = cars, models = list(
    ols = model(cars, "mpg ~ wt + hp", "mpg ~ wt + hp", hac = FALSE),
    wls = model(transform(cars, w = 1 / disp), "mpg ~ wt + hp", "mpg ~ wt + hp",
                weights = "w", hac = FALSE)))
)
datasets$mtcars$data$w <- 1 / cars$disp

# --- z tests: coeftest(df = Inf) ----------------------------------------------------------
fit_sim <- lm(y ~ x1 + x2, data = sim)
fit_cars <- lm(mpg ~ wt + hp, data = cars)
ztest <- list(
  sim_NeweyWest = c(list(dataset = "sim", py_formula = "y ~ x1 + x2",
                         options = list(kind = "HAC", maxlags = "newey-west", prewhite = TRUE)),
                    ztests(fit_sim, NeweyWest(fit_sim), "NeweyWest(fit)")),
  sim_classical = c(list(dataset = "sim", py_formula = "y ~ x1 + x2",
                         options = list(kind = "classical")),
                    ztests(fit_sim, vcov(fit_sim), "vcov(fit)")),
  mtcars_HC3 = c(list(dataset = "mtcars", py_formula = "mpg ~ wt + hp",
                      options = list(kind = "HC3")),
                 ztests(fit_cars, vcovHC(fit_cars, type = "HC3"), "vcovHC(fit, type = \"HC3\")")),
  mtcars_HC4 = c(list(dataset = "mtcars", py_formula = "mpg ~ wt + hp",
                      options = list(kind = "HC4")),
                 ztests(fit_cars, vcovHC(fit_cars, type = "HC4"), "vcovHC(fit, type = \"HC4\")"))
)

header <- list(
  r = R.version.string, platform = R.version$platform,
  packages = lapply(c(sandwich = "sandwich", lmtest = "lmtest", jsonlite = "jsonlite"),
                    function(p) as.character(packageVersion(p))),
  options = "options(width = 80, digits = 7), C locale",
  conventions = paste(
    "vcov matrices are lists of rows in coefficient order; data frames are lists of columns;",
    "each HAC entry gives the R call and the attnreg with_vcov keywords that reproduce it;",
    "bandwidths are sandwich::bwAndrews / bwNeweyWest(fit, kernel, prewhite) unfloored;",
    "ztest entries are lmtest::coeftest / coefci / waldtest(test = 'Chisq') with df = Inf")
)
here <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)))
write_json(list(header = header, datasets = datasets, ztest = ztest),
           file.path(here, "vcov_r.json"), digits = NA, auto_unbox = TRUE, pretty = TRUE,
           na = "null", dataframe = "columns", null = "null")
