"""The six Monte Carlo data-generating processes of the paper (Sec. 4, App. B).

X ~ U(0, 1)^5 i.i.d. (no intercept column), y = f(X) + ε with ε ~ N(0, Var(f) / SNR),
where Var(f) is the sample variance (ddof = 0) of the signal over the whole simulated draw,
training and test rows together. The test set has ``n_test`` fresh rows (1000 in the paper)
drawn in the same call, after the training rows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from attnreg._typing import FloatArray
from attnreg.exceptions import DataError, OptionError

__all__ = ["DGPS", "P", "Simulation", "signal", "simulate"]

#: number of predictors of every design
P = 5


def _linear(x: FloatArray) -> FloatArray:
    return (x - 0.5) @ np.array([2.0, -1.0, 3.0, 1.5, 0.5])


def _friedman1(x: FloatArray) -> FloatArray:
    return (
        10.0 * np.sin(np.pi * x[:, 0] * x[:, 1])
        + 20.0 * (x[:, 2] - 0.5) ** 2
        + 10.0 * x[:, 3]
        + 5.0 * x[:, 4]
    )


def _friedman2(x: FloatArray) -> FloatArray:
    """The paper's variant (not the classic Friedman #2)."""
    return np.sin(np.pi * (x[:, 0] + x[:, 1] + x[:, 2])) + np.log(1.0 + x[:, 3] ** 2)


def _friedman3(x: FloatArray) -> FloatArray:
    """The paper's variant (not the classic Friedman #3)."""
    return x[:, 0] * x[:, 1] + np.log(x[:, 2] + x[:, 3] + 2.0)


def _rotated_sine(x: FloatArray) -> FloatArray:
    return np.sin(3.0 * (x[:, 0] + x[:, 1] + x[:, 2] + x[:, 3]))


def _soft_radial(x: FloatArray) -> FloatArray:
    return 1.0 / (1.0 + 5.0 * np.sum((x - 0.5) ** 2, axis=1))


#: name → signal function f, (n, 5) → (n,), in the paper's order
DGPS: dict[str, Callable[[FloatArray], FloatArray]] = {
    "linear": _linear,
    "friedman1": _friedman1,
    "friedman2": _friedman2,
    "friedman3": _friedman3,
    "rotated_sine": _rotated_sine,
    "soft_radial": _soft_radial,
}


@dataclass(frozen=True)
class Simulation:
    """One simulated draw.

    Attributes
    ----------
    X_train : (n_train, 5); y_train, f_train : (n_train,) outcome and noiseless signal.
    X_test : (n_test, 5); y_test, f_test : (n_test,).
    dgp, snr, seed : how it was drawn.
    noise_sd : standard deviation of ε, sqrt(Var(f) / snr).

    Examples
    --------
    >>> sim = simulate("friedman1", 100, snr=2.0, n_test=50, seed=0)
    >>> sim.X_train.shape, sim.y_test.shape, sim.dgp
    ((100, 5), (50,), 'friedman1')
    """

    X_train: FloatArray
    y_train: FloatArray
    f_train: FloatArray
    X_test: FloatArray
    y_test: FloatArray
    f_test: FloatArray
    dgp: str
    snr: float
    seed: int
    noise_sd: float


def signal(dgp: str, x: FloatArray) -> FloatArray:
    """Noiseless signal f(x) of a named DGP; ``x`` is (n, 5).

    Examples
    --------
    >>> signal("linear", np.full((1, 5), 0.5))  # (x - 0.5)·β vanishes at the centre
    array([0.])
    >>> round(float(signal("friedman3", np.zeros((1, 5)))[0]), 4)  # 0·0 + log(2)
    0.6931
    """
    if dgp not in DGPS:
        raise OptionError(f"dgp must be one of {', '.join(map(repr, DGPS))}; got {dgp!r}")
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] != P:
        raise DataError(f"x must have shape (n, {P}); got {x.shape}")
    return DGPS[dgp](x)


def simulate(dgp: str, n_train: int, snr: float, *, n_test: int = 1000, seed: int = 0) -> Simulation:
    """Draw a training and a test sample from a DGP.

    Parameters
    ----------
    dgp : one of :data:`DGPS`.
    n_train, n_test : rows of each part (both ≥ 1).
    snr : Var(f) / Var(ε) (> 0).
    seed : seeds ``numpy.random.default_rng``; the same seed gives the same draw.

    Returns
    -------
    Simulation

    Examples
    --------
    >>> a = simulate("soft_radial", 200, snr=1.0, seed=3)
    >>> b = simulate("soft_radial", 200, snr=1.0, seed=3)
    >>> bool(np.array_equal(a.y_train, b.y_train)), a.X_test.shape
    (True, (1000, 5))
    """
    if dgp not in DGPS:
        raise OptionError(f"dgp must be one of {', '.join(map(repr, DGPS))}; got {dgp!r}")
    if not (isinstance(snr, (int, float)) and not isinstance(snr, bool) and snr > 0):
        raise OptionError(f"snr must be a positive number; got {snr!r}")
    for name, val in (("n_train", n_train), ("n_test", n_test)):
        if isinstance(val, bool) or not isinstance(val, (int, np.integer)) or val < 1:
            raise OptionError(f"{name} must be a positive integer; got {val!r}")
    rng = np.random.default_rng(seed)
    n = int(n_train) + int(n_test)
    x = rng.uniform(0.0, 1.0, size=(n, P))
    f = DGPS[dgp](x)
    var_f = float(np.var(f))
    noise_sd = float(np.sqrt((var_f if var_f > 0 else 1.0) / snr))
    y = f + rng.normal(0.0, noise_sd, size=n)
    k = int(n_train)
    return Simulation(x[:k], y[:k], f[:k], x[k:], y[k:], f[k:], dgp, float(snr), int(seed), noise_sd)
