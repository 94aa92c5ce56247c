"""Standardised training data of softmax attention regression: columns to mean 0 and sd 1,
exactly also for columns near the float64 limits."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnreg._typing import FloatArray
from attnreg.scaling import binary_exponents, column_norms, is_safe

__all__ = ["StandardData", "standard_columns", "standardise"]


@dataclass(frozen=True)
class StandardData:
    """Standardised training data and its scales."""

    z: FloatArray  # (N, P)
    ys: FloatArray  # (N,)
    x_mean: FloatArray
    x_scale: FloatArray
    y_mean: float
    y_scale: float


def standardise(x: FloatArray, y: FloatArray) -> StandardData:
    """The columns of x and y standardised (:func:`standard_columns`), with their scales."""
    z, x_mean, x_scale = standard_columns(x)
    ys, y_mean, y_scale = standard_columns(y[:, None])
    return StandardData(z, ys[:, 0], x_mean, x_scale, float(y_mean[0]), float(y_scale[0]))


def standard_columns(x: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(x − mean) / sd by column, with the mean and the (population) sd; sd 0 becomes 1.

    A column whose squares would overflow or underflow (values near 1e±154 and beyond: a
    column multiplied by 1e300 gave sd = inf and a constant z, one multiplied by 1e-300
    sd = 0) is standardised after division by a power of two near its largest value
    (exact), so its z equals that of the unscaled column to rounding.
    """
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        mean, sd = x.mean(axis=0), x.std(axis=0)
    bad = (~is_safe(sd) | ~np.isfinite(mean)) & (np.abs(x).max(axis=0, initial=0.0) > 0)
    z = (x - np.where(bad, 0.0, mean)) / np.where((sd > 0) & ~bad, sd, 1.0)
    if bad.any():
        e = binary_exponents(np.abs(x[:, bad]).max(axis=0))
        xs = np.ldexp(x[:, bad], -e)  # |xs| < 1: nothing below can overflow
        m = xs.mean(axis=0)
        c = xs - m
        s = column_norms(c) / np.sqrt(x.shape[0])
        s = np.where(s > 0, s, 1.0)
        z[:, bad] = c / s
        mean[bad], sd[bad] = np.ldexp(m, e), np.ldexp(s, e)
    return z, mean, np.where(sd > 0, sd, 1.0)
