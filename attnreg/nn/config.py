"""Configurations of the two networks and the paper's ablation variants, as data.

:class:`BlockConfig` describes a :class:`~attnreg.nn.blocks.RegressionBlock` network,
:class:`FTTConfig` an :class:`~attnreg.nn.blocks.FTTransformer`; the paper's ablations
(A0–A7, "trimmed") are entries of :data:`VARIANTS`, not copies of the modules. Importing
this module does not import torch.

Examples
--------
>>> VARIANTS["trimmed"].n_mixers, VARIANTS["trimmed"].ffn, VARIANTS["trimmed"].pca_components
(2, False, 50)
>>> BlockConfig(d_model=0)
Traceback (most recent call last):
...
attnreg.exceptions.OptionError: d_model must be a positive integer, however: d_model=0
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Literal

Mixer = Literal["regression", "softmax"]
PcaSolver = Literal["randomized", "exact"]

__all__ = ["VARIANTS", "BlockConfig", "FTTConfig", "Mixer", "PcaSolver", "config_fields"]


def _check(ok: bool, message: str) -> None:
    if not ok:
        from attnreg.exceptions import OptionError

        raise OptionError(message)


def _check_fields(config: object, positive: tuple[str, ...], optional: tuple[str, ...] = (),
                  flags: tuple[str, ...] = ()) -> None:
    """Positive integers, positive integers or None, and booleans among a config's fields."""
    for name in positive + optional:
        value = getattr(config, name)
        ok = isinstance(value, int) and not isinstance(value, bool) and value > 0
        _check(ok or (name in optional and value is None),
               f"{name} must be a positive integer{' or None' if name in optional else ''}, "
               f"however: {name}={value!r}")
    for name in flags:
        value = getattr(config, name)
        _check(isinstance(value, bool), f"{name} must be True or False, however: {name}={value!r}")
    dropout = config.dropout  # type: ignore[attr-defined]
    _check(0.0 <= dropout < 1.0, f"dropout must be in [0, 1), however: dropout={dropout!r}")


@dataclass(frozen=True)
class BlockConfig:
    """Configuration of a :class:`RegressionBlock` network (defaults: the paper's RB).

    Attributes
    ----------
    d_model : int
        Token width d.
    n_blocks : int
        Blocks stacked (A6: 3). A block is ``n_mixers`` mixers, then the FFN sublayer.
    n_mixers : int
        Mixer sublayers per block (trimmed: 2).
    ffn : bool
        Whether each block ends with the position-wise FFN sublayer.
    d_ffn : int or None
        FFN hidden width; None means 2·d_model.
    mixer : {"regression", "softmax"}
        The token mixer: ``z = LayerNorm(e + W·PCA(φ(e)))`` or multi-head softmax attention (A4).
    poly : bool
        Degree-2 cross-feature map φ; False projects the raw tokens (A2).
    pca_components : int or None
        Frozen PCA size K (capped at the dimension of φ); None puts W on the full φ (A3).
    pca_solver : {"randomized", "exact"}
        Leading eigenvectors of φ's covariance by randomized subspace iteration (as the
        paper's PCA) or by a full eigendecomposition.
    n_heads : int
        Heads of the softmax mixer.
    dropout : float
        Dropout of the FFN (and of the softmax mixer's attention weights).
    warm_start : bool
        Ridge warm start of the first regression mixer's channel 0 and of the head
        (ignored by softmax mixers, which have no regression readout).
    ridge_alpha : float
        Penalty of the warm-start ridge.
    final_norm : bool
        A LayerNorm after the last block. The paper's stacked variant A6 has one: its count
        (89,921 at P=8, 89,985 at P=9) is three RB blocks plus one LayerNorm(d).
    max_pca_rows, max_ridge_rows : int
        Training rows used to fit the PCA (every token a sample) and the warm-start ridge.
    naive : bool
        Reference implementation, as the paper's code: build φ with P copies of its global
        part, project each copy, and fit the PCA on the materialised (rows·P, D) matrix.
        Same outputs as the default (to rounding), about five times slower to train.

    Examples
    --------
    >>> BlockConfig() == VARIANTS["RB"]
    True
    >>> BlockConfig(n_blocks=3, final_norm=True) == VARIANTS["A6"]
    True
    """

    d_model: int = 64
    n_blocks: int = 1
    n_mixers: int = 1
    ffn: bool = True
    d_ffn: int | None = None
    mixer: Mixer = "regression"
    poly: bool = True
    pca_components: int | None = 200
    pca_solver: PcaSolver = "randomized"
    n_heads: int = 4
    dropout: float = 0.1
    warm_start: bool = True
    ridge_alpha: float = 1.0
    final_norm: bool = False
    max_pca_rows: int = 5000
    max_ridge_rows: int = 20000
    naive: bool = False

    def __post_init__(self) -> None:
        _check_fields(self, ("d_model", "n_blocks", "n_mixers", "n_heads", "max_pca_rows", "max_ridge_rows"),
                      ("d_ffn", "pca_components"), ("ffn", "poly", "warm_start", "final_norm", "naive"))
        _check(self.pca_solver in ("randomized", "exact"),
               f"pca_solver must be 'randomized' or 'exact', however: pca_solver={self.pca_solver!r}")
        _check(self.mixer in ("regression", "softmax"),
               f"mixer must be 'regression' or 'softmax', however: mixer={self.mixer!r}")
        _check(self.ridge_alpha >= 0,
               f"ridge_alpha must be non-negative, however: ridge_alpha={self.ridge_alpha!r}")
        _check(self.mixer != "softmax" or self.d_model % self.n_heads == 0,
               f"d_model must be a multiple of n_heads, however: d_model={self.d_model}, "
               f"n_heads={self.n_heads}")


@dataclass(frozen=True)
class FTTConfig:
    """Configuration of an :class:`FTTransformer` (defaults: the paper's baseline A0).

    Attributes
    ----------
    d_model, n_blocks, n_heads, d_ffn : int
        Token width, encoder layers, attention heads, FFN width (A5: 36, 3, 4, 72).
    dropout : float
        Dropout of every encoder layer.
    poly_inputs : bool
        Feed the degree-2 polynomial expansion ``[x, x_i·x_j (i ≤ j)]`` of the inputs,
        re-standardised on the training rows, instead of x (A1).

    Examples
    --------
    >>> FTTConfig(d_model=36, d_ffn=72) == VARIANTS["A5"]
    True
    >>> FTTConfig(d_model=30)
    Traceback (most recent call last):
    ...
    attnreg.exceptions.OptionError: d_model must be a multiple of n_heads, however: d_model=30, n_heads=4
    """

    d_model: int = 64
    n_blocks: int = 3
    n_heads: int = 4
    d_ffn: int = 128
    dropout: float = 0.1
    poly_inputs: bool = False

    def __post_init__(self) -> None:
        _check_fields(self, ("d_model", "n_blocks", "n_heads", "d_ffn"), flags=("poly_inputs",))
        _check(self.d_model % self.n_heads == 0,
               f"d_model must be a multiple of n_heads, however: d_model={self.d_model}, "
               f"n_heads={self.n_heads}")


#: The paper's configurations by name (App. E); trainable parameters at P=8 in the comments.
VARIANTS: dict[str, BlockConfig | FTTConfig] = {
    "A0": FTTConfig(),  # 101,697: FT-Transformer baseline
    "A1": FTTConfig(poly_inputs=True),  # 106,305: FT-T on degree-2 polynomial inputs
    "A2": BlockConfig(poly=False),  # 21,697: no polynomial map (PCA of the raw tokens)
    "A3": BlockConfig(pca_components=None),  # 173,249: no PCA (W on the full φ)
    "A4": BlockConfig(mixer="softmax", warm_start=False),  # 34,177: softmax MHA in the RB skeleton
    "A5": FTTConfig(d_model=36, d_ffn=72),  # 33,013: FT-T shrunk to the RB budget
    "A6": BlockConfig(n_blocks=3, final_norm=True),  # 89,921: RB stacked to 3 blocks
    "A7": BlockConfig(d_model=128, pca_components=260),  # 101,249: RB widened to the FT-T budget
    "RB": BlockConfig(),  # 30,401: the Regression Block
    "trimmed": BlockConfig(n_mixers=2, ffn=False, pca_components=50),  # 7,489
}


def config_fields(config: type[BlockConfig] | type[FTTConfig]) -> list[str]:
    """Names of a configuration class's fields.

    Examples
    --------
    >>> config_fields(FTTConfig)
    ['d_model', 'n_blocks', 'n_heads', 'd_ffn', 'dropout', 'poly_inputs']
    """
    return [f.name for f in fields(config)]
