"""The coordinates the covariance estimators compute in: a spectral fit's components.

Every spectral fit is linear in the weighted response ỹ = sqrt(w) y:

    coef = M [c'ỹ ; U'ỹ],     c = sqrt(w)/Σw (intercept part),  U the left singular vectors,

so Var(coef) = M [c U]' Σ [c U] M' for any Cov(ỹ) = Σ. Classical inference uses Σ = σ² I
(then [c U]'[c U] = diag(1/Σw, I) because U ⟂ sqrt(w)); the sandwich estimators plug in
squared residuals (HC0–HC3), a Bartlett-kernel long-run covariance (Newey–West HAC) or
sums of scores per cluster (Σ_g s_g s_g', s_g = Σ_{i∈g} e_i [c_i, U_i]).
For OLS this is exactly (X'WX)⁻¹ and the usual sandwiches; for ridge and PCR it is the
covariance conditional on the chosen λ or k.

Scale. The covariance is computed as V = diag(2^E) V_z diag(2^E) with integer exponents E
(one per coefficient: the response's scale over the column's), so V_z is of the order of
the residual variance of the rescaled response, and standard errors, intervals and the Wald
test are computed from V_z and E: they are right even where an entry of V itself (a square
of the response's scale over a column's) lies outside the float64 range. With E = 0 nothing
changes, and multiplying by powers of two is exact.

The joint test. :func:`wald_f` is b' V⁻¹ b / q for the non-intercept coefficients under the
covariance in use (statsmodels' ``fvalue`` with a ``cov_type``, R's ``lmtest::waldtest`` with
``vcov=``). The slopes are b = B a with a = U'ỹ over the components the filter keeps and B of
full column rank, so b' V⁻¹ b = a' Ω⁻¹ a with Ω the covariance of a (a small positive definite
solve; aliased columns are not in b, and q is the number of components: the rank for OLS and
ridge, k for PCR).

:class:`MiddleInputs` is what an estimator's ``middle`` may read of a fit;
:func:`middle_matrix` asks the estimator in use for the covariance of the components,
:func:`coef_map` and :func:`vcov_scaled` carry it to the coefficients, :func:`wald_f` is the
joint test. The estimators themselves and their registry are in
:mod:`attnreg.inference.vcov.registry`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import scipy.linalg as sla

from attnreg._typing import FloatArray, IntArray
from attnreg._warn import warn_user
from attnreg.exceptions import InferenceWarning
from attnreg.scaling import binary_exponents

if TYPE_CHECKING:
    from attnreg.inference.vcov.registry import VcovSpec
    from attnreg.linear.spectral import Spectrum

__all__ = ["MiddleInputs", "coef_map", "middle_matrix", "scale_back", "vcov_matrix",
           "vcov_scaled", "wald_f"]


@dataclass(frozen=True)
class MiddleInputs:
    """What a covariance estimator may use of a fit, on the rescaled response.

    Attributes
    ----------
    sigma2 : float
        Residual variance (divided by ``y_scale²``).
    resid_w : ndarray, shape (n_obs,)
        Weighted residuals sqrt(w) e divided by ``y_scale``.
    hat : ndarray, shape (n_obs,)
        Hat values (NaN when the estimator's :attr:`~CovarianceEstimator.needs_hat` is
        False: they are then not computed).
    df_resid : float
        Residual degrees of freedom n − tr(H).
    f : ndarray, shape (rank,) or None
        Filter factors of the fit (None: OLS, all ones).
    """

    sigma2: float
    resid_w: FloatArray
    hat: FloatArray
    df_resid: float
    f: FloatArray | None = None


def coef_map(sp: Spectrum, f: FloatArray, n_coef: int) -> tuple[FloatArray, IntArray]:
    """M_z, shape (n_coef, 1 + rank), and E with coef = diag(2^E) M_z [c'ỹ ; U'ỹ].

    ỹ is the spectrum's (rescaled) response, and c = sqrt(w)/Σw. The coefficient map M
    (coef = M [c'ỹ ; U'ỹ] on the response's own scale; aliased rows zero) has row j equal to
    2^(E_j) times row j of M_z / y_scale, with E_j (the response's binary exponent plus that
    of the row's largest entry) chosen so that M_z is of order one: the entries of M itself
    are ratios of the response's scale to the columns' and may lie outside float64.

    Examples
    --------
    >>> import numpy as np
    >>> from statsmodels.datasets import longley
    >>> from attnreg.linear import filters, spectral
    >>> from attnreg.inference.vcov.registry import coef_map
    >>> df = longley.load_pandas().data
    >>> X = np.column_stack([np.ones(16), df[["GNP", "UNEMP", "ARMED", "POP", "YEAR"]]])
    >>> sp = spectral.decompose(X, df["TOTEMP"].to_numpy(), intercept=0, weights=None,
    ...                         scaling="sd")
    >>> Mz, E = coef_map(sp, filters.ols_filter(sp.s), 6)
    >>> coef = np.ldexp(Mz @ np.r_[0.0, sp.uty], E)
    >>> print(f"{coef[2]:.4f}")  # the UNEMP slope (the intercept's own part is in c'ỹ)
    -1.9721
    """
    Mz = np.zeros((n_coef, 1 + sp.rank))
    E = np.zeros(n_coef, dtype=np.int64)
    B = sp.V * (f / sp.s)  # (n_kept, rank); M[kept] = B / d
    d = sp.scale[sp.kept]
    big = np.abs(B).max(axis=1, initial=0.0)
    t = np.where(big > 0, binary_exponents(big) - binary_exponents(d), 0)
    Mz[sp.kept, 1:] = B / np.ldexp(d, t)[:, None]  # = (B / d) / 2^t, exactly
    E[sp.kept] = t
    if sp.intercept is not None:
        row = np.r_[1.0, -(sp.center[sp.kept] / d) @ B]  # x̄/d: of order one at any scale
        t0 = int(binary_exponents(np.abs(row).max()))
        Mz[sp.intercept] = np.ldexp(row, -t0)
        E[sp.intercept] = t0
    return Mz, E + sp.y_exponent


def middle_matrix(sp: Spectrum, *, spec: VcovSpec, sigma2: float, resid_w: FloatArray,
                  hat: FloatArray, df_resid: float, f: FloatArray | None = None) -> FloatArray:
    """Covariance of [c'ỹ ; U'ỹ] / y_scale, shape (1 + rank, 1 + rank), under ``spec``.

    ``sigma2`` and ``resid_w`` are on the rescaled response (divided by ``sp.y_scale``).
    Classical: σ² diag(1/Σw, I) (no intercept part without one); HC0–HC3, HAC and the
    cluster-robust estimators: the meat of the sandwich Σ s s' of score sums s = Σ e [c, U],
    with their small-sample factors. ``f`` (the filter factors; None for OLS) is used by
    estimators that need the hat matrix's blocks (CR2).
    """
    inputs = MiddleInputs(sigma2=sigma2, resid_w=resid_w, hat=hat, df_resid=df_resid, f=f)
    return spec.estimator.middle(sp, spec, inputs)


def vcov_scaled(sp: Spectrum, f: FloatArray, n_coef: int,
                middle: FloatArray) -> tuple[FloatArray, IntArray]:
    """V_z and E with Var(coef) = diag(2^E) V_z diag(2^E); NaN rows/columns for aliased ones.

    ``middle`` is :func:`middle_matrix` of the covariance wanted.
    """
    Mz, E = coef_map(sp, f, n_coef)
    V = Mz @ middle @ Mz.T
    dead = np.setdiff1d(np.arange(n_coef), np.r_[sp.kept, [] if sp.intercept is None
                                                   else [sp.intercept]].astype(int))
    V[dead, :] = np.nan
    V[:, dead] = np.nan
    return (V + V.T) / 2.0, E


def scale_back(Vz: FloatArray, E: IntArray) -> FloatArray:
    """diag(2^E) V_z diag(2^E), exactly (inf or 0 only where an entry leaves float64)."""
    with np.errstate(over="ignore", under="ignore"):
        return np.ldexp(Vz, E[:, None] + E[None, :])


def vcov_matrix(sp: Spectrum, f: FloatArray, n_coef: int, *, spec: VcovSpec, sigma2: float,
                resid_w: FloatArray, hat: FloatArray, df_resid: float) -> FloatArray:
    """Covariance of the coefficients, shape (n_coef, n_coef); NaN rows/columns for aliased ones.

    Parameters
    ----------
    sp : Spectrum
    f : ndarray, shape (rank,)
        Filter factors of the fit.
    spec : VcovSpec
    sigma2 : float
        Residual variance (classical only).
    resid_w : ndarray, shape (n_obs,)
        Weighted residuals sqrt(w) e.
    hat : ndarray, shape (n_obs,)
        Hat values (HC2, HC3).
    df_resid : float
        Residual degrees of freedom (HC1 and adjusted HAC scale by n / df_resid).

    Examples
    --------
    >>> import numpy as np
    >>> from statsmodels.datasets import longley
    >>> from attnreg.linear import filters, spectral
    >>> df = longley.load_pandas().data
    >>> X = np.column_stack([np.ones(16), df[["GNP", "UNEMP", "ARMED", "POP", "YEAR"]]])
    >>> y = df["TOTEMP"].to_numpy()
    >>> sp = spectral.decompose(X, y, intercept=0, weights=None, scaling="sd")
    >>> from attnreg.inference.vcov.registry import make_vcov_spec, vcov_matrix
    >>> f = filters.ols_filter(sp.s)
    >>> e = y - X @ filters.apply_filter(sp, f, 6).coef
    >>> h = filters.hat_diagonal(sp, f)
    >>> for kind in ("classical", "HC3"):
    ...     V = vcov_matrix(sp, f, 6, spec=make_vcov_spec(kind), sigma2=e @ e / 10,
    ...                     resid_w=e, hat=h, df_resid=10.0)
    ...     print(kind, f"{np.sqrt(V[2, 2]):.4f}")
    classical 0.3861
    HC3 0.7378
    """
    e = sp.y_exponent
    middle = middle_matrix(sp, spec=spec, sigma2=float(np.ldexp(sigma2, -2 * e)),
                           resid_w=np.ldexp(resid_w, -e) if e else resid_w, hat=hat,
                           df_resid=df_resid)
    return scale_back(*vcov_scaled(sp, f, n_coef, middle))


def wald_f(sp: Spectrum, f: FloatArray, coef: FloatArray,
           middle: FloatArray) -> tuple[float, int]:
    """The Wald statistic b' V⁻¹ b / q of the non-intercept coefficients, and q.

    Parameters
    ----------
    sp : Spectrum
    f : ndarray, shape (rank,)
        Filter factors of the fit.
    coef : ndarray, shape (n_coef,)
        The coefficients (as reported: refined for OLS); only the kept ones are used.
    middle : ndarray, shape (1 + rank, 1 + rank)
        :func:`middle_matrix` of the covariance in use.

    Returns
    -------
    statistic : float
        NaN, with an :class:`~attnreg.exceptions.InferenceWarning`, when the covariance of
        the slopes is singular (e.g. HC residuals that vanish on a component).
    q : int
        Number of restrictions: the components the filter keeps (f > 0).

    Examples
    --------
    >>> import numpy as np
    >>> from statsmodels.datasets import longley
    >>> from attnreg.linear import filters, spectral
    >>> from attnreg.inference.vcov.registry import make_vcov_spec, middle_matrix, wald_f
    >>> df = longley.load_pandas().data
    >>> X = np.column_stack([np.ones(16), df[["GNP", "UNEMP", "ARMED", "POP", "YEAR"]]])
    >>> y = df["TOTEMP"].to_numpy()
    >>> sp = spectral.decompose(X, y, intercept=0, weights=None, scaling="sd")
    >>> f = filters.ols_filter(sp.s)
    >>> coef = filters.apply_filter(sp, f, 6).coef
    >>> e = y - X @ coef
    >>> mid = middle_matrix(sp, spec=make_vcov_spec("classical"), sigma2=e @ e / 10,
    ...                     resid_w=e, hat=filters.hat_diagonal(sp, f), df_resid=10.0)
    >>> stat, q = wald_f(sp, f, coef, mid)
    >>> print(f"{stat:.1f} on {q}")  # classical OLS: the usual F statistic
    438.8 on 5
    """
    act = np.flatnonzero(f > 0)
    q = int(act.size)
    if not q:
        return float("nan"), 0
    # the components a = U'ỹ / y_scale behind the reported slopes: b = V diag(f/s) a / d
    with np.errstate(over="ignore", invalid="ignore"):
        bd = coef[sp.kept] * sp.scale[sp.kept]
    a = (sp.V[:, act].T @ np.ldexp(bd, -sp.y_exponent)) * (sp.s[act] / f[act])
    omega = middle[1:, 1:][np.ix_(act, act)]
    try:
        factor = sla.cho_factor(omega, lower=True)
    except (np.linalg.LinAlgError, ValueError):
        warn_user("the covariance of the coefficients is singular (or not finite) on the "
                      "components of the fit, so the joint Wald F test is not defined: NaN",
                      InferenceWarning)
        return float("nan"), q
    return float(a @ sla.cho_solve(factor, a)) / q, q
