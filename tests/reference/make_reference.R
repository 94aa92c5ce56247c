#!/usr/bin/env Rscript
# Generate the R golden reference values used by tests/linear/test_against_r.py.
#
# Purpose: R (stats::lm, sandwich, pls) is the reference implementation that
# attnreg's OLS / WLS / robust-covariance / PCR results are checked against.
# This script is a *generator* only: it writes tests/reference/r_reference.json,
# which embeds both the input data and the expected values, so the Python test
# suite never needs R or R's data sets.
#
# Regenerate (from the repository root):
#     Rscript tests/reference/make_reference.R
#
# Requires: R >= 4.0 with the recommended 'stats' package plus the CRAN packages
# 'sandwich', 'pls' and 'jsonlite'.

suppressPackageStartupMessages({
  library(stats)
  library(sandwich)
  library(pls)
  library(jsonlite)
})

# ---------------------------------------------------------------------------
# Output location: next to this script when run via Rscript, else the
# conventional path relative to the repository root.
# ---------------------------------------------------------------------------
script_dir <- local({
  args <- commandArgs(trailingOnly = FALSE)
  f <- sub("^--file=", "", args[grep("^--file=", args)])
  if (length(f) == 1L) dirname(normalizePath(f)) else file.path("tests", "reference")
})
out_file <- file.path(script_dir, "r_reference.json")

# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------
vec <- function(x) unname(as.numeric(x))

# Matrix as a list of rows (row-major), dimnames dropped; NA -> null in JSON.
mat <- function(m) {
  m <- unname(as.matrix(m))
  lapply(seq_len(nrow(m)), function(i) as.numeric(m[i, ]))
}

# Expand a covariance matrix computed on the non-aliased coefficients only
# (as sandwich does) to the full P x P layout used by vcov(fit), with NA in
# the rows/columns of aliased coefficients.
expand_vcov <- function(v, coefs) {
  full <- matrix(NA_real_, length(coefs), length(coefs),
                 dimnames = list(names(coefs), names(coefs)))
  keep <- names(coefs)[!is.na(coefs)]
  full[keep, keep] <- v[keep, keep]
  full
}

frame_json <- function(df, cols = names(df)) {
  list(
    columns = lapply(df[cols], function(x) if (is.numeric(x)) as.numeric(x) else as.character(x)),
    row_names = as.character(rownames(df))
  )
}

predict_json <- function(p) {
  list(fit = vec(p[, "fit"]), lwr = vec(p[, "lwr"]), upr = vec(p[, "upr"]))
}

# Numerically stable robust covariances via the QR factorisation of the
# (weighted) design, V = R^-1 Q' diag(e) K diag(e) Q R^-T, used only to measure
# the accuracy of sandwich's bread %*% meat %*% bread product (which loses
# digits on ill-conditioned designs such as longley).  Returns
# max |V_sandwich - V_qr| / sqrt(|V_qr,ii V_qr,jj|).
qr_sandwich_discrepancy <- function(fit, v_sandwich, kernel) {
  co <- coef(fit)
  keep <- !is.na(co)
  w <- if (is.null(weights(fit))) rep(1, nobs(fit)) else weights(fit)
  Xw <- model.matrix(fit)[, keep, drop = FALSE] * sqrt(w)
  ew <- residuals(fit) * sqrt(w)
  q <- qr(Xw)
  Q <- qr.Q(q)
  Rinv <- backsolve(qr.R(q), diag(ncol(Xw)))
  U <- t(Q) %*% diag(as.numeric(ew))
  v <- Rinv %*% (U %*% kernel %*% t(U)) %*% t(Rinv)
  piv <- q$pivot
  v_qr <- matrix(NA_real_, ncol(Xw), ncol(Xw))
  v_qr[piv, piv] <- v
  vs <- v_sandwich[names(co)[keep], names(co)[keep]]
  d <- sqrt(abs(diag(v_qr)))
  max(abs(vs - v_qr) / outer(d, d))
}

# One lm() case.  `r_call` is evaluated in the global environment so that the
# 'Call:' line of summary() shows the real call.
lm_case <- function(description, r_call, formula_py, data, data_cols, py_terms,
                    newdata, weights_expr = NULL, prediction_weights = NULL,
                    notes = character()) {
  fit <- suppressWarnings(eval(parse(text = r_call), envir = globalenv()))
  s <- summary(fit)
  co <- coef(fit)                             # full length, NA for aliased
  ct <- coef(s)                               # non-aliased rows only
  se <- tv <- pv <- setNames(rep(NA_real_, length(co)), names(co))
  se[rownames(ct)] <- ct[, "Std. Error"]
  tv[rownames(ct)] <- ct[, "t value"]
  pv[rownames(ct)] <- ct[, "Pr(>|t|)"]
  stopifnot(length(py_terms) == length(co))

  fs <- s$fstatistic
  ll <- logLik(fit)
  pred_conf <- suppressWarnings(
    predict(fit, newdata = newdata, interval = "confidence", level = 0.90))
  pred_pred <- if (is.null(prediction_weights)) {
    suppressWarnings(predict(fit, newdata = newdata, interval = "prediction", level = 0.90))
  } else {
    suppressWarnings(predict(fit, newdata = newdata, interval = "prediction", level = 0.90,
                             weights = prediction_weights))
  }

  hc_types <- c(HC0 = "HC0", HC1 = "HC1", HC2 = "HC2", HC3 = "HC3")
  hc_raw <- lapply(hc_types, function(type) vcovHC(fit, type = type))
  hc <- lapply(hc_raw, function(v) mat(expand_vcov(v, co)))
  nw_noadj <- NeweyWest(fit, lag = 4, prewhite = FALSE, adjust = FALSE)
  nw_adj <- NeweyWest(fit, lag = 4, prewhite = FALSE, adjust = TRUE)

  # Accuracy of the sandwich values (see qr_sandwich_discrepancy).
  n <- nobs(fit)
  k <- fit$rank
  h <- hatvalues(fit)
  bartlett <- outer(seq_len(n), seq_len(n), function(i, j) pmax(0, 1 - abs(i - j) / (4 + 1)))
  kernels <- list(HC0 = diag(n), HC1 = diag(n) * n / (n - k), HC2 = diag(1 / (1 - h)),
                  HC3 = diag(1 / (1 - h)^2))
  accuracy <- c(
    sapply(names(hc_types), function(t) qr_sandwich_discrepancy(fit, hc_raw[[t]], kernels[[t]])),
    NeweyWest_adjust_false = qr_sandwich_discrepancy(fit, nw_noadj, bartlett),
    NeweyWest_adjust_true = qr_sandwich_discrepancy(fit, nw_adj, bartlett * n / (n - k))
  )

  out <- list(
    description = description,
    r_call = r_call,
    formula_py = formula_py,
    weights_expr = if (is.null(weights_expr)) NA else weights_expr,
    data = frame_json(data, data_cols),
    r_terms = names(co),
    py_terms = py_terms,
    aliased = I(names(co)[is.na(co)]),
    rank = fit$rank,
    coefficients = vec(co),
    std_errors = vec(se),
    t_values = vec(tv),
    p_values = vec(pv),
    confint_95 = mat(confint(fit, level = 0.95)),
    confint_90 = mat(confint(fit, level = 0.90)),
    sigma = s$sigma,
    df_residual = fit$df.residual,
    r_squared = s$r.squared,
    adj_r_squared = s$adj.r.squared,
    fstatistic = list(value = unname(fs["value"]), numdf = unname(fs["numdf"]),
                      dendf = unname(fs["dendf"]),
                      p_value = unname(pf(fs["value"], fs["numdf"], fs["dendf"],
                                          lower.tail = FALSE))),
    loglik = as.numeric(ll),
    loglik_df = attr(ll, "df"),
    aic = AIC(fit),
    bic = BIC(fit),
    nobs = nobs(fit),
    deviance = deviance(fit),
    residuals = vec(residuals(fit)),
    weighted_residuals = vec(weighted.residuals(fit)),
    fitted_values = vec(fitted(fit)),
    hatvalues = vec(hatvalues(fit)),
    cooks_distance = vec(cooks.distance(fit)),
    rstandard = vec(rstandard(fit)),
    vcov = mat(vcov(fit)),
    vcov_hc = hc,
    vcov_newey_west = list(lag = 4, prewhite = FALSE,
                           adjust_false = mat(expand_vcov(nw_noadj, co)),
                           adjust_true = mat(expand_vcov(nw_adj, co))),
    sandwich_vs_qr_max_scaled_diff = as.list(accuracy),
    newdata = frame_json(newdata),
    predict_confidence_90 = predict_json(pred_conf),
    predict_prediction_90 = predict_json(pred_pred),
    prediction_weights = if (is.null(prediction_weights)) NA else prediction_weights,
    summary_lines = capture.output(print(s)),
    notes = as.list(notes)
  )
  out
}

# ---------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------
data(mtcars, package = "datasets")
data(longley, package = "datasets")
mtcars_cols <- c("mpg", "wt", "hp", "cyl", "am", "disp")

# longley with Python-friendly column names (same order as R's data set).
longley_py <- longley
names(longley_py) <- c("GNP_deflator", "GNP", "Unemployed", "Armed_Forces",
                       "Population", "Year", "Employed")
longley_py$Year <- as.numeric(longley_py$Year)
assign("longley_py", longley_py, envir = globalenv())
longley_formula_py <-
  "Employed ~ GNP_deflator + GNP + Unemployed + Armed_Forces + Population + Year"

# Sanity: renaming does not change the fit.
stopifnot(isTRUE(all.equal(unname(coef(lm(Employed ~ ., data = longley))),
                           unname(coef(lm(Employed ~ ., data = longley_py))),
                           tolerance = 1e-12)))

# Rank-deficient design: x3 = x1 + 2 * x2 exactly (integers, so the identity
# survives the round trip through JSON bit for bit).
rankdef <- data.frame(
  y  = c(3.1, 4.7, 2.2, 8.9, 6.4, 7.5, 10.3, 5.8, 9.6, 12.1),
  x1 = c(1, 2, 3, 4, 5, 6, 7, 8, 9, 10),
  x2 = c(2, 3, 0, 5, 1, 2, 6, 0, 3, 4)
)
rankdef$x3 <- rankdef$x1 + 2 * rankdef$x2
assign("rankdef", rankdef, envir = globalenv())

# New data for predict().
nd_mtcars <- data.frame(wt = c(2.5, 3.0, 3.5, 4.0), hp = c(100, 150, 200, 250),
                        cyl = c(4, 6, 8, 6))
nd_mtcars_num <- nd_mtcars[, c("wt", "hp")]
nd_longley <- data.frame(GNP_deflator = c(90, 100, 110),
                         GNP = c(300, 400, 500),
                         Unemployed = c(250, 300, 400),
                         Armed_Forces = c(200, 250, 300),
                         Population = c(110, 115, 125),
                         Year = c(1950, 1955, 1962))
nd_rankdef <- data.frame(x1 = c(2, 5, 11), x2 = c(1, 4, 2))
nd_rankdef$x3 <- nd_rankdef$x1 + 2 * nd_rankdef$x2   # respects the aliasing

# ---------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------
cases <- list()

cases$mtcars <- lm_case(
  description = "OLS with a 3-level factor (treatment contrasts, baseline cyl = 4).",
  r_call = "lm(mpg ~ wt + hp + factor(cyl), data = mtcars)",
  formula_py = "mpg ~ wt + hp + C(cyl)",
  data = mtcars, data_cols = mtcars_cols,
  py_terms = c("(Intercept)", "wt", "hp", "C(cyl)[T.6]", "C(cyl)[T.8]"),
  newdata = nd_mtcars
)

cases$longley <- lm_case(
  description = paste("OLS on the ill-conditioned Longley data (all 6 predictors);",
                      "columns renamed GNP.deflator -> GNP_deflator, Armed.Forces -> Armed_Forces."),
  r_call = "lm(Employed ~ ., data = longley_py)",
  formula_py = longley_formula_py,
  data = longley_py, data_cols = names(longley_py),
  py_terms = c("(Intercept)", "GNP_deflator", "GNP", "Unemployed", "Armed_Forces",
               "Population", "Year"),
  newdata = nd_longley
)

cases$mtcars_wls <- lm_case(
  description = "Weighted least squares with case weights w = 1/disp.",
  r_call = "lm(mpg ~ wt + hp, data = mtcars, weights = 1/disp)",
  formula_py = "mpg ~ wt + hp",
  weights_expr = "1/disp",
  data = mtcars, data_cols = mtcars_cols,
  py_terms = c("(Intercept)", "wt", "hp"),
  newdata = nd_mtcars_num,
  prediction_weights = 1,
  notes = c(
    "residuals/fitted_values are on the response scale (y - yhat, unweighted); weighted_residuals = sqrt(w) * residuals.",
    "hatvalues, cooks_distance and rstandard use the weighted fit (R's lm.influence), i.e. weighted residuals.",
    "logLik includes the + 0.5 * sum(log(w)) term.",
    "Prediction interval uses predict(..., weights = 1): prediction variance sigma^2 / 1 + se.fit^2 (new observations have unit weight). The confidence interval does not depend on weights."
  )
)

cases$mtcars_noint <- lm_case(
  description = "OLS without intercept: R^2 and the F test are uncentred (about 0, not the mean).",
  r_call = "lm(mpg ~ 0 + wt + hp, data = mtcars)",
  formula_py = "mpg ~ 0 + wt + hp",
  data = mtcars, data_cols = mtcars_cols,
  py_terms = c("wt", "hp"),
  newdata = nd_mtcars_num,
  notes = c("r_squared = 1 - RSS / sum(y^2); fstatistic numdf = 2 (all coefficients zero).")
)

cases$rankdef <- lm_case(
  description = "Rank-deficient design (x3 = x1 + 2*x2): x3 is aliased, its coefficient is NA.",
  r_call = "lm(y ~ x1 + x2 + x3, data = rankdef)",
  formula_py = "y ~ x1 + x2 + x3",
  data = rankdef, data_cols = names(rankdef),
  py_terms = c("(Intercept)", "x1", "x2", "x3"),
  newdata = nd_rankdef,
  notes = c(
    "Aliased coefficient (x3) is null in coefficients/std_errors/t_values/p_values/confint and its row and column of every covariance matrix are null (vcov(fit) with complete = TRUE; sandwich returns the non-aliased block only, expanded here).",
    "df_residual = n - rank; fstatistic numdf = rank - 1.",
    "newdata rows satisfy x3 = x1 + 2*x2, so the predictions are estimable; R warns 'prediction from a rank-deficient fit may be misleading' (suppressed)."
  )
)

# ---------------------------------------------------------------------------
# PCR (pls::pcr) on longley
# ---------------------------------------------------------------------------
X_long <- as.matrix(longley_py[, setdiff(names(longley_py), "Employed")])
y_long <- longley_py$Employed
pcr_fits <- list()
for (k in c(2L, 4L)) {
  pf_ <- pcr(Employed ~ ., ncomp = k, data = longley_py, scale = TRUE, validation = "none")
  B <- coef(pf_, ncomp = k, intercept = TRUE)[, 1, 1]  # intercept + slopes for X / scale
  slopes_scaled <- B[-1]
  scl <- pf_$scale
  slopes_orig <- slopes_scaled / scl
  intercept <- unname(B[1])  # = mean(y) - colMeans(X) %*% slopes_orig (same on both scales)
  fitted_k <- fitted(pf_)[, 1, k]

  # --- verify the documented conventions ------------------------------------
  # 1. pls's scale = TRUE divides by the sample SD (denominator n - 1).
  stopifnot(isTRUE(all.equal(unname(scl), unname(apply(X_long, 2, sd)), tolerance = 1e-14)))
  # 2. coef() returns slopes for the *scaled* X; original-scale slopes are B / scale,
  #    and the intercept returned by coef(intercept = TRUE) is already correct
  #    for the original X.
  stopifnot(isTRUE(all.equal(unname(intercept),
                             mean(y_long) - sum(colMeans(X_long) * slopes_orig),
                             tolerance = 1e-12)))
  stopifnot(isTRUE(all.equal(unname(fitted_k),
                             unname(intercept + drop(X_long %*% slopes_orig)),
                             tolerance = 1e-12)))
  stopifnot(isTRUE(all.equal(unname(predict(pf_, newdata = longley_py, ncomp = k)[, 1, 1]),
                             unname(fitted_k), tolerance = 1e-12)))
  # 3. Original-scale coefficients do not depend on a common scaling constant:
  #    population SD (denominator n) gives the same answer.
  n <- nrow(X_long)
  pf_pop <- pcr(Employed ~ ., ncomp = k, data = longley_py,
                scale = apply(X_long, 2, sd) * sqrt((n - 1) / n), validation = "none")
  B_pop <- coef(pf_pop, ncomp = k, intercept = TRUE)[, 1, 1]
  stopifnot(isTRUE(all.equal(unname(B_pop[-1] / pf_pop$scale), unname(slopes_orig),
                             tolerance = 1e-10)))
  stopifnot(isTRUE(all.equal(unname(B_pop[1]), intercept, tolerance = 1e-10)))

  pcr_fits[[paste0("k", k)]] <- list(
    ncomp = k,
    r_call = sprintf("pcr(Employed ~ ., ncomp = %d, data = longley_py, scale = TRUE, validation = \"none\")", k),
    intercept = intercept,
    coefficients = c(intercept, vec(slopes_orig)),   # original X scale, intercept first
    coefficients_scaled_x = vec(slopes_scaled),      # as returned by coef(): per unit of X / scale
    fitted_values = vec(fitted_k),
    residuals = vec(y_long - fitted_k)
  )
}
pcr_ref <- list(
  description = paste("Principal-components regression via pls::pcr with scale = TRUE on longley;",
                      "coefficients reported on the original X scale."),
  formula_r = "Employed ~ .",
  formula_py = longley_formula_py,
  data = frame_json(longley_py),
  r_terms = c("(Intercept)", colnames(X_long)),
  x_center = vec(colMeans(X_long)),
  x_scale = vec(apply(X_long, 2, sd)),
  fits = pcr_fits
)

# ---------------------------------------------------------------------------
# Header and output
# ---------------------------------------------------------------------------
header <- list(
  purpose = paste(
    "Golden reference values from R for attnreg's R-compatibility tests.",
    "Generated by tests/reference/make_reference.R; input data are embedded per case,",
    "so the Python tests do not need R."),
  regenerate = "Rscript tests/reference/make_reference.R",
  r_version = R.version.string,
  platform = R.version$platform,
  packages = list(
    stats = as.character(packageVersion("stats")),
    sandwich = as.character(packageVersion("sandwich")),
    pls = as.character(packageVersion("pls")),
    jsonlite = as.character(packageVersion("jsonlite"))
  ),
  blas = unname(extSoftVersion()["BLAS"]),
  lapack = La_library(),
  locale_ctype = Sys.getlocale("LC_CTYPE"),
  conventions = list(
    json = paste("Numbers written with jsonlite::toJSON(digits = NA), i.e. 15 significant digits;",
                 "NA (aliased coefficients) is written as null. Matrices are lists of rows",
                 "(row-major) in the order of r_terms / py_terms."),
    term_names = paste("R and patsy name terms differ (e.g. R 'factor(cyl)6' <-> patsy 'C(cyl)[T.6]');",
                       "r_terms and py_terms give the position-by-position mapping."),
    aic_bic = paste("R's AIC/BIC count sigma as a parameter: df = rank + 1 (loglik_df).",
                    "statsmodels' aic/bic do not (df = rank), so they are 2 and log(n) smaller."),
    r_squared_no_intercept = paste("Without an intercept R uses the uncentred total sum of squares",
                                   "sum(y^2) (weighted: sum(w*y^2)) and the F test has numdf = rank."),
    sandwich_hc = paste("vcovHC(fit, type = 'HC0'..'HC3'); HC1 = HC0 * n/(n - k).",
                        "For WLS the meat uses w * e * x and the hat values of the weighted fit."),
    sandwich_newey_west = paste("NeweyWest(fit, lag = 4, prewhite = FALSE, adjust = FALSE|TRUE):",
                                "Bartlett weights 1 - j/(lag + 1), j = 0..lag, observations in data order.",
                                "adjust = TRUE multiplies by n/(n - k); adjust = FALSE does not."),
    sandwich_accuracy = paste("sandwich forms bread %*% meat %*% bread, which loses digits on",
                              "ill-conditioned designs (longley: entries off by up to ~1e-7 of",
                              "sqrt(V_ii V_jj), ~2e-6 elementwise, and not exactly symmetric).",
                              "sandwich_vs_qr_max_scaled_diff records, per case, the largest",
                              "|V_sandwich - V_qr| / sqrt(V_ii V_jj) against a QR-based computation."),
    wls = paste("residuals()/fitted() are on the response scale; influence measures and sigma",
                "use the weighted fit; logLik adds 0.5*sum(log(w))."),
    pls_scale = paste("pls::pcr(scale = TRUE) centres X and divides by the sample SD (denominator n - 1).",
                      "coef(fit, ncomp = k, intercept = TRUE) returns slopes for the *scaled* X",
                      "(coefficients_scaled_x); the intercept is valid for the original X.",
                      "Original-scale slopes = slopes / scale (coefficients, verified against fitted()).",
                      "A common factor in the scale (e.g. n instead of n - 1) leaves original-scale",
                      "coefficients unchanged (verified), only the choice of scaled columns matters."),
    summary_text = paste("summary_lines = capture.output(print(summary(fit))) in locale",
                         Sys.getlocale("LC_CTYPE"),
                         "(the 'Signif. codes' line uses typographic quotes in UTF-8 locales).")
  )
)

ref <- list(header = header, cases = cases, pcr = pcr_ref)
writeLines(toJSON(ref, digits = NA, auto_unbox = TRUE, na = "null", pretty = TRUE), out_file)
message("wrote ", out_file)
