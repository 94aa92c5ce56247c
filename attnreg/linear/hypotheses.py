"""Hypothesis tests on the coefficients of a linear fit under the covariance in use.

:class:`Hypotheses` is a mixin of :class:`~attnreg.linear.results.LinearResults`.
"""

from __future__ import annotations

from attnreg.linear._contract import LinearFitContract
from attnreg.linear._restrictions import format_restriction, parse_restrictions

__all__ = ["Hypotheses", "format_restriction", "parse_restrictions"]


class Hypotheses(LinearFitContract):
    """Wald and t tests of linear restrictions (a mixin of ``LinearResults``)."""
