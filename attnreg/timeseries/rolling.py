"""In-sample rolling and expanding regressions: coefficients and standard errors per window."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from attnreg._progress import Progress
from attnreg._typing import FloatArray
from attnreg.exceptions import DataError, NotComputedError, OptionError, RankDeficiencyWarning
from attnreg.formula.time_index import check_time_index
from attnreg.threads import small_lapack, user_threads


@dataclass(frozen=True)
class RollingResults:
    """Coefficients of a regression re-estimated on each window of consecutive rows.

    Attributes
    ----------
    coef : DataFrame, shape (n_windows, n_coef)
        Coefficients, indexed by the label of each window's last row.
    std_err : DataFrame, shape (n_windows, n_coef)
        Classical standard errors (conditional on λ or k for ridge/PCR). Not computed with
        ``params_only=True``: asking for them (or for ``t_value``) raises NotComputedError.
    nobs : Series
        Rows in each window.
    tuning : Series or None
        λ (ridge) or k (PCR) of each window.
    method, window, expanding, engine : str, int, bool, str
    params_only : bool
        Whether only the coefficients were computed (``rolling(..., params_only=True)``).

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import macrodata
    >>> macro = macrodata.load_pandas().data
    >>> macro.index = pd.period_range("1959Q1", periods=len(macro), freq="Q")
    >>> roll = ar.rolling("infl ~ unemp", macro, window=40)
    >>> roll
    <attnreg rolling (40 rows) ols fit: 164 windows>
    >>> int(roll.nobs.iloc[0]), roll.engine
    (40, 'updating')
    """

    coef: pd.DataFrame
    _std_err: pd.DataFrame | None = field(repr=False)
    nobs: pd.Series
    tuning: pd.Series | None
    method: str
    window: int
    expanding: bool
    engine: str = field(default="refit")
    params_only: bool = False

    @property
    def std_err(self) -> pd.DataFrame:
        """Classical standard errors of every window, shape (n_windows, n_coef).

        Raises NotComputedError for a fit made with ``params_only=True``.

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import macrodata
        >>> macro = macrodata.load_pandas().data
        >>> macro.index = pd.period_range("1959Q1", periods=len(macro), freq="Q")
        >>> ar.rolling("infl ~ unemp", macro, window=40).std_err.iloc[0].round(3)
        (Intercept)    0.938
        unemp          0.185
        Name: 1968Q4, dtype: float64
        """
        if self._std_err is None:
            raise NotComputedError(
                "this rolling fit was made with params_only=True: it has coefficients only. "
                "Call rolling(...) again without params_only=True for std_err and t_value")
        return self._std_err

    @property
    def t_value(self) -> pd.DataFrame:
        """coef / std_err.

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import macrodata
        >>> macro = macrodata.load_pandas().data
        >>> macro.index = pd.period_range("1959Q1", periods=len(macro), freq="Q")
        >>> ar.rolling("infl ~ unemp", macro, window=40).t_value.iloc[0].round(2)
        (Intercept)    8.07
        unemp         -5.96
        Name: 1968Q4, dtype: float64
        """
        return self.coef / self.std_err

    def __repr__(self) -> str:
        kind = "expanding" if self.expanding else f"rolling ({self.window} rows)"
        only = ", coefficients only" if self.params_only else ""
        return f"<attnreg {kind} {self.method} fit: {len(self.coef)} windows{only}>"


def rolling(formula: str, data: Any, window: int, *, expanding: bool = False,
            method: str = "ols", params_only: bool = False, progress: bool = False,
            eval_env: Any = 0, **options: Any) -> RollingResults:
    """Rolling (or expanding) in-sample regressions, for every spectral method.

    Parameters
    ----------
    formula : str
        As in :func:`attnreg.attnreg`; ``lag``/``lags``/``diff`` work inside it.
    data : DataFrame
        Rows in time order: the index is checked as by
        :func:`attnreg.timeseries.check_time_index` (sorted, unique, no gaps for dated
        indexes).
    window : int
        Rows per window; with ``expanding=True`` the size of the first window.
    expanding : bool
        Windows grow from the first row instead of rolling.
    method : {"ols", "ridge", "pcr"}
        λ/k are re-chosen inside each window when given as "gcv"/"loo".
    params_only : bool
        Coefficients (and λ/k) only, as statsmodels' ``RollingOLS(...).fit(params_only=True)``:
        no standard errors, about twice as fast for OLS. The coefficients are the same numbers
        as without it; ``std_err`` and ``t_value`` then raise NotComputedError.
    progress : bool
        Show a progress line on stderr.
    **options
        ``lam``, ``k``, ``standardize`` as in :func:`attnreg.attnreg`.

    Returns
    -------
    RollingResults

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import macrodata
    >>> macro = macrodata.load_pandas().data
    >>> macro.index = pd.period_range("1959Q1", periods=len(macro), freq="Q")
    >>> ar.rolling("infl ~ unemp", macro, window=40).coef.iloc[:2].round(3)  # doctest: +NORMALIZE_WHITESPACE
            (Intercept)  unemp
    1968Q4        7.571 -1.102
    1969Q1        8.061 -1.181
    >>> grow = ar.rolling("infl ~ unemp", macro, window=40, expanding=True, method="ridge")
    >>> int(grow.nobs.iloc[-1]), str(grow.tuning.index[-1])
    (203, '2009Q3')
    >>> ar.rolling("infl ~ unemp", macro, window=40, params_only=True)
    <attnreg rolling (40 rows) ols fit: 164 windows, coefficients only>
    """
    from attnreg.api import capture_env, formula_namespace
    from attnreg.formula.design import build_design
    from attnreg.methods import get_method, method_names

    estimator = get_method(method, among=method_names("rolling"))
    if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or window < 1:
        raise OptionError(f"window must be a positive integer, however: {window=}")
    if not isinstance(params_only, (bool, np.bool_)):
        raise OptionError(f"params_only must be True or False, however: {params_only=}")
    unknown = sorted(set(options) - {"lam", "k", "standardize"})
    if unknown:
        raise OptionError(f"unknown option(s) for rolling(): {', '.join(unknown)}")
    checked = estimator.check_options(options)
    if isinstance(data, pd.DataFrame):  # windows are periods: rows must be in time order
        check_time_index(data.index)
    design = build_design(formula, data, eval_env=capture_env(eval_env),
                          extra_names=formula_namespace())
    if window <= design.n_coef:
        raise DataError(f"window ({window}) must exceed the number of coefficients "
                        f"({design.n_coef})")
    if window > design.n_obs:
        raise DataError(f"window ({window}) is longer than the data ({design.n_obs} rows)")
    with user_threads(), small_lapack():  # thousands of small per-window factorizations
        if estimator.capabilities.updating and estimator.tuning is None and design.weights is None:
            fast = _rolling_updating(design, int(window), expanding, bool(params_only))
            if fast is not None:
                return fast
        with Progress(design.n_obs - window + 1, f"rolling {method}", progress) as bar:
            return _rolling_refits(design, int(window), expanding, estimator, checked, bar,
                                   bool(params_only))


def _rolling_updating(design: Any, window: int, expanding: bool,
                      params_only: bool) -> RollingResults | None:
    """OLS by rank-one updates of the window's Gram (None: a rank-deficient window)."""
    from attnreg.timeseries.updating import recursive_ls

    X = design.X[:, 1:] if design.intercept else design.X
    path = recursive_ls(X, design.y, window=None if expanding else window, min_nobs=window,
                        intercept=design.intercept, return_se=not params_only)
    if path.n_rank_deficient:
        return None
    labels = design.row_labels[path.origins]
    cols = design.column_names
    se = None if path.std_err is None else pd.DataFrame(path.std_err, index=labels, columns=cols)
    return RollingResults(coef=pd.DataFrame(path.coef, index=labels, columns=cols), _std_err=se,
                          nobs=pd.Series(path.nobs, index=labels), tuning=None, method="ols",
                          window=window, expanding=expanding, engine="updating",
                          params_only=params_only)


def _rolling_refits(design: Any, window: int, expanding: bool, estimator: Any,
                    options: dict[str, Any], bar: Progress,
                    params_only: bool = False) -> RollingResults:
    from attnreg.timeseries.plan import subdesign

    ends = np.arange(window, design.n_obs + 1)
    coef = np.empty((ends.size, design.n_coef))
    se = np.empty_like(coef)
    tune: FloatArray = np.full(ends.size, np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RankDeficiencyWarning)
        for i, end in enumerate(ends):
            rows = np.arange(0 if expanding else end - window, end)
            fit = estimator.fit_design(subdesign(design, rows), options)
            coef[i] = fit.coef.to_numpy()
            if not params_only:
                se[i] = fit.std_err.to_numpy()
            if estimator.tuning is not None:
                tune[i] = getattr(fit, estimator.tuning)
            bar.update(i + 1)
    labels = design.row_labels[ends - 1]
    cols = design.column_names
    return RollingResults(
        coef=pd.DataFrame(coef, index=labels, columns=cols),
        _std_err=None if params_only else pd.DataFrame(se, index=labels, columns=cols),
        nobs=pd.Series(ends - (0 if expanding else ends - window), index=labels),
        tuning=None if estimator.tuning is None else pd.Series(tune, index=labels),
        method=estimator.name, window=window, expanding=expanding, params_only=params_only)
