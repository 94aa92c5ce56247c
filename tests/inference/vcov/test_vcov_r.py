"""HC4 / HC4m / HC5, sandwich's HAC conventions and z tests (df = Inf) against R.

The reference numbers and their data are in ``tests/reference/vcov_r.json``, written by
``tests/reference/make_vcov_r.R`` (sandwich's ``vcovHC``, ``NeweyWest``, ``vcovHAC``,
``kernHAC``, ``bwAndrews``, ``bwNeweyWest``; lmtest's ``coeftest``, ``coefci`` and
``waldtest`` with ``df = Inf``).
"""

from __future__ import annotations

import json
import re
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import attnreg as ar
from attnreg.exceptions import OptionError, RankDeficiencyWarning
from attnreg.inference.vcov.hac import hac_bandwidth, kernel_weights
from attnreg.inference.vcov.registry import coef_map, scale_back
from tests.conftest import RTOL_EXACT, RTOL_R, RTOL_R_VCOV

REF = json.loads((Path(__file__).parents[2] / "reference" / "vcov_r.json").read_text())
DATASETS = REF["datasets"]


def _frame(dataset: str) -> pd.DataFrame:
    return pd.DataFrame(DATASETS[dataset]["data"])


def _fit(dataset: str, model: str) -> Any:
    m = DATASETS[dataset]["models"][model]
    if model == "aliased":  # x3 = x1 + x2, as R's NA coefficient
        with pytest.warns(RankDeficiencyWarning, match="x3"):
            return ar.attnreg(m["py_formula"], _frame(dataset), weights=m["weights"])
    return ar.attnreg(m["py_formula"], _frame(dataset), weights=m["weights"])


def _assert_vcov(V: np.ndarray, expected: Any) -> None:
    """Entrywise relative to sqrt(V_ii V_jj) (sandwich's bread-meat-bread loses digits);
    aliased coefficients (NaN rows here) are not in sandwich's matrix."""
    R = np.atleast_2d(np.asarray(expected, dtype=float))
    V = np.atleast_2d(V)
    ok = np.isfinite(np.diag(V))
    scale = np.sqrt(np.outer(np.diag(R), np.diag(R)))
    assert np.max(np.abs(V[np.ix_(ok, ok)] - R) / scale) < RTOL_R_VCOV


def _finite(x: Any) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    return x[np.isfinite(x)]


MODELS = [(d, m) for d in DATASETS for m in DATASETS[d]["models"]]
HAC_CASES = [(d, m, i) for d, m in MODELS
             for i in range(len(DATASETS[d]["models"][m].get("hac", [])))]


# ------------------------------------------------------------------------------ HC4-HC5

@pytest.mark.parametrize("kind", ["HC4", "HC4m", "HC5"])
@pytest.mark.parametrize(("dataset", "model"), MODELS)
def test_hc4_hc5_match_sandwich(dataset: str, model: str, kind: str) -> None:
    fit = _fit(dataset, model)
    ref = DATASETS[dataset]["models"][model]["hc"][kind]
    robust = fit.with_vcov(kind)
    _assert_vcov(robust.vcov.to_numpy(), ref["vcov"])
    assert_allclose(_finite(robust.std_err), np.atleast_1d(ref["se"]), rtol=RTOL_R_VCOV)
    assert robust.vcov_spec.label() == f"heteroskedasticity-robust {kind}"
    assert_allclose(_finite(robust.coef), _finite(fit.coef), rtol=0)


def test_hc4_reduces_to_hc3_when_leverage_is_two_means() -> None:
    """Equal hat values h = p/n give δ = 1 for HC4 (HC2-like), 2 for HC4m (HC3): closed forms."""
    x = np.tile([-1.0, 1.0], 10)  # balanced: every hat value is 2/20
    y = np.random.default_rng(3).normal(size=20) + x
    fit = ar.attnreg("y ~ x", pd.DataFrame({"x": x, "y": y}))
    assert_allclose(fit.with_vcov("HC4").vcov.to_numpy(), fit.with_vcov("HC2").vcov.to_numpy(),
                    rtol=RTOL_EXACT)
    assert_allclose(fit.with_vcov("HC4m").vcov.to_numpy(),
                    fit.with_vcov("HC3").vcov.to_numpy(), rtol=RTOL_EXACT)


# ------------------------------------------------------------------------------ HAC

@pytest.mark.parametrize(("dataset", "model", "i"), HAC_CASES)
def test_hac_matches_sandwich(dataset: str, model: str, i: int) -> None:
    ref = DATASETS[dataset]["models"][model]["hac"][i]
    hac = _fit(dataset, model).with_vcov("HAC", **ref["options"])
    _assert_vcov(hac.vcov.to_numpy(), ref["vcov"])
    assert_allclose(_finite(hac.std_err), np.atleast_1d(ref["se"]), rtol=RTOL_R_VCOV)


@pytest.mark.parametrize(("dataset", "model"), [(d, m) for d, m in MODELS
                                                if "bandwidths" in DATASETS[d]["models"][m]])
def test_bandwidths_match_sandwich(dataset: str, model: str) -> None:
    fit = _fit(dataset, model)
    for key, expected in DATASETS[dataset]["models"][model]["bandwidths"].items():
        rule, kernel, prewhite = key.split("_")
        got = hac_bandwidth(fit, kernel.lower(), rule, int(prewhite))
        assert got == pytest.approx(expected, rel=RTOL_R), key


def test_r_defaults_as_documented() -> None:
    """The README's table: NeweyWest(fit), vcovHAC(fit), kernHAC(fit) and their labels."""
    fit = _fit("sim", "ols")
    calls = {e["call"]: e for e in DATASETS["sim"]["models"]["ols"]["hac"]}
    table = {
        "NeweyWest(fit)": ({"maxlags": "newey-west", "prewhite": True},
                           "HAC (Newey-West, Bartlett kernel, lags by the Newey-West (1994) "
                           "rule, VAR(1) prewhitened)"),
        "vcovHAC(fit)": ({"kernel": "qs", "bandwidth": "andrews", "adjust": True},
                         "HAC (Quadratic Spectral kernel, Andrews (1991) AR(1) bandwidth, "
                         "adjusted)"),
        "kernHAC(fit)": ({"kernel": "qs", "prewhite": 1, "adjust": True},
                         "HAC (Quadratic Spectral kernel, Andrews (1991) AR(1) bandwidth, "
                         "VAR(1) prewhitened, adjusted)"),
    }
    bw = DATASETS["sim"]["models"]["ols"]["bandwidths"]
    chosen = {"NeweyWest(fit)": ("lags by the Newey-West (1994) rule",
                                 f"{int(bw['newey-west_Bartlett_1'])} lags (Newey-West (1994) rule)"),
              "vcovHAC(fit)": ("bandwidth", f"bandwidth {bw['andrews_Quadratic Spectral_0']:.4g}"),
              "kernHAC(fit)": ("bandwidth", f"bandwidth {bw['andrews_Quadratic Spectral_1']:.4g}")}
    for call, (options, label) in table.items():
        hac = fit.with_vcov("HAC", **options)
        _assert_vcov(hac.vcov.to_numpy(), calls[call]["vcov"])
        assert hac.vcov_spec.label() == label
        # the summary names what the rule chose on this fit (R's floor(bwNeweyWest), bwAndrews)
        summary_label = label.replace(*chosen[call])
        assert f"Standard errors: {summary_label}" in str(hac.summary()), summary_label


def test_bartlett_bandwidth_is_maxlags_plus_one() -> None:
    """Bartlett weights 1 - j/b with b = L + 1 are NeweyWest(lag = L): the spellings agree,
    and plain with_vcov("HAC") is still floor(4 (n/100)^(2/9)) lags, not prewhitened."""
    fit = _fit("lake", "trend")
    for prewhite in (False, 2):
        a = fit.with_vcov("HAC", maxlags=5, prewhite=prewhite).vcov.to_numpy()
        b = fit.with_vcov("HAC", kernel="bartlett", bandwidth=6, prewhite=prewhite).vcov
        assert_allclose(a, b.to_numpy(), rtol=RTOL_EXACT)
    plain = fit.with_vcov("HAC")  # n = 98: floor(4 * 0.98^(2/9)) = 3
    assert plain.vcov_spec.maxlags == 3
    assert plain.vcov_spec.label() == "HAC (Newey-West, Bartlett kernel, 3 lags)"
    assert_allclose(plain.vcov.to_numpy(), fit.with_vcov(
        "HAC", kernel="bartlett", bandwidth=4.0).vcov.to_numpy(), rtol=RTOL_EXACT)


def test_long_kernel_sum_by_fft_equals_direct_sum() -> None:
    """Past 64 lags the kernel sum is an FFT convolution: equal to the lag-by-lag sum."""
    fit = _fit("sim", "wls")
    hac = fit.with_vcov("HAC", kernel="parzen", bandwidth=100.0)  # 99 lags: the FFT path
    sp, e = fit.spectrum, fit.weighted_resid.to_numpy()
    S = np.column_stack([sp.sqrt_w / sp.sum_w * e, sp.U[:] * e[:, None]])
    w = kernel_weights(np.arange(100) / 100.0, "parzen")
    omega = w[0] * S.T @ S
    for j in range(1, 100):
        g = S[:-j].T @ S[j:]
        omega += w[j] * (g + g.T)
    Mz, E = coef_map(sp, fit.filtered.f, len(fit.names))  # V = M Ω M'
    assert_allclose(hac.vcov.to_numpy(), scale_back(Mz @ omega @ Mz.T, E), rtol=RTOL_EXACT)


def test_kernel_weights_match_closed_forms() -> None:
    x = np.array([0.0, 0.0005, 0.3, 0.6, 1.0, 2.0])
    assert_allclose(kernel_weights(x, "bartlett"), [1, 0.9995, 0.7, 0.4, 0, 0], rtol=RTOL_EXACT)
    assert_allclose(kernel_weights(x[2:4], "parzen"),
                    [1 - 6 * 0.09 + 6 * 0.027, 2 * 0.4**3], rtol=RTOL_EXACT)
    y = 6 * np.pi * 2.0 / 5
    assert_allclose(kernel_weights(x[-1:], "qs"), [25 / (12 * np.pi**2 * 4) * (
        np.sin(y) / y - np.cos(y))], rtol=RTOL_EXACT)


def test_hac_results_pickle() -> None:
    hac = _fit("sim", "ols").with_vcov("HAC", kernel="qs", prewhite=1, adjust=True)
    back = pickle.loads(pickle.dumps(hac))
    assert_allclose(back.vcov.to_numpy(), hac.vcov.to_numpy(), rtol=0)
    assert back.vcov_spec == hac.vcov_spec


@pytest.mark.parametrize(("options", "message"), [
    ({"kernel": "tukey"}, r"kernel must be one of 'bartlett', 'parzen', 'qs', however: "
                          r"kernel='tukey'"),
    ({"maxlags": 3, "bandwidth": 2.0}, r"give maxlags .* or bandwidth .*, not both"),
    ({"maxlags": 3, "kernel": "qs"}, r"maxlags is the Bartlett kernel's lag truncation; give "
                                     r"bandwidth= for the 'qs' kernel"),
    ({"bandwidth": -1.0}, r"bandwidth must be a positive number, 'andrews' or 'newey-west', "
                          r"however: bandwidth=-1.0"),
    ({"bandwidth": "silverman"}, r"bandwidth must be .*bandwidth='silverman'"),
    ({"prewhite": -1}, r"prewhite must be True, False or a VAR order .*prewhite=-1"),
    ({"prewhite": 200}, r"prewhite must be smaller than the number of observations \(150\)"),
    ({"adjust": "yes"}, r"adjust must be True or False, however: adjust='yes'"),
])
def test_hac_option_errors(options: dict[str, Any], message: str) -> None:
    with pytest.raises(OptionError, match=message):
        _fit("sim", "ols").with_vcov("HAC", **options)


def test_hac_options_checked_before_the_fit() -> None:
    with pytest.raises(OptionError, match=r"kernel must be one of"):
        ar.attnreg("y ~ x1", _frame("sim"), vcov="HAC", kernel="epanechnikov")


# ------------------------------------------------------------------------------ df = Inf

ZTESTS = list(REF["ztest"])


def _z_fit(case: str) -> Any:
    ref = REF["ztest"][case]
    options = dict(ref["options"])
    kind = options.pop("kind")
    fit = ar.attnreg(ref["py_formula"], _frame(ref["dataset"]))
    return fit.with_vcov(kind, df=np.inf, **options), ref


@pytest.mark.parametrize("case", ZTESTS)
def test_z_tests_match_coeftest(case: str) -> None:
    """coeftest(fit, vcov. = V, df = Inf), coefci(df = Inf), waldtest(test = "Chisq")."""
    fit, ref = _z_fit(case)
    assert fit.df_inference == np.inf
    assert_allclose(fit.t_value.to_numpy(), ref["z_value"], rtol=RTOL_R_VCOV)
    assert_allclose(fit.p_value.to_numpy(), ref["p_value"], rtol=RTOL_R_VCOV)
    assert_allclose(fit.conf_int(0.9).to_numpy(), ref["conf_int_90"], rtol=RTOL_R_VCOV)
    wald = fit.wald_test(term=["x1", "x2"] if ref["dataset"] == "sim" else ["wt", "hp"])
    assert wald.test == "Chisq" and wald.df == (abs(ref["wald_df"]), np.inf)  # R: -2 (a difference)
    assert wald.statistic == pytest.approx(ref["wald_chisq"], rel=RTOL_R_VCOV)
    assert wald.p_value == pytest.approx(ref["wald_p"], rel=RTOL_R_VCOV)
    assert fit.f_test.df2 == np.inf  # the summary's joint test: W / q on (q, Inf)
    assert fit.f_test.statistic * fit.f_test.df1 == pytest.approx(ref["wald_chisq"],
                                                                  rel=RTOL_R_VCOV)
    assert fit.f_test.p_value == pytest.approx(ref["wald_p"], rel=RTOL_R_VCOV)


@pytest.mark.parametrize("case", ZTESTS)
def test_z_table_prints_as_coeftest(case: str) -> None:
    """R's print(coeftest(...)) is printCoefmat at digits 5 (summary.lm's is 4): the same
    table, formatted by the same port, is R's text line for line."""
    from attnreg.report.rprint import print_coefmat

    fit, ref = _z_fit(case)
    table = fit.summary().sections[2].table
    assert list(table.columns) == ["Estimate", "Std. Error", "z value", "Pr(>|z|)"]
    table = table.rename(index={"Intercept": "(Intercept)"})
    lines, starred = print_coefmat(table, digits=5)
    printed = ref["printed"]
    assert printed[1] == "z test of coefficients:"
    assert lines == printed[3:3 + len(lines)]
    assert starred == printed[3 + len(lines)].startswith("---")


def test_z_summary_text() -> None:
    fit, _ = _z_fit("mtcars_HC3")
    text = str(fit.summary())
    assert "             Estimate Std. Error z value Pr(>|z|)    " in text
    assert "Wald chi-squared: 71.46 on 2 DF,  p-value: 3.038e-16  (HC3 covariance)" in text
    assert "Standard errors: heteroskedasticity-robust HC3; z and chi-squared tests" in text
    t = fit.t_test("wt = hp")
    assert list(t.table.columns[:4]) == ["Estimate", "Std. Error", "z value", "Pr(>|z|)"]
    assert str(t).lstrip().startswith("z tests of linear restrictions (each alone), normal")


def test_df_inf_with_cluster_and_hac() -> None:
    """df=np.inf applies to every covariance; a cluster estimator's G - 1 df is overridden."""
    df = _frame("sim").assign(g=np.arange(150) // 15)
    fit = ar.attnreg("y ~ x1 + x2", df)
    cl = fit.with_vcov("cluster", cluster="g", df=np.inf)
    assert cl.df_inference == np.inf
    assert cl.vcov_spec.label() == ("cluster-robust (HC1) by g, 10 clusters; "
                                    "z and chi-squared tests")
    assert_allclose(cl.vcov.to_numpy(), fit.with_vcov("cluster", cluster="g").vcov.to_numpy(),
                    rtol=0)
    hac = ar.attnreg("y ~ x1 + x2", df, vcov="HAC", kernel="qs", df=np.inf)
    assert hac.df_inference == np.inf
    assert pickle.loads(pickle.dumps(hac)).vcov_spec == hac.vcov_spec


@pytest.mark.parametrize("df", [30, -np.inf, True])
def test_df_errors(df: Any) -> None:
    with pytest.raises(OptionError, match=r"df must be np.inf \(z and chi-squared tests\) or, "
                                          r"for a cluster-robust covariance, 'cluster' or "
                                          r"'residual', however: df="):
        _fit("sim", "ols").with_vcov("HC1", df=df)


@pytest.mark.parametrize(("kind", "options", "message"), [
    ("HC4", {}, r"vcov 'HC4' is not computed for a chunked fit"),
    ("HAC", {"kernel": "qs"}, r"a chunked fit's HAC is Bartlett with fixed maxlags"),
    ("HAC", {"maxlags": "newey-west"}, r"a chunked fit's HAC is Bartlett with fixed maxlags"),
])
def test_chunked_fit_refuses_what_it_does_not_compute(kind: str, options: dict[str, Any],
                                                      message: str) -> None:
    fit = ar.attnreg("y ~ x1 + x2", _frame("sim"), chunk_rows=50)
    with pytest.raises(OptionError, match=message):
        fit.with_vcov(kind, **options)


def test_readme_table_of_r_calls() -> None:
    """Each row of the README's "R (sandwich) | attnreg" table reproduces R's covariance."""
    text = (Path(__file__).parents[3] / "README.md").read_text()
    rows = re.findall(r"^  \| `(\w+\(fit[^`]*\))` \| `(with_vcov\([^`]*\))` \|$", text, re.M)
    assert len(rows) >= 7
    for dataset, model in (("sim", "ols"), ("lake", "trend")):
        fit = _fit(dataset, model)
        calls = {e["call"]: e for e in DATASETS[dataset]["models"][model]["hac"]}
        for r_call, py_call in rows:
            hac = eval(f"fit.{py_call}", {"fit": fit})  # the README text, run as written
            _assert_vcov(hac.vcov.to_numpy(), calls[r_call]["vcov"])


def test_prewhitening_needs_rows_for_the_var() -> None:
    rng = np.random.default_rng(5)
    wide = pd.DataFrame(rng.normal(size=(12, 11)), columns=[f"x{i}" for i in range(11)])
    fit = ar.attnreg("x0 ~ " + " + ".join(wide.columns[1:]), wide, method="ridge", lam=1.0)
    with pytest.raises(OptionError, match=r"prewhite=1 fits a VAR\(1\) to 11 score columns, "
                                          r"which needs more than 11 rows after the first 1, "
                                          r"however: n_obs=12"):
        _ = fit.with_vcov("HAC", kernel="qs", prewhite=True).vcov


def test_chunked_fit_refuses_before_reading_the_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    import attnreg.large.fit as large_fit

    def never(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the rows were read")

    monkeypatch.setattr(large_fit, "run_chunked", never)
    with pytest.raises(OptionError, match=r"vcov 'HC5' is not computed for a chunked fit"):
        ar.attnreg("y ~ x1 + x2", _frame("sim"), chunk_rows=50, vcov="HC5")
    with pytest.raises(OptionError, match=r"a chunked fit's HAC is Bartlett"):
        ar.attnreg("y ~ x1 + x2", _frame("sim"), chunk_rows=50, vcov="HAC", prewhite=True)
