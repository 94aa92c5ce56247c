"""The statistics rows of :func:`~attnreg.report.etable.etable` (a registry: one
:class:`Statistic` per row), the covariance names and the number format it shows."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from attnreg.exceptions import OptionError
from attnreg.report.etable_render import latex_escape

__all__ = ["CLUSTER_OPTIONS", "DEFAULT_STARS", "DEFAULT_STATS", "STATISTICS", "Statistic",
           "covariance_name", "format_number", "register_statistic"]


#: significance stars: each mark for p-values below its cutoff (the economics convention)
DEFAULT_STARS: dict[str, float] = {"***": 0.01, "**": 0.05, "*": 0.1}
#: covariance-option names that carry a cluster variable's name (checked in this order)
CLUSTER_OPTIONS = ("cluster_name", "cluster_names", "cluster_label", "cluster", "clusters",
                    "groups", "time")


#: the statistics rows of :func:`etable` by default (with ``within_r2`` when a fit absorbed
#: fixed effects)
DEFAULT_STATS = ("nobs", "r2", "adj_r2", "sigma")


@dataclass(frozen=True)
class Statistic:
    """A fit statistic :func:`etable` can show in its bottom rows.

    Attributes
    ----------
    label : str
        Row label in text, Markdown and HTML.
    latex : str
        Row label in LaTeX.
    value : callable
        fit -> float, str (shown as it is) or None (None or NaN: a blank cell, e.g. λ of an
        OLS fit).
    kind : {"int", "fixed", "general", "df"}
        Formatting: an integer; ``digits`` decimals; ``digits`` significant digits; an
        integer when it is one, else two decimals (effective degrees of freedom).
    rows : callable, optional
        fit -> {name: value}: a statistic with one row per name (``"<label>, <name>"``), as
        the first-stage F of each endogenous regressor; a fit without it (an
        ``AttributeError``) or without that name leaves its cell blank. ``value`` is then
        unused.
    """

    label: str
    latex: str
    value: Callable[[Any], float | str | None]
    kind: str = "fixed"
    rows: Callable[[Any], Mapping[str, Any]] | None = None

    def expand(self, models: Sequence[Any]) -> list[tuple[str, str, Statistic]]:
        """The rows of this statistic for ``models``: (label, LaTeX label, one-row statistic)."""
        if self.rows is None:
            return [(self.label, self.latex, self)]
        names: dict[str, None] = {}
        for m in models:
            with contextlib.suppress(AttributeError, NotImplementedError, TypeError):
                names.update(dict.fromkeys(self.rows(m)))
        return [(f"{self.label}, {n}", f"{self.latex}, {latex_escape(n)}",
                 Statistic(self.label, self.latex, _row_value(self.rows, n), self.kind))
                for n in names]

    def format(self, fit: Any, digits: int) -> str:
        """The cell of ``fit`` (empty when the fit does not have this statistic)."""
        try:
            v = self.value(fit)
        except (AttributeError, NotImplementedError, TypeError):
            return ""
        if isinstance(v, str):
            return v
        if v is None or not isinstance(v, (int, float, np.integer, np.floating)):
            return ""
        v = float(v)
        if math.isnan(v):
            return ""
        if self.kind == "int" or (self.kind == "df" and v == round(v)):
            return str(round(v))
        if self.kind == "df":
            return f"{v:.2f}"
        if self.kind == "general":
            return f"{v:.{max(digits, 1)}g}"
        return format_number(v, digits)


def f_statistic(fit: Any) -> float | None:
    """A fit's overall F statistic, or None when it has none."""
    return getattr(getattr(fit, "f_test", None), "statistic", None)


def _row_value(rows: Callable[[Any], Mapping[str, Any]], name: str) -> Callable[[Any], Any]:
    """fit -> ``rows(fit)[name]`` (None when the fit has no such row)."""
    return lambda fit: rows(fit).get(name)


def _first_stage(column: str) -> Callable[[Any], Mapping[str, Any]]:
    """fit -> {endogenous regressor: its first-stage statistic ``column``} (IV fits)."""
    return lambda fit: fit.first_stage_f()[column].to_dict()


def _effective_f(fit: Any) -> float | None:
    eff = fit.first_stage_f()["effective_f"]
    return float(eff.iloc[0]) if eff.shape[0] == 1 else None


def cluster_text(fit: Any) -> str | None:
    """The number of clusters (per dimension, ``12 x 8``) of a clustered covariance."""
    counts = getattr(fit, "n_clusters", None)
    if counts is None:
        for value in cluster_values(getattr(fit, "vcov_spec", None)):
            counts = getattr(value, "n_clusters", None)
            if counts is not None:
                break
    if isinstance(counts, (int, np.integer)):
        return str(int(counts))
    if isinstance(counts, (tuple, list)) and counts and all(
            isinstance(c, (int, np.integer)) for c in counts):
        return " x ".join(str(int(c)) for c in counts)
    return None


#: The statistics :func:`etable` knows by name (``stats=``); add one with
#: :func:`register_statistic`.
STATISTICS: dict[str, Statistic] = {
    "nobs": Statistic("Observations", "Observations", lambda f: f.nobs, "int"),
    "r2": Statistic("R2", "$R^2$", lambda f: f.r_squared),
    "adj_r2": Statistic("Adj. R2", "Adjusted $R^2$", lambda f: f.adj_r_squared),
    "sigma": Statistic("Residual std. error", "Residual std.\\ error", lambda f: f.sigma),
    "f": Statistic("F statistic", "$F$ statistic", f_statistic),
    "aic": Statistic("AIC", "AIC", lambda f: f.aic),
    "bic": Statistic("BIC", "BIC", lambda f: f.bic),
    "loglik": Statistic("Log likelihood", "Log likelihood", lambda f: f.loglik),
    "df_resid": Statistic("Residual df", "Residual df", lambda f: f.df_resid, "df"),
    "lam": Statistic("lambda", "$\\lambda$", lambda f: f.lam, "general"),
    "k": Statistic("Components k", "Components $k$", lambda f: f.k, "int"),
    "clusters": Statistic("Clusters", "Clusters", cluster_text, "int"),  # periods for DK
    "within_r2": Statistic("Within R2", "Within $R^2$", lambda f: f.within_r_squared),
    # IV fits (fixest's ivf, ivwald): one row per endogenous regressor
    "ivf": Statistic("F-test (1st stage)", "$F$-test (1st stage)", lambda f: None,
                     rows=_first_stage("ivf")),
    "ivwald": Statistic("Wald (1st stage)", "Wald (1st stage)", lambda f: None,
                        rows=_first_stage("ivwald")),
    "effective_f": Statistic("Effective F", "Effective $F$", _effective_f),
}


def register_statistic(name: str, statistic: Statistic) -> Statistic:
    """Make ``statistic`` available to ``etable(stats=[..., name])``.

    Examples
    --------
    >>> from attnreg.report.etable_stats import STATISTICS, Statistic, register_statistic
    >>> _ = register_statistic("edf", Statistic("Effective df", "Effective df",
    ...                                         lambda f: f.edf, "df"))
    >>> "edf" in STATISTICS
    True
    """
    if not isinstance(name, str) or not name:
        raise OptionError(f"a statistic needs a name, however: {name=}")
    if not isinstance(statistic, Statistic):
        raise OptionError(f"statistic must be a Statistic, however: {type(statistic).__name__}")
    STATISTICS[name] = statistic
    return statistic


def format_number(x: float, digits: int) -> str:
    """``x`` rounded to ``digits`` decimals; a nonzero value that would round to zero is
    given to ``digits`` significant digits in scientific notation instead.

    Examples
    --------
    >>> from attnreg.report.etable_stats import format_number
    >>> format_number(-1.97206, 3), format_number(1829.1514, 3), format_number(3.2e-5, 3)
    ('-1.972', '1829.151', '3.20e-05')
    """
    if math.isnan(x):
        return "NA"
    if math.isinf(x):
        return "Inf" if x > 0 else "-Inf"
    if x != 0.0 and abs(x) < 0.5 * 10.0 ** (-digits):
        return f"{x:.{max(digits - 1, 0)}e}"
    return f"{x:.{digits}f}"


def covariance_name(fit: Any) -> str:
    """The short name of a fit's covariance for the table's "Covariance" row.

    ``"classical"``, the estimator's kind (``"HC1"``), ``"HAC (4 lags)"``, and for a
    covariance with a cluster (or time) variable ``"<kind> (<variable>)"``:
    ``"cluster (firm)"``, ``"cluster (firm + year)"``, ``"DK (year, 2 lags)"``. It reads
    only ``fit.vcov_spec``: its ``kind``, its ``maxlags``, and a variable's name among its
    attributes or options (``cluster_name``, ``cluster_names``, ``cluster_label``,
    ``cluster``, ``clusters``, ``groups``, ``time``) given as a string, a list of strings or
    an object with ``names`` (the cluster ids); so an estimator registered later is named
    by its kind without a change here. The estimator's full description,
    ``vcov_spec.label()``, is in ``ETable.models``. An empty string for a fit without a
    covariance (softmax, networks).

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import longley
    >>> from attnreg.report.etable_stats import covariance_name
    >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP", data=longley.load_pandas().data)
    >>> covariance_name(fit), covariance_name(fit.with_vcov("HC1"))
    ('classical', 'HC1')
    >>> covariance_name(fit.with_vcov("HAC", maxlags=2))
    'HAC (2 lags)'
    """
    spec = getattr(fit, "vcov_spec", None)
    if spec is None:
        return ""
    kind = str(getattr(spec, "kind", "") or "")
    details = []
    variable = next((v for v in map(variable_name, cluster_values(spec)) if v), "")
    if variable and variable != kind:
        details.append(variable)
    lags = getattr(spec, "maxlags", None)
    if isinstance(lags, (int, np.integer)) and not isinstance(lags, bool):
        details.append(f"{int(lags)} lag{'' if lags == 1 else 's'}")
    return f"{kind} ({', '.join(details)})" if details else kind


def cluster_values(spec: Any) -> list[Any]:
    """The values of the spec's cluster-like attributes and options, in the search order."""
    if spec is None:
        return []
    option = getattr(spec, "option", None)
    values = []
    for name in CLUSTER_OPTIONS:
        values.append(getattr(spec, name, None))
        if callable(option):
            with contextlib.suppress(Exception):  # an option reader that does not know it
                values.append(option(name))
    return [v for v in values if v is not None]


def variable_name(value: Any) -> str:
    """The name of a cluster variable as the table shows it."""
    names = getattr(value, "names", value)
    if isinstance(names, str):
        return names
    if isinstance(names, (list, tuple)) and names and all(isinstance(v, str) for v in names):
        return " + ".join(names)
    return ""
