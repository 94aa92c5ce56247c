"""Publication tables of several fits (to be implemented)."""

from __future__ import annotations

from typing import Any

__all__ = ["etable"]


def etable(fits: Any, **options: Any) -> Any:
    """A publication table of several fits (to be implemented)."""
    raise NotImplementedError("etable is being implemented")
