"""A point that the scoring steps predict at the optimum takes no normal equations: the QR
step from it is the last. A wrong prediction costs a pass, never a digit."""

from __future__ import annotations

import numpy as np
import pytest

import attnreg.glm.optimum as optimum
from attnreg.glm.families import FAMILIES
from attnreg.glm.irls import irls
from attnreg.glm.links import LINKS
from attnreg.glm.normal import RowPass
from tests.glm.test_glm_rowpass import RTOL_OPTIMUM, _data, _fam, _refined


def _modes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The passes of the fits that follow: "gram" (normal equations), "score" (the
    right-hand side alone) or "light" (neither)."""
    modes: list[str] = []
    real = RowPass.run

    def run(self, coef, eta, mu, gram, score=False):  # type: ignore[no-untyped-def]
        modes.append("gram" if gram else "score" if score else "light")
        return real(self, coef, eta, mu, gram, score)

    monkeypatch.setattr(RowPass, "run", run)
    return modes


def with_and_without(monkeypatch: pytest.MonkeyPatch, family: str, name: str, off: object
                     ) -> tuple:
    """A fit of 50,000 × 12 seeded rows as it runs, and with ``optimum.<name>`` set to
    ``off``: (fit, its passes, the other fit, its passes, X, y)."""
    X, y = _data(50_000, 12, family)
    fam, link = _fam(family)
    ones, zeros = np.ones(y.size), np.zeros(y.size)
    modes = _modes(monkeypatch)
    fit = irls(X, y, ones, zeros, fam, link)
    used = list(modes)
    modes.clear()
    monkeypatch.setattr(optimum, name, off)
    return fit, used, irls(X, y, ones, zeros, fam, link), modes, X, y


def test_the_last_point_of_rs_path_takes_no_normal_equations(monkeypatch) -> None:
    # never predicted: as before
    fit, light, full, modes, X, y = with_and_without(monkeypatch, "binomial", "LIGHT_PREDICTED",
                                                     0.0)
    # one pass with the normal equations fewer, and no pass at an increment's target
    assert light.count("gram") == modes.count("gram") - 1 and len(light) == len(modes) - 1
    same_optimum(fit, full, X, y, "binomial")


def same_optimum(fit, full, X, y, family: str) -> None:  # type: ignore[no-untyped-def]
    """``fit`` reached the optimum, as ``full`` did, with R's iterations; the R of the
    covariance and the weights are the optimum's to far below what is printed."""
    ref = _refined(X, y, fit.coef.copy(), family)
    np.testing.assert_allclose(fit.coef, ref, rtol=RTOL_OPTIMUM, atol=RTOL_OPTIMUM)
    np.testing.assert_allclose(fit.coef, full.coef, rtol=RTOL_OPTIMUM, atol=RTOL_OPTIMUM)
    G = full.r.T @ full.r
    np.testing.assert_allclose(fit.r.T @ fit.r, G, rtol=1e-11, atol=1e-13 * np.abs(G).max())
    np.testing.assert_allclose(fit.working_weights, full.working_weights, rtol=1e-11)
    assert fit.iter_r == full.iter_r and fit.converged
    assert fit.final_step < 1e-12


def _problem(case: str):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(11)
    n = 4000
    X = np.column_stack([np.ones(n), rng.uniform(0, 2, n), rng.normal(size=n)])
    wt = np.ones(n)
    if case == "gamma_inverse":
        y = rng.gamma(3.0, 1 / (0.8 + 0.3 * X[:, 1]) / 3)
        return X, y, wt, FAMILIES["Gamma"], LINKS["inverse"]
    if case == "probit_weights":
        wt = rng.integers(1, 4, n).astype(float)
        y = (rng.random(n) < 1 / (1 + np.exp(0.4 - X[:, 1]))).astype(float)
        return X, y, wt, FAMILIES["binomial"], LINKS["probit"]
    X, y = _data(n, 6, case, seed=3)
    return (X, y, np.ones(n), *_fam(case))


@pytest.mark.parametrize("case", ["binomial", "poisson", "gamma_inverse", "probit_weights"])
def test_a_wrong_prediction_costs_a_pass_not_accuracy(case, monkeypatch) -> None:
    X, y, wt, fam, link = _problem(case)
    zeros = np.zeros(y.size)
    monkeypatch.setattr(optimum, "LIGHT_PREDICTED", 0.0)
    ref = irls(X, y, wt, zeros, fam, link)
    modes = _modes(monkeypatch)
    monkeypatch.setattr(optimum, "LIGHT_PREDICTED", np.inf)  # every point predicted: the
    got = irls(X, y, wt, zeros, fam, link)  # points short of R's rule take their pass again
    assert "light" in modes and modes.count("gram") >= got.iter_r
    np.testing.assert_allclose(got.coef, ref.coef, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(got.deviance, ref.deviance, rtol=1e-13)
    G = ref.r.T @ ref.r
    np.testing.assert_allclose(got.r.T @ got.r, G, rtol=1e-10, atol=1e-12 * np.abs(G).max())
    assert (got.iter_r, got.converged) == (ref.iter_r, ref.converged)


def test_the_contraction_predicts_from_the_last_two_steps() -> None:
    assert optimum._contraction([]) == np.inf and optimum._contraction([1e-2]) == np.inf
    assert optimum._contraction([1e-2, 1e-4]) == pytest.approx(1.0)
    assert optimum._contraction([1e-2, 2e-2]) == np.inf  # not shrinking: no prediction
    assert optimum._contraction([3.0, 1e-4]) == np.inf  # not yet in Newton's region


def test_a_halved_point_at_rs_rule_takes_its_normal_equations(monkeypatch) -> None:
    # an identity-link binomial whose last step to R's rule is halved (a fitted probability
    # at the boundary): predicted at the optimum or not, the same fit and R's iterations
    rng = np.random.default_rng(38)
    n = 500
    x = rng.uniform(0, 1, n)
    rng.poisson(0.3 + 2 * x), rng.random(n), rng.poisson((0.3 + x) ** 2)  # (as it was found)
    X, y = np.column_stack([np.ones(n), x]), (rng.random(n) < 0.05 + 0.9 * x).astype(float)
    args = (X, y, np.ones(n), np.zeros(n), FAMILIES["binomial"], LINKS["identity"])
    monkeypatch.setattr(optimum, "LIGHT_PREDICTED", 0.0)
    ref = irls(*args)
    redone: list[bool] = []
    real = optimum._Walk.redo

    def redo(self, maxit):  # type: ignore[no-untyped-def]
        redone.append(self.boundary)
        return real(self, maxit)

    monkeypatch.setattr(optimum._Walk, "redo", redo)
    monkeypatch.setattr(optimum, "LIGHT_PREDICTED", np.inf)  # every point predicted light
    got = irls(*args)
    assert redone and redone[-1]  # the halved point at R's rule: its pass again
    assert ref.boundary and got.boundary and ref.n_halved == got.n_halved > 0
    np.testing.assert_allclose(got.coef, ref.coef, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(got.deviance, ref.deviance, rtol=1e-13)
    G = ref.r.T @ ref.r
    np.testing.assert_allclose(got.r.T @ got.r, G, rtol=1e-10, atol=1e-12 * np.abs(G).max())
    assert (got.iter, got.iter_r, got.converged) == (ref.iter, ref.iter_r, ref.converged)
