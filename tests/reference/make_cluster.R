#!/usr/bin/env Rscript
# Cluster-robust covariances from R: the reference for tests/inference/vcov/test_cluster.py.
#
# sandwich::vcovCL (HC0 / HC1, cadjust TRUE / FALSE, one- and two-way, fix = TRUE / FALSE),
# clubSandwich::vcovCR(type = "CR2") with and without prior weights, plm::vcovSCC
# (Driscoll-Kraay on a pooled plm model) and lmtest::coeftest p-values on G - 1 df. Every
# case embeds its data, so the Python tests need neither R nor R's data sets.
#
# Regenerate from the repository root (needs r-cran-sandwich, r-cran-clubsandwich,
# r-cran-plm, r-cran-lmtest, r-cran-jsonlite):
#
#   Rscript tests/reference/make_cluster.R
#
# Coefficient order follows patsy's (categorical terms before numeric ones), so each R formula
# lists its terms in that order; `py_formula` is the attnreg formula.
suppressPackageStartupMessages({
  library(sandwich); library(clubSandwich); library(plm); library(lmtest); library(jsonlite)
})

mat <- function(V) unname(lapply(seq_len(nrow(V)), function(i) unname(V[i, ])))
se <- function(V) unname(sqrt(diag(V)))
pvals <- function(fit, V, df) unname(coeftest(fit, vcov. = V, df = df)[, 4])
entry <- function(fit, V, df) list(vcov = mat(V), se = se(V), p_value = pvals(fit, V, df), df = df)
ngroups <- function(v) length(unique(v[!is.na(v)]))

cases <- list()

# --- Grunfeld (plm): a balanced panel of 10 firms over 20 years --------------------------
data("Grunfeld", package = "plm")
g <- Grunfeld
fit <- lm(inv ~ value + capital, data = g)
G <- ngroups(g$firm); Tn <- ngroups(g$year)
pm <- plm(inv ~ value + capital, data = g, model = "pooling", index = c("firm", "year"))
V2 <- vcovCL(fit, cluster = ~ firm + year, fix = TRUE)
cases$grunfeld <- list(
  data = g, r_formula = "inv ~ value + capital", py_formula = "inv ~ value + capital",
  weights = NULL, coef = unname(coef(fit)), nobs = nobs(fit),
  firm_HC1 = entry(fit, vcovCL(fit, cluster = ~ firm), G - 1),
  firm_HC0 = entry(fit, vcovCL(fit, cluster = ~ firm, type = "HC0"), G - 1),
  firm_HC0_nocadjust = entry(fit, vcovCL(fit, cluster = ~ firm, type = "HC0", cadjust = FALSE), G - 1),
  firm_HC1_residual_df = entry(fit, vcovCL(fit, cluster = ~ firm), df.residual(fit)),
  firm_CR2 = entry(fit, vcovCR(fit, cluster = g$firm, type = "CR2"), G - 1),
  firm_year_HC1 = entry(fit, V2, min(G, Tn) - 1),
  firm_year_HC0 = entry(fit, vcovCL(fit, cluster = ~ firm + year, type = "HC0", fix = TRUE),
                        min(G, Tn) - 1),
  wald_firm_HC1 = unname(waldtest(fit, vcov = vcovCL(fit, cluster = ~ firm), test = "F")$F[2]),
  dk_default = entry(fit, vcovSCC(pm), df.residual(fit)),
  dk_default_maxlag = floor(Tn^(1/4)),
  dk_lag3_HC1 = entry(fit, vcovSCC(pm, maxlag = 3, type = "HC1"), df.residual(fit)),
  dk_lag1_sss = entry(fit, vcovSCC(pm, maxlag = 1, type = "sss"), df.residual(fit))
)

# --- a factor, prior weights, unbalanced clusters, rows with NA ---------------------------
set.seed(15)
n <- 90
sizes <- c(2, 3, 5, 7, 9, 11, 13, 17, 23)  # nine unbalanced clusters
cl <- rep(seq_along(sizes), sizes)
d <- data.frame(
  x1 = rnorm(n), g = sample(c("a", "b", "c"), n, replace = TRUE),
  cl = paste0("c", cl), w = runif(n, 0.5, 2)
)
d$y <- 1 + d$x1 + (d$g == "b") + rnorm(length(sizes))[cl] + rnorm(n) * (1 + abs(d$x1))
d$y[c(4, 40)] <- NA        # dropped by the fit ...
d$cl[40] <- NA             # ... so a missing cluster there is no error
d$x1[77] <- NA
keep <- complete.cases(d[, c("y", "x1", "g")])
dk <- d[keep, ]
G <- ngroups(dk$cl)
fo <- lm(y ~ factor(g) + x1, data = d)
fw <- lm(y ~ factor(g) + x1, data = d, weights = w)
cases$factor_weights <- list(
  data = d, r_formula = "y ~ factor(g) + x1", py_formula = "y ~ C(g) + x1", weights = "w",
  coef = unname(coef(fo)), coef_weighted = unname(coef(fw)), nobs = nobs(fo),
  HC1 = entry(fo, vcovCL(fo, cluster = dk$cl), G - 1),
  HC0 = entry(fo, vcovCL(fo, cluster = dk$cl, type = "HC0"), G - 1),
  CR2 = entry(fo, vcovCR(fo, cluster = dk$cl, type = "CR2"), G - 1),
  weighted_HC1 = entry(fw, vcovCL(fw, cluster = dk$cl), G - 1),
  weighted_CR2 = entry(fw, vcovCR(fw, cluster = dk$cl, type = "CR2"), G - 1)
)

# --- two-way clustering whose CGM matrix is not positive semi-definite --------------------
set.seed(3)
n <- 24
t2 <- data.frame(a = rep(1:3, each = 8), b = rep(1:4, times = 6))
t2$x <- rnorm(n)
t2$y <- 1 + t2$x + rnorm(n)
ft <- lm(y ~ x, data = t2)
raw <- vcovCL(ft, cluster = ~ a + b, fix = FALSE)
stopifnot(min(eigen(raw, symmetric = TRUE)$values) < 0)
fixed <- vcovCL(ft, cluster = ~ a + b, fix = TRUE)
cases$twoway_not_psd <- list(
  data = t2, r_formula = "y ~ x", py_formula = "y ~ x", weights = NULL,
  coef = unname(coef(ft)), nobs = nobs(ft),
  raw_eigenvalues = unname(eigen(raw, symmetric = TRUE)$values),
  HC1_nofix = list(vcov = mat(raw)),
  HC1_fix = entry(ft, fixed, min(3, 4) - 1)
)

header <- list(
  r = R.version.string,
  packages = lapply(c(sandwich = "sandwich", clubSandwich = "clubSandwich", plm = "plm",
                      lmtest = "lmtest", jsonlite = "jsonlite"),
                    function(p) as.character(packageVersion(p))),
  conventions = paste(
    "vcov matrices are lists of rows in coefficient order; data frames are lists of",
    "columns (NA as null); p_value from lmtest::coeftest(fit, vcov. = V, df = df)")
)
here <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)))
write_json(list(header = header, cases = cases), file.path(here, "cluster.json"),
           digits = NA, auto_unbox = TRUE, pretty = TRUE, na = "null", dataframe = "columns",
           null = "null")
