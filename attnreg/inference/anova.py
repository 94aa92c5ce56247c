"""Analysis of variance: R's sequential ``anova(lm)`` table, comparisons of nested fits
(``anova(m1, m2, ...)``) and ``car::Anova`` type II and III tables.

Sums of squares come from Householder QR factorisations of the weighted design with the
response appended (the effects Q'ỹ; no inverse and no normal equations): the sequential
table from one QR of the centred estimable columns in the design's order, type II and III
from the residual sums of squares of the sub-designs each test compares.

The rows follow the design's term order, which is patsy's: it puts terms of factors alone
first and then groups terms by their numeric variables (``y ~ x1 + C(g)`` has ``C(g)``
first), where R orders terms by degree. Sequential sums of squares depend on that order;
write the formula in the order wanted (``y ~ C(g) + x1 + x2 + x1:x2`` is the same order
for both). Analysis of variance is an OLS / WLS notion: ridge and PCR fits are refused.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from attnreg._typing import FloatArray
from attnreg.exceptions import OptionError
from attnreg.inference.anova_rss import check_summaries, formula_frame, nested_table
from attnreg.inference.anova_table import AnovaTable
from attnreg.inference.anova_terms import marginal, sequential
from attnreg.inference.anova_wald import check_classical
from attnreg.inference.contract import LinearFitContract

if TYPE_CHECKING:
    from attnreg.linear.results import LinearResults

__all__ = ["ANOVA_TESTS", "anova"]

#: the ``test`` choices of nested comparisons (R's ``anova(m1, m2, test=)``)
ANOVA_TESTS = ("F", "Chisq")
_EPS = float(np.finfo(np.float64).eps)


# ------------------------------------------------------------------------ entry point

def anova(*fits: Any, test: str | None = None, type: int = 1) -> AnovaTable:
    """Analysis of variance of one fit, or a comparison of nested fits, as R's ``anova``.

    Parameters
    ----------
    *fits : LinearResults or ChunkedResults
        One OLS/WLS fit: its table (``type`` 1, 2 or 3; a chunked fit's from its
        accumulated R factor). Several: fits of the same response on the same rows (and
        weights), each nested in the next or containing it, compared in the order given as
        R's ``anova(m1, m2, m3)``; with a chunked or dask fit among them, by their
        residual sums of squares, the rows checked by their number and total weight and
        the nesting by coefficient names (:mod:`attnreg.inference.anova_rss`).
    test : {"F", "Chisq"}, optional
        Default "F". GLMs (fits with an ``analysis_of_deviance`` method) go there: R's
        ``anova(glm, test=)``, test None (no test), "Chisq", "LRT" or "F".
        Nested comparisons: the F test (each sum of squares over its df, divided by the
        residual variance of the biggest model, on that model's residual df) or the χ²
        test of the same sums of squares over that variance (R's column ``Pr(>Chi)``).
    type : {1, 2, 3}
        One fit: 1 is R's sequential ``anova(lm)`` (each term after the terms before it);
        2 and 3 are ``car::Anova(fit, type=)``: type II tests each term after all terms
        that do not contain it, type III each term after all others (its table includes
        the intercept, and it depends on the coding of factors: with patsy's default
        treatment contrasts the main effects in a model with interactions are tested at
        the reference level of the other factors, as car warns).

    Returns
    -------
    AnovaTable
        ``table`` (a DataFrame with R's column names), printed digit for digit as R's
        ``print(anova(...))``.

    Raises
    ------
    OptionError
        A fit that is not OLS/WLS (ridge and PCR have no sums of squares in this sense);
        fits on different rows, responses or weights; fits that are not nested; an unknown
        ``test`` or ``type``; a type II/III table of a rank-deficient fit; a sequential
        table or a nested comparison of fits under a non-classical covariance.

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import longley
    >>> df = longley.load_pandas().data
    >>> small = ar.attnreg("TOTEMP ~ GNP", data=df)
    >>> big = ar.attnreg("TOTEMP ~ GNP + UNEMP + ARMED", data=df)
    >>> print(ar.anova(small, big))
    Analysis of Variance Table
    <BLANKLINE>
    Model 1: TOTEMP ~ GNP
    Model 2: TOTEMP ~ GNP + UNEMP + ARMED
      Res.Df     RSS Df Sum of Sq      F   Pr(>F)   
    1     14 6036140                                
    2     12 2756712  2   3279428 7.1377 0.009074 **
    ---
    Signif. codes:  0 '***' 0.001 '**' 0.01 '*' 0.05 '.' 0.1 ' ' 1
    <BLANKLINE>
    >>> print(big.anova())
    Analysis of Variance Table
    <BLANKLINE>
    Response: TOTEMP
              Df    Sum Sq   Mean Sq  F value    Pr(>F)    
    GNP        1 178972686 178972686 779.0703 2.767e-12 ***
    UNEMP      1   2457075   2457075  10.6957  0.006698 ** 
    ARMED      1    822353    822353   3.5797  0.082861 .  
    Residuals 12   2756712    229726                       
    ---
    Signif. codes:  0 '***' 0.001 '**' 0.01 '*' 0.05 '.' 0.1 ' ' 1
    <BLANKLINE>
    >>> big.anova().table.loc["UNEMP", ["Df", "F value"]].tolist()
    [1.0, 10.6956786...]
    """
    if not fits:
        raise OptionError("anova needs at least one fit")
    if all(callable(getattr(f, "analysis_of_deviance", None)) for f in fits):
        if type != 1:
            raise OptionError("type 2 and 3 tables are not available for GLMs (analysis of "
                              f"deviance adds terms sequentially), however: {type=}")
        return fits[0].analysis_of_deviance(*fits[1:], test=test)
    test = "F" if test is None else test
    for i, obj in enumerate(fits):
        if not isinstance(obj, LinearFitContract):  # a LinearResults (no import cycle)
            raise OptionError(f"anova needs linear fits (attnreg(..., method='ols')), however "
                              f"fit {i + 1} is a {type_name(obj)}")
        fit: Any = obj
        if not fit.rule.least_squares:
            raise OptionError(f"anova is defined for OLS and WLS fits, however fit {i + 1} has "
                              f"method {fit.method!r} (method {fit.method!r} has no exact "
                              f"hat values: it is penalised by {fit.rule.tuning}); sequential "
                              "sums of squares "
                              "are not defined for a penalised or truncated fit (use "
                              "wald_test, conditional on the chosen lambda or k)")
    if test not in ANOVA_TESTS:
        raise OptionError(f"test must be one of {ANOVA_TESTS}, however: {test=}")
    if type not in (1, 2, 3) or isinstance(type, bool):
        raise OptionError(f"type must be 1 (sequential), 2 or 3, however: {type=}")
    if len(fits) == 1:
        if test != "F":
            raise OptionError("test applies to comparisons of nested fits; the table of one "
                              f"fit has F tests, however: {test=}")
        if type == 1:
            check_classical(list(fits), "the sequential table (type=1)")
            return sequential(fits[0])
        return marginal(fits[0], type)
    if type != 1:
        raise OptionError("type applies to the table of one fit; nested fits are compared "
                          f"by their residual sums of squares, however: {type=}")
    check_classical(list(fits), "a comparison of nested fits")
    if not all(getattr(f, "keeps_rows", True) for f in fits):
        check_summaries(fits)  # fits that keep no rows (chunked): by their statistics
        return _rss_table(list(fits), test)
    return _nested(list(fits), test)


def type_name(obj: Any) -> str:
    """The class name of ``obj``, for error messages."""
    return type(obj).__name__




# ------------------------------------------------------------------------ nested fits

def _nested(fits: list[LinearResults], test: str) -> AnovaTable:
    """R's ``anova.lmlist``: residual df and RSS of each fit, and the tests between them."""
    first = fits[0]
    for i, fit in enumerate(fits[1:], start=2):
        _check_comparable(first, fit, i)
    for i in range(1, len(fits)):
        a, b = fits[i - 1], fits[i]
        small, big = (a, b) if a.df_resid >= b.df_resid else (b, a)
        _check_nested(small, big, i if small is a else i + 1, i + 1 if small is a else i)
    return _rss_table(fits, test)


def _rss_table(fits: list[Any], test: str) -> AnovaTable:
    """The nested comparison from each fit's residual df and RSS (:mod:`anova_rss`)."""
    resdf = np.array([float(f.df_resid) for f in fits])
    rss = np.array([float(f.rss) for f in fits])
    formulas = [formula_frame(f).formula for f in fits]
    return AnovaTable(*nested_table(resdf, rss, formulas, test), "nested")


def _check_comparable(first: LinearResults, fit: LinearResults, i: int) -> None:
    d0, d = first.design, fit.design
    if d.response_name != d0.response_name:
        raise OptionError(f"the fits have different responses: fit 1 models "
                          f"{d0.response_name!r}, fit {i} models {d.response_name!r}")
    if d.n_obs != d0.n_obs or not d.row_labels.equals(d0.row_labels):
        raise OptionError(f"the fits are not fitted on the same rows: fit 1 has {d0.n_obs} "
                          f"rows, fit {i} has {d.n_obs}" + (
                              "" if d.n_obs != d0.n_obs else " with other row labels")
                          + " (missing values in a variable only one formula uses drop "
                          "rows: refit both on the same complete rows)")
    if not np.array_equal(d.y, d0.y):
        raise OptionError(f"the fits have different response values: fit 1 and fit {i} "
                          f"model {d.response_name!r} on different data")
    w0 = np.ones(d0.n_obs) if d0.weights is None else d0.weights
    w = np.ones(d.n_obs) if d.weights is None else d.weights
    if not np.array_equal(w, w0):
        raise OptionError(f"the fits have different prior weights: fit 1 and fit {i} must "
                          "use the same weights to be compared")


def _check_nested(small: LinearResults, big: LinearResults, i_small: int, i_big: int) -> None:
    """The smaller fit's columns lie in the bigger one's column space (weighted, centred
    when the bigger fit has an intercept), to the bigger fit's aliasing tolerance."""
    sp = big.spectrum
    centred = sp.intercept is not None
    w = None if not sp.weighted else big.design.weights

    def prepared(fit: LinearResults) -> tuple[FloatArray, list[str]]:
        cols = _estimable(fit)
        X = fit.design.X[:, cols]
        if centred:
            ww = np.ones(X.shape[0]) if w is None else w
            X = X - (ww @ X) / ww.sum()
        if w is not None:
            X = X * np.sqrt(w)[:, None]
        norms = np.linalg.norm(X, axis=0)
        keep = norms > 0  # (a constant column, centred away: in the span of the intercept)
        return np.asarray(X[:, keep] / norms[keep]), [fit.names[j] for j, k in
                                                       zip(cols, keep, strict=True) if k]

    Zb, _ = prepared(big)
    Zs, names_s = prepared(small)
    if not Zs.shape[1]:
        return
    if Zb.shape[1]:
        Q, _ = np.linalg.qr(Zb)
        resid = Zs - Q @ (Q.T @ Zs)
    else:
        resid = Zs
    kappa = float(sp.s[0] / sp.s[-1]) if sp.rank else 1.0
    tol = max(sp.tol, 100.0 * _EPS * kappa)
    outside = np.linalg.norm(resid, axis=0) > tol
    if outside.any():
        bad = [n for n, o in zip(names_s, outside, strict=True) if o]
        raise OptionError(f"the fits are not nested: column(s) {', '.join(bad)} of fit "
                          f"{i_small} ({small.design.formula}) are not in the column space of "
                          f"fit {i_big} ({big.design.formula})")


def _estimable(fit: LinearResults) -> list[int]:
    sp = fit.spectrum
    pos = [int(j) for j in sp.kept] + ([] if sp.intercept is None else [int(sp.intercept)])
    return sorted(pos)
