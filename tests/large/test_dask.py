"""Formula fits on dask DataFrames: equal to the in-memory fit, on a LocalCluster of two workers."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

import attnreg as ar  # noqa: E402
from attnreg.exceptions import DataError, FormulaError, OptionError  # noqa: E402
from attnreg.linear.selection import LOG_LAMBDA_XATOL  # noqa: E402
from attnreg.large.dask import (  # noqa: E402
    DaskRunner,
    DistributedSource,
    fit_dask,
    is_dask_frame,
    learn_dask_spec,
    predict_dask,
    resolve_client,
)

RTOL = 1e-10  # the chunked fit against the in-memory fit of the same rows


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", memory_limit="500MB",
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as c:
        yield c


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(16)
    n = 1200
    df = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.uniform(1, 3, n),
                       "g": rng.choice(["a", "b", "c"], n), "w": rng.uniform(0.5, 2, n),
                       "firm": rng.integers(0, 15, n)})
    df.loc[1100:, "g"] = "late"  # a level seen only in the last partition
    df["y"] = (1 + 2 * df.x1 - np.log(df.x2) + (df.g == "b") * 0.7
               + rng.normal(size=n) * (0.5 + df.x1.abs()))
    df.loc[[5, 600], "x1"] = np.nan  # dropped in two partitions
    return df


@pytest.fixture(scope="module")
def ddf(frame):
    return dd.from_pandas(frame, npartitions=6)


def close(a, b, rtol=RTOL):
    np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=rtol)


CASES = [
    ("ols", {}, None),
    ("ols", {}, "w"),
    ("ridge", {"lam": 0.7}, None),
    ("ridge", {}, "w"),  # lambda by GCV
    ("pcr", {"k": 3}, None),
]


@pytest.mark.parametrize(("method", "opts", "weights"), CASES)
def test_methods_equal_the_in_memory_fit(client, frame, ddf, method, opts, weights) -> None:
    formula = "y ~ x1 + np.log(x2) + C(g) + center(x2)"
    fit = fit_dask(formula, ddf, method, weights=weights, **opts)
    mem = ar.attnreg(formula, frame, method, weights=weights, **opts)
    if method == "ridge" and "lam" not in opts:
        # GCV's minimiser stops within its tolerance in log lambda, and the two fits' GCV
        # curves differ in the last digits: the same lambda to that tolerance, then the fit
        # at the chosen lambda must agree to 1e-10
        assert abs(np.log(fit.lam) - np.log(mem.lam)) <= 2 * LOG_LAMBDA_XATOL
        mem = ar.attnreg(formula, frame, method, weights=weights, lam=fit.lam)
    assert list(fit.coef.index) == list(mem.coef.index)
    assert "C(g)[T.late]" in fit.coef.index
    ok = ~np.isnan(mem.coef.to_numpy())
    close(fit.coef.to_numpy()[ok], mem.coef.to_numpy()[ok])
    close(fit.std_err.to_numpy()[ok], mem.std_err.to_numpy()[ok])
    assert fit.nobs == mem.nobs == len(frame) - 2
    close(fit.sigma, mem.sigma)


@pytest.mark.parametrize(("kind", "opts"), [
    ("HC0", {}), ("HC1", {}), ("HC2", {}), ("HC3", {}), ("HAC", {"maxlags": 3}),
    ("cluster", {"cluster": "firm"}), ("cluster", {"cluster": "firm + g"}),
])
def test_covariances_equal_the_in_memory_fit(client, frame, ddf, kind, opts) -> None:
    formula = "y ~ x1 + scale(x2) + C(g)"
    fit = fit_dask(formula, ddf, vcov=kind, **opts)
    mem = ar.attnreg(formula, frame, vcov=kind, **opts)
    close(fit.coef, mem.coef)
    close(fit.std_err, mem.std_err)


def test_pass_one_is_merged_from_partition_summaries(client, frame, ddf) -> None:
    from attnreg.large.sources import as_source
    from attnreg.large.spec import learn_spec

    formula = "y ~ center(x1) + standardize(x2) + C(g) + C(firm)"
    source = DistributedSource(DaskRunner(ddf, client))
    spec = learn_dask_spec(formula, source)
    ref = learn_spec(formula, as_source(frame, chunk_rows=200))
    assert spec.column_names == ref.column_names
    assert spec.n_rows_seen == ref.n_rows_seen == len(frame)
    for (fa, a), (fb, b) in zip(spec.x_info.factor_infos.items(),
                                ref.x_info.factor_infos.items(), strict=True):
        assert fa.code == fb.code and a.categories == b.categories
        for key, obj in a.state["transforms"].items():
            other = b.state["transforms"][key]
            close(obj.mean, other.mean, 1e-13)
            close(obj.m2, other.m2, 1e-12)


def test_statistics_that_do_not_merge_are_read_through_the_client(client, frame, ddf) -> None:
    formula = "y ~ center(center(x1)) + C(g)"  # a transform of a transform: two passes
    fit = fit_dask(formula, ddf)
    mem = ar.attnreg(formula, frame)
    close(fit.coef, mem.coef)


def test_default_scheduler_and_an_address(client, frame, ddf) -> None:
    mem = ar.attnreg("y ~ x1 + C(g)", frame)
    close(fit_dask("y ~ x1 + C(g)", ddf, scheduler="sync", residuals=False).coef, mem.coef)
    by_address = fit_dask("y ~ x1 + C(g)", ddf, client=client.scheduler.address)
    close(by_address.coef, mem.coef)
    assert resolve_client(None) is client  # the client in use
    with pytest.raises(OptionError, match="client must be"):
        fit_dask("y ~ x1", ddf, client=3)


def test_second_passes_run_on_the_workers(client, frame, ddf) -> None:
    from attnreg.large.passes import pass_plan, run_pass
    from attnreg.large.passes import second_pass

    fit = fit_dask("y ~ x1 + C(g)", ddf, residuals=False)
    plan = pass_plan(fit, "cluster", 0, (("firm",),))
    source = DistributedSource(DaskRunner(ddf, client, split_every=2))
    tree = source.map_reduce(second_pass, (plan,), columns=plan.read_columns(),
                             uses=plan.spec.uses)
    folded = run_pass(plan, source)
    assert tree.n_obs == folded.n_obs == fit.nobs
    close(tree.rss, folded.rss, 1e-12)
    close(tree.sums[0].sort_index().to_numpy(), folded.sums[0].sort_index().to_numpy(), 1e-10)


@dataclasses.dataclass(frozen=True)
class _Rows:
    """A partial whose merge is not commutative: it lists the rows in order."""

    values: tuple[float, ...]

    @classmethod
    def of(cls, frame: pd.DataFrame) -> _Rows:
        return cls(tuple(frame.iloc[:, 0].tolist()))

    def merge(self, other: _Rows) -> _Rows:
        return _Rows(self.values + other.values)


@pytest.mark.parametrize("split_every", [2, 3, 8])
def test_the_tree_reduction_keeps_row_order(client, split_every) -> None:
    ddf = dd.from_pandas(pd.DataFrame({"x": np.arange(23.0)}), npartitions=7)
    for c in (client, None):
        runner = DaskRunner(ddf, c, split_every=split_every, scheduler="sync")
        assert runner.map_reduce(_Rows.of, (), columns=["x"]).values == tuple(np.arange(23.0))


def test_predict_is_lazy_and_partition_wise(client, frame, ddf) -> None:
    fit = fit_dask("y ~ x1 + np.log(x2) + C(g)", ddf)
    mem = ar.attnreg("y ~ x1 + np.log(x2) + C(g)", frame)
    lazy = predict_dask(fit, ddf)
    assert isinstance(lazy, dd.Series) and lazy.npartitions == ddf.npartitions
    got = lazy.compute()
    want = mem.predict(frame)
    assert got.index.equals(frame.index)
    np.testing.assert_allclose(got.to_numpy(), want.to_numpy(), rtol=RTOL, equal_nan=True)
    assert np.isnan(got.loc[5])  # a missing predictor gives NaN
    with pytest.raises(FormulaError, match="no column 'x2'"):
        predict_dask(fit, ddf[["x1", "g"]])


def test_user_errors_are_attnreg_errors(client, frame, ddf) -> None:
    with pytest.raises(FormulaError, match="no column 'nope'"):
        fit_dask("y ~ x1 + nope", ddf)
    with pytest.raises(FormulaError, match="chunk by chunk"):
        fit_dask("y ~ bs(x1, df=3)", ddf)
    with pytest.raises(OptionError, match="must be a dask DataFrame"):
        fit_dask("y ~ x1", frame)
    bad = frame.copy()
    bad.loc[1000, "x2"] = np.inf
    with pytest.raises(DataError, match="non-finite") as info:
        fit_dask("y ~ x2", dd.from_pandas(bad, npartitions=4))
    assert "distributed" not in "".join(str(t.path) for t in info.traceback)


def test_progress_is_quiet_unless_asked(client, ddf, capsys) -> None:
    fit_dask("y ~ x1", ddf, residuals=False)
    assert capsys.readouterr().err == ""
    fit_dask("y ~ x1", ddf, residuals=False, progress=True)
    err = capsys.readouterr().err
    assert "pass 2 (R factors): partitions: 6/6" in err


def test_is_dask_frame(frame, ddf) -> None:
    assert is_dask_frame(ddf) and not is_dask_frame(frame)
