"""Results of a spectral fit (OLS, ridge, PCR): the coefficient view and the attention view."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from scipy import stats

from attnreg._typing import FloatArray
from attnreg.attention import AttentionWeights, Embedding, linear_weight_fn
from attnreg.design import Design
from attnreg.exceptions import OptionError
from attnreg.inference import VcovSpec, make_vcov_spec, vcov_matrix
from attnreg.selection import Selection
from attnreg.spectral import Filtered, Spectrum, hat_and_weight_stats

INTERVALS = ("none", "confidence", "prediction")


class FTest(NamedTuple):
    """Overall F test of the model against the intercept-only model (or the null model)."""

    statistic: float
    df1: float
    df2: float
    p_value: float


@dataclass(frozen=True)
class LinearResults:
    """A fitted spectral model. Immutable; derived statistics are computed once, on first use.

    Attributes
    ----------
    design : Design
        The model frame (response, design matrix, names, row labels, weights).
    method : str
        ``"ols"``, ``"ridge"`` or ``"pcr"``.
    spectrum : Spectrum
        The decomposition of the scaled design.
    filtered : Filtered
        Filter factors, coefficients on the original scale and effective df.
    selection : Selection or None
        How λ (ridge) or k (PCR) was chosen.
    vcov_spec : VcovSpec
        The covariance estimator in use; change it with :meth:`with_vcov`.
    call : str
        The call, for reports.
    standardize : bool
        Whether predictors were standardised before filtering (ridge and PCR).

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import longley
    >>> df = longley.load_pandas().data
    >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP + ARMED + POP + YEAR", data=df)
    >>> fit.method, fit.nobs, fit.df_resid
    ('ols', 16, 10.0)
    >>> print(f"{fit.coef['UNEMP']:.4f} (se {fit.std_err['UNEMP']:.4f})")
    -1.9721 (se 0.3861)
    >>> print(f"R2 {fit.r_squared:.4f}, sigma {fit.sigma:.2f}")
    R2 0.9955, sigma 289.72
    """

    design: Design
    method: str
    spectrum: Spectrum = field(repr=False)
    filtered: Filtered = field(repr=False)
    selection: Selection | None
    vcov_spec: VcovSpec
    call: str
    standardize: bool

    # ------------------------------------------------------------ basic quantities
    @property
    def names(self) -> list[str]:
        """Design column (coefficient) names."""
        return self.design.column_names

    @property
    def nobs(self) -> int:
        """Number of observations used."""
        return self.design.n_obs

    @property
    def lam(self) -> float | None:
        """Ridge penalty λ (on the standardised scale), or None."""
        return self.selection.value if self.method == "ridge" and self.selection else None

    @property
    def k(self) -> int | None:
        """Number of principal components (PCR), or None."""
        return int(self.selection.value) if self.method == "pcr" and self.selection else None

    @property
    def edf(self) -> float:
        """Effective degrees of freedom tr(H), counting the intercept (= rank for OLS)."""
        return self.filtered.edf

    @property
    def aliased(self) -> list[str]:
        """Names of coefficients not estimable (linear combinations of earlier columns)."""
        return [self.names[j] for j in self.spectrum.aliased]

    @cached_property
    def coef(self) -> pd.Series:
        """Coefficients on the original scale of the design (NaN where aliased)."""
        return pd.Series(self.filtered.coef, index=self.names, name="coef")

    @cached_property
    def fitted(self) -> pd.Series:
        """Fitted values, indexed by the row labels of the data."""
        return pd.Series(self.design.X @ np.nan_to_num(self.filtered.coef), name="fitted",
                         index=self.design.row_labels)

    @cached_property
    def resid(self) -> pd.Series:
        """Response residuals y − ŷ (unweighted), indexed by row labels."""
        if "fitted" in self.__dict__:
            e = self.design.y - self.fitted.to_numpy()
        else:  # without caching the fitted values (one vector of n_obs less held)
            e = self.design.X @ np.nan_to_num(self.filtered.coef)
            np.subtract(self.design.y, e, out=e)
        return pd.Series(e, index=self.design.row_labels, name="resid", copy=False)

    @cached_property
    def _resid_w(self) -> FloatArray:
        e = self.resid.to_numpy()
        return self.spectrum.sqrt_w * e if self.spectrum.weighted else e

    @cached_property
    def _row_pass(self) -> tuple[FloatArray, FloatArray, FloatArray, int]:
        """Hat values and the summary's sampled weight statistics, from one pass over the rows.

        The queries are every training row for small n, else about 2e7 / (n (rank + 1))
        evenly spaced rows (at least 20).
        """
        n, sp = self.nobs, self.spectrum
        m = int(min(n, max(20, 2e7 / max(n * (sp.rank + 1), 1))))
        rows = np.unique(np.linspace(0, n - 1, m).round().astype(np.int64))
        h, neg, lev = hat_and_weight_stats(sp, self.filtered.f, rows)
        return h, neg, lev, int(rows.size)

    @cached_property
    def _hat(self) -> FloatArray:
        return self._row_pass[0]

    @cached_property
    def rss(self) -> float:
        """(Weighted) residual sum of squares."""
        return float(self._resid_w @ self._resid_w)

    @property
    def df_model(self) -> float:
        """Model degrees of freedom, excluding the intercept (effective for ridge/PCR)."""
        return self.edf - (1.0 if self.design.intercept else 0.0)

    @property
    def df_resid(self) -> float:
        """Residual degrees of freedom n − tr(H)."""
        return self.nobs - self.edf

    @cached_property
    def sigma(self) -> float:
        """Residual standard error sqrt(RSS / df_resid)."""
        return float(np.sqrt(self.rss / self.df_resid)) if self.df_resid > 0 else float("nan")

    @cached_property
    def tss(self) -> float:
        """Total sum of squares: centred with an intercept, uncentred without (as R)."""
        if self.design.intercept:
            return self.spectrum.yss
        yw = self.spectrum.sqrt_w * self.design.y
        return float(yw @ yw)

    @property
    def r_squared(self) -> float:
        """R² = 1 − RSS/TSS (uncentred when there is no intercept, as in R)."""
        return 1.0 - self.rss / self.tss

    @property
    def adj_r_squared(self) -> float:
        """Adjusted R² = 1 − (1 − R²)(n − intercept)/df_resid."""
        n0 = self.nobs - (1 if self.design.intercept else 0)
        return 1.0 - (1.0 - self.r_squared) * n0 / self.df_resid

    @cached_property
    def f_test(self) -> FTest:
        """Overall F statistic (approximate for ridge/PCR: uses effective df)."""
        df1, df2 = self.df_model, self.df_resid
        if df1 <= 0 or df2 <= 0:
            return FTest(float("nan"), df1, df2, float("nan"))
        stat = ((self.tss - self.rss) / df1) / (self.rss / df2)
        return FTest(float(stat), float(df1), float(df2), float(stats.f.sf(stat, df1, df2)))

    @cached_property
    def loglik(self) -> float:
        """Gaussian log-likelihood at the MLE of σ² (R's ``logLik.lm``, prior weights included)."""
        n = self.nobs
        w = self.design.weights
        log_w = float(np.sum(np.log(w))) if w is not None else 0.0
        return 0.5 * (log_w - n * (np.log(2 * np.pi) + 1.0 - np.log(n) + np.log(self.rss)))

    @property
    def aic(self) -> float:
        """AIC = −2 logLik + 2 (edf + 1); σ counts as a parameter, as in R."""
        return -2.0 * self.loglik + 2.0 * (self.edf + 1.0)

    @property
    def bic(self) -> float:
        """BIC = −2 logLik + log(n) (edf + 1), as in R."""
        return -2.0 * self.loglik + np.log(self.nobs) * (self.edf + 1.0)

    # ------------------------------------------------------------ inference
    @cached_property
    def vcov(self) -> pd.DataFrame:
        """Covariance matrix of the coefficients under :attr:`vcov_spec` (NaN where aliased)."""
        V = vcov_matrix(self.spectrum, self.filtered.f, len(self.names), spec=self.vcov_spec,
                        sigma2=self.sigma**2, resid_w=self._resid_w, hat=self._hat,
                        df_resid=self.df_resid)
        return pd.DataFrame(V, index=self.names, columns=self.names)

    @cached_property
    def std_err(self) -> pd.Series:
        """Standard errors of the coefficients."""
        return pd.Series(np.sqrt(np.diag(self.vcov.to_numpy())), index=self.names, name="std_err")

    @cached_property
    def t_value(self) -> pd.Series:
        """t statistics coef / std_err."""
        return (self.coef / self.std_err).rename("t_value")

    @cached_property
    def p_value(self) -> pd.Series:
        """Two-sided p-values from Student's t on df_resid degrees of freedom."""
        p = 2.0 * stats.t.sf(np.abs(self.t_value.to_numpy()), self.df_resid)
        return pd.Series(p, index=self.names, name="p_value")

    def conf_int(self, level: float = 0.95) -> pd.DataFrame:
        """Confidence intervals for the coefficients (columns named like R's ``confint``).

        Parameters
        ----------
        level : float
            Coverage, strictly between 0 and 1.

        Returns
        -------
        DataFrame
            One row per coefficient, columns ``"2.5 %"`` and ``"97.5 %"`` (for level 0.95);
            Student's t on the residual degrees of freedom and the current covariance.

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import longley
        >>> df = longley.load_pandas().data
        >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP + ARMED + POP + YEAR", data=df)
        >>> ci = fit.conf_int(0.9)
        >>> list(ci.columns)
        ['5 %', '95 %']
        >>> print(f"{ci.loc['UNEMP', '5 %']:.4f} {ci.loc['UNEMP', '95 %']:.4f}")
        -2.6719 -1.2724
        """
        _check_level(level)
        q = stats.t.ppf(0.5 + level / 2.0, self.df_resid)
        lo, hi = self.coef - q * self.std_err, self.coef + q * self.std_err
        a = (1.0 - level) / 2.0
        return pd.DataFrame({_pct(a): lo, _pct(1.0 - a): hi})

    def with_vcov(self, kind: str = "classical", *, maxlags: int | None = None,
                  adjust: bool = False) -> LinearResults:
        """A new result with another covariance estimator; this one is unchanged.

        Parameters
        ----------
        kind : {"classical", "HC0", "HC1", "HC2", "HC3", "HAC"}
        maxlags : int, optional
            HAC lag truncation (default floor(4 (n/100)^(2/9))).
        adjust : bool
            HAC: multiply by n/(n − edf) like sandwich's ``adjust=TRUE``.

        Returns
        -------
        LinearResults
            Same coefficients; standard errors, tests and intervals use the new estimator.

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import longley
        >>> df = longley.load_pandas().data
        >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP + ARMED + POP + YEAR", data=df)
        >>> robust = fit.with_vcov("HC1")
        >>> print(f"{fit.std_err['UNEMP']:.4f} -> {robust.std_err['UNEMP']:.4f}")
        0.3861 -> 0.4566
        >>> robust.vcov_spec.label()
        'heteroskedasticity-robust HC1'
        >>> bool((robust.coef == fit.coef).all()), fit.vcov_spec.kind
        (True, 'classical')
        >>> print(f"{fit.with_vcov('HAC', maxlags=2).std_err['UNEMP']:.4f}")
        0.3374
        """
        spec = make_vcov_spec(kind, maxlags=maxlags, adjust=adjust, n_obs=self.nobs)
        return dataclasses.replace(self, vcov_spec=spec)

    def influence(self) -> pd.DataFrame:
        """Hat values, Cook's distances and standardised residuals, indexed by row label.

        Returns
        -------
        DataFrame
            Columns ``hat`` (diagonal of the hat matrix: the leverage, also each training
            row's attention weight on itself), ``cooks_distance`` and ``std_resid`` (internally
            studentised residuals).

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import longley
        >>> df = longley.load_pandas().data
        >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP + ARMED + POP + YEAR", data=df)
        >>> infl = fit.influence()
        >>> list(infl.columns)
        ['hat', 'cooks_distance', 'std_resid']
        >>> print(f"{infl['hat'].sum():.4f}")  # trace of the hat matrix = number of coefficients
        6.0000
        >>> print(f"{infl['hat'].iloc[0]:.4f} {infl['cooks_distance'].iloc[0]:.4f}")
        0.4018 0.1498
        """
        h = self._hat
        e = self._resid_w
        with np.errstate(divide="ignore", invalid="ignore"):
            std = e / (self.sigma * np.sqrt(1.0 - h))
            cooks = std**2 * h / ((1.0 - h) * self.edf)
        return pd.DataFrame({"hat": h, "cooks_distance": cooks, "std_resid": std},
                            index=self.design.row_labels)

    # ------------------------------------------------------------ prediction
    def predict(self, newdata: Any = None, *, interval: str = "none",
                level: float = 0.95) -> pd.Series | pd.DataFrame:
        """Predictions for new data (or the training rows), optionally with intervals.

        Parameters
        ----------
        newdata : DataFrame or dict, optional
            New rows; they are run through the same formula, transforms and factor levels.
        interval : {"none", "confidence", "prediction"}
        level : float
            Coverage of the interval.

        Returns
        -------
        Series (``interval="none"``) or DataFrame with columns ``fit``, ``lwr``, ``upr`` (as R).

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import longley
        >>> df = longley.load_pandas().data
        >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP + ARMED + POP + YEAR", data=df)
        >>> print(f"{fit.predict(df.iloc[:3]).iloc[0]:.2f}")
        60063.81
        >>> band = fit.predict(df.iloc[:2], interval="prediction", level=0.9)
        >>> list(band.columns)
        ['fit', 'lwr', 'upr']
        >>> print(f"{band['lwr'].iloc[0]:.2f} {band['upr'].iloc[0]:.2f}")
        59442.09 60685.52
        """
        if interval not in INTERVALS:
            raise OptionError(f"interval must be one of {INTERVALS}, however: {interval=}")
        _check_level(level)
        X, labels = self._query_design(newdata)
        fit = X @ np.nan_to_num(self.filtered.coef)
        if interval == "none":
            return pd.Series(fit, index=labels, name="fit")
        V = np.nan_to_num(self.vcov.to_numpy())
        var = np.einsum("ij,jk,ik->i", X, V, X)
        if interval == "prediction":
            var = var + self.sigma**2
        q = stats.t.ppf(0.5 + level / 2.0, self.df_resid)
        half = q * np.sqrt(var)
        return pd.DataFrame({"fit": fit, "lwr": fit - half, "upr": fit + half}, index=labels)

    def _query_design(self, newdata: Any) -> tuple[FloatArray, pd.Index]:
        if newdata is None:
            return self.design.X, self.design.row_labels
        return self.design.rebuild(newdata)

    # ------------------------------------------------------------ attention view
    @cached_property
    def embedding(self) -> Embedding:
        """The encoder W, the metric Ω = W W' and the training factor scores."""
        sp, f = self.spectrum, self.filtered.f
        active = f > 0
        n_fac = int(active.sum()) + (1 if sp.intercept is not None else 0)
        W = np.zeros((len(self.names), n_fac))
        E = (sp.V[:, active] * (np.sqrt(f[active]) / sp.s[active])) / sp.scale[sp.kept][:, None]
        F_train = np.empty((self.nobs, n_fac))
        col = 0
        if sp.intercept is not None:
            W[sp.intercept, 0] = 1.0 / np.sqrt(sp.sum_w)
            W[sp.intercept, 1:] = -sp.center[sp.kept] @ E
            F_train[:, 0] = 1.0 / np.sqrt(sp.sum_w)
            col = 1
        W[sp.kept, col:] = E
        root = np.sqrt(np.where(active, f, 0.0))
        U = sp.U if sp.U.is_stored else sp.U.columns(np.flatnonzero(active))
        scale = root[active] if not sp.U.is_stored else root
        for lo, hi, B in U.blocks(col_scale=scale):
            block = B[:, active] if sp.U.is_stored else B
            if sp.weighted:
                block = block / sp.sqrt_w[lo:hi, None]
            F_train[lo:hi, col:] = block
        names = (["const"] if sp.intercept is not None else []) + [
            f"F{i + 1}" for i in range(n_fac - col)]
        enc = pd.DataFrame(W, index=self.names, columns=names)
        return Embedding(encoder=enc, omega=pd.DataFrame(W @ W.T, index=self.names,
                                                         columns=self.names),
                         train_factors=pd.DataFrame(F_train, index=self.design.row_labels,
                                                    columns=names, copy=False))

    def attention(self, newdata: Any = None, *, chunk_size: int | None = None) -> AttentionWeights:
        """Attention weights of each prediction over the training rows.

        ``weights @ y_train`` reproduces :meth:`predict`; on the training rows the weights are
        the hat matrix. Nothing J×N is formed until :attr:`AttentionWeights.weights` is read.

        Parameters
        ----------
        newdata : DataFrame or dict, optional
            Query rows; the training rows when omitted.
        chunk_size : int, optional
            Queries per chunk.

        Returns
        -------
        AttentionWeights

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import longley
        >>> df = longley.load_pandas().data
        >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP + ARMED + POP + YEAR", data=df)
        >>> att = fit.attention(df.iloc[[0, 5]])
        >>> W = att.weights.to_numpy()
        >>> W.shape
        (2, 16)
        >>> print(f"{W[0].sum():.4f}")  # affine weights: they sum to one with an intercept
        1.0000
        >>> print(f"{W[0] @ fit.design.y:.2f} {fit.predict(df.iloc[[0]]).iloc[0]:.2f}")
        60063.81 60063.81
        >>> print(f"{att.diagnostics['leverage'].iloc[0]:.4f}")  # Σ ω² = hat value
        0.4018
        """
        emb = self.embedding
        if newdata is None:
            F_q, labels = emb.train_factors.to_numpy(), self.design.row_labels
        else:
            X, labels = self.design.rebuild(newdata)
            F_q = X @ emb.encoder.to_numpy()
        fn = linear_weight_fn(F_q, emb.train_factors.to_numpy(), self.spectrum.sqrt_w**2)
        return AttentionWeights(weight_fn=fn, n_queries=F_q.shape[0], query_labels=labels,
                                train_labels=self.design.row_labels, y_train=self.design.y,
                                kind="linear", chunk_size=chunk_size)

    def _sampled_weight_stats(self) -> tuple[FloatArray, FloatArray, int]:
        """Negative mass Σ min(ω, 0) and Σ ω² of training rows as queries, for the summary.

        Every row for small n, else about 2e7 / (n (rank + 1)) evenly spaced rows (at least
        20); computed in the same pass as the hat values. Returns (negative mass, Σ ω²,
        number of query rows).
        """
        _, neg, lev, m = self._row_pass
        return neg, lev, m

    # ------------------------------------------------------------ reports
    def summary(self) -> Any:
        """The R ``summary.lm``-style report (a :class:`attnreg.report.Summary`).

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import longley
        >>> df = longley.load_pandas().data
        >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP + ARMED + POP + YEAR", data=df)
        >>> text = str(fit.summary())
        >>> "Coefficients:" in text and "Attention view" in text
        True
        >>> print([line for line in text.splitlines() if line.startswith("F-statistic")][0])
        F-statistic: 438.8 on 5 and 10 DF,  p-value: 2.242e-11
        """
        from attnreg.report import linear_summary

        return linear_summary(self)

    def __repr__(self) -> str:
        coefs = ", ".join(f"{n}={v:.4g}" for n, v in self.coef.items())
        return f"<attnreg {self.method} fit: {self.design.formula}; n={self.nobs}; {coefs}>"


def _check_level(level: float) -> None:
    if not isinstance(level, (float, int)) or not 0.0 < float(level) < 1.0:
        raise OptionError(f"level must be strictly between 0 and 1, however: {level=}")


def _pct(p: float) -> str:
    return f"{100 * p:.3g} %"
