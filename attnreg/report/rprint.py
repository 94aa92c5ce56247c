"""R's printing, ported: named vectors, character matrices, ``printCoefmat()`` and the
residual block of ``print.summary.lm``, laid out as R 4.2 lays them out (80 columns).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from attnreg.report.rformat import _stars, format_pval, r_format, r_round

__all__ = ["SIGNIF_LEGEND", "print_char_matrix", "print_coefmat", "print_named_vector",
           "residual_lines"]

SIGNIF_LEGEND = "Signif. codes:  0 '***' 0.001 '**' 0.01 '*' 0.05 '.' 0.1 ' ' 1"
_WIDTH = 80  # options(width)
_GAP = 1  # R_print.gap


def print_named_vector(values: Sequence[float] | np.ndarray, names: Sequence[str], digits: int) -> list[str]:
    """R's ``print(x, digits=)`` of a named numeric vector: names over values, right-justified
    to one common width, each followed by a space, as many per line as fit in 80 columns."""
    cells = r_format(values, digits)
    w = max([len(c) for c in cells] + [len(n) for n in names])
    per_line = max(1, _WIDTH // (w + _GAP))
    lines = []
    for lo in range(0, len(cells), per_line):
        lines.append("".join(n.rjust(w) + " " * _GAP for n in names[lo:lo + per_line]))
        lines.append("".join(c.rjust(w) + " " * _GAP for c in cells[lo:lo + per_line]))
    return lines


def print_char_matrix(rownames: Sequence[str], colnames: Sequence[str],
                      columns: Sequence[Sequence[str]]) -> list[str]:
    """R's ``print(<character matrix>, quote = FALSE, right = TRUE)``: left-justified row
    names, right-justified columns one space apart, in blocks of columns that fit in 80
    columns (each block repeats the header and every row)."""
    rlabw = max([len(r) for r in rownames] + [0])
    widths = [max([len(h)] + [len(c) for c in col]) + _GAP
              for h, col in zip(colnames, columns, strict=True)]
    lines: list[str] = []
    jmin = 0
    while jmin < len(columns):
        jmax, width = jmin + 1, rlabw + widths[jmin]
        while jmax < len(columns) and width + widths[jmax] < _WIDTH:
            width += widths[jmax]
            jmax += 1
        block = range(jmin, jmax)
        lines.append(" " * rlabw + "".join(colnames[j].rjust(widths[j]) for j in block))
        for i, name in enumerate(rownames):
            lines.append(name.ljust(rlabw) + "".join(columns[j][i].rjust(widths[j])
                                                      for j in block))
        jmin = jmax
    return lines


_COEF_COLUMNS = (("Estimate", "Std. Error", "t value", "Pr(>|t|)"),
                 ("Estimate", "Std. Error", "z value", "Pr(>|z|)"))


def print_coefmat(table: pd.DataFrame, digits: int = 4, signif_stars: bool = True,
                  na_print: str | None = None) -> tuple[list[str], bool]:
    """R's ``printCoefmat`` of an estimate / standard error / statistic / p-value table.

    A row whose estimate is NaN is an aliased coefficient and prints ``NA`` throughout;
    another NaN prints ``NaN``, or ``na_print`` when given (a table whose missing values are
    R's ``NA``, such as AER's diagnostics). Returns the lines and whether stars were printed (R prints
    them, and the legend, only when some p-value is below 0.1).
    """
    x = table.to_numpy(dtype=float)
    n = x.shape[0]
    aliased = np.isnan(x[:, 0])
    dig_tst = max(1, min(5, digits - 1))
    cells = [[""] * n for _ in range(4)]
    cs = x[:, :2].ravel(order="F")
    acs = np.abs(cs[np.isfinite(cs) & (cs != 0)])
    if np.isfinite(cs).any():
        digmin = 1 + (math.floor(math.log10(float(acs.min()))) if acs.size else 0)
        rounded = [r_round(v, max(1, digits - digmin)) for v in cs]
        joint = r_format(rounded, digits)
        zeroed = [k for k, v in enumerate(cs) if math.isfinite(v) and v != 0
                  and float(joint[k]) == 0]
        if zeroed:  # R: not.both.0 -- a nonzero value that rounded to zero gets 1 digit less
            for k, txt in zip(zeroed, r_format(cs[zeroed], max(1, digits - 1)), strict=True):
                joint[k] = txt
        cells[0], cells[1] = joint[:n], joint[n:]
    cells[2] = r_format([r_round(v, dig_tst) for v in x[:, 2]], digits)
    p = x[:, 3]
    if (~np.isnan(p)).any():
        ok = np.flatnonzero(~np.isnan(p))
        for row, txt in zip(ok, format_pval(p[ok], dig_tst), strict=True):
            cells[3][int(row)] = txt
    for j in range(4):
        for i in range(n):
            if np.isnan(x[i, j]):
                cells[j][i] = "NA" if aliased[i] else (na_print or "NaN")
    starred = signif_stars and bool((p[~np.isnan(p)] < 0.1).any())
    colnames = list(table.columns)
    if starred:
        marks = ["" if np.isnan(v) else _stars(v) or " " for v in p]
        cells.append([m.ljust(max(map(len, marks))) for m in marks])  # format(symnum(p))
        colnames.append("")
    return print_char_matrix([str(i) for i in table.index], colnames, cells), starred


def _coef_lines(table: pd.DataFrame, stars: bool) -> tuple[list[str], bool]:
    """The table's text and whether it carries significance stars (then the legend follows).

    A coefficient table (estimate, standard error, t or z value, p-value) is R's
    ``printCoefmat``; any other table formats each column alone with 4 significant digits
    (estimates and standard errors together, as printCoefmat does), NaN as ``NA``.
    """
    if tuple(table.columns) in _COEF_COLUMNS:
        return print_coefmat(table, 4, stars)
    cols: dict[str, list[str]] = {}
    est_se = [c for c in ("Estimate", "Std. Error") if c in table.columns]
    if est_se:  # R rounds, then formats estimates and standard errors as one vector
        both = table[est_se].to_numpy(dtype=float).ravel(order="F")
        nz = np.abs(both[np.isfinite(both) & (both != 0)])
        if nz.size:
            places = max(1, 4 - (1 + math.floor(math.log10(nz.min()))))
            both = np.array([r_round(v, places) for v in both])
        joint = r_format(both, 4)
        for j, name in enumerate(est_se):
            cols[name] = joint[j * len(table):(j + 1) * len(table)]
    for name in table.columns:
        v = table[name].to_numpy(dtype=float)
        if name.startswith("Pr("):
            cols[name] = format_pval(v)
        elif name not in est_se:
            cols[name] = r_format(v, 4)
    starred = stars and "Pr(>|t|)" in table
    if starred:
        cols[""] = [_stars(p).ljust(3) for p in table["Pr(>|t|)"].to_numpy(dtype=float)]
    names = list(cols)
    return print_char_matrix([str(i) for i in table.index], names,
                             [cols[k] for k in names]), starred


def quantiles(x: np.ndarray) -> np.ndarray:
    """R's ``quantile(x)`` (type 7) at 0, 1/4, 1/2, 3/4 and 1."""
    xs = np.sort(np.asarray(x, dtype=float))
    n = xs.size
    out = np.empty(5)
    for k, prob in enumerate((0.0, 0.25, 0.5, 0.75, 1.0)):
        index = 1 + max(n - 1, 0) * prob
        lo, hi = math.floor(index), math.ceil(index)
        q = xs[lo - 1]
        if index > lo and xs[hi - 1] != q:
            h = index - lo
            q = (1 - h) * q + h * xs[hi - 1]
        out[k] = q
    return out


def _zapsmall(x: np.ndarray, digits: int) -> np.ndarray:
    """R's ``zapsmall(x, digits)``: round to ``digits - log10(max |x|)`` decimals."""
    finite = x[~np.isnan(x)]
    if not finite.size:
        return x
    mx = float(np.max(np.abs(finite)))
    places = max(0.0, digits - math.log10(mx)) if mx > 0 else float(digits)
    return np.array([r_round(float(v), places) for v in x])


def residual_lines(resid: np.ndarray, weighted: bool, df_resid: float | None = None,
                   labels: Sequence[Any] | None = None) -> list[str]:
    """R's residual block of ``print.summary.lm`` at 4 digits.

    With more than 5 residual degrees of freedom, the five-number summary (quantiles
    rounded by ``zapsmall(q, 5)``); with 1 to 5, every residual, named by its row label;
    with none, R's note that all residuals are 0.

    Parameters
    ----------
    resid : ndarray
        The (weighted) residuals.
    weighted : bool
        Label the block ``Weighted Residuals:`` (R does so when the weights are not all equal).
    df_resid : float, optional
        Residual degrees of freedom (default: the number of residuals).
    labels : sequence, optional
        Row labels (default 1, 2, ...).
    """
    label = "Weighted Residuals:" if weighted else "Residuals:"
    resid = np.asarray(resid, dtype=float)
    rdf = resid.size if df_resid is None else df_resid
    if rdf > 5:
        q = _zapsmall(quantiles(resid), 5)
        return [label, *print_named_vector(q, ["Min", "1Q", "Median", "3Q", "Max"], 4)]
    if rdf > 0:
        names = [str(i + 1) for i in range(resid.size)] if labels is None else [
            str(v) for v in labels]
        return [label, *print_named_vector(resid, names, 4)]
    return [label, f"ALL {resid.size} residuals are 0: no residual degrees of freedom!"]
