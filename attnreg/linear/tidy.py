"""Tidy data frames of a linear fit, with broom's column names.

:class:`Tidy` is a mixin of :class:`~attnreg.linear.results.LinearResults`.
"""

from __future__ import annotations

from attnreg.linear._contract import LinearFitContract

__all__ = ["Tidy"]


class Tidy(LinearFitContract):
    """``tidy()``, ``glance()`` and ``augment()`` (a mixin of ``LinearResults``)."""
