"""Absorbed fixed effects: the projection off the fixed-effect dummies, to the data's accuracy.

:func:`attnreg.fe.demean.demean` residualises columns on K fixed effects (each a vector of
level codes) without forming the N × G dummy matrix; by the Frisch–Waugh–Lovell theorem OLS on
the residualised columns gives the coefficients of the dummy-variable regression.
:mod:`attnreg.fe.effects` counts the redundant levels and normalises the effects as fixest;
:mod:`attnreg.fe.absorb` goes from a frame's columns to the levels and the demeaned y and X
(for any estimator with a fixed-effects part), :mod:`attnreg.fe.formula` fits
``y ~ x | firm + year``, and :mod:`attnreg.fe.chunked` the same beyond memory (per-combination
sums of the levels, the chunks residualised as they are read).
"""

from __future__ import annotations

from attnreg.fe.absorb import Absorbed, FrameEffects, absorb, fixed_effects_of_frame
from attnreg.fe.demean import Demeaned, FixedEffects, demean
from attnreg.fe.effects import components, normalise, redundant_levels

__all__ = ["Absorbed", "Demeaned", "FixedEffects", "FrameEffects", "absorb", "components",
           "demean", "fixed_effects_of_frame", "normalise", "redundant_levels"]
