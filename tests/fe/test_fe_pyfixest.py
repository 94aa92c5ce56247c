"""Fixed-effects fits against pyfixest's ``feols``, where the conventions are fixest's.

pyfixest is run with ``fixef_tol=1e-12`` (its demeaning stops at a tolerance); RTOL_R (1e-8,
the tolerance pyfixest itself uses against R fixest) bounds what that leaves. The
conventions compared: fixest's default small-sample correction of cluster covariances
(fixed effects nested in the cluster not counted, G/(G − 1) with the smallest G), the
"hetero" and "iid" covariances, R², adjusted R², within and adjusted within R², the
normalised fixed effects, and the singletons fixest removes with ``fixef_rm="singleton"``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import attnreg as ar
from tests.conftest import RTOL_R

pf = pytest.importorskip("pyfixest")

SLOPES = ["x1", "x2"]
VCOVS = [("iid", "classical", {}), ("hetero", "HC1", {}),
         ({"CRV1": "firm"}, "cluster", {"cluster": "firm"}),
         ({"CRV1": "year"}, "cluster", {"cluster": "year"}),
         ({"CRV1": "firm+year"}, "cluster", {"cluster": "firm + year"})]


def pf_panel(seed: int = 3, n: int = 800) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    firm, year = rng.integers(0, 50, n), rng.integers(0, 10, n)
    x1 = rng.normal(size=n) + 0.05 * firm
    x2 = rng.normal(size=n) + 0.1 * year
    y = 0.5 * x1 - 2.0 * x2 + 0.02 * firm + np.cos(year) + rng.normal(size=n) * (1 + x1 ** 2)
    return pd.DataFrame({"y": y, "x1": x1, "x2": x2, "firm": firm, "year": year,
                         "w": rng.uniform(0.5, 2.0, n)})


def pf_fit(df: pd.DataFrame, vcov: object, weighted: bool, **options: object) -> object:
    return pf.feols("y ~ x1 + x2 | firm + year", df, vcov=vcov, fixef_tol=1e-12,
                    weights="w" if weighted else None, **options)


@pytest.mark.parametrize("weighted", [False, True])
def test_standard_errors_follow_fixest_conventions(weighted: bool) -> None:
    df = pf_panel()
    for pf_vcov, kind, options in VCOVS:
        ref = pf_fit(df, pf_vcov, weighted)
        fit = ar.attnreg("y ~ x1 + x2 | firm + year", df, weights="w" if weighted else None,
                         vcov=kind, **options)
        np.testing.assert_allclose(fit.coef[SLOPES], ref.coef()[SLOPES], rtol=RTOL_R)
        np.testing.assert_allclose(fit.std_err[SLOPES], ref.se()[SLOPES], rtol=RTOL_R,
                                   err_msg=str(pf_vcov))
        np.testing.assert_allclose(fit.p_value[SLOPES], ref.pvalue()[SLOPES], rtol=RTOL_R,
                                   atol=1e-15,  # pyfixest rounds p-values below 1e-16 to 0
                                   err_msg=str(pf_vcov))


def test_nested_fixed_effects_are_not_counted_and_dummy_convention_differs() -> None:
    df = pf_panel()
    ref = pf_fit(df, {"CRV1": "firm"}, False)
    fixest = ar.attnreg("y ~ x1 + x2 | firm + year", df, vcov="cluster", cluster="firm")
    dummy = fixest.with_vcov("cluster", cluster="firm", ssc="dummy")
    np.testing.assert_allclose(fixest.std_err, ref.se()[SLOPES], rtol=RTOL_R)
    n, k_all = fixest.nobs, 2 + 50 + 10 - 1
    k_nested = 2 + 10  # the firm effects lie within the firm clusters: not counted
    np.testing.assert_allclose((dummy.std_err / fixest.std_err) ** 2,
                               (n - k_nested) / (n - k_all), rtol=RTOL_R)


def test_r_squared_statistics_and_fixed_effects() -> None:
    df = pf_panel()
    ref = pf_fit(df, "iid", True)
    fit = ar.attnreg("y ~ x1 + x2 | firm + year", df, weights="w")
    np.testing.assert_allclose([fit.r_squared, fit.adj_r_squared, fit.within_r_squared,
                                fit.adj_within_r_squared],
                               [ref._r2, ref._adj_r2, ref._r2_within, ref._adj_r2_within],
                               rtol=RTOL_R)
    pf_effects = ref.fixef(atol=1e-14, btol=1e-14)
    ours = fit.fixef()
    for name in ("firm", "year"):
        theirs = pd.Series(pf_effects[f"C({name})"])
        theirs.index = theirs.index.astype(int)
        theirs = theirs.reindex(ours[name].index).fillna(0.0)  # pyfixest omits the reference
        np.testing.assert_allclose(ours[name].to_numpy(), theirs.to_numpy(),
                                   rtol=1e-6, atol=1e-6)  # pyfixest's lsqr stops at ~1e-7


def test_singletons_removed_as_fixest() -> None:
    df = pf_panel(n=300)
    df.loc[df.index[:4], "firm"] = [900, 901, 902, 903]  # four singleton firms
    ref = pf.feols("y ~ x1 + x2 | firm + year", df, fixef_rm="singleton", fixef_tol=1e-12)
    fit = ar.attnreg("y ~ x1 + x2 | firm + year", df, fixef_rm="singleton")
    assert fit.nobs == ref._N and fit.absorbed.n_singletons == len(df) - ref._N
    np.testing.assert_allclose(fit.std_err, ref.se()[SLOPES], rtol=RTOL_R)


def test_connected_mover_graph_as_fixest() -> None:
    rng = np.random.default_rng(5)
    worker = np.repeat(np.arange(400), 5)
    firm = rng.integers(0, 40, 400)[worker]
    move = rng.random(worker.size) < 0.1
    firm[move] = rng.integers(0, 40, move.sum())
    x1, x2 = rng.normal(size=(2, worker.size))
    df = pd.DataFrame({"y": x1 - x2 + 0.01 * worker + 0.05 * firm + rng.normal(size=worker.size),
                       "x1": x1, "x2": x2, "firm": worker, "year": firm})
    fit = ar.attnreg("y ~ x1 + x2 | firm + year", df)
    assert fit.absorbed.n_redundant == 1  # one connected component: fixest's count is exact
    for pf_vcov, kind, options in VCOVS:
        ref = pf_fit(df, pf_vcov, False)
        np.testing.assert_allclose(fit.with_vcov(kind, **options).std_err, ref.se()[SLOPES],
                                   rtol=RTOL_R, err_msg=str(pf_vcov))
