"""Influence measures, the residual family and the outlier test against R, and their
leave-one-out closed forms against refits without the row."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

import attnreg as ar
from attnreg.exceptions import OptionError
from attnreg.linear import filters, spectral
from attnreg.diagnostics.loo import dfbeta_blocks, hat_one, loo_sigma_scaled

REF = json.loads((Path(__file__).parents[1] / "reference" / "diagnostics.json").read_text())
CASES = REF["cases"]
RTOL = 1e-8


def fit_case(name: str):
    case = CASES[name]
    data = pd.DataFrame(case["data"], index=case["row_names"])
    return ar.attnreg(case["formula"], data, weights=data["w"] if case["weights"] else None)


@pytest.fixture(scope="module", params=list(CASES))
def case(request):
    return CASES[request.param], fit_case(request.param)


def test_influence_measures_match_r(case) -> None:
    ref, fit = case
    infl = fit.influence()
    assert list(infl.index) == ref["influence_rows"]  # rows of weight zero omitted, as R
    names = ref["infmat_names"]
    dfb = [c for c in infl.columns if c.startswith("dfb_")]
    assert len(dfb) == len(names) - 4
    for ours, theirs in zip(dfb, names, strict=False):
        assert_allclose(infl[ours], ref["infmat"][theirs], rtol=RTOL, atol=1e-14)
    for ours, theirs in (("dffits", "dffit"), ("covratio", "cov.r"),
                         ("cooks_distance", "cook.d"), ("hat", "hat")):
        assert_allclose(infl[ours], ref["infmat"][theirs], rtol=RTOL)
    assert_allclose(infl["std_resid"], ref["rstandard"], rtol=RTOL)
    assert_allclose(infl["student_resid"], ref["rstudent"], rtol=RTOL)
    assert_allclose(infl["sigma_ratio"] * fit.sigma, ref["sigma_i"], rtol=RTOL)


def test_residual_family_matches_r(case) -> None:
    ref, fit = case
    assert_allclose(fit.rstandard(), ref["rstandard"], rtol=RTOL)
    assert_allclose(fit.rstudent(), ref["rstudent"], rtol=RTOL)
    assert_allclose(fit.loo_sigma(), ref["sigma_i"], rtol=RTOL)
    for kind, values in ref["residuals"].items():
        got = fit.residuals(kind)
        assert got.size == len(values)  # rows of weight zero included, as residuals.lm
        assert_allclose(got, values, rtol=RTOL, atol=1e-13)
    assert_allclose(fit.residuals("standardized"), ref["rstandard"], rtol=RTOL)
    assert_allclose(fit.residuals("studentized"), ref["rstudent"], rtol=RTOL)


def test_outlier_test_matches_car(case) -> None:
    ref, fit = case
    expected = ref["outlier_test"]
    ot = fit.outlier_test()
    assert ot.signif == expected["signif"]
    rows = expected["rows"]  # (jsonlite writes a one-element vector as a scalar)
    assert [str(r) for r in ot.table.index] == ([rows] if isinstance(rows, str) else rows)
    assert_allclose(ot.table["rstudent"], expected["rstudent"], rtol=RTOL)
    assert_allclose(ot.table["unadjusted p-value"], expected["p"], rtol=RTOL)
    assert_allclose(ot.table["Bonferroni p"], expected["bonf_p"], rtol=RTOL)
    assert str(ot).splitlines() == expected["text"]


def test_outlier_test_options() -> None:
    fit = fit_case("wls")
    r = fit.rstudent()
    from scipy import stats

    bonf = pd.Series(r.size * 2 * stats.t.sf(np.abs(r), fit.df_resid - 1), index=r.index)
    for cutoff, n_max in ((1.0, 10), (1.0, 2), (0.01, 10)):
        ot = fit.outlier_test(cutoff=cutoff, n_max=n_max)
        expected = bonf[bonf <= cutoff].sort_values()
        assert ot.signif
        assert list(ot.table.index) == list(expected.index[:n_max])
        assert_allclose(ot.table["Bonferroni p"], expected.iloc[:n_max], rtol=1e-12)
    for bad in ({"cutoff": 0}, {"cutoff": 1.5}, {"n_max": 0}, {"n_max": 2.5}):
        with pytest.raises(OptionError, match=next(iter(bad))):
            fit.outlier_test(**bad)


def test_residual_kind_error() -> None:
    with pytest.raises(OptionError, match="kind must be one of"):
        fit_case("ts").residuals("partial")


@pytest.mark.parametrize("method", ["ridge", "pcr"])
def test_ridge_and_pcr_define_what_is_conditional_and_refuse_the_rest(method: str) -> None:
    data = pd.DataFrame(CASES["ts"]["data"])
    tuning = {"lam": 1.0} if method == "ridge" else {"k": 1}
    fit = ar.attnreg("y ~ x1 + x2", data, method=method, **tuning)
    infl = fit.influence()
    assert list(infl.columns) == ["hat", "cooks_distance", "std_resid"]
    assert_allclose(infl["hat"].sum(), fit.edf, rtol=1e-12)
    e, h = fit.weighted_resid.to_numpy(), infl["hat"].to_numpy()
    std = e / (fit.sigma * np.sqrt(1 - h))
    assert_allclose(fit.rstandard(), std, rtol=1e-12)
    assert_allclose(infl["cooks_distance"], std**2 * h / ((1 - h) * fit.edf), rtol=1e-12)
    for call in (fit.rstudent, fit.dfbeta, fit.outlier_test, fit.loo_sigma,
                 lambda: fit.residuals("studentized")):
        with pytest.raises(OptionError, match=f"OLS/WLS fits only.*{method}"):
            call()


def test_leverage_one_rows_are_nan_with_zero_dfbetas() -> None:
    data = pd.DataFrame(CASES["ts"]["data"])
    data["only"] = 0.0
    data.loc[5, "only"] = 1.0  # a column for one row: its leverage is 1
    fit = ar.attnreg("y ~ x1 + x2 + only", data)
    infl = fit.influence()
    assert infl["hat"].iloc[5] == pytest.approx(1.0)
    for col in ("student_resid", "dffits", "covratio", "std_resid", "cooks_distance"):
        assert np.isnan(infl[col].iloc[5]), col
    dfb = infl.filter(like="dfb_")
    assert (dfb.iloc[5] == 0).all()
    assert np.isfinite(infl.drop(index=infl.index[5]).to_numpy()).all()


def _refit_loo(X, y, w, i):
    keep = np.arange(len(y)) != i
    sw = np.sqrt(w[keep])
    b, *_ = np.linalg.lstsq(X[keep] * sw[:, None], y[keep] * sw, rcond=None)
    r = (y[keep] - X[keep] @ b) * sw
    return b, np.sqrt(r @ r / (keep.sum() - X.shape[1]))


@settings(max_examples=30, deadline=None)
@given(n=st.integers(8, 25), p=st.integers(1, 4), seed=st.integers(0, 2**31 - 1),
       weighted=st.booleans(), intercept=st.booleans())
def test_closed_forms_equal_refits_without_the_row(n, p, seed, weighted, intercept) -> None:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(rng.normal(size=(n, p)), columns=[f"x{j}" for j in range(p)])
    frame["y"] = frame.sum(axis=1) + rng.standard_t(4, size=n)
    frame["w"] = rng.uniform(0.3, 3.0, n) if weighted else 1.0
    formula = "y ~ " + ("" if intercept else "0 + ") + " + ".join(frame.columns[:p])
    fit = ar.attnreg(formula, frame, weights=frame["w"] if weighted else None)
    X, y, w = fit.design.X, fit.design.y, frame["w"].to_numpy()
    dfbeta, rstudent, sigma_i = fit.dfbeta(), fit.rstudent(), fit.loo_sigma()
    dfbetas = fit.influence().filter(like="dfb_").to_numpy()
    diag = np.sqrt(np.diag(fit.vcov.to_numpy())) / fit.sigma
    for i in range(n):
        b_i, s_i = _refit_loo(X, y, w, i)
        assert_allclose(dfbeta.iloc[i], fit.coef.to_numpy() - b_i, rtol=1e-7, atol=1e-9)
        assert_allclose(sigma_i.iloc[i], s_i, rtol=1e-9)
        assert_allclose(dfbetas[i], (fit.coef.to_numpy() - b_i) / (s_i * diag), rtol=1e-7,
                        atol=1e-9)
        # rstudent: the scaled prediction error of row i from the fit without it
        h = fit.hat_values.iloc[i]
        pred_err = np.sqrt(w[i]) * (y[i] - X[i] @ b_i)
        assert_allclose(rstudent.iloc[i], pred_err * np.sqrt(1 - h) / s_i, rtol=1e-8)


def test_blocks_of_recomputed_left_vectors_give_the_stored_result() -> None:
    rng = np.random.default_rng(4)
    n = 700
    X = np.column_stack([np.ones(n), rng.normal(size=(n, 3))])
    y = X @ [1.0, 0.5, -1.0, 2.0] + rng.normal(size=n)
    out = []
    for lazy in (True, False):
        sp = spectral.decompose(X, y, intercept=0, weights=None, scaling="sd", lazy_u=lazy)
        assert sp.U.is_stored is not lazy
        f = filters.ols_filter(sp.s)
        e = y - X @ filters.apply_filter(sp, f, 4).coef
        h = hat_one(filters.hat_diagonal(sp, f))
        out.append(dfbeta_blocks(sp, f, 4, np.arange(4), e, h,
                                 loo_sigma_scaled(e, h, n - 4.0))[0])
    assert_allclose(out[0], out[1], rtol=1e-9, atol=1e-12)


def test_scale_invariance_of_the_measures() -> None:
    data = pd.DataFrame(CASES["ts"]["data"])
    base = ar.attnreg("y ~ x1 + x2", data).influence()
    for scale in (1e-250, 1e250):
        for changed in ({"y": data["y"] * scale}, {"x1": data["x1"] * scale}):
            big = ar.attnreg("y ~ x1 + x2", data.assign(**changed))
            assert_allclose(big.influence(), base, rtol=1e-10)
            assert_allclose(big.rstudent(), base["student_resid"], rtol=1e-10)
