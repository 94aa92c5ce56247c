# R's lm() on the NIST StRD linear datasets: coefficients and standard errors in full precision.
#
# Regenerate (from the repository root, with r-base-core and r-cran-jsonlite installed):
#   Rscript tests/reference/make_nist.R ../shared/data/nist tests/reference/nist_r.json
# The datasets are read from NIST's files as the package's tests read them (the JSON beside
# each .dat file); the formulas are the same: polynomial terms as I(x^k), "- 1" without an
# intercept. lm() drops a column it finds aliased (NA), as on Filip.
suppressPackageStartupMessages(library(jsonlite))
args <- commandArgs(trailingOnly = TRUE)
nist <- if (length(args) >= 1) args[1] else "../shared/data/nist"
out <- if (length(args) >= 2) args[2] else "tests/reference/nist_r.json"
names <- c("Filip", "Longley", "NoInt1", "NoInt2", "Norris", "Pontius", "Wampler1",
           "Wampler2", "Wampler3", "Wampler4", "Wampler5")
# numbers as text with 17 significant digits (toJSON keeps at most 15), NA as null
num <- function(v) ifelse(is.na(v), NA_character_, sprintf("%.17g", v))
result <- list(R_version = R.version.string)
for (name in names) {
  spec <- fromJSON(file.path(nist, paste0(name, ".json")))
  frame <- as.data.frame(spec$data)
  model <- spec$model
  if (name == "Longley") {
    rhs <- paste(setdiff(names(frame), "y"), collapse = " + ")
  } else {
    degree <- if (is.null(model$degree)) 1 else model$degree
    rhs <- paste(c("x", if (degree >= 2) sprintf("I(x^%d)", 2:degree)), collapse = " + ")
  }
  intercept <- is.null(model$intercept) || isTRUE(model$intercept)
  f <- as.formula(paste("y ~", rhs, if (intercept) "" else "- 1"))
  fit <- lm(f, data = frame)
  s <- summary(fit)
  se <- rep(NA_real_, length(coef(fit)))
  se[!is.na(coef(fit))] <- s$coefficients[, "Std. Error"]
  result[[name]] <- list(formula = paste(deparse(f), collapse = ""),
                         coef = num(unname(coef(fit))), std_err = num(se),
                         sigma = num(s$sigma), r_squared = num(s$r.squared))
}
writeLines(toJSON(result, auto_unbox = TRUE, na = "null", pretty = TRUE), out)
