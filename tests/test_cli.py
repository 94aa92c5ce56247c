"""The command line: every command, --help everywhere, one-line errors with exit status 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from attnreg.cli import main


@pytest.fixture(scope="module")
def macro_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from statsmodels.datasets import macrodata

    m = macrodata.load_pandas().data
    m["date"] = [f"{int(y)}Q{int(q)}" for y, q in zip(m["year"], m["quarter"], strict=True)]
    path = tmp_path_factory.mktemp("cli") / "macro.csv"
    m.to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def small_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli") / "d.csv"
    path.write_text("y,x,g\n1,2,a\n2,3.5,b\n3,5.2,a\n4,8,b\n5,8.5,a\n6,11,b\n")
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(code: int, err: str) -> str:
    assert code == 2
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert ": error: " in lines[0]
    return lines[0]


def test_demo_is_the_default(capsys) -> None:
    code, out, _ = run(capsys)
    assert code == 0 and "Residual standard error: 304.9 on 9 degrees of freedom" in out
    assert run(capsys, "demo")[1] == out


def test_fit_prints_the_summary(capsys, small_csv: Path) -> None:
    code, out, _ = run(capsys, "fit", "y ~ x + C(g)", "--data", str(small_csv))
    assert code == 0 and "Coefficients:" in out and "C(g)[T.b]" in out
    code, out, _ = run(capsys, "fit", "y ~ x", "--data", str(small_csv), "--method", "ridge",
                       "--lam", "0.5", "--vcov", "HC1")
    assert code == 0 and "lam = 0.5" in out


def test_forecast_prints_the_evaluation(capsys, macro_csv: Path, tmp_path: Path) -> None:
    out_csv = tmp_path / "fc.csv"
    code, out, err = run(capsys, "forecast", "infl ~ lag(infl, 1) + lag(unemp, 1)",
                         "--data", str(macro_csv), "--index-col", "date", "--freq", "Q",
                         "--start", "1985Q1", "--method", "ridge", "--out", str(out_csv))
    assert code == 0, err
    assert "99 forecasts, targets 1985Q1 to 2009Q3" in out and "OOS R-squared" in out
    assert len(pd.read_csv(out_csv)) == 99
    code, out, _ = run(capsys, "forecast", "infl ~ lag(infl, 4)", "--data", str(macro_csv),
                       "--index-col", "date", "--freq", "Q", "--start", "2000Q1",
                       "--scheme", "rolling", "--window", "40", "--horizon", "4", "--leakage-audit")
    assert code == 0 and "horizon = 4" in out and "scheme = 'rolling'" in out


def test_forecast_with_integer_labels(capsys, macro_csv: Path, tmp_path: Path) -> None:
    frame = pd.read_csv(macro_csv).assign(t=lambda d: range(len(d)))
    path = tmp_path / "t.csv"
    frame.to_csv(path, index=False)
    code, out, _ = run(capsys, "forecast", "infl ~ lag(infl, 1)", "--data", str(path),
                       "--index-col", "t", "--start", "150", "--method", "pcr", "--k", "1")
    assert code == 0 and "53 forecasts" in out


@pytest.mark.parametrize("argv", [[], ["demo"], ["fit"], ["forecast"]], ids=lambda a: " ".join(a))
def test_help_everywhere(capsys, argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main([*argv, "--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: attnreg")


def test_bench_forwards_to_the_benchmark_cli(capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["bench", "--help"])
    assert exit_.value.code == 0
    assert "table1" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_:
        main(["bench", "mc", "--help"])
    assert exit_.value.code == 0 and "--reps" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_:
        main(["bench", "nope"])
    assert exit_.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


@pytest.mark.parametrize(("argv", "message"), [
    (["fit", "y ~ x", "--data", "{missing}"], "no such file"),
    (["fit", "y ~ x", "--data", "{dir}"], "is a directory"),
    (["fit", "y ~ x", "--data", "{empty}"], "not a readable CSV file"),
    (["fit", "y ~ x", "--data", "{binary}"], "not a readable CSV file"),
    (["fit", "y ~ z", "--data", "{small}"], "data has no column 'z'"),
    (["fit", "y ~ ~ x +", "--data", "{small}"], "could not parse formula 'y ~ ~ x +': expected"),
    (["fit", "y ~ x", "--data", "{small}", "--method", "lasso"], "invalid choice: 'lasso'"),
    (["fit", "y ~ x", "--data", "{small}", "--lam", "abc"], "expected a number, 'gcv' or 'loo'"),
    (["fit", "y ~ x", "--data", "{small}", "--k", "2"], "k applies to method 'pcr' only"),
    (["fit", "y ~ x", "--data", "{small}", "--vcov", "HC9"], "vcov type must be one of"),
    (["fit", "y ~ x", "--data", "{small}", "--opt", "heads"], "expected KEY=VALUE"),
    (["fit", "y ~ x", "--data", "{small}", "--opt", "heads=2"], "unknown option(s)"),
    (["fit", "y ~ x"], "the following arguments are required: --data"),
    (["frobnicate"], "invalid choice: 'frobnicate'"),
    (["forecast", "infl ~ infl", "--data", "{macro}", "--index-col", "date", "--freq", "Q"],
     "is lagged 0 period(s) but the horizon is 1"),
    (["forecast", "infl ~ lag(infl, 1)", "--data", "{macro}", "--index-col", "date", "--freq", "Q",
      "--start", "1800Q1"], "is not a label of the data's index"),
    (["forecast", "infl ~ lag(infl, 1)", "--data", "{macro}", "--index-col", "nope"],
     "--index-col 'nope' is not a column"),
    (["forecast", "infl ~ lag(infl, 1)", "--data", "{macro}", "--index-col", "year", "--freq", "Q"],
     "cannot be read as periods"),
    (["forecast", "infl ~ lag(infl, 1)", "--data", "{macro}", "--freq", "Q"], "--freq needs --index-col"),
    (["forecast", "infl ~ lag(infl, 1)", "--data", "{macro}", "--scheme", "rolling"], "needs window="),
    (["forecast", "infl ~ lag(infl, 1)", "--data", "{macro}", "--horizon", "x"], "invalid int value"),
], ids=lambda v: v if isinstance(v, str) else None)
def test_errors_are_one_line(capsys, tmp_path: Path, small_csv: Path, macro_csv: Path,
                             argv: list[str], message: str) -> None:
    (tmp_path / "empty.csv").write_text("")
    (tmp_path / "binary.csv").write_bytes(b"\x00\xff\xfe\x00")
    paths = {"missing": tmp_path / "missing.csv", "dir": tmp_path, "empty": tmp_path / "empty.csv",
             "binary": tmp_path / "binary.csv", "small": small_csv, "macro": macro_csv}
    argv = [a.format(**{k: str(v) for k, v in paths.items()}) for a in argv]
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse's own errors
        code = int(exit_.code or 0)
    line = one_line_error(code, capsys.readouterr().err)
    assert line.startswith("attnreg")
    assert message in line


def test_entry_point_subprocess(small_csv: Path) -> None:
    """``python -m attnreg`` runs the same main(); errors carry no traceback."""
    cmd = [sys.executable, "-m", "attnreg"]
    ok = subprocess.run([*cmd, "fit", "y ~ x", "--data", str(small_csv)], capture_output=True,
                        text=True, check=True)
    assert "Coefficients:" in ok.stdout
    bad = subprocess.run([*cmd, "forecast", "y ~ x", "--data", str(small_csv.with_suffix(".nope"))],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr


def test_closed_pipe_is_not_an_error() -> None:
    """``attnreg | head -1`` ends quietly, as Unix tools do: a closed stdout is not an error."""
    import os
    import subprocess
    import sys

    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the demo writes a byte
    proc = subprocess.run([sys.executable, "-m", "attnreg"], stdout=write_end,
                          stderr=subprocess.PIPE, text=True, timeout=120)
    os.close(write_end)
    assert proc.returncode == 0
    assert "error" not in proc.stderr and "Traceback" not in proc.stderr


def test_fit_refuses_numbers_with_a_stray_string(capsys, tmp_path: Path) -> None:
    rows = [f"{i / 10},{i % 7}" for i in range(300)]
    rows[7] = "oops,1"
    path = tmp_path / "stray.csv"
    path.write_text("x,y\n" + "\n".join(rows) + "\n")
    code, out, err = run(capsys, "fit", "y ~ x", "--data", str(path), "--method", "ridge")
    assert code == 2 and out == ""
    assert "column 'x' is text" in err and "'oops' at row 7" in err


def _readme_command_lines() -> list[list[str]]:
    """The command lines of the README's plain code blocks, options in brackets included."""
    import re
    import shlex

    from tests.conftest import REPO

    text = (REPO / "README.md").read_text()
    blocks, current, language = [], [], None
    for line in text.splitlines():
        if line.startswith("```"):
            if language is None:
                language, current = line[3:].strip(), []
            else:
                if language == "":
                    blocks.append("\n".join(current))
                language = None
        elif language is not None:
            current.append(line)
    commands = []
    for block in blocks:
        for line in re.sub(r"\\\n\s*", " ", block).splitlines():
            line = line.split("  #")[0].replace("[", "").replace("]", "").strip()
            if line.startswith(("attnreg ", "python -m attnreg.bench ")):
                words = shlex.split(line)
                commands.append(words[1:] if words[0] == "attnreg" else ["bench", *words[3:]])
    return commands


def test_every_readme_command_line_parses() -> None:
    """Each command of the README is accepted by the parser of its command (not run)."""
    from attnreg.bench.cli import _parser as bench_parser
    from attnreg.cli import _parser

    commands = _readme_command_lines()
    assert len(commands) >= 8
    for argv in commands:
        if argv[0] == "bench":
            bench_parser().parse_args(argv[1:])
        else:
            _parser().parse_args(argv)


def test_readme_forecast_example_runs_at_its_horizon(capsys, macro_csv: Path) -> None:
    """The README's forecast command with its own --horizon 4 (it once failed the guard)."""
    (argv,) = [a for a in _readme_command_lines() if a[0] == "forecast"]
    argv = [str(macro_csv) if a == "macro.csv" else a for a in argv]
    argv = [a for a in argv if a not in ("--scheme", "rolling", "--window", "60")]
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    assert "horizon = 4" in out and "OOS R-squared" in out


def test_leakage_hint_names_the_command_line_option(capsys, macro_csv: Path) -> None:
    code, _out, err = run(capsys, "forecast", "infl ~ lag(infl, 1)", "--data", str(macro_csv),
                         "--index-col", "date", "--freq", "Q", "--horizon", "2")
    line = one_line_error(code, err)
    assert '--known "lag(infl, 1)"' in line and "known=[" not in line
    code, _out, err = run(capsys, "forecast", "infl ~ lag(infl, 1) + lag(unemp, 2)", "--data",
                         str(macro_csv), "--index-col", "date", "--freq", "Q", "--horizon", "2",
                         "--known", "lag(infl, 1)")
    assert code == 0, err
    code, _out, err = run(capsys, "forecast", "infl ~ lag(np.log(realgdp) - np.log(realgdp).mean(), 1)",
                          "--data", str(macro_csv), "--index-col", "date", "--freq", "Q")
    line = one_line_error(code, err)
    assert "looks ahead" in line and "--known TERM" in line and "known=[" not in line
    code, _out, err = run(capsys, "forecast", "infl ~ lag(infl, 1)", "--data", str(macro_csv),
                          "--index-col", "date", "--freq", "Q", "--known", "trend")
    line = one_line_error(code, err)
    assert '--known "trend"' in line and "known=[" not in line


def test_formulas_on_the_command_line_can_use_numpy(capsys, small_csv: Path) -> None:
    """The parser's own example, ``np.log(x2)``, works: numpy is ``np`` in the formula."""
    code, out, err = run(capsys, "fit", "y ~ np.log(x) + C(g)", "--data", str(small_csv))
    assert code == 0, err
    assert "np.log(x)" in out


def test_bench_writes_into_the_user_cache_by_default(tmp_path: Path, monkeypatch) -> None:
    from attnreg.bench.cli import _out_dir

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert _out_dir(None) == tmp_path / "attnreg" / "results"
    assert _out_dir("here") == Path("here")
