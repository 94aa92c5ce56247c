"""Wald quadratic forms ``g' (Σ h_i h_i')^{-1} g`` from per-row contributions, by QR (no inverse)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from scipy.linalg import qr, solve_triangular

from attnreg.exceptions import OptionError
from attnreg.iv._design import FloatArray, group_sums

ROBUST_KINDS = ("HC0", "HC1", "cluster")


def meat_scale(kind: str, n: int, k: int, n_groups: int, debiased: bool) -> float:
    """Small-sample factor of a sandwich: HC1 ``n/(n-k)``; cluster ``G/(G-1)·(n-1)/(n-k)``."""
    if kind == "HC1" or (kind == "HC0" and debiased):
        return n / (n - k)
    if kind == "cluster" and debiased:
        return n_groups / (n_groups - 1) * (n - 1) / (n - k)
    return 1.0


def robust_wald(g: FloatArray, H: FloatArray, kind: str, clusters: npt.ArrayLike | None,
                k: int, debiased: bool = False) -> float:
    """``g' S^{-1} g`` with ``S = c Σ h_i h_i'`` (or cluster sums), ``h_i`` the rows of H (n, m).

    ``k`` is the number of parameters of the regression the contributions come from (for the
    small-sample factor ``c``, see :func:`meat_scale`).
    """
    if kind not in ROBUST_KINDS:
        raise OptionError(f"kind must be one of {', '.join(ROBUST_KINDS)}; got {kind!r}")
    n = H.shape[0]
    if kind == "cluster":
        if clusters is None:
            raise OptionError("kind='cluster' needs clusters= (one label per row)")
        H = group_sums(H, clusters)
    c = meat_scale(kind, n, k, H.shape[0], debiased)
    R = qr(H, mode="r")[0][: H.shape[1]]
    return float(np.sum(solve_triangular(R, g, trans="T") ** 2)) / c
