#!/usr/bin/env Rscript
# broom's tidy(), glance() and augment() of lm fits: the reference for tests/inference/test_tidy.py.
# Each case embeds its data (rounded to 6 decimals, so R and Python fit the same doubles) and
# the newdata rows. Factor coefficients are named as patsy names them (factor(g)b is
# C(g)[T.b]); the test matches terms by name.
# Regenerate from the repository root: Rscript tests/reference/make_tidy.R
# Needs r-cran-broom, r-cran-sandwich, r-cran-lmtest, r-cran-jsonlite.
suppressPackageStartupMessages({
  library(jsonlite)
  library(broom)
  library(sandwich)
  library(lmtest)
})

set.seed(20240515)
n <- 40
raw <- data.frame(
  x1 = round(rnorm(n), 6),
  x2 = round(runif(n, 1, 5), 6),
  g = sample(c("a", "b", "c"), n, replace = TRUE),
  w = round(runif(n, 0.5, 2), 6)
)
raw$firm <- rep(sprintf("f%d", 1:8), each = 5)  # clusters (no draw: the data stay the same)
raw$y <- round(1 + 0.8 * raw$x1 - 0.5 * raw$x2 + 0.7 * (raw$g == "b") +
                 rnorm(n) * sqrt(1 / raw$w), 6)
raw$x1[c(4, 17)] <- NA     # two rows dropped for missing values
raw$y[29] <- NA            # and one for a missing response
rownames(raw) <- sprintf("r%02d", seq_len(n))

newdata <- data.frame(x1 = c(-1, 0, 0.5, NA, 2), x2 = c(1.5, 2, 3, 3, 4.5),
                      g = c("a", "b", "c", "a", "b"), y = c(0, 1, -1, 0, 2),
                      w = 1, row.names = sprintf("n%d", 1:5))

table_of <- function(df) {
  df <- as.data.frame(df)
  lapply(df, function(col) if (is.factor(col)) as.character(col) else col)
}

patsy_terms <- function(r_terms) {
  out <- sub("^factor\\(g\\)(.*)$", "C(g)[T.\\1]", r_terms)
  out
}

tidy_of <- function(t) {
  t <- as.data.frame(t)
  t$term <- patsy_terms(t$term)
  table_of(t)
}

cases <- list()

# 1. WLS with a factor and NA rows (na.omit): tidy, HC1 tidy, glance, augment, newdata
fit <- lm(y ~ x1 + x2 + factor(g), data = raw, weights = w)
G <- length(unique(raw[rownames(model.frame(fit)), "firm"]))  # clusters among the fitted rows
stopifnot(G == 8)
aug <- as.data.frame(augment(fit))
cases$wls_factor_na <- list(
  formula = "y ~ x1 + x2 + C(g)", weights = "w", na_action = "omit",
  tidy = tidy_of(tidy(fit, conf.int = TRUE, conf.level = 0.9)),
  tidy_hc1 = tidy_of(tidy(coeftest(fit, vcov = vcovHC(fit, type = "HC1")),
                          conf.int = TRUE)),
  tidy_cluster = tidy_of(tidy(coeftest(fit, vcov = vcovCL(fit, cluster = ~firm, type = "HC1"),
                                        df = G - 1),
                              conf.int = TRUE)),
  glance = table_of(glance(fit)),
  augment = table_of(aug[, c(".rownames", "y", "(weights)", ".fitted", ".resid", ".hat",
                             ".sigma", ".cooksd", ".std.resid")]),
  augment_new_conf = table_of(augment(fit, newdata = newdata, se_fit = TRUE,
                                      interval = "confidence", conf.level = 0.95)),
  augment_new_pred = table_of(suppressWarnings(
    augment(fit, newdata = newdata, interval = "prediction"))),
  augment_train_pred = table_of(suppressWarnings(as.data.frame(
    augment(fit, se_fit = TRUE, interval = "prediction", conf.level = 0.95)
  )[, c(".rownames", ".fitted", ".lower", ".upper", ".se.fit")]))
)

# 2. OLS with na.exclude and augment(data = raw): every row of the data, NA where not fitted
fit2 <- lm(y ~ x1 + x2 + factor(g), data = raw, na.action = na.exclude)
aug2 <- as.data.frame(augment(fit2, data = raw))
cases$ols_exclude <- list(
  formula = "y ~ x1 + x2 + C(g)", weights = NULL, na_action = "exclude",
  tidy = tidy_of(tidy(fit2, conf.int = TRUE)),
  glance = table_of(glance(fit2)),
  augment = table_of(cbind(.rownames = rownames(raw), aug2[, c(".fitted", ".resid", ".hat",
                                                               ".sigma", ".cooksd",
                                                               ".std.resid")]))
)

# 3. WLS with weights of zero: those rows stay in augment() (.hat 0, .std.resid NA)
zw <- raw[!is.na(raw$x1) & !is.na(raw$y), ]
zw$w[c(3, 10, 25)] <- 0
fit3 <- lm(y ~ x1 + x2, data = zw, weights = w)
aug3 <- as.data.frame(augment(fit3))
cases$wls_zero_weights <- list(
  formula = "y ~ x1 + x2", weights = "w", na_action = "omit",
  data = table_of(cbind(.rownames = rownames(zw), zw)),
  tidy = tidy_of(tidy(fit3)),
  glance = table_of(glance(fit3)),
  augment = table_of(aug3[, c(".rownames", ".fitted", ".resid", ".hat", ".sigma", ".cooksd",
                              ".std.resid")])
)

# 4. a transformed response, no intercept: glance's F on rank df, .resid on log(y) of newdata
pos <- raw[!is.na(raw$x1) & !is.na(raw$y), ]
pos$yp <- round(exp(0.3 * pos$y), 6)
fit4 <- lm(log(yp) ~ 0 + x1 + x2, data = pos)
new4 <- data.frame(x1 = c(0.1, -0.4), x2 = c(2, 3), yp = c(1.5, 0.7), row.names = c("a", "b"))
cases$log_noint <- list(
  formula = "np.log(yp) ~ 0 + x1 + x2", weights = NULL, na_action = "omit",
  data = table_of(cbind(.rownames = rownames(pos), pos)),
  newdata = table_of(cbind(.rownames = rownames(new4), new4)),
  tidy = tidy_of(tidy(fit4, conf.int = TRUE)),
  glance = table_of(glance(fit4)),
  augment = table_of(as.data.frame(augment(fit4))[, c(".rownames", ".fitted", ".resid",
                                                      ".hat", ".sigma", ".cooksd",
                                                      ".std.resid")]),
  augment_new = table_of(augment(fit4, newdata = new4))
)

# 5. rank deficient (x3 = x1 + x2) and intercept only
rd <- pos
rd$x3 <- round(rd$x1 + rd$x2, 6)
fit5 <- lm(y ~ x1 + x2 + x3, data = rd)
fit6 <- lm(y ~ 1, data = rd)
cases$rank_deficient <- list(
  formula = "y ~ x1 + x2 + x3", weights = NULL, na_action = "omit",
  data = table_of(cbind(.rownames = rownames(rd), rd)),
  tidy = tidy_of(tidy(fit5, conf.int = TRUE)),
  glance = table_of(glance(fit5)),
  glance_intercept_only = table_of(glance(fit6))
)

out <- list(
  header = list(r_version = R.version.string,
                broom = as.character(packageVersion("broom")),
                sandwich = as.character(packageVersion("sandwich")),
                lmtest = as.character(packageVersion("lmtest")),
                jsonlite = as.character(packageVersion("jsonlite"))),
  data = table_of(cbind(.rownames = rownames(raw), raw)),
  newdata = table_of(cbind(.rownames = rownames(newdata), newdata)),
  cases = cases
)
here <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)))
write_json(out, file.path(here, "tidy.json"), digits = NA, na = "null", auto_unbox = TRUE,
           pretty = TRUE)
