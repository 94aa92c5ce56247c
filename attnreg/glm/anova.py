"""Analysis of deviance of generalised linear models: R's ``anova(glm, test=)`` (terms added
sequentially) and ``anova(glm1, glm2, ..., test=)`` (nested fits), reached through
:func:`attnreg.anova` by any fit with an ``analysis_of_deviance`` method.

Sub-models of the sequential table are refitted by IRLS with the fit's family, link,
weights, offset and control (the intercept and the first i terms' columns, as R's
``anova.glm``); the ``NULL`` row is the fit's null deviance. Tests follow R's
``stat.anova``: ``"Chisq"`` / ``"LRT"`` refer the deviance (over the dispersion of the
biggest model) to χ², ``"F"`` the deviance per df over that dispersion to F on the biggest
model's residual df (∞ when the dispersion is fixed at 1).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy import stats

from attnreg._warn import warn_user
from attnreg.exceptions import InferenceWarning, OptionError
from attnreg.glm.irls import irls
from attnreg.inference.anova_table import AnovaTable

if TYPE_CHECKING:
    from attnreg.glm.results import GlmResults

__all__ = ["DEVIANCE_TESTS", "deviance_anova"]

#: the ``test`` choices (None: no test column, as R's default)
DEVIANCE_TESTS = (None, "Chisq", "LRT", "F")


def deviance_anova(*fits: GlmResults, test: str | None = None) -> AnovaTable:
    """The analysis of deviance of one GLM (sequential) or of nested GLMs, as R's ``anova``.

    Parameters
    ----------
    *fits : GlmResults
        One fit: its terms added in the design's order. Several: fits of the same response on
        the same rows, compared in the order given.
    test : {None, "Chisq", "LRT", "F"}
        The test column (``Pr(>Chi)`` or ``F`` and ``Pr(>F)``); None: none, as R's default.

    Returns
    -------
    AnovaTable
        Columns ``Df``, ``Deviance``, ``Resid. Df``, ``Resid. Dev`` (sequential) or
        ``Resid. Df``, ``Resid. Dev``, ``Df``, ``Deviance`` (nested), then the test's.

    Raises
    ------
    OptionError
        An unknown ``test``; fits of different families, responses or rows.
    """
    if test not in DEVIANCE_TESTS:
        raise OptionError(f"test must be one of {DEVIANCE_TESTS} for GLMs, however: {test=}")
    if test == "F" and fits[0].family.fixed_dispersion:
        warn_user(f"using F test with a '{fits[0].family_name}' family is inappropriate",
                  InferenceWarning)
    if len(fits) == 1:
        return _sequential(fits[0], test)
    _check_comparable(fits)
    return _nested(list(fits), test)


def _check_comparable(fits: tuple[GlmResults, ...]) -> None:
    first = fits[0]
    for i, f in enumerate(fits[1:], start=2):
        if (f.family_name, f.link_name) != (first.family_name, first.link_name):
            raise OptionError(f"fit {i} is {f.family_name}/{f.link_name} but fit 1 is "
                              f"{first.family_name}/{first.link_name}: compare fits of one "
                              "family and link")
        if (f.design.response_name != first.design.response_name or f.nobs != first.nobs
                or not np.array_equal(f.design.y, first.design.y)):
            raise OptionError(f"fit {i} ({f.design.formula}) is not fitted to the same response "
                              f"and rows as fit 1 ({first.design.formula}); fit both to the same "
                              "data (drop missing values of every variable first)")


def _add_test(table: pd.DataFrame, test: str | None, dev_col: str, scale: float,
              df_scale: float) -> None:
    """R's ``stat.anova`` for ``"Chisq"``/``"LRT"`` and ``"F"`` (in place)."""
    if test is None:
        return
    dfs = table["Df"].to_numpy(dtype=float)
    dev = table[dev_col].to_numpy(dtype=float)
    bad = np.isnan(dfs) | (dfs == 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        if test == "F":
            fval = dev / dfs / scale
            fval[bad | ~(fval >= 0)] = math.nan
            table["F"] = fval
            table["Pr(>F)"] = (stats.chi2.sf(fval * np.abs(dfs), np.abs(dfs))  # F(d, ∞)
                               if math.isinf(df_scale) else stats.f.sf(fval, np.abs(dfs), df_scale))
        else:
            vals = dev / scale * np.sign(dfs)
            vals[bad | ~(vals >= 0)] = math.nan
            table["Pr(>Chi)"] = stats.chi2.sf(vals, np.abs(dfs))


def _scale(fit: GlmResults) -> tuple[float, float]:
    """Dispersion of the biggest model and its df (∞ when fixed at 1)."""
    disp = fit.dispersion
    return disp, (math.inf if disp == 1 else float(fit.df_resid))


def _sub_deviance(fit: GlmResults, cols: list[int]) -> tuple[float, int]:
    """Deviance and rank of the refit on the estimable columns among ``cols``."""
    kept = [j for j in cols if j in set(fit.kept.tolist())]  # R's glm.fit drops aliased too
    d = fit.design
    sub = irls(d.X[:, kept], d.y, fit.prior_weights, fit.offset, fit.family, fit.link,
               exact_r=fit.control == "R")
    return float(sub.deviance), len(kept)


def _sequential(fit: GlmResults, test: str | None) -> AnovaTable:
    d = fit.design
    slices = list(d.design_info.term_name_slices.items())
    n_coef = d.n_coef
    names, dfs, devs = ["NULL"], [math.nan], [math.nan]
    resdf, resdev = [float(fit.df_null)], [fit.null_deviance]
    prev_rank = int(d.intercept)
    terms = [(nm, list(range(*sl.indices(n_coef)))) for nm, sl in slices if nm != "Intercept"]
    cols = [j for nm, sl in slices if nm == "Intercept" for j in range(*sl.indices(n_coef))]
    for i, (name, term_cols) in enumerate(terms):
        cols = cols + term_cols
        if i == len(terms) - 1:
            dev, rank = fit.deviance, fit.rank
        else:
            dev, rank = _sub_deviance(fit, cols)
        names.append(name)
        dfs.append(float(rank - prev_rank))
        devs.append(resdev[-1] - dev)
        resdf.append(float(fit.nobs - rank))
        resdev.append(dev)
        prev_rank = rank
    table = pd.DataFrame({"Df": dfs, "Deviance": devs, "Resid. Df": resdf,
                          "Resid. Dev": resdev}, index=names)
    _add_test(table, test, "Deviance", *_scale(fit))
    title = (f"Analysis of Deviance Table\n\nModel: {fit.family_name}, link: {fit.link_name}"
             f"\n\nResponse: {d.response_name}\n\nTerms added sequentially (first to last)\n\n")
    return AnovaTable(table, (title,), "sequential")


def _nested(fits: list[GlmResults], test: str | None) -> AnovaTable:
    resdf = np.array([float(f.df_resid) for f in fits])
    resdev = np.array([f.deviance for f in fits])
    table = pd.DataFrame({"Resid. Df": resdf, "Resid. Dev": resdev,
                          "Df": np.r_[math.nan, -np.diff(resdf)],
                          "Deviance": np.r_[math.nan, -np.diff(resdev)]},
                         index=[str(i + 1) for i in range(len(fits))])
    big = fits[int(np.argmin(resdf))]
    _add_test(table, test, "Deviance", *_scale(big))
    width = len(str(len(fits)))
    top = "\n".join(f"Model {str(i + 1).rjust(width)}: {f.design.formula}"
                    for i, f in enumerate(fits))
    return AnovaTable(table, ("Analysis of Deviance Table\n", top), "nested")
