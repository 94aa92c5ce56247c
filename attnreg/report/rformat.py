"""R's number formatting, ported: ``round()``, ``signif()``, ``format()``, ``formatC()`` and
``format.pval()`` of R 4.2, digit for digit. Pure functions of numbers; the printing of
vectors, matrices and coefficient tables built on them is in :mod:`attnreg.report.rprint`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

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
