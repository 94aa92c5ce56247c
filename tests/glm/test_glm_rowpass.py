"""The IRLS path to the optimum: one pass over the rows per step, no n × p temporary, one
final QR step, the same numbers on any number of threads."""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest
from tests.conftest import RTOL_EXACT

import attnreg as ar
import attnreg.glm.scoring as scoring
from attnreg.glm.families import FAMILIES
from attnreg.glm.irls import irls
from attnreg.glm.links import LINKS
from attnreg.glm.normal import RowPass

#: what the IRLS optimum must reach against a reference refined with exactly rounded sums:
#: a few ulps times the (small) condition number of these designs
RTOL_OPTIMUM = 1e-13


def _data(n: int, p: int, family: str, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = np.column_stack([np.ones(n), rng.standard_normal((n, p - 1))])
    eta = X @ rng.uniform(-0.3, 0.3, p)
    y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float) if family == "binomial" \
        else rng.poisson(np.exp(eta)).astype(float)
    return X, y


def _fam(family: str):  # type: ignore[no-untyped-def]
    return FAMILIES[family], LINKS["logit" if family == "binomial" else "log"]


def _refined(X: np.ndarray, y: np.ndarray, b: np.ndarray, family: str) -> np.ndarray:
    """Two Newton steps with the score summed exactly (math.fsum): the optimum to below
    the rounding of any float64 IRLS."""
    for _ in range(2):
        eta = X @ b
        mu = 1 / (1 + np.exp(-eta)) if family == "binomial" else np.exp(eta)
        w = mu * (1 - mu) if family == "binomial" else mu
        score = np.array([math.fsum(X[:, j] * (y - mu)) for j in range(X.shape[1])])
        b = b + np.linalg.solve((X * w[:, None]).T @ X, score)
    return b


@pytest.mark.parametrize("family", ["binomial", "poisson"])
def test_a_row_pass_equals_the_whole_array_computation(family: str) -> None:
    X, y = _data(20_000, 6, family)
    fam, link = _fam(family)
    coef = np.linspace(-0.2, 0.2, 6)
    off = np.full(y.size, 0.05)
    wt = np.random.default_rng(1).uniform(0.5, 2.0, y.size)
    eta, mu = np.empty(y.size), np.empty(y.size)
    res = RowPass(X, y, wt, off, fam, link).run(coef, eta, mu, gram=True)
    eta0 = X @ coef + off
    mu0 = link.linkinv(eta0)
    d = link.mu_eta(eta0)
    w2 = wt * d ** 2 / fam.variance(mu0)
    np.testing.assert_allclose(eta, eta0, rtol=RTOL_EXACT)
    np.testing.assert_allclose(mu, mu0, rtol=RTOL_EXACT)
    assert res.deviance == pytest.approx(float(np.sum(fam.dev_resids(y, mu0, wt))), rel=RTOL_EXACT)
    assert res.valid
    np.testing.assert_allclose(res.G, (X * w2[:, None]).T @ X, rtol=RTOL_EXACT)
    np.testing.assert_allclose(res.g, X.T @ (w2 * (y - mu0) / d), rtol=RTOL_EXACT, atol=1e-9)


def test_a_pass_says_when_the_means_leave_the_range() -> None:
    X, y = _data(5_000, 3, "binomial")
    eta, mu = np.empty(y.size), np.empty(y.size)
    rows = RowPass(X, y, np.ones(y.size), np.zeros(y.size), FAMILIES["binomial"], LINKS["log"])
    assert rows.run(np.array([-1.0, 0.0, 0.0]), eta, mu, gram=True).valid
    assert not rows.run(np.array([0.5, 3.0, 0.0]), eta, mu, gram=True).valid  # some μ > 1


@pytest.mark.parametrize("family", ["binomial", "poisson"])
def test_the_fit_reaches_the_optimum_with_one_final_qr_step(family: str,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    X, y = _data(50_000, 12, family)
    fam, link = _fam(family)
    qr_steps = []
    real = scoring._wls
    monkeypatch.setattr(scoring, "_wls", lambda *a: qr_steps.append(1) or real(*a))
    fit = irls(X, y, np.ones(y.size), np.zeros(y.size), fam, link)
    assert len(qr_steps) == 1  # what is reported comes from one QR step at the optimum
    ref = _refined(X, y, fit.coef.copy(), family)
    np.testing.assert_allclose(fit.coef, ref, rtol=RTOL_OPTIMUM, atol=RTOL_OPTIMUM)
    assert fit.final_step < 1e-12  # the certificate the separation check reads
    exact = irls(X, y, np.ones(y.size), np.zeros(y.size), fam, link, exact_r=True)
    assert fit.iter_r == exact.iter_r  # R's count, on the cheaper path too


@pytest.mark.parametrize("family", ["binomial", "poisson"])
def test_no_temporary_the_size_of_the_design(family: str) -> None:
    X, y = _data(100_000, 60, family)  # X is 48 MB, an n-vector 0.8 MB
    fam, link = _fam(family)
    ones, zeros = np.ones(y.size), np.zeros(y.size)
    irls(X, y, ones, zeros, fam, link)  # warm the per-thread buffers
    tracemalloc.start()
    try:
        irls(X, y, ones, zeros, fam, link)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < X.nbytes / 2  # n-vectors only (about fifteen), never an n × p array


def test_the_same_numbers_on_any_number_of_threads() -> None:
    X, y = _data(100_000, 10, "poisson")
    fam, link = _fam("poisson")
    ar.set_threads(1)
    try:
        one = irls(X, y, np.ones(y.size), np.zeros(y.size), fam, link)
    finally:
        ar.set_threads(None)
    ar.set_threads(2)
    try:
        two = irls(X, y, np.ones(y.size), np.zeros(y.size), fam, link)
    finally:
        ar.set_threads(None)
    assert np.array_equal(one.coef, two.coef)
    assert one.deviance == two.deviance
