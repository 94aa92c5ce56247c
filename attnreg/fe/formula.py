"""``attnreg("y ~ x | firm + year", data)``: the fixed-effects part of a formula, fitted."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from attnreg.exceptions import FormulaError

if TYPE_CHECKING:
    from attnreg.formula.parts import FormulaParts
    from attnreg.large import FitRequest

__all__ = ["fit_fe_formula"]


def fit_fe_formula(request: FitRequest, parts: FormulaParts) -> Any:
    """Fit ``request`` with the fixed effects of ``parts`` absorbed."""
    raise FormulaError(f"fixed effects in a formula ({parts.formula!r}) are not supported yet: "
                       "write them as C(firm) + C(year)")
