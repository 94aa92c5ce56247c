"""A point whose next step is predicted small enough takes the increment's right-hand side
alone: after R's rule, the step from it is a chord step by the last normal equations, which
lands within ``LIGHT_PREDICTED`` of the optimum (its error is the Newton step's times the
weights' change). A wrong prediction costs a pass, never a digit."""

from __future__ import annotations

import numpy as np
import pytest

import attnreg.glm.optimum as optimum
from attnreg.glm.irls import irls
from attnreg.glm.normal import RowPass
from tests.glm.test_glm_light_point import _modes, _problem, same_optimum, with_and_without
from tests.glm.test_glm_rowpass import _data, _fam


def test_a_poisson_fit_takes_one_gram_pass_fewer(monkeypatch) -> None:
    fit, chord, full, modes, X, y = with_and_without(monkeypatch, "poisson", "_chord",
                                                     lambda predicted, change: False)
    # the pass at R's last point forms g alone; every other pass is the same
    assert chord.count("score") == 1 and "score" not in modes
    assert chord.count("gram") == modes.count("gram") - 1 and len(chord) == len(modes)
    same_optimum(fit, full, X, y, "poisson")
    assert fit.iter == full.iter


def _always_predicted(confirmed: bool, modes: list[str]):  # type: ignore[no-untyped-def]
    """A stand-in for ``optimum._chord``: every point is predicted for a chord step; the
    confirmation at R's last point (a call with no pass since the prediction) gives
    ``confirmed``."""
    passes: list[int] = []

    def chord(predicted: float, change: float) -> bool:
        again = bool(passes) and passes[-1] == len(modes)
        passes.append(len(modes))
        return confirmed if again else True

    return chord


@pytest.mark.parametrize("confirmed", [False, True])
@pytest.mark.parametrize("case", ["binomial", "poisson", "gamma_inverse", "probit_weights"])
def test_a_wrong_chord_prediction_costs_a_pass_not_accuracy(case, confirmed, monkeypatch) -> None:
    X, y, wt, fam, link = _problem(case)
    zeros = np.zeros(y.size)
    monkeypatch.setattr(optimum, "LIGHT_PREDICTED", 0.0)  # no light points either way
    monkeypatch.setattr(optimum, "_chord", lambda predicted, change: False)
    ref = irls(X, y, wt, zeros, fam, link)
    modes = _modes(monkeypatch)
    # every point is predicted for a chord step: those short of R's rule take
    # their pass again with the normal equations, and so does the last one unless confirmed
    # (then its chord step, however far from the optimum, is followed by Newton's)
    monkeypatch.setattr(optimum, "_chord", _always_predicted(confirmed, modes))
    got = irls(X, y, wt, zeros, fam, link)
    assert modes.count("score") == got.iter_r and modes.count("gram") >= got.iter_r
    np.testing.assert_allclose(got.coef, ref.coef, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(got.deviance, ref.deviance, rtol=1e-13)
    G = ref.r.T @ ref.r
    np.testing.assert_allclose(got.r.T @ got.r, G, rtol=1e-10, atol=1e-12 * np.abs(G).max())
    assert (got.iter_r, got.converged) == (ref.iter_r, ref.converged)
    assert got.iter == ref.iter or confirmed  # a wrong chord step may take one step more


@pytest.mark.parametrize("family", ["binomial", "poisson"])
def test_a_score_pass_gives_g_and_the_weights_change(family) -> None:
    X, y = _data(30_000, 5, family, seed=4)
    fam, link = _fam(family)
    n = y.size
    rows = RowPass(X, y, np.ones(n), np.zeros(n), fam, link)
    a = np.full(5, 0.05)
    b = a + np.array([0.01, -0.02, 0.0, 0.03, 0.005])
    eta, mu = np.empty(n), np.empty(n)
    first = rows.run(a, eta, mu, gram=True)
    assert first.weight_change == np.inf  # no normal equations before
    w_a = link.mu_eta(eta) ** 2 / fam.variance(mu)
    got = rows.run(b, eta, mu, gram=False, score=True)
    w_b = link.mu_eta(eta) ** 2 / fam.variance(mu)
    full = RowPass(X, y, np.ones(n), np.zeros(n), fam, link).run(b, np.empty(n), np.empty(n),
                                                                 gram=True)
    assert got.G is None and rows.last.G is first.G  # the last normal equations are a's
    np.testing.assert_allclose(got.g, full.g, rtol=1e-12, atol=1e-12 * np.abs(full.g).max())
    assert got.weight_change == pytest.approx(float(np.max(np.abs(w_b / w_a - 1))), rel=1e-9)
    assert 1e-3 < got.weight_change < 1.0
    # a pass without either measures nothing
    none = rows.run(b, eta, mu, gram=False)
    assert none.g is None and none.weight_change == np.inf
