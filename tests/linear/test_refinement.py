"""Extended-precision refinement of OLS: when it stops, and what its result depends on.

The result must depend on the data only: not on the factorisation the refinement starts from
(which is what a different BLAS kernel changes), nor on the order of the rows, beyond the
error bound the method guarantees (:func:`tests.test_nist.coef_error_bound`, measured from
the exact solution of the float64 data).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import attnreg as ar
from attnreg.linear import refinement
from attnreg.linear.refinement import refine_ols, refine_ols_trace
from attnreg.linear.spectral import Spectrum, decompose
from attnreg.linear.filters import apply_filter, ols_filter
from tests.linear.test_nist import NAMES, ExactOLS, coef_error_bound, exact_ols, load


def _nist(nist_dir: Path, name: str) -> tuple[np.ndarray, np.ndarray, ExactOLS]:
    formula, frame, _ = load(nist_dir, name)
    design = ar.attnreg(formula, data=frame).design
    return design.X, design.y, exact_ols(design.X, design.y, bool(design.intercept))


def _start(X: np.ndarray, y: np.ndarray, eps: float, seed: int = 0
           ) -> tuple[Spectrum, np.ndarray]:
    """Spectrum and OLS coefficients of X with each entry off by a relative ``eps``.

    A stand-in for a factorisation far poorer than any BLAS kernel gives: refining with it
    against the true X contracts the error only by about 1e-4 to 1e-2 per correction.
    """
    rng = np.random.default_rng(seed)
    Xb = X * (1 + eps * rng.standard_normal(X.shape))
    Xb[:, 0] = 1.0  # the intercept column stays exact
    sp = decompose(Xb, y, intercept=0, weights=None, scaling="norm")
    return sp, apply_filter(sp, ols_filter(sp.s), X.shape[1]).coef


@pytest.mark.parametrize("name", ["Longley", "Wampler3", "Wampler4", "Wampler5"])
def test_result_does_not_depend_on_the_factorisation(nist_dir: Path, name: str) -> None:
    # From a factorisation of the design perturbed by 1e-7, two refinement steps leave
    # errors 3 to 5e4 times the bound (the stopping point depends on the start); refining
    # until the corrections stop shrinking reaches the bound with a factor 50 or more to spare
    X, y, exact = _nist(nist_dir, name)
    sp, start = _start(X, y, 1e-7)
    assert np.any(np.abs(start - exact.coef) > 1e6 * coef_error_bound(X, y, exact))
    refined = refine_ols(sp, X, y, start)
    assert np.all(np.abs(refined - exact.coef) <= coef_error_bound(X, y, exact))


def _stop_by_rule(sizes: tuple[float, ...], max_steps: int) -> tuple[int, str] | None:
    """Where the documented rule stops on these correction sizes, and why."""
    smallest, misses = np.inf, 0
    for i, size in enumerate(sizes):
        misses = 0 if size <= 0.5 * smallest else misses + 1
        smallest = min(smallest, size)
        if size <= 2.0 ** -53:
            return i, "converged"
        if misses == 2:
            return i, "stalled"
        if i + 1 == max_steps:
            return i, "max_steps"
    return None


@pytest.mark.parametrize("name", NAMES)
def test_stops_when_the_corrections_stop_shrinking(nist_dir: Path, name: str) -> None:
    formula, frame, _ = load(nist_dir, name)
    fit = ar.attnreg(formula, data=frame)
    sp, design = fit.spectrum, fit.design
    start = apply_filter(sp, ols_filter(sp.s), design.n_coef).coef
    out = refine_ols_trace(sp, design.X, design.y, start)
    assert _stop_by_rule(out.corrections, refinement.REFINE_MAX_STEPS) == (
        len(out.corrections) - 1, out.stop)
    np.testing.assert_array_equal(out.coef, fit.coef.to_numpy())  # what attnreg() returns


@pytest.mark.skipif(np.finfo(np.longdouble).nmant < 63,
                    reason="the residuals are exact only in an extended np.longdouble")
def test_converges_to_an_exact_solution() -> None:
    # small integers and short coefficients: near the solution every product and sum of the
    # residuals fits in the 64-bit mantissa, so the residuals are exact, the corrections
    # vanish once the coefficients are the exact solution, and the rule says "converged"
    x = np.arange(-6.0, 7.0)
    X = np.column_stack([np.ones_like(x), x, x**2, x**3])
    coef = np.array([3.0, -2.0, 0.5, 0.25])
    sp = decompose(X, X @ coef, intercept=0, weights=None, scaling="norm")
    out = refine_ols_trace(sp, X, X @ coef, apply_filter(sp, ols_filter(sp.s), 4).coef)
    assert out.stop == "converged"
    np.testing.assert_array_equal(out.coef, coef)


def test_max_steps_is_respected(nist_dir: Path) -> None:
    X, y, _ = _nist(nist_dir, "Longley")
    sp, start = _start(X, y, 1e-7)  # slow enough that no stop comes before the third step
    for k in (1, 2, 3):
        out = refine_ols_trace(sp, X, y, start, max_steps=k)
        assert (len(out.corrections), out.stop) == (k, "max_steps")
        np.testing.assert_array_equal(refine_ols(sp, X, y, start, max_steps=k), out.coef)
    unchanged = refine_ols(sp, X, y, start, max_steps=0)
    assert unchanged is not start
    np.testing.assert_array_equal(unchanged, start)


@pytest.mark.parametrize("name", ["Filip", "Longley", "Wampler4", "Wampler5"])
def test_row_order(nist_dir: Path, name: str) -> None:
    # the exact solution does not depend on the order of the rows; the fit may, but only
    # within the method's bound (the QR and the residual sums are formed in another order)
    formula, frame, _ = load(nist_dir, name)
    X, y, exact = _nist(nist_dir, name)
    bound = coef_error_bound(X, y, exact)
    rng = np.random.default_rng(12)
    for _ in range(3):
        shuffled = frame.iloc[rng.permutation(len(frame))]
        coef = ar.attnreg(formula, data=shuffled).coef.to_numpy()
        assert np.all(np.abs(coef - exact.coef) <= bound)


def test_row_blocks_and_weights(nist_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # weights that are powers of 4 keep sqrt(w) X and sqrt(w) y exact, so the weighted fit
    # is the exact OLS of the scaled data; refining over blocks of 5 rows (as a design too
    # large for one extended-precision copy is) must reach the same bound
    formula, frame, _ = load(nist_dir, "Longley")
    w = np.resize([0.25, 1.0, 4.0, 16.0], len(frame))
    design = ar.attnreg(formula, data=frame).design
    root = np.sqrt(w)
    exact = exact_ols(design.X * root[:, None], design.y * root, intercept=False)
    bound = coef_error_bound(design.X * root[:, None], design.y * root, exact)
    whole = ar.attnreg(formula, data=frame, weights=w).coef.to_numpy()
    monkeypatch.setattr(refinement, "_REFINE_WHOLE_BYTES", 0)
    monkeypatch.setattr(refinement, "BLOCK_BYTES", 16 * 5 * design.n_coef)
    blocks = ar.attnreg(formula, data=frame, weights=w).coef.to_numpy()
    for coef in (whole, blocks):
        assert np.all(np.abs(coef - exact.coef) <= bound)
