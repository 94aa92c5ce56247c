"""The first stages of an IV fit as OLS results: each endogenous regressor on the exogenous
regressors and the excluded instruments, under the IV fit's covariance."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from attnreg.exceptions import OptionError
from attnreg.methods import get_method

if TYPE_CHECKING:
    from attnreg.iv.results import IVResults

__all__ = ["fe_first_stage_fits", "first_stages"]


def first_stages(res: IVResults) -> dict[str, Any]:
    """``{endogenous name: LinearResults}``: OLS of each endogenous regressor on ``[X, Z]``
    (same rows, weights and covariance as the IV fit).

    With absorbed fixed effects, the fixed-effects OLS fits of
    :func:`fe_first_stage_fits`.
    """
    frame = res.frame
    if frame.fixed_effects:
        return fe_first_stage_fits(res)
    if frame.instruments_design is None:
        raise OptionError("this IV fit does not keep the first stage's design; refit it")
    base = frame.instruments_design
    ols = get_method("ols")
    given = ({} if res.vcov_kind == "classical"
             else {"vcov": res.vcov_kind, **dict(res.vcov_options)})
    if res.vcov_kind == "cluster":
        given["cluster"] = res.cluster
    checked = ols.check_options(given)
    out = {}
    for j, name in enumerate(frame.endog_names):
        rhs = base.formula.split("~", 1)[1].strip()
        design = dataclasses.replace(base, y=frame.D[:, j].copy(), response_name=name,
                                     formula=f"{name} ~ {rhs}")
        out[name] = ols.fit_design(design, checked, f"first stage: {name} ~ {rhs}")
    return out


def fe_first_stage_fits(res: IVResults) -> dict[str, Any]:
    """``{endogenous name: FixedEffectsResults}``: ``d ~ x + z | fe`` on the IV fit's rows,
    with its weights and covariance (clusters by the same ids); equal to the dummy-variable
    first stage ``d ~ x + z + C(fe)``."""
    from attnreg.fe.formula import fit_fe_formula
    from attnreg.formula.parts import split_formula
    from attnreg.large import FitRequest

    frame, base = res.frame, res.frame.instruments_design
    assert base is not None and base.data is not None and base.data_rows is not None
    data = base.data.iloc[base.data_rows].reset_index(drop=True)
    rhs = base.formula.split("~", 1)[1].strip()
    given: dict[str, Any] = ({} if res.vcov_kind == "classical"
                             else {"vcov": res.vcov_kind, **dict(res.vcov_options)})
    if res.vcov_kind == "cluster":  # one-way ids of the rows, or the columns' names
        given["cluster"] = res.cluster if res.clusters is None else res.clusters
    out = {}
    for name in frame.endog_names:
        formula = f"{name} ~ {rhs} | {' + '.join(frame.fixed_effects)}"
        request = FitRequest(formula, data, "ols", frame.weights, None, "drop", base.eval_env,
                             given)
        out[name] = fit_fe_formula(request, split_formula(formula))
    return out
