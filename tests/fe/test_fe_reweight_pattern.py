"""The weight-free pattern of the reweighted demeaning, built by counting sorts, equals the
comparison sorts it replaces (``np.argsort(kind="stable")``, ``np.unique`` with its inverse,
``np.lexsort``): integer results, compared exactly."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import attnreg.fe.reweight_pattern as pattern
from attnreg.fe.reweight_pattern import Block, FixedProduct, Pairs, counting_order, pointers


@pytest.mark.parametrize("radix", [True, False])
def test_counting_order_is_the_stable_sort(radix: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if not radix:
        monkeypatch.setattr(pattern, "RADIX_KEYS", 0)  # scipy's CSR -> CSC pass
    keys = np.random.default_rng(0).integers(0, 70_000 if not radix else 300, 5000)
    n_keys = int(keys.max()) + 1
    np.testing.assert_array_equal(counting_order(keys, n_keys), np.argsort(keys, kind="stable"))


@pytest.mark.parametrize(("radix", "table"), [(True, True), (True, False), (False, False)])
def test_pairs_are_numpy_unique_with_its_inverse(radix: bool, table: bool,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    if not radix:
        monkeypatch.setattr(pattern, "RADIX_KEYS", 0)
    if not table:
        monkeypatch.setattr(pattern, "TABLE_CELLS", 0)  # the counting sorts
    rng = np.random.default_rng(1)
    rows, cols = rng.integers(0, 40, 3000), rng.integers(0, 25, 3000)  # many duplicates
    got = Pairs.of(rows, cols, 40, 25)
    keys, inverse = np.unique(rows * 25 + cols, return_inverse=True)
    np.testing.assert_array_equal(got.rows, keys // 25)
    np.testing.assert_array_equal(got.cols, keys % 25)
    np.testing.assert_array_equal(got.entry, inverse.ravel())
    w = rng.uniform(size=3000)
    np.testing.assert_array_equal(got.sums(w), np.bincount(inverse.ravel(), weights=w))


def test_a_block_and_its_transpose_are_the_cross_matrix() -> None:
    rng = np.random.default_rng(2)
    big, small = rng.integers(0, 30, 800), rng.integers(0, 12, 800)
    cross = Pairs.of(big, small, 30, 12)
    ptr = pointers(cross.rows, 30)
    data = rng.uniform(size=cross.rows.size)
    B = sp.csr_matrix((data, (cross.rows, cross.cols)), shape=(30, 12)).toarray()
    block = Block.of(cross, ptr, 7, 19, 12)
    order = np.lexsort((cross.rows[block.start:block.end], cross.cols[block.start:block.end]))
    np.testing.assert_array_equal(block.t_order, order)  # the comparison sort's order
    rows, trans, lo, hi = block.matrices(data, 12)
    np.testing.assert_array_equal(rows.toarray(), B[lo:hi])
    np.testing.assert_array_equal(trans.toarray(), B[lo:hi].T)


@pytest.mark.parametrize("bound_cells", [1 << 22, 0])
def test_a_fixed_pattern_product_equals_scipys_on_every_call(
        bound_cells: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pattern, "BOUND_CELLS", bound_cells)  # 0: the symbolic pass
    rng = np.random.default_rng(4)
    A = sp.random(40, 60, density=0.1, random_state=5, format="csr")
    B = sp.random(60, 30, density=0.1, random_state=6, format="csr")
    product = FixedProduct()
    for _ in range(3):  # new values, the same pattern: sized on the first call only
        A.data, B.data = rng.normal(size=A.nnz), rng.normal(size=B.nnz)
        got = product(A, B)
        np.testing.assert_array_equal(got.toarray(), (A @ B).toarray())
    exact = (A @ B).nnz
    pairs = int(np.bincount(A.indices, minlength=60) @ np.diff(B.indptr))
    assert product.nnz == (min(40 * 30, pairs) if bound_cells else exact)
    assert product.nnz >= exact
    B.data[:] = 0.0  # every entry sums to 0: left out, as scipy does
    assert product(A, B).nnz == 0 == (A @ B).nnz


def test_pairs_of_sorted_rows_equal_the_counting_sorts() -> None:
    rng = np.random.default_rng(8)
    rows = np.sort(rng.integers(0, 3000, 5000))
    cols = rng.integers(0, 2000, 5000)  # 6e6 cells: not the table
    got = Pairs.of(rows, cols, 3000, 2000)
    keys, entry = np.unique(rows * 2000 + cols, return_inverse=True)
    np.testing.assert_array_equal(got.rows, keys // 2000)
    np.testing.assert_array_equal(got.cols, keys % 2000)
    np.testing.assert_array_equal(got.entry, entry)
    shuffled = rng.permutation(5000)  # unsorted rows: the counting sorts, the same pairs
    other = Pairs.of(rows[shuffled], cols[shuffled], 3000, 2000)
    np.testing.assert_array_equal(other.rows, got.rows)
    np.testing.assert_array_equal(other.entry, entry[shuffled])


def test_a_split_block_gives_its_wide_and_narrow_columns() -> None:
    rng = np.random.default_rng(7)
    big, small = rng.integers(0, 30, 900), rng.integers(0, 15, 900)
    cross = Pairs.of(big, small, 30, 15)
    data = rng.uniform(size=cross.rows.size)
    block = Block.of(cross, pointers(cross.rows, 30), 4, 25, 15, narrow=10)
    rows, trans, _, _ = block.matrices(data, 15)
    split = block.split
    assert split is not None
    wide = sp.csr_matrix((rows.data[split.wide], split.wide_cols, split.wide_ptr),
                         shape=(21, 10))
    np.testing.assert_array_equal(wide.toarray(), rows.toarray()[:, :10])
    tail = np.zeros((21, 5))
    tail.ravel()[split.tail_cells] = rows.data[split.tail]
    np.testing.assert_array_equal(tail, rows.toarray()[:, 10:])
    assert split.head_end == trans[:10].nnz
    assert Block.of(cross, pointers(cross.rows, 30), 4, 25, 15).split is None


@pytest.mark.parametrize("kernel", [True, False])
def test_a_product_added_into_the_corner_of_a_wider_array(
        kernel: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if not kernel:
        monkeypatch.setattr(pattern, "_todense", None)  # the dense copy's route
    A = sp.random(7, 30, density=0.2, random_state=9, format="csr")
    B = sp.random(30, 5, density=0.2, random_state=10, format="csr")
    out = np.arange(9 * 11, dtype=float).reshape(9, 11)
    expected = out.copy()
    expected[:7, :5] += (A @ B).toarray()
    FixedProduct().add_into(out, A, B)
    np.testing.assert_array_equal(out, expected)
