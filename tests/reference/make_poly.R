#!/usr/bin/env Rscript
# Reference values for attnreg's poly() in formulas (attnreg/formula/poly.py): R's
# stats::poly, orthogonal and raw, in lm() fits and in predict() on new data (which reuses
# the training coefficients alpha and norm2, through makepredictcall). Checked by
# tests/formula/test_poly.py.
#
# Regenerate from the repository root, in the C locale (ASCII quotes in the significance
# legend of the printed summaries); needs r-cran-jsonlite:
#   LC_ALL=C Rscript tests/reference/make_poly.R
# It overwrites tests/reference/poly_r.json. The data are drawn here and rounded to 6
# decimals, so the JSON holds R's doubles exactly and the Python tests refit the same numbers.
suppressPackageStartupMessages(library(jsonlite))
options(width = 80, digits = 7, scipen = 0, OutDec = ".")

num <- function(x) unname(as.numeric(x))
na_num <- function(x) ifelse(is.na(x), NA, num(x))

one_case <- function(formula_r, formula_py, data, newdata, note = "") {
  fit <- lm(as.formula(formula_r), data = data)
  s <- summary(fit)
  cf <- coef(s)
  lines <- capture.output(print(s))
  list(formula_r = formula_r, formula_py = formula_py, note = note,
       data = lapply(data, na_num), newdata = lapply(newdata, num),
       names = rownames(cf), coef = num(cf[, 1]), std_err = num(cf[, 2]),
       t_value = num(cf[, 3]), sigma = s$sigma, r_squared = s$r.squared,
       nobs = nobs(fit), predict = num(predict(fit, newdata)),
       summary = lines)
}

set.seed(20261203)
n <- 30
x <- round(runif(n, -2, 3), 6)
z <- round(rnorm(n), 6)
y <- round(1 + 2 * x - 0.7 * x^2 + 0.3 * x^3 + 0.5 * z + rnorm(n), 6)
train <- data.frame(x = x, z = z, y = y)
newx <- c(-2.5, -1, 0, 0.5, 1.25, 2, 3.5)
newdata <- data.frame(x = newx, z = round(seq(-1, 1, length.out = length(newx)), 6))

# y missing in three rows: R's model.frame evaluates poly(x) on every row, then drops them
train_na <- train
train_na$y[c(4, 11, 25)] <- NA

cases <- list(
  cubic = one_case("y ~ poly(x, 3)", "y ~ poly(x, 3)", train, newdata,
                   "orthogonal cubic"),
  with_z = one_case("y ~ poly(x, 2) + z", "y ~ poly(x, 2) + z", train, newdata,
                    "orthogonal quadratic with another regressor"),
  raw = one_case("y ~ poly(x, 2, raw = TRUE)", "y ~ poly(x, 2, raw=True)", train, newdata,
                 "raw powers x, x^2"),
  na_response = one_case("y ~ poly(x, 2)", "y ~ poly(x, 2)", train_na, newdata,
                         "y missing in 3 rows: poly() fitted on all 30 values of x")
)

p <- poly(train$x, 3)
basis <- list(x = num(train$x), degree = 3L, alpha = num(attr(p, "coefs")$alpha),
              norm2 = num(attr(p, "coefs")$norm2), values = lapply(seq_len(3), function(j) num(p[, j])),
              newx = newx,
              predict = lapply(seq_len(3), function(j) num(predict(p, newx)[, j])))

header <- list(generated_by = "tests/reference/make_poly.R", r_version = R.version.string,
               platform = R.version$platform, locale = Sys.getlocale("LC_COLLATE"),
               packages = list(jsonlite = as.character(packageVersion("jsonlite"))),
               options = list(width = 80L, digits = 7L),
               notes = c("predict(fit, newdata) reuses poly's training coefs (makepredictcall)",
                         "summary: print(summary(fit)) as lines, from capture.output"))

out <- list(header = header, cases = cases, basis = basis)
script_dir <- local({
  args <- commandArgs(trailingOnly = FALSE)
  f <- sub("^--file=", "", args[grep("^--file=", args)])
  if (length(f) == 1L) dirname(normalizePath(f)) else file.path("tests", "reference")
})
writeLines(toJSON(out, auto_unbox = TRUE, digits = NA, na = "null", pretty = TRUE),
           file.path(script_dir, "poly_r.json"))
