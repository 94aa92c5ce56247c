"""The draws of a bootstrap: wild multipliers, Rademacher enumeration and resampled rows.

Every draw is made from uniforms (normals) in row order, so drawing a block of replications
at a time from one generator gives the same matrix as drawing them all at once.
"""

from __future__ import annotations

import math

import numpy as np

from attnreg._typing import FloatArray, IntArray
from attnreg.exceptions import OptionError

__all__ = ["WILD_WEIGHTS", "draw_rows", "draw_weights", "enumerate_signs"]

#: the ``weights`` choices of the wild bootstrap
WILD_WEIGHTS = ("rademacher", "webb", "mammen", "normal")

_WEBB = np.array([-math.sqrt(1.5), -1.0, -math.sqrt(0.5), math.sqrt(0.5), 1.0, math.sqrt(1.5)])
_SQ5 = math.sqrt(5.0)
_MAMMEN_LOW, _MAMMEN_HIGH = -(_SQ5 - 1.0) / 2.0, (_SQ5 + 1.0) / 2.0
_MAMMEN_P = (_SQ5 + 1.0) / (2.0 * _SQ5)  # probability of the low value


def draw_weights(rng: np.random.Generator, weights: str, reps: int, n_groups: int) -> FloatArray:
    """Wild bootstrap weights, one per cluster and replication, shape (reps, n_groups).

    Rademacher ±1 (probability 1/2 each), Webb's six points ±sqrt(1/2), ±1, ±sqrt(3/2)
    (1/6 each), Mammen's two points −(√5 − 1)/2 and (√5 + 1)/2 (probabilities
    (√5 + 1)/(2√5) and (√5 − 1)/(2√5)), or standard normal. Drawn from uniforms (normals)
    in row order, so drawing the rows in blocks from one generator gives the same matrix.

    Parameters
    ----------
    rng : numpy.random.Generator
    weights : {"rademacher", "webb", "mammen", "normal"}
    reps, n_groups : int

    Returns
    -------
    ndarray, shape (reps, n_groups)

    Examples
    --------
    >>> import numpy as np
    >>> from attnreg.inference.bootstrap_draws import draw_weights
    >>> v = draw_weights(np.random.default_rng(1), "rademacher", 3, 4)
    >>> v.shape, sorted(set(v.ravel().tolist()))
    ((3, 4), [-1.0, 1.0])
    >>> w = draw_weights(np.random.default_rng(1), "webb", 2000, 50)
    >>> print(f"{abs(w.mean()) < 0.01} {w.var():.2f}")  # mean 0, variance 1
    True 1.00
    """
    shape = (int(reps), int(n_groups))
    if weights == "normal":
        return rng.standard_normal(shape)
    u = rng.random(shape)
    if weights == "rademacher":
        return np.where(u < 0.5, 1.0, -1.0)
    if weights == "webb":
        return _WEBB[np.minimum((u * 6.0).astype(np.int64), 5)]
    if weights == "mammen":
        return np.where(u < _MAMMEN_P, _MAMMEN_LOW, _MAMMEN_HIGH)
    raise OptionError(f"weights must be one of {', '.join(map(repr, WILD_WEIGHTS))}, however: "
                      f"weights={weights!r}")


def enumerate_signs(n_groups: int, start: int = 0, stop: int | None = None) -> FloatArray:
    """Rows ``start:stop`` of all 2^G Rademacher sign vectors, shape (stop − start, G).

    In the order of ``itertools.product([-1, 1], repeat=G)`` (the first cluster changes
    slowest), as ``boottest`` and ``wildboottest`` enumerate them.

    Examples
    --------
    >>> from attnreg.inference.bootstrap_draws import enumerate_signs
    >>> enumerate_signs(2).tolist()
    [[-1.0, -1.0], [-1.0, 1.0], [1.0, -1.0], [1.0, 1.0]]
    """
    stop = 2 ** n_groups if stop is None else stop
    b = np.arange(start, stop, dtype=np.int64)
    bits = (b[:, None] >> np.arange(n_groups - 1, -1, -1, dtype=np.int64)[None, :]) & 1
    return np.asarray(2.0 * bits - 1.0, dtype=np.float64)


def draw_rows(rng: np.random.Generator, reps: int, m: int) -> IntArray:
    """Indices 0 … m − 1 drawn uniformly with replacement, shape (reps, m).

    From uniforms in row order (block-invariant as :func:`draw_weights`).

    Examples
    --------
    >>> import numpy as np
    >>> from attnreg.inference.bootstrap_draws import draw_rows
    >>> idx = draw_rows(np.random.default_rng(0), 2, 5)
    >>> idx.shape, bool(((idx >= 0) & (idx < 5)).all())
    ((2, 5), True)
    """
    u = rng.random((int(reps), int(m)))
    return np.minimum((u * m).astype(np.int64), m - 1)


