"""Cluster-robust covariances against R (sandwich, clubSandwich, plm, lmtest) and dense formulas.

The reference numbers and their data are in ``tests/reference/cluster.json``, written by
``tests/reference/make_cluster.R``.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import attnreg as ar
from attnreg.exceptions import DataError, OptionError
from attnreg.inference.vcov.cluster import cluster_codes, cluster_ids

REF = json.loads((Path(__file__).parents[2] / "reference" / "cluster.json").read_text())["cases"]
RTOL_SE = 1e-8
RTOL_VCOV = 1e-6


def _frame(case: str) -> pd.DataFrame:
    data = REF[case]["data"]
    return pd.DataFrame({k: [np.nan if v is None else v for v in col] if k not in ("g", "cl")
                         else col for k, col in data.items()})


def _fit(case: str, weighted: bool = False) -> Any:
    ref = REF[case]
    return ar.attnreg(ref["py_formula"], _frame(case), weights=ref["weights"] if weighted else None)


def _check(res: Any, ref: dict[str, Any], *, p_values: bool = True) -> None:
    V = res.vcov.to_numpy()
    R = np.asarray(ref["vcov"])
    scale = np.sqrt(np.outer(np.diag(R), np.diag(R)))
    assert np.max(np.abs(V - R) / scale) < RTOL_VCOV
    if "se" in ref:
        assert_allclose(res.std_err.to_numpy(), ref["se"], rtol=RTOL_SE)
    if p_values and "p_value" in ref:
        assert res.df_inference == ref["df"]
        assert_allclose(res.p_value.to_numpy(), ref["p_value"], rtol=1e-7)


# ------------------------------------------------------------------------------ against R

GRUNFELD = [
    ("firm_HC1", {"cluster": "firm"}),
    ("firm_HC0", {"cluster": "firm", "type": "HC0"}),
    ("firm_HC0_nocadjust", {"cluster": "firm", "type": "HC0", "cadjust": False}),
    ("firm_HC1_residual_df", {"cluster": "firm", "df": "residual"}),
    ("firm_CR2", {"cluster": "firm", "type": "CR2"}),
    ("firm_year_HC1", {"cluster": "firm + year"}),
    ("firm_year_HC0", {"cluster": ["firm", "year"], "type": "HC0"}),
]


@pytest.mark.parametrize(("key", "options"), GRUNFELD, ids=[k for k, _ in GRUNFELD])
def test_grunfeld_cluster_matches_sandwich_and_clubsandwich(key: str, options: dict) -> None:
    fit = _fit("grunfeld")
    assert_allclose(fit.coef.to_numpy(), REF["grunfeld"]["coef"], rtol=1e-10)
    _check(fit.with_vcov("cluster", **options), REF["grunfeld"][key])


DK = [("dk_default", {}), ("dk_lag3_HC1", {"maxlags": 3, "type": "HC1"}),
      ("dk_lag1_sss", {"maxlags": 1, "type": "sss"})]


@pytest.mark.parametrize(("key", "options"), DK, ids=[k for k, _ in DK])
def test_driscoll_kraay_matches_plm_vcovscc(key: str, options: dict) -> None:
    res = _fit("grunfeld").with_vcov("DK", time="year", **options)
    _check(res, REF["grunfeld"][key])
    if not options:
        assert res.vcov_spec.maxlags == REF["grunfeld"]["dk_default_maxlag"] == 2
    assert _fit("grunfeld").with_vcov("driscoll_kraay", time="year", **options).vcov_spec.kind == "DK"


def test_cluster_wald_f_matches_lmtest_waldtest() -> None:
    res = _fit("grunfeld").with_vcov("cluster", cluster="firm")
    ft = res.f_test
    assert_allclose(ft.statistic, REF["grunfeld"]["wald_firm_HC1"], rtol=1e-8)
    assert (ft.df1, ft.df2) == (2.0, 9.0)


FACTOR = [("HC1", False, {}), ("HC0", False, {"type": "HC0"}), ("CR2", False, {"type": "CR2"}),
          ("weighted_HC1", True, {}), ("weighted_CR2", True, {"type": "CR2"})]


@pytest.mark.parametrize(("key", "weighted", "options"), FACTOR, ids=[k for k, _, _ in FACTOR])
def test_factor_weights_unbalanced_na_rows(key: str, weighted: bool, options: dict) -> None:
    """Rows dropped for NA (one with a missing cluster id) are dropped from the ids too."""
    ref = REF["factor_weights"]
    fit = _fit("factor_weights", weighted)
    assert fit.nobs == ref["nobs"] == 87
    assert_allclose(fit.coef.to_numpy(), ref["coef_weighted" if weighted else "coef"], rtol=1e-10)
    _check(fit.with_vcov("cluster", cluster="cl", **options), ref[key])


def test_two_way_not_psd_is_fixed_as_sandwich() -> None:
    ref = REF["twoway_not_psd"]
    assert min(ref["raw_eigenvalues"]) < 0
    fit = _fit("twoway_not_psd")
    raw = fit.with_vcov("cluster", cluster="a + b", fix=False)
    _check(raw, ref["HC1_nofix"])
    assert np.linalg.eigvalsh(raw.vcov.to_numpy()).min() < 0
    fixed = fit.with_vcov("cluster", cluster="a + b")
    _check(fixed, ref["HC1_fix"])
    assert np.linalg.eigvalsh(fixed.vcov.to_numpy()).min() > -1e-15
    assert fixed.vcov_spec.label() == ("cluster-robust (HC1, two-way) by a and b, 3 and 4 "
                                       "clusters; t and F on 2 df")


# ------------------------------------------------------------------------------ properties

@pytest.fixture(scope="module")
def panel() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    n = 60
    firm = rng.integers(0, 8, n)
    df = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.normal(size=n),
                       "g": rng.choice(["u", "v", "w"], n), "firm": [f"f{k}" for k in firm],
                       "year": rng.integers(2000, 2005, n), "w": rng.uniform(0.5, 2.0, n)})
    df["y"] = (1 + df.x1 - 0.5 * df.x2 + (df.g == "v") + rng.normal(size=8)[firm]
               + rng.normal(size=n))
    return df


def test_singleton_clusters_are_the_hc_covariances(panel) -> None:
    fit = ar.attnreg("y ~ x1 + x2 + C(g)", panel)
    rows = np.arange(len(panel))
    assert_allclose(fit.with_vcov("cluster", cluster=rows).vcov, fit.with_vcov("HC1").vcov,
                    rtol=1e-12)
    assert_allclose(fit.with_vcov("cluster", cluster=rows, type="HC0", cadjust=False).vcov,
                    fit.with_vcov("HC0").vcov, rtol=1e-12)
    # singleton clusters with CR2: the hat adjustment (1 - h_i)^(-1/2) is HC2's
    assert_allclose(fit.with_vcov("cluster", cluster=rows, type="CR2").vcov,
                    fit.with_vcov("HC2").vcov, rtol=1e-10)


def test_series_is_aligned_on_the_index_and_ids_follow_dropped_rows(panel) -> None:
    df = panel.copy()
    df.index = [f"r{i}" for i in range(len(df))]
    df.loc["r3", "y"] = np.nan  # dropped for NA
    w = df["w"].copy()
    w.iloc[5] = 0.0  # weight zero: not a row of the fit
    fit = ar.attnreg("y ~ x1 + x2", df, weights=w, subset=df["x2"] > -1.5)
    by_name = fit.with_vcov("cluster", cluster="firm")
    shuffled = df["firm"].sample(frac=1.0, random_state=1)
    assert_allclose(fit.with_vcov("cluster", cluster=shuffled).vcov, by_name.vcov, rtol=1e-14)
    kept = df[df["x2"] > -1.5].drop(index=["r3", "r5"], errors="ignore")
    ref = ar.attnreg("y ~ x1 + x2", kept, weights=kept["w"]).with_vcov("cluster", cluster="firm")
    assert fit.nobs == ref.nobs
    assert_allclose(by_name.vcov, ref.vcov, rtol=1e-10)
    codes, names = cluster_codes(fit, "firm")
    assert codes.shape == (fit.nobs,)
    assert list(names[codes]) == list(kept["firm"])


def _dense_map(formula: str, df: pd.DataFrame, method: str, tuning: dict,
               weights: Any) -> tuple[np.ndarray, np.ndarray]:
    """The coefficient map A (coef = A y at the fitted λ or k) by refitting on unit responses,
    and the design X."""
    fit = ar.attnreg(formula, df, method, weights=weights, **tuning)
    n = fit.nobs
    A = np.empty((len(fit.names), n))
    for i in range(n):
        unit = df.assign(y=np.eye(n)[i])
        A[:, i] = ar.attnreg(formula, unit, method, weights=weights, **tuning).coef.to_numpy()
    return A, fit.design.X


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize(("method", "tuning"), [("ridge", {"lam": 2.0}), ("pcr", {"k": 2})])
def test_ridge_pcr_conditional_sandwich_is_the_dense_formula(panel, method, tuning,
                                                            weighted) -> None:
    formula = "y ~ x1 + x2 + C(g)"
    weights = panel["w"].to_numpy() if weighted else None
    fit = ar.attnreg(formula, panel, method, weights=weights, **tuning)
    A, X = _dense_map(formula, panel, method, tuning, weights)
    e = fit.resid.to_numpy()
    codes, _ = cluster_codes(fit, "firm")
    same = codes[:, None] == codes[None, :]
    G, n, df_resid = codes.max() + 1, fit.nobs, fit.df_resid
    # HC1: A (e e' on same-cluster pairs) A' · G/(G-1) · (n-1)/(n - edf) (A carries the weights)
    V = A @ (np.outer(e, e) * same) @ A.T * G / (G - 1) * (n - 1) / df_resid
    assert_allclose(fit.with_vcov("cluster", cluster="firm").vcov.to_numpy(), V, rtol=1e-9,
                    atol=1e-12 * np.abs(V).max())
    # CR2: residuals of cluster g times [(I - H)(I - H)']_gg^(-1/2), H = X A the hat matrix
    H = X @ A
    IH = np.eye(n) - H
    cov_e = IH @ IH.T
    adj = np.empty(n)
    for g in range(G):
        idx = np.flatnonzero(codes == g)
        vals, vecs = np.linalg.eigh(cov_e[np.ix_(idx, idx)])
        root = (vecs / np.sqrt(vals)) @ vecs.T
        adj[idx] = root @ e[idx]
    V2 = A @ (np.outer(adj, adj) * same) @ A.T
    got = fit.with_vcov("cluster", cluster="firm", type="CR2").vcov.to_numpy()
    assert_allclose(got, V2, rtol=1e-8, atol=1e-11 * np.abs(V2).max())
    # the coefficients are the same; only the covariance changes
    assert_allclose(fit.with_vcov("cluster", cluster="firm").coef, fit.coef, rtol=0)


def test_pickle_and_copy_keep_the_covariance(panel) -> None:
    fit = ar.attnreg("y ~ x1 + x2 + C(g)", panel).with_vcov("cluster", cluster="firm + year")
    for back in (pickle.loads(pickle.dumps(fit)), copy.deepcopy(fit)):
        assert back.vcov_spec == fit.vcov_spec
        assert_allclose(back.std_err, fit.std_err, rtol=0)
        assert back.vcov_spec.label() == fit.vcov_spec.label()
    back = pickle.loads(pickle.dumps(ar.attnreg("y ~ x1", panel)))  # keeps y and x1 only
    assert_allclose(back.with_vcov("cluster", cluster=panel["firm"]).std_err,
                    ar.attnreg("y ~ x1", panel).with_vcov("cluster", cluster="firm").std_err,
                    rtol=0)


def test_design_keeps_the_callers_frame_and_compares_without_it(panel) -> None:
    fit = ar.attnreg("y ~ x1", panel)
    assert fit.design.data is panel
    assert fit.design == dataclasses.replace(fit.design, data=None, data_rows=None)


# ------------------------------------------------------------------------------ front door

def test_front_door_equals_with_vcov(panel) -> None:
    direct = ar.attnreg("y ~ x1 + x2", panel, vcov="cluster", cluster="firm", type="CR2")
    later = ar.attnreg("y ~ x1 + x2", panel).with_vcov("cluster", cluster="firm", type="CR2")
    assert_allclose(direct.vcov, later.vcov, rtol=0)
    dk = ar.attnreg("y ~ x1 + x2", panel, vcov="DK", time="year", maxlags=1)
    assert dk.vcov_spec.maxlags == 1


@pytest.mark.parametrize(("options", "error", "match"), [
    ({"vcov": "cluster"}, OptionError, "needs cluster="),
    ({"vcov": "cluster", "cluster": "frim"}, OptionError, "no column 'frim'.*'firm'"),
    ({"vcov": "cluster", "cluster": "firm", "type": "HC3"}, OptionError, "type must be one of"),
    ({"vcov": "HC1", "cluster": "firm"}, OptionError, "cluster do.*not apply to vcov 'HC1'"),
    ({"vcov": "cluster", "cluster": "firm + year", "type": "CR2"}, OptionError, "one-way only"),
    ({"vcov": "cluster", "cluster": "firm", "df": "G"}, OptionError, "df must be one of"),
    ({"vcov": "DK"}, OptionError, "needs time="),
    ({"vcov": "DK", "time": "year", "maxlags": 9}, OptionError, "smaller than the number of "
                                                                "periods"),
])
def test_errors_name_the_argument(panel, options, error, match) -> None:
    with pytest.raises(error, match=match):
        ar.attnreg("y ~ x1", panel, **options)


def test_data_errors(panel) -> None:
    fit = ar.attnreg("y ~ x1", panel)
    bad = panel.assign(firm=panel["firm"].where(panel.index != 4))
    with pytest.raises(DataError, match="cluster 'firm' is missing at row 4"):
        ar.attnreg("y ~ x1", bad).with_vcov("cluster", cluster="firm")
    with pytest.raises(DataError, match="data has 60 rows, however cluster has 59"):
        fit.with_vcov("cluster", cluster=np.arange(59))
    with pytest.raises(DataError, match="single cluster"):
        fit.with_vcov("cluster", cluster=np.zeros(60))
    with pytest.raises(OptionError, match="one clustering dimension"):
        cluster_codes(fit, "firm + year")
    assert cluster_ids(fit, ["firm", "year"]).n_clusters == (8, 5)


# ------------------------------------------------------------------------------ summary

def test_summary_names_the_covariance_and_the_clusters() -> None:
    text = str(_fit("grunfeld").with_vcov("cluster", cluster="firm").summary())
    assert "Standard errors: cluster-robust (HC1) by firm, 10 clusters; t and F on 9 df" in text
    assert "on 2 and 9 DF" in text
    assert "Residual standard error: 94.41 on 197 degrees of freedom" in text
    dk = str(_fit("grunfeld").with_vcov("DK", time="year").summary())
    assert "Standard errors: Driscoll-Kraay (HC0, Bartlett kernel, 2 lags) by year, 20 periods" in dk
    resid = str(_fit("grunfeld").with_vcov("cluster", cluster="firm", df="residual").summary())
    assert "t and F on the residual df" in resid and "on 2 and 197 DF" in resid


# ------------------------------------------------------------------------------ by_cluster

def test_by_cluster_sums_the_weights_of_each_cluster(panel) -> None:
    fit = ar.attnreg("y ~ x1 + x2 + C(g)", panel)
    new = panel.iloc[[0, 7, 20]]
    att = fit.attention(new, chunk_size=2)
    table = att.by_cluster("firm")
    W = att.weights.to_numpy()
    codes, names = cluster_codes(fit, "firm")
    dense = np.column_stack([W[:, codes == g].sum(axis=1) for g in range(len(names))])
    assert table.shape == (3, 8) and list(table.columns) == list(names)
    assert_allclose(table.to_numpy(), dense, rtol=1e-12, atol=1e-15)
    assert_allclose(table.sum(axis=1), 1.0, rtol=1e-12)  # an intercept: weights sum to one
    # default: the clusters of the fit's one-way cluster covariance
    clustered = fit.with_vcov("cluster", cluster="firm").attention(new)
    assert_allclose(clustered.by_cluster().to_numpy(), dense, rtol=1e-12, atol=1e-15)
    with pytest.raises(OptionError, match="needs cluster="):
        att.by_cluster()


def test_own_cluster_share_of_training_rows(panel) -> None:
    fit = ar.attnreg("y ~ x1 + x2 + C(g)", panel)
    own = fit.attention().own_cluster("firm")
    H = fit.attention().weights.to_numpy()  # the hat matrix
    codes, _ = cluster_codes(fit, "firm")
    same = codes[:, None] == codes[None, :]
    assert_allclose(own["own"], (H * same).sum(axis=1), rtol=1e-12)
    assert_allclose(own["own"] + own["others"], 1.0, rtol=1e-12)
    assert list(own["cluster"]) == list(panel["firm"])
    new = panel.iloc[[3, 4]]
    with pytest.raises(OptionError, match="query_clusters"):
        fit.attention(new).own_cluster("firm")
    given = fit.attention(new).own_cluster("firm", query_clusters=new["firm"].to_numpy())
    assert_allclose(given["own"], own["own"].iloc[[3, 4]], rtol=1e-12)
    back = pickle.loads(pickle.dumps(fit.attention(new)))
    assert_allclose(back.by_cluster(panel["firm"]), fit.attention(new).by_cluster("firm"),
                    rtol=0)  # a pickle keeps only the formula's columns: the ids are given


def test_command_line_fit_with_clusters(tmp_path, capsys) -> None:
    from attnreg.cli import main

    path = tmp_path / "grunfeld.csv"
    _frame("grunfeld").to_csv(path, index=False)
    assert main(["fit", "--data", str(path), "inv ~ value + capital", "--vcov", "cluster",
                 "--cluster", "firm"]) == 0
    assert "cluster-robust (HC1) by firm, 10 clusters; t and F on 9 df" in capsys.readouterr().out
    assert main(["fit", "--data", str(path), "inv ~ value + capital", "--vcov", "DK",
                 "--time", "year"]) == 0
    assert "Driscoll-Kraay (HC0" in capsys.readouterr().out
