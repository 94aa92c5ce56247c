r"""The wild restricted efficient bootstrap (WRE) of Davidson and MacKinnon (2010) for the
coefficient of one endogenous regressor.

Model ``y = Y β + X γ + u``, ``Y = Z π + X δ + v``; H0: ``β = β₀``. With X partialled out
(FWL; rows scaled by ``sqrt(w)``) the steps are:

1. the restricted structural residuals ``ũ = M_X(y - Y β₀)``;
2. the reduced form estimated efficiently under H0: ``Ỹ`` on ``[Z̃, ũ]``, giving ``π̃``, and
   ``v̈ = Ỹ - Z̃ π̃`` (the residuals with the ``ũ`` term put back);
3. ``reps`` samples ``Ỹ* = Z̃ π̃ + M_X(v̈ ⊙ s)``, ``ỹ* = Ỹ* β₀ + M_X(ũ ⊙ s)`` with one
   multiplier ``s`` per row (per cluster under a cluster covariance) shared by both errors;
4. in each, the 2SLS estimate ``β̂* = Ŷ*'ỹ* / Ŷ*'Ỹ*`` (``Ŷ* = P_{Z̃} Ỹ*``) and its t statistic
   ``(β̂* - β₀)/se*`` under the fit's covariance (classical, HC0/HC1 or cluster, the same
   small-sample factors as the fit);
5. the symmetric p-value: the share of ``|t*| ≥ |t|``.

The interval collects the β₀ whose p-value exceeds ``1 - level``, the same multipliers for
every β₀; its ends are found by bisection outward from the estimate, to 1e-6 of the standard
error (with weak instruments the set can be unbounded: an infinite end). All ``reps`` fits of
one β₀ are a few matrix products, never a loop over samples. With absorbed fixed effects the
bootstrap errors are demeaned too (``M_X`` becomes the annihilator of the dummies and X), so
the test equals the dummy-variable fit's.

Reference: Davidson, R. and MacKinnon, J. G. (2010), Wild bootstrap tests for IV regression,
*Journal of Business & Economic Statistics* 28, 128–144.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy.linalg import qr

from attnreg._typing import FloatArray
from attnreg.exceptions import DataError, OptionError
from attnreg.fe.demean import demean
from attnreg.iv._design import group_sums
from attnreg.iv.vcov_binding import is_aer_covariance
from attnreg.inference.bootstrap_draws import draw_weights

if TYPE_CHECKING:
    from attnreg.iv.results import IVResults

__all__ = ["WREBootstrap", "wre_bootstrap"]

_TOL = 1e-6  # the interval's ends to this fraction of the standard error


@dataclass(frozen=True)
class WREBootstrap:
    """The WRE bootstrap test of ``coef = null`` and its interval (:func:`wre_bootstrap`).

    Attributes
    ----------
    term : str
        The endogenous regressor.
    null : float
        β₀ of the test.
    statistic : float
        The observed t statistic ``(β̂ - β₀)/se`` under the fit's covariance.
    p_value : float
        Symmetric bootstrap p-value, the share of ``|t*| ≥ |t|``.
    conf_int : tuple of float
        The ``level`` interval by test inversion (an end may be infinite; NaN when not asked).
    level : float
    reps : int
    weights : str
        The multipliers (``"rademacher"``, ...).
    t_draws : ndarray, shape (reps,)
        The bootstrap t statistics at ``null``.
    """

    term: str
    null: float
    statistic: float
    p_value: float
    conf_int: tuple[float, float]
    level: float
    reps: int
    weights: str
    t_draws: FloatArray = field(repr=False)


@dataclass(frozen=True)
class _Parts:
    """The partialled-out arrays and the fixed pieces of every bootstrap sample."""

    y: FloatArray  # (n,) M_X y on the weighted scale
    d: FloatArray  # (n,) M_X Y
    Qx: FloatArray  # (n, k1) orthonormal basis of the weighted X
    Qz: FloatArray  # (n, l) orthonormal basis of M_X Z
    groups: Any  # cluster codes (n,) or None
    n_groups: int
    kind: str
    scale: float  # the fit's small-sample factor on the sandwich (or σ²'s n - k)
    df_resid: int
    fe: Any = None  # absorbed fixed effects (FixedEffects) or None
    sw: Any = None  # (n,) sqrt of the prior weights (with fixed effects)
    weights: Any = None  # (n,) the prior weights or None

    def annihilate_x(self, V: FloatArray) -> FloatArray:
        """``M_X V`` (with fixed effects ``M_[W½D, X] V``: demeaned, then X partialled out)."""
        if self.fe is not None:
            V = self.sw[:, None] * demean(V / self.sw[:, None], self.fe, self.weights,
                                          method="auto").resid
        return V - self.Qx @ (self.Qx.T @ V) if self.Qx.shape[1] else V

    def t_stats(self, y: FloatArray, d: FloatArray, null: float) -> FloatArray:
        """t statistics of β = null in the 2SLS fits of the columns of y on d, shape (B,)."""
        dhat = self.Qz @ (self.Qz.T @ d)  # (n, B)
        denom = np.sum(dhat * d, axis=0)
        beta = np.sum(dhat * y, axis=0) / denom
        u = y - d * beta
        if self.kind == "classical":
            var = np.sum(u * u, axis=0) / self.df_resid / denom
        else:
            scores = dhat * u
            if self.kind == "cluster":
                scores = group_sums(scores, self.groups)
            var = np.sum(scores * scores, axis=0) / denom**2 * self.scale
        return np.asarray((beta - null) / np.sqrt(var))


def _parts(res: IVResults) -> _Parts:
    f = res.frame
    if f.D.shape[1] != 1:
        raise DataError(f"the WRE bootstrap needs one endogenous regressor, however the model has "
                        f"{f.D.shape[1]}: {', '.join(f.endog_names)}")
    if res.method != "tsls":
        raise OptionError(f"the WRE bootstrap tests the 2SLS t statistic, however: "
                          f"method={res.method!r}; refit with method='tsls'")
    if not is_aer_covariance(res.vcov_kind, res.clusters, dict(res.vcov_options)):
        raise OptionError(f"the WRE bootstrap's t statistics are classical, HC0, HC1 or one-way "
                          f"cluster (CR1), however the fit's covariance is {res.vcov_kind!r} "
                          f"with options {dict(res.vcov_options)}; use "
                          "fit.with_vcov(...) with one of those first")
    sw = np.ones(res.nobs) if f.weights is None else np.sqrt(f.weights)
    X, Z = f.X * sw[:, None], f.Z * sw[:, None]
    Qx = qr(X, mode="economic")[0] if X.shape[1] else np.zeros((res.nobs, 0))

    def mx(v: FloatArray) -> FloatArray:
        return v - Qx @ (Qx.T @ v) if Qx.shape[1] else v

    Qz = qr(mx(Z), mode="economic")[0]
    groups, n_groups = None, res.nobs
    if res.vcov_kind == "cluster":
        groups = np.unique(np.asarray(res.clusters), return_inverse=True)[1]
        n_groups = int(groups.max()) + 1
    n, k = res.nobs, len(res.names) + f.n_absorbed
    scale = {"HC1": n / (n - k), "cluster": n_groups / (n_groups - 1) * (n - 1) / (n - k)}
    return _Parts(y=mx(f.y * sw), d=mx(f.D[:, 0] * sw), Qx=Qx, Qz=Qz, groups=groups,
                  n_groups=n_groups, kind=res.vcov_kind, scale=scale.get(res.vcov_kind, 1.0),
                  df_resid=res.df_resid, fe=f.fe if f.fixed_effects else None, sw=sw,
                  weights=f.weights)


@dataclass(frozen=True)
class _Draws:
    """The multiplied columns, partialled out once for every β₀: ``M_X(v ⊙ s)`` is linear in
    v, and ``ũ``, ``v̈`` are combinations of ỹ, d̃ and the columns of ``Q_z``."""

    y: FloatArray  # (n, B) M_X(ỹ ⊙ s)
    d: FloatArray  # (n, B) M_X(d̃ ⊙ s)
    q: FloatArray  # (l, n, B) M_X(q_j ⊙ s)

    @classmethod
    def of(cls, p: _Parts, S: FloatArray) -> _Draws:
        mult = S.T if p.groups is None else S.T[p.groups]  # (n, B): per row or per cluster
        return cls(y=p.annihilate_x(p.y[:, None] * mult), d=p.annihilate_x(p.d[:, None] * mult),
                   q=np.stack([p.annihilate_x(p.Qz[:, [j]] * mult) for j in range(p.Qz.shape[1])]))


def _p_value(p: _Parts, draws: _Draws, null: float) -> tuple[float, float, FloatArray]:
    """Observed t, symmetric p-value and the bootstrap t's of H0 β = null."""
    t0 = float(p.t_stats(p.y[:, None], p.d[:, None], null)[0])
    u = p.y - p.d * null  # ũ: restricted structural residuals
    coef = np.linalg.lstsq(np.column_stack([p.Qz, u]), p.d, rcond=None)[0][:-1]  # π̃ on Q_z
    # v̈ = d̃ - Q_z π̃, so M_X(v̈ ⊙ s) = M_X(d̃ ⊙ s) - Σ_j π̃_j M_X(q_j ⊙ s)
    d_star = (p.Qz @ coef)[:, None] + draws.d - np.einsum("j,jnb->nb", coef, draws.q)
    y_star = d_star * null + (draws.y - null * draws.d)  # M_X(ũ ⊙ s) = M_X(ỹ ⊙ s) - β₀ M_X(d̃ ⊙ s)
    t_star = p.t_stats(y_star, d_star, null)
    return t0, float(np.mean(np.abs(t_star) >= abs(t0))), t_star


def _end(p: _Parts, S: _Draws, est: float, se: float, alpha: float, sign: int) -> float:
    """The end of the interval on one side: bisection between an accepted and a rejected β₀."""
    inside, step = est, se
    for _ in range(40):  # bracket: double the step until the test rejects
        out = est + sign * step
        if _p_value(p, S, out)[1] <= alpha:
            break
        inside, step = out, 2 * step
    else:
        return sign * math.inf
    while abs(out - inside) > _TOL * se:  # the p-value is a step function of β₀: 1e-6 se is finer
        mid = 0.5 * (inside + out)
        if _p_value(p, S, mid)[1] <= alpha:
            out = mid
        else:
            inside = mid
    return 0.5 * (inside + out)


def wre_bootstrap(res: IVResults, null: float = 0.0, *, reps: int = 999, weights: str = "rademacher",
                  seed: int | np.random.Generator | None = None, level: float = 0.95,
                  interval: bool = True) -> WREBootstrap:
    """The WRE bootstrap p-value of ``coef = null`` and interval of the endogenous coefficient.

    Parameters
    ----------
    res : IVResults
        A 2SLS fit with one endogenous regressor (fixed effects may be absorbed).
    null : float
    reps : int
        Bootstrap samples.
    weights : {"rademacher", "webb", "mammen", "normal"}
        Multipliers, :func:`attnreg.inference.bootstrap_draws.draw_weights` (shape (reps, n) per row,
        (reps, G) per cluster, clusters in sorted order).
    seed : int, Generator or None
        Seeds :func:`numpy.random.default_rng`.
    level : float
        The interval's level.
    interval : bool
        Whether to invert the test for the interval (NaN ends without: the p-value alone
        costs one set of ``reps`` fits, the interval some fifty).

    Returns
    -------
    WREBootstrap
    """
    if not isinstance(reps, (int, np.integer)) or isinstance(reps, bool) or reps < 1:
        raise OptionError(f"reps must be a positive integer, however: {reps=}")
    if not 0 < level < 1:
        raise OptionError(f"level must be strictly between 0 and 1, however: {level=}")
    p = _parts(res)
    S = _Draws.of(p, draw_weights(np.random.default_rng(seed), weights, int(reps), p.n_groups))
    t0, pv, t_star = _p_value(p, S, float(null))
    est, se = float(res.coef.iloc[-1]), float(res.std_err.iloc[-1])
    alpha = 1 - level
    ci = ((_end(p, S, est, se, alpha, -1), _end(p, S, est, se, alpha, 1)) if interval
          else (math.nan, math.nan))
    return WREBootstrap(term=res.frame.endog_names[0], null=float(null), statistic=t0,
                        p_value=pv, conf_int=ci, level=level, reps=int(reps), weights=weights,
                        t_draws=t_star)
