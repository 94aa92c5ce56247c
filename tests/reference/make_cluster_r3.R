#!/usr/bin/env Rscript
# Robust analysis of variance and small-sample cluster inference from R: the reference for
# tests/inference/vcov/test_cluster_r3.py and tests/inference/test_anova_robust.py.
#
# - car::Anova(fit, type = 2 | 3) under a robust covariance: white.adjust = "hc0" ... "hc3"
#   (unweighted fits), vcov. = sandwich::vcovHC(type = "HC0" ... "HC3") (weighted fits),
#   vcov. = sandwich::vcovCL(cluster = ~ cl) (HC1) with car's default error.df (the residual
#   df) and with error.df = G - 1, and vcov. = clubSandwich::vcovCR(type = "CR2");
# - clubSandwich::coef_test(fit, vcov = "CR2", cluster = cl, test = "Satterthwaite") and
#   conf_int(..., test = "Satterthwaite") at levels 0.95 and 0.90;
# - clubSandwich::Wald_test(fit, constraints, vcov = "CR2", cluster = cl, test = "HTZ").
#
# Two designs with few clusters: 8 balanced clusters of 8 rows and 10 strongly unbalanced
# clusters (2 to 40 rows); a regressor constant within clusters, a row-level one, factors
# with an interaction, and prior weights. Every case embeds its data.
#
# Regenerate from the repository root (needs r-cran-car, r-cran-sandwich,
# r-cran-clubsandwich, r-cran-jsonlite), in the C locale so that the printed tables use
# ASCII quotes:
#
#   LC_ALL=C Rscript tests/reference/make_cluster_r3.R
#
# Formulas list their terms so that R's order (by degree) equals patsy's; R's names are
# mapped to patsy's (factor(f) -> C(f), factor(f)b -> C(f)[T.b]) before they are written.
suppressPackageStartupMessages({
  library(car); library(sandwich); library(clubSandwich); library(jsonlite)
})
stopifnot(l10n_info()$`UTF-8` == FALSE)
options(width = 80, digits = 7, scipen = 0, OutDec = ".", show.signif.stars = TRUE)

py_name <- function(x) {
  x <- gsub("factor\\(([a-z]+)\\)([a-z]+)", "C(\\1)[T.\\2]", x)
  gsub("factor\\(([a-z]+)\\)", "C(\\1)", x)
}
printed <- function(x) paste(capture.output(print(x)), collapse = "\n")
mat <- function(V) unname(lapply(seq_len(nrow(V)), function(i) unname(V[i, ])))

make_data <- function(sizes, seed) {
  set.seed(seed)
  J <- length(sizes)
  cl <- rep(seq_len(J), sizes)
  n <- length(cl)
  d <- data.frame(
    cl = paste0("k", cl),
    x1 = round(rnorm(n), 6),
    x2 = round(rnorm(J)[cl], 6),                       # constant within clusters
    f = sample(c("a", "b", "c"), n, replace = TRUE),
    h = sample(c("u", "v"), n, replace = TRUE),
    w = round(runif(n, 0.3, 3), 6)
  )
  d$y <- round(1 + 0.5 * d$x1 + 0.4 * d$x2 + 0.6 * (d$f == "b") - 0.3 * d$x1 * (d$f == "c") +
                 0.3 * (d$h == "v") + rnorm(J, sd = 0.7)[cl] +
                 rnorm(n) * (0.5 + abs(d$x1) + 2 * (cl == J)), 6)
  d
}
designs <- list(balanced = make_data(rep(8, 8), 31),
                unbalanced = make_data(c(2, 2, 3, 3, 4, 6, 10, 15, 25, 40), 32))

models <- list(
  bal_fx = list(design = "balanced", formula = "y ~ factor(f) + x2 + x1 + factor(f):x1",
                weights = FALSE),
  bal_fh = list(design = "balanced", formula = "y ~ factor(f) + factor(h) + factor(f):factor(h)",
                weights = FALSE),
  unbal_fx = list(design = "unbalanced", formula = "y ~ factor(f) + x2 + x1 + factor(f):x1",
                  weights = FALSE),
  unbal_fx_w = list(design = "unbalanced", formula = "y ~ factor(f) + x2 + x1 + factor(f):x1",
                    weights = TRUE),
  unbal_w = list(design = "unbalanced", formula = "y ~ factor(f) + x2 + x1", weights = TRUE)
)

anova_of <- function(a) {
  rownames(a) <- py_name(rownames(a))  # before printing: the widths follow the names
  tab <- as.data.frame(a)
  list(rownames = py_name(rownames(tab)), columns = names(tab),
       values = lapply(tab, function(v) unname(as.numeric(v))),
       heading = unname(attr(a, "heading")), printed = printed(a))
}

cases <- list()
for (name in names(models)) {
  m <- models[[name]]
  d <- designs[[m$design]]
  fit <- if (m$weights) lm(as.formula(m$formula), data = d, weights = w)
         else lm(as.formula(m$formula), data = d)
  G <- length(unique(d$cl))
  V_cl <- vcovCL(fit, cluster = ~ cl)
  V_cr2 <- vcovCR(fit, cluster = d$cl, type = "CR2")
  covs <- list(HC0 = vcovHC(fit, type = "HC0"), HC1 = vcovHC(fit, type = "HC1"),
               HC2 = vcovHC(fit, type = "HC2"), HC3 = vcovHC(fit, type = "HC3"))
  anovas <- list()
  for (type in c(2, 3)) {
    for (hc in names(covs)) {
      a <- if (m$weights) suppressMessages(Anova(fit, type = type, vcov. = covs[[hc]]))
           else suppressMessages(Anova(fit, type = type, white.adjust = tolower(hc)))
      if (!m$weights)  # white.adjust is hccm(), which equals sandwich's vcovHC here
        stopifnot(isTRUE(all.equal(a, suppressMessages(
          Anova(fit, type = type, vcov. = covs[[hc]])), check.attributes = FALSE)))
      anovas[[length(anovas) + 1L]] <- list(type = type, vcov = hc, options = list(),
                                            error_df = "residual", table = anova_of(a))
    }
    a <- suppressMessages(Anova(fit, type = type, vcov. = V_cl))
    anovas[[length(anovas) + 1L]] <- list(type = type, vcov = "cluster",
      options = list(cluster = "cl", df = "residual"), error_df = "residual",
      table = anova_of(a))
    a <- suppressMessages(Anova(fit, type = type, vcov. = V_cl, error.df = G - 1))
    anovas[[length(anovas) + 1L]] <- list(type = type, vcov = "cluster",
      options = list(cluster = "cl"), error_df = "G - 1", table = anova_of(a))
    a <- suppressMessages(Anova(fit, type = type, vcov. = as.matrix(V_cr2), error.df = G - 1))
    anovas[[length(anovas) + 1L]] <- list(type = type, vcov = "cluster",
      options = list(cluster = "cl", type = "CR2"), error_df = "G - 1", table = anova_of(a))
  }

  ct <- coef_test(fit, vcov = V_cr2, test = "Satterthwaite")
  ci95 <- conf_int(fit, vcov = V_cr2, level = 0.95, test = "Satterthwaite")
  ci90 <- conf_int(fit, vcov = V_cr2, level = 0.90, test = "Satterthwaite")
  # HTZ Wald tests: each term's coefficients, and all slopes
  assign <- attr(model.matrix(fit), "assign")
  labels <- attr(terms(fit), "term.labels")
  p <- length(coef(fit))
  constraint_sets <- c(lapply(seq_along(labels), function(k) which(assign == k)),
                       list(which(assign > 0)))
  names(constraint_sets) <- c(py_name(labels), "slopes")
  htz <- lapply(names(constraint_sets), function(nm) {
    idx <- constraint_sets[[nm]]
    wt <- Wald_test(fit, constraints = constrain_zero(idx), vcov = V_cr2, test = "HTZ")
    list(name = nm, columns = idx - 1L, Fstat = wt$Fstat, delta = wt$delta,
         df_num = wt$df_num, df_denom = wt$df_denom, p_val = wt$p_val)
  })
  # a contrast that is not a coordinate: (x1) - (x2) = 0 as a one-row matrix
  C1 <- matrix(0, 1, p); C1[1, names(coef(fit)) == "x1"] <- 1
  C1[1, names(coef(fit)) == "x2"] <- -1
  wt1 <- if (any(C1 != 0)) Wald_test(fit, constraints = C1, vcov = V_cr2, test = "HTZ")
         else list(Fstat = NULL, delta = NULL, df_denom = NULL, p_val = NULL)

  cases[[name]] <- list(
    design = m$design, r_formula = m$formula,
    py_formula = gsub("factor\\(([a-z]+)\\)", "C(\\1)", m$formula),
    weights = if (m$weights) "w" else NULL, n_clusters = G,
    names = py_name(names(coef(fit))), coef = unname(coef(fit)),
    vcov_CR2 = mat(as.matrix(V_cr2)),
    satterthwaite = list(se = ct$SE, t = ct$tstat, df = ct$df_Satt, p_value = ct$p_Satt,
                         ci95 = list(lower = ci95$CI_L, upper = ci95$CI_U),
                         ci90 = list(lower = ci90$CI_L, upper = ci90$CI_U)),
    htz = htz,
    htz_x1_minus_x2 = list(Fstat = wt1$Fstat, delta = wt1$delta, df_denom = wt1$df_denom,
                           p_val = wt1$p_val),
    anova = anovas
  )
}

header <- list(
  r = R.version.string,
  packages = lapply(c(car = "car", sandwich = "sandwich", clubSandwich = "clubSandwich",
                      jsonlite = "jsonlite"),
                    function(p) as.character(packageVersion(p))),
  conventions = paste(
    "vcov matrices are lists of rows in coefficient order; data frames are lists of",
    "columns; anova tables as car::Anova returns them (NA as null), names in patsy's",
    "spelling; htz columns are 0-based coefficient positions")
)
here <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)))
write_json(list(header = header, designs = designs, cases = cases),
           file.path(here, "cluster_r3.json"), digits = NA, auto_unbox = TRUE, pretty = TRUE,
           na = "null", dataframe = "columns", null = "null")
