"""Publication tables of several fits: :func:`etable` and its result :class:`ETable`.

One column per model, ``(1)``, ``(2)``, …, headed by the dependent variable and the method;
a row per coefficient with its estimate (and significance stars) and, below it, the
standard error or t statistic in parentheses; a row naming each model's covariance; rows of
fit statistics from :data:`STATISTICS`; notes. The numbers are those of the fits (under the
covariance each one uses, or the one ``se=`` asks for); the renderers (plain text,
Markdown, LaTeX with booktabs, HTML) are in :mod:`attnreg.report.etable_render`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from attnreg.exceptions import OptionError
from attnreg.report import compact as _compact
from attnreg.report import etable_render as _render
from attnreg.report.etable_options import (
    all_terms,
    apply_se,
    as_models,
    check_compact,
    check_digits,
    check_names,
    check_notes,
    check_stars,
    check_stats,
    frame_of,
    rename_terms,
    select_terms,
)
from attnreg.report.etable_stats import (
    DEFAULT_STATS,
    STATISTICS,
    covariance_name,
    format_number,
)

__all__ = ["ETable", "etable"]
_METHODS = {"ols": "OLS", "pcr": "PCR"}


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
    models = as_models(fits)
    names = check_names(names, models)
    if style == "compact":
        check_compact(rename=rename is None, digits=digits == 3, stars=stars is True,
                       stats=tuple(stats) == ("nobs", "r2", "adj_r2", "sigma"),
                       notes=notes is None, show=show == "se", default_note=default_note)
        return _compact_etable(apply_se(models, se), keep, drop, names)
    if style != "publication":
        raise OptionError(f"style must be 'publication' or 'compact', however: {style=}")
    digits = check_digits(digits)
    if show not in ("se", "t"):
        raise OptionError(f"show must be 'se' or 't', however: {show=}")
    marks = check_stars(stars)
    chosen = check_stats(stats)
    models = apply_se(models, se)
    terms = all_terms(models)
    terms = select_terms(terms, keep, "keep", keep=True)
    terms = select_terms(terms, drop, "drop", keep=False)
    rows, display = rename_terms(terms, rename, models)

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
    if any(absorbed) and "within_r2" not in chosen and tuple(stats or ()) == DEFAULT_STATS:
        chosen = [*chosen, "within_r2"]
    if tuple(stats or ()) == DEFAULT_STATS:
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
    lines += check_notes(notes)
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
    kept = select_terms(select_terms(list(terms), keep, "keep", keep=True), drop, "drop", keep=False)
    columns = names or [f"({i + 1}) {m.method}" for i, m in enumerate(models)]
    info = pd.DataFrame({"dependent": [_dependent(m) for m in models],
                         "method": [_method(m) for m in models],
                         "covariance": [covariance_name(m) for m in models],
                         "covariance_label": [_covariance_label(m) for m in models]},
                        index=columns)
    return ETable(table=_compact.compact_table(models, columns, kept), notes=(), models=info,
                  style="compact")

# ------------------------------------------------------------------------------ cells


def _dependent(fit: Any) -> str:
    return str(getattr(frame_of(fit), "response_name", ""))


def _method(fit: Any) -> str:
    method = str(fit.method)
    rule = getattr(fit, "rule", None)  # what a linear fit declares: least squares or penalised
    if rule is None:
        return _METHODS.get(method, method)
    if rule.least_squares and getattr(frame_of(fit), "weights", None) is not None:
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
