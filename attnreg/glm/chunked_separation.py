"""Separation in a binomial or Poisson GLM fitted beyond memory, with a guarantee.

The fit certifies itself as the in-memory fit does (:func:`attnreg.glm.registration._certified`):
with a full-rank design the log-likelihood is strictly concave while the means are inside the
family's range, and it has a finite maximum exactly when the data are not separated; a fit
that reached a stationary point (last step at rounding level) with no fitted mean within
:data:`~attnreg.glm.chunked.NEAR` of the boundary has found it. Nothing more runs then.

Otherwise the linear program of :func:`attnreg.glm.separation.find_separation` runs on the
rows that matter, not on every row: the *working set* starts as the rows whose fitted mean is
near the boundary (those a separation drives there), the LP's direction ``b`` is checked on
every row in one pass (``x b >= 0`` where y = 1, ``<= 0`` where y = 0, ``= 0`` otherwise),
and the rows that break it join the working set for the next LP (a cutting-plane method).
A direction that every row satisfies proves the rows with ``x b != 0`` separated. With
``separation="drop"`` they are left out of every later pass and the fit is redone, until it
certifies itself; what cannot be settled within the limits below is refused with the rows
and regressors suspected.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pandas as pd

from attnreg._typing import FloatArray, IntArray
from attnreg._warn import warn_user
from attnreg.exceptions import DataError, SeparationWarning
from attnreg.glm.chunked import ChunkData, FinalStats, IrlsPath, near_boundary
from attnreg.glm.separation import Separation, find_separation

__all__ = ["MAX_WORKING_ROWS", "certified", "find_chunked_separation", "handle_chunked", "merged"]

#: the largest last step (relative) of a fit that certifies itself (as in memory)
STEP_CERTIFIED = 1e-8
#: fitted means this close to the boundary start the LP's working set
CANDIDATE = 1e-4
#: the most rows the LP's working set may hold (it is in memory)
MAX_WORKING_ROWS = 200_000
#: cutting-plane rounds before the search gives up and refuses
MAX_CUTS = 8
#: a row is off a direction's hyperplane when ``|x b|`` exceeds this share of its largest
_REL_TOL = 1e-7


def certified(path: IrlsPath, final: FinalStats) -> bool:
    """Whether the chunked fit proves there is no separation (module docstring)."""
    return bool(path.converged and path.final_step <= STEP_CERTIFIED and final.n_near == 0)


@dataclass
class _Working:
    """The LP's working set: design rows, responses and labels."""

    X: FloatArray
    y: FloatArray
    labels: pd.Index

    def add(self, X: FloatArray, y: FloatArray, labels: pd.Index) -> None:
        self.X, self.y = np.vstack([self.X, X]), np.concatenate([self.y, y])
        self.labels = self.labels.append(labels)
        if self.y.size > MAX_WORKING_ROWS:
            raise DataError(f"separation could not be settled: the linear program would need "
                            f"more than {MAX_WORKING_ROWS:,} rows in memory; fit in memory, "
                            "or pass separation='none' to fit without the check")


def _violations(t: FloatArray, y: FloatArray, family: str, tol: float) -> FloatArray:
    """Rows where ``t = x b`` breaks the sign a separating direction needs."""
    if family == "binomial":
        return np.where(y >= 1, t < -tol, np.where(y <= 0, t > tol, np.abs(t) > tol))
    return np.where(y <= 0, t > tol, np.abs(t) > tol)


def _start(data: ChunkData, kept: IntArray, coef: FloatArray) -> _Working:
    k = data.spec.n_coef
    work = _Working(np.zeros((0, k)), np.zeros(0), pd.Index([]))
    for X, y, _wt, off, _, labels in data.labelled("attnreg GLM separation pass: rows"):
        near = near_boundary(data.link.linkinv(X[:, kept] @ coef + off), data.family.name,
                             CANDIDATE)
        if near.any():
            work.add(X[near], y[near], labels[near])
    return work


def _check(data: ChunkData, b: FloatArray, tol: float, work: _Working
           ) -> tuple[int, pd.Index, int]:
    """One pass: add the rows that break ``b`` to the working set. Returns their number,
    the labels of the rows off the hyperplane (separated when none breaks ``b``) and the
    number of rows."""
    n_bad, n_rows, off_plane = 0, 0, []
    for X, y, _wt, _off, _, labels in data.labelled("attnreg GLM separation check: rows"):
        t = X @ b
        bad = _violations(t, y, data.family.name, tol)
        n_rows += y.size
        off_plane.append(labels[np.abs(t) > tol])
        if bad.any():
            n_bad += int(bad.sum())
            work.add(X[bad], y[bad], labels[bad])
    rows = off_plane[0].append(off_plane[1:]) if off_plane else pd.Index([])
    return n_bad, rows, n_rows


def find_chunked_separation(data: ChunkData, kept: IntArray, coef: FloatArray,
                            ) -> tuple[Separation, float]:
    """Separated rows (of the working set) and a separating direction checked on every row.

    Parameters
    ----------
    data : ChunkData
    kept : ndarray of int
        Columns of ``coef``.
    coef : ndarray, shape (len(kept),)
        The fit that did not certify itself.

    Returns
    -------
    separation : Separation
        Empty when the LP finds no direction (the rows near the boundary are not separated).
    tol : float
        Rows with ``|x b| > tol`` are the separated ones.
    """
    names, family = data.spec.column_names, data.family.name
    work = _start(data, kept, coef)
    for _ in range(MAX_CUTS):
        sep = find_separation(work.X, work.y, family, names, work.labels)
        if not sep:
            return sep, 0.0
        t = work.X @ sep.direction
        tol = _REL_TOL * float(np.max(np.abs(t), initial=0.0))
        n_bad, rows, n_rows = _check(data, sep.direction, tol, work)
        if n_bad == 0:
            if len(rows) == n_rows:
                raise DataError(f"complete separation: every row ({n_rows}) is separated by "
                                f"{', '.join(sep.regressors) or 'the design'}; remove the "
                                "separating regressors from the formula, or pass "
                                "separation='warn' to fit anyway")
            return dataclasses.replace(sep, rows=rows), tol
    raise DataError(f"separation suspected but not settled in {MAX_CUTS} rounds of the linear "
                    f"program: {len(sep.rows)} row(s) (first {list(sep.rows[:5])}) by "
                    f"{', '.join(sep.regressors) or 'the design'}; fit in memory, or pass "
                    "separation='none'")


def handle_chunked(data: ChunkData, kept: IntArray, coef: FloatArray, mode: str,
                   found: list[Separation]) -> bool:
    """Act on a fit that did not certify itself, as ``separation=`` says.

    Returns whether to fit again (separated rows dropped: their direction added to
    ``data.separated``, what was found appended to ``found``). Warns when the linear program
    finds no separation (the fit is then kept: near the boundary, not separated).
    """
    family = data.family.name
    sep, tol = find_chunked_separation(data, kept, coef)
    if not sep:
        warn_user("the fit did not certify itself free of separation (fitted means near the "
                  "boundary), but the linear program finds no separated row", SeparationWarning)
        return False
    what = (f"{sep.describe()}: the maximum-likelihood estimates of a {family} GLM are "
            "infinite (fitted means exactly 0" + (" or 1)" if family == "binomial" else ")"))
    if mode == "error":
        raise DataError(f"{what}; drop those rows or regressors, or pass separation='drop' "
                        "to leave the rows out of the fit")
    if mode == "warn":
        warn_user(f"{what}; fitted anyway (separation='warn')", SeparationWarning)
        found.append(sep)
        return False
    warn_user(f"{what}; they were dropped before the fit (separation='drop'; see "
              "fit.separation)", SeparationWarning)
    data.separated.append((sep.direction, tol))
    found.append(sep)
    return True


def merged(found: list[Separation], dropped: bool) -> Separation | None:
    """What every round found, as one record (None when nothing was found)."""
    if not found:
        return None
    rows = found[0].rows
    regressors = list(found[0].regressors)
    for sep in found[1:]:
        rows = rows.append(sep.rows)
        regressors += [r for r in sep.regressors if r not in regressors]
    return Separation(rows=rows, regressors=regressors, direction=found[0].direction,
                      positions=np.zeros(0, dtype=np.int64), dropped=dropped)
