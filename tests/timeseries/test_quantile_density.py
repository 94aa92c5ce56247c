"""The predictive distribution of quantile forecasts (attnreg.timeseries.quantile_density):
checked against its definition (it has the forecast quantiles, its density integrates to one
and is the derivative of its CDF, its quantile function inverts the CDF) and the quantile CRPS
against ``scoringrules``."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scoringrules as sr
from numpy.testing import assert_allclose
from scipy import integrate

from attnreg.timeseries.quantile_density import (crps_quantile_density, crps_quantiles,
                                                 quantile_cdf, quantile_logpdf, quantile_ppf,
                                                 rearrange)
from tests.conftest import RTOL_EXACT, RTOL_FD

RTOL_QUAD = 1e-8  # scipy's quad on piecewise smooth integrands split at their kinks

TAUS = np.array([0.05, 0.25, 0.5, 0.75, 0.95])


def _quantiles(n: int = 6) -> np.ndarray:
    rng = np.random.default_rng(3)
    return rearrange(rng.normal(size=(n, 5)) * 2.0)


def test_the_distribution_has_the_forecast_quantiles() -> None:
    q = _quantiles()
    for k, tau in enumerate(TAUS):
        assert_allclose(quantile_cdf(q[:, k], q, TAUS), tau, rtol=RTOL_EXACT)
        assert_allclose(quantile_ppf(tau, q, TAUS), q[:, k], rtol=RTOL_EXACT)


@pytest.mark.parametrize("u", [0.001, 0.03, 0.1, 0.4, 0.6, 0.9, 0.97, 0.999])
def test_the_quantile_function_inverts_the_cdf(u: float) -> None:
    q = _quantiles()
    assert_allclose(quantile_cdf(quantile_ppf(u, q, TAUS), q, TAUS), u, rtol=RTOL_EXACT)


def test_the_density_integrates_to_one_and_is_the_cdf_derivative() -> None:
    q = _quantiles(1)
    pdf = lambda y: float(np.exp(quantile_logpdf(np.array([y]), q, TAUS))[0])  # noqa: E731
    knots = [-np.inf, *q[0], np.inf]
    total = sum(integrate.quad(pdf, a, b)[0] for a, b in itertools.pairwise(knots))
    assert total == pytest.approx(1.0, rel=RTOL_FD)  # quad's accuracy on the tails
    step = 1e-5
    for y in (q[0, 0] - 1.3, (q[0, 1] + q[0, 2]) / 2, q[0, 4] + 0.7):  # left tail, inside, right
        fd = (quantile_cdf(np.array([y + step]), q, TAUS)
              - quantile_cdf(np.array([y - step]), q, TAUS))[0] / (2 * step)
        assert pdf(y) == pytest.approx(fd, rel=RTOL_FD)
    # continuity at the outer knots (the tail scales)
    for y in (q[0, 0], q[0, 4]):
        assert pdf(y - 1e-12) == pytest.approx(pdf(y + 1e-12), rel=RTOL_FD)


def test_crps_is_scoringrules_quantile_crps() -> None:
    q = _quantiles(20)
    y = np.random.default_rng(4).normal(size=20) * 2.0
    assert_allclose(crps_quantiles(y, q, TAUS), sr.crps_quantile(y, q, TAUS), rtol=RTOL_EXACT)


@pytest.mark.parametrize("y0", [-9.0, -1.0, 0.3, 2.0, 8.0])
def test_crps_of_the_distribution_equals_numerical_integration(y0: float) -> None:
    q = _quantiles(3)
    y = np.full(3, y0)
    got = crps_quantile_density(y, q, TAUS)
    for i in range(3):
        def sq(x: float, i: int = i) -> float:
            return float((quantile_cdf(np.array([x]), q[i:i + 1], TAUS)[0] - (x >= y0)) ** 2)
        edges = [-np.inf, *sorted([*q[i], y0]), np.inf]
        ref = sum(integrate.quad(sq, a, b)[0] for a, b in itertools.pairwise(edges))
        assert got[i] == pytest.approx(ref, rel=RTOL_QUAD)


def test_crps_of_a_point_mass_tail() -> None:
    """Equal outer quantiles: the tail's mass sits at the knot (scale 0), F jumps there."""
    q, taus = np.array([[0.0, 0.0, 1.0]]), np.array([0.2, 0.4, 0.9])
    # F = 0 below 0, jumps to 0.4 at 0, linear to 0.9 at 1, then an exponential tail
    y = np.array([-1.0])
    right_scale = 0.1 * 1.0 / 0.5
    expected = (1.0  # (1 - F)^2 = 1 on (-1, 0)
                + (0.6**2 + 0.6 * 0.1 + 0.1**2) / 3.0  # (1 - F)^2 on the segment [0, 1]
                + 0.1**2 * right_scale / 2.0)  # the right tail
    assert crps_quantile_density(y, q, taus)[0] == pytest.approx(expected, rel=RTOL_EXACT)
