"""No silent wrong answers at the edges: extreme scales, degenerate inference, estimability.

References are independent of the code under test: the fit of the unscaled data (itself
checked against statsmodels and R elsewhere), statsmodels on a closed-form reduction,
dense closed forms of the ridge and PCR smoothers, and identities.

Tolerances. Multiplying a column (or the response) by 1e±300 rounds each entry once: a
backward perturbation of relative size eps. On these well-conditioned designs (cond(Z) of
a few units, n = 60) the backward-stable QR moves the coefficients by about n·eps·cond(Z)
≈ 1e-13, far inside RTOL_EXACT. Ridge's λ chosen by a criterion is refined by Brent's method
to within LOG_LAMBDA_XATOL in log λ, so it is compared to twice that, and the fit is then
compared with the unscaled data refitted at the same λ.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from numpy.testing import assert_allclose
from scipy import stats

import attnreg as ar
from attnreg.linear import decompositions
from attnreg.exceptions import (
    DegenerateInferenceWarning,
    EstimabilityWarning,
    InferenceWarning,
    OptionError,
    RankDeficiencyWarning,
    ScaleWarning,
)
from attnreg.inference.vcov.registry import make_vcov_spec, middle_matrix, wald_f
from attnreg.linear.selection import LOG_LAMBDA_XATOL
from tests.conftest import RTOL_EXACT, RTOL_SM

FORMULA = "y ~ x1 + x2 + x3"
METHODS = [("ols", {}), ("ridge", {"lam": 0.7}), ("ridge", {"lam": "gcv"}),
           ("ridge", {"lam": "loo"}), ("pcr", {"k": 2}), ("pcr", {"k": "gcv"})]
SCALES = [1e300, 1e-300]


@pytest.fixture
def frame() -> pd.DataFrame:
    """Well-conditioned predictors, moderate effects (|t| of a few units), labelled rows."""
    rng = np.random.default_rng(11)
    n = 60
    x = rng.standard_normal((n, 3))
    y = 1.0 + x @ np.array([0.3, -0.6, 0.2]) + rng.standard_normal(n)
    return pd.DataFrame({"x1": x[:, 0], "x2": x[:, 1], "x3": x[:, 2], "y": y},
                        index=[f"r{i}" for i in range(n)])


@pytest.fixture
def strict():
    """Any warning except the scale warnings a test expects is an error (RuntimeWarning too)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", ScaleWarning)
        yield


def _fit(data: pd.DataFrame, method: str, tuning: dict) -> ar.LinearResults:
    return ar.attnreg(FORMULA, data=data, method=method, **tuning)


def _same_tuning(scaled, data: pd.DataFrame, method: str, tuning: dict):
    """The unscaled reference fit at the scaled fit's λ or k (checked to agree first)."""
    base = _fit(data, method, tuning)
    if method == "ridge" and isinstance(tuning["lam"], str):
        assert abs(np.log(scaled.lam) - np.log(base.lam)) <= 2 * LOG_LAMBDA_XATOL
        return _fit(data, "ridge", {"lam": scaled.lam})
    if method == "pcr":
        assert scaled.k == base.k
    return base


# ---------------------------------------------------------------- 1.6 extreme scales


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize(("method", "tuning"), METHODS)
def test_scaled_column_gives_the_coefficients_scaled_back(frame, strict, scale: float,
                                                          method: str, tuning: dict) -> None:
    data = frame.copy()
    data["x2"] *= scale
    fit = _fit(data, method, tuning)
    assert fit.aliased == [] and fit.spectrum.rank == 3
    base = _same_tuning(fit, frame, method, tuning)
    back = pd.Series([1.0, 1.0, scale, 1.0], index=base.names)
    assert_allclose(fit.coef * back, base.coef, rtol=RTOL_EXACT)
    assert_allclose(fit.std_err * back, base.std_err, rtol=RTOL_EXACT)
    assert_allclose(fit.t_value, base.t_value, rtol=RTOL_EXACT)
    assert_allclose(fit.p_value, base.p_value, rtol=RTOL_EXACT)
    ci = fit.conf_int()
    assert_allclose(ci.mul(back, axis=0), base.conf_int(), rtol=RTOL_EXACT)
    for name in ("sigma", "r_squared", "adj_r_squared", "edf", "loglik"):
        assert_allclose(getattr(fit, name), getattr(base, name), rtol=RTOL_EXACT)
    assert_allclose(fit.f_test.statistic, base.f_test.statistic, rtol=RTOL_EXACT)
    for kind in ("HC1", "HAC"):
        robust, ref = fit.with_vcov(kind), base.with_vcov(kind)
        assert_allclose(robust.std_err * back, ref.std_err, rtol=RTOL_EXACT)
        assert_allclose(robust.f_test.statistic, ref.f_test.statistic, rtol=RTOL_EXACT)
    new, new_base = data.iloc[:5], frame.iloc[:5]
    band = fit.predict(new, interval="prediction")
    assert_allclose(band, base.predict(new_base, interval="prediction"), rtol=RTOL_EXACT)
    assert_allclose(fit.influence(), base.influence(), rtol=RTOL_EXACT)


@pytest.mark.parametrize("scale", [1e250, 1e300, 1e-300])
def test_response_and_a_column_scaled_together(frame, strict, scale: float) -> None:
    """y and x2 both times 1e250: every coefficient is representable, though the refinement's
    A'r (a product of the two scales) is not; the fit is the unscaled one scaled back."""
    data = frame.copy()
    data["y"] *= scale
    data["x2"] *= scale
    fit = _fit(data, "ols", {})
    base = _fit(frame, "ols", {})
    back = pd.Series([1 / scale, 1 / scale, 1.0, 1 / scale], index=base.names)
    assert_allclose(fit.coef * back, base.coef, rtol=RTOL_EXACT)
    assert_allclose(fit.std_err * back, base.std_err, rtol=RTOL_EXACT)
    assert_allclose(fit.r_squared, base.r_squared, rtol=RTOL_EXACT)


@pytest.mark.parametrize("scale", SCALES)
def test_covariance_entries_outside_float64_are_flagged(frame, scale: float) -> None:
    data = frame.copy()
    data["x2"] *= scale
    fit, base = _fit(data, "ols", {}), _fit(frame, "ols", {})
    with pytest.warns(ScaleWarning, match=r"covariance entries of x2 are outside the float64"):
        V = fit.vcov
    # Var(b_x2) = base / scale² is about 1e∓600: it underflows to 0 or overflows to inf ...
    assert V.loc["x2", "x2"] == (0.0 if scale > 1 else np.inf)
    # ... while the cross terms (about 1e∓300) and the rest are right
    assert_allclose(V.loc["x2", "x1"] * scale, base.vcov.loc["x2", "x1"], rtol=RTOL_EXACT)
    rest = ["(Intercept)", "x1", "x3"]
    assert_allclose(V.loc[rest, rest], base.vcov.loc[rest, rest], rtol=RTOL_EXACT)


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize(("method", "tuning"), METHODS)
def test_scaled_response_gives_every_statistic_or_a_warning(frame, scale: float, method: str,
                                                            tuning: dict) -> None:
    data = frame.assign(y=frame["y"] * scale)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = _fit(data, method, tuning)
    # the only warning at fit time: the selection criterion's values leave float64
    assert all(issubclass(w.category, ScaleWarning) and "criterion" in str(w.message)
               for w in caught)
    assert bool(caught) == (method != "ols" and isinstance(next(iter(tuning.values())), str))
    assert fit.spectrum.y_scale != 1.0  # the response was divided by a power of two
    base = _same_tuning(fit, frame, method, tuning)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_allclose(fit.coef / scale, base.coef, rtol=RTOL_EXACT)
        assert_allclose(fit.std_err / scale, base.std_err, rtol=RTOL_EXACT)
        assert_allclose(fit.sigma / scale, base.sigma, rtol=RTOL_EXACT)
        assert_allclose(fit.conf_int() / scale, base.conf_int(), rtol=RTOL_EXACT)
        assert_allclose(fit.t_value, base.t_value, rtol=RTOL_EXACT)
        assert_allclose(fit.p_value, base.p_value, rtol=RTOL_EXACT)
        for name in ("r_squared", "adj_r_squared"):
            assert_allclose(getattr(fit, name), getattr(base, name), rtol=RTOL_EXACT)
        assert_allclose(fit.f_test, base.f_test, rtol=RTOL_EXACT)
        # log-likelihood: the Gaussian density of y·s is that of y divided by s per row
        assert_allclose(fit.loglik, base.loglik - fit.nobs * np.log(scale), rtol=RTOL_EXACT)
        for kind in ("HC3", "HAC"):
            robust, ref = fit.with_vcov(kind), base.with_vcov(kind)
            assert_allclose(robust.std_err / scale, ref.std_err, rtol=RTOL_EXACT)
            assert_allclose(robust.f_test, ref.f_test, rtol=RTOL_EXACT)
        band = fit.predict(data.iloc[:4], interval="confidence")
        assert_allclose(band / scale, base.predict(frame.iloc[:4], interval="confidence"),
                        rtol=RTOL_EXACT)
        assert_allclose(fit.influence(), base.influence(), rtol=RTOL_EXACT)
        str(fit.summary())
    # sums of squares are about 1e±600: inf or 0, and said so
    lost = np.inf if scale > 1 else 0.0
    for name, what in (("rss", "residual sum of squares"), ("tss", "total sum of squares")):
        with pytest.warns(ScaleWarning, match=what):
            assert getattr(fit, name) == lost
    with pytest.warns(ScaleWarning, match="covariance entries"):
        V = fit.vcov.to_numpy()
    assert np.all(np.abs(V) == lost)


def test_ordinary_scales_keep_the_response_by_reference(frame) -> None:
    """Rescaling is exact and only used when needed: ordinary data is not copied."""
    fit = _fit(frame.assign(y=frame["y"] * 1e100), "ols", {})
    assert fit.spectrum.y_scale == 1.0 and fit.spectrum.y is fit.design.y


def test_one_value_near_the_float64_maximum(frame, monkeypatch, strict) -> None:
    """x1 = 1e308 in one row: a dummy for that row; closed form from the other rows."""
    data = frame.copy()
    data.loc["r0", "x1"] = 1e308
    # the other rows' x1 (order one) times a coefficient of order 1e-308 changes nothing: the
    # fit is the regression of y on x2, x3 without row r0, plus b_x1 = its residual / 1e308
    rest = data.drop(index="r0")
    sub = sm.OLS(rest["y"], sm.add_constant(rest[["x2", "x3"]])).fit()
    x0 = np.r_[1.0, data.loc["r0", ["x2", "x3"]].to_numpy(float)]
    b1 = (data.loc["r0", "y"] - x0 @ sub.params.to_numpy()) / 1e308
    se1 = np.sqrt(sub.scale + x0 @ sub.cov_params().to_numpy() @ x0) / 1e308
    tss = float(((data["y"] - data["y"].mean()) ** 2).sum())
    for lazy in (False, True):
        monkeypatch.setattr(decompositions, "LAZY_U_MIN_CELLS", 0 if lazy else 200_000)
        fit = _fit(data, "ols", {})
        assert fit.aliased == [] and fit.spectrum.U.is_stored != lazy
        coef = fit.coef
        assert_allclose(coef[["(Intercept)", "x2", "x3"]], sub.params, rtol=RTOL_SM)
        assert_allclose(coef["x1"], b1, rtol=RTOL_SM)
        se = fit.std_err
        assert_allclose(se[["(Intercept)", "x2", "x3"]], sub.bse, rtol=RTOL_SM)
        assert_allclose(se["x1"], se1, rtol=RTOL_SM)
        assert fit.df_resid == sub.df_resid
        assert_allclose(fit.sigma, np.sqrt(sub.scale), rtol=RTOL_SM)
        assert_allclose(fit.r_squared, 1.0 - sub.ssr / tss, rtol=RTOL_SM)


def test_column_whose_norm_overflows(frame, strict) -> None:
    """Two values of 1e308 (the column's norm is beyond float64): the same fit as the column
    divided by 2^1000 (exact), coefficients scaled back."""
    data = frame.copy()
    data.loc[["r0", "r5"], "x1"] = 1e308
    fit = _fit(data, "ols", {})
    assert fit.aliased == []
    ref = _fit(data.assign(x1=np.ldexp(data["x1"].to_numpy(), -1000)), "ols", {})
    back = pd.Series([1.0, 2.0**-1000, 1.0, 1.0], index=ref.names)
    assert_allclose(fit.coef, ref.coef * back, rtol=RTOL_EXACT)
    assert_allclose(fit.std_err, ref.std_err * back, rtol=RTOL_EXACT)
    assert_allclose(fit.sigma, ref.sigma, rtol=RTOL_EXACT)


@pytest.mark.parametrize("scale", SCALES)
def test_wide_design_with_a_scaled_column(frame, strict, scale: float) -> None:
    small = frame.iloc[:3]
    fit = _fit(small.assign(x2=small["x2"] * scale), "ridge", {"lam": 0.5})
    base = _fit(small, "ridge", {"lam": 0.5})
    back = pd.Series([1.0, 1.0, scale, 1.0], index=base.names)
    assert_allclose(fit.coef * back, base.coef, rtol=RTOL_EXACT)


def test_unstandardised_ridge_on_a_huge_column(frame) -> None:
    data = frame.assign(x2=frame["x2"] * 1e300)
    with pytest.raises(OptionError, match=r"no ridge penalty can be searched.*standardize=True"):
        ar.attnreg(FORMULA, data=data, method="ridge", standardize=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit = ar.attnreg(FORMULA, data=data, method="ridge", lam=2.0, standardize=False)
    # a penalty λ b² is nothing next to that column's data: its filter factor is exactly 1
    assert fit.filtered.f[0] == 1.0 and np.all(np.isfinite(fit.coef))


def test_constant_response(frame) -> None:
    data = frame.assign(y=1.0)
    fit = _fit(data, "ols", {})
    assert_allclose(fit.coef, [1.0, 0.0, 0.0, 0.0], atol=0)
    with pytest.warns(InferenceWarning, match="no variation"):
        assert np.isnan(fit.r_squared)
    with pytest.warns(InferenceWarning, match="perfect fit"):
        assert np.isnan(fit.f_test.statistic)


# ---------------------------------------------------------------- 1.7 degenerate inference


TWO_ROWS = pd.DataFrame({"y": [1.0, 3.0], "x": [0.0, 1.5]}, index=["a", "b"])


@pytest.mark.parametrize(("method", "tuning"), [("ridge", {"lam": "gcv"}), ("ridge", {"lam": 1.0}),
                                                ("pcr", {"k": 1})])
def test_less_than_one_residual_df_gives_nan_inference(method: str, tuning: dict) -> None:
    fit = ar.attnreg("y ~ x", data=TWO_ROWS, method=method, **tuning)
    assert fit.df_resid < 1.0
    with pytest.warns(DegenerateInferenceWarning, match=r"residual degrees of freedom n - tr\(H\)"):
        assert np.isnan(fit.sigma)
    # the coefficients are still the filter's (closed form: one centred predictor)
    xc, yc = TWO_ROWS["x"] - 0.75, TWO_ROWS["y"] - 2.0
    z = xc / np.sqrt((xc**2).mean())
    f = 1.0 if method == "pcr" else (z @ z) / (z @ z + fit.lam)
    slope = f * (z @ yc) / (z @ z) / np.sqrt((xc**2).mean())
    assert_allclose(fit.coef, [2.0 - 0.75 * slope, slope], rtol=RTOL_EXACT)
    assert np.isfinite(fit.r_squared)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateInferenceWarning)
        for robust in (fit, fit.with_vcov("HC1"), fit.with_vcov("HC3")):
            for values in (robust.std_err, robust.t_value, robust.p_value, robust.conf_int(),
                           robust.vcov, robust.predict(TWO_ROWS, interval="prediction")[["lwr", "upr"]]):
                assert np.all(np.isnan(values.to_numpy()))
            assert np.isnan(robust.f_test.statistic) and np.isnan(robust.f_test.p_value)
            assert np.isnan(robust.adj_r_squared)
        str(fit.summary())


def test_wide_ridge_interpolating_by_gcv_gives_nan_inference() -> None:
    """GCV on 20 rows and 50 predictors drives λ to the grid's end: n − tr(H) ≈ 7e-7."""
    rng = np.random.default_rng(7)
    X = rng.standard_normal((20, 50))
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(50)])
    frame["y"] = X[:, :3] @ np.array([1.0, 2.0, -1.0]) + rng.standard_normal(20)
    fit = ar.attnreg("y ~ .", data=frame, method="ridge")
    with pytest.warns(DegenerateInferenceWarning):
        assert np.all(np.isnan(fit.t_value))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.all(np.isfinite(ar.attnreg("y ~ .", data=frame, method="ridge",
                                             lam=30.0).t_value))


def test_one_residual_df_is_enough() -> None:
    """The threshold's boundary: PCR with k = rank on rank + 2 rows is OLS on 1 df."""
    rng = np.random.default_rng(5)
    frame = pd.DataFrame(rng.standard_normal((4, 3)), columns=["y", "x1", "x2"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit = ar.attnreg("y ~ x1 + x2", data=frame, method="pcr", k=2)
        assert fit.df_resid == 1.0
        ref = sm.OLS(frame["y"], sm.add_constant(frame[["x1", "x2"]])).fit()
        assert_allclose(fit.std_err.to_numpy(), ref.bse.to_numpy(), rtol=RTOL_SM)
        assert_allclose(fit.p_value.to_numpy(), ref.pvalues.to_numpy(), rtol=RTOL_SM)
        assert_allclose(fit.f_test.statistic, ref.fvalue, rtol=RTOL_SM)


@pytest.fixture
def collinear(frame) -> pd.DataFrame:
    return frame.assign(x3=frame["x1"] + frame["x2"], z=2.0)


def _aliased_fit(data: pd.DataFrame, formula: str = "y ~ x1 + x2 + x3"):
    with pytest.warns(RankDeficiencyWarning, match="singularities"):
        return ar.attnreg(formula, data=data)


def test_prediction_in_the_column_space_is_silent(collinear) -> None:
    fit = _aliased_fit(collinear)
    far = pd.DataFrame({"x1": [1e3, -7.0], "x2": [2.0, 1e-3]})
    far["x3"] = far["x1"] + far["x2"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit.predict(collinear)  # the training rows
        fit.predict(far, interval="prediction")
        fit.attention(far)
        # a departure far below the aliasing tolerance's square root (1e-5) is rounding
        fit.predict(far.assign(x3=far["x3"] * (1 + 1e-12)))


def test_prediction_outside_the_column_space_warns_naming_rows(collinear) -> None:
    fit = _aliased_fit(collinear)
    new = collinear.iloc[:4].copy()
    new.loc[["r1", "r3"], "x3"] += 0.5
    with pytest.warns(EstimabilityWarning, match=r"2 of 4 row\(s\).*x3 are not estimable.*"
                                                 r"predictions depend.*rows 'r1', 'r3'$"):
        fit.predict(new)
    with pytest.warns(EstimabilityWarning, match="predictions and prediction intervals"):
        fit.predict(new, interval="prediction")
    with pytest.warns(EstimabilityWarning, match="attention weights"):
        fit.attention(new)
    # a relative departure of 1e-3 is far above the threshold
    with pytest.warns(EstimabilityWarning, match="1 of 4"):
        fit.predict(collinear.iloc[:4].assign(x3=lambda d: d["x3"] * [1, 1, 1 + 1e-3, 1]))


@pytest.mark.parametrize("scale", SCALES)
def test_estimability_check_is_scale_invariant(collinear, scale: float) -> None:
    data = collinear.assign(x3=collinear["x3"] * scale)
    fit = _aliased_fit(data)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit.predict(data.iloc[:5])
    with pytest.warns(EstimabilityWarning, match="rows 'r0'$"):
        fit.predict(data.iloc[:2].assign(x3=data["x3"].iloc[:2] * [1.01, 1.0]))


def test_constant_column_aliased_with_the_intercept(collinear) -> None:
    fit = _aliased_fit(collinear, "y ~ x1 + z")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit.predict(collinear.iloc[:3])
    with pytest.warns(EstimabilityWarning, match=r"z are not estimable.*rows 'r2'$"):
        fit.predict(collinear.iloc[:3].assign(z=[2.0, 2.0, 3.0]))


# ---------------------------------------------------------------- 1.8 the Wald F


def _smoother(X: np.ndarray, y: np.ndarray, method: str, tuning: float):
    """Slopes = L y of standardised ridge / PCR with an intercept, by dense linear algebra."""
    n = len(y)
    sd = X.std(axis=0)
    Z = (X - X.mean(axis=0)) / sd
    C = np.eye(n) - 1.0 / n
    if method == "ridge":
        A = np.linalg.solve(Z.T @ Z + tuning * np.eye(Z.shape[1]), Z.T)
    else:
        U, s, Vt = np.linalg.svd(Z, full_matrices=False)
        k = int(tuning)
        A = Vt[:k].T @ np.diag(1.0 / s[:k]) @ U[:, :k].T
    L = (A / sd[:, None]) @ C
    H = Z @ A @ C + 1.0 / n  # hat matrix (intercept included)
    return L, H


@pytest.mark.parametrize(("method", "tuning"), [("ridge", 0.7), ("ridge", 40.0), ("pcr", 2)])
@pytest.mark.parametrize("kind", ["HC0", "HC1", "HC3"])
def test_ridge_and_pcr_wald_f_against_the_dense_sandwich(frame, method: str, tuning: float,
                                                         kind: str) -> None:
    """Conditional on λ or k: b' V⁺ b / q with V the sandwich of the linear smoother."""
    arg = {"lam": tuning} if method == "ridge" else {"k": tuning}
    fit = _fit(frame, method, arg).with_vcov(kind)
    X, y = frame[["x1", "x2", "x3"]].to_numpy(), frame["y"].to_numpy()
    L, H = _smoother(X, y, method, tuning)
    e = y - H @ y
    n, df_resid = len(y), len(y) - np.trace(H)
    omega = {"HC0": e**2, "HC1": e**2 * n / df_resid, "HC3": (e / (1 - np.diag(H))) ** 2}[kind]
    V = L @ np.diag(omega) @ L.T
    b = L @ y
    q = np.linalg.matrix_rank(V)
    stat = b @ np.linalg.pinv(V) @ b / q
    assert q == (3 if method == "ridge" else tuning)
    ft = fit.f_test
    assert (ft.df1, ft.df2) == (q, pytest.approx(df_resid, rel=RTOL_EXACT))
    assert_allclose(ft.statistic, stat, rtol=RTOL_SM)
    assert_allclose(ft.p_value, stats.f.sf(stat, q, df_resid), rtol=RTOL_SM)


@pytest.mark.parametrize(("method", "tuning"), [("ols", {}), ("pcr", {"k": 2})])
def test_classical_f_is_the_wald_f(frame, method: str, tuning: dict) -> None:
    """Under σ² Ω the Wald statistic is R's F (ESS / q) / σ² for OLS and PCR."""
    fit = _fit(frame, method, tuning)
    mid = middle_matrix(fit.spectrum, spec=make_vcov_spec("classical"),
                        sigma2=fit.sigma**2, resid_w=fit.resid.to_numpy(),
                        hat=fit.influence()["hat"].to_numpy(), df_resid=fit.df_resid)
    stat, q = wald_f(fit.spectrum, fit.filtered.f, fit.filtered.coef, mid)
    assert q == fit.f_test.df1
    assert_allclose(stat, fit.f_test.statistic, rtol=RTOL_EXACT)


def test_singular_covariance_gives_nan_wald_f(frame) -> None:
    fit = _fit(frame, "ols", {})
    zero = np.zeros((4, 4))
    with pytest.warns(InferenceWarning, match="singular"):
        stat, q = wald_f(fit.spectrum, fit.filtered.f, fit.filtered.coef, zero)
    assert np.isnan(stat) and q == 3


def test_summary_says_the_f_is_a_wald_test(frame) -> None:
    fit = _fit(frame, "ols", {})
    line = [s for s in str(fit.summary()).splitlines() if s.startswith("F-statistic")]
    assert len(line) == 1 and "Wald" not in line[0]
    for kind in ("HC1", "HAC"):
        text = str(fit.with_vcov(kind).summary())
        line = [s for s in text.splitlines() if s.startswith("F-statistic")]
        assert len(line) == 1 and line[0].endswith(f"(Wald test, {kind} covariance)")
