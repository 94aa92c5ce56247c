"""``summary()`` of a GLM: R's ``print.summary.glm`` from "Coefficients:" on.

The coefficient table is R's ``printCoefmat`` (:mod:`attnreg.report.rprint`); the figures
under it (:class:`~attnreg.report.modelfigures.GlmFigures`) print as ``print.summary.glm``
with R's ``format()`` (:mod:`attnreg.report.render_models`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from attnreg.report import render_models
from attnreg.report.modelfigures import GlmFigures
from attnreg.report.sections import Call, Coefficients
from attnreg.report.summary import Summary

if TYPE_CHECKING:
    from attnreg.glm.results import GlmResults

__all__ = ["glm_figures", "glm_notes", "glm_summary"]


def glm_summary(res: GlmResults) -> Summary:
    """The summary of a GLM fit: call, coefficient table and R's notes."""
    z = "z" if res.z_tests else "t"
    table = pd.DataFrame({"Estimate": res.coef, "Std. Error": res.std_err,
                          f"{z} value": res.statistic, f"Pr(>|{z}|)": res.p_value})
    return Summary(title=f"attnreg glm fit ({res.family_name}, {res.link_name} link)",
                   sections=(Call(res.call), Coefficients(table, n_aliased=int(res.aliased.size)),
                             glm_figures(res)))


def glm_figures(res: GlmResults) -> GlmFigures:
    """The figures R prints after the table: dispersion, deviances, AIC and iterations."""
    return GlmFigures(
        family=res.family_name, dispersion=float(res.dispersion),
        null_deviance=float(res.null_deviance), deviance=float(res.deviance),
        df_null=float(res.df_null), df_resid=float(res.df_resid), robust=res.robust,
        n_clusters=None if res.robust is None or res.cluster is None
        else len(set(res.cluster.tolist())),
        n_deleted=int(res.design.dropped_labels.size), aic=float(res.aic),
        iterations=int(res.iterations))


def glm_notes(res: GlmResults) -> tuple[str, ...]:
    """The lines after the table: dispersion, deviances, AIC and iterations (R's layout)."""
    return tuple(render_models.glm_lines(glm_figures(res))[1:])
