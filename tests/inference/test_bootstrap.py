"""The bootstrap: wild (cluster) with the WCR/WCU test, pairs and residual.

References: brute-force loops over the same draws that refit with ``numpy.linalg.lstsq`` and
recompute the CR1 / HC1 / classical standard errors (to 1e-10); ``wildboottest`` under full
enumeration, where the answer is deterministic; the analytic covariances, within Monte Carlo
error for many replications.
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal

import attnreg as ar
import attnreg.inference.bootstrap_run as bmod
from attnreg.exceptions import InferenceWarning, OptionError
from attnreg.inference.vcov.cluster import cluster_codes
from attnreg.inference.bootstrap_draws import draw_rows, draw_weights, enumerate_signs
from attnreg.inference.restrictions import parse_restrictions

TOL = 1e-10


def panel(n_groups: int = 10, per: int = 9, seed: int = 0, weighted: bool = False,
          hetero: bool = True) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = n_groups * per
    g = np.repeat(np.arange(n_groups), per)
    df = pd.DataFrame({"x1": rng.normal(size=n) + 0.5 * rng.normal(size=n_groups)[g],
                       "x2": rng.normal(size=n), "f": rng.choice(["a", "b", "c"], n),
                       "firm": np.array([f"f{j:02d}" for j in g])})
    scale = np.exp(0.5 * df.x2) if hetero else 1.0
    df["y"] = (1.0 + 0.4 * df.x1 - 0.2 * df.x2 + (df.f == "b") + rng.normal(size=n_groups)[g]
               + scale * rng.normal(size=n))
    df["w"] = rng.uniform(0.5, 2.0, n) if weighted else 1.0
    return df


def arrays(fit, cluster=None):
    X, y = fit.design.X, fit.design.y
    w = fit.design.weights
    sw = np.sqrt(w) if w is not None else np.ones(len(y))
    codes = None
    if cluster is not None:
        codes, _ = cluster_codes(fit, cluster)
    return X * sw[:, None], y * sw, codes


def cr1(Xw, res, codes, n_obs, xtxi):
    """CR1 (codes) or HC1 (codes None) covariance of an OLS fit from its weighted residuals."""
    K = Xw.shape[1]
    if codes is None:
        meat = (Xw * res[:, None] ** 2).T @ Xw
        return n_obs / (n_obs - K) * xtxi @ meat @ xtxi
    G = int(codes.max()) + 1
    S = np.zeros((G, K))
    np.add.at(S, codes, Xw * res[:, None])
    return G / (G - 1) * (n_obs - 1) / (n_obs - K) * xtxi @ (S.T @ S) @ xtxi


def brute_wild(Xw, yw, codes, V, R=None, r=None, impose_null=True):
    """Loop over replications: refit by lstsq, CR1/HC1 per replication."""
    n = Xw.shape[0]
    xtxi = np.linalg.inv(Xw.T @ Xw)
    b = np.linalg.lstsq(Xw, yw, rcond=None)[0]
    e = yw - Xw @ b
    rows = codes if codes is not None else np.arange(n)
    coefs, tcoef, stats = [], [], []
    if R is not None:
        b_r = b - xtxi @ R.T @ np.linalg.solve(R @ xtxi @ R.T, R @ b - r)
        base, u = (Xw @ b_r, yw - Xw @ b_r) if impose_null else (Xw @ b, e)
    for v in V:
        ys = Xw @ b + e * v[rows]
        bs = np.linalg.lstsq(Xw, ys, rcond=None)[0]
        Vc = cr1(Xw, ys - Xw @ bs, codes, n, xtxi)
        coefs.append(bs)
        tcoef.append((bs - b) / np.sqrt(np.diag(Vc)))
        if R is not None:
            ys = base + u * v[rows]
            bs = np.linalg.lstsq(Xw, ys, rcond=None)[0]
            Vc = cr1(Xw, ys - Xw @ bs, codes, n, xtxi)
            d = R @ bs - (r if impose_null else R @ b)
            stats.append(d[0] / np.sqrt(R @ Vc @ R.T)[0, 0] if len(r) == 1
                         else d @ np.linalg.solve(R @ Vc @ R.T, d) / len(r))
    V0 = cr1(Xw, e, codes, n, xtxi)
    out = {"coef": np.array(coefs), "t": np.array(tcoef), "se": np.sqrt(np.diag(V0))}
    if R is not None:
        d = R @ b - r
        out["stat0"] = (d[0] / np.sqrt(R @ V0 @ R.T)[0, 0] if len(r) == 1
                        else d @ np.linalg.solve(R @ V0 @ R.T, d) / len(r))
        out["stats"] = np.array(stats)
    return out


# ------------------------------------------------------------------------------ wild

@pytest.mark.parametrize(("weights", "impose_null", "weighted"),
                         [("rademacher", True, False), ("webb", True, True),
                          ("mammen", False, False), ("normal", True, False)])
def test_wild_cluster_matches_brute_force(weights, impose_null, weighted):
    df = panel(12, 7, seed=1, weighted=weighted)
    fit = ar.attnreg("y ~ x1 + x2 + C(f)", data=df, weights="w" if weighted else None)
    reps, seed = 60, 11
    bs = fit.bootstrap("wild", cluster="firm", reps=reps, weights=weights, seed=seed,
                       hypothesis="x1 = 0.3", impose_null=impose_null)
    Xw, yw, codes = arrays(fit, "firm")
    V = draw_weights(np.random.default_rng(seed), weights, reps, 12)
    R = np.zeros((1, Xw.shape[1]))
    R[0, fit.names.index("x1")] = 1.0
    ref = brute_wild(Xw, yw, codes, V, R, np.array([0.3]), impose_null)
    assert_allclose(bs.replications, ref["coef"], rtol=TOL, atol=TOL)
    assert_allclose(bs.t_replications, ref["t"], rtol=TOL, atol=TOL)
    assert_allclose(bs.std_err_analytic, ref["se"], rtol=TOL)
    assert_allclose(bs.test.statistic, ref["stat0"], rtol=TOL)
    assert_allclose(bs.test.draws, ref["stats"], rtol=TOL, atol=TOL)
    assert bs.test.p_value == np.mean(np.abs(ref["stats"]) > abs(ref["stat0"]))
    assert bs.test.name == ("WCR" if impose_null else "WCU")
    assert_allclose(bs.std_err, ref["coef"].std(axis=0, ddof=1), rtol=TOL)


def test_wild_heteroskedastic_and_wald_match_brute_force():
    df = panel(6, 10, seed=2, weighted=True)
    fit = ar.attnreg("y ~ x1 + x2 + C(f)", data=df, weights="w")
    reps, seed = 40, 5
    hyp = "x1 = x2, C(f)[T.b] = 1"
    bs = fit.bootstrap("wild", reps=reps, seed=seed, hypothesis=hyp)
    Xw, yw, _ = arrays(fit)
    V = draw_weights(np.random.default_rng(seed), "rademacher", reps, len(yw))
    R, r = parse_restrictions(fit.names, hyp)
    ref = brute_wild(Xw, yw, None, V, R, r)
    assert_allclose(bs.replications, ref["coef"], rtol=TOL, atol=TOL)
    assert_allclose(bs.t_replications, ref["t"], rtol=TOL, atol=TOL)
    assert_allclose(bs.std_err_analytic, fit.with_vcov("HC1").std_err, rtol=TOL)
    assert bs.test.form == "F" and bs.test.q == 2
    assert_allclose(bs.test.statistic, ref["stat0"], rtol=TOL)
    assert_allclose(bs.test.draws, ref["stats"], rtol=TOL, atol=TOL)
    assert bs.test.name == "WR"


def test_wild_cluster_wald_matches_brute_force():
    df = panel(10, 8, seed=3)
    fit = ar.attnreg("y ~ x1 + x2 + C(f)", data=df)
    hyp = "x1 = 0.4, x2 = -0.2"
    bs = fit.bootstrap("wild", cluster=df["firm"], reps=30, seed=3, hypothesis=hyp,
                       weights="webb")
    Xw, yw, codes = arrays(fit, "firm")
    V = draw_weights(np.random.default_rng(3), "webb", 30, 10)
    R, r = parse_restrictions(fit.names, hyp)
    ref = brute_wild(Xw, yw, codes, V, R, r)
    assert_allclose(bs.test.statistic, ref["stat0"], rtol=TOL)
    assert_allclose(bs.test.draws, ref["stats"], rtol=TOL, atol=TOL)
    # the original Wald F is the CR1 Wald test of the fit
    wt = fit.with_vcov("cluster", cluster="firm").wald_test(hyp)
    assert_allclose(bs.test.statistic, wt.statistic, rtol=1e-9)


def test_full_enumeration_matches_wildboottest():
    wbt = pytest.importorskip("wildboottest.wildboottest")
    df = panel(8, 12, seed=4)
    fit = ar.attnreg("y ~ x1 + x2", data=df)
    with pytest.warns(InferenceWarning, match="full enumeration"):
        bs = fit.bootstrap("wild", cluster="firm", reps=999, hypothesis="x1 = 0")
    assert bs.enumerated and bs.reps == 256 and bs.reps_requested == 999
    X, y, codes = arrays(fit, "firm")
    R = np.array([0.0, 1.0, 0.0])
    boot = wbt.WildboottestCL(X=X, Y=y, cluster=codes, R=R, B=999, seed=1, parallel=False)
    boot.get_scores(bootstrap_type="11", impose_null=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        boot.get_weights(weights_type="rademacher")
    boot.get_numer()
    boot.get_denom()
    boot.get_tboot()
    boot.get_vcov()
    boot.get_tstat()
    boot.get_pvalue()
    assert boot.B == 256
    assert_allclose(bs.test.statistic, float(np.ravel(boot.t_stat)[0]), rtol=TOL)
    assert_allclose(bs.test.draws, boot.t_boot, rtol=TOL, atol=TOL)  # the same sign vectors
    # wildboottest counts |t*| > |t| strictly; the draws v = ±1 reproduce t up to rounding
    # (a tie, which attnreg does not count), so the p-values agree to 2 / 2^G
    assert abs(bs.test.p_value - boot.pvalue) <= 2 / 256 + 1e-12
    ties = np.isclose(np.abs(boot.t_boot), abs(bs.test.statistic), rtol=1e-9)
    assert ties.sum() == 2
    assert bs.test.p_value == np.mean((np.abs(boot.t_boot) > abs(bs.test.statistic)) & ~ties)
    # and attnreg's enumeration is deterministic: no seed needed, same answer
    with pytest.warns(InferenceWarning):
        again = fit.bootstrap("wild", cluster="firm", reps=999, hypothesis="x1 = 0", seed=5)
    assert_array_equal(again.test.draws, bs.test.draws)


def test_heteroskedastic_wild_matches_wildboottest_draws():
    wbt = pytest.importorskip("wildboottest.wildboottest")
    df = panel(5, 8, seed=5)
    fit = ar.attnreg("y ~ x1 + x2", data=df)
    X, y, _ = arrays(fit)
    # (r = 0: wildboottest's bootstrap numerator leaves r out)
    boot = wbt.WildboottestHC(X=X, Y=y, R=np.array([0.0, 1.0, 0.0]), r=0.0, B=50, seed=9)
    boot.get_adjustments(bootstrap_type="11")
    boot.get_uhat(impose_null=True)
    boot.get_tboot(weights_type="rademacher")
    boot.get_tstat()
    # wildboottest's HC t uses (n - 1)/(n - K); attnreg's HC1 n/(n - K): t differs by that root
    rng = np.random.default_rng(9)
    V = np.stack([rng.choice([-1, 1], size=len(y)) for _ in range(50)]).astype(float)
    ref = brute_wild(X, y, None, V, np.array([[0.0, 1.0, 0.0]]), np.array([0.0]))
    ratio = np.sqrt((len(y) - 1) / len(y))
    assert_allclose(np.ravel(boot.t_stat)[0] * ratio, ref["stat0"], rtol=TOL)
    assert_allclose(boot.t_boot * ratio, ref["stats"], rtol=TOL, atol=TOL)


def test_enumeration_uses_every_sign_vector_once():
    V = enumerate_signs(5)
    assert V.shape == (32, 5)
    assert len({tuple(row) for row in V.tolist()}) == 32
    assert_array_equal(enumerate_signs(5, 7, 19), V[7:19])


# ------------------------------------------------------------------------------ pairs

@pytest.mark.parametrize("clustered", [False, True])
def test_pairs_matches_brute_force(clustered):
    df = panel(9, 8, seed=6, weighted=True)
    fit = ar.attnreg("y ~ x1 + x2", data=df, weights="w")
    reps, seed = 40, 8
    bs = fit.bootstrap("pairs", cluster="firm" if clustered else None, reps=reps, seed=seed)
    Xw, yw, codes = arrays(fit, "firm" if clustered else None)
    n = Xw.shape[0]
    idx = draw_rows(np.random.default_rng(seed), reps, 9 if clustered else n)
    coefs, ts = [], []
    b = np.linalg.lstsq(Xw, yw, rcond=None)[0]
    for draw in idx:
        if clustered:
            rows = np.concatenate([np.flatnonzero(codes == g) for g in draw])
            cl = np.concatenate([np.full((codes == g).sum(), j) for j, g in enumerate(draw)])
        else:
            rows, cl = draw, None
        Xb, yb = Xw[rows], yw[rows]
        bb = np.linalg.lstsq(Xb, yb, rcond=None)[0]
        Vc = cr1(Xb, yb - Xb @ bb, cl, len(rows), np.linalg.inv(Xb.T @ Xb))
        coefs.append(bb)
        ts.append((bb - b) / np.sqrt(np.diag(Vc)))
    assert_allclose(bs.replications, np.array(coefs), rtol=TOL, atol=TOL)
    assert_allclose(bs.t_replications, np.array(ts), rtol=1e-9, atol=TOL)
    ref_se = (fit.with_vcov("cluster", cluster="firm") if clustered else
              fit.with_vcov("HC1")).std_err
    assert_allclose(bs.std_err_analytic, ref_se, rtol=TOL)


def test_pairs_leaves_out_singular_resamples():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.normal(size=30), "d": np.r_[1.0, np.zeros(29)]})
    df["y"] = df.x + df.d + rng.normal(size=30)
    fit = ar.attnreg("y ~ x + d", data=df)
    with pytest.warns(InferenceWarning, match="singular resampled design"):
        bs = fit.bootstrap("pairs", reps=50, seed=1)
    missing = ~(draw_rows(np.random.default_rng(1), 50, 30) == 0).any(axis=1)
    assert bs.n_failed == missing.sum() > 0
    assert np.isnan(bs.replications[missing]).all()
    assert np.isfinite(bs.replications[~missing]).all()
    assert np.isfinite(bs.std_err).all()


# ------------------------------------------------------------------------------ residual

def test_residual_matches_brute_force():
    df = panel(6, 8, seed=7, weighted=True)
    fit = ar.attnreg("y ~ x1 + x2 + C(f)", data=df, weights="w")
    reps, seed = 40, 3
    bs = fit.bootstrap("residual", reps=reps, seed=seed)
    Xw, yw, _ = arrays(fit)
    n, K = Xw.shape
    xtxi = np.linalg.inv(Xw.T @ Xw)
    b = np.linalg.lstsq(Xw, yw, rcond=None)[0]
    e = yw - Xw @ b
    base = (e - e.mean()) * np.sqrt(n / (n - K))
    coefs, ts = [], []
    for draw in draw_rows(np.random.default_rng(seed), reps, n):
        ys = Xw @ b + base[draw]
        bb = np.linalg.lstsq(Xw, ys, rcond=None)[0]
        res = ys - Xw @ bb
        coefs.append(bb)
        ts.append((bb - b) / np.sqrt(res @ res / (n - K) * np.diag(xtxi)))
    assert_allclose(bs.replications, np.array(coefs), rtol=TOL, atol=TOL)
    assert_allclose(bs.t_replications, np.array(ts), rtol=TOL, atol=TOL)
    assert_allclose(bs.std_err_analytic, fit.std_err, rtol=TOL)


@pytest.mark.parametrize("kind", ["residual", "wild"])
def test_bootstrap_variance_is_the_analytic_one_within_monte_carlo_error(kind):
    # residual: E*[Var b*] is the classical covariance exactly (centred residuals times
    # sqrt(n / (n - K))); wild with Rademacher weights: HC0 exactly. The sample variance of
    # reps draws has a relative standard deviation of about sqrt(2 / reps) (kurtosis
    # allowing, up to sqrt(3)): 5 of those, at reps = 20000, is 0.087.
    df = panel(5, 6, seed=8)
    fit = ar.attnreg("y ~ x1 + x2 + C(f)", data=df)
    reps = 20000
    bs = fit.bootstrap(kind, reps=reps, seed=4)
    target = fit.std_err if kind == "residual" else fit.with_vcov("HC0").std_err
    tol = 5 * np.sqrt(3 * 2 / reps)
    assert_allclose((bs.std_err / target) ** 2, 1.0, atol=tol)


# ------------------------------------------------------------------------------ ridge, PCR

@pytest.mark.parametrize("method", ["ridge", "pcr"])
def test_ridge_pcr_wild_is_conditional_on_the_penalty(method):
    df = panel(10, 6, seed=9)
    opt = {"lam": 2.0} if method == "ridge" else {"k": 2}
    fit = ar.attnreg("y ~ x1 + x2 + C(f)", data=df, method=method, **opt)
    reps, seed = 20, 2
    bs = fit.bootstrap("wild", cluster="firm", reps=reps, seed=seed, hypothesis="x1 = 0",
                       impose_null=False)
    V = draw_weights(np.random.default_rng(seed), "rademacher", reps, 10)
    codes, _ = cluster_codes(fit, "firm")
    e, fitted = fit.resid.to_numpy(), fit.fitted.to_numpy()

    def refit(y):
        return ar.attnreg("y ~ x1 + x2 + C(f)", data=df.assign(y=y), method=method,
                          **opt).coef.to_numpy()

    base = refit(fitted)  # b* = b̂ + M e*: refits at fixed lambda / k, minus M ŷ
    ref = np.array([fit.coef.to_numpy() + refit(fitted + e * v[codes]) - base for v in V])
    assert_allclose(bs.replications, ref, rtol=1e-9, atol=1e-10)
    cl = fit.with_vcov("cluster", cluster="firm")
    assert_allclose(bs.std_err_analytic, cl.std_err, rtol=TOL)
    assert_allclose(bs.test.statistic, cl.t_value["x1"], rtol=1e-9)
    assert bs.note.startswith("Conditional on")


# ------------------------------------------------------------------------------ properties

@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), n_groups=st.integers(3, 12), clustered=st.booleans(),
       weighted=st.booleans())
def test_unit_weights_reproduce_the_fit(seed, n_groups, clustered, weighted):
    df = panel(n_groups, 4, seed=seed, weighted=weighted)
    fit = ar.attnreg("y ~ x1 + x2", data=df, weights="w" if weighted else None)

    def ones(rng, weights, reps, n):
        return np.ones((reps, n))

    original = bmod.draw_weights
    bmod.draw_weights = ones
    try:
        bs = fit.bootstrap("wild", cluster="firm" if clustered else None, reps=3,
                           weights="normal", hypothesis="x1 = 0.1")
    finally:
        bmod.draw_weights = original
    b = fit.coef.to_numpy()
    assert_allclose(bs.replications, np.tile(b, (3, 1)), rtol=0, atol=1e-12 * np.abs(b).max())
    # WCR with v = 1 gives back the fit itself: t* = t̂
    assert_allclose(bs.test.draws, bs.test.statistic, rtol=1e-9)
    se = (fit.with_vcov("cluster", cluster="firm") if clustered else fit.with_vcov("HC1"))
    assert_allclose(bs.std_err_analytic, se.std_err, rtol=1e-10)


def test_seed_determinism_and_block_invariance(monkeypatch):
    df = panel(10, 6, seed=10)
    fit = ar.attnreg("y ~ x1 + x2", data=df)
    for kind, opts in [("wild", {"cluster": "firm", "weights": "normal"}), ("pairs", {}),
                       ("residual", {})]:
        a = fit.bootstrap(kind, reps=45, seed=12, **opts)
        b = fit.bootstrap(kind, reps=45, seed=12, **opts)
        c = fit.bootstrap(kind, reps=45, seed=13, **opts)
        assert_array_equal(a.replications, b.replications)
        assert not np.array_equal(a.replications, c.replications)
        with monkeypatch.context() as m:
            m.setattr(bmod, "BLOCK_NUMBERS", 500)  # many small blocks: the same draws
            d = fit.bootstrap(kind, reps=45, seed=12, **opts)
        assert_allclose(d.replications, a.replications, rtol=1e-12, atol=1e-14)
    gen = fit.bootstrap("wild", reps=10, seed=np.random.default_rng(12))
    assert_array_equal(gen.replications, fit.bootstrap("wild", reps=10, seed=12).replications)
    assert gen.seed is None


def test_weights_distributions():
    rng = np.random.default_rng(0)
    assert set(np.unique(draw_weights(rng, "rademacher", 100, 10))) == {-1.0, 1.0}
    webb = draw_weights(rng, "webb", 2000, 30)
    assert_allclose(np.unique(webb) ** 2, [1.5, 1.0, 0.5, 0.5, 1.0, 1.5])
    mammen = draw_weights(rng, "mammen", 4000, 50)
    assert_allclose([mammen.mean(), (mammen ** 2).mean(), (mammen ** 3).mean()], [0, 1, 1],
                    atol=0.03)
    assert len(np.unique(mammen)) == 2
    normal = draw_weights(rng, "normal", 4000, 100)
    assert_allclose([normal.mean(), normal.var()], [0.0, 1.0], atol=0.012)


# ------------------------------------------------------------------------------ options

def test_errors_name_the_argument():
    df = panel(6, 5, seed=11)
    fit = ar.attnreg("y ~ x1 + x2", data=df)
    ridge = ar.attnreg("y ~ x1 + x2", data=df, method="ridge", lam=1.0)
    cases = [
        (lambda: fit.bootstrap(reps=0), "reps"),
        (lambda: fit.bootstrap(reps=True), "reps"),
        (lambda: fit.bootstrap("jackknife"), "kind"),
        (lambda: fit.bootstrap(weights="gamma"), "weights"),
        (lambda: fit.bootstrap("pairs", weights="webb"), "weights"),
        (lambda: fit.bootstrap("pairs", hypothesis="x1 = 0"), "hypothesis"),
        (lambda: fit.bootstrap("residual", cluster="firm"), "cluster"),
        (lambda: fit.bootstrap(cluster="firm + f"), "cluster"),
        (lambda: fit.bootstrap(cluster="frim"), "cluster"),
        (lambda: fit.bootstrap(seed=-1), "seed"),
        (lambda: fit.bootstrap(seed="a"), "seed"),
        (lambda: fit.bootstrap(level=1.5), "level"),
        (lambda: fit.bootstrap(impose_null="yes"), "impose_null"),
        (lambda: fit.bootstrap(progress="yes"), "progress"),
        (lambda: fit.bootstrap(hypothesis="x3 = 0"), "x3"),
        (lambda: fit.bootstrap(hypothesis=3), "hypothesis"),
        (lambda: ridge.bootstrap("pairs"), "pairs"),
        (lambda: ridge.bootstrap(hypothesis="x1 = 0"), "impose_null"),
    ]
    for call, word in cases:
        with pytest.raises(OptionError, match=word):
            call()


def test_restriction_on_an_aliased_coefficient_is_refused():
    df = panel(6, 5, seed=12).assign(x3=lambda d: 2 * d.x1)
    with pytest.warns(UserWarning):
        fit = ar.attnreg("y ~ x1 + x2 + x3", data=df)
    with pytest.raises(OptionError, match="aliased"):
        fit.bootstrap(hypothesis="x3 = 0")
    bs = fit.bootstrap(reps=20, seed=1)
    assert np.isnan(bs.replications[:, 3]).all() and np.isnan(bs.std_err["x3"])
    assert np.isfinite(bs.replications[:, :3]).all()


def test_small_cluster_counts_warn():
    df = panel(3, 10, seed=13)
    fit = ar.attnreg("y ~ x1", data=df)
    with pytest.warns(InferenceWarning, match="6\\^3 = 216 distinct"):
        fit.bootstrap(cluster="firm", weights="webb", reps=999, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit.bootstrap(cluster="firm", weights="webb", reps=200, seed=1)  # 216 >= 200: quiet


def test_results_report_pickle_and_frame(capsys):
    df = panel(12, 5, seed=14)
    fit = ar.attnreg("y ~ x1 + x2", data=df)
    seen = []
    bs = fit.bootstrap(cluster="firm", reps=99, seed=3, hypothesis="x1 = 0",
                       progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (99, 99)
    text = str(bs)
    assert "Wild bootstrap by firm (12 clusters), rademacher weights: 99 replications" in text
    assert "WCR bootstrap test of x1 = 0" in text
    frame = bs.to_frame()
    assert list(frame.index) == fit.names
    assert_allclose(frame["boot.std.error"], bs.std_err)
    assert bs.test.to_frame()["p.value"].iloc[0] == bs.test.p_value
    back = pickle.loads(pickle.dumps(bs))
    assert_array_equal(back.replications, bs.replications) and str(back) == text
    with pytest.raises(AttributeError):
        bs.reps = 3  # frozen
    lo, hi = bs.conf_int("percentile").to_numpy().T
    assert_allclose(lo, np.quantile(bs.replications, 0.025, axis=0))
    assert_allclose(hi, np.quantile(bs.replications, 0.975, axis=0))
    tq = np.quantile(bs.t_replications, [0.025, 0.975], axis=0)
    stud = bs.conf_int().to_numpy()
    assert_allclose(stud[:, 0], bs.coef - tq[1] * bs.std_err_analytic)
    assert_allclose(stud[:, 1], bs.coef - tq[0] * bs.std_err_analytic)
    capsys.readouterr()
    fit.bootstrap(reps=10, seed=1)
    assert capsys.readouterr().err == ""  # quiet by default
    fit.bootstrap(reps=10, seed=1, progress=True)
    assert "bootstrap: 10/10" in capsys.readouterr().err


def test_scale_invariance_at_extreme_scales():
    df = panel(10, 6, seed=15)
    fit = ar.attnreg("y ~ x1 + x2", data=df)
    big = ar.attnreg("y ~ x1 + x2", data=df.assign(y=df.y * 1e150, x1=df.x1 * 1e100,
                                                    x2=df.x2 * 1e-100))
    a = fit.bootstrap(cluster="firm", reps=50, seed=2, hypothesis="x1 = 0.4, x2 = 0")
    b = big.bootstrap(cluster="firm", reps=50, seed=2, hypothesis="x1 = 4e49, x2 = 0")
    assert_allclose(b.t_replications, a.t_replications, rtol=1e-9, atol=1e-12)
    assert_allclose(b.test.draws, a.test.draws, rtol=1e-9)
    assert_allclose(b.test.statistic, a.test.statistic, rtol=1e-9)
    scale = np.array([1e150, 1e50, 1e250])
    assert_allclose(b.std_err / scale, a.std_err, rtol=1e-9)  # no overflow in the squares
    assert_allclose(b.studentized.to_numpy() / scale[:, None], a.studentized, rtol=1e-9)
