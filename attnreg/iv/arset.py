r"""Anderson–Rubin weak-instrument-robust test of H0: β_D = β₀ and its confidence set.

With ``ỹ = y - D β₀``, the AR statistic tests that the excluded instruments have zero
coefficients in the regression of ``ỹ`` on ``[X, Z]`` (Anderson and Rubin, 1949):

* F form: ``AR_F = [ỹ'P_{Z̃}ỹ / l] / [ỹ'M_Q ỹ / (n - L)] ~ F(l, n - L)``,
* χ² form: ``AR_χ² = n ỹ'P_{Z̃}ỹ / ỹ'M_Q ỹ ~ χ²(l)`` (ivreg2's ``archi2``), or with a robust or
  cluster covariance (``kind``), the Wald statistic of those coefficients, and ``AR_F = AR_χ²/l``.

For one endogenous regressor the homoskedastic F-form set ``{β₀ : AR_F(β₀) ≤ c}``,
``c = F_{1-α}(l, n - L)``, is exactly ``{β : a₂β² + a₁β + a₀ ≤ 0}`` with
``a(β) = ||Q_z'(y - dβ)||²`` and ``b(β) = ||M_Q(y - dβ)||²`` quadratics and
``q(β) = a(β) - c l/(n - L) b(β)``: a bounded interval (``a₂ > 0``), the union of two rays
(``a₂ < 0`` with real roots), the whole real line (``a₂ < 0`` without real roots) or empty
(``a₂ > 0`` without real roots).  Dufour (1997), Mikusheva (2010) discuss these shapes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import stats

from attnreg.exceptions import DataError
from attnreg.iv._design import make_design
from attnreg.iv._wald import robust_wald

__all__ = ["ARSet", "ARTest", "anderson_rubin_set", "anderson_rubin_test"]


@dataclass(frozen=True)
class ARTest:
    """Anderson–Rubin test of H0: β_D = β₀.

    Attributes
    ----------
    f : float
    f_pvalue : float
        From F(l, n - L) (classical) or χ²(l)/l (robust kinds).
    chi2 : float
    chi2_pvalue : float
    df : tuple of int
        ``(l, n - L)``.
    kind : str
    """

    f: float
    f_pvalue: float
    chi2: float
    chi2_pvalue: float
    df: tuple[int, int]
    kind: str


@dataclass(frozen=True)
class ARSet:
    """Anderson–Rubin confidence set for one endogenous coefficient.

    Attributes
    ----------
    shape : str
        ``"interval"`` (``[lower, upper]``), ``"rays"`` (``(-inf, lower] ∪ [upper, inf)``),
        ``"real line"``, ``"empty"`` or, when ``a₂ = 0`` exactly, ``"ray"`` (``[lower, upper]``
        with one infinite end).
    lower, upper : float
        Endpoints (``-inf``/``inf`` for the real line, NaN when empty).
    level : float
        Confidence level ``1 - α``.
    critical_value : float
        ``F_{1-α}(l, n - L)``.
    coefficients : tuple of float
        ``(a₂, a₁, a₀)`` of the quadratic ``q(β) ≤ 0`` that defines the set.
    """

    shape: str
    lower: float
    upper: float
    level: float
    critical_value: float
    coefficients: tuple[float, float, float]

    def contains(self, beta: float) -> bool:
        """Whether ``beta`` is in the set."""
        a2, a1, a0 = self.coefficients
        return bool(a2 * beta**2 + a1 * beta + a0 <= 0)


def _linear_set(a1: float, a0: float, alpha: float, c: float) -> ARSet:
    coefs = (0.0, a1, a0)
    if a1 == 0.0:
        shape, lo, hi = ("real line", -np.inf, np.inf) if a0 <= 0 else ("empty", np.nan, np.nan)
    elif a1 > 0:
        shape, lo, hi = "ray", -np.inf, -a0 / a1
    else:
        shape, lo, hi = "ray", -a0 / a1, np.inf
    return ARSet(shape=shape, lower=float(lo), upper=float(hi), level=1 - alpha, critical_value=c,
                 coefficients=coefs)


def anderson_rubin_test(y: npt.ArrayLike, X: npt.ArrayLike | None, D: npt.ArrayLike,
                        Z: npt.ArrayLike, beta0: npt.ArrayLike, weights: npt.ArrayLike | None = None,
                        *, kind: str = "classical", clusters: npt.ArrayLike | None = None) -> ARTest:
    """AR test of H0: the coefficients of D equal ``beta0`` (shape (k2,)); see the module doc."""
    d = make_design(y, X, D, Z, weights)
    b0 = np.atleast_1d(np.asarray(beta0, dtype=np.float64))
    if b0.shape != (d.D.shape[1],):
        raise DataError(f"beta0 must have one value per column of D ({d.D.shape[1]}); got shape {b0.shape}")
    n, L, nz = d.n, d.X.shape[1] + d.Z.shape[1], d.Z.shape[1]
    yt = d.y - d.D @ b0
    g = d.Qz.T @ yt
    r = d.annihilate(yt)
    if kind == "classical":
        chi2 = n * float(g @ g) / float(r @ r)
        f = chi2 * (n - L) / n / nz
        fp = float(stats.f.sf(f, nz, n - L))
    else:
        chi2 = robust_wald(g, d.Qz * r[:, None], kind, clusters, L)
        f = chi2 / nz
        fp = float(stats.chi2.sf(chi2, nz))
    return ARTest(f=f, f_pvalue=fp, chi2=chi2, chi2_pvalue=float(stats.chi2.sf(chi2, nz)),
                  df=(nz, n - L), kind=kind)


def anderson_rubin_set(y: npt.ArrayLike, X: npt.ArrayLike | None, D: npt.ArrayLike, Z: npt.ArrayLike,
                       weights: npt.ArrayLike | None = None, *, alpha: float = 0.05,
                       absorbed: int = 0) -> ARSet:
    """Homoskedastic AR confidence set of one endogenous coefficient, by exact inversion.

    Parameters
    ----------
    y : array_like, shape (n,)
    X : array_like, shape (n, k1) or None
    D : array_like, shape (n,) or (n, 1)
    Z : array_like, shape (n, l)
    weights : array_like, shape (n,), optional
    alpha : float
        Test size; the set has level ``1 - alpha``.
    absorbed : int
        Levels of fixed effects absorbed from y, X, D and Z beforehand: counted in ``L``.

    Returns
    -------
    ARSet
    """
    d = make_design(y, X, D, Z, weights)
    if d.D.shape[1] != 1:
        raise DataError(f"the AR confidence set needs exactly one endogenous regressor; D has {d.D.shape[1]}")
    n, L, nz = d.n, d.X.shape[1] + d.Z.shape[1] + absorbed, d.Z.shape[1]
    c = float(stats.f.ppf(1 - alpha, nz, n - L))
    kc = c * nz / (n - L)
    dv = d.D[:, 0]
    gz, gy = d.Qz.T @ dv, d.Qz.T @ d.y
    md, my = d.annihilate(dv), d.annihilate(d.y)
    a2 = float(gz @ gz) - kc * float(md @ md)
    a1 = -2.0 * (float(gz @ gy) - kc * float(md @ my))
    a0 = float(gy @ gy) - kc * float(my @ my)
    disc = a1 * a1 - 4 * a2 * a0
    coefs = (a2, a1, a0)
    if a2 == 0.0:  # degenerate (measure zero): a half line or all/nothing
        return _linear_set(a1, a0, alpha, c)
    if disc < 0:
        shape, lo, hi = ("empty", np.nan, np.nan) if a2 > 0 else ("real line", -np.inf, np.inf)
    else:
        sq = np.sqrt(disc)
        # numerically stable roots (no cancellation)
        qq = -0.5 * (a1 + np.copysign(sq, a1))
        roots = sorted([qq / a2, a0 / qq]) if qq != 0 else [0.0, 0.0]
        lo, hi = roots
        shape = "interval" if a2 > 0 else "rays"
    return ARSet(shape=shape, lower=float(lo), upper=float(hi), level=1 - alpha, critical_value=c,
                 coefficients=coefs)
