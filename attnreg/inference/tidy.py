"""Tidy data frames of a linear fit, with broom's column names.

:class:`Tidy` is a mixin of :class:`~attnreg.linear.results.LinearResults`: ``tidy()`` (one
row per coefficient), ``glance()`` (one row per model) and ``augment()`` (one row per
observation). ``tidy()`` and ``glance()`` read only the coefficients, their covariance and
the fit statistics, and come from :class:`TidyGlance`, which the chunked fits
(:class:`~attnreg.large.results.ChunkedResults`) share; ``augment()`` needs the rows. The
frames of R's ``broom::tidy``, ``glance`` and ``augment`` for ``lm``, with
broom's column names (``std.error``, ``p.value``, ``.fitted``, ...). They are tested against
broom 1.0.3 (``tests/reference/make_tidy.R``).

Conventions, where attnreg and broom differ or broom leaves a choice:

- Every number is under the covariance in use (:meth:`with_vcov`): ``tidy()`` gives the
  robust standard errors, t and p values of ``broom::tidy(lmtest::coeftest(fit, vcov=))``,
  and ``glance()``'s ``statistic`` is the Wald F of the summary (broom's ``glance.lm`` always
  reports the classical F).
- Row labels are the frames' index (broom's ``.rownames`` column); ``tidy`` and ``glance``
  have a default RangeIndex.
- ``augment()`` without ``data`` cannot return R's model frame (the fit does not keep the
  data): its variables are the response, the design columns (a factor appears as its
  indicator columns, ``C(g)[T.b]``) and ``(weights)``. Give ``data=`` for the data's own
  columns, as ``broom::augment(fit, data = df)``.
- Rows dropped for missing values are absent without ``data`` (broom's default,
  ``na.action = na.omit``); with ``data`` every row of ``data`` is kept and the rows not in
  the fit (missing values, ``subset``) have NaN in the dot columns (broom with
  ``na.action = na.exclude``).
- Rows of prior weight zero are part of the frame with ``.hat`` and ``.cooksd`` 0 and
  ``.std.resid`` NaN, as broom; their ``.sigma`` is σ itself (leaving out a row of weight
  zero changes nothing), where broom writes 0.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np
import pandas as pd
from scipy import stats

from attnreg._typing import FloatArray
from attnreg.exceptions import OptionError
from attnreg.inference.contract import LinearFitContract
from attnreg.inference.glance import TidyFit, TidyGlance
from attnreg.inference.tstats import check_level

__all__ = ["AUGMENT_INTERVALS", "Tidy", "loo_sigma"]

#: the ``interval`` choices of :meth:`Tidy.augment` (broom's)
AUGMENT_INTERVALS = ("none", "confidence", "prediction")

#: 1 − h below this counts as a hat value of one (R's ``lm.influence`` tolerance)
_HAT_TOL = 1e-10

#: response transforms that learn a state from the data: not re-evaluated on new rows
_STATEFUL = ("center(", "standardize(", "scale(")


def loo_sigma(resid_w: FloatArray, hat: FloatArray, df_resid: float) -> FloatArray:
    """Leave-one-out residual standard errors σ₍ᵢ₎ in closed form (R's ``influence()$sigma``).

    σ₍ᵢ₎² = (RSS − eᵢ² / (1 − hᵢ)) / (df_resid − 1), with eᵢ the weighted residuals: for OLS
    and WLS exactly the σ of the fit without row i, with no refit. A row with hᵢ = 1 (its
    residual is 0) leaves RSS unchanged, as in R.

    Parameters
    ----------
    resid_w : ndarray, shape (n_obs,)
        Weighted residuals √w (y − ŷ).
    hat : ndarray, shape (n_obs,)
        Hat values.
    df_resid : float
        Residual degrees of freedom of the fit (n − tr(H)).

    Returns
    -------
    ndarray, shape (n_obs,)
        NaN everywhere when ``df_resid`` is at most 1.

    Examples
    --------
    >>> import numpy as np
    >>> from attnreg.inference.tidy import loo_sigma
    >>> rng = np.random.default_rng(0)
    >>> X = np.column_stack([np.ones(10), rng.normal(size=10)])
    >>> y = X @ [1.0, 2.0] + rng.normal(size=10)
    >>> H = X @ np.linalg.solve(X.T @ X, X.T)
    >>> e = y - H @ y
    >>> s = loo_sigma(e, np.diag(H), 8.0)
    >>> X1, y1 = X[1:], y[1:]  # refit without row 0
    >>> e1 = y1 - X1 @ np.linalg.lstsq(X1, y1, rcond=None)[0]
    >>> print(f"{s[0]:.10f} {np.sqrt(e1 @ e1 / 7):.10f}")
    0.8771780144 0.8771780144
    """
    if df_resid <= 1.0:
        return np.full(resid_w.shape, np.nan)
    one_minus = 1.0 - hat
    safe = one_minus > _HAT_TOL
    with np.errstate(divide="ignore", invalid="ignore"):
        drop = np.where(safe, resid_w**2 / np.where(safe, one_minus, 1.0), 0.0)
    rss = float(resid_w @ resid_w)
    return np.sqrt(np.maximum(rss - drop, 0.0) / (df_resid - 1.0))



class Tidy(TidyGlance, LinearFitContract):
    """``tidy()``, ``glance()`` and ``augment()`` (a mixin of ``LinearResults``)."""

    # ------------------------------------------------------------ augment
    def augment(self, data: Any = None, newdata: Any = None, *, interval: str = "none",
                conf_level: float = 0.95, se_fit: bool = False) -> pd.DataFrame:
        """One row per observation with fitted values, residuals and influence, as
        ``broom::augment(lm)``.

        Parameters
        ----------
        data : DataFrame, optional
            The training data: its columns (and rows) are kept, as
            ``broom::augment(fit, data = df)``. Its index must hold every row label of the fit
            once; rows of ``data`` not in the fit (missing values, ``subset``) get NaN in the
            dot columns. Without it the variables are the response, the design columns and
            ``(weights)``, on the fit's rows (rows of weight zero included).
        newdata : DataFrame or dict, optional
            New rows instead: their columns, ``.fitted``, the intervals and ``.se.fit`` when
            asked, and ``.resid`` when the response can be computed from them. No influence
            columns. Rows with a missing predictor get NaN.
        interval : {"none", "confidence", "prediction"}
            Add ``.lower`` and ``.upper``, the interval of :meth:`predict` (Student's t, the
            covariance in use; a prediction interval adds σ² for a new row of unit weight).
        conf_level : float
            Coverage of the interval.
        se_fit : bool
            Add ``.se.fit``, the standard error of the fitted value under the covariance
            in use.

        Returns
        -------
        DataFrame, shape (n_rows, n_columns)
            Indexed by row label. After the variables: ``.fitted``, [``.lower``,
            ``.upper``], [``.se.fit``], ``.resid`` (y − ŷ, unweighted), and for the training
            rows ``.hat`` (leverage), ``.sigma`` (σ without the row, in closed form: see
            :func:`loo_sigma`), ``.cooksd`` (Cook's distance) and ``.std.resid``
            (internally studentised residual), as :meth:`influence`. For ridge and PCR
            these use the filtered hat matrix and the effective degrees of freedom; their
            ``.sigma`` is the same closed form with df n − tr(H) − 1, not a refit.

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import longley
        >>> df = longley.load_pandas().data
        >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP", data=df)
        >>> au = fit.augment()
        >>> list(au.columns)  # doctest: +NORMALIZE_WHITESPACE
        ['TOTEMP', 'GNP', 'UNEMP', '.fitted', '.resid', '.hat', '.sigma', '.cooksd',
         '.std.resid']
        >>> print(f"{au['.hat'].sum():.4f}")  # tr(H) = number of coefficients
        3.0000
        >>> new = fit.augment(newdata=df.head(2), interval="prediction", se_fit=True)
        >>> new.columns[-5:].tolist()
        ['.fitted', '.lower', '.upper', '.se.fit', '.resid']
        >>> fit.augment(data=df).shape  # the data's columns, then the dot columns
        (16, 13)
        """
        if interval not in AUGMENT_INTERVALS:
            raise OptionError(f"interval must be one of {AUGMENT_INTERVALS}, however: "
                              f"{interval=}")
        level = check_level(conf_level, "conf_level")
        if not isinstance(se_fit, (bool, np.bool_)):
            raise OptionError(f"se_fit must be True or False, however: {se_fit=}")
        if newdata is not None:
            if data is not None:
                raise OptionError("augment() takes data (the training rows) or newdata (new "
                                  "rows), not both")
            return self._augment_new(newdata, interval, level, bool(se_fit))
        return self._augment_train(data, interval, level, bool(se_fit))

    def _augment_new(self, newdata: Any, interval: str, level: float,
                     se_fit: bool) -> pd.DataFrame:
        fit = cast(TidyFit, self)
        if isinstance(newdata, pd.DataFrame):
            frame = newdata.copy()
        else:
            try:
                frame = pd.DataFrame(newdata)
            except (TypeError, ValueError) as exc:
                raise OptionError(f"newdata must be a DataFrame or a dict of columns, "
                                  f"however: {type(newdata).__name__} ({exc})") from None
        pred = fit.predict(frame, interval=interval, level=level)
        if isinstance(pred, pd.DataFrame):
            frame[".fitted"] = pred["fit"].to_numpy()
            frame[".lower"], frame[".upper"] = pred["lwr"].to_numpy(), pred["upr"].to_numpy()
        else:
            frame[".fitted"] = pred.to_numpy()
        if se_fit:
            X, _ = self.design.rebuild(frame)
            frame[".se.fit"] = self._se_of(X)
        y = self._response_in(frame)
        if y is not None:
            frame[".resid"] = y - frame[".fitted"].to_numpy()
        return frame

    def _augment_train(self, data: Any, interval: str, level: float,
                       se_fit: bool) -> pd.DataFrame:
        fit = cast(TidyFit, self)
        d = self.design
        zero = d.zero_weight
        fitted = fit.fitted
        labels = fitted.index

        def all_rows(fit_values: FloatArray, zero_values: FloatArray) -> FloatArray:
            if zero is None:
                return np.asarray(fit_values, dtype=np.float64)
            return np.concatenate([fit_values, zero_values])[zero.order]

        X = d.X if zero is None else all_rows(d.X, zero.X)
        cols: dict[str, Any] = {".fitted": fitted.to_numpy()}
        if interval != "none" or se_fit:
            se = self._se_of(X)
            if interval != "none":
                half = self._half_width(se, interval, level)
                cols[".lower"], cols[".upper"] = cols[".fitted"] - half, cols[".fitted"] + half
            if se_fit:
                cols[".se.fit"] = se
        cols[".resid"] = fit.resid.to_numpy()
        z = 0 if zero is None else zero.y.size
        h, e = self._hat, self._resid_w
        with np.errstate(divide="ignore", invalid="ignore"):
            std = e / (self.sigma * np.sqrt(1.0 - h))
            cooks = std**2 * h / ((1.0 - h) * self.edf)
        cols[".hat"] = all_rows(h, np.zeros(z))
        cols[".sigma"] = all_rows(loo_sigma(e, h, self.df_resid), np.full(z, self.sigma))
        cols[".cooksd"] = all_rows(cooks, np.zeros(z))
        cols[".std.resid"] = all_rows(std, np.full(z, np.nan))
        dots = pd.DataFrame(cols, index=labels)
        if data is None:
            variables = {d.response_name: all_rows(d.y, zero.y if zero is not None else d.y)}
            for j, name in enumerate(d.column_names):
                if not (d.intercept and j == 0):
                    variables[name] = X[:, j]
            if d.weights is not None:
                variables["(weights)"] = all_rows(d.weights, np.zeros(z))
            frame = pd.DataFrame(variables, index=labels)
            return pd.concat([frame.drop(columns=[c for c in frame if c in dots]), dots],
                             axis=1)
        return self._with_data(data, dots)

    def _with_data(self, data: Any, dots: pd.DataFrame) -> pd.DataFrame:
        if not isinstance(data, pd.DataFrame):
            raise OptionError(f"data must be the training DataFrame, however: "
                              f"{type(data).__name__}")
        if not data.index.is_unique:
            dup = data.index[data.index.duplicated()][:3].tolist()
            raise OptionError(f"data must have unique row labels to be matched with the fit's "
                              f"rows, however labels {dup} repeat")
        missing = dots.index.difference(data.index, sort=False)
        if len(missing):
            raise OptionError(f"data must hold every row of the fit, however {len(missing)} "
                              f"row label(s) of the fit are not in data's index, e.g. "
                              f"{missing[:3].tolist()}")
        clash = [c for c in dots.columns if c in data.columns]
        if clash:
            raise OptionError(f"data has column(s) {clash}, which augment() would overwrite; "
                              "rename them")
        return pd.concat([data, dots.reindex(data.index)], axis=1)

    def _se_of(self, X: FloatArray) -> FloatArray:
        """Standard errors of x'b for the rows of X under the covariance in use (NaN rows
        of X give NaN)."""
        if not self._df_ok:
            return np.full(X.shape[0], np.nan)
        Vz, E = self._vcov_z  # x' V x = (x ∘ 2^E)' V_z (x ∘ 2^E), on the rescaled response
        e = self.spectrum.y_exponent
        Xs = np.ldexp(X, (E - e)[None, :])
        var = np.einsum("ij,jk,ik->i", Xs, np.where(np.isnan(Vz), 0.0, Vz), Xs)
        return np.ldexp(np.sqrt(var), e)

    def _half_width(self, se: FloatArray, interval: str, level: float) -> FloatArray:
        """Half-widths of :meth:`predict`'s intervals from the standard errors of the fit."""
        q = stats.t.ppf(0.5 + level / 2.0, self.df_resid)
        if interval == "confidence":
            return np.asarray(q * se)
        e = self.spectrum.y_exponent
        var_s = np.ldexp(se, -e) ** 2 + self._sigma2_s
        return np.asarray(q * np.ldexp(np.sqrt(var_s), e))

    def _response_in(self, frame: pd.DataFrame) -> FloatArray | None:
        """The response evaluated on new rows (NaN where missing), or None when it cannot be."""
        name = self.design.response_name
        if name in frame.columns:
            return np.asarray(pd.to_numeric(frame[name], errors="coerce"), dtype=np.float64)
        if any(s in name for s in _STATEFUL) or self.design.eval_env is None:
            return None
        import patsy

        try:
            mat = patsy.dmatrix(f"I({name}) - 1", frame, eval_env=self.design.eval_env,
                                NA_action=patsy.NAAction(NA_types=[]), return_type="matrix")
        except Exception:  # a variable of the response is not in the new rows
            return None
        values = np.asarray(mat, dtype=np.float64)
        return values[:, 0] if values.shape == (frame.shape[0], 1) else None
