"""Separation in binomial and Poisson GLMs: found by LP before the fit, the separated rows
dropped (default), warned about, refused, or not checked (``separation=``)."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import attnreg as ar
from attnreg.exceptions import DataError, OptionError, SeparationWarning
from attnreg.glm.separation import find_separation
from tests.conftest import RTOL_EXACT, RTOL_R

# The R values below were computed (R 4.2.2) from these frames written with to_csv:
#   q <- read.csv("quasi.csv"); q$g <- factor(q$g, levels = c("a", "b", "c"))
#   sprintf("%.17g", coef(glm(y ~ x + g, family = binomial, data = subset(q, g != "c"))))
#   p <- read.csv("pois.csv")
#   sprintf("%.17g", coef(glm(y ~ x1 + x2, family = poisson, data = subset(p, x1 == 0))))
R_QUASI = {"(Intercept)": -0.27065722496220479, "x": 1.3640174368273923,
           "g[T.b]": -0.072685609618989594}  # gc is not estimable (R drops the unused level)
R_POIS = {"(Intercept)": 0.79955292982970283, "x2": 0.2634874765602967}  # x1: NA


def quasi() -> pd.DataFrame:
    """Logit data with a factor level (``g == "c"``) whose responses are all 1."""
    rng = np.random.default_rng(27)
    n = 120
    df = pd.DataFrame({"x": np.round(rng.normal(size=n), 3),
                       "g": np.tile(["a", "b", "c"], n // 3)})
    df["y"] = (rng.uniform(size=n) < 1 / (1 + np.exp(-df.x))).astype(float)
    df.loc[df.g == "c", "y"] = 1.0
    return df


def pois() -> pd.DataFrame:
    """ppmlhdfe's example: ``x1`` is nonzero only on (some) rows with ``y = 0``."""
    rng = np.random.default_rng(2019)
    n = 100
    df = pd.DataFrame({"x2": np.round(rng.normal(size=n), 3)})
    df["y"] = rng.poisson(np.exp(0.5 + 0.4 * df.x2)).astype(float)
    df["x1"] = np.where((df.y == 0) & (np.arange(n) % 2 == 0),
                        np.round(rng.uniform(1, 3, n), 3), 0.0)
    return df


def test_complete_separation_is_refused_by_default_and_fitted_with_warn() -> None:
    df = pd.DataFrame({"x": np.linspace(-1, 1, 20)})
    df["y"] = (df.x > 0).astype(float)
    with pytest.raises(DataError, match=r"complete separation: 20 observation\(s\) separated "
                                        r"by .*x.*remove the separating regressors"):
        ar.attnreg("y ~ x", df, method="logit")
    with pytest.raises(DataError, match=r"20 observation\(s\).*separation='drop'"):
        ar.attnreg("y ~ x", df, method="logit", separation="error")
    with pytest.warns(SeparationWarning, match=r"20 observation\(s\) separated by .*x"):
        fit = ar.attnreg("y ~ x", df, method="logit", separation="warn")
    assert fit.separation is not None and not fit.separation.dropped
    assert list(fit.separation.rows) == list(df.index) and "x" in fit.separation.regressors
    assert fit.nobs == 20


def test_quasi_complete_separation_drops_the_level_and_equals_r() -> None:
    df = quasi()
    with pytest.warns(SeparationWarning, match=r"40 observation\(s\) separated by g\[T\.c\]"):
        fit = ar.attnreg("y ~ x + g", df, method="logit")
    sep = fit.separation
    assert sep is not None and sep.dropped and sep.regressors == ["g[T.c]"]
    assert list(sep.rows) == list(df.index[df.g == "c"])
    assert fit.nobs == 80 and np.isnan(fit.coef["g[T.c]"])  # aliased once the rows are out
    assert_allclose(fit.coef[list(R_QUASI)], list(R_QUASI.values()), rtol=RTOL_R)
    moved = pickle.loads(pickle.dumps(fit)).separation
    assert moved.rows.equals(sep.rows) and moved.regressors == sep.regressors


def test_poisson_rows_fitted_by_a_zero_mean_are_dropped() -> None:
    df = pois()
    with pytest.warns(SeparationWarning, match=r"8 observation\(s\) separated by x1"):
        fit = ar.attnreg("y ~ x1 + x2", df, method="poisson")
    assert list(fit.separation.rows) == list(df.index[df.x1 != 0])
    assert fit.separation.regressors == ["x1"] and np.isnan(fit.coef["x1"])
    rest = df[df.x1 == 0]
    sub = ar.attnreg("y ~ x2", rest, method="poisson")
    assert_allclose(fit.coef[["(Intercept)", "x2"]], sub.coef, rtol=RTOL_R)
    assert_allclose(fit.deviance, sub.deviance, rtol=RTOL_R)
    assert_allclose(fit.coef[list(R_POIS)], list(R_POIS.values()), rtol=RTOL_R)
    assert fit.nobs == len(rest) and list(fit.fitted.index) == list(rest.index)


def test_nothing_separated_leaves_the_fit_unchanged() -> None:
    df = quasi()
    df["y"] = np.where(np.arange(len(df)) % 5 == 0, 1 - df.y, df.y)  # level c has zeros now
    with warnings.catch_warnings():
        warnings.simplefilter("error", SeparationWarning)
        fit = ar.attnreg("y ~ x + g", df, method="logit")
    unchecked = ar.attnreg("y ~ x + g", df, method="logit", separation="none")
    assert fit.separation is not None and not fit.separation and unchecked.separation is None
    assert fit.nobs == len(df)
    assert_allclose(fit.coef, unchecked.coef, rtol=RTOL_EXACT)


def test_proportions_constrain_their_rows_and_other_families_are_not_checked() -> None:
    df = quasi()
    df["n"] = 4.0
    df.loc[df.g == "c", "y"] = np.where(np.arange(40) % 2 == 0, 0.75, 1.0)  # 3 of 4 successes
    with warnings.catch_warnings():
        warnings.simplefilter("error", SeparationWarning)
        fit = ar.attnreg("y ~ x + g", df, method="logit", weights="n")
    assert not fit.separation and fit.nobs == len(df)
    gauss = ar.attnreg("y ~ x + g", quasi(), method="glm")
    assert gauss.separation is None


def test_the_lp_finds_every_separable_row() -> None:
    """A direction capped at 1 per row misses row 2 (b2 = 0 is optimal for one LP: the
    objective is 2 b1 - 999 b2); the next LP, row 1 and 3 uncapped, finds it."""
    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, -1000.0], [0.0, 0.0]])
    y = np.array([1.0, 1.0, 1.0, 0.0])
    sep = find_separation(X, y, "binomial", ["a", "b"], pd.RangeIndex(4))
    assert list(sep.rows) == [0, 1, 2]


def test_the_option_is_checked_before_any_work() -> None:
    with pytest.raises(OptionError, match=r"separation must be one of 'drop', 'warn', "
                                          r"'error', 'none', however: separation='ignore'"):
        ar.attnreg("y ~ x", quasi(), method="logit", separation="ignore")


def test_offsets_and_clusters_follow_the_rows_kept() -> None:
    df = pois()
    df["expo"] = np.linspace(1.0, 3.0, len(df))
    df["cl"] = np.arange(len(df)) % 7
    opts = {"method": "poisson", "offset": "np.log(expo)", "vcov": "cluster", "cluster": "cl"}
    with pytest.warns(SeparationWarning, match=r"8 observation\(s\) separated by x1"):
        fit = ar.attnreg("y ~ x1 + x2", df, **opts)
    sub = ar.attnreg("y ~ x2", df[df.x1 == 0], **opts)
    assert_allclose(fit.coef[["(Intercept)", "x2"]], sub.coef, rtol=RTOL_R)
    assert_allclose(fit.std_err[["(Intercept)", "x2"]], sub.std_err, rtol=RTOL_R)
    assert_allclose(fit.null_deviance, sub.null_deviance, rtol=RTOL_R)


def test_the_summary_reports_the_separated_rows() -> None:
    rng = np.random.default_rng(11)
    df = pd.DataFrame({"x": rng.normal(size=60)})
    df["y"] = rng.poisson(2.0, size=60)
    df["sep"] = 0.0
    df.loc[[5, 6], ["y", "sep"]] = [0, 1.0]
    with pytest.warns(SeparationWarning):
        dropped = ar.attnreg("y ~ x + sep", df, method="poisson")
    text = str(dropped.summary())
    assert "  (2 observations separated by sep, removed before the fit; see fit.separation)" in text
    assert text.index("Residual deviance") < text.index("separated by") < text.index("AIC")
    with pytest.warns(SeparationWarning):
        kept = ar.attnreg("y ~ x + sep", df, method="poisson", separation="warn")
    assert "kept: their estimates diverge" in str(kept.summary())
    clean = ar.attnreg("y ~ x", df, method="poisson")
    assert "separated" not in str(clean.summary())


def test_a_fit_that_reaches_its_optimum_needs_no_linear_program(monkeypatch) -> None:
    # a finite stationary point of the strictly concave likelihood proves there is no
    # separation: the linear program is not run (and would fail the test if it were)
    import attnreg.glm.registration as registration

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the linear program ran")

    monkeypatch.setattr(registration, "handle_separation", refuse)
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"x": rng.normal(size=400), "z": rng.normal(size=400)})
    df["y"] = (rng.random(400) < 1 / (1 + np.exp(-0.5 * df.x))).astype(float)
    df["n"] = rng.poisson(np.exp(0.3 + 0.2 * df.z))
    fit = ar.attnreg("y ~ x + z", df, method="logit")
    assert fit.separation is not None and not fit.separation
    assert not ar.attnreg("n ~ x + z", df, method="poisson").separation
    with pytest.raises(AssertionError, match="linear program ran"):  # R's rule alone: checked
        ar.attnreg("y ~ x + z", df, method="logit", control="R")
