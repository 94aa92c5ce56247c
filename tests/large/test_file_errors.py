"""Chunked inputs that are not what the fit expects: each error names the file or column and
says what to do; what can be read as the in-memory fit would read it is (all-null columns,
hive partition keys)."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest

import attnreg as ar
from attnreg.exceptions import DataError, FormulaError, OptionError
from tests.conftest import RTOL_EXACT

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


def _data(n: int = 3000, seed: int = 21) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x": rng.normal(size=n), "z": rng.uniform(1, 3, n),
                       "g": rng.choice(["a", "b", "c"], n),
                       "year": rng.choice([2019, 2020, 2021], n)})
    df["y"] = 1 + df.x - np.log(df.z) + (df.g == "b") + 0.1 * (df.year - 2020) \
        + rng.normal(size=n)
    return df


DATA = _data()


def _write(folder, parts: list[pd.DataFrame]) -> str:
    folder.mkdir(exist_ok=True)
    for i, part in enumerate(parts):
        pq.write_table(pa.Table.from_pandas(part, preserve_index=False),
                       folder / f"part-{i}.parquet")
    return str(folder / "part-*.parquet")


def _close(a: pd.Series, b: pd.Series) -> None:
    assert list(a.index) == list(b.index)
    np.testing.assert_allclose(a.to_numpy(), b.to_numpy(), rtol=RTOL_EXACT, atol=0)


# ------------------------------------------------------------------ a file without a column

def test_a_later_file_without_a_column_is_named(tmp_path) -> None:
    path = _write(tmp_path / "d", [DATA.iloc[:1500], DATA.iloc[1500:].drop(columns="z")])
    with pytest.raises(DataError, match=r"the parquet file '.*part-1\.parquet' has no column "
                                        r"'z'.*leave out the files without it"):
        ar.attnreg("y ~ x + np.log(z)", path)


def test_a_first_file_without_a_column_is_named(tmp_path) -> None:
    path = _write(tmp_path / "d", [DATA.iloc[:1500].drop(columns="z"), DATA.iloc[1500:]])
    with pytest.raises(DataError, match=r"the parquet file '.*part-0\.parquet' has no column "
                                        r"'z', which '.*part-1\.parquet' has"):
        ar.attnreg("y ~ x + np.log(z)", path)


# ------------------------------------------------------------------ a column all null in a file

@pytest.mark.parametrize("first", [False, True])
def test_a_column_all_null_in_one_file_is_missing_as_in_memory(tmp_path, first) -> None:
    column = "z"  # numeric: read as text before (a factor's column was already missing)
    nulls = DATA.iloc[1000:2000].copy()
    nulls[column] = None
    table = pa.Table.from_pandas(nulls, preserve_index=False)
    assert pa.types.is_null(table.schema.field(column).type)  # arrow's null type
    folder = tmp_path / "d"
    folder.mkdir()
    for name, part in (("part-1", DATA.iloc[:1000]), ("part-2", DATA.iloc[2000:])):
        pq.write_table(pa.Table.from_pandas(part, preserve_index=False),
                       folder / f"{name}.parquet")
    pq.write_table(table, folder / ("part-0.parquet" if first else "part-9.parquet"))
    mem_data = DATA.copy()
    mem_data.loc[1000:1999, column] = np.nan
    formula = "y ~ x + np.log(z) + C(g)"
    mem = ar.attnreg(formula, mem_data)
    fit = ar.attnreg(formula, str(folder / "part-*.parquet"))
    assert fit.n_dropped == len(mem.design.dropped_labels) == 1000
    assert fit.nobs == mem.nobs == 2000
    _close(fit.coef, mem.coef)
    _close(fit.std_err, mem.std_err)


def test_a_dataset_whose_first_file_has_a_null_column_is_read(tmp_path) -> None:
    ds = pytest.importorskip("pyarrow.dataset")
    nulls = DATA.iloc[:1000].copy()
    nulls["z"] = None
    folder = tmp_path / "d"
    folder.mkdir()
    pq.write_table(pa.Table.from_pandas(nulls, preserve_index=False), folder / "p0.parquet")
    pq.write_table(pa.Table.from_pandas(DATA.iloc[1000:], preserve_index=False),
                   folder / "p1.parquet")
    dataset = ds.dataset([str(folder / "p0.parquet"), str(folder / "p1.parquet")],
                         format="parquet")
    assert pa.types.is_null(dataset.schema.field("z").type)  # the first file's schema
    fit = ar.attnreg("y ~ x + np.log(z)", dataset)
    mem = ar.attnreg("y ~ x + np.log(z)", DATA.iloc[1000:])
    assert fit.n_dropped == 1000
    _close(fit.coef, mem.coef)


def test_an_all_null_column_of_a_polars_lazyframe_is_named() -> None:
    pl = pytest.importorskip("polars")
    lazy = pl.from_pandas(DATA).lazy().with_columns(pl.lit(None).alias("w"))
    assert lazy.collect_schema()["w"] == pl.Null
    with pytest.raises(DataError, match=r"no rows left after removing missing values \(3000 "
                                        r"rows had NA\): column 'w' is missing in every row"):
        ar.attnreg("y ~ x + w", lazy)
    fit = ar.attnreg("y ~ x", lazy)  # a null column the formula does not read is no matter
    _close(fit.coef, ar.attnreg("y ~ x", DATA).coef)


# ------------------------------------------------------------------ hive partitions

def _hive(tmp_path) -> str:
    root = tmp_path / "hive"
    pq.write_to_dataset(pa.Table.from_pandas(DATA, preserve_index=False), str(root),
                        partition_cols=["year", "g"])
    return str(root)


def test_a_hive_folder_reads_its_partition_keys_as_columns(tmp_path) -> None:
    root = _hive(tmp_path)
    formula = "y ~ x + np.log(z) + C(g) + year"
    mem = ar.attnreg(formula, DATA)
    fit = ar.attnreg(formula, root, vcov="HC1")  # rows come partition by partition
    assert fit.nobs == 3000
    _close(fit.coef, mem.coef)
    np.testing.assert_allclose(fit.std_err, mem.with_vcov("HC1").std_err,
                               rtol=1e-9)  # the robust meat summed in another row order
    back = pickle.loads(pickle.dumps(fit))  # the partitions are read again after loading
    _close(back.with_vcov("classical").std_err, mem.std_err)


def test_a_glob_into_hive_folders_says_to_give_the_folder(tmp_path) -> None:
    root = _hive(tmp_path)
    with pytest.raises(FormulaError, match=r"no column 'g'; the files lie in hive partition "
                                           r"folders \(g=.*give the folder above them"):
        ar.attnreg("y ~ x + C(g)", root + "/**/*.parquet")


# ------------------------------------------------------------------ a dask client address

def test_a_client_that_is_not_an_address_is_explained() -> None:
    dd = pytest.importorskip("dask.dataframe")
    pytest.importorskip("distributed")
    with pytest.raises(OptionError, match=r"client must be a distributed.Client or a scheduler "
                                          r"address such as 'tcp://.*client='not-an-address'"):
        ar.attnreg("y ~ x", dd.from_pandas(DATA, npartitions=2), client="not-an-address")
