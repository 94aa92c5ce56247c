"""The one training loop of the networks.

:func:`train_model` runs mini-batch Adam/AdamW with gradient clipping, an optional warm-up +
cosine schedule and early stopping on a validation split, restoring the best state; the
array-level fitter built on it is :func:`attnreg.nn.fit.fit_network`.
"""

from __future__ import annotations

import contextlib
import copy
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
import torch
from torch import nn
from torch.nn import functional as F

from attnreg._warn import warn_user
from attnreg._progress import Progress
from attnreg._typing import IntArray
from attnreg.exceptions import ConvergenceWarning, DataError, OptionError
from attnreg.threads import small_torch_ops

Schedule = Literal["none", "warmup_cosine"]
EVAL_BATCH = 8192  # rows per forward pass when predicting (memory bound, not a tuning knob)
TRAIN_DEFAULTS: dict[str, Any] = {"optimizer": "adam", "lr": 1e-3, "weight_decay": 1e-4, "batch_size": 256,
                                  "max_epochs": 200, "patience": 10, "clip_norm": 1.0, "schedule": "none",
                                  "warmup_fraction": 0.1}


@dataclass(frozen=True)
class EpochRecord:
    """One epoch of training: what a ``progress`` callable receives.

    Attributes
    ----------
    epoch : int
        1-based epoch number.
    max_epochs : int
    train_loss, val_loss : float
        Mean squared error on the training part (in training mode, averaged over the
        batches) and on the validation split (evaluation mode), standardised scale.
    best_epoch : int
        Epoch of the lowest validation loss so far.
    lr : float
        Learning rate used in this epoch.

    Examples
    --------
    >>> from attnreg.nn.config import BlockConfig
    >>> from attnreg.nn.fit import fit_network
    >>> seen = []
    >>> X = np.random.default_rng(0).normal(size=(100, 2))
    >>> fit = fit_network(X, X.sum(axis=1), config=BlockConfig(d_model=8, pca_components=8),
    ...                   max_epochs=3, progress=seen.append)
    >>> [r.epoch for r in seen], seen[0].max_epochs
    ([1, 2, 3], 3)
    """

    epoch: int
    max_epochs: int
    train_loss: float
    val_loss: float
    best_epoch: int
    lr: float


@dataclass(frozen=True)
class History:
    """The training record. ``to_frame()`` gives one row per epoch.

    Attributes
    ----------
    train_loss, val_loss, lr : list of float
        Per epoch (see :class:`EpochRecord`).
    best_epoch : int
        1-based epoch whose state was restored.
    best_val_loss : float
    stopped_early : bool
        Whether early stopping ended training before ``max_epochs``.
    seconds : float
        Wall-clock time of the loop.

    Examples
    --------
    >>> h = History(train_loss=[1.0, 0.5], val_loss=[0.9, 0.7], lr=[1e-3, 1e-3], best_epoch=2,
    ...             best_val_loss=0.7, stopped_early=False, seconds=0.1)
    >>> h.n_epochs, h.to_frame()["best"].tolist()
    (2, [False, True])
    """

    train_loss: list[float]
    val_loss: list[float]
    lr: list[float]
    best_epoch: int
    best_val_loss: float
    stopped_early: bool
    seconds: float

    @property
    def n_epochs(self) -> int:
        """Epochs run."""
        return len(self.train_loss)

    def to_frame(self) -> pd.DataFrame:
        """One row per epoch: train_loss, val_loss, lr and a ``best`` marker."""
        epochs = pd.RangeIndex(1, self.n_epochs + 1, name="epoch")
        return pd.DataFrame({"train_loss": self.train_loss, "val_loss": self.val_loss, "lr": self.lr,
                             "best": epochs == self.best_epoch}, index=epochs)


def resolve_device(device: str | torch.device) -> torch.device:
    """``"auto"`` -> CUDA when available, else CPU; ``"cpu"``/``"cuda"`` checked.

    Examples
    --------
    >>> resolve_device("cpu")
    device(type='cpu')
    >>> resolve_device("auto").type in ("cpu", "cuda")
    True
    """
    if isinstance(device, torch.device):
        return device
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device not in ("cpu", "cuda") and not str(device).startswith("cuda:"):
        raise OptionError(f"device must be 'cpu', 'cuda' or 'auto', however: {device=}")
    if str(device).startswith("cuda") and not torch.cuda.is_available():
        raise OptionError(f"device {device!r} was requested but CUDA is not available; use 'cpu' or 'auto'")
    return torch.device(device)


def _lr_factor(schedule: Schedule, max_epochs: int, warmup_fraction: float) -> Callable[[int], float]:
    """Per-epoch multiplier: linear warm-up from 0 over ``warmup_fraction`` of the epochs, then cosine.

    Epoch e (0-based) of the ``warm`` warm-up epochs gets ``e / warm``, as the paper's
    per-epoch ``LambdaLR``: the first epoch runs at learning rate 0 and only fills
    Adam's moment estimates.
    """
    if schedule == "none":
        return lambda epoch: 1.0
    warm = max(1, round(warmup_fraction * max_epochs))

    def factor(epoch: int) -> float:  # epoch is 0-based
        if epoch < warm:
            return epoch / warm
        return 0.5 * (1.0 + math.cos(math.pi * (epoch - warm) / max(1, max_epochs - warm)))

    return factor


@torch.no_grad()
def predict_model(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """Evaluation-mode predictions in batches. **Shape**: (n, P) -> (n,).

    Examples
    --------
    >>> model = nn.Sequential(nn.Linear(3, 1), nn.Flatten(0))
    >>> predict_model(model, torch.zeros(10, 3)).shape
    torch.Size([10])
    """
    was_training = model.training
    model.eval()
    out = torch.cat([model(x[i:i + EVAL_BATCH]) for i in range(0, x.shape[0], EVAL_BATCH)]
                    or [x.new_zeros(0)])
    model.train(was_training)
    return out


def train_model(model: nn.Module, x: torch.Tensor, y: torch.Tensor, x_val: torch.Tensor,
                y_val: torch.Tensor, *, optimizer: Literal["adam", "adamw"] = "adam", lr: float = 1e-3,
                weight_decay: float = 1e-4, batch_size: int = 256, max_epochs: int = 200,
                patience: int = 10, clip_norm: float | None = 1.0, schedule: Schedule = "none",
                warmup_fraction: float = 0.1,
                progress: bool | Callable[[EpochRecord], Any] = False) -> History:
    """Train ``model`` on (x, y) by mini-batch MSE, early stopping on (x_val, y_val).

    Stops after ``patience`` epochs without a lower validation loss; the model is left in
    evaluation mode with the parameters of the epoch of lowest validation loss. Every epoch's
    batch order is drawn from torch's global generator exactly as ``DataLoader(shuffle=True)``
    draws it (:func:`epoch_order`), and dropout draws from it too: seed it (or use
    :func:`fit_network`) for reproducible runs, which then take the same batches and dropout
    masks as the same loop written with a ``DataLoader``.

    **Shape**: ``x`` (n, P), ``y`` (n,), ``x_val`` (n_val, P), ``y_val`` (n_val,), all on the
    model's device and dtype.

    Examples
    --------
    >>> _ = torch.manual_seed(0)
    >>> model = nn.Sequential(nn.Linear(2, 1), nn.Flatten(0))
    >>> x = torch.randn(200, 2); y = x @ torch.tensor([1.0, -1.0])
    >>> history = train_model(model, x[:150], y[:150], x[150:], y[150:], batch_size=16, lr=0.05,
    ...                       max_epochs=100)
    >>> history.best_val_loss < 1e-3, model.training
    (True, False)
    """
    _check_train_options(optimizer, lr, weight_decay, batch_size, max_epochs, patience, clip_norm,
                         schedule, warmup_fraction)
    params = [p for p in model.parameters() if p.requires_grad]
    opt_class = torch.optim.Adam if optimizer == "adam" else torch.optim.AdamW
    opt = opt_class(params, lr=lr, weight_decay=weight_decay, foreach=True)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, _lr_factor(schedule, max_epochs, warmup_fraction))
    best: tuple[float, int, dict[str, Any]] = (math.inf, 0, copy.deepcopy(model.state_dict()))
    records: list[EpochRecord] = []
    start, waited = time.perf_counter(), 0
    threads = small_torch_ops() if x.device.type == "cpu" else contextlib.nullcontext()
    with threads, Progress(max_epochs, "training", enabled=progress is True) as bar:
        for epoch in range(1, max_epochs + 1):
            lr_now = opt.param_groups[0]["lr"]
            order = epoch_order(x.shape[0]).to(x.device)
            train_loss = _epoch(model, opt, params, x, y, order, batch_size, clip_norm)
            sched.step()
            val_loss = F.mse_loss(predict_model(model, x_val), y_val).item()
            if val_loss < best[0]:
                best, waited = (val_loss, epoch, copy.deepcopy(model.state_dict())), 0
            else:
                waited += 1
            records.append(EpochRecord(epoch, max_epochs, train_loss, val_loss, best[1], lr_now))
            bar.update(epoch, f"train {train_loss:.4f} val {val_loss:.4f} best {best[1]}")
            if callable(progress):
                progress(records[-1])
            if waited >= patience:
                break
    model.load_state_dict(best[2])
    model.eval()
    if len(records) == max_epochs and best[1] == max_epochs:
        warn_user(f"validation loss was still falling at max_epochs={max_epochs}; "
                      "consider more epochs", ConvergenceWarning)
    return History(train_loss=[r.train_loss for r in records], val_loss=[r.val_loss for r in records],
                   lr=[r.lr for r in records], best_epoch=best[1], best_val_loss=best[0],
                   stopped_early=len(records) < max_epochs, seconds=time.perf_counter() - start)


def epoch_order(n: int) -> torch.Tensor:
    """One epoch's order of the n training rows, drawn as ``DataLoader(shuffle=True)`` draws it.

    Two 64-bit draws from torch's global (CPU) generator, the loader iterator's base seed and
    the sampler's seed, then a permutation from a fresh generator seeded with the second.

    Examples
    --------
    >>> from torch.utils.data import DataLoader
    >>> _ = torch.manual_seed(0)
    >>> loader_order = torch.cat(list(DataLoader(torch.arange(10), batch_size=4, shuffle=True)))
    >>> _ = torch.manual_seed(0)
    >>> torch.equal(epoch_order(10), loader_order)
    True
    """
    torch.empty((), dtype=torch.int64).random_()  # the iterator's base seed (for workers)
    seed = int(torch.empty((), dtype=torch.int64).random_().item())
    return torch.randperm(n, generator=torch.Generator().manual_seed(seed))


def _epoch(model: nn.Module, opt: torch.optim.Optimizer, params: list[nn.Parameter], x: torch.Tensor,
           y: torch.Tensor, order: torch.Tensor, batch_size: int, clip_norm: float | None) -> float:
    """One pass over the batches of ``order``; the mean training loss (training mode)."""
    model.train()
    total = torch.zeros((), dtype=x.dtype, device=x.device)
    for i in range(0, order.numel(), batch_size):
        idx = order[i:i + batch_size]
        loss = F.mse_loss(model(x[idx]), y[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if clip_norm is not None:
            nn.utils.clip_grad_norm_(params, clip_norm)
        opt.step()
        total += loss.detach() * idx.numel()
    return float(total) / order.numel()


def _check_train_options(optimizer: str, lr: float, weight_decay: float, batch_size: int,
                         max_epochs: int, patience: int, clip_norm: float | None, schedule: str,
                         warmup_fraction: float) -> None:
    if optimizer not in ("adam", "adamw"):
        raise OptionError(f"optimizer must be 'adam' or 'adamw', however: {optimizer=}")
    if schedule not in ("none", "warmup_cosine"):
        raise OptionError(f"schedule must be 'none' or 'warmup_cosine', however: {schedule=}")
    if not (isinstance(lr, (int, float)) and lr > 0):
        raise OptionError(f"lr must be positive, however: {lr=}")
    if not (isinstance(weight_decay, (int, float)) and weight_decay >= 0):
        raise OptionError(f"weight_decay must be non-negative, however: {weight_decay=}")
    for name, value in (("batch_size", batch_size), ("max_epochs", max_epochs), ("patience", patience)):
        if not (isinstance(value, int) and value > 0):
            raise OptionError(f"{name} must be a positive integer, however: {name}={value!r}")
    if clip_norm is not None and not clip_norm > 0:
        raise OptionError(f"clip_norm must be positive or None, however: {clip_norm=}")
    if not 0 <= warmup_fraction < 1:
        raise OptionError(f"warmup_fraction must be in [0, 1), however: {warmup_fraction=}")


def split_validation(n: int, fraction: float, seed: int) -> tuple[IntArray, IntArray]:
    """Random (fit rows, validation rows), with ``floor(fraction·n)`` validation rows.

    The rows are those of ``np.random.seed(seed); np.random.permutation(n)``, as in the
    paper's code: its first ``floor(fraction·n)`` entries are the validation rows, the rest
    (in that order, which the training batches index) the fit rows.

    Examples
    --------
    >>> fit_rows, val_rows = split_validation(20, 0.15, seed=0)
    >>> len(fit_rows), len(val_rows), sorted([*fit_rows, *val_rows]) == list(range(20))
    (17, 3, True)
    """
    if not 0 < fraction < 1:
        raise OptionError(f"val_fraction must be in (0, 1), however: val_fraction={fraction!r}")
    n_val = int(fraction * n)
    if n_val < 1 or n - n_val < 2:
        raise DataError(f"too few rows ({n}) to hold out a validation split of {fraction:.0%}")
    perm = np.random.RandomState(seed).permutation(n)
    return perm[n_val:], perm[:n_val]
