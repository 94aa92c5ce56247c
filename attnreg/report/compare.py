"""``compare``: the quick side-by-side table of several fits, :func:`~attnreg.etable` in its
compact layout (``style="compact"``, :mod:`attnreg.report.compact`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from attnreg.report.etable import ETable, etable

__all__ = ["Comparison", "compare"]

#: the result of :func:`compare`: an :class:`~attnreg.report.etable.ETable` (an alias kept
#: for code that names it)
Comparison = ETable


def compare(fits: Sequence[Any], names: Sequence[str] | None = None) -> ETable:
    """Side-by-side table of fits: ``etable(fits, names=names, style="compact")``.

    Parameters
    ----------
    fits : sequence of results
    names : sequence of str, optional
        Column titles (default: each fit's method, numbered: ``"(1) ols"``).

    Returns
    -------
    ETable
        ``str()`` is a plain-text table; ``.table`` the cells behind it (one column per
        fit; a row per coefficient, its standard error below it, then the method, N, R²,
        adjusted R², σ, AIC, effective df and λ or k; a cell is blank where the fit has no
        such value, e.g. the coefficients and AIC of a softmax fit); also
        ``_repr_html_()``, ``to_latex()`` and ``to_markdown()``.

    See Also
    --------
    attnreg.etable : the same table (``style="compact"``), and the publication layout
        (chosen covariances side by side, keep/drop/rename, stars, a registry of
        statistics, Markdown, booktabs LaTeX and HTML).

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
    >>> print(str(ar.compare(fits[:1])).splitlines()[0].split())
    ['term', '(1)', 'ols']
    """
    return etable(fits, names=names, style="compact")
