"""The chunked path's own options and the row arguments of a chunked fit, checked before any
row is read.

``chunk_rows``, ``progress``, ``residuals`` and ``sep`` (:data:`CHUNK_OPTIONS`) are popped
from the options before the method checks its own; ``weights``, ``subset`` and
``na_action`` of a chunked fit must be a column, an expression and a known action.

Examples
--------
>>> check_chunk_options({"chunk_rows": 0})
Traceback (most recent call last):
...
attnreg.exceptions.OptionError: chunk_rows must be a positive integer, however: chunk_rows=0
"""

from __future__ import annotations

from typing import Any

import numpy as np

from attnreg.exceptions import OptionError
from attnreg.large.sources import check_sep

__all__ = ["CHUNK_OPTIONS", "check_chunk_options", "check_request_rows", "check_residuals"]

#: Options of the chunked path besides the method's own.
CHUNK_OPTIONS = ("chunk_rows", "progress", "residuals", "sep")


def check_chunk_options(options: dict[str, Any]) -> dict[str, Any]:
    """Pop and validate the chunked path's own options (``chunk_rows``, ``progress``,
    ``residuals``, and ``sep``, the field separator of CSV files).

    Examples
    --------
    >>> opts = {"lam": 1.0, "progress": False}
    >>> check_chunk_options(opts), opts
    ({'chunk_rows': None, 'progress': False, 'residuals': None, 'sep': None}, {'lam': 1.0})
    """
    out = {"chunk_rows": options.pop("chunk_rows", None),
           "progress": options.pop("progress", False),
           "residuals": options.pop("residuals", None),
           "sep": options.pop("sep", None)}
    check_sep(out["sep"])
    cr = out["chunk_rows"]
    if cr is not None and (not isinstance(cr, (int, np.integer)) or isinstance(cr, bool) or cr < 1):
        raise OptionError(f"chunk_rows must be a positive integer, however: chunk_rows={cr!r}")
    if not isinstance(out["progress"], bool):
        raise OptionError(f"progress must be True or False, however: progress={out['progress']!r}")
    check_residuals(out["residuals"])
    return out


def check_residuals(residuals: Any) -> None:
    """``residuals`` must be None (when first needed), True (during the fit) or False (never)."""
    if residuals is not None and not isinstance(residuals, bool):
        raise OptionError(f"residuals must be None, True or False, however: residuals={residuals!r}")


def check_request_rows(request: Any) -> None:
    """``weights``, ``subset`` and ``na_action`` of a chunked fit: a column, an expression, a
    known action (OptionError naming the argument otherwise)."""
    weights, subset = request.weights, request.subset
    if weights is not None and not isinstance(weights, str):
        raise OptionError("weights of a chunked fit must name a column of the data, however: "
                          f"type(weights) is {type(weights).__name__}")
    if subset is not None and not isinstance(subset, str):
        raise OptionError("subset of a chunked fit must be an expression such as 'x > 0', "
                          f"however: type(subset) is {type(subset).__name__}")
    if request.na_action not in ("drop", "raise"):
        raise OptionError(f"na_action must be one of 'drop', 'raise', however: "
                          f"na_action={request.na_action!r}")
