"""The leaf-by-leaf row passes of the fixed-effects scoring steps equal the same expressions
on whole columns: the means, working responses and weights bit for bit, the deviance to
RTOL_EXACT (summed in another order), and the same bits on any number of threads."""

from __future__ import annotations

import numpy as np
import pytest

import attnreg as ar
import attnreg.glm.fe_rows as fe_rows
from attnreg.glm.families import FAMILIES
from attnreg.glm.fe_rows import FeRows
from attnreg.glm.links import LINKS
from tests.conftest import RTOL_EXACT


@pytest.fixture(autouse=True)
def _small_leaves(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fe_rows, "LEAF_ROWS", 64)  # many leaves and segments on 1,000 rows
    monkeypatch.setattr(fe_rows, "SEGMENT_ROWS", 256)


def _rows(family: str, link: str, seed: int = 0) -> tuple[FeRows, np.ndarray]:
    rng = np.random.default_rng(seed)
    n = 1000
    eta = rng.normal(size=n) * 0.3 + (2.0 if link == "sqrt" else 0.0)  # sqrt: η > 0
    mu = LINKS[link].linkinv(eta)
    y = rng.poisson(mu).astype(float) if family == "poisson" else (rng.random(n) < mu) * 1.0
    return FeRows(y, rng.uniform(0.5, 2, n), rng.normal(size=n) * 0.1, FAMILIES[family],
                  LINKS[link]), eta


@pytest.mark.parametrize(("family", "link"), [("poisson", "log"), ("poisson", "sqrt"),
                                              ("binomial", "logit"), ("binomial", "probit")])
def test_the_passes_equal_the_whole_column_expressions(family: str, link: str) -> None:
    rows, eta = _rows(family, link)
    fam, lnk = FAMILIES[family], LINKS[link]
    dev, mu, valid = rows.deviance(eta)
    expected_mu = lnk.linkinv(eta)
    np.testing.assert_array_equal(mu, expected_mu)
    np.testing.assert_allclose(dev, np.sum(fam.dev_resids(rows.y, expected_mu, rows.wt)),
                               rtol=RTOL_EXACT)
    assert valid
    working = rows.working(eta, mu)
    assert working is not None
    d, var = lnk.mu_eta(eta), fam.variance(mu)
    np.testing.assert_array_equal(working[0], eta - rows.offset + (rows.y - mu) / d)
    np.testing.assert_array_equal(working[1], rows.wt * d ** 2 / var)
    stack = np.full((eta.size, 3), np.nan)  # z written into a column of a wider array
    into = rows.working(eta, mu, z=stack[:, 0])
    assert into is not None and into[0].base is stack
    np.testing.assert_array_equal(stack[:, 0], working[0])
    assert np.isnan(stack[:, 1:]).all()


def test_the_same_bits_on_one_thread_and_two() -> None:
    rows, eta = _rows("poisson", "log", seed=1)
    ar.set_threads(1)
    try:
        one = rows.deviance(eta)[0], rows.working(eta, np.exp(eta))
    finally:
        ar.set_threads(None)
    two = rows.deviance(eta)[0], rows.working(eta, np.exp(eta))
    assert one[0] == two[0]
    assert one[1] is not None and two[1] is not None
    np.testing.assert_array_equal(one[1][1], two[1][1])


def test_out_of_range_means_and_zero_variances_are_reported() -> None:
    rows, eta = _rows("poisson", "sqrt", seed=2)
    eta = eta.copy()
    eta[700] = 0.0  # sqrt link: η = 0 is outside its domain, μ = 0 outside Poisson's range
    _, mu, valid = rows.deviance(eta)
    assert not valid and mu[700] == 0
    assert rows.working(eta, mu) is None  # V(0) = 0


@pytest.mark.parametrize(("family", "link"), [("poisson", "log"), ("binomial", "logit")])
def test_the_canonical_pairs_take_the_leaf_kernels(family: str, link: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The deviance pass runs the IRLS passes' kernels (the algebra done), to R's numbers."""
    import attnreg.glm.leafkernels as lk

    rows, eta = _rows(family, link)
    made: list[int] = []
    real = lk.KERNELS[(family, link)]
    monkeypatch.setitem(lk.KERNELS, (family, link),
                        lambda *a: made.append(1) or real(*a))
    dev, mu, valid = rows.deviance(eta)
    assert made  # the canonical pair's kernel maker was asked
    fam = FAMILIES[family]
    np.testing.assert_allclose(dev, np.sum(fam.dev_resids(rows.y, mu, rows.wt)),
                               rtol=RTOL_EXACT)
    np.testing.assert_allclose(mu, LINKS[link].linkinv(eta), rtol=1e-15)
    assert valid
