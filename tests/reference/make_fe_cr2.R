#!/usr/bin/env Rscript
# CR2 of regressions with two fixed effects from R: the reference for tests/fe/test_fe_cr2_r.py.
#
# The dummy-variable fit lm(y ~ x1 + x2 + factor(firm) + factor(year)), with and without
# prior weights, and clubSandwich::vcovCR(type = "CR2") clustered by firm (a fixed effect
# nested in the clusters) and by year, with coef_test(test = "Satterthwaite") (each slope's
# df and p-value). Unbalanced panel; every case embeds its data.
#
# Regenerate from the repository root (needs r-cran-clubsandwich, r-cran-jsonlite):
#
#   Rscript tests/reference/make_fe_cr2.R
suppressPackageStartupMessages({library(clubSandwich); library(jsonlite)})

slopes <- c("x1", "x2")
mat <- function(V) unname(lapply(slopes, function(i) unname(V[i, slopes])))

cr2_case <- function(fit, cluster) {
  V <- vcovCR(fit, cluster = cluster, type = "CR2")
  ct <- coef_test(fit, vcov = V, test = "Satterthwaite", coefs = slopes)
  list(vcov = mat(V), se = unname(ct$SE), df_satterthwaite = unname(ct$df_Satt),
       p_satterthwaite = unname(ct$p_Satt))
}

set.seed(2525)
n <- 240
d <- data.frame(firm = sample(1:20, n, replace = TRUE), year = sample(2001:2006, n, replace = TRUE),
                x1 = rnorm(n), x2 = rnorm(n), w = runif(n, 0.5, 2))
d$y <- 0.5 * d$x1 - d$x2 + 0.1 * d$firm + sin(d$year) + rnorm(n) * (1 + abs(d$x1))

cases <- list()
for (weighted in c(FALSE, TRUE)) {
  fit <- if (weighted) lm(y ~ x1 + x2 + factor(firm) + factor(year), data = d, weights = w)
         else lm(y ~ x1 + x2 + factor(firm) + factor(year), data = d)
  key <- if (weighted) "weighted" else "unweighted"
  cases[[key]] <- list(weighted = weighted, coef = unname(coef(fit)[slopes]),
                       firm = cr2_case(fit, d$firm), year = cr2_case(fit, d$year))
}

header <- list(
  r = R.version.string,
  packages = lapply(c(clubSandwich = "clubSandwich", jsonlite = "jsonlite"),
                    function(p) as.character(packageVersion(p))),
  conventions = paste(
    "slopes x1, x2 only; 'firm' and 'year' are the two fixed effects and the clusters;",
    "vcov matrices are lists of rows; the data frame is a list of columns")
)
here <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)))
write_json(list(header = header, data = d, cases = cases), file.path(here, "fe_cr2_r.json"),
           digits = NA, auto_unbox = TRUE, pretty = TRUE, na = "null", dataframe = "columns",
           null = "null")
