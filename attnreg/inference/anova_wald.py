"""Type II and III analysis of variance tables under a robust covariance: Wald tests, as
``car::Anova(fit, type=, vcov.=)`` (or ``white.adjust=``).

Under a covariance other than the classical one there are no sums of squares to compare:
each row is the Wald F test of a set of linear restrictions under the covariance in use,
computed by :meth:`~attnreg.inference.hypotheses.Hypotheses.wald_test`, on
:attr:`df_inference` denominator degrees of freedom (car's ``error.df``; for a cluster
covariance G − 1 unless ``df="residual"``, where car's default is the residual df).

- Type III: each term's coefficients are zero (the intercept included), exactly
  ``fit.wald_test(term=...)``.
- Type II: a term without higher-order relatives (terms whose factors contain its own) is
  tested the same way; a term with relatives is tested in the space of its and its
  relatives' coefficients, on the directions orthogonal to the relatives' in the inner
  product of the covariance V (car's ``ConjComp``): the restrictions L b = 0 with the rows of
  L spanning {l in span(e_term, e_rel) : l' V e_rel = 0}. Under the classical covariance this
  is the type II sum of squares' F.

Under ``df="satterthwaite"`` (CR2) each row is clubSandwich's HTZ test, ``Wald_test(test =
"HTZ")``, with its own denominator df (a ``Den.Df`` column instead of a residual row).

The sequential (type I) table has no counterpart under a robust covariance (R's
``anova(lm)`` ignores the covariance and ``car::Anova`` has no type I: ``type`` must be
II or III): it is refused, as are comparisons of nested fits, whose F uses residual sums of
squares. R's robust comparison of nested fits, ``lmtest::waldtest(small, big, vcov =)``, is
the Wald test of the bigger fit's extra terms: ``big.wald_test(term=[...])``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from attnreg._typing import FloatArray
from attnreg.inference.anova_rss import formula_frame
from attnreg.inference.vcov.satterthwaite import is_satterthwaite

if TYPE_CHECKING:
    from attnreg.linear.results import LinearResults

__all__ = ["wald_anova"]

#: a direction of V e_rel below this (relative to the largest) counts as zero (as car's qr)
_RANK_TOL = 1e-9


def _relatives(fit: LinearResults, name: str) -> list[str]:
    """The terms whose factors strictly contain those of ``name`` (car's ``relatives``)."""
    factors = {t.name(): frozenset(t.factors) for t in fit._term_info.terms}
    return [n for n, f in factors.items() if n != name and factors[name] < f]


def _conjugate_restrictions(fit: LinearResults, term_cols: list[int],
                            rel_cols: list[int]) -> FloatArray:
    """Rows L, shape (q, n_coef), spanning the directions in span(e_term, e_rel) that are
    V-orthogonal to every e_rel (car's ``ConjComp(t(H1), t(H2), V)``).

    With V = diag(2^E) V_z diag(2^E) and A = V_z[rows2, rel], the directions are
    diag(2^-E) y for y in the null space of A' (exact rescaling; the rows of L may be
    rescaled freely, the Wald statistic does not change).
    """
    Vz, E = fit._vcov_z
    rows2 = np.asarray(rel_cols + term_cols, dtype=np.int64)
    A = np.asarray(Vz)[np.ix_(rows2, np.asarray(rel_cols, dtype=np.int64))]
    U, s, _ = np.linalg.svd(A, full_matrices=True)
    rank = int(np.sum(s > _RANK_TOL * s[0])) if s.size and s[0] > 0 else 0
    Y = U[:, rank:]  # (len(rows2), q): an orthonormal basis of the null space of A'
    L = np.zeros((Y.shape[1], len(fit.names)))
    L[:, rows2] = np.ldexp(Y.T, -np.asarray(E, dtype=np.int64)[rows2][None, :])
    L[np.abs(L) < np.finfo(float).eps * np.abs(L).max(axis=1, keepdims=True)] = 0.0
    return L


def _term_test(fit: LinearResults, type: int, name: str,
               terms: list[tuple[str, list[int]]]) -> Any:
    """The Wald test of one row of the table."""
    relatives = _relatives(fit, name) if type == 2 else []
    if not relatives:
        return fit.wald_test(term=name)
    cols = dict(terms)
    rel_cols = sorted({j for r in relatives for j in cols[r]})
    return fit.wald_test(_conjugate_restrictions(fit, cols[name], rel_cols))


def wald_anova(fit: LinearResults, type: int,
               terms: list[tuple[str, list[int]]]) -> tuple[pd.DataFrame, tuple[str, ...], str]:
    """``car::Anova(fit, type = 2 | 3, vcov. = V)`` with V the fit's covariance in use.

    Parameters
    ----------
    fit : LinearResults
        A full-rank OLS/WLS fit under a non-classical covariance.
    type : {2, 3}
    terms : list of (str, list of int)
        The formula's terms with their design columns, in design order.

    Returns
    -------
    table : DataFrame
        Columns ``Df``, ``F``, ``Pr(>F)`` and a ``Residuals`` row holding the denominator
        degrees of freedom, as car prints it; the heading names the covariance. Under
        ``df="satterthwaite"`` (CR2) each row is clubSandwich's HTZ test on its own
        denominator df: columns ``Df``, ``Den.Df``, ``F``, ``Pr(>F)``, no residual row.
    heading : tuple of str
        The lines above the table; the last names the covariance.
    title : str
        ``"type II"`` or ``"type III"``.
    """
    labels: list[str] = []
    rows: list[tuple[float, float, float, float]] = []
    for name, _ in terms:
        if name == "Intercept" and type == 2:
            continue
        test = _term_test(fit, type, name, terms)
        labels.append("(Intercept)" if name == "Intercept" else name)
        rows.append((float(test.df[0]), float(test.df[1]), float(test.statistic),
                     float(test.p_value)))
    df, df2, F, P = (list(col) for col in zip(*rows, strict=True)) if rows else ([], [], [], [])
    roman = "II" if type == 2 else "III"
    heading = [f"Analysis of Deviance Table (Type {roman} tests)\n",
               f"Response: {formula_frame(fit).response_name}"]
    if is_satterthwaite(fit.vcov_spec):  # HTZ: a denominator df per row, no residual row
        table = pd.DataFrame({"Df": df, "Den.Df": df2, "F": F, "Pr(>F)": P}, index=labels)
        heading.append(f"HTZ Wald F tests (clubSandwich); covariance: {fit.vcov_spec.label()}")
    else:
        table = pd.DataFrame({"Df": [*df, df2[-1] if df2 else math.nan],
                              "F": [*F, math.nan], "Pr(>F)": [*P, math.nan]},
                             index=[*labels, "Residuals"])
        heading.append(f"Wald F tests; covariance: {fit.vcov_spec.label()}")
    return table, tuple(heading), f"type {roman}"


def check_classical(fits: list[Any], what: str) -> None:
    """OptionError unless every fit uses the classical covariance (``what`` names the table)."""
    from attnreg.exceptions import OptionError

    for i, fit in enumerate(fits):
        spec = fit.vcov_spec
        if not spec.estimator.classical:
            which = "the fit" if len(fits) == 1 else f"fit {i + 1}"
            raise OptionError(
                f"{what} compares residual sums of squares under iid errors, which the "
                f"{spec.label()} covariance of {which} does not give (R's anova(lm) ignores "
                "a robust covariance and car::Anova has no type I): use type=2 or 3 (Wald "
                "tests under the covariance in use, as car::Anova(vcov.=)), fit.wald_test("
                "term=[...]) for terms (lmtest::waldtest of nested fits), or "
                ".with_vcov('classical') for the classical table")

