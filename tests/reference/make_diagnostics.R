#!/usr/bin/env Rscript
# Reference values for attnreg's regression diagnostics: lmtest's bptest, dwtest, bgtest and
# resettest, car's vif and outlierTest, stats' influence.measures, rstandard and rstudent,
# tseries' jarque.bera.test and kappa(exact = TRUE). Checked by tests/diagnostics/test_diagnostics.py
# and tests/diagnostics/test_influence.py.
#
# Regenerate from the repository root (needs r-cran-lmtest, r-cran-car, r-cran-tseries and
# r-cran-jsonlite):
#   Rscript tests/reference/make_diagnostics.R
# It overwrites tests/reference/diagnostics.json. The data are drawn here and rounded to 6
# decimals, so the JSON holds R's doubles exactly and the Python tests refit the same numbers.
#
# Weighted fits. bptest uses the prior weights (lmtest's own rule). dwtest, bgtest and
# resettest ignore the weights of an lm; attnreg applies them to the transformed model
# sqrt(w) y ~ 0 + sqrt(w) X (DW, BG) and to the weighted regressions (RESET, on powers of the
# fitted values), so for weighted cases those references come from R on that model
# (`transformed` below) and from anova() of the two weighted fits (RESET).
suppressPackageStartupMessages({
  library(jsonlite); library(lmtest); library(car); library(tseries)
})

num <- function(x) unname(as.numeric(x))
htest <- function(h) list(statistic = num(h$statistic), df = num(h$parameter),
                          p_value = num(h$p.value))

# White's test: bptest on the regressors, their squares and cross products (statsmodels'
# het_white), the products of every pair of design columns i <= j, duplicates left to lm.wfit
white_z <- function(X) {
  k <- ncol(X); cols <- list()
  for (i in seq_len(k)) for (j in i:k) cols[[length(cols) + 1]] <- X[, i] * X[, j]
  do.call(cbind, cols)
}

kappas <- function(X, w) {
  Xw <- X * sqrt(w)
  Xs <- sweep(Xw, 2, sqrt(colSums(Xw^2)), "/")
  list(scaled = kappa(Xs, exact = TRUE), unscaled = kappa(Xw, exact = TRUE))
}

one_case <- function(name, formula_r, formula_py, data, weights = NULL, bg_orders = c(1, 2),
                     outlier_cutoff = 0.05) {
  data$w <- if (is.null(weights)) NULL else weights
  fit <- if (is.null(weights)) lm(formula_r, data = data) else lm(formula_r, data = data, weights = w)
  w <- if (is.null(weights)) rep(1, nrow(data)) else weights
  X <- model.matrix(fit)
  y <- model.response(model.frame(fit))
  pos <- w > 0
  Xp <- X[pos, , drop = FALSE]; yp <- y[pos]; wp <- w[pos]
  # the transformed model of the rows in the fit (DW, BG; RESET on the weighted fits)
  ys <- sqrt(wp) * yp; Xs <- sqrt(wp) * Xp
  tfit <- lm(ys ~ 0 + Xs)
  bg <- list()
  for (p in bg_orders) {
    bg[[as.character(p)]] <- list(Chisq = htest(bgtest(tfit, order = p, type = "Chisq")),
                                  F = htest(bgtest(tfit, order = p, type = "F")))
  }
  fh <- fitted(fit)[pos]
  if (is.null(weights)) {
    reset <- htest(resettest(fit, power = 2:3, type = "fitted"))
  } else {
    f2 <- fh^2; f3 <- fh^3
    big <- lm(yp ~ 0 + Xp + f2 + f3, weights = wp)
    small <- lm(yp ~ 0 + Xp, weights = wp)
    a <- anova(small, big)
    reset <- list(statistic = a$F[2], df = c(a$Df[2], a$Res.Df[2]), p_value = a$`Pr(>F)`[2])
  }
  res_w <- weighted.residuals(fit)
  jb <- jarque.bera.test(res_w)
  im <- influence.measures(fit)
  infl <- lm.influence(fit)
  ot <- outlierTest(fit, cutoff = outlier_cutoff, n.max = 10)
  ot_text <- capture.output(print(ot))
  v <- tryCatch(vif(fit), error = function(e) conditionMessage(e))
  vif_out <- if (is.character(v)) list(error = v) else if (is.matrix(v))
    list(gvif = num(v[, 1]), df = num(v[, 2]), gvif_adj = num(v[, 3]), terms = rownames(v))
  else list(vif = num(v), terms = names(v))
  pos_fit <- lm(yp ~ 0 + Xp, data = data.frame(yp = yp, wp = wp, Xp = I(Xp)), weights = wp)
  aux <- data.frame(yp = yp, wp = wp)
  aux$Xp <- Xp
  aux$Z <- white_z(Xp)
  list(
    name = name, formula_r = deparse(formula_r), formula = formula_py,
    weights = if (is.null(weights)) NULL else "w",
    data = as.list(data), row_names = rownames(data),
    coef = num(coef(fit)),
    bp = htest(bptest(fit)),
    bp_raw = htest(bptest(fit, studentize = FALSE)),
    # bptest counts the rows of weight zero in sum((e^2 - sigma2)^2); attnreg uses the rows of
    # the fit only, as bptest on the fit without them does
    bp_pos = htest(bptest(pos_fit)), bp_raw_pos = htest(bptest(pos_fit, studentize = FALSE)),
    lowess = lowess(fitted(fit)[pos], residuals(fit)[pos]),
    white = htest(bptest(lm(yp ~ 0 + Xp, data = aux, weights = wp), varformula = ~ 0 + Z,
                         data = aux)),
    white_df_note = "df = rank of the auxiliary regression - 1",
    dw = c(htest(dwtest(tfit)), list(
      # Pan's quadrature with dwtest's default 15 nodes can be off in the third digit
      # (case wls); with 200 it has converged to ~1e-10, and attnreg matches that
      p_converged = num(dwtest(tfit, iterations = 200)$p.value),
      p_two_sided = num(dwtest(tfit, alternative = "two.sided")$p.value),
      p_less = num(dwtest(tfit, alternative = "less")$p.value),
      p_approx = num(dwtest(tfit, exact = FALSE)$p.value))),
    bg = bg,
    reset = reset,
    jb = list(statistic = num(jb$statistic), df = num(jb$parameter), p_value = num(jb$p.value)),
    kappa = kappas(Xp, wp),
    vif = vif_out,
    infmat = lapply(as.data.frame(im$infmat), num),
    infmat_names = colnames(im$infmat),
    influence_rows = names(res_w),
    sigma_i = num(infl$sigma),
    rstandard = num(rstandard(fit)),
    rstudent = num(rstudent(fit)),
    residuals = list(response = num(residuals(fit, type = "response")),
                     pearson = num(residuals(fit, type = "pearson")),
                     working = num(residuals(fit, type = "working")),
                     deviance = num(residuals(fit, type = "deviance"))),
    outlier_test = list(rows = names(ot$rstudent), rstudent = num(ot$rstudent),
                        p = num(ot$p), bonf_p = num(ot$bonf.p), signif = ot$signif,
                        text = ot_text),
    df_resid = df.residual(fit), rank = fit$rank
  )
}

set.seed(20240515)
r6 <- function(x) round(x, 6)

# 1. a time series: AR(1) errors, rows in time order (DW, BG)
n <- 40
tt <- seq_len(n)
ts_data <- data.frame(x1 = r6(sin(tt / 4) + rnorm(n, sd = 0.3)), x2 = r6(cumsum(rnorm(n, sd = 0.4))))
u <- as.numeric(arima.sim(list(ar = 0.6), n))
ts_data$y <- r6(1 + 2 * ts_data$x1 - 0.5 * ts_data$x2 + u)
rownames(ts_data) <- as.character(1990 + tt)

# 2. weighted, a factor (GVIF), correlated predictors and one planted outlier
n <- 60
wls_data <- data.frame(g = sample(c("a", "b", "c"), n, replace = TRUE), x1 = r6(rnorm(n)))
wls_data$x2 <- r6(0.7 * wls_data$x1 + rnorm(n, sd = 0.6))
wls_data$x3 <- r6(runif(n, 0, 4))
wls_w <- r6(runif(n, 0.5, 2))
wls_data$y <- r6(1 + 0.5 * (wls_data$g == "b") - (wls_data$g == "c") + wls_data$x1 +
                 0.3 * wls_data$x2 + 0.2 * wls_data$x3 + rnorm(n, sd = 1 / sqrt(wls_w)) *
                 (1 + 0.3 * wls_data$x3))
wls_data$y[7] <- wls_data$y[7] + 9

# 3. weights with zeros (those rows leave the fit and the influence measures)
n <- 25
zero_data <- data.frame(x = r6(rnorm(n)), z = r6(rnorm(n)))
zero_data$y <- r6(2 - zero_data$x + 0.5 * zero_data$z + rnorm(n))
zero_w <- r6(runif(n, 1, 3)); zero_w[c(3, 11, 20)] <- 0

# 4. no intercept, heteroskedastic
n <- 35
noint_data <- data.frame(x1 = r6(runif(n, 1, 5)), x2 = r6(rnorm(n)))
noint_data$y <- r6(1.5 * noint_data$x1 - noint_data$x2 + rnorm(n) * noint_data$x1)

cases <- list(
  ts = one_case("ts", y ~ x1 + x2, "y ~ x1 + x2", ts_data, bg_orders = c(1, 3)),
  wls = one_case("wls", y ~ g + x1 + x2 + x3, "y ~ C(g) + x1 + x2 + x3", wls_data, wls_w),
  zero = one_case("zero", y ~ x + z, "y ~ x + z", zero_data, zero_w),
  noint = one_case("noint", y ~ 0 + x1 + x2, "y ~ 0 + x1 + x2", noint_data)
)

header <- list(
  generated_by = "tests/reference/make_diagnostics.R",
  r_version = R.version.string,
  packages = list(lmtest = as.character(packageVersion("lmtest")),
                  car = as.character(packageVersion("car")),
                  tseries = as.character(packageVersion("tseries")),
                  jsonlite = as.character(packageVersion("jsonlite"))),
  notes = c("dw: dwtest's default alternative 'greater'; exact p (Pan) since every n < 100; p_converged with iterations = 200",
            "white: bptest(studentize=TRUE) on the products X_i X_j (i <= j) of the design columns",
            "kappa: kappa(exact=TRUE) of sqrt(w) X with unit-length columns (scaled) and as is",
            "infmat: influence.measures(fit)$infmat; rows of weight zero are omitted, as R does")
)
here <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)))
write_json(list(header = header, cases = cases), file.path(here, "diagnostics.json"),
           digits = NA, auto_unbox = TRUE, pretty = TRUE, null = "null", na = "null")
