"""``summary()`` of a GLM: R's ``print.summary.glm`` from "Coefficients:" on.

The coefficient table is R's ``printCoefmat`` (:mod:`attnreg.report.rprint`); the notes
under it follow ``print.summary.glm`` with R's ``format()`` (:mod:`attnreg.report.rformat`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from attnreg.report.rformat import r_format
from attnreg.report.sections import Call, Coefficients, Lines
from attnreg.report.summary import Summary

if TYPE_CHECKING:
    from attnreg.glm.chunked_results import ChunkedGlmResults
    from attnreg.glm.results import GlmResults

__all__ = ["glm_notes", "glm_summary"]


def glm_summary(res: GlmResults | ChunkedGlmResults) -> Summary:
    """The summary of a GLM fit: call, coefficient table and R's notes."""
    z = "z" if res.z_tests else "t"
    table = pd.DataFrame({"Estimate": res.coef, "Std. Error": res.std_err,
                          f"{z} value": res.statistic, f"Pr(>|{z}|)": res.p_value})
    return Summary(title=f"attnreg glm fit ({res.family_name}, {res.link_name} link)",
                   sections=(Call(res.call), Coefficients(table, n_aliased=int(res.aliased.size)),
                             Lines(glm_notes(res), lead_blank=True)))


def glm_notes(res: GlmResults | ChunkedGlmResults) -> tuple[str, ...]:
    """The lines after the table: dispersion, deviances, AIC and iterations (R's layout)."""
    dev = r_format([res.null_deviance, res.deviance], 5)
    df = r_format([float(res.df_null), float(res.df_resid)], 7)
    lines = [f"(Dispersion parameter for {res.family_name} family taken to be "
             f"{r_format([res.dispersion], 7)[0].strip()})", "",
             f"    Null deviance: {dev[0]}  on {df[0]}  degrees of freedom",
             f"Residual deviance: {dev[1]}  on {df[1]}  degrees of freedom"]
    if res.robust is not None:  # a vcovHC / one-way vcovCL type, or a covariance's label
        which = ("sandwich::vcovHC" if res.n_clusters is None else
                 f"sandwich::vcovCL, {res.n_clusters} clusters")
        text = f"{which}, type {res.robust}" if res.robust.startswith("HC") else res.robust
        lines[1:1] = ["", f"(Standard errors: {text}; z tests as lmtest::coeftest)"]
    n_na = res.n_deleted
    if n_na:
        lines.append(f"  ({n_na} observation{'s' if n_na > 1 else ''} deleted due to "
                     "missingness)")
    if res.absorbed is not None:
        lines.append(f"  ({res.absorbed.describe()})")
    sep = res.separation
    if sep:
        n_sep = len(sep.rows)
        fate = ("removed before the fit" if sep.dropped else
                "kept: their estimates diverge")
        lines.append(f"  ({n_sep} observation{'s' if n_sep > 1 else ''} separated by "
                     f"{', '.join(sep.regressors) or 'the design'}, {fate}; see fit.separation)")
    lines += [f"AIC: {r_format([res.aic], 5)[0].strip()}", "",
              f"Number of Fisher Scoring iterations: {res.iterations}", ""]
    return tuple(lines)
