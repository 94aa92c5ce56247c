"""Reports: R-style text, HTML and LaTeX renderings of summaries and comparison tables.

A :class:`Summary` is data (header lines, a coefficient table, footer lines); ``str()`` gives
R's ``print.summary.lm`` layout, ``_repr_html_()`` and ``to_latex()`` render the same data.
Nothing here prints.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from tabulate import tabulate

if TYPE_CHECKING:
    from attnreg.results import LinearResults

SIGNIF_LEGEND = "Signif. codes:  0 '***' 0.001 '**' 0.01 '*' 0.05 '.' 0.1 ' ' 1"
_EPS = 2.220446049250313e-16


@dataclass(frozen=True)
class Summary:
    """A report: title, header lines, coefficient table and footer lines.

    Attributes
    ----------
    title : str
    header : list of str
        Lines before the coefficient table (call, residual quantiles).
    table : DataFrame
        Coefficient table (numbers); its text rendering follows R's ``printCoefmat``.
    footer : list of str
        Lines after the table (fit statistics, method notes, attention block).
    stars : bool
        Whether the table carries significance stars and the legend.

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import longley
    >>> df = longley.load_pandas().data
    >>> s = ar.attnreg("TOTEMP ~ GNP + UNEMP", data=df).summary()
    >>> print(str(s).splitlines()[1])
    Call:
    >>> list(s.table.columns)
    ['Estimate', 'Std. Error', 't value', 'Pr(>|t|)']
    >>> "begin{tabular}" in s.to_latex()
    True
    """

    title: str
    header: list[str]
    table: pd.DataFrame
    footer: list[str]
    stars: bool = True
    notes: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        lines = ["", *self.header, *_coef_lines(self.table, self.stars)]
        if self.stars:
            lines += ["---", SIGNIF_LEGEND]
        lines += ["", *self.footer] if self.footer else []
        return "\n".join(lines) + "\n"

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        head = "".join(f"<div>{_html_escape(h)}</div>" for h in self.header if h)
        table = tabulate(self._display_table(), headers="keys", tablefmt="html")
        foot = "".join(f"<div>{_html_escape(f)}</div>" for f in self.footer if f)
        return f"<div><strong>{_html_escape(self.title)}</strong>{head}{table}{foot}</div>"

    def to_latex(self) -> str:
        """The coefficient table as a LaTeX tabular, with the footer as a note."""
        body = tabulate(self._display_table(), headers="keys", tablefmt="latex_booktabs")
        notes = "\n".join("% " + f for f in self.footer if f)
        return body + ("\n" + notes if notes else "")

    def _display_table(self) -> pd.DataFrame:
        out = self.table.copy()
        if self.stars and "Pr(>|t|)" in out:
            out[""] = [_stars(p) for p in out["Pr(>|t|)"]]
        return out


def _html_escape(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


# ---------------------------------------------------------------- number formatting (R-like)


def fmt_g(x: float, digits: int = 4) -> str:
    """R's ``formatC(x, digits=digits)``: ``%.{digits}g``."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "NA"
    return f"{x:.{digits}g}"


def fmt_pvalue(p: float, digits: int = 3) -> str:
    """R's ``format.pval`` for one value: below machine epsilon it prints ``< 2.2e-16``."""
    if p is None or math.isnan(p):
        return "NA"
    if p < _EPS:
        return "< 2e-16" if digits <= 3 else "< 2.2e-16"
    return r_format(np.array([p]), digits)[0]


def _sig_digits(values: np.ndarray, digits: int) -> tuple[np.ndarray, np.ndarray]:
    """Significant digits each value needs at ``digits`` precision, and its decimal exponent."""
    sig = np.ones(values.size, dtype=int)
    expo = np.zeros(values.size, dtype=int)
    for i, v in enumerate(values):
        if not np.isfinite(v) or v == 0:
            continue
        mant, e = f"{abs(v):.{digits - 1}e}".split("e")
        expo[i] = int(e)
        sig[i] = max(len(mant.replace(".", "").rstrip("0")), 1)
    return sig, expo


def r_format(values: np.ndarray, digits: int) -> list[str]:
    """R's ``format(x, digits=)`` of a numeric vector: common fixed decimals, or scientific
    notation when that is narrower (R's ``formatReal``)."""
    values = np.asarray(values, dtype=float)
    sig, expo = _sig_digits(values, digits)
    finite = np.isfinite(values)
    if not finite.any():
        return ["NA"] * values.size
    rgt = int(max(0, (sig - 1 - expo)[finite].max()))
    fixed = [f"{v:.{rgt}f}" if ok else "NA" for v, ok in zip(values, finite, strict=True)]
    m = int(sig[finite].max())
    sci = [f"{v:.{m - 1}e}" if ok else "NA" for v, ok in zip(values, finite, strict=True)]
    return fixed if max(map(len, fixed)) <= max(map(len, sci)) else sci


def _pvalue_column(p: np.ndarray, digits: int = 3) -> list[str]:
    """R's p-value column: tiny values as ``< 2e-16``; values below 1e-4 formatted together
    (usually scientific), the rest together in fixed notation."""
    out = ["NA"] * p.size
    ok = np.isfinite(p)
    tiny = ok & (p < _EPS)
    small = ok & ~tiny & (p < 1e-4)
    big = ok & (p >= 1e-4)
    for mask in (small, big):
        if mask.any():
            for i, txt in zip(np.flatnonzero(mask), r_format(p[mask], digits), strict=True):
                out[i] = txt
    for i in np.flatnonzero(tiny):
        out[i] = "< 2e-16"
    return out


def _stars(p: float) -> str:
    if p is None or math.isnan(p):
        return ""
    for cut, mark in ((0.001, "***"), (0.01, "**"), (0.05, "*"), (0.1, ".")):
        if p < cut:
            return mark
    return ""


def _coef_lines(table: pd.DataFrame, stars: bool) -> list[str]:
    cols: dict[str, list[str]] = {}
    est_se = [c for c in ("Estimate", "Std. Error") if c in table.columns]
    if est_se:  # R rounds, then formats estimates and standard errors as one vector
        both = table[est_se].to_numpy(dtype=float).ravel(order="F")
        nz = np.abs(both[np.isfinite(both) & (both != 0)])
        if nz.size:
            both = np.round(both, max(1, 4 - (1 + math.floor(math.log10(nz.min())))))
        joint = r_format(both, 4)
        for j, name in enumerate(est_se):
            cols[name] = joint[j * len(table):(j + 1) * len(table)]
    for name in table.columns:
        v = table[name].to_numpy(dtype=float)
        if name.startswith("Pr("):
            cols[name] = _pvalue_column(v)
        elif name in ("t value", "z value"):
            cols[name] = ["NA" if not np.isfinite(x) else f"{x:.3f}" for x in v]
        elif name not in est_se:
            cols[name] = r_format(v, 4)
    if stars and "Pr(>|t|)" in table:
        cols[" "] = [_stars(p) for p in table["Pr(>|t|)"].to_numpy(dtype=float)]
    labels = [str(i) for i in table.index]
    wl = max([len(s) for s in labels] + [0])
    widths = {c: max(len(c), *(len(s) for s in cols[c])) for c in cols}
    head = " " * wl + "".join(" " + c.rjust(widths[c]) if c != " " else " " + " " * widths[c]
                              for c in cols)
    out = [head.rstrip() + (" " * (len(head) - len(head.rstrip())) if stars else "")]
    for r, lab in enumerate(labels):
        row = lab.ljust(wl) + "".join(" " + (cols[c][r].ljust(widths[c]) if c == " "
                                             else cols[c][r].rjust(widths[c])) for c in cols)
        out.append(row)
    return out


def residual_lines(resid: np.ndarray, weighted: bool) -> list[str]:
    """R's residual block: the five-number summary, or every residual when n ≤ 5."""
    label = "Weighted Residuals:" if weighted else "Residuals:"
    if resid.size > 5:
        q = np.quantile(resid, [0, 0.25, 0.5, 0.75, 1.0])
        names = ["Min", "1Q", "Median", "3Q", "Max"]
    else:
        q, names = resid, [str(i + 1) for i in range(resid.size)]
    q = np.asarray(q, dtype=float)
    big = float(np.max(np.abs(q))) if q.size else 0.0
    if big > 0:  # R: zapsmall(quantile(resid), digits + 1)
        q = np.round(q, max(0, 5 - math.ceil(math.log10(big))))
    vals = r_format(q, 4)
    w = max(len(s) for s in names + vals)
    return [label, " ".join(n.rjust(w) for n in names), " ".join(v.rjust(w) for v in vals)]


# ---------------------------------------------------------------- the linear summary


def linear_summary(res: LinearResults) -> Summary:
    """Build the ``summary.lm``-style report of a spectral fit."""
    header = ["Call:", res.call, ""]
    header += residual_lines(res._resid_w, res.design.weights is not None)
    table = pd.DataFrame({"Estimate": res.coef, "Std. Error": res.std_err,
                          "t value": res.t_value, "Pr(>|t|)": res.p_value})
    if res.aliased:
        header += ["", f"Coefficients: ({len(res.aliased)} not defined because of singularities)"]
    else:
        header += ["", "Coefficients:"]
    return Summary(title=f"attnreg {res.method} fit", header=header, table=table,
                   footer=_fit_lines(res) + _method_lines(res) + _attention_lines(res))


def _fit_lines(res: LinearResults) -> list[str]:
    df_r = res.df_resid
    df_txt = fmt_g(df_r, 6) if res.method == "ols" else f"{df_r:.2f} (effective)"
    lines = [f"Residual standard error: {fmt_g(res.sigma)} on {df_txt} degrees of freedom"]
    if res.design.dropped_labels.size:
        n = res.design.dropped_labels.size
        lines.append(f"  ({n} observation{'s' if n > 1 else ''} deleted due to missingness)")
    if res.df_model > 0:
        lines.append(f"Multiple R-squared:  {fmt_g(res.r_squared)},\t"
                     f"Adjusted R-squared:  {fmt_g(res.adj_r_squared)} ")
        ft = res.f_test
        df1 = fmt_g(ft.df1, 6) if res.method == "ols" else f"{ft.df1:.2f}"
        df2 = fmt_g(ft.df2, 6) if res.method == "ols" else f"{ft.df2:.2f}"
        lines.append(f"F-statistic: {fmt_g(ft.statistic)} on {df1} and {df2} DF,  "
                     f"p-value: {fmt_pvalue(ft.p_value, 4)}")
    if res.vcov_spec.kind != "classical":
        lines.append(f"Standard errors: {res.vcov_spec.label()}")
    return lines


def _method_lines(res: LinearResults) -> list[str]:
    if res.method == "ols":
        return []
    sel = res.selection
    assert sel is not None
    how = "given" if sel.criterion == "fixed" else (
        f"chosen by {sel.criterion.upper()} over {sel.grid.size} candidates")
    what = f"lambda = {fmt_g(sel.value, 5)}" if res.method == "ridge" else f"k = {int(sel.value)}"
    scale = "standardized" if res.standardize else "unstandardized"
    return ["", f"{res.method.upper()}: {what} ({how}); {scale} predictors, intercept unpenalized;",
            f"  effective df tr(H) = {res.edf:.3f}. Inference is conditional on the chosen "
            f"{'lambda' if res.method == 'ridge' else 'k'} and uses the effective df."]


def _attention_lines(res: LinearResults) -> list[str]:
    h = res._hat
    neg, lev, m = _sampled_weight_stats(res)
    imax = int(np.argmax(h))
    return ["", "Attention view (training rows as queries; weights sum to 1 with an intercept):",
            f"  leverage (hat values): mean {fmt_g(float(h.mean()))}, "
            f"max {fmt_g(float(h[imax]))} (row {res.design.row_labels[imax]!r})",
            f"  effective neighbours 1/sum(w^2): median {fmt_g(float(np.median(1 / lev)))}, "
            f"min {fmt_g(float(np.min(1 / lev)))}",
            f"  negative weight mass: median {fmt_g(float(np.median(neg)))}, "
            f"min {fmt_g(float(np.min(neg)))}"
            + ("" if m == res.nobs else f" (these two from {m} evenly spaced rows)")]


def _sampled_weight_stats(res: LinearResults) -> tuple[np.ndarray, np.ndarray, int]:
    """Negative mass and Σω² of training queries: every row for small n, a sample for large n.

    Computed by the result in the same pass over the rows as its hat values
    (:meth:`LinearResults._sampled_weight_stats`).
    """
    return res._sampled_weight_stats()


# ---------------------------------------------------------------- comparison of fits


@dataclass(frozen=True)
class Comparison:
    """Side-by-side table of several fits (coefficients with standard errors, fit statistics).

    Made by :func:`compare`; ``table`` is the DataFrame behind the text.

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import longley
    >>> df = longley.load_pandas().data
    >>> c = ar.compare([ar.attnreg("TOTEMP ~ GNP", df), ar.attnreg("TOTEMP ~ GNP + POP", df)])
    >>> c.table.loc["N"].tolist()
    ['16', '16']
    >>> print(str(c).splitlines()[0].split())
    ['term', '(1)', 'ols', '(2)', 'ols']
    """

    table: pd.DataFrame

    def __str__(self) -> str:
        return tabulate(self.table.reset_index(), headers="keys", tablefmt="simple",
                        showindex=False, stralign="right")

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        return str(tabulate(self.table.reset_index(), headers="keys", tablefmt="html",
                            showindex=False))

    def to_latex(self) -> str:
        """The table as a LaTeX tabular."""
        return str(tabulate(self.table.reset_index(), headers="keys", tablefmt="latex_booktabs",
                            showindex=False))


def compare(fits: Sequence[Any], names: Sequence[str] | None = None) -> Comparison:
    """Side-by-side table of fits: estimates with (standard errors) and fit statistics.

    Parameters
    ----------
    fits : sequence of results
    names : sequence of str, optional
        Column titles (default: each fit's method, numbered when repeated).

    Returns
    -------
    Comparison
        ``str()`` is a plain-text table; ``.table`` the DataFrame behind it (one column per
        fit; a row per coefficient, its standard error below it, then N, R², adjusted R²,
        σ, AIC, effective df and λ or k); also ``_repr_html_()`` and ``to_latex()``.

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import longley
    >>> df = longley.load_pandas().data
    >>> f = "TOTEMP ~ GNP + UNEMP + ARMED + POP + YEAR"
    >>> fits = [ar.attnreg(f, df), ar.attnreg(f, df, method="ridge", lam=0.1)]
    >>> table = ar.compare(fits, names=["OLS", "ridge"]).table
    >>> list(table.columns)
    ['OLS', 'ridge']
    >>> table.loc["R-squared"].tolist()
    ['0.9955', '0.9904']
    """
    from attnreg.exceptions import OptionError

    if not fits:
        raise OptionError("compare() needs at least one fit")
    if names is None:
        names = [f"({i + 1}) {getattr(f, 'method', '?')}" for i, f in enumerate(fits)]
    if len(names) != len(fits):
        raise OptionError(f"names must have one entry per fit ({len(fits)}), however: {len(names)=}")
    terms: list[str] = []
    for fit in fits:
        terms += [t for t in getattr(fit, "names", []) if t not in terms]
    cols = {name: _compare_column(fit, terms) for name, fit in zip(names, fits, strict=True)}
    index = [t for term in terms for t in (term, "")] + [
        "method", "N", "R-squared", "Adj. R-squared", "sigma", "AIC", "edf", "lambda / k"]
    return Comparison(pd.DataFrame(cols, index=pd.Index(index, name="term")))


def _compare_column(fit: Any, terms: list[str]) -> list[str]:
    out: list[str] = []
    coef = getattr(fit, "coef", None)
    se = getattr(fit, "std_err", None)
    for t in terms:
        if coef is not None and se is not None and t in coef.index:
            c = coef[t]
            p = fit.p_value[t] if hasattr(fit, "p_value") else float("nan")
            out += [f"{fmt_g(c, 4)}{_stars(p)}", f"({fmt_g(se[t], 3)})"]
        else:
            out += ["", ""]
    tune = fit.lam if getattr(fit, "lam", None) is not None else getattr(fit, "k", None)
    out += [fit.method, str(fit.nobs), fmt_g(fit.r_squared), fmt_g(fit.adj_r_squared),
            fmt_g(fit.sigma), fmt_g(fit.aic, 6), fmt_g(fit.edf, 4),
            "" if tune is None else fmt_g(float(tune), 4)]
    return out
