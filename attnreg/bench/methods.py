"""The methods of the Table 1 protocol: what a method is, the registry, and the baselines.

A :class:`Method` wraps ``fn(X_train, y_train, X_test, seed, device, progress) -> predictions``
with the runner's flags (standardise y, pin torch threads, stochastic). :data:`METHODS` holds
attnreg's OLS, ridge, PCR and softmax attention regression (through the formula interface), the
paper's random forest and MLP baselines, and the Regression Block (``"block"``) and
FT-Transformer (``"ftt"``) of :mod:`attnreg.nn` (:func:`network_method`);
:func:`register_method` adds one. :mod:`attnreg.bench.protocol` runs them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from attnreg._typing import FloatArray
from attnreg.exceptions import OptionError

__all__ = ["METHODS", "PLANNED", "Fitter", "Method", "get_method", "network_method", "register_method"]

Fitter = Callable[[FloatArray, FloatArray, FloatArray, int, str, bool], Any]


@dataclass(frozen=True)
class Method:
    """A Table 1 method: ``fn(X_train, y_train, X_test, seed, device, progress) -> predictions``.

    X arrives standardised on the training part. With ``scale_y`` the runner also
    standardises y on the training part and maps the predictions back. ``uses_torch`` lets
    the runner pin torch's threads. ``stochastic`` marks a method whose fit depends on the
    seed (initialisation, resampling, dropout): only those are refitted when the runner is
    asked for several training runs per split (``repeats``).

    Examples
    --------
    >>> mean = Method(lambda X, y, X_new, seed, device, progress: np.full(len(X_new), y.mean()))
    >>> mean(np.zeros((4, 2)), np.arange(4.0), np.zeros((2, 2)), seed=0)
    array([1.5, 1.5])
    """

    fn: Fitter
    scale_y: bool = False
    uses_torch: bool = False
    description: str = ""
    stochastic: bool = True

    def __call__(self, X_train: FloatArray, y_train: FloatArray, X_test: FloatArray, seed: int,
                 device: str = "cpu", progress: bool = False) -> FloatArray:
        out = self.fn(X_train, y_train, X_test, seed, device, progress)
        return np.asarray(out, dtype=float).reshape(-1)


def require_sklearn() -> None:
    """Raise OptionError naming the ``bench`` extra when scikit-learn is missing."""
    try:
        import sklearn  # noqa: F401
    except ImportError as exc:
        raise OptionError("the benchmark protocol needs scikit-learn: pip install 'attnreg[bench]'") from exc


def _frame(X: FloatArray, y: FloatArray | None = None) -> pd.DataFrame:
    df = pd.DataFrame(X, columns=[f"x{j + 1}" for j in range(X.shape[1])])
    if y is not None:
        df["y"] = y
    return df


def _formula_method(method: str) -> Fitter:
    def fit(X: FloatArray, y: FloatArray, X_new: FloatArray, seed: int, device: str,
            progress: bool) -> Any:
        from attnreg.api import attnreg
        from attnreg.methods import get_method

        opts: dict[str, Any] = {}
        if get_method(method).capabilities.torch:  # the stochastic fits: seed, device, progress
            opts = {"seed": seed, "device": device, "progress": progress}
        return attnreg("y ~ .", data=_frame(X, y), method=method, **opts).predict(_frame(X_new))

    fit.__name__ = method
    return fit


def _rf(X: FloatArray, y: FloatArray, X_new: FloatArray, seed: int, device: str,
        progress: bool) -> FloatArray:
    require_sklearn()
    from sklearn.ensemble import RandomForestRegressor

    model = RandomForestRegressor(n_estimators=500, max_features=1 / 3, random_state=seed, n_jobs=1)
    return model.fit(X, y).predict(X_new)


def _mlp(X: FloatArray, y: FloatArray, X_new: FloatArray, seed: int, device: str,
         progress: bool) -> FloatArray:
    """The paper's MLP: 3×200 ReLU, dropout 0.2, Adam 1e-3, batch 64, ≤1000 epochs, patience 20
    on a 15% validation split, best validation weights restored; no clipping, no weight decay.

    Trained by the networks' loop, which draws the validation split, the initial weights, the
    batches and the dropout masks from ``seed`` as the paper's code does.
    """
    import torch
    from torch import nn

    from attnreg.nn.train import predict_model, split_validation, train_model

    dev = torch.device("cuda" if device in ("cuda", "auto") and torch.cuda.is_available() else "cpu")
    fit_rows, val_rows = split_validation(len(X), 0.15, seed)
    t = lambda a: torch.as_tensor(np.asarray(a, dtype=np.float32), device=dev)  # noqa: E731
    with torch.random.fork_rng(devices=[dev.index or 0] if dev.type == "cuda" else []):
        torch.manual_seed(seed)
        layers: list[nn.Module] = []
        for width_in in (X.shape[1], 200, 200):
            layers += [nn.Linear(width_in, 200), nn.ReLU(), nn.Dropout(0.2)]
        net = nn.Sequential(*layers, nn.Linear(200, 1), nn.Flatten(0)).to(dev)
        train_model(net, t(X[fit_rows]), t(y[fit_rows]), t(X[val_rows]), t(y[val_rows]),
                    optimizer="adam", lr=1e-3, weight_decay=0.0, batch_size=64, max_epochs=1000,
                    patience=20, clip_norm=None, progress=progress)
        return predict_model(net, t(X_new)).double().cpu().numpy()


def _network(variant: str, **options: Any) -> Fitter:
    """A Regression Block / FT-Transformer variant of :data:`attnreg.nn.VARIANTS` on arrays.

    ``options`` (e.g. ``max_epochs``) go to :func:`attnreg.nn.fit_network` after the
    protocol's own (seed, device, progress); the paper's training settings otherwise.
    """

    def fit(X: FloatArray, y: FloatArray, X_new: FloatArray, seed: int, device: str,
            progress: bool) -> FloatArray:
        from attnreg.nn import VARIANTS, fit_network

        net = fit_network(X, y, config=VARIANTS[variant], seed=seed, device=device,
                          progress=progress, **options)
        return np.asarray(net.predict(X_new), dtype=float)

    fit.__name__ = variant
    return fit


def network_method(variant: str, description: str = "", **options: Any) -> Method:
    """The :class:`Method` fitting ``attnreg.nn.VARIANTS[variant]``, as ``"block"``/``"ftt"`` do.

    ``options`` go to :func:`attnreg.nn.fit_network` (e.g. ``max_epochs=5`` for a smoke run).

    Examples
    --------
    >>> m = network_method("trimmed", max_epochs=3)
    >>> X = np.random.default_rng(0).normal(size=(60, 3))
    >>> m(X, X[:, 0] * X[:, 1], X[:5], seed=0).shape
    (5,)
    """
    return Method(_network(variant, **options), uses_torch=True, description=description or variant)


#: the registered methods; add one with :func:`register_method`
METHODS: dict[str, Method] = {
    "ols": Method(_formula_method("ols"), description="attnreg OLS", stochastic=False),
    "ridge": Method(_formula_method("ridge"), description="attnreg ridge, λ by GCV", stochastic=False),
    "pcr": Method(_formula_method("pcr"), description="attnreg PCR, k by GCV", stochastic=False),
    "softmax": Method(_formula_method("softmax"), uses_torch=True,
                      description="attnreg softmax attention regression, default options"),
    "rf": Method(_rf, description="random forest, 500 trees, max_features=1/3"),
    "mlp": Method(_mlp, scale_y=True, uses_torch=True, description="MLP 3×200, dropout 0.2 (torch)"),
    "block": network_method("RB", "Regression Block (paper's RB)"),
    "ftt": network_method("A0", "FT-Transformer baseline (A0)"),
}
#: methods of the paper not implemented yet, and what they need
PLANNED: dict[str, str] = {}


def register_method(name: str, fn: Fitter, *, scale_y: bool = False, uses_torch: bool = False,
                    description: str = "", stochastic: bool = True, replace: bool = False) -> Method:
    """Add ``fn`` to :data:`METHODS` as ``name`` (OptionError if taken, unless ``replace``).

    The flags are those of :class:`Method`; pass ``stochastic=False`` for a fit that does not
    depend on the seed, so that ``repeats`` fits it once.

    Examples
    --------
    >>> zero = register_method("zero", lambda X, y, X_new, seed, device, progress: np.zeros(len(X_new)))
    >>> get_method("zero") is zero
    True
    >>> del METHODS["zero"]
    """
    if name in METHODS and not replace:
        raise OptionError(f"method {name!r} is already registered (pass replace=True)")
    METHODS[name] = Method(fn, scale_y=scale_y, uses_torch=uses_torch, description=description,
                           stochastic=stochastic)
    PLANNED.pop(name, None)
    return METHODS[name]


def get_method(name: str) -> Method:
    """The registered method ``name``; OptionError naming the available ones otherwise.

    Examples
    --------
    >>> get_method("ftt").description
    'FT-Transformer baseline (A0)'
    >>> get_method("lasso")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attnreg.exceptions.OptionError: method must be one of 'ols', 'ridge', ...; got 'lasso'
    """
    if name in METHODS:
        return METHODS[name]
    avail = ", ".join(map(repr, METHODS))
    if name in PLANNED:
        raise OptionError(f"method {name!r} is not available yet: needs {PLANNED[name]}; "
                          f"available: {avail}")
    raise OptionError(f"method must be one of {avail}; got {name!r}")
