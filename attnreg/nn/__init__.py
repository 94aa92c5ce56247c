"""Neural regression in torch: the paper's Regression Block and its FT-Transformer baseline.

``fit_network_formula`` is the formula front end (``attnreg(formula, data, method="block")``);
``fit_network`` fits on arrays. The two networks are in :mod:`attnreg.nn.blocks`, their
configurations and the paper's ablation variants in :mod:`attnreg.nn.config`, the token
mixers in :mod:`attnreg.nn.mixers` (the φ map and its PCA in :mod:`attnreg.nn.features`),
the FFN sublayer and ridge warm start in :mod:`attnreg.nn.layers`, and the shared training
loop in :mod:`attnreg.nn.train`.
Importing this package imports torch; ``import attnreg`` does not.

Examples
--------
>>> from attnreg.nn import VARIANTS, build_model, count_parameters
>>> {v: count_parameters(build_model(VARIANTS[v], n_features=8)) for v in ("RB", "A0")}
{'RB': 30401, 'A0': 101697}
"""

from __future__ import annotations

from typing import Any

from attnreg.nn.blocks import FTTransformer, RegressionBlock, build_model, count_parameters
from attnreg.nn.config import VARIANTS, BlockConfig, FTTConfig
from attnreg.nn.results import NetworkResults
from attnreg.nn.fit import NetworkFit, fit_network
from attnreg.nn.train import History, train_model

__all__ = ["VARIANTS", "BlockConfig", "FTTConfig", "FTTransformer", "History", "NetworkFit",
           "NetworkResults", "RegressionBlock", "build_model", "count_parameters", "fit_network",
           "fit_network_formula", "train_model"]


def __getattr__(name: str) -> Any:
    if name == "fit_network_formula":  # the formula front end lives with attnreg()
        from attnreg.api import fit_network_formula

        return fit_network_formula
    raise AttributeError(f"module 'attnreg.nn' has no attribute {name!r}")
