"""Checks shared by the summary tests: a summary's HTML, LaTeX and Markdown are well formed and
show the numbers it holds (not a test module: imported by the tests of each summary)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from html.parser import HTMLParser
from typing import Any

from attnreg.report import fmt_g

#: a line that is a row of a table, in each rendering
_TABLE_ROW = {"html": re.compile(r"<td[ >]"), "latex": re.compile(r"&.*\\\\\s*$"),
              "markdown": re.compile(r"^\|")}
_VOID = {"br", "hr", "img", "meta", "input", "col"}


class _Balance(HTMLParser):
    """Records every unclosed or mismatched tag."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag not in _VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
        else:
            self.stack.pop()


def html_errors(html: str) -> list[str]:
    """Unbalanced tags of an HTML fragment (empty when well formed)."""
    parser = _Balance()
    parser.feed(html)
    parser.close()
    return parser.errors + [f"<{t}> never closed" for t in parser.stack]


def latex_errors(latex: str) -> list[str]:
    """Environments opened and closed a different number of times."""
    envs = set(re.findall(r"\\(?:begin|end)\{(\w+)\}", latex))
    return [env for env in envs
            if latex.count(f"\\begin{{{env}}}") != latex.count(f"\\end{{{env}}}")]


def markdown_errors(markdown: str) -> list[str]:
    """Pipe tables whose rows do not all have the same number of cells (an escaped ``\\|`` is
    not a cell edge)."""
    errors: list[str] = []
    block: list[int] = []
    for line in [*markdown.splitlines(), ""]:
        if line.startswith("|"):
            block.append(len(re.findall(r"(?<!\\)\|", line)))
        elif block:
            if len(set(block)) != 1 or len(block) < 2:
                errors.append(f"table with cell edges per row {block}")
            block = []
    return errors


def check_renderings(obj: Any, figures: Iterable[float] = (), cells: Iterable[float] = (),
                     strings: Iterable[str] = ()) -> None:
    """``obj``'s HTML, LaTeX and Markdown are well formed, each has at least one table, and
    each shows every figure (at the 4 significant digits of the statistic tables) and every
    table cell (tabulate's default format ``g``) in a table row, and every string anywhere."""
    renderings = {"html": obj._repr_html_(), "latex": obj.to_latex(),
                  "markdown": obj.to_markdown()}
    assert html_errors(renderings["html"]) == []
    assert latex_errors(renderings["latex"]) == []
    assert markdown_errors(renderings["markdown"]) == []
    assert "<table>" in renderings["html"] and "\\begin{tabular}" in renderings["latex"]
    assert re.search(r"^\|[-:|]+\|$", renderings["markdown"], flags=re.M)
    figures, cells = list(figures), list(cells)
    for kind, text in renderings.items():
        table = "\n".join(line for line in text.splitlines() if _TABLE_ROW[kind].search(line))
        for value in figures:
            assert fmt_g(value) in table, f"{fmt_g(value)} not in a table row of the {kind}"
        for value in cells:
            assert f"{value:g}" in table, f"{value:g} not in a table row of the {kind}"
        for s in strings:
            assert s in text, f"{s!r} not in the {kind}"
