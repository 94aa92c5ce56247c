"""``summary()`` of a GLM: R's ``print.summary.glm`` from "Coefficients:" on, as numbers.

The coefficient table is R's ``printCoefmat`` (:mod:`attnreg.report.rprint`); the figures
under it (dispersion, deviances, AIC, iterations, the covariance in use, rows left out) are a
:class:`GlmFigures` section, printed as ``print.summary.glm`` prints them with R's
``format()`` (:mod:`attnreg.report.rformat`) and shown as a table of figures in HTML, LaTeX
and Markdown. The same summary serves in-memory and chunked fits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pandas as pd

from attnreg.report import render_figures
from attnreg.report.figures import Figures
from attnreg.report.rformat import fmt_g, r_format
from attnreg.report.sections import Call, Coefficients
from attnreg.report.summary import Summary

if TYPE_CHECKING:
    from attnreg.glm.chunked_results import ChunkedGlmResults
    from attnreg.glm.results import GlmResults

__all__ = ["GlmFigures", "glm_figures", "glm_notes", "glm_summary"]


@dataclass(frozen=True)
class GlmFigures(Figures):
    """What ``print.summary.glm`` prints under the coefficient table.

    Attributes
    ----------
    family : str
        R's family name.
    dispersion : float
        1 for binomial and Poisson, else Pearson's estimate.
    null_deviance, deviance : float
    df_null, df_resid : int
    aic : float
    iterations : int
        Fisher scoring iterations.
    covariance : str or None
        ``"HC0"`` or ``"HC1"`` when a sandwich is behind the standard errors; None for
        ``summary.glm``'s model-based covariance.
    n_clusters : int or None
        Clusters of a cluster sandwich.
    n_deleted : int
        Rows removed because of missing values.
    fixed_effects : str
        The absorbed fixed effects, in words (empty when none).
    n_separated : int
        Rows separated (fitted by a mean of 0 or 1, or 0 for Poisson).
    separated_by : tuple of str
        The separating regressors (empty: the design as a whole).
    separated_dropped : bool
        The separated rows were left out of the fit.
    """

    family: str
    dispersion: float
    null_deviance: float
    df_null: int
    deviance: float
    df_resid: int
    aic: float
    iterations: int
    covariance: str | None = None
    n_clusters: int | None = None
    n_deleted: int = 0
    fixed_effects: str = ""
    n_separated: int = 0
    separated_by: tuple[str, ...] = ()
    separated_dropped: bool = True


def glm_figures(res: GlmResults | ChunkedGlmResults) -> GlmFigures:
    """The figures of a fit's summary (in memory or chunked)."""
    sep = res.separation
    return GlmFigures(
        family=res.family_name, dispersion=float(res.dispersion),
        null_deviance=float(res.null_deviance), df_null=int(res.df_null),
        deviance=float(res.deviance), df_resid=int(res.df_resid), aic=float(res.aic),
        iterations=int(res.iterations), covariance=res.robust, n_clusters=res.n_clusters,
        n_deleted=int(res.n_deleted),
        fixed_effects="" if res.absorbed is None else res.absorbed.describe(),
        n_separated=len(sep.rows) if sep else 0,
        separated_by=tuple(sep.regressors) if sep else (),
        separated_dropped=bool(sep.dropped) if sep else True)


def glm_summary(res: GlmResults | ChunkedGlmResults) -> Summary:
    """The summary of a GLM fit: call, coefficient table and the figures under it."""
    z = "z" if res.z_tests else "t"
    table = pd.DataFrame({"Estimate": res.coef, "Std. Error": res.std_err,
                          f"{z} value": res.statistic, f"Pr(>|{z}|)": res.p_value})
    return Summary(title=f"attnreg glm fit ({res.family_name}, {res.link_name} link)",
                   sections=(Call(res.call), Coefficients(table, n_aliased=int(res.aliased.size)),
                             glm_figures(res)))


def _plural(n: int) -> str:
    return f"{n} observation{'s' if n > 1 else ''}"


def _separation_line(f: GlmFigures) -> str:
    fate = "removed before the fit" if f.separated_dropped else "kept: their estimates diverge"
    return (f"  ({_plural(f.n_separated)} separated by "
            f"{', '.join(f.separated_by) or 'the design'}, {fate}; see fit.separation)")


def _covariance_text(f: GlmFigures) -> str:
    which = ("sandwich::vcovHC" if f.n_clusters is None else
             f"sandwich::vcovCL, {f.n_clusters} clusters")
    assert f.covariance is not None  # a vcovHC / one-way vcovCL type, or its own label
    return f"{which}, type {f.covariance}" if f.covariance.startswith("HC") else f.covariance


def glm_notes(f: GlmFigures) -> tuple[str, ...]:
    """The lines after the table: dispersion, deviances, AIC and iterations (R's layout)."""
    dev = r_format([f.null_deviance, f.deviance], 5)
    df = r_format([float(f.df_null), float(f.df_resid)], 7)
    lines = [f"(Dispersion parameter for {f.family} family taken to be "
             f"{r_format([f.dispersion], 7)[0].strip()})", "",
             f"    Null deviance: {dev[0]}  on {df[0]}  degrees of freedom",
             f"Residual deviance: {dev[1]}  on {df[1]}  degrees of freedom"]
    if f.covariance is not None:
        lines[1:1] = ["", f"(Standard errors: {_covariance_text(f)}; z tests as "
                          "lmtest::coeftest)"]
    if f.n_deleted:
        lines.append(f"  ({_plural(f.n_deleted)} deleted due to missingness)")
    if f.fixed_effects:
        lines.append(f"  ({f.fixed_effects})")
    if f.n_separated:
        lines.append(_separation_line(f))
    lines += [f"AIC: {r_format([f.aic], 5)[0].strip()}", "",
              f"Number of Fisher Scoring iterations: {f.iterations}", ""]
    return tuple(lines)


@render_figures.text.register
def _(section: GlmFigures) -> list[str]:
    return ["", *glm_notes(section)]


@render_figures.rows.register
def _(section: GlmFigures) -> list[tuple[str, str]]:
    f = section
    rows = [("Dispersion", fmt_g(f.dispersion, 7)),
            ("Null deviance", f"{fmt_g(f.null_deviance, 7)} on {f.df_null} df"),
            ("Residual deviance", f"{fmt_g(f.deviance, 7)} on {f.df_resid} df"),
            ("AIC", fmt_g(f.aic, 7)), ("Fisher scoring iterations", str(f.iterations)),
            ("Standard errors", "model-based" if f.covariance is None else _covariance_text(f))]
    if f.n_deleted:
        rows.append(("Observations deleted (missing values)", str(f.n_deleted)))
    if f.fixed_effects:
        rows.append(("Fixed effects", f.fixed_effects))
    if f.n_separated:
        rows.append(("Observations separated", _separation_line(f).strip(" ()")))
    return rows
