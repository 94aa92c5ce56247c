#!/usr/bin/env Rscript
# R's answers for tests/inference/test_hypotheses.py and tests/inference/test_anova.py:
# car::linearHypothesis (F and Chisq, classical and sandwich::vcovHC HC1/HC3 covariances,
# cluster-robust sandwich::vcovCL),
# single-restriction t tests, anova(lm) sequential tables, anova(m1, m2, m3) nested
# comparisons and car::Anova type II / III tables, each with the text R prints.
#
# Regenerate (from the repository root, in the C locale so that the significance legend
# uses ASCII quotes):
#     LC_ALL=C Rscript tests/reference/make_hypotheses.R
# It overwrites tests/reference/hypotheses.json. Requires car, sandwich and jsonlite.
#
# The data are simulated here and written into the JSON with 4 decimals (so R and the
# Python tests fit exactly the same numbers). Formulas list their terms in patsy's order
# (factor-only terms first, then terms grouped by their numeric variables), which is also
# R's order for these formulas, so sequential tables and coefficient vectors line up.
# Coefficient names differ (R's C(g)b is patsy's C(g)[T.b]): each hypothesis carries the
# Python text and the R hypothesis matrix, in the coefficient order both share.

suppressPackageStartupMessages({
  library(stats)
  library(car)
  library(sandwich)
  library(jsonlite)
})
stopifnot(l10n_info()$`UTF-8` == FALSE)
options(width = 80, digits = 7, scipen = 0, OutDec = ".", show.signif.stars = TRUE)

script_dir <- local({
  args <- commandArgs(trailingOnly = FALSE)
  f <- sub("^--file=", "", args[grep("^--file=", args)])
  if (length(f) == 1L) dirname(normalizePath(f)) else file.path("tests", "reference")
})

set.seed(20240615)
n <- 60
g <- factor(sample(c("a", "b", "c"), n, replace = TRUE))
x1 <- round(rnorm(n), 4)
x2 <- round(rnorm(n), 4)
x3 <- round(runif(n, -1, 1), 4)
x4 <- x1 + x2                                # aliased with x1 and x2
w <- round(runif(n, 0.5, 2), 4)
y <- round(1 + 0.5 * x1 - 0.3 * x2 + 0.05 * x3 + 0.6 * (g == "b") + 0.4 * x1 * x2 +
           rnorm(n, sd = 0.5 + 0.5 * abs(x1)), 4)
cl <- sample(1:12, n, replace = TRUE)        # clusters (drawn after y: y is unchanged)
data <- data.frame(y = y, g = g, x1 = x1, x2 = x2, x3 = x3, x4 = x4, w = w, cl = cl)

models <- list(
  main = list(formula = "y ~ C(g) + x1 + x2 + x3", weights = FALSE),
  inter = list(formula = "y ~ C(g) + x1 + x2 + x1:x2", weights = FALSE),
  weighted = list(formula = "y ~ C(g) + x1 + x2 + x3", weights = TRUE),
  aliased = list(formula = "y ~ x1 + x2 + x4 + x3", weights = FALSE),
  factor_slope = list(formula = "y ~ C(g) + x1 + C(g):x1", weights = FALSE),
  no_intercept = list(formula = "y ~ x1 + x2 - 1", weights = FALSE),
  small = list(formula = "y ~ x1", weights = FALSE),
  medium = list(formula = "y ~ C(g) + x1", weights = FALSE),
  small_w = list(formula = "y ~ x1", weights = TRUE)
)
fit_model <- function(m) {
  if (m$weights) lm(as.formula(m$formula), data = data, weights = w)
  else lm(as.formula(m$formula), data = data)
}
fits <- lapply(models, fit_model)

vcov_of <- function(fit, kind) {
  if (kind == "classical") vcov(fit, complete = FALSE) else vcovHC(fit, type = kind)
}
printed <- function(x) paste(capture.output(print(x)), collapse = "\n")

# ------------------------------------------------------------------ linear hypotheses
# hyp: python text; R: restriction rows over the coefficients (complete order, aliased
# included as zero columns); r: right-hand side
hyps <- list(
  list(model = "main", python = "x1 = x2, x3 = 0", r_text = c("x1 = x2", "x3 = 0")),
  list(model = "main", python = "C(g)[T.b] = 0, C(g)[T.c] = 0", term = "C(g)",
       R = rbind(c(0, 1, 0, 0, 0, 0), c(0, 0, 1, 0, 0, 0)), r = c(0, 0)),
  list(model = "inter", python = "x1:x2 = 0, x1 + 2*x2 = 1",
       r_text = c("x1:x2 = 0", "x1 + 2*x2 = 1")),
  list(model = "weighted", python = "x1 = x2, x3 = 0", r_text = c("x1 = x2", "x3 = 0")),
  list(model = "aliased", python = "x1 - x2 = 0, x3 = 0.1",
       r_text = c("x1 - x2 = 0", "x3 = 0.1")),
  list(model = "factor_slope", python = "C(g)[T.b]:x1 = C(g)[T.c]:x1, x1 = 0.5",
       R = rbind(c(0, 0, 0, 0, 1, -1), c(0, 0, 0, 1, 0, 0)), r = c(0, 0.5))
)
hyp_cases <- list()
for (h in hyps) {
  fit <- fits[[h$model]]
  for (kind in c("classical", "HC1", "HC3")) {
    for (test in c("F", "Chisq")) {
      V <- vcov_of(fit, kind)
      if (!is.null(h$r_text)) {
        lh <- linearHypothesis(fit, h$r_text, test = test, vcov. = V, singular.ok = TRUE)
      } else {
        lh <- linearHypothesis(fit, h$R, rhs = h$r, test = test, vcov. = V,
                               singular.ok = TRUE)
      }
      stat_col <- if (test == "F") "F" else "Chisq"
      p_col <- if (test == "F") "Pr(>F)" else "Pr(>Chisq)"
      if (!is.null(h$r_text)) {
        L <- rbind(car::makeHypothesis(names(coef(fit)), h$r_text))
        hm <- L[, -ncol(L), drop = FALSE]
        rhs <- L[, ncol(L)]
      } else {
        hm <- h$R
        rhs <- h$r
      }
      hyp_cases[[length(hyp_cases) + 1L]] <- list(
        model = h$model, python = h$python, term = if (is.null(h$term)) NA else h$term,
        vcov = kind, test = test,
        hypothesis_matrix = unname(hm), rhs = unname(as.numeric(rhs)),
        statistic = lh[[stat_col]][2], df = lh$Df[2], res_df = lh$Res.Df[2],
        p_value = lh[[p_col]][2],
        value = unname(as.numeric(attr(lh, "value"))),
        value_vcov = unname(as.matrix(attr(lh, "vcov"))))
    }
  }
}

# cluster-robust (sandwich::vcovCL, its default HC1 adjustment): car's statistic; the F
# reference distribution on G - 1 denominator df (as Stata and fixest), p from pf()
cluster_cases <- list()
G <- length(unique(cl))
for (h in hyps[c(1, 3, 4)]) {
  fit <- fits[[h$model]]
  V <- vcovCL(fit, cluster = ~cl, type = "HC1")
  for (test in c("F", "Chisq")) {
    lh <- linearHypothesis(fit, h$r_text, test = test, vcov. = V)
    stat <- if (test == "F") lh$F[2] else lh$Chisq[2]
    q <- lh$Df[2]
    cluster_cases[[length(cluster_cases) + 1L]] <- list(
      model = h$model, python = h$python, test = test, clusters = G, statistic = stat,
      df = q, p_value = if (test == "F") pf(stat, q, G - 1, lower.tail = FALSE)
                        else pchisq(stat, q, lower.tail = FALSE),
      value = unname(as.numeric(attr(lh, "value"))),
      value_vcov = unname(as.matrix(attr(lh, "vcov"))))
  }
}

# ------------------------------------------------------------------ t tests
t_cases <- list()
for (kind in c("classical", "HC3")) {
  fit <- fits$main
  V <- vcov_of(fit, kind)
  for (txt in c("x1 - x2 = 0", "x3 = 0.1", "C(g)b + 2*x1 = 1")) {
    L <- rbind(car::makeHypothesis(names(coef(fit)), txt))
    Rm <- L[, -ncol(L), drop = FALSE]
    rhs <- L[, ncol(L)]
    est <- as.numeric(Rm %*% coef(fit) - rhs)
    se <- sqrt(as.numeric(Rm %*% V %*% t(Rm)))
    tv <- est / se
    dfr <- df.residual(fit)
    lh <- linearHypothesis(fit, Rm, rhs = rhs, vcov. = V)
    stopifnot(abs(lh$F[2] - tv^2) < 1e-10 * tv^2)
    q <- qt(0.95, dfr)
    t_cases[[length(t_cases) + 1L]] <- list(
      vcov = kind, r_text = txt, estimate = est, std_error = se, t = tv,
      p_value = 2 * pt(-abs(tv), dfr), lower = est - q * se, upper = est + q * se,
      level = 0.9, df = dfr)
  }
}
t_python <- c("x1 - x2 = 0" = "x1 - x2 = 0", "x3 = 0.1" = "x3 = 0.1",
              "C(g)b + 2*x1 = 1" = "C(g)[T.b] + 2*x1 = 1")
for (i in seq_along(t_cases)) t_cases[[i]]$python <- unname(t_python[t_cases[[i]]$r_text])

# ------------------------------------------------------------------ anova tables
table_of <- function(a) {
  a <- as.data.frame(a)
  list(rownames = rownames(a), columns = names(a),
       values = lapply(a, function(col) as.numeric(col)))
}
anova_cases <- list()
for (name in c("main", "inter", "weighted", "aliased", "factor_slope", "no_intercept")) {
  a <- anova(fits[[name]])
  anova_cases[[length(anova_cases) + 1L]] <- list(
    kind = "sequential", models = name, test = "F", type = 1,
    table = table_of(a), printed = printed(a))
}
for (test in c("F", "Chisq")) {
  a <- anova(fits$small, fits$medium, fits$inter, test = test)
  anova_cases[[length(anova_cases) + 1L]] <- list(
    kind = "nested", models = c("small", "medium", "inter"), test = test, type = NA,
    table = table_of(a), printed = printed(a))
}
a <- anova(fits$inter, fits$small)  # bigger model first: negative Df, as R
anova_cases[[length(anova_cases) + 1L]] <- list(
  kind = "nested", models = c("inter", "small"), test = "F", type = NA,
  table = table_of(a), printed = printed(a))
a <- anova(fits$small_w, fits$weighted)
anova_cases[[length(anova_cases) + 1L]] <- list(
  kind = "nested", models = c("small_w", "weighted"), test = "F", type = NA,
  table = table_of(a), printed = printed(a))
for (name in c("inter", "factor_slope", "weighted", "no_intercept")) {
  for (type in c(2, 3)) {
    a <- suppressMessages(Anova(fits[[name]], type = type))
    anova_cases[[length(anova_cases) + 1L]] <- list(
      kind = "car", models = name, test = "F", type = type,
      table = table_of(a), printed = printed(a))
  }
}

out <- list(
  header = list(
    generated_by = "tests/reference/make_hypotheses.R",
    regenerate = "LC_ALL=C Rscript tests/reference/make_hypotheses.R",
    r_version = R.version.string,
    car = as.character(packageVersion("car")),
    sandwich = as.character(packageVersion("sandwich")),
    jsonlite = as.character(packageVersion("jsonlite"))),
  data = list(y = y, g = as.character(g), x1 = x1, x2 = x2, x3 = x3, x4 = x4, w = w, cl = cl),
  models = models,
  hypotheses = hyp_cases,
  cluster = cluster_cases,
  t_tests = t_cases,
  anova = anova_cases)
writeLines(toJSON(out, auto_unbox = TRUE, digits = NA, na = "null", pretty = TRUE,
                  matrix = "rowmajor"),
           file.path(script_dir, "hypotheses.json"))
