"""The array-level fitter of the networks, built on the training loop.

:func:`fit_network` standardises X and y, carves the validation split from the training
rows, builds and initialises the network, trains it (:func:`attnreg.nn.train.train_model`),
and returns a :class:`NetworkFit`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn

from attnreg._typing import FloatArray, IntArray
from attnreg.exceptions import DataError, OptionError
from attnreg.nn.blocks import build_model, count_parameters
from attnreg.nn.config import BlockConfig, FTTConfig
from attnreg.nn.train import (
    TRAIN_DEFAULTS,
    History,
    _check_train_options,
    predict_model,
    resolve_device,
    split_validation,
    train_model,
)

__all__ = ["DEFAULTS", "FIT_DEFAULTS", "NetworkFit", "check_fit_options", "fit_network"]


@dataclass(frozen=True)
class NetworkFit:
    """A trained network with its standardisation, on arrays (no formula, no labels).

    Attributes
    ----------
    model : RegressionBlock or FTTransformer
        In evaluation mode, on ``device``.
    config : BlockConfig or FTTConfig
    x_mean, x_scale : ndarray, shape (P,)
    y_mean, y_scale : float
        Standardisation fitted on all training rows (fit part + validation split).
    fit_rows, val_rows : ndarray of int
        Positions of the rows trained on (in the order the batches index them) and of the
        validation split.
    history : History
    options : dict
        The training options used.

    Examples
    --------
    >>> X = np.random.default_rng(0).normal(size=(100, 2))
    >>> fit = fit_network(X, X[:, 0] - X[:, 1], config=BlockConfig(d_model=8, pca_components=8), max_epochs=3)
    >>> isinstance(fit, NetworkFit), fit.n_params, fit.predict(X[:4]).shape
    (True, 425, (4,))
    """

    model: nn.Module = field(repr=False)
    config: BlockConfig | FTTConfig
    x_mean: FloatArray
    x_scale: FloatArray
    y_mean: float
    y_scale: float
    fit_rows: IntArray
    val_rows: IntArray
    history: History
    options: dict[str, Any]

    @property
    def n_params(self) -> int:
        """Trainable parameters."""
        return count_parameters(self.model)

    def predict(self, X: FloatArray) -> FloatArray:
        """Predictions on the original scale. **Shape**: (n, P) -> (n,)."""
        param = next(self.model.parameters())
        z = torch.as_tensor((np.asarray(X, dtype=np.float64) - self.x_mean) / self.x_scale,
                             dtype=param.dtype, device=param.device)
        out = predict_model(self.model, z).double().cpu().numpy()
        return self.y_mean + self.y_scale * out


DEFAULTS: dict[str, dict[str, Any]] = {  # the paper's training settings per architecture
    "block": {"optimizer": "adam", "schedule": "none"},
    "ftt": {"optimizer": "adamw", "schedule": "warmup_cosine"},
}
FIT_DEFAULTS: dict[str, Any] = {"val_fraction": 0.15, "seed": 0, "device": "cpu", "dtype": "float32",
                                "progress": False}


def check_fit_options(config: BlockConfig | FTTConfig, **options: Any) -> dict[str, Any]:
    """Validate :func:`fit_network` options; return them completed with the defaults.

    The optimizer and schedule default to the paper's for the architecture of ``config``
    (Adam without schedule for the Regression Block; AdamW with warm-up + cosine for the
    FT-Transformer).

    Examples
    --------
    >>> opts = check_fit_options(FTTConfig(), lr=5e-4)
    >>> opts["optimizer"], opts["schedule"], opts["lr"], opts["batch_size"]
    ('adamw', 'warmup_cosine', 0.0005, 256)
    >>> check_fit_options(BlockConfig(), lr=-1)
    Traceback (most recent call last):
    ...
    attnreg.exceptions.OptionError: lr must be positive, however: lr=-1
    """
    unknown = sorted(set(options) - set(TRAIN_DEFAULTS) - set(FIT_DEFAULTS))
    if unknown:
        raise OptionError(f"unknown option(s): {', '.join(unknown)}; valid: "
                          f"{', '.join([*FIT_DEFAULTS, *TRAIN_DEFAULTS])}")
    arch = "ftt" if isinstance(config, FTTConfig) else "block"
    out = {**FIT_DEFAULTS, **TRAIN_DEFAULTS, **DEFAULTS[arch], **options}
    _check_train_options(**{k: out[k] for k in TRAIN_DEFAULTS})
    if out["dtype"] not in ("float32", "float64"):
        raise OptionError(f"dtype must be 'float32' or 'float64', however: dtype={out['dtype']!r}")
    if not 0 < out["val_fraction"] < 1:
        raise OptionError(f"val_fraction must be in (0, 1), however: val_fraction={out['val_fraction']!r}")
    seed = out["seed"]
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or not 0 <= seed < 2**32:
        raise OptionError(f"seed must be an integer in [0, 2**32), however: seed={seed!r}")
    if not (isinstance(out["progress"], bool) or callable(out["progress"])):
        raise OptionError("progress must be True, False or a callable, however: "
                          f"progress={out['progress']!r}")
    resolve_device(out["device"])
    return out


def fit_network(X: FloatArray, y: FloatArray, *, config: BlockConfig | FTTConfig | None = None,
                **options: Any) -> NetworkFit:
    """Fit a Regression Block (default) or FT-Transformer on arrays.

    X and y are standardised on all the training rows; ``val_fraction`` of them (seeded)
    are held out for early stopping; the PCA and warm start see only the fit part. The
    whole run (initialisation, shuffling, dropout) is reproducible from ``seed`` and leaves
    torch's global random state untouched.

    ``seed`` draws what the paper's code draws from it, in the same order: the validation
    rows from ``np.random.seed(seed)``'s permutation (:func:`split_validation`), the
    initial weights after ``torch.manual_seed(seed)``, then every epoch's batch order as a
    ``DataLoader(shuffle=True)`` (:func:`epoch_order`) and the dropout masks. An
    FT-Transformer fit on CPU therefore equals the paper's training loop run with the same
    seed, prediction for prediction (tested).

    Parameters
    ----------
    X : ndarray, shape (n, P)
    y : ndarray, shape (n,)
    config : BlockConfig or FTTConfig, optional
        Default: the paper's Regression Block.
    val_fraction : float, default 0.15
        Share of the rows held out for early stopping.
    seed : int, default 0
        In [0, 2**32).
    device : {"cpu", "cuda", "auto"}, default "cpu"
    dtype : {"float32", "float64"}, default "float32"
    progress : bool or callable, default False
        True shows a progress line on stderr; a callable receives an :class:`EpochRecord`
        after every epoch.
    **options
        Passed to :func:`train_model` (``lr``, ``weight_decay``, ``batch_size``, ``max_epochs``,
        ``patience``, ``clip_norm``, ``optimizer``, ``schedule``, ``warmup_fraction``).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 3)); y = X[:, 0] * X[:, 1] + 0.1 * rng.normal(size=300)
    >>> fit = fit_network(X, y, config=BlockConfig(d_model=16, pca_components=20), max_epochs=30)
    >>> fit.predict(X[:2]).shape
    (2,)
    """
    config = BlockConfig() if config is None else config
    opts = check_fit_options(config, **options)
    X, y = np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if X.ndim != 2 or y.shape != (X.shape[0],):
        raise DataError(f"X must be (n, P) and y (n,), however: {X.shape=}, {y.shape=}")
    if not (np.isfinite(X).all() and np.isfinite(y).all()):
        raise DataError("X and y must be finite")
    dev = resolve_device(opts["device"])
    fit_rows, val_rows = split_validation(X.shape[0], opts["val_fraction"], opts["seed"])
    x_mean, x_scale = X.mean(axis=0), X.std(axis=0)
    x_scale = np.where(x_scale > 0, x_scale, 1.0)
    y_mean, y_scale = float(y.mean()), float(y.std()) or 1.0
    tdtype = torch.float32 if opts["dtype"] == "float32" else torch.float64

    def tensor(a: FloatArray) -> torch.Tensor:
        return torch.as_tensor(a, dtype=tdtype, device=dev)

    z, t = tensor((X - x_mean) / x_scale), tensor((y - y_mean) / y_scale)
    train_opts = {k: opts[k] for k in TRAIN_DEFAULTS}
    with torch.random.fork_rng(devices=[dev.index or 0] if dev.type == "cuda" else []):
        torch.manual_seed(opts["seed"])
        model = build_model(config, X.shape[1], n_train=fit_rows.size).to(device=dev, dtype=tdtype)
        model.initialize(z[fit_rows], t[fit_rows])
        history = train_model(model, z[fit_rows], t[fit_rows], z[val_rows], t[val_rows],
                              progress=opts["progress"], **train_opts)
    return NetworkFit(model=model, config=config, x_mean=x_mean, x_scale=x_scale, y_mean=y_mean,
                      y_scale=y_scale, fit_rows=fit_rows, val_rows=val_rows, history=history,
                      options={**opts, "device": str(dev)})
