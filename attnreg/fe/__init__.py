"""Absorbed fixed effects: the projection off the fixed-effect dummies, to the data's accuracy.

:func:`attnreg.fe.demean.demean` residualises columns on K fixed effects (each a vector of
level codes) without forming the N × G dummy matrix; by the Frisch–Waugh–Lovell theorem OLS on
the residualised columns gives the coefficients of the dummy-variable regression.
"""

from __future__ import annotations

from attnreg.fe.demean import Demeaned, FixedEffects, demean

__all__ = ["Demeaned", "FixedEffects", "demean"]
