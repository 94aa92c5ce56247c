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
    DistributedSource,
    fit_dask,
    is_dask_frame,
    learn_dask_spec,
    predict_dask,
)
from attnreg.large.dask_runner import DaskRunner, resolve_client  # noqa: E402

RTOL = 1e-10  # the chunked fit against the in-memory fit of the same rows


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


# ------------------------------------------------------------------ through the front door

def test_the_front_door_fits_a_dask_frame(client, frame, ddf) -> None:
    from attnreg.large import chunked_backend
    from attnreg.large.results import ChunkedResults

    assert chunked_backend(ddf, {}).name == "dask"
    formula = "y ~ x1 + np.log(x2) + C(g)"
    fit = ar.attnreg(formula, data=ddf, vcov="HC1")
    mem = ar.attnreg(formula, data=frame, vcov="HC1")
    assert isinstance(fit, ChunkedResults)
    assert fit.source_description.startswith("dask DataFrame (6 partitions) on tcp://127.0.0.1")
    close(fit.coef, mem.coef)
    close(fit.std_err, mem.std_err)
    ridge = ar.attnreg(formula, data=ddf, method="ridge", lam=2.0,
                       client=client.scheduler.address)
    close(ridge.coef, ar.attnreg(formula, data=frame, method="ridge", lam=2.0).coef)
    with pytest.raises(OptionError, match="softmax"):
        ar.attnreg(formula, data=ddf, method="softmax")


def _explode(part: pd.DataFrame) -> pd.DataFrame:
    raise RuntimeError("a partition was computed")


def test_predict_of_a_dask_frame_is_lazy(client, frame, ddf) -> None:
    fit = ar.attnreg("y ~ x1 + np.log(x2) + C(g)", data=ddf)
    poisoned = ddf.map_partitions(_explode, meta=ddf._meta)
    lazy = fit.predict(poisoned)  # builds a graph, computes nothing
    assert isinstance(lazy, dd.Series) and lazy.npartitions == ddf.npartitions
    with pytest.raises(RuntimeError, match="a partition was computed"):
        lazy.compute()
    got = fit.predict(ddf)
    assert isinstance(got, dd.Series)
    want = ar.attnreg("y ~ x1 + np.log(x2) + C(g)", data=frame).predict(frame)
    got = got.compute()
    assert got.index.equals(frame.index)
    np.testing.assert_allclose(got.to_numpy(), want.to_numpy(), rtol=RTOL, equal_nan=True)


@pytest.mark.parametrize("engine", ["dask", "local"])
def test_attention_top_k_equals_the_in_memory_view(client, frame, ddf, engine) -> None:
    formula = "y ~ x1 + np.log(x2) + C(g)"
    data = ddf if engine == "dask" else frame
    fit = ar.attnreg(formula, data=data, **({} if engine == "dask" else {"chunk_rows": 250}))
    queries = frame.iloc[[2, 700, 1150]]
    att = fit.attention(queries, k=6)
    mem = ar.attnreg(formula, data=frame).attention(queries)
    got, want = att.top_k(6), mem.top_k(6)
    assert got["train_label"].tolist() == want["train_label"].tolist()
    for col in ("weight", "y", "contribution"):
        np.testing.assert_allclose(got[col], want[col], rtol=RTOL)
    cols = ["prediction", "weight_sum", "negative_mass", "leverage", "effective_neighbours",
            "entropy"]
    np.testing.assert_allclose(att.diagnostics[cols].to_numpy(),
                               mem.diagnostics[cols].to_numpy(), rtol=1e-9)
    np.testing.assert_allclose(att.diagnostics["prediction"],
                               fit.predict(queries).to_numpy(), rtol=RTOL)


@pytest.mark.parametrize(("kind", "opts"), [("HC3", {}), ("HAC", {"maxlags": 2}),
                                            ("cluster", {"cluster": "firm"})])
def test_with_vcov_of_a_dask_fit_runs_on_the_workers(client, frame, ddf, monkeypatch,
                                                     kind, opts) -> None:
    from attnreg.large.dask_runner import DaskRunner, DaskSource

    formula = "y ~ x1 + np.log(x2) + C(g)"
    fit = ar.attnreg(formula, data=ddf)
    mem = ar.attnreg(formula, data=frame).with_vcov(kind, **opts)

    def no_streaming(self, columns):
        raise AssertionError("partitions were read through the client")

    calls = []
    real = DaskRunner.map_reduce

    def spy(self, fn, args, **kw):
        calls.append(fn.__name__)
        return real(self, fn, args, **kw)

    monkeypatch.setattr(DaskSource, "_raw", no_streaming)
    monkeypatch.setattr(DaskRunner, "map_reduce", spy)
    robust = fit.with_vcov(kind, **opts)
    assert calls == ["second_pass"]
    V, W = robust.vcov.to_numpy(), mem.vcov.to_numpy()
    np.testing.assert_allclose(V, W, rtol=1e-10, atol=1e-12 * np.abs(W).max())
    close(robust.std_err, mem.std_err)


def test_the_refinement_of_an_ill_conditioned_dask_fit(client) -> None:
    rng = np.random.default_rng(11)
    n = 2000
    x1 = 1e3 + rng.normal(size=n)  # an offset: the gradient must be taken centred
    df = pd.DataFrame({"x1": x1, "x2": x1 + 1e-5 * rng.normal(size=n),
                       "x3": rng.normal(size=n)})
    df["y"] = 1 + df.x1 - df.x2 + df.x3 + 0.01 * rng.normal(size=n)
    mem = ar.attnreg("y ~ x1 + x2 + x3", data=df)
    fit = ar.attnreg("y ~ x1 + x2 + x3", data=dd.from_pandas(df, npartitions=5))
    local = ar.attnreg("y ~ x1 + x2 + x3", data=df, chunk_rows=400)
    # refined, each gradient on the workers, and converging (an uncentred gradient stalls
    # at corrections of 1e-6)
    assert len(fit.refinement) >= 2 and min(fit.refinement) < 1e-12
    close(fit.coef, mem.coef, 1e-9)
    close(fit.coef, local.coef, 1e-9)
