"""Event-study coefficients of an ``i()`` term: the table and fixest's ``iplot``.

:func:`event_study` gathers the coefficients of one ``i(var, treated, ref=)`` term
(:mod:`attnreg.formula.indicators`) over the levels of ``var``, with their standard errors
and confidence intervals under the fit's covariance; each reference level is a row with
estimate 0 and no interval (``reference`` True), as fixest's ``iplot`` draws it.
:func:`plot_event_study` draws that table: the estimates with their intervals, the
reference level(s) at 0 as hollow points, a horizontal line at 0 and a vertical dashed line
halfway between the last reference level and the level after it (the first post-treatment
period when ``ref=-1``). Numeric levels are placed at their values, other levels in order.
Reached as ``fit.event_study()`` and ``fit.plot(kind="event")``.

Importing this module does not import matplotlib; the first plot does.

Examples
--------
>>> import numpy as np, pandas as pd
>>> import attnreg as ar
>>> rng = np.random.default_rng(0)
>>> df = pd.DataFrame({"unit": np.repeat(np.arange(20), 6), "t": np.tile(np.arange(6), 20)})
>>> df["d"] = (df.unit < 10).astype(int)
>>> df["rel"] = df.t - 3
>>> df["y"] = df.unit * 0.1 + df.d * (df.rel >= 0) + rng.normal(size=120) * 0.1
>>> fit = ar.attnreg("y ~ i(rel, d, ref=-1) | unit + t", df)
>>> tab = event_study(fit)
>>> tab["level"].tolist(), tab["reference"].tolist()
([-3, -2, -1, 0, 1, 2], [False, False, True, False, False, False])
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from attnreg.exceptions import OptionError
from attnreg.formula.indicators import IndicatorTerm, indicator_terms, level_text

__all__ = ["event_line", "event_study", "plot_event_study"]


def _term(fit: Any, term: str | None) -> IndicatorTerm:
    """The ``i()`` term ``term`` (its code or its variable) of the fit; the only one if None."""
    design = getattr(fit, "design", None)
    info = getattr(design, "design_info", None)
    if info is None:  # a chunked fit keeps its design info in its spec
        info = getattr(getattr(fit, "spec", None), "x_info", None)
    terms = [] if info is None else indicator_terms(info)
    if not terms:
        raise OptionError("the event-study view needs an i() term in the formula, e.g. "
                          "'y ~ i(rel_time, treated, ref=-1) | unit + time'; this fit has none")
    if term is None:
        if len(terms) > 1:
            raise OptionError(f"the fit has {len(terms)} i() terms: choose one with term=, "
                              f"one of {', '.join(repr(t.code) for t in terms)}")
        return terms[0]
    squeezed = "".join(str(term).split())
    found = [t for t in terms if squeezed in ("".join(t.code.split()), t.var)]
    if len(found) != 1:
        raise OptionError(f"term={term!r} is not one of the fit's i() terms: "
                          f"{', '.join(repr(t.code) for t in terms)} (or their variables "
                          f"{', '.join(repr(t.var) for t in terms)})")
    return found[0]


def event_study(fit: Any, term: str | None = None, level: float = 0.95) -> pd.DataFrame:
    """The coefficients of an ``i()`` term over the levels of its variable.

    Parameters
    ----------
    fit : LinearResults or ChunkedResults
        A fit whose formula has an ``i()`` term (with or without fixed effects).
    term : str, optional
        Which ``i()`` term, by its code (``"i(rel_time, treated, ref=-1)"``) or variable
        (``"rel_time"``); needed only when there are several.
    level : float
        Coverage of the confidence intervals (Student's t on the fit's covariance, as
        ``conf_int``).

    Returns
    -------
    DataFrame, shape (n_levels, 6)
        Indexed by the column name of each level (``rel_time::0:treated``; the reference
        levels named alike), in the order of the levels: ``level`` (the value of the
        variable), ``estimate``, ``std_err``, ``lower``, ``upper`` and ``reference`` (True
        for the reference levels, whose estimate and interval are 0). An aliased
        coefficient's row is NaN.
    """
    found = _term(fit, term)
    ci = fit.conf_int(level)
    tail = "" if found.treated is None else f":{found.treated}"
    is_ref = np.array([any(lv == r for r in found.ref) for lv in found.levels], dtype=bool)
    names = [f"{found.var}::{level_text(lv)}{tail}" for lv in found.levels]
    cols = list(found.columns)
    est = np.zeros(len(names))
    se, lower, upper = est.copy(), est.copy(), est.copy()
    kept = ~is_ref
    est[kept] = fit.coef[cols].to_numpy()
    se[kept] = fit.std_err[cols].to_numpy()
    lower[kept] = ci.loc[cols].iloc[:, 0].to_numpy()
    upper[kept] = ci.loc[cols].iloc[:, 1].to_numpy()
    out = pd.DataFrame({"level": pd.Series(list(found.levels), dtype=object), "estimate": est,
                        "std_err": se, "lower": lower, "upper": upper, "reference": is_ref})
    out.index = pd.Index(names, name="name")
    out.attrs.update(term=found.code, var=found.var, level=float(level))
    return out


def _positions(levels: list[Any]) -> tuple[np.ndarray, bool]:
    """x positions of the levels: their values when all are real numbers, else 0, 1, ..."""
    numeric = all(isinstance(v, (int, float, np.integer, np.floating))
                  and not isinstance(v, (bool, np.bool_)) for v in levels)
    if numeric:
        return np.asarray(levels, dtype=np.float64), True
    return np.arange(len(levels), dtype=np.float64), False


def event_line(x: np.ndarray, reference: np.ndarray) -> float | None:
    """Where the vertical line goes: halfway between the last reference level and the next
    level (at the last reference level when none follows); None without a reference.

    Examples
    --------
    >>> event_line(np.array([-2.0, -1.0, 0.0, 1.0]), np.array([False, True, False, False]))
    -0.5
    """
    if not reference.any():
        return None
    last = float(x[reference].max())
    after = x[x > last]
    return last if after.size == 0 else 0.5 * (last + float(after.min()))


def _axes(ax: Any) -> Any:
    try:
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("plots need matplotlib: pip install 'attnreg[plot]'") from None
    if ax is not None:
        return ax
    _, axes = plt.subplots(1, 1, figsize=(7.0, 4.0), constrained_layout=True)
    return axes


def plot_event_study(fit: Any, term: str | None = None, level: float = 0.95,
                     ax: Any = None) -> Any:
    """fixest's ``iplot``: the coefficients of an ``i()`` term with their intervals.

    Draws :func:`event_study`'s table: points at the estimates with bars from ``lower`` to
    ``upper`` (one errorbar container, ``ax.containers[0]``), the reference level(s) at 0 as
    hollow points (label ``"reference"``), a horizontal line at 0 (gid ``"zero"``) and a
    vertical dashed line before the first level after the reference (:func:`event_line`;
    gid ``"event"``).

    Parameters
    ----------
    fit : LinearResults
    term : str, optional
        Which ``i()`` term (see :func:`event_study`).
    level : float
        Coverage of the intervals.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np, pandas as pd
    >>> import attnreg as ar
    >>> df = pd.DataFrame({"unit": np.repeat(np.arange(20), 6), "t": np.tile(np.arange(6), 20)})
    >>> df["d"] = (df.unit < 10).astype(int)
    >>> df["rel"] = df.t - 3
    >>> df["y"] = np.sin(df.unit + df.t) + df.d * (df.rel >= 0)
    >>> ax = plot_event_study(ar.attnreg("y ~ i(rel, d, ref=-1) | unit + t", df))
    >>> ax.get_xlabel(), [float(v) for v in ax.lines[-1].get_xdata()]  # the "event" line
    ('rel', [-0.5, -0.5])
    """
    table = event_study(fit, term, level)
    ax = _axes(ax)
    x, numeric = _positions(table["level"].tolist())
    ref = table["reference"].to_numpy()
    est = table["estimate"].to_numpy()
    bars = np.vstack([est - table["lower"].to_numpy(), table["upper"].to_numpy() - est])
    ax.errorbar(x[~ref], est[~ref], yerr=bars[:, ~ref], fmt="o", color="tab:blue", capsize=3,
                label=f"estimate and {level:.0%} conf. int.")
    ax.plot(x[ref], est[ref], "o", mfc="white", color="tab:blue", label="reference")
    ax.axhline(0.0, color="black", lw=0.8, gid="zero")
    if not numeric:
        ax.set_xticks(x, [level_text(v) for v in table["level"]])
    where = event_line(x, ref)
    if where is not None:
        ax.axvline(where, color="grey", ls="--", lw=1, gid="event")
    ax.set_xlabel(table.attrs["var"])
    ax.set_ylabel(f"Estimate and {level:.0%} conf. int.")
    ax.set_title(f"Effect on {fit.design.response_name}: {table.attrs['term']}")
    return ax
