"""Results of ``attnreg(..., method="quantreg")``: one fit per τ, R's ``summary.rq`` inference."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from attnreg._typing import FloatArray
from attnreg._warn import warn_user
from attnreg.exceptions import DataError, InferenceWarning, OptionError
from attnreg.formula.design import Design
from attnreg.quantreg.options import check_se, check_taus
from attnreg.quantreg.rank import rank_intervals
from attnreg.quantreg.report import quantreg_summary
from attnreg.quantreg.se import quantreg_vcov
from attnreg.quantreg.solver import QuantregFit, rq_fit
from attnreg.report import Summary

__all__ = ["QuantregResults", "fit_quantreg_design"]

_TABLE_COLUMNS = ["Value", "Std. Error", "t value", "Pr(>|t|)"]
_RANK_COLUMNS = ["coefficients", "lower bd", "upper bd"]
_RANK_MAX_ROWS = 1000  # R's summary.rq: se = "rank" by default when n < 1001


@dataclass(frozen=True)
class QuantregResults:
    """A fitted linear quantile regression at one or several τ. Immutable; derived quantities
    are cached.

    Attributes
    ----------
    design : Design
        The model frame.
    fits : tuple of QuantregFit
        One solution per τ, in increasing τ.
    se : str or None
        The default ``se`` of :meth:`summary` and :meth:`coef_table` (``"nid"``, ``"iid"``,
        ``"ker"``, ``"boot"`` or ``"rank"``); None is R's default (:attr:`summary_se`).
    hs, replicates, seed
        The bandwidth rule and the bootstrap's settings.
    call : str
        The call, for reports.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> import attnreg as ar
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"x": rng.uniform(0, 4, 300)})
    >>> df["y"] = 1 + 2 * df.x + (1 + 0.5 * df.x) * rng.standard_normal(300)
    >>> q = ar.attnreg("y ~ x", df, method="quantreg", tau=[0.1, 0.5, 0.9])
    >>> q.coef.shape, q.taus
    ((2, 3), (0.1, 0.5, 0.9))
    >>> bool((q.coef.loc["x"].diff().dropna() > 0).all())   # the spread grows with x
    True
    """

    design: Design
    fits: tuple[QuantregFit, ...]
    se: str | None = None
    hs: bool = True
    replicates: int = 200
    seed: int | None = None
    call: str = ""
    method: str = field(default="quantreg", repr=False)

    @property
    def taus(self) -> tuple[float, ...]:
        """The quantiles fitted, increasing."""
        return tuple(f.tau for f in self.fits)

    @property
    def names(self) -> list[str]:
        """Coefficient names."""
        return list(self.design.column_names)

    @property
    def nobs(self) -> int:
        """Number of training rows."""
        return self.design.n_obs

    @property
    def df_resid(self) -> int:
        """n − p, the degrees of freedom of the t tests (as R's ``summary.rq``)."""
        return self.design.n_obs - self.design.n_coef

    @property
    def summary_se(self) -> str:
        """The ``se`` a summary uses by default: :attr:`se`, else R's default (``"rank"``
        below 1001 rows, else ``"nid"``)."""
        if self.se is not None:
            return self.se
        return "rank" if self.nobs <= _RANK_MAX_ROWS else "nid"

    def _tau_index(self) -> pd.Index:
        return pd.Index(self.taus, name="tau")

    @cached_property
    def coef(self) -> pd.DataFrame:
        """Coefficients, shape (n_coef, n_tau): one column per τ."""
        return pd.DataFrame(np.column_stack([f.coef for f in self.fits]), index=self.names,
                            columns=self._tau_index())

    @cached_property
    def fitted(self) -> pd.DataFrame:
        """Fitted quantiles at the training rows, shape (n_obs, n_tau)."""
        return pd.DataFrame(self.design.X @ self.coef.to_numpy(), index=self.design.row_labels,
                            columns=self._tau_index())

    @cached_property
    def resid(self) -> pd.DataFrame:
        """y − fitted, per τ (unweighted, as R's ``rq``)."""
        return self.fitted.rsub(self.design.y, axis=0)

    @cached_property
    def crossing(self) -> int:
        """Training rows where a larger τ has a smaller fitted value (0 for one τ)."""
        fitted = self.fitted.to_numpy()
        return int(np.sum(np.any(np.diff(fitted, axis=1) < 0, axis=1)))

    def predict(self, newdata: Any = None, rearrange: bool = False) -> pd.DataFrame:
        """Predicted quantiles, shape (n_rows, n_tau); rows with missing values give NaN.

        Parameters
        ----------
        newdata : DataFrame or dict of columns, optional
            Default: the training rows.
        rearrange : bool
            Sort each row's predictions over τ (the monotone rearrangement of Chernozhukov,
            Fernández-Val & Galichon 2010 for a finite set of τ), so that crossing quantiles
            (:attr:`crossing`) no longer cross; False gives each τ's fit as estimated.
        """
        if newdata is None:
            out = self.fitted.to_numpy()
            labels = self.design.row_labels
        else:
            X, labels = self.design.rebuild(newdata)
            out = X @ self.coef.to_numpy()  # NaN rows stay NaN
        if rearrange:
            out = np.sort(out, axis=1)  # NaN rows stay NaN (all of a row is NaN)
        return pd.DataFrame(out, index=labels, columns=self._tau_index())

    def _fit_at(self, tau: float | None) -> QuantregFit:
        if tau is None:
            return self.fits[0]
        for f in self.fits:
            if np.isclose(f.tau, tau, rtol=0, atol=1e-12):
                return f
        raise OptionError(f"tau={tau!r} was not fitted; fitted: {', '.join(map(str, self.taus))}")

    def vcov(self, tau: float | None = None, se: str | None = None) -> pd.DataFrame:
        """Covariance of one τ's coefficients (R's ``summary.rq(covariance=TRUE)$cov``).

        Parameters
        ----------
        tau : float, optional
            One of :attr:`taus` (default the first).
        se : {"nid", "iid", "ker", "boot"}, optional
            Default: the fit's ``se``, else ``"nid"`` (as R with ``covariance = TRUE``).

        Raises
        ------
        OptionError
            For ``se="rank"``, which gives intervals and no covariance.
        """
        f = self._fit_at(tau)
        kind = check_se(se) or self.se or "nid"
        if kind == "rank":
            raise OptionError("se='rank' gives confidence intervals, not a covariance (as R's "
                              "summary.rq); pass vcov(se='nid') (or 'iid', 'ker', 'boot'), or "
                              "use coef_table(se='rank') for the intervals")
        cov = quantreg_vcov(kind, self.design.X, self.design.y, f.coef, f.tau,
                            weights=self.design.weights, hs=self.hs,
                            replicates=self.replicates, seed=self.seed)
        return pd.DataFrame(cov, index=self.names, columns=self.names)

    def coef_table(self, tau: float | None = None, se: str | None = None, *, iid: bool = True,
                   alpha: float = 0.1) -> pd.DataFrame:
        """One τ's coefficient table, R's ``summary(rq(...), se=)$coefficients``.

        With standard errors: Value, Std. Error, t value and Pr(>|t|) (t with n − p df, as R).
        With ``se="rank"``: coefficients, lower bd and upper bd, the ``1 − alpha`` intervals
        from inverting the rank-score test (:func:`~attnreg.quantreg.rank.rank_intervals`,
        with ``iid`` as R's); only the coefficients when there is one (as R).

        Parameters
        ----------
        tau : float, optional
            One of :attr:`taus` (default the first).
        se : {"nid", "iid", "ker", "boot", "rank"}, optional
            Default: :attr:`summary_se`.
        iid, alpha
            The rank intervals' options (R's ``summary(fit, se = "rank", iid =, alpha =)``).

        Returns
        -------
        DataFrame, shape (n_coef, 4), or (n_coef, 3) or (1, 1) for ``se="rank"``
        """
        f = self._fit_at(tau)
        kind = check_se(se) or self.summary_se
        if kind == "rank":
            if not 0 < alpha < 1:
                raise OptionError(f"alpha must be in (0, 1), however: {alpha=}")
            if len(self.names) == 1:  # R's rq.fit.br: no interval for one coefficient
                return pd.DataFrame({"coefficients": f.coef}, index=self.names)
            if not f.vertex:
                warn_user(f"tau={f.tau:g}: the solution may be nonunique (R's warning; a "
                          "degenerate fit, e.g. discrete data): the rank intervals depend on "
                          "the solution taken and may differ from R's", InferenceWarning)
            bounds = rank_intervals(self.design.X, self.design.y, f.coef, f.tau,
                                    weights=self.design.weights, iid=iid, alpha=alpha)
            return pd.DataFrame(np.column_stack([f.coef, bounds]), index=self.names,
                                columns=_RANK_COLUMNS)
        serr = np.sqrt(np.diag(self.vcov(f.tau, kind).to_numpy()))
        t = f.coef / serr
        # R's 2 * (1 - pt(|t|, rdf)), kept as R computes it (a tiny p-value is 0)
        p = 2 * (1 - stats.t.cdf(np.abs(t), self.df_resid)) if self.df_resid > 0 else np.nan
        return pd.DataFrame(np.column_stack([f.coef, serr, t, np.broadcast_to(p, t.shape)]),
                            index=self.names, columns=_TABLE_COLUMNS)

    def summary(self, se: str | None = None, *, iid: bool = True, alpha: float = 0.1) -> Summary:
        """R's ``print(summary(rq(...), se=))``, one block per τ, and quantile crossing.

        ``se`` defaults to :attr:`summary_se` (R's: rank intervals below 1001 rows);
        ``iid`` and ``alpha`` are those of the rank intervals (see :meth:`coef_table`).
        """
        tables = [self.coef_table(t, se, iid=iid, alpha=alpha) for t in self.taus]
        return quantreg_summary(self.call, self.taus, tables, self.crossing)

    def __repr__(self) -> str:
        return (f"<attnreg quantile regression: {self.design.formula}; n={self.nobs}; "
                f"tau={', '.join(map(str, self.taus))}>")


_ALIAS_TOL = 1e-7  # R's qr() tolerance: a column's part not explained by earlier ones, relative


def _check_full_rank(design: Design) -> None:
    """DataError naming the columns that are linear combinations of earlier ones."""
    X = design.X
    if X.shape[0] < X.shape[1]:
        raise DataError(f"quantile regression needs at least as many rows as coefficients, "
                        f"however: {X.shape[0]} rows, {X.shape[1]} coefficients")
    R = np.linalg.qr(X, mode="r")
    norms = np.linalg.norm(X, axis=0)
    aliased = [name for name, r, nrm in zip(design.column_names, np.abs(np.diag(R)), norms,
                                             strict=True) if r <= _ALIAS_TOL * max(nrm, 1e-300)]
    if aliased:
        raise DataError(f"quantile regression needs a full-rank design: column(s) "
                        f"{', '.join(map(repr, aliased))} are linear combinations of earlier "
                        "columns; drop them from the formula")


def fit_quantreg_design(design: Design, options: dict[str, Any], call: str = "") -> QuantregResults:
    """Fit every τ of ``options`` (from :func:`~attnreg.quantreg.options.check_quantreg_options`).

    Raises
    ------
    DataError
        When the design is not of full column rank (naming the aliased columns).
    """
    _check_full_rank(design)
    taus = check_taus(options.get("tau", 0.5))
    start = options.get("warm_start")
    if start is not None and start.shape[0] != design.n_coef:
        start = None  # another design's coefficients: a cold start
    fits = tuple(rq_fit(design.X, design.y, tau, design.weights,
                        start=None if start is None else start[:, k])
                 for k, tau in enumerate(taus))
    return QuantregResults(design=design, fits=fits, se=options.get("se"),
                           hs=options.get("hs", True), replicates=options.get("replicates", 200),
                           seed=options.get("seed"), call=call)


def predict_quantreg(result: QuantregResults, X: FloatArray) -> FloatArray:
    """The registry's predictor: one τ's predictions for design rows ``X``."""
    if len(result.taus) != 1:
        raise OptionError(f"this path predicts one quantile; the fit has tau={list(result.taus)} "
                          "(use result.predict(newdata) for all of them, or fit one tau)")
    return X @ result.fits[0].coef
