"""The fast chunk path: parquet row groups read one ahead, the design kept as column pieces and
factorised leaf by leaf on worker threads, missing values found by the factorisation itself,
residual statistics read only when first asked for."""

from __future__ import annotations

import math
import pickle
from fractions import Fraction
import threading
import time

import numpy as np
import pandas as pd
import pytest

import attnreg as ar
from attnreg import threads
from attnreg.exceptions import DataError
from attnreg.large import readahead
from attnreg.large.accumulate import RFactor, chunk_columns
from attnreg.large.fit import chunk_factor
from attnreg.large.sources import as_source
from attnreg.large.spec import learn_spec
from tests.conftest import RTOL_EXACT

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


@pytest.fixture(autouse=True)
def _reset():
    threads.set_threads(None)
    yield
    threads.set_threads(None)


def _write(tmp_path, n_files: int = 3, rows: int = 1000, group: int = 300, seed: int = 0):
    rng = np.random.default_rng(seed)
    frames = []
    for i in range(n_files):
        df = pd.DataFrame({"x": rng.normal(size=rows) + 1e4, "z": rng.normal(size=rows)})
        df["y"] = 1 + 2 * df.x - df.z + rng.normal(size=rows)
        pq.write_table(pa.Table.from_pandas(df, preserve_index=False),
                       tmp_path / f"p{i}.parquet", row_group_size=group)
        frames.append(df)
    return sorted(str(p) for p in tmp_path.glob("p*.parquet")), pd.concat(frames,
                                                                          ignore_index=True)


def test_parquet_batches_are_the_files_in_order(tmp_path) -> None:
    files, whole = _write(tmp_path)
    got = list(readahead.parquet_batches(files, ["y", "x"], chunk_rows=128))
    assert all(0 < b.num_rows <= 128 for b in got)
    table = pa.Table.from_batches(got)
    assert table.column_names == ["y", "x"]
    np.testing.assert_array_equal(table.column("x").to_numpy(), whole.x.to_numpy())


def test_big_row_groups_are_read_in_batches(tmp_path, monkeypatch) -> None:
    files, whole = _write(tmp_path, n_files=1, group=1000)
    monkeypatch.setattr(readahead, "ROW_GROUP_BYTES", 1000)  # every row group is "big"
    got = list(readahead.parquet_batches(files, ["x"], chunk_rows=256))
    assert [b.num_rows for b in got] == [256, 256, 256, 232]
    np.testing.assert_array_equal(pa.Table.from_batches(got).column("x").to_numpy(),
                                  whole.x.to_numpy())


def test_the_reader_runs_one_row_group_ahead_and_no_more(tmp_path, monkeypatch) -> None:
    files, _ = _write(tmp_path, n_files=4, group=250)  # 16 row groups
    reads: list[int] = []
    real = readahead._tables

    def counting(*args):
        for table in real(*args):
            reads.append(1)
            yield table

    monkeypatch.setattr(readahead, "_tables", counting)
    taken = 0
    for _batch in readahead.parquet_batches(files, ["x"], chunk_rows=10_000):
        taken += 1
        time.sleep(0.02)  # a slow consumer: the reader must wait for it
        assert len(reads) <= taken + 1
    assert taken == 16


def test_closing_early_stops_the_reader(tmp_path) -> None:
    files, _ = _write(tmp_path, n_files=4, group=100)
    gen = readahead.parquet_batches(files, ["x"], chunk_rows=50)
    next(gen)
    gen.close()
    time.sleep(0.3)
    assert not [t for t in threading.enumerate() if t.name == "attnreg-parquet" and t.is_alive()]


def test_a_damaged_file_is_a_clear_error(tmp_path) -> None:
    files, _ = _write(tmp_path, n_files=2)
    with open(files[1], "r+b") as fh:  # clobber the second file's footer
        fh.seek(-12, 2)
        fh.write(b"\0" * 12)
    src = as_source(files)
    with pytest.raises(DataError, match="could not be read"):
        for _ in src.frames(["x"]):
            pass


def _chunk_setup(n: int = 40_000, seed: int = 3):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x1": rng.normal(size=n) + 1e6, "x2": rng.normal(size=n),
                       "w": rng.uniform(0.5, 2, size=n)})
    df["y"] = 3 + 0.5 * df.x1 - df.x2 + rng.normal(size=n)
    return df


@pytest.mark.parametrize("weights", [None, "w"])
def test_the_factor_is_the_same_on_any_number_of_threads(weights) -> None:
    df = _chunk_setup()
    spec = learn_spec("y ~ x1 + x2", as_source(df), weights=weights)
    cols = chunk_columns(spec, df)
    assert cols.n_obs > 2 * 65536 // 4  # several segments
    one = RFactor.from_columns(cols, True, workers=1)
    two = RFactor.from_columns(cols, True, workers=2)
    three = RFactor.from_columns(cols, True, workers=3)
    assert np.array_equal(one.R, two.R) and np.array_equal(one.R, three.R)
    # R of the design centred on its exact (weighted) means
    w = np.ones(len(df)) if weights is None else df.w.to_numpy()
    Z = np.column_stack([df.x1, df.x2, df.y])
    mean = (w @ Z) / w.sum()
    Zc = (Z - mean) * np.sqrt(w)[:, None]
    R = one.centred_r()
    np.testing.assert_allclose(R.T @ R, Zc.T @ Zc, rtol=1e-11, atol=1e-9 * np.abs(Zc.T @ Zc).max())
    # the means to a few units in the last place of the exact (rational) weighted means, or
    # of the columns' spread for a mean near 0 (the shifted values are rounded at that size)
    ws = [Fraction(v) for v in w]
    total = sum(ws)
    exact = np.array([float(sum(a * Fraction(v) for a, v in zip(ws, col, strict=True)) / total)
                      for col in Z.T])
    eps = np.finfo(float).eps
    assert np.all(np.abs(one.means()[1:] - exact) <= 4 * eps * (np.abs(exact) + Z.std(axis=0)))


def test_means_keep_the_digits_of_large_offsets() -> None:
    """Column sums are kept shifted and in extended precision: the mean of 1e6 + noise over
    many chunks is its exact (rational) value to rounding of the mean itself."""
    df = _chunk_setup(n=30_000)
    fit = ar.attnreg("y ~ x1 + x2", df, chunk_rows=777)
    exact = math.fsum(df.x1.tolist()) / len(df)
    assert abs(fit.factor.means()[1] - exact) <= 2 * np.spacing(exact)


def test_missing_values_found_by_the_factorisation_drop_their_rows() -> None:
    df = _chunk_setup(n=5000)
    df.loc[[10, 4999, 2500], "x2"] = np.nan
    df.loc[77, "y"] = np.nan
    spec = learn_spec("y ~ x1 + x2", as_source(df))
    fast = chunk_factor(spec, df)  # built without the NaN search, rebuilt with it
    assert fast.n_obs == 4996 and fast.n_dropped == 4
    mem = ar.attnreg("y ~ x1 + x2", df)
    fit = ar.attnreg("y ~ x1 + x2", df, chunk_rows=1000)
    np.testing.assert_allclose(fit.coef, mem.coef, rtol=RTOL_EXACT)
    np.testing.assert_allclose(fit.std_err, mem.std_err, rtol=RTOL_EXACT)
    assert fit.n_dropped == 4


@pytest.mark.parametrize(("column", "row"), [("x2", 3001), ("y", 12)])
def test_an_infinite_value_is_named_with_its_row(column, row) -> None:
    df = _chunk_setup(n=5000)
    df.loc[row, column] = np.inf
    with pytest.raises(DataError, match=rf"column '{column}' has a non-finite value \(inf\) at "
                                        rf"row {row}"):
        ar.attnreg("y ~ x1 + x2", df, chunk_rows=1000)


def test_residual_statistics_wait_for_their_first_use(tmp_path, monkeypatch) -> None:
    import attnreg.large.passes as passes

    _, whole = _write(tmp_path)
    calls = []
    real = passes.run_pass
    monkeypatch.setattr(passes, "run_pass", lambda *a, **k: calls.append(1) or real(*a, **k))
    fit = ar.attnreg("y ~ x + z", data=str(tmp_path / "p*.parquet"))
    assert calls == [] and fit.stats is None  # one pass: the R factor
    text = str(fit.summary())
    assert len(calls) == 1 and "Residuals:" in text
    str(fit.summary())
    assert len(calls) == 1  # computed once
    mem = ar.attnreg("y ~ x + z", whole)
    q = fit.summary().statistics["residual_quantiles"]
    np.testing.assert_allclose(q.to_numpy(), mem.summary().statistics["residual_quantiles"]
                               .to_numpy(), rtol=1e-9)
    back = pickle.loads(pickle.dumps(fit))  # the computed statistics travel with the fit
    monkeypatch.setattr(passes, "run_pass", lambda *a, **k: pytest.fail("read again"))
    assert "Residuals:" in str(back.summary())


def test_rss_does_not_depend_on_the_passes_that_ran() -> None:
    df = _chunk_setup(n=3000)
    fit = ar.attnreg("y ~ x1 + x2", df, chunk_rows=500)
    sigma = fit.sigma
    str(fit.summary())
    assert fit.sigma == sigma == fit.with_vcov("HC1").sigma
    assert fit.residual_stats.rss == pytest.approx(fit.rss, rel=1e-10)


def test_task_threads_run_row_blocks_inline() -> None:
    seen = []
    with threads.task_threads(1):
        threads.parallel_map(lambda _: seen.append(threading.current_thread().name), range(4))
    assert set(seen) == {threading.current_thread().name}
    assert threads.row_workers() >= 1


def test_scratch_is_reused_within_a_thread_and_not_shared_across() -> None:
    def address(a):
        return a.__array_interface__["data"][0]

    a = threads.scratch("t", (4,))
    b = threads.scratch("t", (2, 2))  # the same memory, another shape
    assert address(a) == address(b)
    out = []
    worker = threading.Thread(target=lambda: out.append(address(threads.scratch("t", (4,)))))
    worker.start()
    worker.join()
    assert out and out[0] != address(a)


def test_pass_one_reads_only_the_columns_of_open_factors(tmp_path) -> None:
    """After the first chunk, patsy's builder needs only the factors whose levels or
    statistics are still open: the rest of pass 1 reads just their columns."""
    rng = np.random.default_rng(9)
    n = 1200
    df = pd.DataFrame({"x": rng.normal(size=n), "z": rng.normal(size=n),
                       "g": rng.choice(list("abc"), size=n), "u": rng.normal(size=n)})
    df.loc[n - 3:, "g"] = "late"  # a level only in the last chunk
    df["y"] = df.x + (df.g == "b") + rng.normal(size=n)
    formula = "y ~ x + np.log(z**2) + C(g) + center(u)"
    src = as_source(df, chunk_rows=100)
    asked: list[tuple[str, ...]] = []
    real = type(src).frames

    def spy(self, columns=None, **kw):
        asked.append(tuple(columns))
        return real(self, columns, **kw)

    type(src).frames = spy
    try:
        spec = learn_spec(formula, src)
    finally:
        type(src).frames = real
    assert any(set(cols) == {"g", "u"} for cols in asked)  # the pruned passes
    full = learn_spec(formula, as_source(df, chunk_rows=100_000))
    assert spec.column_names == full.column_names  # the late level is there
    assert "C(g)[T.late]" in spec.column_names
    mem = ar.attnreg(formula, df)
    fit = ar.attnreg(formula, df, chunk_rows=100)
    np.testing.assert_allclose(fit.coef, mem.coef, rtol=RTOL_EXACT)
    only_numbers = learn_spec("y ~ x + z", src)  # nothing open: one chunk read
    assert only_numbers.n_rows_seen == 100
