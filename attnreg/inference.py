"""Covariance estimators for coefficients of a linear smoother: classical, HC0–HC3, HAC.

Every spectral fit is linear in the weighted response ỹ = sqrt(w) y:

    coef = M [c'ỹ ; U'ỹ],     c = sqrt(w)/Σw (intercept part),  U the left singular vectors,

so Var(coef) = M [c U]' Σ [c U] M' for any Cov(ỹ) = Σ. Classical inference uses Σ = σ² I
(then [c U]'[c U] = diag(1/Σw, I) because U ⟂ sqrt(w)); the sandwich estimators plug in
squared residuals (HC0–HC3) or a Bartlett-kernel long-run covariance (Newey–West HAC).
For OLS this is exactly (X'WX)⁻¹ and the usual sandwiches; for ridge and PCR it is the
covariance conditional on the chosen λ or k.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from attnreg._typing import FloatArray
from attnreg.exceptions import OptionError
from attnreg.spectral import Spectrum

VcovType = Literal["classical", "HC0", "HC1", "HC2", "HC3", "HAC"]
VCOV_TYPES: tuple[str, ...] = ("classical", "HC0", "HC1", "HC2", "HC3", "HAC")


@dataclass(frozen=True)
class VcovSpec:
    """A covariance choice: its type and options.

    Attributes
    ----------
    kind : str
        One of ``VCOV_TYPES``.
    maxlags : int or None
        HAC truncation lag (Bartlett kernel weights 1 − l/(maxlags+1)).
    adjust : bool
        HAC only: multiply by n/(n − df) (sandwich's ``adjust=TRUE``).
    """

    kind: str = "classical"
    maxlags: int | None = None
    adjust: bool = False

    def label(self) -> str:
        """Short description used in reports."""
        if self.kind == "HAC":
            adjusted = ", adjusted" if self.adjust else ""
            return f"HAC (Newey-West, Bartlett kernel, {self.maxlags} lags{adjusted})"
        if self.kind == "classical":
            return "classical (iid errors)"
        return f"heteroskedasticity-robust {self.kind}"


def make_vcov_spec(kind: str, *, maxlags: int | None = None, adjust: bool = False,
                   n_obs: int | None = None) -> VcovSpec:
    """Validate a covariance request; the HAC default lag is floor(4 (n/100)^(2/9)).

    Examples
    --------
    >>> from attnreg.inference import make_vcov_spec
    >>> make_vcov_spec("HAC", n_obs=16)
    VcovSpec(kind='HAC', maxlags=2, adjust=False)
    >>> make_vcov_spec("HC3").label()
    'heteroskedasticity-robust HC3'
    """
    if kind not in VCOV_TYPES:
        raise OptionError(f"vcov type must be one of {', '.join(map(repr, VCOV_TYPES))}, "
                          f"however: {kind=}")
    if kind != "HAC":
        if maxlags is not None:
            raise OptionError(f"maxlags applies to vcov 'HAC' only, however: {kind=}, {maxlags=}")
        return VcovSpec(kind)
    if maxlags is None:
        maxlags = int(np.floor(4 * ((n_obs or 100) / 100.0) ** (2.0 / 9.0)))
    if not isinstance(maxlags, (int, np.integer)) or isinstance(maxlags, bool) or maxlags < 0:
        raise OptionError(f"maxlags must be a non-negative integer, however: {maxlags=}")
    if n_obs is not None and maxlags >= n_obs:
        raise OptionError(f"maxlags must be smaller than the number of observations ({n_obs}), "
                          f"however: {maxlags=}")
    return VcovSpec("HAC", int(maxlags), bool(adjust))


def coef_map(sp: Spectrum, f: FloatArray, n_coef: int) -> FloatArray:
    """The matrix M, shape (n_coef, 1 + rank), with coef = M [c'ỹ ; U'ỹ] (aliased rows zero)."""
    M = np.zeros((n_coef, 1 + sp.rank))
    B = (sp.V * (f / sp.s)) / sp.scale[sp.kept][:, None]  # (n_kept, rank)
    M[sp.kept, 1:] = B
    if sp.intercept is not None:
        M[sp.intercept, 0] = 1.0
        M[sp.intercept, 1:] = -sp.center[sp.kept] @ B
    return M


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
    >>> from attnreg import spectral
    >>> df = longley.load_pandas().data
    >>> X = np.column_stack([np.ones(16), df[["GNP", "UNEMP", "ARMED", "POP", "YEAR"]]])
    >>> y = df["TOTEMP"].to_numpy()
    >>> sp = spectral.decompose(X, y, intercept=0, weights=None, scaling="sd")
    >>> from attnreg.inference import make_vcov_spec, vcov_matrix
    >>> f = spectral.ols_filter(sp.s)
    >>> e = y - X @ spectral.apply_filter(sp, f, 6).coef
    >>> h = spectral.hat_diagonal(sp, f)
    >>> for kind in ("classical", "HC3"):
    ...     V = vcov_matrix(sp, f, 6, spec=make_vcov_spec(kind), sigma2=e @ e / 10,
    ...                     resid_w=e, hat=h, df_resid=10.0)
    ...     print(kind, f"{np.sqrt(V[2, 2]):.4f}")
    classical 0.3861
    HC3 0.7378
    """
    M = coef_map(sp, f, n_coef)
    n = sp.n_obs
    if spec.kind == "classical":
        middle = np.eye(1 + sp.rank) * sigma2
        middle[0, 0] = sigma2 / sp.sum_w if sp.intercept is not None else 0.0
    else:
        middle = _meat(sp, _residual_scale(spec.kind, resid_w, hat), spec.maxlags or 0)
        if spec.kind == "HC1" or (spec.kind == "HAC" and spec.adjust):
            middle *= n / df_resid
    V = M @ middle @ M.T
    dead = np.setdiff1d(np.arange(n_coef), np.r_[sp.kept, [] if sp.intercept is None
                                                   else [sp.intercept]].astype(int))
    V[dead, :] = np.nan
    V[:, dead] = np.nan
    return (V + V.T) / 2.0


def _residual_scale(kind: str, resid_w: FloatArray, hat: FloatArray) -> FloatArray:
    if kind == "HC2":
        return resid_w / np.sqrt(1.0 - hat)
    if kind == "HC3":
        return resid_w / (1.0 - hat)
    return resid_w


def _meat(sp: Spectrum, e: FloatArray, maxlags: int) -> FloatArray:
    """Σ_l k_l (Γ_l + Γ_l') of the scores s_i = e_i [c_i, U_i], in row blocks (Bartlett k_l).

    Without lags the cross-products are accumulated block by block (nothing n_obs × rank is
    held); HAC needs products across block boundaries, so the scores are formed whole.
    """
    c = sp.sqrt_w / sp.sum_w if sp.intercept is not None else np.zeros(sp.n_obs)
    k = 1 + sp.rank
    if maxlags == 0:
        S = np.zeros((k, k))
        for start, stop, U in sp.U.blocks():
            block = np.empty((stop - start, k))
            block[:, 0] = c[start:stop] * e[start:stop]
            np.multiply(U, e[start:stop, None], out=block[:, 1:])
            S += block.T @ block
        return S
    scores = np.empty((sp.n_obs, k))
    scores[:, 0] = c * e
    for start, stop, U in sp.U.blocks():
        np.multiply(U, e[start:stop, None], out=scores[start:stop, 1:])
    S = scores.T @ scores
    for lag in range(1, maxlags + 1):
        gamma = scores[lag:].T @ scores[:-lag]
        S += (1.0 - lag / (maxlags + 1.0)) * (gamma + gamma.T)
    return S
