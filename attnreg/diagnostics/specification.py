"""Normality and functional-form tests of a linear fit: Jarque–Bera and Ramsey's RESET
(``lmtest::resettest``)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import stats

from attnreg.diagnostics.projection import (
    aux_rank,
    df_text,
    extra_ss,
    resid_scaled,
    table_row,
)
from attnreg.exceptions import DataError, OptionError
from attnreg.inference.contract import LinearFitContract

__all__ = ["check_power", "jarque_bera", "reset_test"]


def jarque_bera(fit: LinearFitContract) -> dict[str, Any]:
    """Jarque–Bera test of normality of the (weighted) residuals, n/6 (S² + (K − 3)²/4) on
    2 df, with the moments about their mean (statsmodels' ``jarque_bera``).

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import longley
    >>> from attnreg.diagnostics.specification import jarque_bera
    >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP", data=longley.load_pandas().data)
    >>> jarque_bera(fit)["df"]
    '2'
    """
    _, ew = resid_scaled(fit)
    skew = float(stats.skew(ew))
    kurt = float(stats.kurtosis(ew, fisher=False))
    jb = ew.size / 6.0 * (skew**2 + 0.25 * (kurt - 3.0) ** 2)
    return table_row("Jarque-Bera", jb, "2", stats.chi2.sf(jb, 2),
                f"skewness {skew:.4g}, kurtosis {kurt:.4g}")


def check_power(power: Any) -> tuple[int, ...]:
    """RESET's powers of the fitted values, checked (integers of at least 2)."""
    try:
        out = tuple(int(p) for p in power)
        ok = all(int(p) == p and not isinstance(p, bool) for p in power)
    except (TypeError, ValueError):
        ok, out = False, ()
    if not ok or not out or len(set(out)) != len(out) or min(out) < 2:
        raise OptionError("reset_power must be distinct integers of at least 2 (powers of the "
                          f"fitted values), however: reset_power={power!r}")
    return out


def reset_test(fit: LinearFitContract, power: Any = (2, 3)) -> dict[str, Any]:
    """Ramsey's RESET: the F test of adding powers of the fitted values to the regression
    (``lmtest::resettest(type = "fitted")``; weighted regressions for a weighted fit).

    The fitted values are centred (with an intercept, at the weighted mean response) and
    scaled before the powers are taken, as lmtest does with ``scale(y)``.

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import longley
    >>> from attnreg.diagnostics.specification import reset_test
    >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP", data=longley.load_pandas().data)
    >>> reset_test(fit)["df"]
    '2, 11'
    """
    power = check_power(power)
    sp = fit.spectrum
    _, ew = resid_scaled(fit)
    n, k, q = fit.nobs, aux_rank(sp), len(power)
    name = "RESET"
    if not fit.rule.least_squares:
        return table_row(name, math.nan, "", math.nan,
                    f"OLS only: the residuals of {fit.method} are not orthogonal to X")
    df2 = n - k - q
    if df2 < 1:
        raise DataError(f"RESET with powers {power} needs more than {k + q} rows, however the "
                        f"fit has {n}")
    yhat = sp.y - np.ldexp(fit._resid_fit, -sp.y_exponent)  # fitted values / y_scale
    centre = sp.y_center if sp.intercept is not None else 0.0
    z = yhat - centre
    size = float(np.sqrt(np.mean(z * z))) or 1.0
    z /= size
    Z = np.column_stack([z**p for p in power]) * np.asarray(sp.sqrt_w)[:, None]
    rss = float(ew @ ew)
    ss, _ = extra_ss(sp, ew, Z)
    stat = (df2 / q) * ss / (rss - ss)
    return table_row(name, stat, df_text(q, df2), stats.f.sf(stat, q, df2),
                "powers " + ", ".join(map(str, power)) + " of the fitted values")
