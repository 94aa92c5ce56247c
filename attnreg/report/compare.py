"""Side-by-side tables of several fits (coefficients with standard errors, fit statistics)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
from tabulate import tabulate

from attnreg.report.rformat import _stars, fmt_g

__all__ = ["Comparison", "compare"]


@dataclass(frozen=True)
class Comparison:
    """Side-by-side table of several fits (coefficients with standard errors, fit statistics).

    Made by :func:`compare`; ``table`` is the DataFrame behind the text.

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import longley
    >>> df = longley.load_pandas().data
    >>> c = ar.compare([ar.attnreg("TOTEMP ~ GNP", df), ar.attnreg("TOTEMP ~ GNP + POP", df)])
    >>> c.table.loc["N"].tolist()
    ['16', '16']
    >>> print(str(c).splitlines()[0].split())
    ['term', '(1)', 'ols', '(2)', 'ols']
    """

    table: pd.DataFrame

    def __str__(self) -> str:
        return tabulate(self.table.reset_index(), headers="keys", tablefmt="simple",
                        showindex=False, stralign="right")

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        return str(tabulate(self.table.reset_index(), headers="keys", tablefmt="html",
                            showindex=False))

    def to_latex(self) -> str:
        """The table as a LaTeX tabular."""
        return str(tabulate(self.table.reset_index(), headers="keys", tablefmt="latex_booktabs",
                            showindex=False))


def compare(fits: Sequence[Any], names: Sequence[str] | None = None) -> Comparison:
    """Side-by-side table of fits: estimates with (standard errors) and fit statistics.

    Parameters
    ----------
    fits : sequence of results
    names : sequence of str, optional
        Column titles (default: each fit's method, numbered when repeated).

    Returns
    -------
    Comparison
        ``str()`` is a plain-text table; ``.table`` the DataFrame behind it (one column per
        fit; a row per coefficient, its standard error below it, then N, R², adjusted R²,
        σ, AIC, effective df and λ or k; a cell is blank where the fit has no such value,
        e.g. the coefficients and AIC of a softmax fit); also ``_repr_html_()`` and
        ``to_latex()``.

    See Also
    --------
    attnreg.etable : the publication table (chosen covariances side by side, keep/drop/rename,
        stars, a registry of statistics, Markdown, booktabs LaTeX and HTML).

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import longley
    >>> df = longley.load_pandas().data
    >>> f = "TOTEMP ~ GNP + UNEMP + ARMED + POP + YEAR"
    >>> fits = [ar.attnreg(f, df), ar.attnreg(f, df, method="ridge", lam=0.1)]
    >>> table = ar.compare(fits, names=["OLS", "ridge"]).table
    >>> list(table.columns)
    ['OLS', 'ridge']
    >>> table.loc["R-squared"].tolist()
    ['0.9955', '0.9904']
    """
    from attnreg.exceptions import OptionError

    if not fits:
        raise OptionError("compare() needs at least one fit")
    for i, fit in enumerate(fits):
        if not all(hasattr(fit, a) for a in ("method", "names", "nobs", "summary")):
            raise OptionError(f"compare() takes fitted models (results of attnreg()), however "
                              f"fits[{i}] is {type(fit).__name__}")
    if names is None:
        names = [f"({i + 1}) {getattr(f, 'method', '?')}" for i, f in enumerate(fits)]
    if len(names) != len(fits):
        raise OptionError(f"names must have one entry per fit ({len(fits)}), however: {len(names)=}")
    terms: list[str] = []
    for fit in fits:
        terms += [t for t in getattr(fit, "names", []) if t not in terms]
    cols = {name: _compare_column(fit, terms) for name, fit in zip(names, fits, strict=True)}
    index = [t for term in terms for t in (term, "")] + [
        "method", "N", "R-squared", "Adj. R-squared", "sigma", "AIC", "edf", "lambda / k"]
    return Comparison(pd.DataFrame(cols, index=pd.Index(index, name="term")))


def _compare_column(fit: Any, terms: list[str]) -> list[str]:
    out: list[str] = []
    coef = getattr(fit, "coef", None)
    se = getattr(fit, "std_err", None)
    for t in terms:
        if coef is not None and se is not None and t in coef.index:
            c = coef[t]
            p = fit.p_value[t] if hasattr(fit, "p_value") else float("nan")
            out += [f"{fmt_g(c, 4)}{_stars(p)}", f"({fmt_g(se[t], 3)})"]
        else:
            out += ["", ""]
    tune = "lam" if getattr(fit, "lam", None) is not None else "k"
    out += [fit.method, str(fit.nobs), _statistic(fit, "r_squared"),
            _statistic(fit, "adj_r_squared"), _statistic(fit, "sigma"), _statistic(fit, "aic", 6),
            _statistic(fit, "edf", 4), _statistic(fit, tune, 4)]
    return out


def _statistic(fit: Any, name: str, digits: int | None = None) -> str:
    """The statistic ``name`` of ``fit`` formatted, blank when the fit has none (softmax: no AIC)."""
    value = getattr(fit, name, None)
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return ""
    if not math.isfinite(number):
        return ""
    return fmt_g(number) if digits is None else fmt_g(number, digits)
