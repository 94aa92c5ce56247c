"""Table 1 protocol: splits, subsampling, Abalone's target, the cell cache, the report and the CLI."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from attnreg.bench import cli
from attnreg.bench import protocol as pr
from attnreg.exceptions import OptionError
from tests.conftest import REPO, shared_data_dir

sklearn_split = pytest.importorskip("sklearn.model_selection").train_test_split


def _fake_frame(n: int = 6000, seed: int = 0) -> pd.DataFrame:
    """Numeric predictors, a string column (dropped like Abalone's Sex) and one NaN row."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3))
    df = pd.DataFrame(x, columns=["a", "b", "c"])
    df.insert(0, "Sex", rng.choice(["M", "F"], n))
    df["target"] = x @ [1.0, -2.0, 0.5] + 0.1 * rng.normal(size=n)
    df.loc[7, "b"] = np.nan
    return df


@pytest.fixture
def fake_data(monkeypatch: pytest.MonkeyPatch) -> pd.DataFrame:
    df = _fake_frame()

    def load(name: str, **kw: Any) -> pd.DataFrame:
        return df.select_dtypes(include=[np.number]) if kw.get("numeric_only") else df

    monkeypatch.setattr(pr, "load_dataset", load)
    return df


@pytest.fixture
def counting(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """A registered method 'count' recording what it receives and returning y's training mean."""
    calls: list[dict[str, Any]] = []

    def fn(X: np.ndarray, y: np.ndarray, X_new: np.ndarray, seed: int, device: str, progress: bool):
        calls.append({"X": X, "y": y, "seed": seed, "device": device})
        return np.full(len(X_new), y.mean())

    monkeypatch.setitem(pr.METHODS, "count", pr.Method(fn, scale_y=True))
    return calls


def test_split_seeds_and_rows_match_sklearn() -> None:
    assert pr.split_seeds(5) == [42, 1042, 2042, 3042, 4042]
    X = np.arange(308 * 2).reshape(308, 2)
    y = np.arange(308.0)
    for seed in pr.split_seeds(5):
        train, test = pr.split_indices(308, seed)
        assert (len(train), len(test)) == (246, 62)
        x_tr, _, _, y_te = sklearn_split(X, y, test_size=0.2, random_state=seed)
        np.testing.assert_array_equal(X[train], x_tr)
        np.testing.assert_array_equal(y[test], y_te)
        assert sorted([*train, *test]) == list(range(308))


def test_subsample_rule_and_dropped_columns(fake_data: pd.DataFrame) -> None:
    X, y = pr.prepare("protein")
    clean = fake_data.drop(columns="Sex").dropna()
    pick = np.random.RandomState(42).choice(len(clean), 5000, replace=False)
    expected = clean.iloc[pick]
    assert list(X.columns) == ["a", "b", "c"] and y.name == "target"
    np.testing.assert_array_equal(X.index, expected.index)  # rows in the order drawn
    np.testing.assert_array_equal(y.to_numpy(), expected["target"].to_numpy())
    Xq, _ = pr.prepare("protein", cap=pr.QUICK_CAP)
    assert len(Xq) == 1000 and 7 not in X.index


def test_small_dataset_not_subsampled(monkeypatch: pytest.MonkeyPatch) -> None:
    df = _fake_frame(300).drop(columns="Sex")
    monkeypatch.setattr(pr, "load_dataset", lambda name, **kw: df)
    X, _ = pr.prepare("yacht")
    assert list(X.index) == [i for i in range(300) if i != 7]


def test_abalone_true_target() -> None:
    d = shared_data_dir()
    if d is None or not (d / "uci" / "abalone.csv").exists():
        pytest.skip("benchmark data not available")
    X, y = pr.prepare("abalone", data_dir=d, download=False)
    assert X.shape == (4177, 7) and "Sex" not in X and y.name == "Rings"
    assert y.min() == 1 and y.max() == 29 and y.mean() == pytest.approx(9.9337, abs=1e-4)
    cell = pr.run_cell(X, y, 42, "ols")
    assert 0.45 < cell["r2"] < 0.6  # the true Rings; the paper's mis-encoded target gives ~0.26
    assert cell["n_train"] == 3341


def test_cache_resume_and_scaling(fake_data: pd.DataFrame, counting: list[dict[str, Any]],
                                  tmp_path: Path) -> None:
    res = pr.run_table1(["protein", "yacht"], ["count"], splits=2, cache_dir=tmp_path, progress=False)
    assert len(counting) == 4 and list(res.columns) == list(pr.COLUMNS)
    assert res["seed"].tolist() == [42, 1042, 42, 1042] and (res["n_train"] == 4000).all()
    first = counting[0]
    np.testing.assert_allclose(first["X"].mean(axis=0), 0, atol=1e-12)
    np.testing.assert_allclose(first["X"].std(axis=0), 1)
    assert abs(first["y"].mean()) < 1e-12 and first["y"].std() == pytest.approx(1)
    assert res["r2"].abs().max() < 0.01  # the training mean predicts nothing
    again = pr.run_table1(["protein", "yacht"], ["count"], splits=2, cache_dir=tmp_path, progress=False)
    assert len(counting) == 4  # nothing recomputed
    pd.testing.assert_frame_equal(res, again)
    (tmp_path / "full" / "yacht__count__split1.json").unlink()
    (tmp_path / "full" / "protein__count__split0.json").write_text("{not json")
    pr.run_table1(["protein", "yacht"], ["count"], splits=2, cache_dir=tmp_path, progress=False)
    assert len(counting) == 6
    quick = pr.run_table1(["yacht"], ["count"], splits=5, cache_dir=tmp_path, quick=True, progress=False)
    assert len(counting) == 7 and quick["n_train"].tolist() == [800]  # kept apart from full cells


def test_repeats_average_training_runs(fake_data: pd.DataFrame, counting: list[dict[str, Any]],
                                       monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Several training seeds per split: the cell is their mean R², cached apart; a
    deterministic method is fitted once."""
    def noisy(X: np.ndarray, y: np.ndarray, X_new: np.ndarray, seed: int, device: str, progress: bool):
        counting.append({"seed": seed})
        return np.full(len(X_new), float(seed % 7))  # R² depends on the seed

    monkeypatch.setitem(pr.METHODS, "noisy", pr.Method(noisy))
    monkeypatch.setitem(pr.METHODS, "fixed", pr.Method(noisy, stochastic=False))
    X, y = pr.prepare("yacht")
    single = pr.run_cell(X, y, 42, "noisy")
    counting.clear()
    cell = pr.run_cell(X, y, 42, "noisy", repeats=3)  # same split, training seeds 42, 43, 44
    assert [c["seed"] for c in counting] == [42, 43, 44] and cell["repeats"] == 3
    runs = cell["r2_runs"]
    assert runs[0] == single["r2"] and len(set(runs)) == 3 and cell["r2"] == pytest.approx(np.mean(runs))
    singles = runs
    counting.clear()
    res = pr.run_table1(["yacht"], ["noisy", "fixed"], splits=1, cache_dir=tmp_path, progress=False,
                        repeats=3)
    assert len(counting) == 4 and res["repeats"].tolist() == [3, 1]
    assert res["r2"].iloc[0] == pytest.approx(np.mean(singles))
    assert (tmp_path / "full" / "yacht__noisy__x3__split0.json").exists()
    assert (tmp_path / "full" / "yacht__fixed__split0.json").exists()
    again = pr.run_table1(["yacht"], ["noisy"], splits=1, cache_dir=tmp_path, progress=False, repeats=3)
    assert len(counting) == 4 and again["r2"].iloc[0] == res["r2"].iloc[0]  # from the cache
    pr.run_table1(["yacht"], ["noisy"], splits=1, cache_dir=tmp_path, progress=False)
    assert len(counting) == 5  # one run per split is a different cell
    assert "noisy 3; the paper trained once per split" in pr.table1_report(res)
    assert "training runs" not in pr.table1_report(res.assign(repeats=1))
    for bad in (0, 1.5, True):
        with pytest.raises(OptionError, match="repeats must be a positive integer"):
            pr.run_table1(["yacht"], ["noisy"], splits=1, progress=False, repeats=bad)
        with pytest.raises(OptionError, match="repeats must be a positive integer"):
            pr.run_cell(X, y, 42, "fixed", repeats=bad)  # checked for deterministic methods too


def test_builtin_methods_run(fake_data: pd.DataFrame) -> None:
    X, y = pr.prepare("yacht", cap=300)
    for m in ("ols", "ridge", "pcr"):
        assert pr.run_cell(X, y, 42, m)["r2"] > 0.99
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # small networks: extra threads only contend
    try:
        mlp = [pr.run_cell(X.iloc[:200], y.iloc[:200], 42, "mlp")["r2"] for _ in range(2)]
    finally:
        torch.set_num_threads(threads)
    assert mlp[0] == mlp[1] and mlp[0] > 0.8  # seeded, and it learns


def test_method_registry() -> None:
    assert pr.get_method("block").uses_torch and pr.get_method("ftt").uses_torch
    assert pr.PLANNED == {}
    with pytest.raises(OptionError, match=r"must be one of 'ols', 'ridge'"):
        pr.run_table1(["yacht"], ["nope"])
    with pytest.raises(OptionError, match="splits"):
        pr.run_table1(["yacht"], ["ols"], splits=0)


def _fake_results(shift: float = 0.01, splits: int = 2) -> pd.DataFrame:
    rows = []
    for d, pub in pr.PUBLISHED.items():
        for r in range(splits):
            for m in ("ols", "ridge"):
                rows.append({"dataset": d, "split": r, "seed": 42 + 1000 * r, "method": m,
                             "r2": pub["ols"] + shift + (0.002 if r else -0.002), "seconds": 0.1,
                             "n_train": 4000})
    return pd.DataFrame(rows, columns=list(pr.COLUMNS))


def test_report(tmp_path: Path) -> None:
    text = pr.table1_report(_fake_results())
    assert "over 2 split(s)" in text and "mean (7, no Abalone)" in text
    assert "california" in text and "0.607" in text  # .597 + .01
    assert "ols diff" in text and "ridge paper" not in text  # ridge has no published column
    assert "ols: 7 of 7 above the paper, 0 below, 0 equal; mean difference +0.010" in text
    assert "p = 0.016" in text  # binomtest(7, 7), two-sided
    low = pr.table1_report(_fake_results(-0.02))
    assert "0 of 7 above the paper, 7 below, 0 equal; mean difference -0.020" in low
    paths = pr.write_results(_fake_results(), tmp_path)
    assert pd.read_csv(paths["results.csv"]).shape == (32, 8)
    assert pd.read_csv(paths["means.csv"], index_col=0).shape == (8, 2)


def test_cli_help(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in ([], ["table1"], ["mc"], ["ablation"]):
        with pytest.raises(SystemExit) as ex:
            cli.main([*argv, "--help"])
        assert ex.value.code == 0
    assert "--quick" in capsys.readouterr().out


def test_cli_errors_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["table1", "--methods", "ols,nope", "--out", "unused"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and "must be one of" in err
    with pytest.raises(SystemExit) as ex:
        cli.main(["table1", "--splits", "many"])
    assert ex.value.code == 2 and capsys.readouterr().err.count("\n") == 1
    assert cli.main(["ablation", "--variants", "RB,A9", "--out", "unused"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "variant must be one of A0, A1" in err
    assert cli.main(["ablation", "--max-epochs", "0", "--out", "unused"]) == 2
    assert "--max-epochs must be a positive integer" in capsys.readouterr().err


def test_cli_table1_end_to_end(fake_data: pd.DataFrame, counting: list[dict[str, Any]], tmp_path: Path,
                               capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["table1", "--methods", "count,ols", "--datasets", "yacht,energy", "--quick",
            "--out", str(tmp_path), "--no-progress"]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert "Table 1: mean out-of-sample R² over 1 split(s)" in out and "ols paper" in out
    assert (tmp_path / "table1_quick_results.csv").exists() and len(counting) == 2
    assert len(list((tmp_path / "cells" / "quick").glob("*.json"))) == 4
    assert cli.main([*argv, "--repeats", "2", "-q"]) == 0  # 'count' is stochastic: refitted twice
    assert len(counting) == 6 and len(list((tmp_path / "cells" / "quick").glob("*__x2__*.json"))) == 2


def test_python_m_entry_point() -> None:
    proc = subprocess.run([sys.executable, "-m", "attnreg.bench", "table1", "--datasets", "mars"],
                          capture_output=True, text=True, cwd=REPO, timeout=60)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip().startswith("python -m attnreg.bench table1: error: dataset must be one of")
