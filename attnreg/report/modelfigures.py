"""The parts of a softmax or network fit's report, as data: how it was fitted and how well.

Each is a :class:`~attnreg.report.figures.Figures` section (its fields are entries of
:attr:`Summary.statistics <attnreg.report.summary.Summary.statistics>`); the renderers are in
:mod:`attnreg.report.render_models`. Neither estimator has standard errors: the tables are
partial effects (softmax) and permutation importance (networks).
"""

from __future__ import annotations

from dataclasses import dataclass

from attnreg.report.figures import Figures

__all__ = ["NetworkFigures", "PermutationSetup", "SoftmaxFigures"]


@dataclass(frozen=True)
class SoftmaxFigures(Figures):
    """A softmax attention regression: its heads, penalty, fit and optimiser.

    Attributes
    ----------
    n_heads : int
    value, kernel : str
    lam : float
        The penalty λ.
    alpha, effective_rank : tuple of float, length n_heads
        Each head's mixture weight and the effective rank of its metric Ω.
    r_squared, val_r2, loo_r2 : float
        In-sample, validation and leave-one-out R².
    nobs : int
    n_iter, n_evals : int
        L-BFGS iterations and loss evaluations.
    converged : bool
    mask_self : bool
        Trained leave-one-out (each row's own weight masked).
    n_landmarks : int
        Landmark keys of ``keys="landmarks"`` (0: every training row is a key).
    n_neighbours : int
        k of ``keys="top_k"``: each query attends to its k nearest training rows (0: all).
    effective_neighbours : float
        Their mean effective number (1 / Σ w²) over the training rows (NaN: not top-k).
    """

    n_heads: int
    value: str
    kernel: str
    lam: float
    alpha: tuple[float, ...]
    effective_rank: tuple[float, ...]
    r_squared: float
    val_r2: float
    loo_r2: float
    nobs: int
    n_iter: int
    n_evals: int
    converged: bool
    mask_self: bool
    n_landmarks: int = 0
    n_neighbours: int = 0
    effective_neighbours: float = float("nan")


@dataclass(frozen=True)
class PermutationSetup(Figures):
    """What a permutation importance table measures.

    Attributes
    ----------
    n_validation : int
        Rows the importance is measured on.
    n_shuffles : int
        Shuffles of each column.
    """

    n_validation: int
    n_shuffles: int


@dataclass(frozen=True)
class NetworkFigures(Figures):
    """A network fit: its architecture, training and R².

    Attributes
    ----------
    architecture : str
        The architecture in words.
    n_params : int
        Trainable parameters.
    optimizer : str
    lr, weight_decay : float
    schedule : str
        ``"none"`` or the learning-rate schedule.
    batch_size : int
    clip_norm : float or None
    seed : int
    n_epochs, best_epoch : int
    stopped_early : bool
    patience, max_epochs : int
    val_loss_first, val_loss_best, val_loss_last : float
        Validation MSE on the standardised response.
    r_squared, val_r2 : float
        In-sample and validation R².
    n_fit, n_val : int
        Training and validation rows.
    """

    architecture: str
    n_params: int
    optimizer: str
    lr: float
    weight_decay: float
    schedule: str
    batch_size: int
    clip_norm: float | None
    seed: int
    n_epochs: int
    best_epoch: int
    stopped_early: bool
    patience: int
    max_epochs: int
    val_loss_first: float
    val_loss_best: float
    val_loss_last: float
    r_squared: float
    val_r2: float
    n_fit: int
    n_val: int

