"""Confidence intervals of GLM coefficients: R's ``confint(glm)`` (MASS's profile-likelihood
intervals; ``stats`` since R 4.4, the same code) and Wald intervals (``confint.default``).

MASS profiles each coefficient on a grid: steps of ``del = zmax/5`` standard errors either
side of the estimate (at most 9 each way, until the signed root of the deviance increase
over the dispersion passes ``zmax``, a χ²₁ quantile at ``(1 − level)/4`` for binomial and
poisson, an F(1, n − p) one otherwise), refitting the other coefficients with the profiled
one in the offset. The limits are then read off an interpolating cubic spline (R's
``spline``, Forsythe–Malcolm–Moler end conditions, ``3 × points`` values) by linear
interpolation (``approx``) at the normal quantiles. That interpolation is reproduced here
step for step, so the limits equal R's (they are not the exact roots of the profile, which
differ from them by about 1e-4 standard errors).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy import stats

from attnreg._typing import FloatArray
from attnreg.exceptions import DataError, OptionError
from attnreg.glm.irls import irls

if TYPE_CHECKING:
    from attnreg.glm.results import GlmResults

__all__ = ["confint", "fmm_spline"]

_MAXSTEPS = 10


def confint(fit: GlmResults, level: float = 0.95, method: str = "profile") -> pd.DataFrame:
    """Confidence intervals of the coefficients, shape (n_coef, 2).

    Parameters
    ----------
    fit : GlmResults
    level : float
        Confidence level in (0, 1).
    method : {"profile", "wald"}
        ``"profile"``: MASS's ``confint.glm`` (model-based dispersion and standard errors,
        whatever ``vcov=``); ``"wald"``: estimate ± normal quantile × the standard errors
        in use (R's ``confint.default``).

    Returns
    -------
    DataFrame
        Columns ``"2.5 %"`` and ``"97.5 %"`` (R's names); NaN for aliased coefficients and
        limits beyond the profiled range.
    """
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0 < level < 1:
        raise OptionError(f"level must be a number in (0, 1), however: level={level!r}")
    if method not in ("profile", "wald"):
        raise OptionError(f"method must be 'profile' or 'wald', however: method={method!r}")
    a = np.array([(1 - level) / 2, 1 - (1 - level) / 2])
    cols = [f"{_r_round(100 * p)} %" for p in a]
    if method == "wald":
        q = stats.norm.ppf(a)
        ci = fit.coef.to_numpy()[:, None] + fit.std_err.to_numpy()[:, None] * q[None, :]
    else:
        ci = np.full((fit.design.n_coef, 2), math.nan)
        for j in fit.kept:
            z, par = _profile(fit, int(j), (1 - level) / 4)
            ci[j] = _spline_limits(par, z, stats.norm.ppf(a))
    return pd.DataFrame(ci, index=fit.coef.index, columns=cols)


def _r_round(x: float) -> str:
    """R's ``paste(round(x, 1))``: ``2.5``, ``97.5``, ``5``."""
    r = round(x, 1)
    return str(int(r)) if r == int(r) else str(r)


def _profile(fit: GlmResults, j: int, alpha: float) -> tuple[FloatArray, FloatArray]:
    """MASS's ``profile.glm`` of design column ``j``: signed roots z and the values of the
    coefficient, sorted by z."""
    d = fit.design
    if fit.family.fixed_dispersion:
        zmax = math.sqrt(stats.chi2.ppf(1 - alpha, 1))
    else:
        zmax = math.sqrt(stats.f.ppf(1 - alpha, 1, fit.nobs - d.n_coef))
    step_size = zmax / 5
    b0 = float(fit.coef.iloc[j])
    se = math.sqrt(float(fit.covariance(None).iloc[j, j]))
    others = [int(k) for k in fit.kept if k != j]
    disp = fit.dispersion
    zs, bs = [0.0], [b0]
    for sgn in (-1.0, 1.0):
        step, z = 0, 0.0
        while (step := step + 1) < _MAXSTEPS and abs(z) < zmax:
            bi = b0 + sgn * step * step_size * se
            sub = irls(d.X[:, others], d.y, fit.prior_weights, fit.offset + d.X[:, j] * bi,
                       fit.family, fit.link, exact_r=fit.control == "R")
            zz = (sub.deviance - fit.deviance) / disp
            if zz <= -0.001:
                raise DataError(f"profiling {d.column_names[j]!r} found a better fit than the "
                                "estimate: the fit had not converged (refit with "
                                "control='optimum' or a larger maxit=)")
            z = sgn * math.sqrt(max(zz, 0.0))
            zs.append(z)
            bs.append(bi)
    order = np.argsort(zs, kind="stable")
    return np.asarray(zs)[order], np.asarray(bs)[order]


def _spline_limits(par: FloatArray, z: FloatArray, cutoff: FloatArray) -> FloatArray:
    """``approx(sp$y, sp$x, xout = cutoff)$y`` with ``sp = spline(par, z)``."""
    b, c, dd = fmm_spline(par, z)
    u = np.linspace(par[0], par[-1], 3 * par.size)
    i = np.clip(np.searchsorted(par, u, side="right") - 1, 0, par.size - 1)
    dx = u - par[i]
    v = z[i] + dx * (b[i] + dx * (c[i] + dx * dd[i]))
    keys, inv = np.unique(v, return_inverse=True)  # approx's ties = mean
    xs = np.bincount(inv, weights=u) / np.bincount(inv)
    out = np.interp(cutoff, keys, xs)
    out[(cutoff < keys[0]) | (cutoff > keys[-1])] = math.nan  # rule = 1
    return out


def fmm_spline(x: FloatArray, y: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """R's ``fmm_spline``: cubic spline coefficients b, c, d (shape (n,)) through the knots
    ``x`` (increasing), with Forsythe, Malcolm and Moler's end conditions."""
    n = x.size
    b, c, d = np.zeros(n), np.zeros(n), np.zeros(n)
    if n < 3:
        b[:] = (y[1] - y[0]) / (x[1] - x[0])
        return b, c, d
    d[:-1] = np.diff(x)
    slopes = np.diff(y) / d[:-1]
    b[1:-1] = 2.0 * (d[:-2] + d[1:-1])
    c[1:-1] = slopes[1:] - slopes[:-1]
    b[0], b[-1] = -d[0], -d[-2]
    if n > 3:
        c0 = c[2] / (x[3] - x[1]) - c[1] / (x[2] - x[0])
        cn = c[-2] / (x[-1] - x[-3]) - c[-3] / (x[-2] - x[-4])
        c[0] = c0 * d[0] ** 2 / (x[3] - x[0])
        c[-1] = -cn * d[-2] ** 2 / (x[-1] - x[-4])
    for i in range(1, n):  # Gaussian elimination over the knots
        t = d[i - 1] / b[i - 1]
        b[i] -= t * d[i - 1]
        c[i] -= t * c[i - 1]
    c[-1] /= b[-1]
    for i in range(n - 2, -1, -1):
        c[i] = (c[i] - d[i] * c[i + 1]) / b[i]
    b[-1] = slopes[-1] + d[-2] * (c[-2] + 2.0 * c[-1])
    b[:-1] = slopes - d[:-1] * (c[1:] + 2.0 * c[:-1])
    d[:-1] = (c[1:] - c[:-1]) / d[:-1]
    c *= 3.0
    d[-1] = d[-2]
    return b, c, d
