"""Careless input to IV formulas: clear errors, naming the column or option, before any work."""

from __future__ import annotations

import numpy as np
import pytest

import attnreg as ar
from attnreg.exceptions import DataError, FormulaError, OptionError
from tests.iv.test_iv_formula import frame


@pytest.mark.parametrize(("formula", "match"), [
    ("y ~ x1 + z1 | d1 ~ z1 + z2",
     r"'z1' is both an excluded instrument and an exogenous regressor"),
    ("y ~ x1 + d1 | d1 ~ z1 + z2", r"'d1' is listed both as endogenous and as exogenous"),
    ("y ~ x1 | d1 ~ d1 + z2", r"'d1' is both an endogenous regressor and its instrument"),
])
def test_a_term_in_two_roles_is_refused(formula: str, match: str) -> None:
    with pytest.raises(FormulaError, match=match):
        ar.attnreg(formula, frame())


def test_fewer_instruments_than_endogenous_regressors_names_them() -> None:
    with pytest.raises(DataError, match=r"under-identified: 2 endogenous regressor\(s\) \(d1, d2\) "
                                        r"but only 1 excluded instrument\(s\) \(z1\)"):
        ar.attnreg("y ~ x1 | d1 + d2 ~ z1", frame())


def test_a_constant_instrument_is_refused() -> None:
    with pytest.raises(DataError, match=r"instrument 'one' is constant over the rows used"):
        ar.attnreg("y ~ x1 | d1 ~ z1 + one", frame().assign(one=1.0))


def test_an_instrument_equal_to_a_regressor_is_refused() -> None:
    with pytest.raises(DataError, match=r"instrument 'zx' is a linear combination of the exogenous"):
        ar.attnreg("y ~ x1 | d1 ~ z1 + zx", frame().assign(zx=lambda f: 2 * f.x1))


def test_an_endogenous_regressor_spanned_by_the_exogenous_is_refused() -> None:
    with pytest.raises(DataError, match=r"endogenous regressor 'dx' is a linear combination"):
        ar.attnreg("y ~ x1 | dx ~ z1 + z2", frame().assign(dx=lambda f: f.x1 - 1))


def test_missing_values_raise_when_asked() -> None:
    df = frame()
    df.loc[5, "z2"] = np.nan
    with pytest.raises(DataError, match=r"na_action='raise': 1 rows have missing values; the first "
                                        r"is row 5 in column 'z2'"):
        ar.attnreg("y ~ x1 | d1 ~ z1 + z2", df, na_action="raise")


def test_numbers_stored_as_text_are_refused() -> None:
    df = frame().assign(z2=lambda f: f.z2.map(str))
    with pytest.raises(DataError, match=r"column 'z2' is text \(str\): numbers stored as text"):
        ar.attnreg("y ~ x1 | d1 ~ z1 + z2", df)


@pytest.mark.parametrize(("kwargs", "exc", "match"), [
    ({"method": "ridge"}, OptionError, r"method must be one of 'tsls', '2sls', 'liml', 'fuller', 'gmm', "
                                       r"'cue' for a formula with an IV part"),
    ({"vcov": "HC9"}, OptionError, r"vcov must be one of 'classical', 'HC0', 'HC1', 'HC2', 'HC3', "
                                   r"'cluster', .*'HAC'.* for an IV fit, however: vcov='HC9'"),
    ({"vcov": "cluster"}, OptionError, r"vcov='cluster' needs cluster="),
    ({"cluster": "g"}, OptionError, r"cluster= is used by vcov='cluster' only"),
    ({"alpha": 2.0}, OptionError, r"alpha applies to method 'fuller' only"),
    ({"method": "fuller", "alpha": -1.0}, OptionError, r"alpha must be a non-negative number"),
    ({"lam": 1.0}, OptionError, r"option\(s\) lam do not apply to IV method 'tsls'"),
    ({"vcov": "cluster", "cluster": "firm"}, OptionError, r"cluster='firm' is not a column of data"),
])
def test_options_are_checked_with_a_clear_message(kwargs, exc, match) -> None:
    with pytest.raises(exc, match=match):
        ar.attnreg("y ~ x1 | d1 ~ z1 + z2", frame(), **kwargs)


def test_an_iv_method_without_an_iv_part_says_how_to_write_one() -> None:
    with pytest.raises(FormulaError, match=r"method 'liml' needs a formula with an "
                                           r"instrumental-variable part, 'y ~ x \| d ~ z'"):
        ar.attnreg("y ~ x1 + d1", frame(), method="liml")


def test_the_ar_set_needs_one_endogenous_regressor() -> None:
    fit = ar.attnreg("y ~ x1 | d1 + d2 ~ z1 + z2 + z3", frame())
    with pytest.raises(DataError, match=r"needs one endogenous regressor, however the model has 2: "
                                        r"d1, d2"):
        fit.anderson_rubin()


def test_data_of_an_unknown_kind_is_refused_by_name() -> None:
    with pytest.raises(DataError, match=r"an IV formula needs a pandas DataFrame.*a parquet/CSV "
                                        r"path or glob, however: type\(data\) is ndarray"):
        ar.attnreg("y ~ x1 | d1 ~ z1 + z2", np.zeros((3, 3)))
    with pytest.raises(DataError, match=r"the pattern 'data/\*.parquet' matches no files"):
        ar.attnreg("y ~ x1 | d1 ~ z1 + z2", "data/*.parquet")  # read chunk by chunk


def test_a_wald_test_names_the_unknown_coefficient() -> None:
    fit = ar.attnreg("y ~ x1 | d1 ~ z1 + z2", frame())
    with pytest.raises(OptionError, match=r"d9"):
        fit.wald_test("d9 = 0")
    with pytest.raises(OptionError, match=r"linearly dependent"):
        fit.wald_test("d1 = 0, 2*d1 = 0")


def test_cluster_ids_are_checked() -> None:
    df = frame().assign(gg=lambda f: f.g.astype(float))
    df.loc[7, "gg"] = np.nan
    with pytest.raises(DataError, match=r"cluster 'gg' has missing values in the rows used"):
        ar.attnreg("y ~ x1 | d1 ~ z1 + z2", df, vcov="cluster", cluster="gg")
    with pytest.raises(OptionError, match=r"cluster must have one id per row of data \(400\), "
                                          r"however it has shape \(3,\)"):
        ar.attnreg("y ~ x1 | d1 ~ z1 + z2", df, vcov="cluster", cluster=[1, 2, 3])
