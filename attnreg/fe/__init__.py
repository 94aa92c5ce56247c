"""Absorbed fixed effects: the projection off the fixed-effect dummies, to the data's accuracy.

:func:`attnreg.fe.demean.demean` residualises columns on K fixed effects (each a vector of
level codes) without forming the N × G dummy matrix; by the Frisch–Waugh–Lovell theorem OLS on
the residualised columns gives the coefficients of the dummy-variable regression.
:mod:`attnreg.fe.effects` counts the redundant levels and normalises the effects as fixest.
"""

from __future__ import annotations

from attnreg.fe.demean import Demeaned, FixedEffects, demean
from attnreg.fe.effects import components, normalise, redundant_levels

__all__ = ["Demeaned", "FixedEffects", "components", "demean", "normalise", "redundant_levels"]
