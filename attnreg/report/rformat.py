"""R's number formatting, ported: what ``print.summary.lm`` uses to lay out its numbers.

Ports of the R 4.2 routines ``round()``, ``signif()``, ``format()``, ``formatC()``,
``format.pval()``, ``printCoefmat()`` and the printing of named vectors and character
matrices, plus the residual block of ``print.summary.lm``. Pure functions of numbers; the
:mod:`attnreg.report.text` renderer calls them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

SIGNIF_LEGEND = "Signif. codes:  0 '***' 0.001 '**' 0.01 '*' 0.05 '.' 0.1 ' ' 1"
_EPS = 2.220446049250313e-16

# ---------------------------------------------------------------- number formatting (R's)
#
# Ports of the R 4.2 routines behind print.summary.lm: round() (nmath/fround.c), signif()
# (nmath/fprec.c), format() (formatReal in main/format.c), formatC(), format.pval(),
# print() of a named vector and of a character matrix (main/printvector.c, printmatrix.c)
# and printCoefmat(). R's scientific() scales in long double where the platform has one
# wider than double (x86-64); numpy's longdouble is the same type there.

_LONG_DOUBLE = np.finfo(np.longdouble).nmant > np.finfo(np.float64).nmant
_KP_MAX = 27 if _LONG_DOUBLE else 22
_WIDTH = 80  # options(width)
_GAP = 1  # R_print.gap


def _tbl(k: int, dtype: type) -> Any:
    """10^k, exactly (k <= 27 in long double, <= 22 in double), as R's table ``tbl``."""
    t = dtype(1)
    for _ in range(k):
        t = t * dtype(10)
    return t


def _pow_di(x: float, n: int) -> float:
    """R's ``R_pow_di``: x^n by repeated squaring (1/x^-n for negative n)."""
    xn = 1.0
    neg = n < 0
    n = -n if neg else n
    while n:
        if n & 1:
            xn *= x
        n >>= 1
        if n:
            x *= x
    return 1.0 / xn if neg else xn


def r_round(x: float, digits: float) -> float:
    """R's ``round(x, digits)`` (R >= 4.0.0): the nearer of the two decimal candidates
    that bracket ``x``, ties to the even one; ``digits`` is rounded to an integer first."""
    if math.isnan(x) or math.isnan(digits):
        return x + digits
    if not math.isfinite(x) or digits > 323 or x == 0.0:
        return x
    if digits < -308:
        return 0.0
    if digits == 0.0:
        return float(np.rint(x))
    dig = math.floor(digits + 0.5)
    sgn = -1.0 if x < 0 else 1.0
    x = abs(x)
    if math.log10(2.0) * (0.5 + (math.frexp(x)[1] - 1)) + dig > 15:
        return sgn * x
    if dig <= 308:
        pow10 = _pow_di(10.0, dig)
        x10 = x * pow10
        i10 = math.floor(x10)
        xd, xu = i10 / pow10, math.ceil(x10) / pow10
    else:
        p10, pow10 = _pow_di(10.0, dig - 308), _pow_di(10.0, 308)
        x10 = (x * pow10) * p10
        i10 = math.floor(x10)
        xd, xu = i10 / pow10 / p10, math.ceil(x10) / pow10 / p10
    du, dd = xu - x, x - xd
    return sgn * (xu if du < dd or (math.fmod(i10, 2.0) == 1 and du == dd) else xd)


def r_signif(x: float, digits: int) -> float:
    """R's ``signif(x, digits)``."""
    if not math.isfinite(x) or x == 0.0 or digits > 22:
        return x
    dig = max(digits, 1)
    sgn = -1.0 if x < 0 else 1.0
    x = abs(x)
    l10 = math.log10(x)
    e10 = dig - 1 - math.floor(l10)
    if abs(l10) < 306:
        p10 = 1.0
        if e10 > 308:
            p10, e10 = _pow_di(10.0, e10 - 308), 308
        if e10 > 0:
            pow10 = _pow_di(10.0, e10)
            return sgn * (float(np.rint((x * pow10) * p10)) / pow10) / p10
        pow10 = _pow_di(10.0, -e10)
        return sgn * (float(np.rint(x / pow10)) * pow10)
    do_round = 308 - l10 >= _pow_di(10.0, -dig)
    e2 = dig + (22 if e10 > 0 else -22)
    p10, big = _pow_di(10.0, e2), _pow_di(10.0, e10 - e2)
    x = x * p10 * big
    if do_round:
        x += 0.5
    return sgn * (math.floor(x) / p10) / big


def _scientific(x: float, digits: int) -> tuple[int, int, int, bool]:
    """R's ``scientific()``: sign, decimal exponent and significant digits (at most
    ``digits``) of ``x``, and whether fixed notation needs one digit fewer on the left."""
    if x == 0.0:
        return 0, 0, 1, False
    neg, r = (1, -x) if x < 0 else (0, x)
    if digits >= 16:  # R formats with sprintf there
        mant, ex = f"{r:.{digits - 1}e}".split("e")
        return neg, int(ex), max(len(mant.replace(".", "").rstrip("0")), 1), False
    kp = math.floor(math.log10(r)) - digits + 1
    dtype = np.longdouble if _LONG_DOUBLE else np.float64
    r_prec = dtype(r)
    if abs(kp) <= _KP_MAX:
        if kp > 0:
            r_prec = r_prec / _tbl(kp, dtype)
        elif kp < 0:
            r_prec = r_prec * _tbl(-kp, dtype)
    elif _LONG_DOUBLE:
        r_prec = r_prec / np.power(dtype(10), dtype(kp))
    elif kp <= -308:
        r_prec = (r_prec * 1e303) / 10.0 ** (kp + 303)
    else:
        r_prec = r_prec / 10.0 ** kp
    if r_prec < _tbl(digits - 1, dtype):
        r_prec = r_prec * dtype(10)
        kp -= 1
    alpha = float(np.rint(r_prec))
    nsig = digits
    for _ in range(digits):
        alpha /= 10.0
        if alpha == math.floor(alpha):
            nsig -= 1
        else:
            break
    if nsig == 0 and digits > 0:
        nsig, kp = 1, kp + 1
    kpower = kp + digits - 1
    rgt = min(max(digits - kpower, 0), _KP_MAX)
    fuzz = 0.5 / float(_tbl(rgt, dtype))
    widens = bool(0 < kpower <= _KP_MAX and dtype(r) < _tbl(kpower, dtype) - dtype(fuzz))
    return neg, kpower, nsig, widens


def _format_info(values: Sequence[float], digits: int) -> tuple[int, int, int]:
    """R's ``formatReal``: common width, decimals and exponent flag (0: fixed notation)."""
    neg = 0
    rgt = mxl = mxsl = mxns = -(2**31)
    mnl = 2**31
    na = posinf = neginf = False
    for v in values:
        if math.isnan(v):
            na = True
            continue
        if not math.isfinite(v):
            posinf, neginf = posinf or v > 0, neginf or v < 0
            continue
        neg_i, kpower, nsig, widens = _scientific(v, digits)
        left = kpower + 1 - (1 if widens else 0)
        sleft = neg_i + (1 if left <= 0 else left)
        neg = max(neg, neg_i)
        rgt, mxl, mnl = max(rgt, nsig - left), max(mxl, left), min(mnl, left)
        mxsl, mxns = max(mxsl, sleft), max(mxns, nsig)
    if mxl < 0:
        mxsl = 1 + neg
    rgt = max(rgt, 0)
    w_fixed = mxsl + rgt + (rgt != 0)
    e = 2 if mxl > 100 or mnl <= -99 else 1
    if mxns > 0:
        d = mxns - 1
        w = neg + (d > 0) + d + 4 + e
        if w_fixed <= w:  # options(scipen = 0)
            e, d, w = 0, rgt, w_fixed
    else:
        w = d = e = 0
    if na:
        w = max(w, 2)
    if posinf:
        w = max(w, 3)
    if neginf:
        w = max(w, 4)
    return w, d, e


def _encode_real(x: float, w: int, d: int, e: int) -> str:
    if math.isnan(x):
        return "NA".rjust(w)
    if not math.isfinite(x):
        return ("Inf" if x > 0 else "-Inf").rjust(w)
    x = 0.0 if x == 0 else x  # R drops the sign of zero
    return (f"{x:.{d}e}" if e else f"{x:.{d}f}").rjust(w)


def r_format(values: Any, digits: int) -> list[str]:
    """R's ``format(x, digits=)`` of a numeric vector: each value with at least ``digits``
    significant digits for the one that needs most, in one common fixed or scientific
    notation (the narrower), padded to a common width. NaN prints as ``NA``."""
    vals = [float(v) for v in np.ravel(np.asarray(values, dtype=float))]
    w, d, e = _format_info(vals, digits)
    return [_encode_real(v, w, d, e) for v in vals]


def format_c(x: float, digits: int = 4) -> str:
    """R's ``formatC(x, digits=digits)``: ``%*.*g`` with width ``digits + 1``."""
    if not math.isfinite(x):
        return ("NaN" if math.isnan(x) else "Inf" if x > 0 else "-Inf").rjust(digits + 1)
    return f"{x:{digits + 1}.{digits}g}"


def fmt_g(x: float, digits: int = 4) -> str:
    """``%.{digits}g``, with ``NA`` for a missing value (R's ``formatC`` without its padding)."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "NA"
    return f"{x:.{digits}g}"


def format_pval(pv: Sequence[float], digits: int = 3, eps: float = _EPS) -> list[str]:
    """R's ``format.pval(pv, digits, eps)``: values below ``eps`` as ``< eps``; the others
    formatted in two groups (exponent at least -3, or -4 when ``digits > 1``, and the rest),
    each group to a common notation and width."""
    p = np.asarray(pv, dtype=float)
    out = ["NA"] * p.size
    ok = ~np.isnan(p)
    is0 = ok & (p < eps)
    rest = ok & ~is0
    nc = 0
    if rest.any():
        expo = np.array([math.floor(math.log10(v)) if v > 0 else -50 for v in p[rest]])
        fixp = (expo >= -3) | ((expo == -4) & (digits > 1))
        idx = np.flatnonzero(rest)
        for group in (fixp, ~fixp):
            if group.any():
                for i, txt in zip(idx[group], r_format(p[idx[group]], digits), strict=True):
                    out[i] = txt
        nc = max(len(out[int(i)]) for i in idx)
    if is0.any():
        dig = max(1, digits - 2)
        if rest.any():
            if dig > 1 and dig + 6 > nc:
                dig = max(1, nc - 7)
            sep = "" if dig == 1 and nc <= 6 else " "
        else:
            sep = "" if dig == 1 else " "
        tiny = "<" + sep + r_format([eps], dig)[0]
        for i in np.flatnonzero(is0):
            out[i] = tiny
    return out


def fmt_pvalue(p: float, digits: int = 3) -> str:
    """R's ``format.pval`` of one value (below machine epsilon: ``< 2.2e-16`` at 4 digits)."""
    return format_pval([p], digits)[0]


def _stars(p: float) -> str:
    if p is None or math.isnan(p):
        return ""
    for cut, mark in ((0.001, "***"), (0.01, "**"), (0.05, "*"), (0.1, ".")):
        if p < cut:
            return mark
    return ""


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


def print_coefmat(table: pd.DataFrame, digits: int = 4,
                  signif_stars: bool = True) -> tuple[list[str], bool]:
    """R's ``printCoefmat`` of an estimate / standard error / statistic / p-value table.

    A row whose estimate is NaN is an aliased coefficient and prints ``NA`` throughout;
    another NaN prints ``NaN``. Returns the lines and whether stars were printed (R prints
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
                cells[j][i] = "NA" if aliased[i] else "NaN"
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


def _quantiles(x: np.ndarray) -> np.ndarray:
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
        q = _zapsmall(_quantiles(resid), 5)
        return [label, *print_named_vector(q, ["Min", "1Q", "Median", "3Q", "Max"], 4)]
    if rdf > 0:
        names = [str(i + 1) for i in range(resid.size)] if labels is None else [
            str(v) for v in labels]
        return [label, *print_named_vector(resid, names, 4)]
    return [label, f"ALL {resid.size} residuals are 0: no residual degrees of freedom!"]
