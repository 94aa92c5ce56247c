"""The first stages of an IV fit as OLS results: each endogenous regressor on the exogenous
regressors and the excluded instruments, under the IV fit's covariance."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from attnreg.exceptions import OptionError
from attnreg.methods import get_method

if TYPE_CHECKING:
    from attnreg.iv.results import IVResults

__all__ = ["first_stages"]


def first_stages(res: IVResults) -> dict[str, Any]:
    """``{endogenous name: LinearResults}``: OLS of each endogenous regressor on ``[X, Z]``
    (same rows, weights and covariance as the IV fit).

    Raises
    ------
    OptionError
        With absorbed fixed effects (fit ``d ~ x + C(firm) + z`` instead).
    """
    frame = res.frame
    if frame.fixed_effects or frame.instruments_design is None:
        raise OptionError("first_stage is not available for an IV fit with absorbed fixed effects; "
                          "fit the first stage with the fixed effects as factors, e.g. "
                          "'d ~ x + C(firm) + z'")
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
