#!/usr/bin/env Rscript
# Write R's printed lm summaries, and R's scale(), for tests/report/test_summary_r.py.
#
# For each case this script writes, under tests/reference/summaries/:
#   <case>.csv  the data, one row per observation: the row name first (column "row"),
#               numbers with 17 significant digits so that they read back bit for bit;
#   <case>.txt  exactly what print(summary(lm(...))) prints, from sink().
# and cases.json, which lists for each case the R call and the attnreg call that
# tests/report/test_summary_r.py makes on the same CSV. Each fit is computed from the CSV as
# read back, so R and attnreg see the same numbers. scale.json holds R's scale() of
# a vector with a missing value. The Python tests never need R.
#
# Coefficient names. print.summary.lm labels each row with its coefficient name, and
# patsy names some coefficients differently from R (factor(cyl)6 is patsy's
# C(cyl)[T.6]). To compare the printed text character for character, the script puts
# patsy's names on the rows of R's summary object before printing it: every number,
# width and line of the text is still R's own print.summary.lm and printCoefmat.
# The formulas list the terms in patsy's order, so the rows are in the same order.
#
# Regenerate (from the repository root, in the C locale so that the significance
# legend uses ASCII quotes):
#     LC_ALL=C Rscript tests/reference/make_summaries.R
#
# Requires: base R (stats) and jsonlite.

suppressPackageStartupMessages({
  library(stats)
  library(jsonlite)
})

stopifnot(l10n_info()$`UTF-8` == FALSE)  # ASCII quotes in "Signif. codes"
options(width = 80, digits = 7, scipen = 0, OutDec = ".")

script_dir <- local({
  args <- commandArgs(trailingOnly = FALSE)
  f <- sub("^--file=", "", args[grep("^--file=", args)])
  if (length(f) == 1L) dirname(normalizePath(f)) else file.path("tests", "reference")
})
out_dir <- file.path(script_dir, "summaries")
dir.create(out_dir, showWarnings = FALSE)

# Write a data frame with row names and full-precision numbers; read it back as R would
# see it from the file.
write_data <- function(df, path) {
  cols <- lapply(df, function(x) {
    if (is.numeric(x)) ifelse(is.na(x), "", sprintf("%.17g", x)) else as.character(x)
  })
  out <- data.frame(row = rownames(df), cols, check.names = FALSE, stringsAsFactors = FALSE)
  text_cols <- c(1L, 1L + which(!vapply(df, is.numeric, logical(1))))
  write.csv(out, path, row.names = FALSE, quote = text_cols, na = "")
  back <- read.csv(path, check.names = FALSE, stringsAsFactors = FALSE, na.strings = "")
  rownames(back) <- as.character(back$row)
  back$row <- NULL
  for (nm in names(df)) {
    if (is.numeric(df[[nm]])) stopifnot(identical(as.numeric(back[[nm]]), as.numeric(df[[nm]])))
  }
  back
}

cases <- list()

# One case: fit lm(r_formula) on `df` (after the CSV round trip), rename the
# coefficient rows to `py_names`, print the summary to <name>.txt.
lm_case <- function(name, df, r_formula, py_formula, py_names, weights = NULL,
                    note = "") {
  data <- write_data(df, file.path(out_dir, paste0(name, ".csv")))
  f <- as.formula(r_formula)
  fit <- if (is.null(weights)) {
    eval(bquote(lm(.(f), data = data)))
  } else {
    eval(bquote(lm(.(f), data = data, weights = .(as.name(weights)))))
  }
  s <- summary(fit)
  stopifnot(length(py_names) == length(s$aliased))
  rownames(s$coefficients) <- py_names[!s$aliased]
  names(s$aliased) <- py_names
  sink(file.path(out_dir, paste0(name, ".txt")))
  print(s)
  sink()
  r_call <- if (is.null(weights)) {
    sprintf("lm(%s, data = %s)", r_formula, name)
  } else {
    sprintf("lm(%s, data = %s, weights = %s)", r_formula, name, weights)
  }
  cases[[name]] <<- list(r_call = r_call, formula = py_formula, weights = weights,
                         note = note)
  invisible(s)
}

# ------------------------------------------------------------------- R's data sets
longley_py <- longley
names(longley_py) <- c("GNP_deflator", "GNP", "Unemployed", "Armed_Forces", "Population",
                       "Year", "Employed")
swiss_py <- swiss
names(swiss_py) <- sub(".", "_", names(swiss_py), fixed = TRUE)
stackloss_py <- stackloss
names(stackloss_py) <- c("Air_Flow", "Water_Temp", "Acid_Conc", "stack_loss")
iris_py <- iris
names(iris_py) <- sub(".", "_", names(iris_py), fixed = TRUE)
iris_py$Species <- as.character(iris_py$Species)
airquality_py <- airquality
names(airquality_py) <- sub(".", "_", names(airquality_py), fixed = TRUE)
mtcars_w <- mtcars
mtcars_w$w <- 1 / mtcars$disp
mtcars_w$two <- 2

lm_case("cars", cars, "dist ~ speed", "dist ~ speed",
        c("(Intercept)", "speed"), note = "one predictor")
lm_case("mtcars", mtcars, "mpg ~ wt + hp", "mpg ~ wt + hp",
        c("(Intercept)", "wt", "hp"))
lm_case("mtcars_factor", mtcars, "mpg ~ factor(cyl) + wt", "mpg ~ C(cyl) + wt",
        c("(Intercept)", "C(cyl)[T.6]", "C(cyl)[T.8]", "wt"), note = "a factor")
lm_case("mtcars_noint", mtcars, "mpg ~ 0 + wt + hp", "mpg ~ 0 + wt + hp",
        c("wt", "hp"), note = "no intercept: uncentred R-squared")
lm_case("mtcars_wls", mtcars_w, "mpg ~ wt + hp", "mpg ~ wt + hp",
        c("(Intercept)", "wt", "hp"), weights = "w", note = "weights 1/disp")
lm_case("mtcars_equal_weights", mtcars_w, "mpg ~ wt + hp", "mpg ~ wt + hp",
        c("(Intercept)", "wt", "hp"), weights = "two",
        note = "constant weights: 'Residuals', not 'Weighted Residuals'")
mtcars_w$w0 <- ifelse(seq_len(nrow(mtcars)) %in% c(3, 10, 20), 0, mtcars_w$w)
lm_case("mtcars_zero_weights", mtcars_w, "mpg ~ wt + hp", "mpg ~ wt + hp",
        c("(Intercept)", "wt", "hp"), weights = "w0",
        note = "three weights of zero: the rows leave the fit, their residuals print as 0")
lm_case("mtcars_all", mtcars, "mpg ~ cyl + disp + hp + drat + wt + qsec + vs + am + gear + carb",
        "mpg ~ cyl + disp + hp + drat + wt + qsec + vs + am + gear + carb",
        c("(Intercept)", "cyl", "disp", "hp", "drat", "wt", "qsec", "vs", "am", "gear", "carb"),
        note = "many predictors, t values of both signs, no coefficient below 0.01")
lm_case("mtcars_scale", mtcars, "mpg ~ scale(wt) + hp", "mpg ~ scale(wt) + hp",
        c("(Intercept)", "scale(wt)", "hp"), note = "scale() divides by the sample SD")
lm_case("mtcars_head", mtcars[1:8, ], "mpg ~ wt + hp", "mpg ~ wt + hp",
        c("(Intercept)", "wt", "hp"),
        note = "5 residual df: every residual printed, named, over two lines")
lm_case("longley", longley_py,
        "Employed ~ GNP_deflator + GNP + Unemployed + Armed_Forces + Population + Year",
        "Employed ~ GNP_deflator + GNP + Unemployed + Armed_Forces + Population + Year",
        c("(Intercept)", "GNP_deflator", "GNP", "Unemployed", "Armed_Forces", "Population",
          "Year"), note = "ill-conditioned; estimates from -3.5e3 to -1.0e-2")
lm_case("swiss", swiss_py,
        "Fertility ~ Agriculture + Examination + Education + Catholic + Infant_Mortality",
        "Fertility ~ Agriculture + Examination + Education + Catholic + Infant_Mortality",
        c("(Intercept)", "Agriculture", "Examination", "Education", "Catholic",
          "Infant_Mortality"))
lm_case("stackloss", stackloss_py, "stack_loss ~ Air_Flow + Water_Temp + Acid_Conc",
        "stack_loss ~ Air_Flow + Water_Temp + Acid_Conc",
        c("(Intercept)", "Air_Flow", "Water_Temp", "Acid_Conc"))
lm_case("iris", iris_py, "Sepal_Length ~ Species + Petal_Length",
        "Sepal_Length ~ Species + Petal_Length",
        c("(Intercept)", "Species[T.versicolor]", "Species[T.virginica]", "Petal_Length"),
        note = "string factor; p-values below 2e-16 next to larger ones")
lm_case("airquality", airquality_py, "Ozone ~ Solar_R + Wind + Temp",
        "Ozone ~ Solar_R + Wind + Temp",
        c("(Intercept)", "Solar_R", "Wind", "Temp"),
        note = "rows with missing values deleted")

# ------------------------------------------------------------------- synthetic data
set.seed(20240412)
n <- 40
x1 <- round(rnorm(n), 3)
x2 <- round(runif(n, 0, 5), 3)
aliased <- data.frame(x1 = x1, x2 = x2, x3 = x1 + 2 * x2,
                      y = 1 + 0.5 * x1 - 0.25 * x2 + rnorm(n))
lm_case("aliased", aliased, "y ~ x1 + x2 + x3", "y ~ x1 + x2 + x3",
        c("(Intercept)", "x1", "x2", "x3"),
        note = "x3 = x1 + 2 x2 is not defined because of singularities")

scales <- data.frame(big = round(rnorm(n, 0, 1e6), 0), small = round(rnorm(n, 0, 1e-5), 12))
scales$y <- 3 + 2e-7 * scales$big + 4e5 * scales$small + rnorm(n)
lm_case("scales", scales, "y ~ big + small", "y ~ big + small",
        c("(Intercept)", "big", "small"), note = "tiny and huge coefficients")

tiny <- data.frame(x = seq(0, 1, length.out = n))
tiny$y <- 1 + 2 * tiny$x + rnorm(n, 0, 1e-6)
lm_case("near_exact", tiny, "y ~ x", "y ~ x", c("(Intercept)", "x"),
        note = "residuals near 1e-6, every p-value below 2e-16")

seed <- 1L  # the first seed at which no coefficient is significant at 0.1
repeat {
  set.seed(seed)
  noise <- data.frame(x = rnorm(30), y = rnorm(30))
  if (all(coef(summary(lm(y ~ x, noise)))[, 4] > 0.1)) break
  seed <- seed + 1L
}
s_noise <- lm_case("noise", noise, "y ~ x", "y ~ x", c("(Intercept)", "x"),
                   note = "no p-value below 0.1: no stars, no legend")
stopifnot(all(coef(s_noise)[, 4] > 0.1))

set.seed(7)
long <- data.frame(a_rather_long_predictor_name_to_wrap_the_table = rnorm(n),
                   x2 = rnorm(n))
long$y <- 1 + 0.3 * long[[1]] - long$x2 + rnorm(n)
lm_case("long_name", long, "y ~ a_rather_long_predictor_name_to_wrap_the_table + x2",
        "y ~ a_rather_long_predictor_name_to_wrap_the_table + x2",
        c("(Intercept)", "a_rather_long_predictor_name_to_wrap_the_table", "x2"),
        note = "the coefficient table is wider than 80 characters and wraps")

# ------------------------------------------------------------------- scale()
v <- c(2.5, NA, 4.25, -1, 7.125, 0.5, 3)
scale_ref <- list(
  x = ifelse(is.na(v), NA, v),
  scale = as.numeric(scale(v)),
  scale_center_false = as.numeric(scale(v, center = FALSE)),
  scale_scale_false = as.numeric(scale(v, scale = FALSE)),
  center = attr(scale(v), "scaled:center"),
  sd = attr(scale(v), "scaled:scale"),
  rms = attr(scale(v, center = FALSE), "scaled:scale")
)
writeLines(toJSON(scale_ref, digits = NA, na = "null", auto_unbox = TRUE, pretty = TRUE),
           file.path(out_dir, "scale.json"))

# ------------------------------------------------------------------- the formatting routines
# R's round(), signif(), format(), formatC(), format.pval() and printCoefmat() on random
# numbers of every magnitude, and on the ties and boundaries where shortcuts go wrong.
# Numbers are written as strings with 17 significant digits (jsonlite stops at 15);
# NA is null.
num <- function(v) ifelse(is.na(v), NA_character_, sprintf("%.17g", v))
set.seed(11)
mag <- function(k) sign(rnorm(k)) * 10^runif(k, -12, 12) * runif(k)
edge <- c(0.15, 0.25, 2.675, 0.5, 1.5, 2.5, -2.5, 9996, 99.95, 0.00099999, 1e-20, 1e5,
          123456789, 0.1 + 0.2, 1 / 3, 2 / 3, 5e-324, 1e300, -0, 0)
xs <- c(edge, mag(200), round(mag(80), 3))
dg <- sample(c(-2:8, 2.5, 3.49, 3.5), length(xs), replace = TRUE)
vecs <- lapply(1:150, function(i) {
  k <- sample(1:6, 1)
  v <- if (i %% 3 == 0) round(mag(k), sample(0:6, 1)) else mag(k)
  if (i %% 10 == 0) v[1] <- NA
  v
})
vdig <- sample(1:7, length(vecs), replace = TRUE)
pvals <- lapply(1:60, function(i) {
  k <- sample(1:6, 1)
  10^-runif(k, 0, if (i %% 2) 20 else 6)
})
tables <- lapply(1:40, function(i) {
  k <- sample(1:5, 1)
  est <- mag(k) * if (i %% 4 == 0) 1e-3 else 1
  se <- abs(est) * 10^runif(k, -3, 1)
  if (i %% 7 == 0) se[1] <- abs(est[1]) * 1e-12
  tv <- est / se
  pv <- 2 * pt(-abs(tv), df = sample(3:200, 1))
  m <- cbind(Estimate = est, `Std. Error` = se, `t value` = tv, `Pr(>|t|)` = pv)
  rownames(m) <- paste0("b", seq_len(k))
  if (i %% 5 == 0 && k > 1) m[2, ] <- NA
  list(table = lapply(seq_len(k), function(j) num(m[j, ])),
       text = capture.output(printCoefmat(m, digits = 4, signif.stars = TRUE,
                                          na.print = "NA")))
})
fmt <- list(
  round = list(x = num(xs), digits = num(dg), value = num(mapply(round, xs, dg))),
  signif = list(x = num(xs), digits = pmax(1, round(abs(dg))),
                value = num(mapply(signif, xs, pmax(1, round(abs(dg)))))),
  format = lapply(seq_along(vecs), function(i) {
    list(x = num(vecs[[i]]), digits = vdig[i], text = format(vecs[[i]], digits = vdig[i]))
  }),
  formatC = list(x = num(xs), text = formatC(xs, digits = 4)),
  format_pval = lapply(pvals, function(p) {
    list(p = num(p), text3 = format.pval(p, digits = 3), text4 = format.pval(p, digits = 4))
  }),
  coefmat = tables
)
writeLines(toJSON(fmt, na = "null", auto_unbox = FALSE),
           file.path(out_dir, "format.json"))

header <- list(
  r_version = R.version.string,
  platform = R.version$platform,
  locale = Sys.getlocale("LC_CTYPE"),
  options = list(width = getOption("width"), digits = getOption("digits"))
)
writeLines(toJSON(list(header = header, cases = cases), auto_unbox = TRUE, pretty = TRUE,
                  null = "null"),
           file.path(out_dir, "cases.json"))
