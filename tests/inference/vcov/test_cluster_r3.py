"""Small-sample cluster inference against clubSandwich: Satterthwaite df for CR2 t tests and
intervals (``coef_test``, ``conf_int``), HTZ Wald tests (``Wald_test(test = "HTZ")``), and
the refusals of options that do not apply (``cadjust`` with CR2, Satterthwaite without CR2).

R's numbers are in ``tests/reference/cluster_r3.json`` (``LC_ALL=C Rscript
tests/reference/make_cluster_r3.R``): 8 balanced clusters and 10 strongly unbalanced ones,
factor models with an interaction, and prior weights. A dense n × n implementation of the
same formulas (from the coefficients' derivative in y, by refits) checks ridge and the
structured sums.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import attnreg as ar
from attnreg.exceptions import OptionError
from tests.conftest import RTOL_EXACT, RTOL_R, RTOL_R_VCOV

REF = json.loads((Path(__file__).parents[2] / "reference" / "cluster_r3.json").read_text())
CASES = list(REF["cases"])
SATT = {"cluster": "cl", "type": "CR2", "df": "satterthwaite"}


def _data(case: str) -> pd.DataFrame:
    return pd.DataFrame(REF["designs"][REF["cases"][case]["design"]])


def fit_of(case: str, **vcov: Any) -> Any:
    c = REF["cases"][case]
    fit = ar.attnreg(c["py_formula"], _data(case), weights=c["weights"])
    return fit.with_vcov("cluster", **(vcov or SATT))


def _unit_rows(cols: Any, n_coef: int) -> np.ndarray:
    cols = [cols] if isinstance(cols, int) else list(cols)
    R = np.zeros((len(cols), n_coef))
    R[np.arange(len(cols)), cols] = 1.0
    return R


# ------------------------------------------------------------------ against clubSandwich

@pytest.mark.parametrize("case", CASES)
def test_coefficients_match_coef_test_satterthwaite(case: str) -> None:
    ref = REF["cases"][case]
    want = ref["satterthwaite"]
    fit = fit_of(case)
    assert fit.names == ref["names"]
    V = fit.vcov.to_numpy()
    R = np.asarray(ref["vcov_CR2"])
    assert np.max(np.abs(V - R) / np.sqrt(np.outer(np.diag(R), np.diag(R)))) < RTOL_R_VCOV
    assert_allclose(fit.std_err, want["se"], rtol=RTOL_R)
    assert_allclose(fit.t_value, want["t"], rtol=RTOL_R)
    assert_allclose(fit.df_coef, want["df"], rtol=RTOL_R)
    assert_allclose(fit.p_value, want["p_value"], rtol=RTOL_R)
    for level, key in ((0.95, "ci95"), (0.90, "ci90")):
        ci = fit.conf_int(level)
        assert_allclose(ci.iloc[:, 0], want[key]["lower"], rtol=RTOL_R)
        assert_allclose(ci.iloc[:, 1], want[key]["upper"], rtol=RTOL_R)


def test_satterthwaite_differs_from_g_minus_one_where_it_matters() -> None:
    """Few, unbalanced clusters: the df are far below G − 1 = 9 (the reason for the test)."""
    fit = fit_of("unbal_fx")
    naive = fit_of("unbal_fx", cluster="cl", type="CR2")
    assert naive.df_inference == 9 and (fit.df_coef < 4).all()
    assert (fit.p_value > naive.p_value).all()
    assert_allclose(fit.std_err, naive.std_err, rtol=RTOL_EXACT)  # same covariance


HTZ = [(case, h) for case in CASES for h in REF["cases"][case]["htz"]]


@pytest.mark.parametrize(("case", "h"), HTZ, ids=[f"{c}-{h['name']}" for c, h in HTZ])
def test_wald_tests_match_htz(case: str, h: dict[str, Any]) -> None:
    fit = fit_of(case)
    w = fit.wald_test(_unit_rows(h["columns"], len(fit.names)))
    assert w.df[0] == h["df_num"]
    assert w.statistic == pytest.approx(h["Fstat"], rel=RTOL_R, abs=1e-12)  # F = 0 when δ = 0
    assert w.df[1] == pytest.approx(h["df_denom"], rel=RTOL_R)
    if h["p_val"] is None:  # ν − q + 1 <= 0: no test (clubSandwich's NA)
        assert np.isnan(w.p_value)
    else:
        assert w.p_value == pytest.approx(h["p_val"], rel=RTOL_R)


@pytest.mark.parametrize("case", [c for c in CASES if REF["cases"][c]["htz_x1_minus_x2"]["Fstat"]])
def test_a_text_restriction_matches_htz(case: str) -> None:
    want = REF["cases"][case]["htz_x1_minus_x2"]
    fit = fit_of(case)
    w = fit.wald_test("x1 - x2 = 0")
    assert (w.statistic, w.df[1], w.p_value) == pytest.approx(
        (want["Fstat"], want["df_denom"], want["p_val"]), rel=RTOL_R)
    t = fit.t_test("x1 - x2 = 0, x1 = 0")
    row = t.table.loc["-x2 + x1 = 0"]
    assert row["t value"] ** 2 == pytest.approx(w.statistic, rel=RTOL_EXACT)  # δ = 1, q = 1
    assert row["df"] == pytest.approx(want["df_denom"], rel=RTOL_R)
    assert row["Pr(>|t|)"] == pytest.approx(want["p_val"], rel=RTOL_R)
    assert t.table.loc["x1 = 0", "df"] == pytest.approx(fit.df_coef["x1"], rel=RTOL_EXACT)
    assert "Satterthwaite DF" in str(t)


@pytest.mark.parametrize("case", CASES)
def test_overall_f_and_anova_rows_are_htz(case: str) -> None:
    ref = REF["cases"][case]
    fit = fit_of(case)
    slopes = ref["htz"][-1]
    ft = fit.f_test
    assert ft.statistic == pytest.approx(slopes["Fstat"], rel=RTOL_R, abs=1e-12)
    assert ft.df2 == pytest.approx(slopes["df_denom"], rel=RTOL_R)
    tab = fit.anova(type=3).table
    assert tab.columns.tolist() == ["Df", "Den.Df", "F", "Pr(>F)"]
    for h in ref["htz"][:-1]:
        assert tab.loc[h["name"], "F"] == pytest.approx(h["Fstat"], rel=RTOL_R)
        assert tab.loc[h["name"], "Den.Df"] == pytest.approx(h["df_denom"], rel=RTOL_R)


def test_summary_shows_each_coefficients_df() -> None:
    fit = fit_of("bal_fx")
    text = str(fit.summary())
    assert "df (Satt.)" in text and "t on Satterthwaite df, F: HTZ" in text
    row = next(line for line in text.splitlines() if line.startswith("x2 "))
    assert f"{fit.df_coef['x2']:.4g}" in row
    tidy = fit.tidy(conf_int=True)
    assert_allclose(tidy["p.value"], fit.p_value, rtol=RTOL_EXACT)
    back = pickle.loads(pickle.dumps(fit))
    assert_allclose(back.df_coef, fit.df_coef, rtol=RTOL_EXACT)


# ------------------------------------------------------------------ dense reference

def _derivative(fit: Any, data: pd.DataFrame, **kw: Any) -> np.ndarray:
    """d coef / d y, shape (n_coef, n), by refits on unit responses (the fit is linear in y)."""
    n = len(data)
    cols = []
    for i in range(n):
        e = np.zeros(n)
        e[i] = 1.0
        cols.append(ar.attnreg(fit.design.formula, data.assign(y=e), **kw).coef.to_numpy())
    return np.column_stack(cols)


def _dense(fit: Any, data: pd.DataFrame, contrasts: np.ndarray, **kw: Any) -> tuple[Any, ...]:
    """CR2 covariance, Satterthwaite df of each contrast and HTZ ν, by n × n matrices."""
    Mc = _derivative(fit, data, **kw)
    X = fit.design.X
    H = X @ Mc
    n = len(data)
    IH = np.eye(n) - H
    B = IH @ IH.T
    e = IH @ data["y"].to_numpy()
    groups = [np.flatnonzero(data["cl"].to_numpy() == g) for g in sorted(set(data["cl"]))]
    A = []
    for idx in groups:
        vals, vecs = np.linalg.eigh(B[np.ix_(idx, idx)])
        A.append((vecs / np.sqrt(vals)) @ vecs.T)
    V = sum(np.outer(Mc[:, g] @ a @ e[g], Mc[:, g] @ a @ e[g]) for g, a in zip(groups, A, strict=True))
    C = contrasts @ Mc  # (q, n)
    G = [IH[g].T @ (a @ C[:, g].T) for g, a in zip(groups, A, strict=True)]  # g_j = (I - H)_j' p_j
    P = np.array([[Gj.T @ Gk for Gk in G] for Gj in G])  # (J, J, q, q)
    tr = np.einsum("jjss->s", P)
    df = tr**2 / np.einsum("jkss->s", P**2)
    omega = np.einsum("jjst->st", P)
    vals, vecs = np.linalg.eigh(omega)
    root_inv = (vecs / np.sqrt(vals)) @ vecs.T
    Bm = np.einsum("su,jkuv,vt->jkst", root_inv, P, root_inv)
    total = np.einsum("jkst,jkts->", Bm, Bm) + np.sum(np.einsum("jkss->jk", Bm) ** 2)
    q = contrasts.shape[0]
    return V, df, q * (q + 1) / total


@pytest.mark.parametrize(("weights", "kw"), [(None, {"method": "ridge", "lam": 3.0}),
                                             ("w", {"method": "ridge", "lam": 3.0}),
                                             ("w", {})])
def test_structured_sums_equal_dense_formulas(weights: str | None, kw: dict[str, Any]) -> None:
    from attnreg.inference.vcov.satterthwaite import htz_nu, _parts, restriction_contrasts

    data = _data("bal_fx")
    kw = {**kw, "weights": weights}
    fit = ar.attnreg("y ~ C(f) + x2 + x1", data, **kw).with_vcov("cluster", **SATT)
    k = len(fit.names)
    R = _unit_rows([1, 2, 3], k)
    V, df, _ = _dense(fit, data, np.eye(k), **kw)
    scale = np.sqrt(np.outer(np.diag(V), np.diag(V)))
    assert np.max(np.abs(fit.vcov.to_numpy() - V) / scale) < 1e-9  # n refits: 1e-12-ish
    assert_allclose(fit.df_coef, df, rtol=1e-9)
    _, _, nu_all = _dense(fit, data, R, **kw)
    assert htz_nu(_parts(fit), restriction_contrasts(fit, R)) == pytest.approx(nu_all, rel=1e-9)


# ------------------------------------------------------------------ refusals

def test_options_that_do_not_apply_are_refused() -> None:
    fit = ar.attnreg(REF["cases"]["bal_fx"]["py_formula"], _data("bal_fx"))
    for cadjust in (False, True):
        with pytest.raises(OptionError, match=r"cadjust applies to type='HC1' and 'HC0'.*"
                                              r"however: cadjust=" + str(cadjust)):
            fit.with_vcov("cluster", cluster="cl", type="CR2", cadjust=cadjust)
    for kind in ("HC1", "HC0"):
        with pytest.raises(OptionError, match=f"df='satterthwaite' needs type='CR2'.*"
                                              f"however: type='{kind}'"):
            fit.with_vcov("cluster", cluster="cl", type=kind, df="satterthwaite")
    with pytest.raises(OptionError, match="df must be one of 'cluster', 'residual', "
                                          "'satterthwaite'"):
        fit.with_vcov("cluster", cluster="cl", type="CR2", df="kr")
    # the front door checks before any work
    with pytest.raises(OptionError, match="df='satterthwaite' needs type='CR2'"):
        ar.attnreg("y ~ x1", _data("bal_fx"), vcov="cluster", cluster="cl", df="satterthwaite")
    # cadjust still applies to HC0/HC1
    a = fit.with_vcov("cluster", cluster="cl", type="HC0", cadjust=False).vcov.to_numpy()
    b = fit.with_vcov("cluster", cluster="cl", type="HC0").vcov.to_numpy()
    assert_allclose(b, a * 8 / 7, rtol=RTOL_EXACT)  # G/(G - 1), G = 8
