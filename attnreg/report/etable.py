"""Publication tables of several fits: :func:`etable` and its result :class:`ETable`.

One column per model, ``(1)``, ``(2)``, …, headed by the dependent variable and the method;
a row per coefficient with its estimate (and significance stars) and, below it, the
standard error or t statistic in parentheses; a row naming each model's covariance; rows of
fit statistics from :data:`STATISTICS`; notes. The numbers are those of the fits (under the
covariance each one uses, or the one ``se=`` asks for); the renderers (plain text,
Markdown, LaTeX with booktabs, HTML) are in :mod:`attnreg.report.etable_render`.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from attnreg.exceptions import OptionError
from attnreg.report import compact as _compact
from attnreg.report import etable_render as _render

__all__ = ["DEFAULT_STARS", "STATISTICS", "ETable", "Statistic", "covariance_name", "etable",
           "format_number", "register_statistic"]

#: significance stars: each mark for p-values below its cutoff (the economics convention)
DEFAULT_STARS: dict[str, float] = {"***": 0.01, "**": 0.05, "*": 0.1}

_METHODS = {"ols": "OLS", "pcr": "PCR"}
#: covariance-option names that carry a cluster variable's name (checked in this order)
_CLUSTER_OPTIONS = ("cluster_name", "cluster_names", "cluster_label", "cluster", "clusters",
                    "groups", "time")


#: the statistics rows of :func:`etable` by default (with ``within_r2`` when a fit absorbed
#: fixed effects)
_DEFAULT_STATS = ("nobs", "r2", "adj_r2", "sigma")


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
        return [(f"{self.label}, {n}", f"{self.latex}, {_render.latex_escape(n)}",
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


def _f_statistic(fit: Any) -> float | None:
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


def _clusters(fit: Any) -> str | None:
    """The number of clusters (per dimension, ``12 x 8``) of a clustered covariance."""
    counts = getattr(fit, "n_clusters", None)
    if counts is None:
        for value in _cluster_values(getattr(fit, "vcov_spec", None)):
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
    "f": Statistic("F statistic", "$F$ statistic", _f_statistic),
    "aic": Statistic("AIC", "AIC", lambda f: f.aic),
    "bic": Statistic("BIC", "BIC", lambda f: f.bic),
    "loglik": Statistic("Log likelihood", "Log likelihood", lambda f: f.loglik),
    "df_resid": Statistic("Residual df", "Residual df", lambda f: f.df_resid, "df"),
    "lam": Statistic("lambda", "$\\lambda$", lambda f: f.lam, "general"),
    "k": Statistic("Components k", "Components $k$", lambda f: f.k, "int"),
    "clusters": Statistic("Clusters", "Clusters", _clusters, "int"),  # periods for DK
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
    >>> from attnreg.report.etable import STATISTICS, Statistic, register_statistic
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
    >>> from attnreg.report.etable import format_number
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
    >>> from attnreg.report.etable import covariance_name
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
    variable = next((v for v in map(_variable_name, _cluster_values(spec)) if v), "")
    if variable and variable != kind:
        details.append(variable)
    lags = getattr(spec, "maxlags", None)
    if isinstance(lags, (int, np.integer)) and not isinstance(lags, bool):
        details.append(f"{int(lags)} lag{'' if lags == 1 else 's'}")
    return f"{kind} ({', '.join(details)})" if details else kind


def _cluster_values(spec: Any) -> list[Any]:
    """The values of the spec's cluster-like attributes and options, in the search order."""
    if spec is None:
        return []
    option = getattr(spec, "option", None)
    values = []
    for name in _CLUSTER_OPTIONS:
        values.append(getattr(spec, name, None))
        if callable(option):
            with contextlib.suppress(Exception):  # an option reader that does not know it
                values.append(option(name))
    return [v for v in values if v is not None]


def _variable_name(value: Any) -> str:
    names = getattr(value, "names", value)
    if isinstance(names, str):
        return names
    if isinstance(names, (list, tuple)) and names and all(isinstance(v, str) for v in names):
        return " + ".join(names)
    return ""


@dataclass(frozen=True)
class ETable:
    """A publication table of several fits (made by :func:`etable`).

    Attributes
    ----------
    table : DataFrame, shape (n_rows, n_models)
        The cells as text, columns ``"(1)"``, ``"(2)"``, …; a two-level row index
        (``row``, ``part``) with part ``"header"`` (dependent variable, method),
        ``"estimate"`` and ``"se"`` or ``"t"`` (the coefficient rows; the second shares
        the term's name), ``"covariance"`` and ``"statistic"``.
    notes : tuple of str
        The lines below the table.
    models : DataFrame, shape (n_models, 4)
        Per column: ``dependent``, ``method``, ``covariance`` (the short name in the table)
        and ``covariance_label`` (the estimator's full description).
    statistic_labels : tuple of (str, str)
        Text and LaTeX labels of the statistic rows.
    style : {"publication", "compact"}
        The layout. ``"compact"`` (:mod:`attnreg.report.compact`, what :func:`compare`
        prints): ``table`` is indexed by ``term`` alone, a coefficient's standard error in
        the row below it with an empty label, then fixed rows (method, N, R², adjusted R²,
        σ, AIC, effective df, λ or k); numbers to 4 significant digits, R's stars; no notes.

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import longley
    >>> df = longley.load_pandas().data
    >>> fits = [ar.attnreg("TOTEMP ~ GNP", df), ar.attnreg("TOTEMP ~ GNP + UNEMP", df)]
    >>> t = ar.etable(fits, se=[None, "HC1"])
    >>> t.table.loc[("GNP", "estimate")].tolist()
    ['0.035***', '0.038***']
    >>> t.table.loc[("Covariance", "covariance")].tolist()
    ['classical', 'HC1']
    >>> print(str(t).splitlines()[1])
                              (1)        (2)
    """

    table: pd.DataFrame
    notes: tuple[str, ...]
    models: pd.DataFrame
    statistic_labels: tuple[tuple[str, str], ...] = ()
    style: str = "publication"

    def __str__(self) -> str:
        return _compact.text(self) if self.style == "compact" else _render.text(self)

    def __repr__(self) -> str:
        return str(self)

    def to_markdown(self) -> str:
        """The table as a Markdown (pipe) table, notes below; ``*`` and ``_`` escaped."""
        return _compact.markdown(self) if self.style == "compact" else _render.markdown(self)

    def to_latex(self) -> str:
        """The table as a LaTeX ``tabular`` with booktabs rules (needs ``\\usepackage{booktabs}``);
        names escaped (``C(g)[T.b]``, underscores), stars as superscripts, notes in the
        last rows."""
        return _compact.latex(self) if self.style == "compact" else _render.latex(self)

    def to_html(self) -> str:
        """The table as an HTML ``<table>`` (header, body, notes in the footer), escaped."""
        return _compact.html(self) if self.style == "compact" else _render.html(self)

    def _repr_html_(self) -> str:
        return self.to_html()


def etable(fits: Any, se: Any = None, *, keep: str | Sequence[str] | None = None,
           drop: str | Sequence[str] | None = None, rename: Mapping[str, str] | None = None,
           digits: int = 3, stars: bool | Mapping[str, float] = True,
           stats: Sequence[str] = ("nobs", "r2", "adj_r2", "sigma"),
           notes: str | Sequence[str] | None = None, show: str = "se",
           default_note: bool = True, names: Sequence[str] | None = None,
           style: str = "publication") -> ETable:
    """A publication table of several fits, side by side.

    Parameters
    ----------
    fits : sequence of results
        Fits of :func:`attnreg.attnreg`, one column each (chunked and dask fits included).
        Softmax and network fits have no
        coefficients: their column shows only the statistics they have (observations,
        R², σ), with the coefficient and covariance cells empty.
    se : str, dict, or list of those (one per model), optional
        The covariance to report, applied with ``fit.with_vcov``: a kind (``"HC1"``), a
        dict of ``with_vcov`` keyword arguments (``{"kind": "cluster", "cluster": "firm"}``,
        ``{"kind": "HAC", "maxlags": 4}``), or a list with one entry per model (``None``
        keeps that model's covariance). A single kind or dict applies to every model with
        coefficients. Default: each fit's own covariance.
    keep, drop : str or list of str, optional
        Coefficients to show / leave out: each entry is an exact name or a regular
        expression (``re.search``); one that matches no coefficient is an error.
    rename : dict, optional
        Display names, ``{"C(g)[T.b]": "group b"}``; two terms renamed alike share a row
        (for models that name the same thing differently).
    digits : int
        Decimals of estimates, standard errors and statistics (0 to 15).
    stars : bool or dict
        ``True``: ``*** p<0.01, ** p<0.05, * p<0.1`` (:data:`DEFAULT_STARS`); ``False``:
        none; or a dict of mark -> cutoff. p-values are each model's, under its covariance
        and its inference degrees of freedom.
    stats : sequence of str
        Bottom rows, by name in :data:`STATISTICS`: ``nobs``, ``r2``, ``adj_r2``,
        ``sigma``, ``f``, ``aic``, ``bic``, ``loglik``, ``df_resid``, ``lam``, ``k``,
        ``clusters``, ``within_r2`` (fits with absorbed fixed effects; added to the
        default rows when a fit has them), and for IV fits fixest's ``ivf`` (the
        first-stage F of each endogenous regressor, a row each), ``ivwald`` (the same test
        under the fit's covariance) and ``effective_f`` (Montiel Olea–Pflueger), added to
        the default rows when an IV fit is in the table (``ivwald`` when one has a robust
        covariance, ``effective_f`` when one has a single endogenous regressor). For ridge
        and PCR the degrees of freedom are the effective ones. A fit with absorbed fixed
        effects adds a row per fixed effect (``firm FE``: ``Yes`` / ``No``) above the
        covariance.
    notes : str or list of str, optional
        Lines added below the default note.
    show : {"se", "t"}
        What the parentheses hold: standard errors or t statistics.
    default_note : bool
        Start the notes with the line explaining the stars and the parentheses (and, with
        ridge or PCR columns, that their inference is conditional on λ or k).
    names : sequence of str, optional
        Column titles, one per model (default ``"(1)"``, ``"(2)"``, …; in the compact
        layout ``"(1) ols"``, …).
    style : {"publication", "compact"}
        The layout: the publication table, or the compact side-by-side view of
        :func:`compare` (:mod:`attnreg.report.compact`: fixed rows and formats, so it takes
        ``se``, ``keep``, ``drop`` and ``names`` only).

    Returns
    -------
    ETable
        ``str()``, ``to_markdown()``, ``to_latex()``, ``to_html()``; ``.table`` holds the
        cells.

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import longley
    >>> df = longley.load_pandas().data
    >>> f = "TOTEMP ~ GNP + UNEMP + ARMED"
    >>> fits = [ar.attnreg(f, df), ar.attnreg(f, df, method="ridge", lam=0.1)]
    >>> t = ar.etable(fits, se="HC1", drop="Intercept", stats=["nobs", "r2", "lam"])
    >>> print(t)  # doctest: +NORMALIZE_WHITESPACE
    ====================================
                          (1)        (2)
    Dependent var.     TOTEMP     TOTEMP
    Method                OLS      ridge
    ------------------------------------
    GNP              0.041***   0.040***
                      (0.002)    (0.002)
    UNEMP           -0.797***  -0.724***
                      (0.155)    (0.148)
    ARMED            -0.483**   -0.405**
                      (0.181)    (0.167)
    ------------------------------------
    Covariance            HC1        HC1
    Observations           16         16
    R2                  0.985      0.985
    lambda                           0.1
    ====================================
    Standard errors in parentheses. Significance: *** p<0.01, ** p<0.05, * p<0.1.
    Ridge and PCR: inference conditional on the chosen lambda or k, with effective df.
    >>> t.table.loc[("UNEMP", "se"), "(1)"]
    '(0.155)'
    """
    models = _as_models(fits)
    names = _check_names(names, models)
    if style == "compact":
        _check_compact(rename=rename is None, digits=digits == 3, stars=stars is True,
                       stats=tuple(stats) == ("nobs", "r2", "adj_r2", "sigma"),
                       notes=notes is None, show=show == "se", default_note=default_note)
        return _compact_etable(_apply_se(models, se), keep, drop, names)
    if style != "publication":
        raise OptionError(f"style must be 'publication' or 'compact', however: {style=}")
    digits = _check_digits(digits)
    if show not in ("se", "t"):
        raise OptionError(f"show must be 'se' or 't', however: {show=}")
    marks = _check_stars(stars)
    chosen = _check_stats(stats)
    models = _apply_se(models, se)
    terms = _terms(models)
    terms = _select(terms, keep, "keep", keep=True)
    terms = _select(terms, drop, "drop", keep=False)
    rows, display = _rename(terms, rename, models)

    columns = names or [f"({i + 1})" for i in range(len(models))]
    index: list[tuple[str, str]] = [("Dependent var.", "header"), ("Method", "header")]
    cells: list[list[str]] = [[_dependent(m) for m in models], [_method(m) for m in models]]
    for label in display:
        index += [(label, "estimate"), (label, show)]
        est, err = zip(*(_coef_cells(m, rows[label], show, digits, marks) for m in models),
                       strict=True)
        cells += [list(est), list(err)]
    absorbed = [tuple(getattr(m, "fixed_effect_names", ())) for m in models]
    for name in dict.fromkeys(n for names in absorbed for n in names):  # "firm FE: Yes" rows
        index.append((f"{name} FE", "fixed_effects"))
        cells.append(["Yes" if name in names else "No" for names in absorbed])
    index.append(("Covariance", "covariance"))
    cells.append([covariance_name(m) for m in models])
    if any(absorbed) and "within_r2" not in chosen and tuple(stats or ()) == _DEFAULT_STATS:
        chosen = [*chosen, "within_r2"]
    if tuple(stats or ()) == _DEFAULT_STATS:
        chosen = [*chosen, *_iv_defaults(models)]
    rows_shown = [row for name in chosen for row in STATISTICS[name].expand(models)]
    for label, _, stat in rows_shown:
        index.append((label, "statistic"))
        cells.append([stat.format(m, digits) for m in models])
    table = pd.DataFrame(cells, columns=columns,
                         index=pd.MultiIndex.from_tuples(index, names=["row", "part"]))
    info = pd.DataFrame({"dependent": [_dependent(m) for m in models],
                         "method": [_method(m) for m in models],
                         "covariance": [covariance_name(m) for m in models],
                         "covariance_label": [_covariance_label(m) for m in models]},
                        index=columns)
    lines = _default_note(models, show, marks) if default_note else []
    lines += _notes(notes)
    labels = tuple((label, latex) for label, latex, _ in rows_shown)
    return ETable(table=table, notes=tuple(lines), models=info, statistic_labels=labels)


def _iv_defaults(models: list[Any]) -> list[str]:
    """The first-stage rows added to the default statistics when IV fits are in the table:
    ``ivf``; ``ivwald`` when one of them uses a robust covariance; ``effective_f`` when one
    has a single endogenous regressor."""
    iv = [m for m in models if callable(getattr(m, "first_stage_f", None))]
    if not iv:
        return []
    out = ["ivf"]
    if any(getattr(m, "vcov_kind", "classical") != "classical" for m in iv):
        out.append("ivwald")
    if any(len(m.frame.endog_names) == 1 for m in iv):
        out.append("effective_f")
    return out


def _compact_etable(models: list[Any], keep: Any, drop: Any, names: list[str]) -> ETable:
    """The compact layout (:mod:`attnreg.report.compact`); terms: every fit's ``names``."""
    terms: dict[str, None] = {}
    for m in models:
        terms.update(dict.fromkeys(getattr(m, "names", [])))
    kept = _select(_select(list(terms), keep, "keep", keep=True), drop, "drop", keep=False)
    columns = names or [f"({i + 1}) {m.method}" for i, m in enumerate(models)]
    info = pd.DataFrame({"dependent": [_dependent(m) for m in models],
                         "method": [_method(m) for m in models],
                         "covariance": [covariance_name(m) for m in models],
                         "covariance_label": [_covariance_label(m) for m in models]},
                        index=columns)
    return ETable(table=_compact.compact_table(models, columns, kept), notes=(), models=info,
                  style="compact")


# ------------------------------------------------------------------------------ validation

def _as_models(fits: Any) -> list[Any]:
    if hasattr(fits, "method") and hasattr(fits, "nobs"):
        fits = [fits]
    if isinstance(fits, (str, bytes, Mapping)) or not isinstance(fits, Sequence):
        raise OptionError(f"fits must be a list of fitted models (results of attnreg()), "
                          f"however: {type(fits).__name__}")
    if not fits:
        raise OptionError("etable() needs at least one fit, however: fits is empty")
    for i, fit in enumerate(fits):
        if not all(hasattr(fit, a) for a in ("method", "nobs")) or _frame_of(fit) is None:
            raise OptionError(f"etable() takes fitted models (results of attnreg()), however "
                              f"fits[{i}] is {type(fit).__name__}")
    return list(fits)


def _check_names(names: Any, models: list[Any]) -> list[str]:
    if names is None:
        return []
    if isinstance(names, str) or not isinstance(names, Sequence):
        raise OptionError(f"names must be a list of column titles, however: {names=}")
    if len(names) != len(models):
        raise OptionError(f"names must have one entry per fit ({len(models)}), however: "
                          f"{len(names)=}")
    return [str(n) for n in names]


def _check_compact(**is_default: bool) -> None:
    given = [name for name, default in is_default.items() if not default]
    if given:
        raise OptionError(f"style='compact' has fixed rows and formats, however "
                          f"{', '.join(given)} {'was' if len(given) == 1 else 'were'} given; "
                          "leave them out or use style='publication'")


def _check_digits(digits: Any) -> int:
    if (not isinstance(digits, (int, np.integer)) or isinstance(digits, bool)
            or not 0 <= digits <= 15):
        raise OptionError(f"digits must be an integer from 0 to 15, however: {digits=}")
    return int(digits)


def _check_stars(stars: Any) -> dict[str, float]:
    if stars is True:
        return dict(DEFAULT_STARS)
    if stars is False or stars is None:
        return {}
    if isinstance(stars, Mapping) and all(
            isinstance(k, str) and k and isinstance(v, (int, float)) and 0 < v < 1
            for k, v in stars.items()):
        return dict(sorted(stars.items(), key=lambda kv: kv[1]))
    raise OptionError(f"stars must be True, False or a dict of mark -> p-value cutoff in "
                      f"(0, 1), however: {stars=}")


def _check_stats(stats: Any) -> list[str]:
    if isinstance(stats, str):
        stats = [stats]
    if stats is None:
        return []
    if not isinstance(stats, Sequence) or not all(isinstance(s, str) for s in stats):
        raise OptionError(f"stats must be a list of statistic names, however: {stats=}")
    unknown = [s for s in stats if s not in STATISTICS]
    if unknown:
        raise OptionError(f"stats: unknown statistic(s) {', '.join(map(repr, unknown))}; "
                          f"known: {', '.join(STATISTICS)}")
    return list(stats)


def _apply_se(models: list[Any], se: Any) -> list[Any]:
    if se is None:
        return models
    if isinstance(se, (str, Mapping)):
        return [_with_vcov(m, se, i) if hasattr(m, "with_vcov") else m
                for i, m in enumerate(models)]
    if isinstance(se, Sequence) and not isinstance(se, (str, bytes)):
        if len(se) != len(models):
            raise OptionError(f"se must have one entry per model ({len(models)}), however it "
                              f"has {len(se)}")
        out = []
        for i, (m, s) in enumerate(zip(models, se, strict=True)):
            if s is not None and not hasattr(m, "with_vcov"):
                raise OptionError(f"se[{i}]: model ({i + 1}) is a {m.method} fit, which has no "
                                  f"covariance to choose; use None for it, however: {s!r}")
            out.append(m if s is None else _with_vcov(m, s, i))
        return out
    raise OptionError(f"se must be a covariance kind, a dict of with_vcov arguments or a list "
                      f"of those, however: {type(se).__name__}")


def _with_vcov(fit: Any, se: Any, i: int) -> Any:
    try:
        if isinstance(se, str):
            return fit.with_vcov(se)
        if isinstance(se, Mapping):
            return fit.with_vcov(**dict(se))
    except OptionError as exc:
        raise OptionError(f"se for model ({i + 1}): {exc}") from None
    except TypeError as exc:
        raise OptionError(f"se for model ({i + 1}): with_vcov does not take {dict(se)!r} "
                          f"({exc})") from None
    raise OptionError(f"se for model ({i + 1}) must be a covariance kind or a dict of "
                      f"with_vcov arguments, however: {se!r}")


def _terms(models: list[Any]) -> list[str]:
    terms: dict[str, None] = {}
    for m in models:
        coef = getattr(m, "coef", None)
        if isinstance(coef, pd.Series):
            terms.update(dict.fromkeys(map(str, coef.index)))
    return list(terms)


def _patterns(spec: Any, what: str) -> list[str]:
    if spec is None:
        return []
    if isinstance(spec, str):
        return [spec]
    if isinstance(spec, Sequence) and all(isinstance(s, str) for s in spec):
        return list(spec)
    raise OptionError(f"{what} must be a name or regular expression, or a list of them, "
                      f"however: {what}={spec!r}")


def _unspaced(text: str) -> str:
    """A coefficient name without whitespace: ``I(x**2)`` and patsy's ``I(x ** 2)`` agree."""
    return "".join(text.split())


def _matches(pattern: str, term: str) -> bool:
    if pattern == term or _unspaced(pattern) == _unspaced(term):
        return True
    try:
        return re.search(pattern, term) is not None
    except re.error:
        return False


def _select(terms: list[str], spec: Any, what: str, *, keep: bool) -> list[str]:
    patterns = _patterns(spec, what)
    if not patterns:
        return terms
    idle = [p for p in patterns if not any(_matches(p, t) for t in terms)]
    if idle:
        raise OptionError(f"{what}: {', '.join(map(repr, idle))} match(es) no coefficient; "
                          f"the coefficients are {', '.join(terms)}")
    return [t for t in terms if any(_matches(p, t) for p in patterns) == keep]


def _rename(terms: list[str], rename: Any, models: list[Any]
            ) -> tuple[dict[str, list[str]], list[str]]:
    """Display label -> the terms it shows (in order of first appearance)."""
    if rename is None:
        rename = {}
    if not isinstance(rename, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in rename.items()):
        raise OptionError(f"rename must be a dict of coefficient name -> display name, "
                          f"however: {rename=}")
    spelled = {_unspaced(t): t for t in terms}  # names match whatever their spacing
    rename = {spelled.get(_unspaced(k), k): v for k, v in rename.items()}
    unknown = [k for k in rename if k not in terms]
    if unknown:
        raise OptionError(f"rename: {', '.join(map(repr, unknown))} is not a coefficient in "
                          f"the table; the coefficients are {', '.join(terms)}")
    rows: dict[str, list[str]] = {}
    for t in terms:
        rows.setdefault(rename.get(t, t), []).append(t)
    for label, group in rows.items():
        for i, m in enumerate(models):
            coef = getattr(m, "coef", None)
            both = [t for t in group if isinstance(coef, pd.Series) and t in coef.index]
            if len(both) > 1:
                raise OptionError(f"rename: model ({i + 1}) has both {both[0]!r} and "
                                  f"{both[1]!r}, which would share the row {label!r}")
    return rows, list(rows)


def _notes(notes: Any) -> list[str]:
    if notes is None:
        return []
    if isinstance(notes, str):
        return [notes]
    if isinstance(notes, Sequence) and all(isinstance(n, str) for n in notes):
        return list(notes)
    raise OptionError(f"notes must be a string or a list of strings, however: {notes=}")


# ------------------------------------------------------------------------------ cells

def _frame_of(fit: Any) -> Any:
    """What a fit knows of its model frame: the design of an in-memory fit, the spec of a
    chunked one (both have ``response_name`` and ``weights``, None when unweighted)."""
    design = getattr(fit, "design", None)
    return design if design is not None else getattr(fit, "spec", None)


def _dependent(fit: Any) -> str:
    return str(getattr(_frame_of(fit), "response_name", ""))


def _method(fit: Any) -> str:
    method = str(fit.method)
    rule = getattr(fit, "rule", None)  # what a linear fit declares: least squares or penalised
    if rule is None:
        return _METHODS.get(method, method)
    if rule.least_squares and getattr(_frame_of(fit), "weights", None) is not None:
        return "WLS"
    return str(rule.label)


def _covariance_label(fit: Any) -> str:
    spec = getattr(fit, "vcov_spec", None)
    label = getattr(spec, "label", None)
    return str(label()) if callable(label) else ""


def _stars_of(p: float, marks: dict[str, float]) -> str:
    if math.isnan(p):
        return ""
    for mark, cut in marks.items():
        if p < cut:
            return mark
    return ""


def _coef_cells(fit: Any, terms: list[str], show: str, digits: int,
                marks: dict[str, float]) -> tuple[str, str]:
    coef = getattr(fit, "coef", None)
    if not isinstance(coef, pd.Series):
        return "", ""
    term = next((t for t in terms if t in coef.index), None)
    if term is None:
        return "", ""
    est = float(coef[term])
    if math.isnan(est):
        return "NA", ""
    err = float((fit.std_err if show == "se" else fit.t_value)[term])
    p = float(fit.p_value[term]) if marks else float("nan")
    return (format_number(est, digits) + _stars_of(p, marks),
            f"({format_number(err, digits)})")


def _default_note(models: list[Any], show: str, marks: dict[str, float]) -> list[str]:
    what = "Standard errors" if show == "se" else "t statistics"
    line = f"{what} in parentheses."
    if marks:
        line += " Significance: " + ", ".join(f"{m} p<{c:g}" for m, c in marks.items()) + "."
    lines = [line]
    if any(getattr(getattr(m, "rule", None), "penalized", False) for m in models):
        lines.append("Ridge and PCR: inference conditional on the chosen lambda or k, with "
                     "effective df.")
    return lines
