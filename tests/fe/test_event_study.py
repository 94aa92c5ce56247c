"""Event studies: ``i(var, treated, ref=)`` against pyfixest and the dummy columns by hand.

The panel has staggered adoption (cohorts treated from periods 4, 6 and 8) and never-treated
units (``treated`` 0, ``rel_time`` -1). pyfixest is run with ``fixef_tol=1e-12``; RTOL_R
(1e-8, the tolerance pyfixest itself uses against R fixest) bounds what its demeaning leaves,
as in tests/fe/test_fe_pyfixest.py.
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest

import attnreg as ar
from attnreg.exceptions import DataError, FormulaError, InferenceWarning, OptionError
from tests.conftest import RTOL_EXACT, RTOL_R

FORMULA = "y ~ i(rel_time, treated, ref=-1) | unit + time"


def staggered_panel(seed: int = 1, units: int = 40, periods: int = 10) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    unit = np.repeat(np.arange(units), periods)
    time = np.tile(np.arange(periods), units)
    adopt = rng.choice([4, 6, 8, 99], size=units)[unit]
    treated = (adopt < 99).astype(np.int64)
    rel = np.where(treated == 1, time - adopt, -1)
    effect = treated * (rel >= 0) * (1.0 + 0.2 * rel)
    y = 0.5 * unit / units + 0.1 * time + effect + rng.normal(size=unit.size)
    return pd.DataFrame({"y": y, "unit": unit, "time": time, "rel_time": rel,
                         "treated": treated, "x": rng.normal(size=unit.size)})


def by_hand(df: pd.DataFrame, ref: list[int]) -> tuple[pd.DataFrame, list[str]]:
    """The columns treated * (rel_time == k), one per level k not in ``ref``."""
    levels = [k for k in np.unique(df.rel_time) if k not in ref]
    cols = {f"d{j}": (df.rel_time == k).to_numpy() * df.treated.to_numpy()
            for j, k in enumerate(levels)}
    return df.assign(**cols), list(cols)


def test_coefficients_and_clustered_errors_equal_pyfixest() -> None:
    pf = pytest.importorskip("pyfixest")
    df = staggered_panel()
    ref = pf.feols(FORMULA, df, vcov={"CRV1": "unit"}, fixef_tol=1e-12)
    fit = ar.attnreg(FORMULA, df, vcov="cluster", cluster="unit")
    assert fit.names == list(ref.coef().index)  # fixest's names: rel_time::-8:treated
    np.testing.assert_allclose(fit.coef, ref.coef(), rtol=RTOL_R)
    np.testing.assert_allclose(fit.std_err, ref.se(), rtol=RTOL_R)


def test_equals_the_dummy_columns_written_by_hand() -> None:
    df = staggered_panel()
    hand, cols = by_hand(df, [-1])
    fit = ar.attnreg(FORMULA, df, vcov="cluster", cluster="unit")
    dummy = ar.attnreg(f"y ~ {' + '.join(cols)} | unit + time", hand, vcov="cluster",
                       cluster="unit")
    np.testing.assert_allclose(fit.coef, dummy.coef, rtol=RTOL_EXACT)
    np.testing.assert_allclose(fit.vcov, dummy.vcov, rtol=RTOL_EXACT)
    plain = ar.attnreg("y ~ i(rel_time, treated, ref=-1) + x", df)  # without fixed effects
    plain_hand = ar.attnreg(f"y ~ {' + '.join(cols)} + x", hand)
    np.testing.assert_allclose(plain.coef, plain_hand.coef, rtol=RTOL_EXACT)
    np.testing.assert_allclose(plain.std_err, plain_hand.std_err, rtol=RTOL_EXACT)
    assert plain.names[:3] == ["(Intercept)", "rel_time::-8:treated", "rel_time::-7:treated"]


def test_reference_levels_as_a_list_and_without_treated() -> None:
    df = staggered_panel()
    hand, cols = by_hand(df, [-1, -8])
    fit = ar.attnreg("y ~ i(rel_time, treated, ref=[-1, -8]) | unit + time", df)
    dummy = ar.attnreg(f"y ~ {' + '.join(cols)} | unit + time", hand)
    np.testing.assert_allclose(fit.coef, dummy.coef, rtol=RTOL_EXACT)
    assert "rel_time::-8:treated" not in fit.names and "rel_time::-7:treated" in fit.names
    solo = ar.attnreg("y ~ i(rel_time, ref=-1) + x", df)
    dummies = {f"e{j}": (df.rel_time == k).astype(float)
               for j, k in enumerate(k for k in np.unique(df.rel_time) if k != -1)}
    solo_hand = ar.attnreg(f"y ~ {' + '.join(dummies)} + x", df.assign(**dummies))
    np.testing.assert_allclose(solo.coef, solo_hand.coef, rtol=RTOL_EXACT)
    assert solo.names[1] == "rel_time::-8"


def test_treated_as_boolean_and_float_levels_with_missing_values() -> None:
    df = staggered_panel()
    fit = ar.attnreg(FORMULA, df)
    boolean = ar.attnreg(FORMULA, df.assign(treated=df.treated.astype(bool)))
    np.testing.assert_allclose(boolean.coef, fit.coef, rtol=RTOL_EXACT)
    gaps = df.assign(rel_time=df.rel_time.astype(float))
    gaps.loc[[3, 17, 250], "rel_time"] = np.nan  # missing: the rows are left out
    with_nan = ar.attnreg(FORMULA, gaps)
    without = ar.attnreg(FORMULA, df.drop(index=[3, 17, 250]))
    assert with_nan.nobs == len(df) - 3
    assert with_nan.names == without.names  # the float -8.0 is printed -8, as fixest
    np.testing.assert_allclose(with_nan.coef, without.coef, rtol=RTOL_EXACT)


def test_pickled_fit_predicts_new_rows_with_the_fitted_levels() -> None:
    df = staggered_panel()
    fit = ar.attnreg("y ~ i(rel_time, treated, ref=-1) + x", df)
    back = pickle.loads(pickle.dumps(fit))
    new = df.iloc[[5, 15, 99]].copy()  # fewer levels than the fit: the same columns
    X = np.column_stack([np.ones(3)] + [
        (new.rel_time.to_numpy() == k) * new.treated.to_numpy()
        for k in np.unique(df.rel_time) if k != -1] + [new.x.to_numpy()])
    np.testing.assert_allclose(back.predict(new), X @ fit.coef.to_numpy(), rtol=RTOL_EXACT)
    fe = ar.attnreg(FORMULA, df)
    np.testing.assert_allclose(pickle.loads(pickle.dumps(fe)).predict(new), fe.predict(new),
                               rtol=RTOL_EXACT)


def test_unseen_level_gets_zero_columns_and_a_warning() -> None:
    df = staggered_panel()
    fit = ar.attnreg("y ~ i(rel_time, treated, ref=-1) + x", df)
    new = df.iloc[[5, 15]].assign(rel_time=[50, -1])
    with pytest.warns(InferenceWarning, match=r"'rel_time' has level\(s\) not seen .*: 50"):
        got = fit.predict(new)
    as_ref = fit.predict(new.assign(rel_time=-1))
    np.testing.assert_allclose(got, as_ref, rtol=RTOL_EXACT)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit.predict(df.head(3))  # seen levels: no warning


def test_errors_name_the_level_and_the_column() -> None:
    df = staggered_panel()
    with pytest.raises(DataError, match=r"ref=-20 is not a value of 'rel_time' .*-8, -7"):
        ar.attnreg("y ~ i(rel_time, treated, ref=-20) | unit + time", df)
    with pytest.raises(DataError, match=r"ref=\[-1, 99\]|ref=99 is not a value of 'rel_time'"):
        ar.attnreg("y ~ i(rel_time, ref=[-1, 99]) + x", df)
    with pytest.raises(FormulaError, match=r"data has no column 'rel_tme'.*did you mean 'rel_time'"):
        ar.attnreg("y ~ i(rel_tme, treated, ref=-1) | unit + time", df)
    with pytest.raises(DataError, match=r"treated 'grp' must be numeric or boolean"):
        ar.attnreg("y ~ i(rel_time, grp, ref=-1) + x", df.assign(grp="a"))


# ---------------------------------------------------------------- the table and the plot
def test_event_study_table_holds_the_coefficients_and_the_reference() -> None:
    df = staggered_panel()
    fit = ar.attnreg(FORMULA, df, vcov="cluster", cluster="unit")
    tab = fit.event_study(level=0.9)
    assert tab["level"].tolist() == sorted(df.rel_time.unique().tolist())
    assert tab.loc[tab.reference, "level"].tolist() == [-1]
    assert (tab.loc[tab.reference, ["estimate", "std_err", "lower", "upper"]] == 0).all(axis=None)
    rows = tab[~tab.reference]
    ci = fit.conf_int(0.9)
    np.testing.assert_array_equal(rows.estimate, fit.coef[rows.index])
    np.testing.assert_array_equal(rows.std_err, fit.std_err[rows.index])
    np.testing.assert_array_equal(rows.lower, ci.loc[rows.index, "5 %"])
    np.testing.assert_array_equal(rows.upper, ci.loc[rows.index, "95 %"])
    assert tab.index[7] == "rel_time::-1:treated"


def test_event_plot_draws_the_table() -> None:
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    df = staggered_panel()
    fit = ar.attnreg(FORMULA, df, vcov="cluster", cluster="unit")
    tab = fit.event_study(level=0.9)
    ax = fit.plot(kind="event", level=0.9)
    rows = tab[~tab.reference]
    points, _, (bars,) = ax.containers[0]
    np.testing.assert_array_equal(points.get_xdata(), rows.level.astype(float))
    np.testing.assert_array_equal(points.get_ydata(), rows.estimate)
    segments = np.array(bars.get_segments())  # (n_levels, 2 ends, x and y)
    np.testing.assert_allclose(segments[:, 0, 1], rows.lower, rtol=RTOL_EXACT)
    np.testing.assert_allclose(segments[:, 1, 1], rows.upper, rtol=RTOL_EXACT)
    reference = next(line for line in ax.lines if line.get_label() == "reference")
    assert reference.get_xdata().tolist() == [-1.0] and reference.get_ydata().tolist() == [0.0]
    lines = {line.get_gid(): line for line in ax.lines}
    assert list(lines["zero"].get_ydata()) == [0.0, 0.0]
    assert list(lines["event"].get_xdata()) == [-0.5, -0.5]  # before the first post level
    plt.close(ax.figure)


def test_event_plot_chooses_among_several_terms() -> None:
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    df = staggered_panel().assign(cohort=lambda d: np.where(d.treated == 1, "t", "c"))
    fit = ar.attnreg("y ~ i(rel_time, treated, ref=-1) + i(cohort) | time", df)
    with pytest.raises(OptionError, match=r"2 i\(\) terms: choose one with term="):
        fit.event_study()
    assert fit.event_study(term="cohort")["level"].tolist() == ["c", "t"]
    ax = fit.plot(kind="event", term="i(rel_time, treated, ref=-1)")
    assert ax.get_xlabel() == "rel_time"
    plt.close(ax.figure)
    with pytest.raises(OptionError, match=r"term='x' is not one of the fit's i\(\) terms"):
        fit.event_study(term="x")
    with pytest.raises(OptionError, match=r"needs an i\(\) term"):
        ar.attnreg("y ~ x | unit", df).event_study()
    with pytest.raises(OptionError, match=r"kind must be 'lm' .* or 'event'"):
        fit.plot(kind="events")


def test_chunked_fit_builds_the_same_indicators() -> None:
    df = staggered_panel()
    formula = "y ~ i(rel_time, treated, ref=-1) + x"
    fit = ar.attnreg(formula, df)
    chunked = ar.attnreg(formula, df, chunk_rows=97)  # levels gathered chunk by chunk
    assert chunked.names == fit.names
    got, want = chunked.event_study(), fit.event_study()
    assert got["level"].tolist() == want["level"].tolist()
    np.testing.assert_allclose(got[["estimate", "std_err", "lower", "upper"]],
                               want[["estimate", "std_err", "lower", "upper"]], rtol=RTOL_EXACT)
    back = pickle.loads(pickle.dumps(chunked))
    np.testing.assert_allclose(back.predict(df.head(4)), fit.predict(df.head(4)), rtol=RTOL_EXACT)


def test_dask_fit_builds_the_same_indicators() -> None:
    dd = pytest.importorskip("dask.dataframe")
    df = staggered_panel()
    formula = "y ~ i(rel_time, treated, ref=-1) + x"
    fit = ar.attnreg(formula, df)
    lazy = ar.attnreg(formula, dd.from_pandas(df, npartitions=3))
    assert lazy.names == fit.names
    np.testing.assert_allclose(lazy.coef, fit.coef, rtol=RTOL_EXACT)
