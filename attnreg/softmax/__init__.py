"""Softmax attention regression: ``options`` (validation), ``kernel`` (chunked attention with
a custom backward), ``train`` (L-BFGS runs), ``model`` (:class:`SoftmaxFit`), ``fit``
(:func:`fit_softmax`) and ``results`` (the formula results, :class:`SoftmaxResults`).

Names are imported on first use, so that ``import attnreg`` does not import torch.
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {"LAM_GRID": "model", "FitStep": "train", "SoftmaxFit": "model",
          "marginal_effects": "model", "fit_softmax": "fit", "SoftmaxResults": "results",
          "SoftmaxWeights": "results"}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'attnreg.softmax' has no attribute {name!r}")
    return getattr(importlib.import_module(f"attnreg.softmax.{_WHERE[name]}"), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_WHERE])
