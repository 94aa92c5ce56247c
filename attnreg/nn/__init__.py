"""Neural regression in torch: the paper's Regression Block and its FT-Transformer baseline.

``fit_network_formula`` is the formula front end (``attnreg(formula, data, method="block")``);
``fit_network`` fits on arrays; the modules, their configurations and the paper's ablation
variants are in :mod:`attnreg.nn.blocks`, the shared training loop in :mod:`attnreg.nn.train`.
Importing this package imports torch; ``import attnreg`` does not.
"""

from __future__ import annotations

from attnreg.nn.blocks import (
    VARIANTS,
    BlockConfig,
    FTTConfig,
    FTTransformer,
    RegressionBlock,
    build_model,
    count_parameters,
)
from attnreg.nn.results import NetworkResults, fit_network_formula
from attnreg.nn.train import History, NetworkFit, fit_network, train_model

__all__ = ["VARIANTS", "BlockConfig", "FTTConfig", "FTTransformer", "History", "NetworkFit",
           "NetworkResults", "RegressionBlock", "build_model", "count_parameters", "fit_network",
           "fit_network_formula", "train_model"]
