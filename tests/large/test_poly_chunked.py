"""R's ``poly(x, d)`` chunk by chunk equals ``poly`` in memory.

The orthogonal basis' ``alpha`` and ``norm2`` come from centred power sums merged across
chunks in extended precision (:mod:`attnreg.formula.poly_moments`); they match the QR of the
centred powers in memory (:func:`attnreg.formula.poly.orthogonal_coefs`, itself checked
against R in tests/formula/test_poly.py) to RTOL_EXACT, and so do the chunked and dask fits.
``poly(x, d, raw=True)`` learns nothing.
"""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest

import attnreg as ar
from attnreg.exceptions import DataError
from attnreg.formula.poly import orthogonal_coefs
from attnreg.formula.poly_moments import PowerSums
from tests.conftest import RTOL_EXACT

CHUNK = 97
_RNG = np.random.default_rng(11)
SAMPLES = {
    "offset": _RNG.normal(size=900) + 1e3,              # centring matters
    "sorted": np.sort(_RNG.exponential(size=900)),      # chunks far from the overall mean
    "trend": np.arange(900.0),                          # x = time
    "tiny spread": _RNG.normal(size=900) * 1e-5 + 7.0,  # spread far below the mean
    "few values": _RNG.integers(0, 6, size=900).astype(float),
}


def _data(n: int = 600, seed: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x": np.sort(rng.normal(size=n)) + 50.0, "z": rng.normal(size=n)})
    df["y"] = (df.x - 50) - 0.5 * (df.x - 50) ** 2 + 0.3 * df.z + rng.normal(size=n)
    df.loc[[3, 250, 598], "x"] = np.nan  # NA rows in several chunks
    return df


DATA = _data()


@pytest.mark.parametrize("degree", [1, 2, 3, 5])
@pytest.mark.parametrize("name", list(SAMPLES))
def test_power_sums_give_the_in_memory_coefficients(name, degree) -> None:
    x = SAMPLES[name]
    sums = PowerSums(degree)
    for part in np.array_split(x, 9):
        sums.add(part)
    alpha, norm2 = sums.coefs()
    ref_alpha, ref_norm2 = orthogonal_coefs(x, degree)
    np.testing.assert_allclose(alpha, ref_alpha, rtol=RTOL_EXACT, atol=0)
    np.testing.assert_allclose(norm2, ref_norm2, rtol=RTOL_EXACT, atol=0)


def _close(a: pd.Series, b: pd.Series) -> None:
    assert list(a.index) == list(b.index)
    np.testing.assert_allclose(a.to_numpy(), b.to_numpy(), rtol=RTOL_EXACT, atol=0)


@pytest.mark.parametrize("formula", ["y ~ poly(x, 3) + z", "y ~ poly(x, 2, raw=True) + z"])
@pytest.mark.parametrize("kind", ["pandas", "parquet"])
def test_chunked_poly_equals_in_memory(formula, kind, tmp_path) -> None:
    data: object = DATA
    if kind == "parquet":
        pa = pytest.importorskip("pyarrow")
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pandas(DATA, preserve_index=False),
                       tmp_path / "d.parquet", row_group_size=CHUNK)
        data = str(tmp_path / "d.parquet")
    mem = ar.attnreg(formula, DATA)
    fit = ar.attnreg(formula, data, chunk_rows=CHUNK)
    _close(fit.coef, mem.coef)
    _close(fit.std_err, mem.std_err)
    assert fit.nobs == mem.nobs == len(DATA) - 3
    new = pd.DataFrame({"x": [48.0, 50.5, 53.0], "z": [0.0, 1.0, -1.0]})
    np.testing.assert_allclose(np.asarray(fit.predict(new)), np.asarray(mem.predict(new)),
                               rtol=RTOL_EXACT)
    again = pickle.loads(pickle.dumps(fit))
    _close(again.coef, mem.coef)


def test_dask_poly_equals_in_memory() -> None:
    dd = pytest.importorskip("dask.dataframe")
    mem = ar.attnreg("y ~ poly(x, 3) + z", DATA)
    fit = ar.attnreg("y ~ poly(x, 3) + z", dd.from_pandas(DATA, npartitions=4))
    _close(fit.coef, mem.coef)


def test_chunked_poly_degree_needs_distinct_values() -> None:
    df = DATA.assign(x=np.tile([1.0, 2.0, 3.0], len(DATA) // 3))
    with pytest.raises(DataError, match=r"poly\(\): degree \(3\) must be less than the number "
                                        r"of distinct values of the variable \(3\)"):
        ar.attnreg("y ~ poly(x, 3)", df, chunk_rows=CHUNK)
