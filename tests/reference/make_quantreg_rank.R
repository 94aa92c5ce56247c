#!/usr/bin/env Rscript
# Rank-inversion intervals of quantile regression, R's summary(rq(...), se = "rank"): the
# reference for tests/quantreg/test_quantreg_rank.py.
#
# - the bounds of summary.rq(se = "rank") (rq.fit.br(ci = TRUE, interp = TRUE), alpha = 0.1,
#   tcrit = TRUE: the defaults), with iid = TRUE (the default) and iid = FALSE, at several tau,
#   with and without an intercept, with prior weights (w = 1, 2, 3, 1, 2, 3, ...);
# - the warnings R gave per case;
# - the text of print(summary(...)) with se = "rank", and with R's default se (n < 1001).
#
# Data (embedded): quantreg's engel (n = 235, repeated rows), stackloss (n = 21, p = 4) and a
# simulated heteroskedastic set y = 1 + 2 x1 - x2 + (1 + 0.5 x1) e, x1 ~ U(0, 4),
# x2, e ~ N(0, 1), n = 300 (that of make_quantreg.R); five points whose intervals are
# unbounded (R's bound .Machine$double.xmax).
#
# Regenerate from the repository root, in the C locale:
#
#   LC_ALL=C Rscript tests/reference/make_quantreg_rank.R
suppressPackageStartupMessages({ library(quantreg); library(jsonlite) })
options(width = 80, digits = 7, scipen = 0, OutDec = ".")
data(engel)

simulate <- function(n, seed) {
  set.seed(seed)
  x1 <- runif(n, 0, 4); x2 <- rnorm(n); e <- rnorm(n)
  data.frame(y = 1 + 2 * x1 - x2 + (1 + 0.5 * x1) * e, x1 = x1, x2 = x2)
}
stack <- data.frame(loss = stackloss$stack.loss, air = stackloss$Air.Flow,
                    water = stackloss$Water.Temp, acid = stackloss$Acid.Conc.)
tiny <- data.frame(y = c(1.2, 1.9, 3.4, 3.9, 5.3), x = 1:5)  # n = 5: unbounded intervals
designs <- list(engel = engel, sim300 = simulate(300, 20261203), stack = stack, tiny = tiny)
designs <- lapply(designs, function(d) { d$w <- rep_len(c(1, 2, 3), nrow(d)); d })

specs <- list(
  list(design = "engel", formula = "foodexp ~ income", taus = c(0.1, 0.25, 0.5, 0.75, 0.9)),
  list(design = "engel", formula = "foodexp ~ income - 1 + I(income^2)", taus = c(0.25, 0.5)),
  list(design = "sim300", formula = "y ~ x1 + x2", taus = c(0.1, 0.5, 0.9)),
  list(design = "sim300", formula = "y ~ x1 + x2 - 1", taus = c(0.25, 0.75)),
  list(design = "stack", formula = "loss ~ air + water + acid", taus = c(0.25, 0.5, 0.75)),
  list(design = "tiny", formula = "y ~ x", taus = 0.5, iid = TRUE)  # iid = FALSE: tau + h > 1
)

one_case <- function(spec, tau, iid, weighted) {
  data <- designs[[spec$design]]
  warned <- character(0)
  keep <- function(w) { warned <<- c(warned, conditionMessage(w)); invokeRestart("muffleWarning") }
  s <- withCallingHandlers({
    f <- if (weighted) rq(as.formula(spec$formula), tau = tau, data = data, weights = w)
         else rq(as.formula(spec$formula), tau = tau, data = data)
    summary(f, se = "rank", iid = iid)
  }, warning = keep)
  list(design = spec$design, formula = spec$formula, tau = tau, iid = iid, weighted = weighted,
       names = rownames(s$coefficients), coef = unname(s$coefficients[, 1]),
       lower = unname(s$coefficients[, 2]), upper = unname(s$coefficients[, 3]),
       warnings = warned)
}

cases <- list()
for (spec in specs) for (tau in spec$taus) for (iid in if (is.null(spec$iid)) c(TRUE, FALSE) else spec$iid)
  cases[[length(cases) + 1]] <- one_case(spec, tau, iid, FALSE)
cases[[length(cases) + 1]] <- one_case(specs[[1]], 0.5, TRUE, TRUE)
cases[[length(cases) + 1]] <- one_case(specs[[3]], 0.25, FALSE, TRUE)

text_of <- function(expr) capture.output(print(expr))
text <- list(
  one = text_of(summary(rq(foodexp ~ income, tau = 0.5, data = engel), se = "rank")),
  many = text_of(summary(rq(foodexp ~ income, tau = c(0.25, 0.75), data = engel), se = "rank")),
  nid_iid = text_of(summary(rq(y ~ x1 + x2, tau = 0.9, data = designs$sim300), se = "rank",
                            iid = FALSE)),
  default = text_of(summary(rq(foodexp ~ income, tau = 0.5, data = engel))),
  one_coef = text_of(summary(rq(foodexp ~ income - 1, tau = 0.5, data = engel), se = "rank")),
  unbounded = text_of(summary(rq(y ~ x, tau = 0.5, data = tiny), se = "rank"))
)

out <- list(
  header = list(r = R.version.string,
                packages = list(quantreg = as.character(packageVersion("quantreg")),
                                jsonlite = as.character(packageVersion("jsonlite"))),
                conventions = paste("data frames are lists of columns; lower/upper are the",
                                    "'lower bd'/'upper bd' columns of summary.rq(se = 'rank')$coefficients",
                                    "in coefficient order (alpha = 0.1); weights are w = 1, 2, 3, ...")),
  designs = lapply(designs, as.list),
  cases = cases,
  text = text
)
writeLines(toJSON(out, digits = NA, auto_unbox = TRUE, pretty = FALSE),
           "tests/reference/quantreg_rank_r.json")
