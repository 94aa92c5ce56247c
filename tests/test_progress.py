"""The shared progress line: quiet unless asked, throttled, and the last step never lost."""

from __future__ import annotations

from attnreg._progress import Progress


def test_a_held_back_step_is_shown_when_the_line_closes(capsys) -> None:
    with Progress(10, "work") as bar:
        bar.update(1)
        bar.update(2, "detail")  # within 0.1 s of the first: held back
    err = capsys.readouterr().err
    assert err.startswith("\rwork: 1/10") and "\rwork: 2/10" in err and err.endswith("detail\n")


def test_disabled_progress_writes_nothing(capsys) -> None:
    with Progress(3, "work", enabled=False) as bar:
        bar.update(3)
    assert capsys.readouterr().err == ""
