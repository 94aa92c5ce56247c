"""Analysis of variance: R's sequential ``anova(lm)`` table and comparisons of nested fits."""

from __future__ import annotations

from typing import Any

__all__ = ["anova"]


def anova(*fits: Any, test: str = "F") -> Any:
    """Analysis of variance of one fit (sequential) or of nested fits (to be implemented)."""
    raise NotImplementedError("anova is being implemented")
