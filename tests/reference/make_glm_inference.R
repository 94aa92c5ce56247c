# Reference values for attnreg's GLM inference (tests/glm/test_glm_inference.py).
# Run from the repository root:  Rscript tests/reference/make_glm_inference.R
# Writes tests/reference/glm_inference_r.json: the data, then R's analysis of deviance
# (anova(glm, test=) sequential tables and anova(glm0, glm1, test=) comparisons), numbers
# and print(anova(...)) lines; MASS's confint(glm) (profile likelihood) at levels 0.95 and
# 0.9, and confint.default (Wald). Fits use glm.control(epsilon = 1e-14, maxit = 100) so that
# they stop at the optimum (attnreg's default control).
suppressPackageStartupMessages({library(jsonlite); library(MASS)})
options(useFancyQuotes = FALSE)

set.seed(2727)
n <- 150
d <- data.frame(x = round(runif(n, 0, 2), 4), g = sample(c("a", "b", "c"), n, TRUE),
                z = round(rnorm(n), 4))
d$yb <- rbinom(n, 1, plogis(-0.5 + 0.8 * d$x + c(a = 0, b = 0.4, c = -0.3)[d$g]))
d$pyears <- round(runif(n, 50, 500), 2)
d$logpy <- log(d$pyears)
d$deaths <- rpois(n, d$pyears * exp(-4 + 0.6 * d$x + 0.3 * (d$g == "b")))
d$ygam <- round(rgamma(n, shape = 3, scale = exp(0.3 + 0.5 * d$x + 0.1 * d$z) / 3), 6)

ctl <- glm.control(epsilon = 1e-14, maxit = 100)
fitr <- function(f, family, offset = NULL) {
  if (is.null(offset)) glm(as.formula(f), family = family, data = d, control = ctl)
  else glm(as.formula(f), family = family, data = d, control = ctl, offset = d[[offset]])
}
tab <- function(a) {
  out <- lapply(seq_len(ncol(a)), function(j) unname(a[[j]]))
  names(out) <- names(a)
  list(rows = rownames(a), columns = as.list(names(a)), values = out,
       printed = capture.output(print(a)))
}
specs <- list(
  list(name = "logit", family = "binomial", link = "logit", offset = NULL,
       small = "yb ~ x", big = "yb ~ g + x + z", fam = binomial()),
  list(name = "poisson_offset", family = "poisson", link = "log", offset = "logpy",
       small = "deaths ~ x", big = "deaths ~ g + x + z", fam = poisson()),
  list(name = "gamma_log", family = "Gamma", link = "log", offset = NULL,
       small = "ygam ~ g", big = "ygam ~ g + x + z", fam = Gamma(link = "log")))
cases <- list()
for (s in specs) {
  f0 <- fitr(s$small, s$fam, s$offset); f1 <- fitr(s$big, s$fam, s$offset)
  seqs <- list(); nest <- list()
  for (test in c("none", "Chisq", "LRT", "F")) {
    tt <- if (test == "none") NULL else test
    seqs[[test]] <- suppressWarnings(tab(anova(f1, test = tt)))
    nest[[test]] <- suppressWarnings(tab(anova(f0, f1, test = tt)))
  }
  ci <- function(m) list(rows = rownames(m), columns = colnames(m), lower = unname(m[, 1]),
                         upper = unname(m[, 2]))
  conf <- list(profile = suppressMessages(ci(confint(f1))),
               profile90 = suppressMessages(ci(confint(f1, level = 0.9))),
               wald = ci(confint.default(f1)))
  cases[[s$name]] <- list(family = s$family, link = s$link, offset = s$offset,
                          small = s$small, big = s$big, sequential = seqs, nested = nest,
                          confint = conf)
}
out <- list(header = list(R = R.version.string, jsonlite = as.character(packageVersion("jsonlite")),
                          MASS = as.character(packageVersion("MASS")),
                          script = "tests/reference/make_glm_inference.R"),
            data = d, cases = cases)
writeLines(toJSON(out, digits = NA, auto_unbox = TRUE, na = "null", null = "null", pretty = FALSE),
           "tests/reference/glm_inference_r.json")
