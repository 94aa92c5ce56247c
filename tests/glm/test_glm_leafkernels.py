"""The canonical pairs' leaf kernels give R's family and link functions' numbers (the generic
kernel's) to rounding, hand R's clamps to the generic kernel, and the fits they drive equal
the fits of the generic kernel."""

from __future__ import annotations

import numpy as np
import pytest

from attnreg.glm import leafkernels as lk
from attnreg.glm.families import FAMILIES
from attnreg.glm.irls import aliased_columns, clearly_full_rank, irls
from attnreg.glm.links import LINKS
from attnreg.glm.normal import RowPass
from tests.conftest import RTOL_EXACT

PAIRS = [("binomial", "logit"), ("poisson", "log")]


def _data(family: str, n: int, weights: bool, seed: int = 0, scale: float = 1.0):
    rng = np.random.default_rng(seed)
    eta = scale * rng.normal(size=n)
    y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float) if family == "binomial" \
        else rng.poisson(np.exp(eta)).astype(float)
    wt = rng.uniform(0.5, 2.0, n) if weights else np.ones(n)
    return eta, y, wt


def _both(family: str, link: str, eta, y, wt):
    fam, lnk = FAMILIES[family], LINKS[link]
    kernel = lk.kernel_for(fam, lnk, y, wt)
    mu_k, mu_g = np.empty_like(eta), np.empty_like(eta)
    got = kernel(lk.LeafData(eta.copy(), mu_k, y, wt))
    ref = lk.generic_leaf(fam, lnk, lk.LeafData(eta.copy(), mu_g, y, wt))
    return kernel, got, mu_k, ref, mu_g


@pytest.mark.parametrize(("family", "link"), PAIRS)
@pytest.mark.parametrize("weights", [False, True])
def test_canonical_kernels_equal_the_generic_one(family, link, weights) -> None:
    eta, y, wt = _data(family, 3000, weights)
    kernel, (dev, valid, ww), mu, (dev0, valid0, ww0), mu0 = _both(family, link, eta, y, wt)
    assert getattr(kernel, "func", None) is not lk.generic_leaf  # the canonical kernel ran
    np.testing.assert_allclose(mu, mu0, rtol=RTOL_EXACT)
    np.testing.assert_allclose(dev, dev0, rtol=RTOL_EXACT)
    assert valid and valid0
    assert ww is not None and ww0 is not None
    np.testing.assert_allclose(ww[0], ww0[0], rtol=RTOL_EXACT)  # √ working weights
    np.testing.assert_allclose(ww[1], ww0[1], rtol=RTOL_EXACT, atol=RTOL_EXACT)  # X'r's r


@pytest.mark.parametrize(("family", "link", "eta_out"), [("binomial", "logit", 31.0),
                                                        ("binomial", "logit", -40.0),
                                                        ("poisson", "log", -40.0)])
def test_clamped_leaves_go_to_the_generic_kernel(family, link, eta_out) -> None:
    """Beyond R's clamps (logit ±30, the log link's DBL_EPSILON floor) the leaf is the
    generic kernel's, bit for bit."""
    eta, y, wt = _data(family, 50, False)
    eta[7] = eta_out
    _, (dev, valid, ww), mu, (dev0, valid0, ww0), mu0 = _both(family, link, eta, y, wt)
    assert np.array_equal(mu, mu0) and dev == dev0 and valid == valid0
    assert ww is not None and ww0 is not None
    assert np.array_equal(ww[0], ww0[0]) and np.array_equal(ww[1], ww0[1])


def test_nan_and_proportions_take_the_generic_kernel() -> None:
    eta, y, wt = _data("binomial", 40, False)
    eta[3] = np.nan
    _, (dev, valid, _), _, (dev0, valid0, _), _ = _both("binomial", "logit", eta, y, wt)
    assert np.isnan(dev) and np.isnan(dev0) and valid == valid0
    y_prop = np.full(40, 0.25)  # not 0/1: R's y log y terms are both needed
    fam, lnk = FAMILIES["binomial"], LINKS["logit"]
    assert lk.kernel_for(fam, lnk, y_prop, wt).func is lk.generic_leaf  # type: ignore[attr-defined]


@pytest.mark.parametrize(("family", "link"), [*PAIRS, ("binomial", "probit"), ("Gamma", "log")])
@pytest.mark.parametrize("weights", [False, True])
def test_row_pass_normal_equations_equal_the_dense_formula(family, link, weights) -> None:
    rng = np.random.default_rng(3)
    n = 9000  # three leaves and a part
    X = np.column_stack([np.ones(n), rng.normal(size=(n, 3))])
    _eta0, y, wt = _data("binomial" if family == "binomial" else "poisson", n, weights)
    if family == "Gamma":
        y = rng.gamma(2.0, 1.0, n)
    offset = rng.normal(scale=0.1, size=n)
    coef = np.array([0.1, 0.2, -0.1, 0.05])
    fam, lnk = FAMILIES[family], LINKS[link]
    eta, mu = np.empty(n), np.empty(n)
    res = RowPass(X, y, wt, offset, fam, lnk).run(coef, eta, mu, gram=True)
    e = X @ coef + offset
    m = lnk.linkinv(e)
    d, var = lnk.mu_eta(e), fam.variance(m)
    W = wt * d ** 2 / var
    np.testing.assert_allclose(eta, e, rtol=RTOL_EXACT)
    np.testing.assert_allclose(mu, m, rtol=RTOL_EXACT)
    np.testing.assert_allclose(res.deviance, fam.dev_resids(y, m, wt).sum(), rtol=RTOL_EXACT)
    np.testing.assert_allclose(res.G, X.T @ (X * W[:, None]), rtol=RTOL_EXACT)
    np.testing.assert_allclose(res.g, X.T @ (W * (y - m) / d), rtol=RTOL_EXACT,
                               atol=RTOL_EXACT * n)


def test_full_rank_designs_skip_the_qr_and_near_aliased_ones_do_not(monkeypatch) -> None:
    rng = np.random.default_rng(5)
    X = np.column_stack([np.ones(500), rng.normal(size=(500, 3))])
    assert clearly_full_rank(X, 1e-11)
    calls: list[int] = []
    import attnreg.glm.irls as irls_module

    real = irls_module.streaming_r
    monkeypatch.setattr(irls_module, "streaming_r", lambda *a: calls.append(1) or real(*a))
    assert aliased_columns(X, 1e-11).size == 0 and not calls  # decided by the Cholesky factor
    near = np.column_stack([X, X[:, 1] + 1e-6 * rng.normal(size=500)])  # 1e-6 of its norm
    assert not clearly_full_rank(near, 1e-11)
    assert aliased_columns(near, 1e-11).size == 0 and calls  # the QR decided: not aliased
    exact = np.column_stack([X, X[:, 1] + X[:, 2]])
    assert aliased_columns(exact, 1e-11).tolist() == [4]


@pytest.mark.parametrize(("family", "link"), PAIRS)
def test_fits_with_the_kernels_equal_fits_without_them(family, link, monkeypatch) -> None:
    rng = np.random.default_rng(11)
    n = 20_000
    X = np.column_stack([np.ones(n), rng.normal(size=(n, 4))])
    eta = X @ np.array([0.2, 0.5, -0.3, 0.1, 0.0])
    y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float) if family == "binomial" \
        else rng.poisson(np.exp(eta)).astype(float)
    args = (X, y, np.ones(n), np.zeros(n), FAMILIES[family], LINKS[link])
    fast = irls(*args)
    monkeypatch.setattr(lk, "KERNELS", {})
    slow = irls(*args)
    np.testing.assert_allclose(fast.coef, slow.coef, rtol=RTOL_EXACT)
    assert fast.iter_r == slow.iter_r
    np.testing.assert_allclose(fast.deviance, slow.deviance, rtol=RTOL_EXACT)


@pytest.mark.parametrize("eta", [np.linspace(-29.0, 29.0, 101), np.array([-30.0, 30.0, -31.0, 45.0]),
                                 np.array([0.5, np.nan]), np.array(-35.0), np.zeros(0)])
def test_logit_link_skips_the_clamps_only_where_none_applies(eta) -> None:
    """R's make.link("logit") formulas, bit for bit, with or without η beyond ±30."""
    from attnreg.glm.links import EPS, LINKS

    t = np.exp(np.clip(eta, -30.0, 30.0))
    t_r = np.where(eta < -30.0, EPS, np.where(eta > 30.0, 1 / EPS, t))
    mu_eta_r = np.where(np.abs(eta) > 30.0, EPS, t / (1 + t) ** 2)
    assert np.array_equal(LINKS["logit"].linkinv(eta), t_r / (1 + t_r), equal_nan=True)
    assert np.array_equal(LINKS["logit"].mu_eta(eta), mu_eta_r, equal_nan=True)


def test_row_pass_with_zero_prior_weights_equals_the_dense_formula() -> None:
    """Rows of prior weight 0 add nothing (their X'r takes the separate product)."""
    rng = np.random.default_rng(8)
    n = 5000
    X = np.column_stack([np.ones(n), rng.normal(size=(n, 2))])
    _, y, _ = _data("poisson", n, False)
    wt = rng.uniform(0.5, 2.0, n)
    wt[::7] = 0.0
    coef = np.array([0.1, 0.2, -0.1])
    fam, lnk = FAMILIES["poisson"], LINKS["log"]
    res = RowPass(X, y, wt, np.zeros(n), fam, lnk).run(coef, np.empty(n), np.empty(n), gram=True)
    m = np.exp(X @ coef)
    np.testing.assert_allclose(res.G, X.T @ (X * (wt * m)[:, None]), rtol=RTOL_EXACT)
    np.testing.assert_allclose(res.g, X.T @ (wt * (y - m)), rtol=RTOL_EXACT, atol=RTOL_EXACT * n)


@pytest.mark.parametrize(("family", "link"), [*PAIRS, ("binomial", "probit"), ("Gamma", "inverse")])
def test_working_response_by_segments_is_rs_formula_bit_for_bit(family, link) -> None:
    from attnreg.glm.normal import working_response

    rng = np.random.default_rng(2)
    n = 70_000  # several segments
    eta = rng.uniform(0.2, 1.5, n)
    fam, lnk = FAMILIES[family], LINKS[link]
    mu = lnk.linkinv(eta)
    y, wt, offset = rng.uniform(0.1, 0.9, n), rng.uniform(0.5, 2.0, n), rng.normal(size=n)
    z, w, problem = working_response(fam, lnk, eta, mu, (y, wt, offset), 5)
    d, var = lnk.mu_eta(eta), fam.variance(mu)
    assert problem is None
    assert np.array_equal(z, eta - offset + (y - mu) / d)
    assert np.array_equal(w, np.sqrt(wt * d ** 2 / var))
    mu_bad = mu.copy()
    mu_bad[n - 3] = 0.0 if family != "Gamma" else np.inf
    assert working_response(fam, lnk, eta, mu_bad, (y, wt, offset), 5)[2] == \
        ("nan" if family == "Gamma" else "zero")
