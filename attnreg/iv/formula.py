"""``attnreg("y ~ x | d ~ z", data)``: the instrumental-variable part of a formula, fitted."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from attnreg.exceptions import FormulaError

if TYPE_CHECKING:
    from attnreg.formula.parts import FormulaParts
    from attnreg.large import FitRequest

__all__ = ["fit_iv_formula"]


def fit_iv_formula(request: FitRequest, parts: FormulaParts) -> Any:
    """Fit ``request`` by instrumental variables, absorbing the fixed effects of ``parts`` if any."""
    raise FormulaError(f"instrumental variables in a formula ({parts.formula!r}) are not "
                       "supported yet: use attnreg.iv.tsls on arrays")
