"""Stateful centring and scaling inside formulas, ignoring missing values as R's ``scale()``.

patsy's ``center()``, ``standardize()`` and ``scale()`` remember the mean (and standard
deviation) of the training data and reuse it at prediction time, which is what a formula
needs. But they include missing values in those statistics: one NaN makes the mean NaN,
every transformed row becomes missing, and the fit has no rows left. R's ``scale()`` computes
its statistics on the observed values (``colMeans(x, na.rm = TRUE)``). The transforms here
treat missing values as R does and compute their statistics in one vectorised pass (patsy's
``standardize`` loops over rows in Python). ``center()`` and ``standardize()`` keep patsy's
signatures and defaults (``standardize`` divides by the population standard deviation);
``scale()`` is R's ``scale(x, center = TRUE, scale = TRUE)``, which divides by the sample
standard deviation (n - 1), where patsy's ``scale`` is an alias of its ``standardize``.

They replace patsy's names inside every formula given to :func:`attnreg.attnreg`.

Examples
--------
>>> import numpy as np, pandas as pd
>>> import attnreg as ar
>>> df = pd.DataFrame({"y": [1.0, 2.0, 4.0, 3.0, 5.0], "x": [1.0, np.nan, 3.0, 4.0, 6.0]})
>>> fit = ar.attnreg("y ~ center(x)", df)     # patsy's own center() would leave no rows
>>> fit.nobs, round(float(fit.coef["(Intercept)"]), 4)
(4, 3.25)
>>> from attnreg.formula.transforms import standardize
>>> z = standardize(np.array([1.0, 2.0, np.nan, 3.0]), ddof=1)
>>> [round(float(v), 4) for v in z]
[-1.0, 0.0, nan, 1.0]
>>> from attnreg.formula.transforms import scale
>>> [round(float(v), 4) for v in scale(np.array([1.0, 2.0, np.nan, 3.0]))]  # as R's scale()
[-1.0, 0.0, nan, 1.0]
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import patsy

__all__ = ["center", "scale", "standardize"]


def _as_2d(x: Any) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float64)
    return arr.reshape(-1, 1) if arr.ndim <= 1 else arr


#: the exponent of a spread of exactly zero: below every other, so it never sets the scale
_NO_SPREAD = -1100


def _exponent(size: np.ndarray) -> np.ndarray:
    """Binary exponents e with |size| = m 2^e, 0.5 ≤ m < 1 (``_NO_SPREAD`` for zeros and NaN)."""
    size = np.abs(np.asarray(size, dtype=np.float64))
    e = np.frexp(np.where(np.isfinite(size), size, 0.0))[1].astype(np.int64)
    return np.where(size > 0, e, _NO_SPREAD)


class MomentTransform:
    """Running count, mean and sum of squared deviations per column, NaN ignored (Chan).

    The sum of squares is kept as ``m2_scaled`` · 4^``exponent`` (an integer exponent per
    column, the binary exponent of the largest deviation seen), so deviations of 1e-160
    (squares below the smallest normal float) or 1e+160 (squares above the largest) lose
    nothing; ``m2`` is its value on the data's scale.
    """

    def __init__(self) -> None:
        self.n: np.ndarray | None = None
        self.mean: np.ndarray | None = None
        self.m2_scaled: np.ndarray | None = None
        self.exponent: np.ndarray | None = None

    @property
    def m2(self) -> np.ndarray | None:
        """Σ (x − mean)² per column (may under- or overflow where the spread is extreme)."""
        if self.m2_scaled is None or self.exponent is None:
            return None
        with np.errstate(over="ignore", under="ignore"):
            return np.ldexp(self.m2_scaled, 2 * self.exponent)

    @m2.setter
    def m2(self, value: np.ndarray | None) -> None:
        self.m2_scaled = None if value is None else np.asarray(value, dtype=np.float64)
        self.exponent = None if value is None else np.zeros(np.shape(value), dtype=np.int64)

    def _sd(self, denominator: Any) -> np.ndarray:
        """sqrt(m2 / denominator), computed on the scaled sum (no under- or overflow)."""
        assert self.m2_scaled is not None and self.exponent is not None
        with np.errstate(invalid="ignore", divide="ignore", over="ignore", under="ignore"):
            return np.ldexp(np.sqrt(self.m2_scaled / denominator), self.exponent)

    def memorize_chunk(self, x: Any, *args: Any, **kwargs: Any) -> None:
        arr = _as_2d(x)
        ok = ~np.isnan(arr)
        n_b = ok.sum(axis=0).astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean_b = np.where(n_b > 0, np.where(ok, arr, 0.0).sum(axis=0) / n_b, 0.0)
            # one refinement step (as R's mean()): a constant column gets its value exactly
            mean_b = mean_b + np.where(n_b > 0, np.where(ok, arr - mean_b, 0.0).sum(axis=0) / n_b, 0.0)
        dev = np.where(ok, arr - mean_b, 0.0)
        e_b = _exponent(np.max(np.abs(dev), axis=0, initial=0.0))
        m2s_b = (np.ldexp(dev, -e_b) ** 2).sum(axis=0)
        if self.n is None:
            self.n, self.mean, self.m2_scaled, self.exponent = n_b, mean_b, m2s_b, e_b
            return
        assert self.mean is not None and self.m2_scaled is not None and self.exponent is not None
        n = self.n + n_b
        with np.errstate(invalid="ignore", divide="ignore", under="ignore"):
            delta = mean_b - self.mean
            # weight n_b / n is exactly 1 after an empty chunk, so a constant column stays exact
            self.mean = np.where(n > 0, self.mean + delta * (n_b / n), 0.0)
            e = np.maximum(np.maximum(self.exponent, e_b), _exponent(np.where(n > 0, delta, 0.0)))
            between = np.where(n > 0, np.ldexp(delta, -e) ** 2 * self.n * n_b / n, 0.0)
            self.m2_scaled = (np.ldexp(self.m2_scaled, 2 * (self.exponent - e))
                              + np.ldexp(m2s_b, 2 * (e_b - e)) + between)
            self.exponent = e
        self.n = n

    def memorize_finish(self) -> None:
        pass

    def _reshape(self, x: Any, out: np.ndarray) -> Any:
        shape = np.shape(x)
        res = out.reshape(shape) if len(shape) <= 1 else out
        if isinstance(x, pd.Series):
            return pd.Series(res, index=x.index, name=x.name)
        if isinstance(x, pd.DataFrame):
            return pd.DataFrame(res, index=x.index, columns=x.columns)
        return res

    def _mean(self) -> np.ndarray:
        if self.n is None or self.mean is None:  # pragma: no cover - patsy memorises first
            raise RuntimeError("transform used before its statistics were memorised")
        return np.where(self.n > 0, self.mean, np.nan)


class _Center(MomentTransform):
    """center(x): subtract the mean of the observed training values."""

    def transform(self, x: Any) -> Any:
        return self._reshape(x, _as_2d(x) - self._mean())


class _Standardize(MomentTransform):
    """standardize(x, center=True, rescale=True, ddof=0)."""

    def transform(self, x: Any, center: bool = True, rescale: bool = True, ddof: int = 0) -> Any:
        out = _as_2d(x).copy()
        if center:
            out -= self._mean()
        if rescale:
            assert self.n is not None
            with np.errstate(invalid="ignore", divide="ignore"):
                out /= self._sd(self.n - ddof)
        return self._reshape(x, out)


class _Scale(MomentTransform):
    """scale(x, center=True, scale=True), as R's ``scale()``."""

    def transform(self, x: Any, center: Any = True, scale: Any = True) -> Any:
        assert self.n is not None
        out = _as_2d(x).copy()
        mean = self._mean()
        if center is True:
            shift = mean
        elif center is False:
            shift = np.zeros_like(mean)
        else:
            shift = np.broadcast_to(np.asarray(center, dtype=np.float64), mean.shape)
        out -= shift
        if scale is True:
            # root mean square of the centred observed values, on n - 1 (R: sqrt(sum(v^2) /
            # max(1, length(v) - 1))); sum((x - c)^2) = m2 + n (mean - c)^2, on m2's scale
            assert self.m2_scaled is not None and self.exponent is not None
            with np.errstate(invalid="ignore", divide="ignore", under="ignore", over="ignore"):
                off = np.where(self.n > 0, np.ldexp(mean - shift, -self.exponent), 0.0)
                ss = self.m2_scaled + np.where(self.n > 0, self.n * off**2, 0.0)
                out /= np.ldexp(np.sqrt(ss / np.maximum(1.0, self.n - 1.0)), self.exponent)
        elif scale is not False:
            out /= np.broadcast_to(np.asarray(scale, dtype=np.float64), mean.shape)
        return self._reshape(x, out)


center = patsy.stateful_transform(_Center)
center.__doc__ = "center(x): subtract the training mean of ``x`` (missing values ignored)."
standardize = patsy.stateful_transform(_Standardize)
standardize.__doc__ = """standardize(x, center=True, rescale=True, ddof=0), missing values ignored.

patsy's semantics: ``rescale`` divides by the population standard deviation (``ddof=0``);
``ddof=1`` gives the sample standard deviation.
"""
scale = patsy.stateful_transform(_Scale)
scale.__doc__ = """scale(x, center=True, scale=True): R's ``scale()``, missing values ignored.

``center`` is True (subtract the training mean), False, or the values to subtract; ``scale``
is True (divide by the root mean square of the centred training values on n - 1: with
``center=True`` the sample standard deviation), False, or the values to divide by. This
differs from patsy's ``scale``, an alias of ``standardize`` (population standard deviation).
"""
