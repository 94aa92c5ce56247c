#!/usr/bin/env Rscript
# Quantile regression from R's quantreg: the reference for tests/quantreg/test_quantreg_r.py.
#
# - coefficients of quantreg::rq(method = "br") (the exact vertex solution) at several tau;
# - standard errors of summary.rq(se = "iid" | "nid" | "ker") (hs = TRUE, the defaults);
# - prior weights (rq's weights =, integer weights 1..3);
# - the warnings R gave ("Solution may be nonunique", "non-positive fis") per fit and se;
# - the text of print(summary(rq(...), se = "nid")) for one tau and for several.
#
# Data (embedded): quantreg's engel (n = 235), and two simulated heteroskedastic sets
# y = 1 + 2 x1 - x2 + (1 + 0.5 x1) e, x1 ~ U(0, 4), x2, e ~ N(0, 1), with n = 300 and 1500.
#
# Regenerate from the repository root, in the C locale:
#
#   LC_ALL=C Rscript tests/reference/make_quantreg.R
suppressPackageStartupMessages({ library(quantreg); library(jsonlite) })
options(width = 80, digits = 7, scipen = 0, OutDec = ".")
data(engel)

simulate <- function(n, seed) {
  set.seed(seed)
  x1 <- runif(n, 0, 4); x2 <- rnorm(n); e <- rnorm(n)
  data.frame(y = 1 + 2 * x1 - x2 + (1 + 0.5 * x1) * e, x1 = x1, x2 = x2)
}
designs <- list(
  engel = list(data = engel, formula = "foodexp ~ income"),
  sim300 = list(data = simulate(300, 20261203), formula = "y ~ x1 + x2"),
  sim1500 = list(data = simulate(1500, 20261204), formula = "y ~ x1 + x2")
)
taus <- c(0.1, 0.25, 0.5, 0.75, 0.9)

one_fit <- function(d, tau, weighted) {
  data <- d$data
  data$w <- rep_len(c(1, 2, 3), nrow(data))
  warned <- character(0)
  keep <- function(w) { warned <<- c(warned, conditionMessage(w)); invokeRestart("muffleWarning") }
  f <- withCallingHandlers(
    if (weighted) rq(as.formula(d$formula), tau = tau, data = data, weights = w, method = "br")
    else rq(as.formula(d$formula), tau = tau, data = data, method = "br"), warning = keep)
  fit_warnings <- warned
  se <- lapply(c(iid = "iid", nid = "nid", ker = "ker"), function(s) {
    warned <<- character(0)
    v <- withCallingHandlers(unname(summary(f, se = s)$coefficients[, 2]), warning = keep)
    list(value = v, warnings = warned)
  })
  list(tau = tau, weighted = weighted, names = names(coef(f)), coef = unname(coef(f)),
       fitted = unname(fitted(f)), fit_warnings = fit_warnings, se = se)
}

cases <- list()
for (name in names(designs)) {
  d <- designs[[name]]
  for (tau in taus) cases[[length(cases) + 1]] <- c(list(design = name), one_fit(d, tau, FALSE))
  cases[[length(cases) + 1]] <- c(list(design = name), one_fit(d, 0.5, TRUE))
  cases[[length(cases) + 1]] <- c(list(design = name), one_fit(d, 0.25, TRUE))
}

text_one <- capture.output(print(summary(rq(foodexp ~ income, tau = 0.5, data = engel),
                                         se = "nid")))
text_many <- capture.output(print(summary(rq(foodexp ~ income, tau = c(0.25, 0.75),
                                             data = engel), se = "nid")))

out <- list(
  header = list(r = R.version.string,
                packages = list(quantreg = as.character(packageVersion("quantreg")),
                                jsonlite = as.character(packageVersion("jsonlite"))),
                conventions = "data frames are lists of columns; se are summary.rq's Std. Error column in coefficient order; weights are w = 1, 2, 3, 1, 2, 3, ..."),
  designs = lapply(designs, function(d) list(formula = d$formula, data = as.list(d$data))),
  cases = cases,
  text = list(one = text_one, many = text_many)
)
writeLines(toJSON(out, digits = NA, auto_unbox = TRUE, pretty = FALSE),
           "tests/reference/quantreg_r.json")
