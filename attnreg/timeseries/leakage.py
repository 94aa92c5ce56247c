"""The leakage audit: the same forecasts with the full-sample metric (the causal-mask-only approach).

A causal mask lets the forecast for t+h attend only to rows observed by t, but the weights
ω_js = z_j' Ω z_s still use Ω, the centring and scaling of z, and λ or k estimated on the
WHOLE sample. The leaky forecast at an origin with training rows S (n_S of them) is

    ŷ_j = ȳ_S + z_j' Ω_S Σ_{s∈S} z_s (y_s − ȳ_S),      Ω_S = (N / n_S) · Ω_full,

with z = (x − x̄_full) / d_full and Ω_full = V diag(f / s²) V' from the full-sample
decomposition (the factor N/n_S keeps Ω on the scale of the window's Gram matrix). Only the
response of the window enters; what leaks is the geometry learned from future regressors
and the tuning chosen with future responses. For softmax attention the full-sample heads,
standardisation and ridge base are used with the keys restricted to the window (each head's
softmax renormalised over the past rows).

For scale, the audit also reports the classic look-ahead: the model estimated once on the
full sample, responses included (``full_sample``), i.e. in-sample fits dressed as forecasts.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from attnreg._typing import FloatArray
from attnreg.exceptions import OptionError, RankDeficiencyWarning
from attnreg.views.dual import scaled_metric
from attnreg.report.fcfigures import LeakageFigures
from attnreg.report.summary import Summary
from attnreg.methods import get_method
from attnreg.timeseries import evaluation as ev

if TYPE_CHECKING:
    from attnreg.timeseries.forecast_results import ForecastResults


@dataclass(frozen=True)
class LeakageAudit:
    """Honest versus leaky forecasts.

    Attributes
    ----------
    forecasts : DataFrame
        Per target: ``actual``, ``honest``, ``leaky`` (causal mask, full-sample metric),
        ``full_sample`` (everything estimated on the full sample), ``difference``
        (leaky − honest), ``benchmark``.
    oos_r2_honest, oos_r2_leaky, oos_r2_full_sample : float
        Out-of-sample R² of each against the prevailing mean.
    """

    forecasts: pd.DataFrame
    oos_r2_honest: float
    oos_r2_leaky: float
    oos_r2_full_sample: float

    @property
    def oos_r2_gain(self) -> float:
        """How much better the leaky forecasts look (leaky − honest OOS R²).

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import macrodata
        >>> macro = macrodata.load_pandas().data
        >>> macro.index = pd.period_range("1959Q1", periods=len(macro), freq="Q")
        >>> fc = ar.forecast("infl ~ lag(infl, 1) + lag(unemp, 1)", macro, start="2000Q1")
        >>> round(fc.leakage_audit().oos_r2_gain, 4)
        0.025
        """
        return self.oos_r2_leaky - self.oos_r2_honest

    def summary(self) -> Summary:
        """The audit as a report: its figures as numbers, printed or as a table."""
        rmsd = float(np.sqrt(np.mean(self.forecasts["difference"] ** 2)))
        return Summary("Leakage audit", (LeakageFigures(
            len(self.forecasts), float(self.oos_r2_honest), float(self.oos_r2_leaky),
            float(self.oos_r2_full_sample), float(self.oos_r2_gain), rmsd),))

    def to_latex(self) -> str:
        """The figures as a LaTeX tabular (booktabs)."""
        return self.summary().to_latex()

    def to_markdown(self) -> str:
        """The figures as a Markdown (pipe) table."""
        return self.summary().to_markdown()

    def _repr_html_(self) -> str:
        return self.summary()._repr_html_()

    def __str__(self) -> str:
        return str(self.summary()).strip("\n")

    def __repr__(self) -> str:
        return str(self)


def leakage_audit(res: ForecastResults) -> LeakageAudit:
    """Recompute ``res``'s forecasts with the full-sample metric; see the module docstring.

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import macrodata
    >>> macro = macrodata.load_pandas().data
    >>> macro.index = pd.period_range("1959Q1", periods=len(macro), freq="Q")
    >>> fc = ar.forecast("infl ~ lag(infl, 1) + lag(unemp, 1)", macro, start="2000Q1")
    >>> audit = leakage_audit(fc)  # the same as fc.leakage_audit()
    >>> audit.forecasts[["honest", "leaky"]].head(2).round(3)  # doctest: +NORMALIZE_WHITESPACE
            honest  leaky
    target
    2000Q1   3.311  3.551
    2000Q2   3.976  4.197
    """
    plan = res.plan
    estimator = get_method(plan.method)
    caps = estimator.capabilities
    leaky_of = _linear_leaky if caps.linear else _softmax_leaky if caps.attention else None
    if leaky_of is None:
        raise OptionError(f"the leakage audit needs the attention metric of a spectral or softmax "
                          f"fit; method {plan.method!r} has none (it declares neither the linear nor the "
                          "attention capability)")
    rows = np.arange(plan.design.n_obs)
    full = _full_fit(res, rows)
    leaky = leaky_of(plan, full)
    f = res.forecasts
    in_sample = estimator.predict_design(full, plan.design.X[plan.targets])
    table = pd.DataFrame({"actual": f["actual"], "honest": f["forecast"], "leaky": leaky,
                          "full_sample": in_sample, "difference": leaky - f["forecast"].to_numpy(),
                          "benchmark": f["benchmark"]}, index=f.index)
    y, b = table["actual"].to_numpy(), table["benchmark"].to_numpy()
    return LeakageAudit(table, ev.oos_r2(y, table["honest"].to_numpy(), b), ev.oos_r2(y, leaky, b),
                        ev.oos_r2(y, in_sample, b))


def _full_fit(res: ForecastResults, rows: np.ndarray) -> Any:
    from attnreg.timeseries.plan import ForecastPlan
    from attnreg.timeseries.plan import fit_window

    p = res.plan
    whole = ForecastPlan(design=p.design, targets=p.targets[:1], train_start=np.array([0]),
                         train_stop=np.array([rows.size]), refit=np.array([True]),
                         origin_labels=p.origin_labels[:1], method=p.method, scheme=p.scheme,
                         horizon=p.horizon, window=p.window, options=p.options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RankDeficiencyWarning)
        return fit_window(whole, 0)


def _linear_leaky(plan: Any, full: Any) -> FloatArray:
    sp, f = full.spectrum, full.filtered.f
    d = plan.design
    n_full = d.n_obs
    omega = scaled_metric(sp, f)  # the full-sample metric on the scaled columns
    Z = (d.X[:, sp.kept] - sp.center[sp.kept]) / sp.scale[sp.kept]
    out = np.empty(plan.n_forecasts)
    for i in range(plan.n_forecasts):
        a, b = int(plan.train_start[i]), int(plan.train_stop[i])
        y = d.y[a:b]
        ybar = y.mean() if d.intercept else 0.0
        beta = (n_full / (b - a)) * (omega @ (Z[a:b].T @ (y - ybar)))
        out[i] = ybar + Z[plan.targets[i]] @ beta
    return out


def _softmax_leaky(plan: Any, full: Any) -> FloatArray:
    d = plan.design
    X = d.X[:, 1:] if d.intercept else d.X
    sm = full.fit
    out = np.empty(plan.n_forecasts)
    for i in range(plan.n_forecasts):
        a, b = int(plan.train_start[i]), int(plan.train_stop[i])
        q = X[plan.targets[i]][None, :]
        p = sm.head_weights(q)[:, 0, a:b]  # (M, n_S): restrict keys to the past ...
        p = p / p.sum(axis=1, keepdims=True)  # ... and renormalise each head
        w = sm.alpha @ p
        base = sm.base(q)
        att = float(w @ sm.values[a:b])
        out[i] = (base[0] if base is not None else sm.y_mean) + sm.y_scale * att
    return out
