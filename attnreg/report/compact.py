"""The compact layout of :func:`~attnreg.report.etable.etable` (``style="compact"``, the
layout :func:`~attnreg.report.compare.compare` prints): a row per coefficient with its
estimate to 4 significant digits and R's significance stars, its standard error (3 digits)
below it, then the method, N, R², adjusted R², σ, AIC, the effective df and λ or k.

A cell is blank where a fit has no such value (the coefficients and AIC of a softmax fit).
The renderers draw the cells with :mod:`tabulate`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd
from tabulate import tabulate

from attnreg.report.rformat import _stars, fmt_g

if TYPE_CHECKING:
    from attnreg.report.etable import ETable

__all__ = ["BOTTOM_ROWS", "compact_table", "html", "latex", "markdown", "text"]

#: the rows below the coefficients
BOTTOM_ROWS = ("method", "N", "R-squared", "Adj. R-squared", "sigma", "AIC", "edf",
               "lambda / k")


def compact_table(fits: Sequence[Any], names: Sequence[str], terms: Sequence[str]
                  ) -> pd.DataFrame:
    """The cells, shape (2 n_terms + 8, n_fits): one column per fit, titled by ``names``;
    rows indexed by ``term`` (the standard error's row has an empty label)."""
    cols = {name: _column(fit, terms) for name, fit in zip(names, fits, strict=True)}
    index = [t for term in terms for t in (term, "")] + list(BOTTOM_ROWS)
    return pd.DataFrame(cols, index=pd.Index(index, name="term"))


def _column(fit: Any, terms: Sequence[str]) -> list[str]:
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


def text(t: ETable) -> str:
    """Plain text: the cells right-aligned under their titles."""
    return str(tabulate(t.table.reset_index(), headers="keys", tablefmt="simple",
                        showindex=False, stralign="right"))


def html(t: ETable) -> str:
    """An HTML ``<table>`` of the cells."""
    return str(tabulate(t.table.reset_index(), headers="keys", tablefmt="html",
                        showindex=False))


def latex(t: ETable) -> str:
    """A LaTeX tabular (booktabs) of the cells."""
    return str(tabulate(t.table.reset_index(), headers="keys", tablefmt="latex_booktabs",
                        showindex=False))


def markdown(t: ETable) -> str:
    """A Markdown (pipe) table of the cells; ``|`` in a cell escaped."""
    cells = t.table.reset_index().map(lambda c: str(c).replace("|", "\\|"))
    return str(tabulate(cells, headers="keys", tablefmt="pipe", showindex=False))
