"""Chunked (larger-than-memory) fits equal the in-memory fit on the concatenated data.

Every method (OLS, WLS, ridge with λ fixed and by GCV, PCR with k fixed and by GCV) and every
covariance (classical, HC0–HC3, HAC, cluster one- and two-way, Driscoll–Kraay), for pandas
split into chunks, polars and pyarrow inputs and parquet / CSV globs: coefficients and
standard errors to RTOL_EXACT (1e-10) relative.
"""

from __future__ import annotations

import pickle
import re

import numpy as np
import pandas as pd
import pytest

import attnreg as ar
from attnreg.exceptions import DataError, FormulaError, OptionError
from attnreg.large.accumulate import RFactor, chunk_design
from attnreg.large.passes import MeatPart, second_pass
from attnreg.large.results import ChunkedResults
from attnreg.large.sources import as_source, is_large
from attnreg.large.spec import learn_spec
from attnreg.linear.results import LinearResults
from tests.conftest import RTOL_EXACT

CHUNK = 97  # uneven chunks: the last one is short
FORMULA = "y ~ x1 + np.log(x2) + center(x3) + C(g)"


def _data(n: int = 600, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "x1": rng.normal(size=n) + 1e3,           # an offset: centring matters
        "x2": rng.uniform(1, 5, size=n),
        "x3": rng.normal(size=n),
        "g": rng.choice(["a", "b", "c"], size=n),
        "h": rng.choice(["p", "q", "r", "s"], size=n),
        "f": rng.integers(0, 25, size=n),
        "t": np.repeat(np.arange(n // 10), 10)[:n],
        "w": rng.uniform(0.5, 2.0, size=n),
    })
    df["y"] = (1 + 0.5 * df.x1 - np.log(df.x2) + df.x3 + (df.g == "b")
               + rng.normal(size=n) * (1 + df.x3.abs()))
    df.loc[df.index[[n - 9, n - 5, n - 2]], "g"] = "z"  # a level only in the last chunk
    df.loc[[3, 250, 598], "x3"] = np.nan          # NA rows in several chunks
    df.loc[120, "y"] = np.nan
    return df


DATA = _data()


def _close(a: pd.Series, b: pd.Series, rtol: float = RTOL_EXACT) -> None:
    assert list(a.index) == list(b.index)
    np.testing.assert_allclose(a.to_numpy(), b.to_numpy(), rtol=rtol, atol=0)


def _inputs(kind: str, df: pd.DataFrame, tmp_path) -> object:
    if kind == "pandas":
        return df
    if kind == "polars":
        pl = pytest.importorskip("polars")
        return pl.from_pandas(df)
    pa = pytest.importorskip("pyarrow")
    table = pa.Table.from_pandas(df, preserve_index=False)
    if kind == "arrow":
        return table
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    for i, lo in enumerate(range(0, len(df), 150)):
        part = table.slice(lo, 150)
        if kind == "parquet":
            pq.write_table(part, tmp_path / f"part-{i}.parquet", row_group_size=CHUNK)
        else:
            pcsv.write_csv(part, tmp_path / f"part-{i}.csv")
    return str(tmp_path / f"part-*.{kind if kind == 'parquet' else 'csv'}")


METHODS = [
    ("ols", {}),
    ("ols", {"weights": "w"}),
    ("ridge", {"lam": 0.7}),
    ("ridge", {}),  # λ by GCV
    ("pcr", {"k": 3}),
    ("pcr", {}),  # k by GCV
]


@pytest.mark.parametrize("kind", ["pandas", "polars", "arrow", "parquet", "csv"])
@pytest.mark.parametrize(("method", "opts"), METHODS, ids=lambda v: str(v))
def test_every_method_and_input_equals_the_in_memory_fit(kind, method, opts, tmp_path) -> None:
    data = _inputs(kind, DATA, tmp_path)
    mem = ar.attnreg(FORMULA, DATA, method=method, **opts)
    fit = ar.attnreg(FORMULA, data, method=method, chunk_rows=CHUNK, **opts)
    assert isinstance(fit, ChunkedResults)
    if mem.selection is not None and mem.selection.criterion == "gcv":
        # the GCV curve is the same; Brent's minimiser stops within 1e-6 in log λ, so the
        # fits are compared at the λ the chunked fit chose
        np.testing.assert_allclose(fit.selection.scores, mem.selection.scores, rtol=RTOL_EXACT)
        assert fit.selection.value == pytest.approx(mem.selection.value, rel=1e-5)
        tuning = {"lam": fit.lam} if method == "ridge" else {"k": fit.k}
        mem = ar.attnreg(FORMULA, DATA, method=method, **opts, **tuning)
    _close(fit.coef, mem.coef)
    _close(fit.std_err, mem.std_err)
    assert fit.nobs == mem.nobs and fit.n_dropped == len(mem.design.dropped_labels) == 4
    assert fit.sigma == pytest.approx(mem.sigma, rel=RTOL_EXACT)
    assert fit.r_squared == pytest.approx(mem.r_squared, rel=RTOL_EXACT)
    assert fit.f_test.statistic == pytest.approx(mem.f_test.statistic, rel=RTOL_EXACT)


COVARIANCES = [
    ("HC0", {}), ("HC1", {}), ("HC2", {}), ("HC3", {}),
    ("HAC", {"maxlags": 4}), ("HAC", {}), ("HAC", {"maxlags": 150, "adjust": True}),
    ("cluster", {"cluster": "t"}), ("cluster", {"cluster": "t", "type": "HC0", "cadjust": False}),
    ("cluster", {"cluster": "f + t"}), ("cluster", {"cluster": ["f", "t"], "df": "residual"}),
    ("DK", {"time": "t"}), ("DK", {"time": "t", "maxlags": 3, "type": "sss"}),
]


@pytest.mark.parametrize(("kind", "opts"), COVARIANCES, ids=lambda v: str(v))
@pytest.mark.parametrize("method", ["ols", "ridge"])
def test_every_covariance_equals_the_in_memory_one(method, kind, opts) -> None:
    extra = {"lam": 0.7} if method == "ridge" else {"weights": "w"}
    mem = ar.attnreg(FORMULA, DATA, method=method, **extra).with_vcov(kind, **opts)
    fit = ar.attnreg(FORMULA, DATA, method=method, chunk_rows=CHUNK, **extra).with_vcov(kind, **opts)
    _close(fit.std_err, mem.std_err)
    np.testing.assert_allclose(fit.vcov.to_numpy(), mem.vcov.to_numpy(), rtol=1e-9,
                               atol=1e-14 * np.abs(mem.vcov.to_numpy()).max())
    assert fit.vcov_spec.label() == mem.vcov_spec.label()
    assert fit.df_inference == mem.df_inference
    assert fit.f_test.statistic == pytest.approx(mem.f_test.statistic, rel=1e-9, nan_ok=True)
    _close(fit.p_value, mem.p_value, rtol=1e-8)


def test_vcov_at_the_front_door_and_on_parquet(tmp_path) -> None:
    path = _inputs("parquet", DATA, tmp_path)
    fit = ar.attnreg(FORMULA, path, vcov="cluster", cluster="f + t")
    mem = ar.attnreg(FORMULA, DATA, vcov="cluster", cluster="f + t")
    _close(fit.std_err, mem.std_err)
    assert "cluster" in str(fit.summary())


def test_late_levels_and_na_rows_are_counted_and_reported() -> None:
    fit = ar.attnreg(FORMULA, DATA, chunk_rows=CHUNK)
    assert "C(g)[T.z]" in fit.names  # seen only in the last chunk
    spec = learn_spec(FORMULA, as_source(DATA, chunk_rows=CHUNK))
    assert spec.column_names == ar.attnreg(FORMULA, DATA).names
    text = str(fit.summary())
    assert "(4 observations deleted due to missingness)" in text
    assert "4 dropped for missing values" in text
    assert fit.n_read == len(DATA)


def _exact_ols(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The least-squares solution of the stored data in 80-digit arithmetic."""
    mp = pytest.importorskip("mpmath")
    with mp.workdps(80):
        A = mp.matrix(X.tolist())
        b = mp.matrix(y.tolist())
        return np.array([float(v) for v in mp.lu_solve(A.T * A, A.T * b)])


def test_ill_conditioned_design_keeps_the_digits() -> None:
    rng = np.random.default_rng(5)
    n = 3000
    x1 = rng.normal(size=n)
    df = pd.DataFrame({"x1": x1 + 1e4, "x2": x1 + 1e4 + 1e-6 * rng.normal(size=n),
                       "x3": rng.normal(size=n)})
    df["y"] = 1 + df.x1 + df.x2 + df.x3 + rng.normal(size=n)
    mem = ar.attnreg("y ~ x1 + x2 + x3", df)
    sp = mem.spectrum
    assert sp.s[0] / sp.s[-1] >= 1e6  # condition of the scaled, centred design
    fit = ar.attnreg("y ~ x1 + x2 + x3", df, chunk_rows=700)
    assert fit.refinement  # refined over the chunks in extended precision
    exact = _exact_ols(np.column_stack([np.ones(n), df[["x1", "x2", "x3"]]]), df.y.to_numpy())
    err_chunked = np.max(np.abs(fit.coef.to_numpy() / exact - 1))
    err_memory = np.max(np.abs(mem.coef.to_numpy() / exact - 1))
    assert err_chunked < 1e-10 and err_chunked <= err_memory
    _close(fit.coef, mem.coef, rtol=max(2 * err_memory, RTOL_EXACT))
    # SEs come from R alone; the smallest singular value of the scaled design is itself
    # determined only to about cond · eps (1e6 · 1e-16) by any backward-stable QR
    _close(fit.std_err, mem.std_err, rtol=1e-8)
    from attnreg.large.fit import fit_from_factor

    raw = fit_from_factor(fit.spec, fit.factor, "ols")  # the QR alone, unrefined
    assert np.max(np.abs(raw.coef.to_numpy() / exact - 1)) > 10 * err_chunked  # a digit or more


def test_r_factor_merge_is_a_tree_reduction() -> None:
    src = as_source(DATA, chunk_rows=CHUNK)
    spec = learn_spec(FORMULA, src)
    parts = [RFactor.from_chunk(chunk_design(spec, f), spec)
             for f in src.frames(spec.read_columns(), uses=spec.uses)]
    seq = parts[0]
    for p in parts[1:]:
        seq = seq.merge(p)
    while len(parts) > 1:  # pairwise, as a distributed reduction would
        parts = [parts[i].merge(parts[i + 1]) if i + 1 < len(parts) else parts[i]
                 for i in range(0, len(parts), 2)]
    tree = parts[0]
    assert tree.n_obs == seq.n_obs == DATA.shape[0] - 4
    np.testing.assert_allclose(np.abs(tree.centred_r()), np.abs(seq.centred_r()), rtol=1e-10,
                               atol=1e-10 * np.abs(seq.centred_r()).max())
    np.testing.assert_allclose(tree.means(), seq.means(), rtol=1e-13)
    back = pickle.loads(pickle.dumps(tree))
    assert np.array_equal(back.R, tree.R) and back.n_obs == tree.n_obs


def test_meat_parts_merge_in_a_tree_for_hac() -> None:
    from attnreg.large.passes import pass_plan

    fit = ar.attnreg(FORMULA, DATA, chunk_rows=CHUNK)
    plan = pass_plan(fit, "HAC", 130)  # more lags than rows per chunk
    src = as_source(DATA, chunk_rows=40)
    parts = [second_pass(plan, f) for f in src.frames(plan.read_columns(), uses=plan.spec.uses)]
    seq = MeatPart.empty(plan.width, 130)
    for p in parts:
        seq = seq.merge(p)
    while len(parts) > 1:
        parts = [parts[i].merge(parts[i + 1]) if i + 1 < len(parts) else parts[i]
                 for i in range(0, len(parts), 2)]
    np.testing.assert_allclose(parts[0].meat, seq.meat, rtol=1e-10, atol=1e-18)
    mem = ar.attnreg(FORMULA, DATA).with_vcov("HAC", maxlags=130)
    _close(fit.with_vcov("HAC", maxlags=130).std_err, mem.std_err)


@pytest.mark.parametrize(("formula", "term"), [
    ("y ~ bs(x3, df=4)", "bs(x3, df=4)"),
    ("y ~ x1 + lag(x3)", "lag(x3)"),
])
def test_formulas_that_cannot_be_evaluated_chunkwise_are_refused(formula, term) -> None:
    with pytest.raises(FormulaError, match=re.escape(f"the term '{term}'") + ".*chunk by chunk") as info:
        ar.attnreg(formula, DATA, chunk_rows=CHUNK)
    assert info.value.__cause__ is None


def test_clear_errors(tmp_path) -> None:
    with pytest.raises(FormulaError, match="no column 'x9'"):
        ar.attnreg("y ~ x1 + x9", DATA, chunk_rows=CHUNK)
    with pytest.raises(DataError, match="has no rows"):
        ar.attnreg("y ~ x1", DATA.iloc[:0], chunk_rows=CHUNK)
    with pytest.raises(OptionError, match=r"lam='loo'.*GCV"):
        ar.attnreg("y ~ x1", DATA, method="ridge", lam="loo", chunk_rows=CHUNK)
    with pytest.raises(OptionError, match="chunk_rows must be a positive integer"):
        ar.attnreg("y ~ x1", DATA, chunk_rows=0)
    with pytest.raises(OptionError, match="weights of a chunked fit must name a column"):
        ar.attnreg("y ~ x1", DATA, weights=DATA.w.to_numpy(), chunk_rows=CHUNK)
    with pytest.raises(OptionError, match="cannot be fitted chunk by chunk"):
        ar.attnreg("y ~ x1", DATA, method="softmax", chunk_rows=CHUNK)
    fit = ar.attnreg("y ~ x1", DATA, chunk_rows=CHUNK)
    with pytest.raises(OptionError, match="CR2"):
        fit.with_vcov("cluster", cluster="g", type="CR2")
    with pytest.raises(OptionError, match="'nope' is not a column"):
        fit.with_vcov("cluster", cluster="nope")
    with pytest.raises(OptionError, match="vcov type must be one of"):
        fit.with_vcov("HC9")
    with pytest.raises(DataError, match="matches no files"):
        ar.attnreg("y ~ x1", str(tmp_path / "none-*.parquet"))
    bad = DATA.assign(x1=DATA.x1.astype(str))
    with pytest.raises(DataError, match="column 'x1' is text"):
        ar.attnreg("y ~ x1", bad, chunk_rows=CHUNK)
    with pytest.raises(DataError, match=r"na_action='raise'.*row 3"):
        ar.attnreg(FORMULA, DATA, chunk_rows=CHUNK, na_action="raise")


def test_empty_parquet_source(tmp_path) -> None:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"y": pa.array([], pa.float64()), "x": pa.array([], pa.float64())}),
                   tmp_path / "empty.parquet")
    with pytest.raises(DataError, match="has no rows"):
        ar.attnreg("y ~ x", str(tmp_path / "empty.parquet"))


def test_pickling_keeps_files_not_data(tmp_path) -> None:
    path = _inputs("parquet", DATA, tmp_path)
    fit = ar.attnreg(FORMULA, path)
    back = pickle.loads(pickle.dumps(fit))
    _close(back.coef, fit.coef, rtol=0)
    _close(back.std_err, fit.std_err, rtol=0)
    _close(back.with_vcov("HC1").std_err, fit.with_vcov("HC1").std_err)  # re-reads the files
    mem_fit = ar.attnreg(FORMULA, DATA, chunk_rows=CHUNK)
    back = pickle.loads(pickle.dumps(mem_fit))
    assert back.source is None and "pandas DataFrame" in back.source_description
    with pytest.raises(OptionError, match="pass data="):
        back.with_vcov("HC1")
    _close(back.with_vcov("HC1", data=DATA).std_err, mem_fit.with_vcov("HC1").std_err)
    spec = pickle.loads(pickle.dumps(fit.spec))
    assert spec.column_names == fit.spec.column_names
    _close(back.predict(DATA.head(7)), mem_fit.predict(DATA.head(7)), rtol=0)


def test_front_door_routes_by_input(tmp_path) -> None:
    pl = pytest.importorskip("polars")
    small = pl.from_pandas(DATA)
    assert not is_large(small) and is_large(small.lazy()) and is_large("x/*.parquet")
    assert isinstance(ar.attnreg(FORMULA, small), LinearResults)  # small: in memory
    assert isinstance(ar.attnreg(FORMULA, small.lazy()), ChunkedResults)
    assert isinstance(ar.attnreg(FORMULA, DATA), LinearResults)
    fit = ar.attnreg("y ~ .", _inputs("parquet", DATA[["y", "x1", "x2", "g"]], tmp_path))
    mem = ar.attnreg("y ~ .", DATA[["y", "x1", "x2", "g"]])
    _close(fit.coef, mem.coef)
    assert "parquet dataset" in str(fit.summary())


def test_predict_in_memory_and_chunk_by_chunk(tmp_path) -> None:
    path = _inputs("parquet", DATA, tmp_path)
    fit = ar.attnreg(FORMULA, path)
    mem = ar.attnreg(FORMULA, DATA)
    new = DATA.iloc[10:20]
    _close(fit.predict(new), mem.predict(new).rename("fit"))
    parts = list(fit.predict(path))
    assert len(parts) > 1
    whole = pd.concat(parts)
    ok = ~DATA[["x3"]].isna().any(axis=1).to_numpy()
    np.testing.assert_allclose(whole.to_numpy()[ok], mem.predict(DATA[ok]).to_numpy(),
                               rtol=RTOL_EXACT)
    assert np.isnan(whole.to_numpy()[~ok]).all()


def test_summary_layout_and_sampled_residuals(monkeypatch) -> None:
    import attnreg.large.passes as passes

    mem = ar.attnreg(FORMULA, DATA)
    fit = ar.attnreg(FORMULA, DATA, chunk_rows=CHUNK)
    q_mem = mem.summary().statistics["residual_quantiles"]
    q_fit = fit.summary().statistics["residual_quantiles"]
    _close(q_fit, q_mem, rtol=1e-9)  # exact: every residual is kept at this size
    ours, theirs = str(fit.summary()).splitlines(), str(mem.summary()).splitlines()
    start = theirs.index("Coefficients:")
    stop = next(i for i, line in enumerate(theirs) if line.startswith("F-statistic"))
    assert ours[ours.index("Coefficients:"):][: stop - start + 1] == theirs[start:stop + 1]
    monkeypatch.setattr(passes, "RESERVOIR_SIZE", 100)
    small = ar.attnreg(FORMULA, DATA, chunk_rows=CHUNK)
    assert small.stats is None  # one pass only: the residuals wait for their first use
    size = small.residual_stats.sample_values.size
    # each of the 596 rows is in the sample with probability 100/596 (its label's hash):
    # a binomial count, sd 9.1; five sd either side
    assert 55 <= size <= 145
    text = str(small.summary())
    assert f"uniform sample of {size} of 596 rows" in text
    q = small.summary().statistics["residual_quantiles"]
    assert q["Min"] == pytest.approx(q_mem["Min"], rel=1e-12)
    assert q["Max"] == pytest.approx(q_mem["Max"], rel=1e-12)
    again = ar.attnreg(FORMULA, DATA.sample(frac=1.0, random_state=1).sort_index(),
                       chunk_rows=CHUNK // 3 + 1)  # other chunks: the same rows sampled
    np.testing.assert_allclose(np.sort(again.residual_stats.sample_values),
                               np.sort(small.residual_stats.sample_values), rtol=1e-10)
    no = ar.attnreg(FORMULA, DATA, chunk_rows=CHUNK, residuals=False)
    assert no.residual_stats is None and "residuals=False" in str(no.summary())
    _close(no.std_err, mem.std_err)
    eager = ar.attnreg(FORMULA, DATA, chunk_rows=CHUNK, residuals=True)
    assert eager.stats is not None and eager.residual_stats is eager.stats


def test_progress_is_quiet_by_default(capsys) -> None:
    ar.attnreg("y ~ x1", DATA, chunk_rows=CHUNK)
    assert capsys.readouterr().err == ""
    ar.attnreg("y ~ x1", DATA, chunk_rows=CHUNK, progress=True)
    err = capsys.readouterr().err
    assert "pass 1" in err and "pass 2" in err and f"{len(DATA)}/{len(DATA)}" in err


def test_subset_and_zero_weights_match_memory() -> None:
    df = DATA.assign(w=np.where(np.arange(len(DATA)) % 17 == 0, 0.0, DATA.w))
    mem = ar.attnreg(FORMULA, df, weights="w", subset="x2 > 1.5")
    fit = ar.attnreg(FORMULA, df, weights="w", subset="x2 > 1.5", chunk_rows=CHUNK)
    _close(fit.coef, mem.coef)
    _close(fit.std_err, mem.std_err)
    assert fit.nobs == mem.nobs
    assert fit.n_excluded == mem.design.n_subset_excluded


def test_transform_statistics_equal_the_in_memory_ones() -> None:
    formula = "y ~ scale(x1) + standardize(x2, ddof=1) + center(x3)"
    mem = ar.attnreg(formula, DATA)
    fit = ar.attnreg(formula, DATA, chunk_rows=CHUNK)
    _close(fit.coef, mem.coef)
    _close(fit.predict(DATA.head(5)), mem.predict(DATA.head(5)).rename("fit"))


def test_a_csv_column_whose_guessed_type_fails_later_says_how_to_give_it(tmp_path) -> None:
    pa = pytest.importorskip("pyarrow")
    pcsv = pytest.importorskip("pyarrow.csv")
    ds = pytest.importorskip("pyarrow.dataset")
    n = 200_000  # more than pyarrow's first block, from which it guesses the types
    x = np.arange(n) % 7.0
    x[-3] = 2.5  # an integer column until here
    df = pd.DataFrame({"x": x, "y": 1 + np.sin(np.arange(n)) + x})
    path = tmp_path / "late.csv"
    with open(path, "w") as fh:
        fh.write("x,y\n" + "\n".join(f"{a:g},{b!r}" for a, b in zip(df.x, df.y, strict=True))
                 + "\n")
    with pytest.raises(DataError, match=r"CSV conversion error.*Column 'x'.*"
                                        r"column_types=\{'x': pa.float64\(\)\}"):
        ar.attnreg("y ~ x", str(path), chunk_rows=50_000)
    given = ds.dataset(str(path), format=ds.CsvFileFormat(
        convert_options=pcsv.ConvertOptions(column_types={"x": pa.float64()})))
    fit = ar.attnreg("y ~ x", given, chunk_rows=50_000)
    _close(fit.coef, ar.attnreg("y ~ x", df).coef, rtol=1e-10)


def _spy_parquet_batches(monkeypatch) -> list[list[str]]:
    import attnreg.large.readahead as readahead

    seen: list[list[str]] = []
    real = readahead.parquet_batches

    def spy(files, *args, **kwargs):
        seen.append([str(f).rsplit("/", 1)[-1] for f in files])
        return real(files, *args, **kwargs)

    monkeypatch.setattr(readahead, "parquet_batches", spy)
    return seen


def test_a_pyarrow_dataset_of_parquet_files_is_read_a_row_group_at_a_time(tmp_path,
                                                                         monkeypatch) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    ds = pytest.importorskip("pyarrow.dataset")
    df = DATA.dropna()
    # the second file stores x1 as float32: the dataset's schema (float64) is what is read
    pq.write_table(pa.Table.from_pandas(df.iloc[:300], preserve_index=False),
                   tmp_path / "a.parquet", row_group_size=100)
    late = pa.Table.from_pandas(df.iloc[300:], preserve_index=False)
    late = late.set_column(late.schema.get_field_index("x1"), "x1",
                           late.column("x1").cast(pa.float32()))
    pq.write_table(late, tmp_path / "b.parquet", row_group_size=100)
    schema = pa.Table.from_pandas(df, preserve_index=False).schema
    data = ds.dataset(str(tmp_path), format="parquet", schema=schema)
    seen = _spy_parquet_batches(monkeypatch)
    fit = ar.attnreg(FORMULA, data, chunk_rows=CHUNK)
    assert seen and all(files == ["a.parquet", "b.parquet"] for files in seen)
    expect = df.assign(x1=np.concatenate([df.x1.to_numpy()[:300],
                                          df.x1.to_numpy()[300:].astype(np.float32)]))
    _close(fit.coef, ar.attnreg(FORMULA, expect).coef, rtol=1e-10)


def test_filtered_and_hive_partitioned_datasets_are_scanned(tmp_path, monkeypatch) -> None:
    pa = pytest.importorskip("pyarrow")
    ds = pytest.importorskip("pyarrow.dataset")
    df = DATA.dropna().reset_index(drop=True).assign(part=lambda d: d.index % 2)
    ds.write_dataset(pa.Table.from_pandas(df, preserve_index=False), tmp_path / "hive",
                     format="parquet", partitioning=["part"], partitioning_flavor="hive")
    hive = ds.dataset(str(tmp_path / "hive"), format="parquet", partitioning="hive")
    seen = _spy_parquet_batches(monkeypatch)
    by_part = ar.attnreg("y ~ x1 + part", hive, chunk_rows=CHUNK)
    assert seen == []
    ordered = hive.to_table().to_pandas()  # the scan's order of rows
    _close(by_part.coef, ar.attnreg("y ~ x1 + part", ordered).coef, rtol=1e-10)
    filtered = ds.dataset(str(tmp_path / "hive"), format="parquet",
                          partitioning="hive").filter(ds.field("x1") > 0)
    fit = ar.attnreg("y ~ x1", filtered, chunk_rows=CHUNK)
    assert seen == [] and fit.nobs == int((df.x1 > 0).sum())
