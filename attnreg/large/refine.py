"""The extended-precision refinement of a chunked OLS fit: one pass of the data per step.

In memory, OLS coefficients of designs with cond(Z) > ``REFINE_COND`` are refined in extended
precision (:mod:`attnreg.linear.refinement`). The chunked fit does the same with the
semi-normal equations: each step is one pass computing g = Aᵀ W (y − A c) in
``np.longdouble`` (A the uncentred design, :mod:`attnreg.large.gradient`), then solves
AᵀWA δ = g with the factorisation (R and the centring, no normal matrix formed), and stops
by the in-memory rule (a correction below float64's roundoff, or two in a row that fail to
halve, or ``REFINE_MAX_STEPS``).

Examples
--------
>>> import numpy as np, pandas as pd
>>> from attnreg.large.fit import fit_chunked
>>> df = pd.DataFrame({"x": np.arange(50.0) + 1e6})
>>> df["y"] = 1 + 2 * df.x + np.sin(np.arange(50.0))
>>> fit = fit_chunked("y ~ x", df, chunk_rows=20)
>>> again = refine(fit, fit.source)
>>> bool(np.allclose(again.coef, fit.coef, rtol=1e-9)), len(again.refinement) >= 1
(True, True)
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from attnreg._typing import FloatArray, IntArray
from attnreg.large.gradient import GradientPart, centred_gradient_part, gradient_part
from attnreg.large.passes import frames_of
from attnreg.large.source_base import ChunkSource

__all__ = ["refine", "refinement_columns", "refinement_step"]


def refinement_columns(res: Any) -> IntArray:
    """Design columns the OLS refinement corrects: the intercept, then the kept columns."""
    sp = res.spectrum
    return sp.kept if sp.intercept is None else np.r_[sp.intercept, sp.kept].astype(np.int64)


def refinement_step(res: Any, gradient: GradientPart) -> tuple[FloatArray, float]:
    """The correction δ of the coefficients from g = A_cᵀ W (y − A c), and its relative size.

    ``gradient`` is taken in the centred coordinates A_c = [1, X − x̄] = A T⁻¹ (T =
    [[1, x̄ᵀ], [0, I]]), so g = T⁻ᵀ Aᵀ W r, and with A_c = Q_b R_b (R_b = [[√Σw, 0],
    [0, D V S]]) the correction is δ = T⁻¹ R_b⁻¹ R_b⁻ᵀ g.
    """
    sp = res.spectrum
    q = np.asarray(gradient.q, dtype=np.float64)
    d, xb = sp.scale[sp.kept], sp.center[sp.kept]
    has_int = sp.intercept is not None
    q0, qr = (q[0], q[1:]) if has_int else (0.0, q)  # q in centred coordinates
    z = (sp.V.T @ (qr / d)) / sp.s
    dc_r = (sp.V @ (z / sp.s)) / d
    dc = np.r_[q0 / sp.sum_w - xb @ dc_r, dc_r] if has_int else dc_r
    c = res.filtered.coef[refinement_columns(res)]
    mag = np.abs(c)
    nz = mag > 0
    size = float(np.max(np.abs(dc[nz]) / mag[nz])) if nz.any() else 0.0
    return dc, size


def refine(res: Any, source: ChunkSource, *, max_steps: int | None = None,
           progress: bool = False) -> Any:
    """OLS coefficients refined in extended precision, one pass of the data per step.

    A source with ``map_reduce`` (dask partitions) computes each step's gradient on the
    workers.
    """
    from attnreg.linear.refinement import (PATIENCE as _PATIENCE, REFINE_MAX_STEPS,
                                           ROUNDING as _ROUNDING, SHRINK as _SHRINK)

    steps = REFINE_MAX_STEPS if max_steps is None else max_steps
    cols = refinement_columns(res)
    best, best_size, misses, sizes = res, np.inf, 0, []
    current = res
    for _ in range(steps):
        c = current.filtered.coef[cols]
        if hasattr(source, "map_reduce"):  # on the workers, merged in a tree
            g = source.map_reduce(centred_gradient_part, (res.spec, cols, c, res.spectrum.center),
                                  columns=res.spec.read_columns(), uses=res.spec.uses,
                                  label="attnreg refinement pass")
        else:
            g = GradientPart(np.zeros(cols.size, dtype=np.longdouble))
            for frame in frames_of(source, res.spec, res.spec.read_columns(),
                                   "attnreg refinement pass: rows", progress):
                g = g.merge(gradient_part(res.spec, cols, c, frame, res.spectrum.center))
        dc, size = refinement_step(current, g)
        sizes.append(size)
        misses = 0 if size <= _SHRINK * best_size else misses + 1
        if size < best_size:
            best, best_size = current, size
        coef = current.filtered.coef.copy()
        coef[cols] = c + dc
        nxt = dataclasses.replace(current, filtered=dataclasses.replace(current.filtered, coef=coef))
        if size <= _ROUNDING:
            return dataclasses.replace(nxt, refinement=tuple(sizes))
        if misses == _PATIENCE:
            return dataclasses.replace(best, refinement=tuple(sizes))
        current = nxt
    out = current if misses == 0 else best
    return dataclasses.replace(out, refinement=tuple(sizes))
