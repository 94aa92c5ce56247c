"""Factors encoded without per-row Python: bit for bit patsy's design, names, levels, errors."""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pandas as pd
import patsy
import patsy.categorical
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import attnreg as ar
from attnreg.exceptions import DataError
from attnreg.formula.builder import model_arrays, model_arrays_public
from attnreg.formula.design import build_design
from attnreg.formula.frame import prepare_frame, variable_uses
from attnreg.formula.parse import parse
from attnreg.large.sources import as_source
from attnreg.large.spec import learn_spec
from tests.conftest import RTOL_EXACT

FORMULAS = [
    "y ~ C(g)",
    "y ~ g + x",
    "y ~ 0 + C(g)",
    "y ~ 0 + C(g) + C(h)",
    "y ~ C(g) + C(h) + x",
    "y ~ C(g, Treatment(reference='c')) + x",
    "y ~ C(h, Treatment(reference=2))",
    "y ~ C(g, Sum) + C(h, Helmert)",
    "y ~ C(h, Poly) + C(g, Diff)",
    "y ~ C(g):x",
    "y ~ 0 + C(g):x",
    "y ~ C(g)*x",
    "y ~ C(g):C(h)",
    "y ~ 0 + C(g):C(h) + x",
    "y ~ C(g)*C(h)",
    "y ~ C(g, Sum):C(h):x",
    "y ~ b + cat + C(f)",
    "y ~ C(f):C(b) + C(g)*x",
    "y ~ C(b):x + np.log(z)",
    "y ~ C(cat, Sum) + C(h, levels=[3, 2, 1, 0])",
    "y ~ C(s)",
]


def _frame(n: int, seed: int, missing: bool = True) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "y": rng.normal(size=n), "x": rng.normal(size=n), "z": rng.uniform(1, 2, n),
        "g": rng.choice(list("abcde"), n).astype(object),
        "h": rng.integers(0, 4, n),
        "b": rng.random(n) > 0.5,
        "f": rng.choice([0.5, 1.5, -2.5], n),
        "cat": pd.Categorical(rng.choice(["zz", "yy", "xx"], n), categories=["zz", "yy", "xx"]),
        "s": pd.array(rng.choice(["p", "q", "r"], n), dtype="string"),
    })
    if missing:
        df.loc[[3, 17], "g"] = None
        df.loc[[5], "x"] = np.nan
        df.loc[[8], "f"] = np.nan
        df.loc[[11], "s"] = pd.NA
    return df


def _prepared(formula: str, df: pd.DataFrame) -> tuple[Any, pd.DataFrame, Any]:
    desc = parse(formula)
    uses: dict[str, bool] = {}
    for term in desc.lhs_termlist + desc.rhs_termlist:
        for factor in term.factors:
            for name, outside in variable_uses(factor.code).items():
                uses[name] = uses.get(name, False) or outside
    env = patsy.EvalEnvironment([{"np": np}])
    return desc, prepare_frame(df, uses), env


def _assert_same(formula: str, df: pd.DataFrame) -> None:
    desc, frame, env = _prepared(formula, df)
    fast = model_arrays(desc, frame, env)
    ref = model_arrays_public(desc, frame, env)  # patsy.dmatrices itself
    assert fast.x_info.column_names == ref.x_info.column_names
    assert np.array_equal(fast.X, ref.X)  # bit for bit
    assert np.array_equal(fast.y, ref.y)
    assert np.array_equal(fast.rows, ref.rows)
    assert fast.labels.equals(ref.labels)
    for factor, info in ref.x_info.factor_infos.items():
        mine = fast.x_info.factor_infos[factor]
        assert (mine.type, mine.categories) == (info.type, info.categories)
        if info.categories is not None:
            assert [type(c) for c in mine.categories] == [type(c) for c in info.categories]


@pytest.mark.parametrize("formula", FORMULAS)
def test_design_is_patsys_bit_for_bit(formula: str) -> None:
    _assert_same(formula, _frame(400, 1))


@pytest.mark.parametrize("formula", FORMULAS)
def test_prediction_design_is_patsys_bit_for_bit(formula: str) -> None:
    df = _frame(400, 2)
    design = build_design(formula, df)
    new = _frame(60, 3).iloc[::-1]
    new = new[new["g"].isin(["a", "b", "c", "d", "e"]) | new["g"].isna()]
    X_new, labels = design.rebuild(new)
    frame = prepare_frame(new, {n: False for n in new.columns} | {"x": True, "z": True},
                          numeric=design.numeric_columns)
    (ref,) = patsy.build_design_matrices([design.design_info], frame.reset_index(drop=True),
                                         return_type="dataframe")
    expected = np.full_like(X_new, np.nan)
    expected[ref.index] = ref.to_numpy()
    assert np.array_equal(X_new, expected, equal_nan=True)
    assert labels.equals(new.index)
    back = pickle.loads(pickle.dumps(design))  # the spec pickles and predicts the same
    assert np.array_equal(back.rebuild(new)[0], X_new, equal_nan=True)


_LEVELS = st.sampled_from([["a", "b", "c"], ["b", "a"], ["x", "nan", "y"], ["lo", "hi", "mid", "z"]])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_factor_designs_are_patsys(data: st.DataObject) -> None:
    n = data.draw(st.integers(8, 60), label="n")
    levels = data.draw(_LEVELS, label="levels")
    g = data.draw(st.lists(st.sampled_from([*levels, None]), min_size=n, max_size=n), label="g")
    h = data.draw(st.lists(st.integers(-3, 3), min_size=n, max_size=n), label="h")
    f = data.draw(st.lists(st.sampled_from([0.0, -0.0, 1.5, 2.0, np.nan]), min_size=n,
                           max_size=n), label="f")
    x = data.draw(st.lists(st.floats(-1e3, 1e3), min_size=n, max_size=n), label="x")
    df = pd.DataFrame({"y": np.arange(n, dtype=float), "g": pd.Series(g, dtype=object),
                       "h": h, "f": f, "x": x, "b": np.array(h) > 0})
    term = data.draw(st.sampled_from(["C(g)", "C(h)", "C(f)", "C(g):x", "C(g):C(h)",
                                      "C(h, Sum):C(f)", "C(b):C(g)", "C(g, Helmert)*x"]),
                     label="term")
    intercept = data.draw(st.sampled_from(["", "0 + "]), label="intercept")
    formula = f"y ~ {intercept}{term}"
    desc, frame, env = _prepared(formula, df)
    try:
        model_arrays_public(desc, frame, env)
    except patsy.PatsyError as exc:  # e.g. every row missing: the fast route fails alike
        with pytest.raises(patsy.PatsyError, match=str(exc.message)[:30].replace("(", r"\(")):
            model_arrays(desc, frame, env)
        return
    _assert_same(formula, df)


def test_factors_never_use_patsys_row_loops(monkeypatch: pytest.MonkeyPatch) -> None:
    """String, integer, float and boolean factors: no per-row loop of patsy's runs."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("patsy's per-row loop was used")

    df = _frame(300, 4)
    fit = ar.attnreg("y ~ C(g) * x + C(h, Sum) + C(f):C(b) + C(cat)", df)
    levels = ar.attnreg("y ~ C(h, levels=[3, 2, 1, 0]) + C(g, levels=['e', 'd', 'c', 'b', 'a'])", df)
    monkeypatch.setattr(patsy.categorical.CategoricalSniffer, "sniff", refuse)
    monkeypatch.setattr(patsy.categorical, "categorical_to_int", refuse)
    monkeypatch.setattr(patsy.build, "_build_subterm", refuse)
    again = ar.attnreg("y ~ C(g) * x + C(h, Sum) + C(f):C(b) + C(cat)", df)
    assert np.array_equal(again.design.X, fit.design.X)
    assert np.array_equal(levels.predict(df), ar.attnreg(
        "y ~ C(h, levels=[3, 2, 1, 0]) + C(g, levels=['e', 'd', 'c', 'b', 'a'])", df).predict(df),
        equal_nan=True)
    assert np.array_equal(again.predict(df.iloc[:20]), fit.predict(df.iloc[:20]), equal_nan=True)
    chunked = ar.attnreg("y ~ C(g) * x + C(h, Sum) + C(f):C(b) + C(cat)", df, chunk_rows=70)
    assert chunked.names == fit.names
    assert np.allclose(chunked.predict(df.iloc[:20]), fit.predict(df.iloc[:20]), rtol=RTOL_EXACT,
                       atol=0, equal_nan=True)


def test_unseen_level_names_factor_and_level() -> None:
    df = _frame(200, 5)
    fit = ar.attnreg("y ~ C(g) + C(h) + x", df)
    new = pd.DataFrame({"g": ["a", "q"], "h": [1, 2], "x": [0.0, 1.0]})
    with pytest.raises(DataError, match=r"factor 'C\(g\)' has level 'q' not seen when fitting "
                                        r"\(levels: \['a', 'b', \.\.\., 'd', 'e'\]\)"):
        fit.predict(new)
    with pytest.raises(DataError, match=r"factor 'C\(h\)' has level 7 not seen"):
        fit.predict(new.assign(g="a", h=[1, 7]))
    chunked = ar.attnreg("y ~ C(g) + C(h) + x", df, chunk_rows=50)
    with pytest.raises(DataError, match=r"factor 'C\(g\)' has level 'q' not seen when fitting"):
        chunked.predict(new)


def test_missing_factor_rows_dropped_and_counted() -> None:
    df = _frame(120, 6)
    design = build_design("y ~ C(g) + x + C(s)", df)
    assert sorted(design.dropped_labels) == [3, 5, 11, 17]
    assert design.n_obs == 116


def test_chunked_spec_matches_memory_with_factors() -> None:
    df = _frame(500, 7, missing=False)
    formula = "y ~ C(g) * x + C(h, Sum) + C(f):C(b)"
    spec = learn_spec(formula, as_source(df, chunk_rows=90))
    design = build_design(formula, df)
    assert spec.column_names == design.column_names
    fit = ar.attnreg(formula, df)
    chunked = ar.attnreg(formula, df, chunk_rows=90)
    assert chunked.names == fit.names
    np.testing.assert_allclose(chunked.coef.to_numpy(), fit.coef.to_numpy(), rtol=RTOL_EXACT)


def _dtype_frame() -> pd.DataFrame:
    rng = np.random.default_rng(9)
    n = 300
    df = pd.DataFrame({
        "y": rng.normal(size=n),
        "f32": rng.choice([0.5, 1.25, 3.0], n).astype(np.float32),
        "u8": rng.integers(0, 3, n).astype(np.uint8),
        "i8": rng.integers(-2, 2, n).astype(np.int8),
        "day": pd.date_range("2020-01-01", periods=3).values[rng.integers(0, 3, n)],
        "nullable": pd.array(rng.integers(0, 3, n), dtype="Int64"),
        "flag": pd.array(rng.choice([True, False], n), dtype="boolean"),
        "text": rng.choice(["u", "v", "nan"], n).astype(object),  # patsy reads "nan" as NA
    })
    df.loc[4, "nullable"] = pd.NA
    df.loc[6, "flag"] = pd.NA
    return df


@pytest.mark.parametrize("formula", [
    "y ~ C(f32)", "y ~ C(u8)", "y ~ C(i8, Sum)", "y ~ C(day)", "y ~ C(nullable)",
    "y ~ C(f32):C(u8)", "y ~ C(flag) + C(text)",
])
def test_other_dtypes_are_patsys_bit_for_bit(formula: str) -> None:
    _assert_same(formula, _dtype_frame())
