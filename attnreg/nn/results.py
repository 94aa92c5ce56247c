"""Formula front end and results of the neural fits (``method="block"`` and ``"ftt"``).

:func:`attnreg.attnreg` (or :func:`attnreg.api.fit_network_formula`) builds the design from
the formula, and the method registry fits the network on the predictors without the
intercept column (both networks carry their own biases; :func:`attnreg.nn.fit.fit_network`)
and wraps it in a :class:`NetworkResults`: predictions, the training history, permutation importance of the
design columns and an R-style ``summary()`` without standard errors.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

import numpy as np
import pandas as pd
import patsy

from attnreg._typing import FloatArray
from attnreg.formula.design import Design
from attnreg.results_base import PredictorResults
from attnreg.exceptions import DataError, OptionError
from attnreg.nn.config import VARIANTS, BlockConfig, FTTConfig, config_fields
from attnreg.nn.fit import NetworkFit, check_fit_options
from attnreg.report import Summary
from attnreg.report.modelfigures import NetworkFigures, PermutationSetup
from attnreg.report.sections import Call, Coefficients, residuals_section

Method = Literal["block", "ftt"]
CONFIGS: dict[str, type[BlockConfig] | type[FTTConfig]] = {"block": BlockConfig, "ftt": FTTConfig}


def resolve_network_options(method: str, options: dict[str, Any]) -> tuple[BlockConfig | FTTConfig,
                                                                          dict[str, Any]]:
    """Split ``options`` into the network configuration and the fitting options, validated.

    Examples
    --------
    >>> config, fit_options = resolve_network_options("block", {"variant": "A2", "d_model": 32, "seed": 1})
    >>> config.poly, config.d_model, fit_options["seed"], fit_options["optimizer"]
    (False, 32, 1, 'adam')
    """
    if method not in CONFIGS:
        raise OptionError(f"method must be 'block' or 'ftt', however: {method=}")
    options = dict(options)
    variant, config = options.pop("variant", None), options.pop("config", None)
    cls = CONFIGS[method]
    if variant is not None and config is not None:
        raise OptionError("give either variant or config, not both")
    if variant is not None:
        if variant not in VARIANTS:
            raise OptionError(f"variant must be one of {', '.join(map(repr, VARIANTS))}, "
                              f"however: {variant=}")
        config = VARIANTS[variant]
    config = cls() if config is None else config
    if not isinstance(config, cls):
        other = "ftt" if isinstance(config, FTTConfig) else "block"
        raise OptionError(f"{'variant ' + repr(variant) if variant else 'config'} is a "
                          f"{type(config).__name__}; use method={other!r}")
    overrides = {k: options.pop(k) for k in list(options) if k in config_fields(cls)}
    config = dataclasses.replace(config, **overrides)  # the dataclass validates the values
    return config, check_fit_options(config, **options)


@dataclass(frozen=True)
class NetworkResults(PredictorResults):
    """A fitted Regression Block or FT-Transformer. Immutable; derived quantities are cached.

    Attributes
    ----------
    design : Design
        The model frame.
    fit : attnreg.nn.fit.NetworkFit
        The trained network, its standardisation, validation split and history.
    call : str
    method : {"block", "ftt"}
    variant : str or None
        The paper's configuration name, when one was asked for.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"a": rng.normal(size=200), "b": rng.normal(size=200)})
    >>> df["y"] = df.a - df.b + 0.1 * rng.normal(size=200)
    >>> import attnreg as ar
    >>> fit = ar.attnreg("y ~ a + b", df, method="block", d_model=16, pca_components=10,
    ...                  max_epochs=5)
    >>> isinstance(fit, NetworkResults), fit.history.shape[1]
    (True, 4)
    """

    design: Design
    fit: NetworkFit = field(repr=False)
    call: str = ""
    method: str = "block"
    variant: str | None = None

    @property
    def n_params(self) -> int:
        """Trainable parameters of the network."""
        return self.fit.n_params

    @cached_property
    def history(self) -> pd.DataFrame:
        """One row per epoch: train_loss, val_loss (standardised MSE), lr, best (bool)."""
        return self.fit.history.to_frame()

    def _r2(self, rows: np.ndarray) -> float:
        y = self.design.y[rows]
        return 1.0 - float(np.sum(self.resid.to_numpy()[rows] ** 2) / np.sum((y - y.mean()) ** 2))

    @property
    def r_squared(self) -> float:
        """In-sample R² on the rows trained on (the validation split excluded)."""
        return self._r2(self.fit.fit_rows)

    @property
    def val_r2(self) -> float:
        """R² on the validation split (held out from the gradient steps, used to stop)."""
        return self._r2(self.fit.val_rows)

    @property
    def sigma(self) -> float:
        """Root mean squared residual on the rows trained on."""
        return float(np.sqrt(np.mean(self.resid.to_numpy()[self.fit.fit_rows] ** 2)))

    def _response(self, newdata: Any) -> FloatArray:
        """The response of ``newdata``, evaluated as in the formula (NaN where missing)."""
        from attnreg.formula.response import logical_response

        frame = newdata if isinstance(newdata, pd.DataFrame) else pd.DataFrame(dict(newdata))
        try:
            y_mat, _ = patsy.dmatrices(f"{self.design.response_name} ~ 0", frame,
                                       eval_env=self.design.eval_env,
                                       NA_action=patsy.NAAction(NA_types=[]))
        except patsy.PatsyError as exc:
            raise DataError(f"newdata: could not evaluate the response "
                            f"{self.design.response_name!r}: {exc}") from None
        y = np.asarray(y_mat, dtype=np.float64)
        info = y_mat.design_info
        # a logical response: patsy's columns are [False, True]; the 0/1 response is True's
        return y[:, 1] if logical_response(info) is not info else y[:, 0]

    def permutation_importance(self, newdata: Any = None, n_repeats: int = 5,
                               seed: int = 0) -> pd.DataFrame:
        """Drop in R² when each design column is shuffled, on held-out rows.

        Parameters
        ----------
        newdata : DataFrame, optional
            Rows with the response; default: the validation split (rows the gradient
            steps never saw).
        n_repeats : int
            Shuffles per column.
        seed : int

        Returns
        -------
        DataFrame
            Indexed by the design columns: ``importance`` (mean drop in R², i.e. the increase
            in mean squared error over the variance of y) and ``std`` (across shuffles).
        """
        if not isinstance(n_repeats, int) or isinstance(n_repeats, bool) or n_repeats < 1:
            raise OptionError(f"n_repeats must be a positive integer, however: {n_repeats=}")
        if newdata is None:
            X, y = self._X[self.fit.val_rows], self.design.y[self.fit.val_rows]
        else:
            X, _ = self.design.rebuild(newdata)
            X, y = (X[:, 1:] if self.design.intercept else X), self._response(newdata)
            ok = np.isfinite(X).all(axis=1) & np.isfinite(y)
            X, y = X[ok], y[ok]
        if y.size < 2 or np.var(y) == 0:
            raise DataError("permutation importance needs at least two rows with a non-constant response")
        rng = np.random.default_rng(seed)
        n, p = X.shape
        base = np.mean((y - self.fit.predict(X)) ** 2)
        drop = np.empty((p, n_repeats))
        for j in range(p):  # all shuffles of one column in one forward pass
            shuffled = np.repeat(X[None], n_repeats, axis=0)  # (repeats, n, p)
            for r in range(n_repeats):
                shuffled[r, :, j] = X[rng.permutation(n), j]
            pred = self.fit.predict(shuffled.reshape(-1, p)).reshape(n_repeats, n)
            drop[j] = (np.mean((y - pred) ** 2, axis=1) - base) / np.var(y)
        return pd.DataFrame({"importance": drop.mean(axis=1),
                             "std": drop.std(axis=1, ddof=1) if n_repeats > 1 else np.zeros(p)},
                            index=pd.Index(self.names, name="term"))

    def summary(self) -> Summary:
        """Report: permutation importance, architecture, training curve and R² (no standard errors)."""
        table = self.permutation_importance().rename(columns={"importance": "Importance",
                                                              "std": "Std. Dev."})
        return Summary(f"attnreg {self.method} fit", (
            Call(self.call), residuals_section(self.resid.to_numpy()),
            PermutationSetup(int(self.fit.val_rows.size), 5),
            Coefficients(table, stars=False, heading=False), self._figures()))

    def _figures(self) -> NetworkFigures:
        h, o = self.fit.history, self.fit.options
        val = h.val_loss
        return NetworkFigures(
            architecture=describe(self.fit.config, self.variant), n_params=int(self.n_params),
            optimizer=o["optimizer"], lr=o["lr"], weight_decay=o["weight_decay"],
            schedule=o["schedule"], batch_size=o["batch_size"], clip_norm=o["clip_norm"],
            seed=o["seed"], n_epochs=int(h.n_epochs), best_epoch=int(h.best_epoch),
            stopped_early=bool(h.stopped_early), patience=o["patience"],
            max_epochs=o["max_epochs"], val_loss_first=float(val[0]),
            val_loss_best=float(h.best_val_loss), val_loss_last=float(val[-1]),
            r_squared=float(self.r_squared), val_r2=float(self.val_r2),
            n_fit=int(self.fit.fit_rows.size), n_val=int(self.fit.val_rows.size))

    def __repr__(self) -> str:
        return (f"<attnreg {self.method} fit: {self.design.formula}; n={self.nobs}; "
                f"{self.n_params:,} parameters; validation R²={self.val_r2:.4f}>")


def describe(config: BlockConfig | FTTConfig, variant: str | None = None) -> str:
    """One line naming the architecture of a configuration.

    Examples
    --------
    >>> from attnreg.nn.config import VARIANTS
    >>> describe(VARIANTS["A0"], "A0")
    'FT-Transformer [A0]: 3 blocks, d_model 64, 4 heads, FFN 128'
    >>> describe(VARIANTS["trimmed"])
    'Regression Block: 1 block x 2 regression mixers, d_model 64, degree-2 map, PCA 50, ridge warm start'
    """
    name = f" [{variant}]" if variant else ""
    if isinstance(config, FTTConfig):
        poly = ", degree-2 polynomial inputs" if config.poly_inputs else ""
        blocks = f"{config.n_blocks} block{'s' if config.n_blocks > 1 else ''}"
        return (f"FT-Transformer{name}: {blocks}, d_model {config.d_model}, "
                f"{config.n_heads} heads, FFN {config.d_ffn}{poly}")
    plural = "s" if config.n_mixers > 1 else ""
    mixer = (f"{config.n_mixers} regression mixer{plural}" if config.mixer == "regression"
             else f"{config.n_mixers} softmax attention mixer{plural} ({config.n_heads} heads)")
    ffn = f" + FFN {config.d_ffn or 2 * config.d_model}" if config.ffn else ""
    parts = [f"{config.n_blocks} block{'s' if config.n_blocks > 1 else ''} x {mixer}{ffn}",
             f"d_model {config.d_model}"]
    if config.mixer == "regression":
        parts.append("degree-2 map" if config.poly else "no polynomial map")
        parts.append(f"PCA {config.pca_components}" if config.pca_components else "no PCA")
        parts.append("ridge warm start" if config.warm_start else "no warm start")
    return f"Regression Block{name}: " + ", ".join(parts)
