"""Warnings that point at the caller's line, not at attnreg's internals."""

from __future__ import annotations

import functools
import os
import sys
import warnings
from types import FrameType

__all__ = ["warn_user"]

_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def warn_user(message: str, category: type[Warning], *, through: tuple[str, ...] = ()) -> None:
    """Warn from the first frame outside attnreg (and functools' ``cached_property``).

    ``through``: more file-name prefixes to pass through (a library that calls attnreg back,
    e.g. patsy evaluating a formula's transform).
    """
    frame: FrameType | None = sys._getframe(1)
    level = 1
    while frame is not None and (frame.f_code.co_filename.startswith((_PACKAGE, *through))
                                 or frame.f_code.co_filename == functools.__file__):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level + 1)
