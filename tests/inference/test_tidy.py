"""tidy(), glance() and augment(): broom's frames, tested against broom 1.0.3.

The reference ``tests/reference/tidy.json`` is written by ``tests/reference/make_tidy.R``
(broom, sandwich, lmtest) with its data embedded; R is not needed to run these tests. Every
number agrees to 1e-8 relative. Where attnreg deliberately differs from broom (rows not in
the fit, ``.sigma`` of a row of weight zero), the test says so.
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
from attnreg.exceptions import OptionError, RankDeficiencyWarning
from tests.conftest import RTOL_EXACT, RTOL_R  # 1e-10 and 1e-8

REF = json.loads((Path(__file__).parents[1] / "reference" / "tidy.json").read_text())
CASES = REF["cases"]

TIDY = ["term", "estimate", "std.error", "statistic", "p.value"]
GLANCE = ["r.squared", "adj.r.squared", "sigma", "statistic", "p.value", "df", "logLik", "AIC",
          "BIC", "deviance", "df.residual", "nobs"]
DOTS = [".fitted", ".resid", ".hat", ".sigma", ".cooksd", ".std.resid"]


def frame(table: dict[str, list[Any]]) -> pd.DataFrame:
    """A JSON table of make_tidy.R (columns; null = NA) as a DataFrame indexed by .rownames."""
    rows = {k: vals if isinstance(vals, list) else [vals] for k, vals in table.items()}
    cols = {k: [np.nan if v is None else v for v in vals] for k, vals in rows.items()}
    df = pd.DataFrame(cols)
    return df.set_index(".rownames").rename_axis(None) if ".rownames" in df else df


def close(ours: Any, ref: Any, what: str) -> None:
    ours, ref = np.asarray(ours, dtype=float), np.asarray(ref, dtype=float)
    assert ours.shape == ref.shape, what
    assert np.array_equal(np.isnan(ours), np.isnan(ref)), f"{what}: NaN pattern"
    if np.isnan(ref).all():
        return
    # RTOL_R relative, and RTOL_R times the largest |value| absolute (as test_against_r)
    assert_allclose(ours, ref, rtol=RTOL_R, atol=RTOL_R * np.nanmax(np.abs(ref)), err_msg=what)


def fit_case(name: str) -> Any:
    case = CASES[name]
    data = frame(case["data"]) if "data" in case else frame(REF["data"])
    return ar.attnreg(case["formula"], data=data, weights=case["weights"] or None), data


@pytest.fixture(scope="module")
def wls() -> Any:
    return fit_case("wls_factor_na")


def check_tidy(td: pd.DataFrame, ref: dict[str, list[Any]]) -> None:
    expected = frame(ref).set_index("term")
    ours = td.set_index("term").loc[expected.index]
    assert set(td["term"]) == set(expected.index)
    for col in expected.columns:
        close(ours[col], expected[col], col)


def check_glance(g: pd.DataFrame, ref: dict[str, list[Any]]) -> None:
    assert list(g.columns) == GLANCE and g.shape == (1, 12)
    expected = frame(ref)
    for col in GLANCE:
        close(g[col], expected[col], col)


# ---------------------------------------------------------------------------- against broom
@pytest.mark.filterwarnings("ignore::attnreg.exceptions.RankDeficiencyWarning")
@pytest.mark.parametrize("name", list(CASES))
def test_tidy_and_glance_equal_broom(name: str) -> None:
    fit, _ = fit_case(name)
    ref = CASES[name]
    conf = "conf.low" in ref["tidy"]
    level = 0.9 if name == "wls_factor_na" else 0.95
    td = fit.tidy(conf_int=conf, conf_level=level)
    assert list(td.columns) == TIDY + (["conf.low", "conf.high"] if conf else [])
    check_tidy(td, ref["tidy"])
    check_glance(fit.glance(), ref["glance"])


def test_tidy_under_hc1_equals_coeftest(wls: Any) -> None:
    """``broom::tidy(lmtest::coeftest(fit, vcov = sandwich::vcovHC(fit, "HC1")))``."""
    fit, _ = wls
    check_tidy(fit.with_vcov("HC1").tidy(conf_int=True), CASES["wls_factor_na"]["tidy_hc1"])
    assert not np.allclose(fit.tidy()["std.error"], fit.with_vcov("HC1").tidy()["std.error"])


def test_tidy_under_cluster_equals_coeftest(wls: Any) -> None:
    """``tidy(coeftest(fit, vcov = vcovCL(fit, cluster = ~firm, type = "HC1"), df = G - 1))``:
    the clustered standard errors with t on G − 1 = 7 degrees of freedom."""
    fit, _ = wls
    try:
        clustered = fit.with_vcov("cluster", cluster="firm")
    except (OptionError, TypeError):
        pytest.skip("cluster-robust covariances are not available")
    assert clustered.df_inference == 7
    check_tidy(clustered.tidy(conf_int=True), CASES["wls_factor_na"]["tidy_cluster"])


def test_augment_training_rows_equal_broom(wls: Any) -> None:
    """Weights, a factor and rows dropped for missing values (na.omit): the model's rows."""
    fit, _ = wls
    ref = frame(CASES["wls_factor_na"]["augment"])
    au = fit.augment()
    assert au.index.tolist() == ref.index.tolist()  # NA rows r04, r17, r29 are not there
    assert au.columns.tolist() == ["y", "C(g)[T.b]", "C(g)[T.c]", "x1", "x2", "(weights)",
                                   *DOTS]
    for col in ["y", "(weights)", *DOTS]:
        close(au[col], ref[col], col)


def test_augment_training_intervals_equal_broom(wls: Any) -> None:
    fit, _ = wls
    ref = frame(CASES["wls_factor_na"]["augment_train_pred"])
    au = fit.augment(interval="prediction", se_fit=True)
    assert au.columns[-8:-5].tolist() == [".lower", ".upper", ".se.fit"]
    for col in ref.columns:
        close(au.loc[ref.index, col], ref[col], col)


@pytest.mark.parametrize(("key", "options"), [
    ("augment_new_conf", {"interval": "confidence", "se_fit": True}),
    ("augment_new_pred", {"interval": "prediction"})])
def test_augment_newdata_equals_broom(wls: Any, key: str, options: dict[str, Any]) -> None:
    fit, _ = wls
    ref = frame(CASES["wls_factor_na"][key])
    new = frame(REF["newdata"])
    au = fit.augment(newdata=new, **options)
    assert au.columns.tolist() == ref.columns.tolist()  # the newdata's columns, then broom's
    for col in [c for c in ref.columns if c.startswith(".")]:
        close(au[col], ref[col], col)  # row n4 has a missing x1: NaN, as broom
    pd.testing.assert_frame_equal(au[new.columns], new)
    assert new.columns.tolist() == ["x1", "x2", "g", "y", "w"]  # newdata unchanged


def test_augment_with_data_equals_broom_na_exclude() -> None:
    """``augment(lm(..., na.action = na.exclude), data = df)``: every row of the data.

    broom pads the rows not in the fit with .hat 0 and .sigma = σ (R's ``influence()``
    padding); attnreg gives NaN in every dot column of a row it did not fit.
    """
    fit, _ = fit_case("ols_exclude")
    data = frame(REF["data"])
    ref = frame(CASES["ols_exclude"]["augment"])
    au = fit.augment(data=data)
    assert au.index.tolist() == data.index.tolist() == ref.index.tolist()
    assert au.columns.tolist() == [*data.columns, *DOTS]
    pd.testing.assert_frame_equal(au[data.columns], data)
    gone = ["r04", "r17", "r29"]
    assert au.loc[gone, DOTS].isna().all().all()
    assert (ref.loc[gone, ".hat"] == 0).all()
    kept = ref.index.difference(gone, sort=False)
    for col in DOTS:
        close(au.loc[kept, col], ref.loc[kept, col], col)
    for col in [".fitted", ".resid", ".cooksd", ".std.resid"]:  # broom's NA there too
        assert ref.loc[gone, col].isna().all()


def test_augment_zero_weights_equal_broom() -> None:
    """Rows of weight zero stay in the frame: .hat and .cooksd 0, .std.resid NaN as broom;
    .sigma is σ (broom writes 0), which is what leaving out such a row gives."""
    fit, data = fit_case("wls_zero_weights")
    ref = frame(CASES["wls_zero_weights"]["augment"])
    au = fit.augment()
    assert au.index.tolist() == ref.index.tolist() == data.index.tolist()
    zero = data.index[data["w"] == 0]
    assert len(zero) == 3 and fit.nobs == len(data) - 3
    for col in DOTS:
        mask = ~ref.index.isin(zero) if col == ".sigma" else slice(None)
        close(au.loc[mask, col], ref.loc[mask, col], col)
    assert (ref.loc[zero, ".sigma"] == 0).all()
    assert_allclose(au.loc[zero, ".sigma"], fit.sigma, rtol=RTOL_EXACT)
    assert (au.loc[zero, "(weights)"] == 0).all()


def test_log_response_without_intercept_equals_broom() -> None:
    """.resid of newdata uses log(yp) evaluated on it; glance's F has rank df."""
    fit, _ = fit_case("log_noint")
    case = CASES["log_noint"]
    ref = frame(case["augment"])
    au = fit.augment()
    assert au.columns[0] == "np.log(yp)"
    for col in DOTS:
        close(au[col], ref[col], col)
    new = frame(case["newdata"])
    ref_new = frame(case["augment_new"])
    au_new = fit.augment(newdata=new)
    assert au_new.columns.tolist() == ref_new.columns.tolist()
    for col in [".fitted", ".resid"]:
        close(au_new[col], ref_new[col], col)
    assert fit.glance().loc[0, "df"] == 2


def test_rank_deficient_and_intercept_only_equal_broom() -> None:
    """An aliased coefficient is a row of NaN (broom's NA); an intercept-only model has no F."""
    with pytest.warns(RankDeficiencyWarning, match="x3"):
        fit, data = fit_case("rank_deficient")
    td = fit.tidy(conf_int=True).set_index("term")
    assert td.loc["x3"].isna().all() and td.drop(index="x3").notna().all().all()
    g = ar.attnreg("y ~ 1", data=data).glance()
    check_glance(g, CASES["rank_deficient"]["glance_intercept_only"])
    assert g[["statistic", "p.value", "df"]].isna().all().all()


# ---------------------------------------------------------------------------- properties
def test_loo_sigma_is_the_sigma_of_a_refit(wls: Any) -> None:
    """.sigma in closed form equals σ of the weighted fit without the row, for every row."""
    fit, data = wls
    au = fit.augment()
    rows = au.index
    refits = [ar.attnreg("y ~ x1 + x2 + C(g)", data=data.loc[rows.drop(r)], weights="w").sigma
              for r in rows[:8]]
    assert_allclose(au[".sigma"].iloc[:8], refits, rtol=RTOL_EXACT)


def test_augment_matches_influence_and_predict(wls: Any) -> None:
    fit, data = wls
    au = fit.augment(interval="confidence", conf_level=0.8)
    infl = fit.influence()
    assert_allclose(au[".hat"], infl["hat"], rtol=RTOL_EXACT)
    assert_allclose(au[".cooksd"], infl["cooks_distance"], rtol=RTOL_EXACT)
    assert_allclose(au[".std.resid"], infl["std_resid"], rtol=RTOL_EXACT)
    band = fit.predict(data.loc[au.index], interval="confidence", level=0.8)
    assert_allclose(au[[".fitted", ".lower", ".upper"]].to_numpy(), band.to_numpy(),
                    rtol=RTOL_EXACT)
    assert_allclose(au[".resid"], fit.resid, rtol=RTOL_EXACT)


def test_robust_covariance_reaches_every_frame(wls: Any) -> None:
    fit, data = wls
    hc = fit.with_vcov("HC3")
    assert_allclose(hc.tidy()["std.error"], hc.std_err, rtol=RTOL_EXACT)
    assert_allclose(hc.tidy()["p.value"], hc.p_value, rtol=RTOL_EXACT)
    assert hc.glance().loc[0, "statistic"] == pytest.approx(hc.f_test.statistic, rel=RTOL_EXACT)
    assert hc.glance().loc[0, "statistic"] != pytest.approx(fit.glance().loc[0, "statistic"])
    se_hc = hc.augment(se_fit=True)[".se.fit"]
    se = fit.augment(se_fit=True)[".se.fit"]
    assert not np.allclose(se_hc, se)
    band = hc.predict(data.loc[se.index], interval="confidence")
    q = (band["upr"] - band["fit"]) / se_hc
    assert_allclose(q, q.iloc[0], rtol=RTOL_EXACT)  # the same t quantile times the HC3 se


@pytest.mark.parametrize("method", ["ridge", "pcr"])
def test_ridge_and_pcr_use_effective_df(method: str) -> None:
    data = frame(REF["data"])
    fit = ar.attnreg("y ~ x1 + x2 + C(g)", data=data, method=method)
    g = fit.glance()
    assert g.loc[0, "df"] == pytest.approx(fit.edf - 1.0, rel=RTOL_EXACT)
    assert g.loc[0, "df.residual"] == pytest.approx(fit.nobs - fit.edf, rel=RTOL_EXACT)
    assert g.loc[0, "AIC"] == pytest.approx(fit.aic, rel=RTOL_EXACT)
    au = fit.augment()
    assert au[".hat"].sum() == pytest.approx(fit.edf, rel=RTOL_EXACT)
    e, h = fit.weighted_resid.to_numpy(), au[".hat"].to_numpy()
    expected = np.sqrt((e @ e - e**2 / (1 - h)) / (fit.nobs - fit.edf - 1))
    assert_allclose(au[".sigma"], expected, rtol=RTOL_EXACT)


def test_frames_are_fresh_copies_and_pickle(wls: Any) -> None:
    fit, _ = wls
    td = fit.tidy()
    td.loc[0, "estimate"] = 1e9
    assert fit.tidy().loc[0, "estimate"] != 1e9
    back = pickle.loads(pickle.dumps(fit))
    pd.testing.assert_frame_equal(back.augment(), fit.augment())
    pd.testing.assert_frame_equal(back.glance(), fit.glance())


# ---------------------------------------------------------------------------- errors
@pytest.mark.parametrize(("call", "message"), [
    (lambda f, d: f.tidy(conf_int="yes"), "conf_int"),
    (lambda f, d: f.tidy(conf_int=True, conf_level=95), "conf_level"),
    (lambda f, d: f.tidy(conf_level=2), "conf_level"),
    (lambda f, d: f.augment(interval="both"), "interval"),
    (lambda f, d: f.augment(conf_level=1.0), "conf_level"),
    (lambda f, d: f.augment(se_fit=1), "se_fit"),
    (lambda f, d: f.augment(data=d, newdata=d), "not both"),
    (lambda f, d: f.augment(data=d.iloc[5:]), "every row of the fit"),
    (lambda f, d: f.augment(data=pd.concat([d, d])), "unique row labels"),
    (lambda f, d: f.augment(data=d.assign(**{".hat": 1.0})), ".hat"),
    (lambda f, d: f.augment(data=d.to_numpy()), "data must be the training DataFrame"),
    (lambda f, d: f.augment(newdata=3), "newdata"),
])
def test_errors_name_the_argument(wls: Any, call: Any, message: str) -> None:
    fit, data = wls
    with pytest.raises(OptionError, match=message.replace(".", r"\.").replace("(", r"\(")):
        call(fit, data)
