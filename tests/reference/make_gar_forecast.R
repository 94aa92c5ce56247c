#!/usr/bin/env Rscript
# Growth-at-risk forecasts: quantreg::rq refitted at every origin, the reference for
# tests/timeseries/test_gar_forecast.py (forecast(..., method = "quantreg", tau = [...])).
#
# Data (embedded): a simulated quarterly economy of 160 quarters: nfci follows an AR(1) and
# gdp_t = 0.5 + 0.3 gdp_{t-1} - 0.6 nfci_{t-1} + (1 + 0.6 max(nfci_{t-1}, 0)) e_t, so that
# the lower quantiles of growth fall faster than the median when financial conditions tighten.
#
# At every forecast target s (0-based data position s = start, ..., 159) and horizon h, the
# origin is s - h and rq(gdp ~ nfci_lag_h + gdp_lag_h, tau, method = "br") is fitted on the
# rows observed by the origin (positions h .. s - h; rolling: the last `window` of them),
# then evaluated at the regressors of s (nfci[s - h], gdp[s - h]).
#
# Regenerate from the repository root, in the C locale:
#
#   LC_ALL=C Rscript tests/reference/make_gar_forecast.R
suppressPackageStartupMessages({ library(quantreg); library(jsonlite) })

set.seed(20261203)
n <- 160
nfci <- numeric(n); gdp <- numeric(n)
nfci[1] <- rnorm(1); gdp[1] <- 0.7
for (t in 2:n) {
  nfci[t] <- 0.8 * nfci[t - 1] + 0.6 * rnorm(1)
  gdp[t] <- 0.5 + 0.3 * gdp[t - 1] - 0.6 * nfci[t - 1] +
    (1 + 0.6 * max(nfci[t - 1], 0)) * rnorm(1)
}
taus <- c(0.05, 0.25, 0.5, 0.75, 0.95)

# one run: quantiles (targets x taus) and the coefficients of tau = 0.05 at each origin
run <- function(h, start, window = NA) {
  pos <- 0:(n - 1)
  targets <- start:(n - 1)
  q <- matrix(NA_real_, length(targets), length(taus))
  coef05 <- matrix(NA_real_, length(targets), 3)
  for (i in seq_along(targets)) {
    s <- targets[i]
    last <- s - h
    first <- if (is.na(window)) h else max(h, last - window + 1)
    train <- first:last                      # 0-based positions
    y <- gdp[train + 1]; x1 <- nfci[train - h + 1]; x2 <- gdp[train - h + 1]
    newx <- c(1, nfci[s - h + 1], gdp[s - h + 1])
    for (k in seq_along(taus)) {
      f <- rq(y ~ x1 + x2, tau = taus[k], method = "br")
      q[i, k] <- sum(newx * coef(f))
      if (k == 1) coef05[i, ] <- unname(coef(f))
    }
  }
  list(horizon = h, start = start, window = window, targets = targets,
       quantiles = unname(q), coef_tau05 = unname(coef05))
}

out <- list(
  header = list(r = R.version.string,
                packages = list(quantreg = as.character(packageVersion("quantreg")),
                                jsonlite = as.character(packageVersion("jsonlite"))),
                conventions = "positions are 0-based data rows; quantiles are targets x taus; window NA = expanding"),
  data = list(gdp = gdp, nfci = nfci),
  taus = taus,
  runs = list(recursive_h4 = run(4, 80), rolling_h1 = run(1, 100, window = 60))
)
writeLines(toJSON(out, digits = NA, auto_unbox = TRUE, pretty = FALSE, na = "null"),
           "tests/reference/gar_forecast_r.json")
