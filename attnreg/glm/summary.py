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
    from attnreg.glm.results import GlmResults

__all__ = ["glm_notes", "glm_summary"]


def glm_summary(res: GlmResults) -> Summary:
    """The summary of a GLM fit: call, coefficient table and R's notes."""
    z = "z" if res.z_tests else "t"
    table = pd.DataFrame({"Estimate": res.coef, "Std. Error": res.std_err,
                          f"{z} value": res.statistic, f"Pr(>|{z}|)": res.p_value})
    return Summary(title=f"attnreg glm fit ({res.family_name}, {res.link_name} link)",
                   sections=(Call(res.call), Coefficients(table, n_aliased=int(res.aliased.size)),
                             Lines(glm_notes(res), lead_blank=True)))


def glm_notes(res: GlmResults) -> tuple[str, ...]:
    """The lines after the table: dispersion, deviances, AIC and iterations (R's layout)."""
    dev = r_format([res.null_deviance, res.deviance], 5)
    df = r_format([float(res.df_null), float(res.df_resid)], 7)
    lines = [f"(Dispersion parameter for {res.family_name} family taken to be "
             f"{r_format([res.dispersion], 7)[0].strip()})", "",
             f"    Null deviance: {dev[0]}  on {df[0]}  degrees of freedom",
             f"Residual deviance: {dev[1]}  on {df[1]}  degrees of freedom"]
    if res.robust is not None:
        which = ("sandwich::vcovHC" if res.cluster is None else
                 f"sandwich::vcovCL, {len(set(res.cluster.tolist()))} clusters")
        lines[1:1] = ["", f"(Standard errors: {which}, type {res.robust}; z tests as "
                          "lmtest::coeftest)"]
    n_na = int(res.design.dropped_labels.size)
    if n_na:
        lines.append(f"  ({n_na} observation{'s' if n_na > 1 else ''} deleted due to "
                     "missingness)")
    lines += [f"AIC: {r_format([res.aic], 5)[0].strip()}", "",
              f"Number of Fisher Scoring iterations: {res.iterations}", ""]
    return tuple(lines)
