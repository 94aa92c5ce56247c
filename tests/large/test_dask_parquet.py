"""A dask frame that is a plain read of local parquet files, read by attnreg's own tasks."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

import dask  # noqa: E402
from packaging.version import Version  # noqa: E402

import attnreg as ar  # noqa: E402
import attnreg.large.dask_parquet as dp  # noqa: E402
from attnreg.exceptions import DataError  # noqa: E402
from attnreg.large.dask import fit_dask  # noqa: E402
from attnreg.large.dask_runner import DaskRunner  # noqa: E402

#: dask's query planner (dask-expr, part of dask since 2025.1), whose plan is read
PLANNED = Version(dask.__version__) >= Version("2025.1")
FORMULA = "y ~ x1 + np.log(x2) + C(g)"


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(61)
    n = 3000
    df = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.uniform(1, 3, n),
                       "g": rng.choice(["a", "b", "c"], n), "k": rng.integers(0, 9, n),
                       "flag": rng.random(n) < 0.3, "firm": rng.integers(0, 25, n)})
    df.loc[2700:, "g"] = "late"  # a level that appears only in the last file
    df["y"] = 1 + 2 * df.x1 - np.log(df.x2) + 0.5 * (df.g == "b") + rng.normal(size=n)
    df.loc[[7, 1500], "x1"] = np.nan
    return df


@pytest.fixture(scope="module")
def folder(tmp_path_factory, frame) -> str:
    """Three files as pandas writes them (a RangeIndex kept as metadata, from 0, 1000, 2000),
    with row groups of 400 rows."""
    out = tmp_path_factory.mktemp("plain")
    for i in range(3):
        frame.iloc[1000 * i:1000 * (i + 1)].to_parquet(out / f"part-{i}.parquet",
                                                       row_group_size=400)
    return str(out)


def _dask_read(ddf, columns) -> pd.DataFrame:
    """dask's own read of the columns, partitions concatenated (dask may merge partitions
    of a projection, so they are compared whole)."""
    return pd.concat([p.compute(scheduler="sync") for p in ddf[columns].to_delayed()])


@pytest.mark.skipif(not PLANNED, reason="dask without its query planner: dask reads")
@pytest.mark.parametrize("how, n_parts, groups", [
    ({}, 3, None),                                     # a file per partition
    ({"split_row_groups": True}, 9, (0,)),             # a row group per partition
    ({"blocksize": "2KiB"}, 9, (0,)),                  # big row groups: split by dask's infer
    ({"split_row_groups": 2}, 6, (0, 1)),              # two row groups per partition
])
@pytest.mark.parametrize("columns", [["x1", "g", "y"], ["y", "flag", "k", "x1"]])
def test_the_pieces_read_give_dask_s_own_partitions(folder, how, n_parts, groups,
                                                    columns) -> None:
    ddf = dd.read_parquet(folder, **how)
    pieces = dp.parquet_partitions(ddf, columns)
    assert pieces is not None and len(pieces) == ddf.npartitions == n_parts
    assert pieces[0].row_groups == groups
    dtypes = dict(ddf._meta.dtypes.items())
    ours = pd.concat([dp.read_piece(p, columns, dtypes) for p in pieces])
    pd.testing.assert_frame_equal(ours, _dask_read(ddf, columns))  # values, dtypes, labels


def test_a_pyarrow_written_file_has_dask_s_index(tmp_path) -> None:
    for i in range(2):
        pq.write_table(pa.table({"x": np.arange(5.0) + i, "y": np.arange(5) * 2}),
                       tmp_path / f"{i}.parquet")
    ddf = dd.read_parquet(str(tmp_path))
    pieces = dp.parquet_partitions(ddf, ["y", "x"])
    if not PLANNED:
        assert pieces is None
        return
    dtypes = dict(ddf._meta.dtypes.items())
    ours = pd.concat([dp.read_piece(p, ["y", "x"], dtypes) for p in pieces])
    pd.testing.assert_frame_equal(ours, _dask_read(ddf, ["y", "x"]))


@pytest.mark.parametrize("make", [
    lambda f: dd.read_parquet(f, filters=[("x1", ">", 0)]),      # rows filtered at the read
    lambda f: dd.read_parquet(f)[lambda d: d.x2 > 2],             # computed from the read
    lambda f: dd.read_parquet(f, dtype_backend="pyarrow"),        # a reader option
    lambda f: dd.read_parquet(f).partitions[1:],                  # some partitions
    lambda f: dd.read_parquet(f, index="k"),                      # a column as the index
    lambda f: dd.from_pandas(pd.read_parquet(f), npartitions=2),  # not a read
    lambda f: dd.read_parquet(f).repartition(npartitions=2),      # other partitions
    lambda f: dd.read_parquet(f).persist(scheduler="sync"),       # already in memory
], ids=["filters", "derived", "dtype_backend", "partitions", "index", "from_pandas",
        "repartition", "persist"])
def test_anything_but_a_plain_read_is_read_by_dask(folder, make) -> None:
    assert dp.parquet_partitions(make(folder), ["x1", "y"]) is None


def test_hive_partitions_and_other_column_types_are_read_by_dask(tmp_path, frame) -> None:
    hive = tmp_path / "hive"
    frame.assign(part=frame.k % 2).to_parquet(hive, partition_cols=["part"])
    assert dp.parquet_partitions(dd.read_parquet(str(hive)), ["x1", "y"]) is None
    dated = tmp_path / "dated.parquet"
    frame.assign(day=pd.Timestamp("2020-01-01")).to_parquet(dated)
    assert dp.parquet_partitions(dd.read_parquet(str(dated)), ["x1", "y"]) is not None \
        or not PLANNED
    assert dp.parquet_partitions(dd.read_parquet(str(dated)), ["x1", "day"]) is None


@pytest.mark.parametrize("vcov, opts", [("classical", {}), ("HC3", {}),
                                        ("cluster", {"cluster": "firm"})])
def test_the_fit_equals_dask_s_read_and_the_in_memory_fit(client, folder, frame, vcov,
                                                          opts) -> None:
    ddf = dd.read_parquet(folder, split_row_groups=True)
    ours = fit_dask(FORMULA, ddf, client=client, vcov=vcov, residuals=True, **opts)
    runner_off = DaskRunner(ddf, client, read_parquet=False)
    assert runner_off._parquet_pieces(ddf[["y"]]) is None
    theirs = fit_dask(FORMULA, ddf, client=client, vcov=vcov, residuals=True,
                      read_parquet=False, **opts)
    mem = ar.attnreg(FORMULA, frame, vcov=vcov, **opts)
    for other, rtol in ((theirs, 1e-13), (mem, 1e-10)):
        np.testing.assert_allclose(ours.coef, other.coef, rtol=rtol)
        np.testing.assert_allclose(ours.std_err, other.std_err, rtol=rtol)
    assert ours.nobs == theirs.nobs == mem.nobs == frame.shape[0] - 2
    assert str(ours.summary()) == str(theirs.summary())  # residual sample: the same labels


def test_the_tasks_read_the_files_themselves(folder, frame, monkeypatch) -> None:
    calls = []
    real = dp.read_piece

    def spy(piece, columns, dtypes):
        calls.append(os.path.basename(piece.path))
        return real(piece, columns, dtypes)

    monkeypatch.setattr(dp, "read_piece", spy)
    # in this process (the module's cluster, once started, would be the client in use)
    monkeypatch.setattr("attnreg.large.dask.resolve_client", lambda client: None)
    fit = fit_dask(FORMULA, dd.read_parquet(folder), scheduler="sync")
    np.testing.assert_allclose(fit.coef, ar.attnreg(FORMULA, frame).coef, rtol=1e-10)
    if PLANNED:
        assert sorted(set(calls)) == ["part-0.parquet", "part-1.parquet", "part-2.parquet"]
    else:
        assert calls == []


@pytest.mark.skipif(not PLANNED, reason="dask without its query planner: dask reads")
def test_a_file_gone_since_the_frame_was_made_is_named(tmp_path, frame) -> None:
    for i in range(2):
        frame.iloc[:100].to_parquet(tmp_path / f"{i}.parquet")
    ddf = dd.read_parquet(str(tmp_path))
    os.remove(tmp_path / "1.parquet")
    with pytest.raises(DataError, match=r"1\.parquet.*could not be read"):
        fit_dask("y ~ x1", ddf, scheduler="sync")


@pytest.mark.skipif(not PLANNED, reason="dask without its query planner: dask reads")
def test_nulls_in_integer_boolean_and_text_columns_as_dask_reads_them(tmp_path) -> None:
    table = pa.table({"i": pa.array([1, None, 3, 4], pa.int64()),
                      "b": pa.array([True, None, False, True]),
                      "s": pa.array(["a", None, "c", "a"]), "x": [0.5, 1.5, np.nan, 2.0]})
    for i in range(2):
        pq.write_table(table, tmp_path / f"{i}.parquet")
    ddf = dd.read_parquet(str(tmp_path))
    columns = ["x", "s", "b", "i"]
    pieces = dp.parquet_partitions(ddf, columns)
    dtypes = dict(ddf._meta.dtypes.items())
    ours = pd.concat([dp.read_piece(p, columns, dtypes) for p in pieces])
    pd.testing.assert_frame_equal(ours, _dask_read(ddf, columns))


@pytest.mark.parametrize("part, piece", [
    ({"piece": ("a.parquet", None, None)}, dp.ParquetPiece("a.parquet", None)),
    ([{"piece": ("a.parquet", [2, 3], [])}], dp.ParquetPiece("a.parquet", (2, 3))),
    ([{"piece": ("a.parquet", [0], [])}, {"piece": ("a.parquet", [1], [])}],
     dp.ParquetPiece("a.parquet", (0, 1))),
    ([{"piece": ("a.parquet", [0], [])}, {"piece": ("b.parquet", [0], [])}], None),  # 2 files
    ({"piece": ("a.parquet", None, [("year", 2020)])}, None),                      # hive keys
    ([{"piece": ("a.parquet", [1], [])}, {"piece": ("a.parquet", [0], [])}], None),  # order
    ({"piece": ("a.parquet", None, None), "extra": 1}, None),
    ("a.parquet", None),
])
def test_the_forms_of_dask_s_plan_that_are_read_here(part, piece) -> None:
    assert dp._one_piece(part) == piece


def test_a_first_partition_shorter_than_the_head_says_nothing(frame, monkeypatch) -> None:
    import warnings

    monkeypatch.setattr("attnreg.large.dask.resolve_client", lambda client: None)
    ddf = dd.from_pandas(frame, npartitions=10)  # 300 rows each: fewer than the 1000 asked
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        fit = fit_dask("y ~ x1 + x2", ddf, scheduler="sync")
    assert not [w for w in seen if "Insufficient elements" in str(w.message)]
    np.testing.assert_allclose(fit.coef, ar.attnreg("y ~ x1 + x2", frame).coef, rtol=1e-10)
