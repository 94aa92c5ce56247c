"""The ablation grid: published data against PAPER.md, the variants' parameter counts, a tiny run
through the Table 1 protocol (cache, resume, report, CSV) and the command line."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from attnreg.bench import ablation as ab
from attnreg.bench import cli
from attnreg.bench import protocol as pr
from attnreg.bench import published as pub
from attnreg.exceptions import OptionError
from tests.conftest import REPO, shared_data_dir

pytest.importorskip("sklearn")
torch = pytest.importorskip("torch")

PAPER = REPO.parent / "shared" / "docs" / "PAPER.md"
NAMES = {"California": "california", "Yacht": "yacht", "Energy": "energy", "Concrete": "concrete",
         "Airfoil": "airfoil", "Abalone": "abalone", "Kin8nm": "kin8nm", "Protein": "protein"}


def _markdown_table(text: str, title: str) -> pd.DataFrame:
    """The first markdown table after the line containing ``title``, as strings."""
    lines = text[text.index(title):].splitlines()[1:]
    rows = [ln for ln in lines[next(i for i, ln in enumerate(lines) if ln.startswith("|")):]]
    rows = rows[:next((i for i, ln in enumerate(rows) if not ln.startswith("|")), len(rows))]
    cells = [[c.strip() for c in ln.strip("|").split("|")] for ln in rows if not set(ln) <= set("|-: ")]
    return pd.DataFrame(cells[1:], columns=cells[0]).set_index(cells[0][0])


def _num(text: str) -> float:
    return float(text.replace("−", "-").replace(",", ""))


@pytest.fixture(scope="module")
def paper() -> str:
    if not PAPER.is_file():
        pytest.skip("PAPER.md not available")
    return PAPER.read_text()


def test_published_ablation_matches_paper(paper: str) -> None:
    grid = _markdown_table(paper, "**Ablation grid")
    assert list(grid.columns) == list(pub.VARIANT_NAMES[:9])
    for name, row in grid.iterrows():
        for v, value in row.items():
            assert pub.ABLATION[NAMES[name]][v] == _num(value), (name, v)
    trim = _markdown_table(paper, "**Trimmed configuration")
    for name, key in NAMES.items():
        assert pub.ABLATION[key]["trimmed"] == _num(trim.loc[name, "trimmed"])
    assert set(pub.ABLATION) == set(NAMES.values())
    summary = _markdown_table(paper, "**Ablation summary")
    for v, row in summary.iterrows():
        expected = (_num(row["median R²"]), _num(row["mean R²"]), _num(row["avg rank"]))
        assert pub.ABLATION_SUMMARY[v] == expected
        assert pub.PARAMS[v] == _num(row["params"])
    variants = _markdown_table(paper, "### 2.4 Ablation")
    for v, row in variants.iterrows():
        assert pub.PARAMS[v] == _num(re.match(r"[\d,]+", row["params (P=8)"]).group())


def test_published_table1_matches_paper(paper: str) -> None:
    table = _markdown_table(paper, "### 3.2 Table 1")
    cols = {"OLS": "ols", "RF": "rf", "MLP": "mlp", "FT-T": "ftt", "Att.Reg": "softmax", "Reg.Blk": "block"}
    for name, row in table.iterrows():
        for col, key in cols.items():
            assert pub.TABLE1[NAMES[name]][key] == _num(row[col]), (name, col)
    assert pr.PUBLISHED is pub.TABLE1


def test_variant_names_and_parameters() -> None:
    from attnreg.nn import VARIANTS

    assert tuple(VARIANTS) == pub.VARIANT_NAMES
    assert set(pub.DEFAULT_VARIANTS) <= set(pub.VARIANT_NAMES)
    assert ab.variant_parameters() == pub.PARAMS
    assert tuple(pr.dataset_names()) == pub.DATASETS and pr.COMPARED == pub.COMPARED
    assert ab.check_variants(None) == list(pub.VARIANT_NAMES) == ab.check_variants(["all"])
    with pytest.raises(OptionError, match="variant must be one of"):
        ab.check_variants(["RB", "A8"])
    with pytest.raises(OptionError, match="max_epochs"):
        ab.run_ablation(["RB"], ["yacht"], max_epochs=0)


@pytest.fixture
def small_data(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every dataset is a 120-row synthetic frame (4 predictors, an interaction); records loads."""
    loads: list[str] = []
    rng = np.random.default_rng(0)
    x = rng.normal(size=(120, 4))
    df = pd.DataFrame(x, columns=list("abcd"))
    df["y"] = x[:, 0] * x[:, 1] + x[:, 2] + 0.1 * rng.normal(size=120)

    def load(name: str, **kw: Any) -> pd.DataFrame:
        loads.append(name)
        return df

    monkeypatch.setattr(pr, "load_dataset", load)
    return loads


def test_tiny_run_uses_the_table1_path_and_caches(small_data: list[str], tmp_path: Path) -> None:
    variants = ["A4", "RB", "trimmed"]
    res = ab.run_ablation(variants, ["yacht"], 2, cache_dir=tmp_path, progress=False, max_epochs=3)
    assert list(res.columns) == list(pr.COLUMNS) and res["method"].tolist() == variants * 2
    assert res["seed"].tolist() == [42] * 3 + [1042] * 3 and (res["n_train"] == 96).all()
    cells = sorted(p.name for p in (tmp_path / "full-max_epochs3").glob("*.json"))
    assert len(cells) == 6 and "yacht__RB__split1.json" in cells
    # RB here is the Table 1 "block" method, same code path and seed: the same R²
    X, y = pr.prepare("yacht")
    capped = pr.network_method("RB", max_epochs=3)
    same = pr.run_cell(X, y, 42, capped)["r2"]
    assert same == pytest.approx(res["r2"].iloc[1], abs=1e-6)  # other thread count: rounding only
    again = ab.run_ablation(variants, ["yacht"], 2, cache_dir=tmp_path, progress=False, max_epochs=3)
    pd.testing.assert_frame_equal(res, again)  # resumed from the cells: nothing refitted
    assert small_data == ["yacht", "yacht"]
    text = ab.ablation_report(res)
    assert "mean out-of-sample R² over 2 split(s)" in text and "Trainable parameters at P=8" in text
    assert "Ours minus published" in text and "\n  trimmed: " in text and "\n  A4: " in text
    assert "minus the Regression Block, published" in text
    assert re.search(r"yacht\s+-0\.451\s+\+0\.000", text)  # paper: A4 − RB and trimmed − RB on Yacht


def test_table1_cells_are_reused_for_rb_and_a0(small_data: list[str], tmp_path: Path) -> None:
    (tmp_path / "full").mkdir()
    for method, r2 in (("block", 0.123), ("ftt", 0.456)):
        cell = {"dataset": "yacht", "split": 0, "seed": 42, "method": method, "r2": r2, "seconds": 1.0,
                "n_train": 96, "n_test": 24, "version": pr.PROTOCOL_VERSION, "quick": False}
        (tmp_path / "full" / f"yacht__{method}__split0.json").write_text(json.dumps(cell))
    res = ab.run_ablation(["RB", "A0"], ["yacht"], 1, cache_dir=tmp_path, progress=False)
    assert res["r2"].tolist() == [0.123, 0.456] and res["method"].tolist() == ["RB", "A0"]
    assert small_data == []  # nothing loaded, nothing fitted
    assert json.loads((tmp_path / "full" / "yacht__RB__split0.json").read_text())["copied_from"] == "block"
    # with several training runs per split, Table 1's averaged cells are the ones reused
    cell = {**json.loads((tmp_path / "full" / "yacht__block__split0.json").read_text()), "r2": 0.789,
            "repeats": 3}
    (tmp_path / "full" / "yacht__block__x3__split0.json").write_text(json.dumps(cell))
    res = ab.run_ablation(["RB"], ["yacht"], 1, cache_dir=tmp_path, progress=False, repeats=3)
    assert res["r2"].tolist() == [0.789] and res["repeats"].tolist() == [3] and small_data == []
    assert (tmp_path / "full" / "yacht__RB__x3__split0.json").exists()
    assert "RB 3; the paper trained once per split" in ab.ablation_report(res)


def test_cli_quick_run(small_data: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["ablation", "--variants", "A2,RB", "--datasets", "yacht,energy", "--quick", "--max-epochs", "2",
            "--out", str(tmp_path), "--no-progress"]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith("QUICK RUN") and "Ablation grid (App. E)" in out
    assert "A2-RB" not in out and "ablation_quick_report.txt" in out
    results = pd.read_csv(tmp_path / "ablation_quick_results.csv")
    assert results.shape == (4, 8) and set(results["method"]) == {"A2", "RB"}
    assert len(list((tmp_path / "cells" / "quick-max_epochs2").glob("*.json"))) == 4
    assert cli.main([*argv, "--quiet"]) == 0  # resumes; prints only the files
    captured = capsys.readouterr()
    assert captured.out.startswith("wrote ") and captured.out.count("\n") == 1 and captured.err == ""


def test_real_data_quick_smoke(tmp_path: Path) -> None:
    if shared_data_dir() is None:
        pytest.skip("benchmark data not available")
    res = ab.run_ablation(["A2", "trimmed"], ["yacht"], 1, quick=True, cache_dir=tmp_path, progress=False,
                          data_dir=shared_data_dir() / "uci", download=False, max_epochs=5)
    assert res.shape == (2, 8) and res["n_train"].tolist() == [246, 246] and res["r2"].notna().all()
