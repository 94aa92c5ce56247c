#!/usr/bin/env Rscript
# Regressions with two fixed effects from R: the reference for tests/fe/test_fe_r.py.
#
# The dummy-variable fit lm(y ~ x1 + x2 + factor(firm) + factor(year)) with its classical,
# HC1, HC3 (sandwich::vcovHC) and one- and two-way cluster (sandwich::vcovCL, HC1, G/(G - 1)
# per dimension, fix = FALSE) covariances, and plm's two-way within estimator (its
# coefficients, covariance and within R-squared), on the Grunfeld panel, on an unbalanced
# weighted panel, and on a sparse worker-firm "mover" graph. Every case embeds its data.
#
# Regenerate from the repository root (needs r-cran-sandwich, r-cran-plm, r-cran-jsonlite):
#
#   Rscript tests/reference/make_fe.R
suppressPackageStartupMessages({library(sandwich); library(plm); library(jsonlite)})

mat <- function(V) unname(lapply(seq_len(nrow(V)), function(i) unname(V[i, ])))
slopes <- c("x1", "x2")
se <- function(V) unname(sqrt(diag(V)[slopes]))

dummy_case <- function(d, weighted) {
  w <- if (weighted) d$w else NULL
  fit <- if (weighted) lm(y ~ x1 + x2 + factor(firm) + factor(year), data = d, weights = w)
         else lm(y ~ x1 + x2 + factor(firm) + factor(year), data = d)
  s <- summary(fit)
  list(coef = unname(coef(fit)[slopes]), df_resid = df.residual(fit), sigma = s$sigma,
       r_squared = s$r.squared, adj_r_squared = s$adj.r.squared,
       se_classical = se(vcov(fit)), se_HC1 = se(vcovHC(fit, type = "HC1")),
       se_HC3 = se(vcovHC(fit, type = "HC3")),
       se_firm = se(vcovCL(fit, cluster = ~ firm, type = "HC1")),
       se_firm_year = se(vcovCL(fit, cluster = ~ firm + year, type = "HC1", fix = FALSE)),
       fitted = unname(fitted(fit)))
}

within_case <- function(d) {
  pm <- plm(y ~ x1 + x2, data = d, index = c("firm", "year"), model = "within",
            effect = "twoways")
  list(coef = unname(coef(pm)), vcov = mat(vcov(pm)), within_r_squared = unname(r.squared(pm)))
}

cases <- list()

data("Grunfeld", package = "plm")
g <- data.frame(y = Grunfeld$inv, x1 = Grunfeld$value, x2 = Grunfeld$capital,
                firm = Grunfeld$firm, year = Grunfeld$year)
cases$grunfeld <- list(data = g, weighted = FALSE, dummy = dummy_case(g, FALSE),
                       within = within_case(g))

set.seed(25)
n <- 400
u <- data.frame(firm = sample(1:30, n, replace = TRUE), year = sample(2001:2008, n, replace = TRUE),
                x1 = rnorm(n), x2 = rnorm(n), w = runif(n, 0.5, 2))
u$y <- 0.5 * u$x1 - u$x2 + 0.1 * u$firm + sin(u$year) + rnorm(n) * (1 + abs(u$x1))
cases$weighted <- list(data = u, weighted = TRUE, dummy = dummy_case(u, TRUE))

set.seed(26)
workers <- 250
worker <- rep(1:workers, each = 4)
firm <- sample(1:40, workers, replace = TRUE)[worker]
move <- runif(length(worker)) < 0.08
firm[move] <- sample(1:40, sum(move), replace = TRUE)
m <- data.frame(firm = worker, year = firm, x1 = rnorm(length(worker)), x2 = rnorm(length(worker)))
m$y <- m$x1 - m$x2 + 0.01 * m$firm + 0.05 * m$year + rnorm(length(worker))
cases$movers <- list(data = m, weighted = FALSE, dummy = dummy_case(m, FALSE))

header <- list(
  r = R.version.string,
  packages = lapply(c(sandwich = "sandwich", plm = "plm", jsonlite = "jsonlite"),
                    function(p) as.character(packageVersion(p))),
  conventions = paste(
    "coefficients and standard errors of the slopes x1, x2 only; 'firm' and 'year' are the",
    "two fixed effects (workers and firms in the movers case); vcov matrices are lists of rows;",
    "data frames are lists of columns")
)
here <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)))
write_json(list(header = header, cases = cases), file.path(here, "fe_r.json"),
           digits = NA, auto_unbox = TRUE, pretty = TRUE, na = "null", dataframe = "columns",
           null = "null")
