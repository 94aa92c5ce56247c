"""The wild restricted efficient bootstrap (Davidson–MacKinnon 2010) of an IV fit: against a
hand-written reference (each bootstrap sample built in the original variables and fitted by
linearmodels' IV2SLS, the same multipliers), the inversion of the interval, and its size in a
small Monte Carlo."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import attnreg as ar
from attnreg.exceptions import DataError, OptionError
from tests.conftest import RTOL_EXACT, RTOL_SM

FORMULA = "y ~ x | d ~ z1 + z2 + z3"


def data(n: int = 120, seed: int = 0, strength: float = 0.4) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x": rng.normal(size=n), "z1": rng.normal(size=n), "z2": rng.normal(size=n),
                       "z3": rng.normal(size=n), "g": rng.integers(0, 15, n)})
    v = rng.normal(size=n)
    u = (0.8 * v + 0.6 * rng.normal(size=n)) * (0.5 + np.abs(df.x))
    df["d"] = strength * (df.z1 + df.z2 - 0.5 * df.z3) + 0.3 * df.x + v
    df["y"] = 1.0 + 0.5 * df.x + 1.0 * df.d + u
    return df


def reference(df: pd.DataFrame, null: float, reps: int, seed: int,
              clusters: np.ndarray | None = None) -> tuple[float, np.ndarray]:
    """WRE by the book, one linearmodels fit per sample: the observed t and the bootstrap t's
    (HC0, or cluster-robust with clusters)."""
    from linearmodels.iv import IV2SLS

    n = len(df)
    X = np.column_stack([np.ones(n), df.x])
    Z, Y, y = df[["z1", "z2", "z3"]].to_numpy(), df.d.to_numpy(), df.y.to_numpy()
    gamma = np.linalg.lstsq(X, y - Y * null, rcond=None)[0]
    u = y - Y * null - X @ gamma  # restricted structural residuals
    coef = np.linalg.lstsq(np.column_stack([Z, X, u]), Y, rcond=None)[0]
    mean_y = Z @ coef[:3] + X @ coef[3:5]
    v = Y - mean_y  # the efficient reduced-form residuals
    draws = np.where(np.random.default_rng(seed).random((reps, n if clusters is None else
                                                          int(clusters.max()) + 1)) < 0.5, 1.0, -1.0)

    def t_stat(yy: np.ndarray, dd: np.ndarray) -> float:
        cov = ({"cov_type": "robust", "debiased": False} if clusters is None else
               {"cov_type": "clustered", "clusters": pd.Series(clusters), "debiased": False})
        fit = IV2SLS(yy, X, dd, Z).fit(**cov)
        return float((fit.params.iloc[-1] - null) / fit.std_errors.iloc[-1])

    t_star = []
    for b in range(reps):
        s = draws[b] if clusters is None else draws[b][clusters]
        d_b = mean_y + v * s
        y_b = d_b * null + X @ gamma + u * s
        t_star.append(t_stat(y_b, d_b))
    return t_stat(y, Y), np.array(t_star)


def test_equals_the_reference_with_the_same_draws() -> None:
    df = data()
    fit = ar.attnreg(FORMULA, df, vcov="HC0")
    got = fit.bootstrap(reps=19, null=0.8, seed=3, interval=False)
    t0, t_star = reference(df, 0.8, 19, 3)
    assert_allclose(got.statistic, t0, rtol=RTOL_SM)
    assert_allclose(got.t_draws, t_star, rtol=RTOL_SM)
    assert got.p_value == np.mean(np.abs(t_star) >= abs(t0))
    assert got.term == "d" and got.reps == 19 and np.isnan(got.conf_int).all()


def test_cluster_multipliers_are_drawn_per_cluster() -> None:
    df = data()
    fit = ar.attnreg(FORMULA, df, vcov="cluster", cluster="g")
    got = fit.bootstrap(reps=19, null=0.8, seed=5, interval=False)
    _, t_star = reference(df, 0.8, 19, 5, clusters=df.g.to_numpy())  # ids 0..14: sorted codes
    ratio = got.t_draws / t_star  # the same t's up to the CR1 small-sample factor
    assert_allclose(ratio, ratio[0], rtol=RTOL_SM)
    assert got.p_value == np.mean(np.abs(t_star) >= abs(got.statistic / ratio[0]))


@pytest.mark.parametrize("vcov", [{}, {"vcov": "HC1"}, {"vcov": "cluster", "cluster": "g"}],
                         ids=["classical", "HC1", "cluster"])
def test_the_observed_statistic_is_the_fits_t(vcov: dict[str, str]) -> None:
    fit = ar.attnreg(FORMULA, data(), **vcov)
    got = fit.bootstrap(reps=9, null=0.7, seed=0, interval=False)
    assert_allclose(got.statistic, (fit.coef["d"] - 0.7) / fit.std_err["d"], rtol=RTOL_EXACT)


def test_the_interval_inverts_the_test() -> None:
    fit = ar.attnreg(FORMULA, data(), vcov="HC1")
    got = fit.bootstrap(reps=199, seed=1, level=0.9)
    lo, hi = got.conf_int
    assert lo < fit.coef["d"] < hi
    eps = 1e-3 * fit.std_err["d"]  # well above the ends' tolerance (1e-6 se)

    def p_at(b0: float) -> float:
        return fit.bootstrap(reps=199, null=b0, seed=1, interval=False).p_value
    assert p_at(lo + eps) > 0.1 >= p_at(lo - eps)
    assert p_at(hi - eps) > 0.1 >= p_at(hi + eps)


@pytest.mark.slow
def test_size_in_a_small_monte_carlo() -> None:
    """H0 true (β = 1) with weak-ish instruments and heteroskedastic errors: the 5 % WRE test
    rejects near 5 % (200 data sets; the binomial standard error is 1.5 points). It rejected
    7 % when written; the HC1 t test on the same data sets rejects 20 %."""
    rejections = [ar.attnreg(FORMULA, data(n=80, seed=100 + r, strength=0.25), vcov="HC1")
                  .bootstrap(reps=99, null=1.0, seed=r, interval=False).p_value <= 0.05
                  for r in range(200)]
    assert 0.01 <= np.mean(rejections) <= 0.10  # 5 % within about three binomial s.e.


def test_refusals() -> None:
    df = data().assign(d2=lambda f: f.z2 + f.d)
    with pytest.raises(DataError, match=r"the WRE bootstrap needs one endogenous regressor, "
                                        r"however the model has 2: d, d2"):
        ar.attnreg("y ~ x | d + d2 ~ z1 + z2 + z3", df).bootstrap()
    with pytest.raises(OptionError, match=r"the WRE bootstrap tests the 2SLS t statistic, "
                                          r"however: method='liml'"):
        ar.attnreg(FORMULA, df, method="liml").bootstrap()
    with pytest.raises(OptionError, match=r"an IV fit bootstraps with kind='wre'"):
        ar.attnreg(FORMULA, df).bootstrap("pairs")
    with pytest.raises(OptionError, match=r"the WRE bootstrap's t statistics are classical, "
                                          r"HC0, HC1 or one-way cluster.*'HC3'"):
        ar.attnreg(FORMULA, df, vcov="HC3").bootstrap()
    with pytest.raises(OptionError, match=r"however the fit's covariance is 'cluster'"):
        ar.attnreg(FORMULA, df, vcov="cluster", cluster="g", type="HC0").bootstrap()
    with pytest.raises(OptionError, match=r"reps must be a positive integer, however: reps=0"):
        ar.attnreg(FORMULA, df).bootstrap(reps=0)


@pytest.mark.parametrize("vcov", [{"vcov": "HC1"}, {"vcov": "cluster", "cluster": "g"}],
                         ids=["HC1", "cluster"])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_absorbed_fixed_effects_equal_the_dummy_variable_fit(vcov: dict[str, str],
                                                            weighted: bool) -> None:
    df = data().assign(h=lambda f: (f.g * 3) % 7, w=lambda f: 0.5 + (f.g % 3))
    w = "w" if weighted else None
    fe = ar.attnreg("y ~ x | h | d ~ z1 + z2 + z3", df, weights=w, **vcov)
    dv = ar.attnreg("y ~ x + C(h) | d ~ z1 + z2 + z3", df, weights=w, **vcov)
    a = fe.bootstrap(reps=49, null=0.8, seed=2, level=0.9)
    b = dv.bootstrap(reps=49, null=0.8, seed=2, level=0.9)
    assert_allclose(a.t_draws, b.t_draws, rtol=RTOL_SM)
    assert a.p_value == b.p_value
    assert_allclose(a.conf_int, b.conf_int, rtol=1e-5)  # ends bisected to 1e-6 of the s.e.
