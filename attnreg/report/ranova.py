"""R's ``print.anova`` ported: the general ``printCoefmat`` (any ``cs.ind``, ``tst.ind`` and
``zap.ind``, ``na.print``) of R 4.2 and the heading of an analysis of variance table.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np
import pandas as pd

from attnreg.report.rformat import _stars, format_pval, r_format, r_round
from attnreg.report.rprint import SIGNIF_LEGEND, _zapsmall, print_char_matrix

__all__ = ["anova_lines", "coefmat_lines"]


def coefmat_lines(x: pd.DataFrame, *, digits: int, signif_stars: bool = True,
                  cs_ind: Sequence[int] = (), tst_ind: Sequence[int] = (),
                  zap_ind: Sequence[int] = (), has_pvalue: bool = True,
                  na_print: str = "NA") -> tuple[list[str], bool]:
    """R's ``printCoefmat(x, digits, signif.stars, cs.ind, tst.ind, zap.ind, na.print)``.

    Column indices are 0-based. Returns the lines and whether significance stars were
    printed (then R prints the legend after them).
    """
    xm = x.to_numpy(dtype=float).copy()
    n, nc = xm.shape
    dig_tst = max(1, min(5, digits - 1))
    cells = [[""] * n for _ in range(nc)]
    ina = np.isnan(xm)
    ok = ~ina
    for i in zap_ind:
        xm[:, i] = _zapsmall(xm[:, i], digits)
    if len(cs_ind):
        coef_se = xm[:, list(cs_ind)]
        acs = np.abs(coef_se)
        finite = np.isfinite(acs)
        if finite.any():
            nz = acs[finite & (acs != 0)]
            digmin = 1 + (math.floor(math.log10(float(nz.min()))) if nz.size else 0)
            places = max(1, digits - digmin)
            joint = r_format([r_round(v, places) for v in coef_se.ravel(order="F")], digits)
            for k, j in enumerate(cs_ind):
                cells[j] = joint[k * n:(k + 1) * n]
    for j in tst_ind:
        cells[j] = r_format([r_round(v, dig_tst) for v in xm[:, j]], digits)
    p_col = nc - 1 if has_pvalue else None
    for j in range(nc):
        if j not in cs_ind and j not in tst_ind and j != p_col:
            cells[j] = r_format(xm[:, j], digits)
    okp = ok.copy()
    okp[:, list(tst_ind)] = False
    if p_col is not None:
        okp[:, p_col] = False
    positions = [(i, j) for j in range(nc) for i in range(n) if okp[i, j]]  # column-major
    not_both = [(i, j) for i, j in positions
                if (xm[i, j] == 0) != (_as_number(cells[j][i]) == 0)]
    if not_both:
        again = r_format([xm[i, j] for i, j in not_both], max(1, digits - 1))
        for (i, j), txt in zip(not_both, again, strict=True):
            cells[j][i] = txt
    for i, j in zip(*np.nonzero(ina), strict=True):
        cells[int(j)][int(i)] = na_print
    starred = False
    colnames = [str(c) for c in x.columns]
    if p_col is not None:
        pv = xm[:, p_col]
        okp_rows = ok[:, p_col]
        if okp_rows.any():
            rows = np.flatnonzero(okp_rows)
            for row, txt in zip(rows, format_pval(pv[rows], dig_tst), strict=True):
                cells[p_col][int(row)] = txt
            starred = signif_stars and bool((pv[rows] < 0.1).any())
            if starred:
                marks = ["" if math.isnan(v) else _stars(v) or " " for v in pv]
                width = max(len(m) for m in marks)
                cells.append([m.ljust(width) for m in marks])
                colnames.append("")
    return print_char_matrix([str(i) for i in x.index], colnames, cells), starred


def _as_number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return math.nan


def anova_lines(table: pd.DataFrame, heading: Sequence[str], digits: int = 5,
                signif_stars: bool = True) -> list[str]:
    r"""R's ``print.anova``: the heading (each entry ``cat`` with ``sep="\n"``), the table by
    ``printCoefmat`` (Df columns as they are, statistics rounded, sums of squares zapped,
    missing entries blank), and the significance legend when stars were printed.

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from attnreg.report.ranova import anova_lines
    >>> tab = pd.DataFrame({"Df": [1.0, 10.0], "Sum Sq": [4.5, 10.0], "Mean Sq": [4.5, 1.0],
    ...                     "F value": [4.5, np.nan], "Pr(>F)": [0.0598, np.nan]},
    ...                    index=["x", "Residuals"])
    >>> print("\n".join(anova_lines(tab, ("Analysis of Variance Table\n", "Response: y"))))
    Analysis of Variance Table
    <BLANKLINE>
    Response: y
              Df Sum Sq Mean Sq F value Pr(>F)
    x          1    4.5     4.5     4.5 0.0598 .
    Residuals 10   10.0     1.0
    ---
    Signif. codes:  0 '***' 0.001 '**' 0.01 '*' 0.05 '.' 0.1 ' ' 1
    """
    lines: list[str] = []
    for entry in heading:
        lines += entry.split("\n")
    cn = [str(c) for c in table.columns]
    nc = len(cn)
    has_p = bool(re.match(r"^(P|Pr)\(", cn[-1]))
    zap = list(range(nc - 1 if has_p else nc))
    tst = [j for j, c in enumerate(cn) if c[1:7] == " value"]
    tst += [j for j, c in enumerate(cn) if c in ("F", "Cp", "Chisq")]
    zap = [j for j in zap if j not in tst]
    dfs = [j for j, c in enumerate(cn) if c.endswith("Df")]
    zap = [j for j in zap if j not in dfs]
    body, starred = coefmat_lines(table, digits=digits, signif_stars=signif_stars,
                                  tst_ind=tst, zap_ind=zap, has_pvalue=has_p, na_print="")
    lines += body
    if starred:
        lines += ["---", SIGNIF_LEGEND]
    return lines
