"""Renderers of an :class:`~attnreg.report.etable.ETable`: plain text, Markdown, LaTeX
(booktabs) and HTML, all from the table's cells.

Every renderer draws the same blocks: the header (model numbers, dependent variable,
method), the coefficient rows (estimate with stars, its standard error or t statistic below
in parentheses), the covariance and statistic rows, and the notes. Names are escaped for
each format: ``*`` and ``_`` in Markdown; ``_``, ``&``, ``%``, ``$``, ``#``, braces,
brackets, ``<`` and ``>`` in LaTeX; ``&``, ``<`` and ``>`` in HTML.
"""

from __future__ import annotations

import html as _html
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from attnreg.report.etable import ETable

__all__ = ["html", "latex", "latex_escape", "markdown", "text"]

_NUMBER = re.compile(r"^(?P<num>-?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]\d+)?|NA|-?Inf)"
                     r"(?P<stars>[^\d\s]*)$")


def _blocks(t: ETable) -> list[list[tuple[str, list[str]]]]:
    """The rows as (label, cells) in three blocks: header, coefficients, bottom."""
    header: list[tuple[str, list[str]]] = []
    coefs: list[tuple[str, list[str]]] = []
    bottom: list[tuple[str, list[str]]] = []
    for (row, part), cells in zip(t.table.index, t.table.to_numpy().tolist(), strict=True):
        if part == "header":
            header.append((row, cells))
        elif part == "estimate":
            coefs.append((row, cells))
        elif part in ("se", "t"):
            coefs.append(("", cells))
        else:
            bottom.append((row, cells))
    return [header, coefs, bottom]


def _statistic_latex(t: ETable) -> dict[str, str]:
    return dict(t.statistic_labels)


# ------------------------------------------------------------------------------ text

def text(t: ETable) -> str:
    """Plain text: left-aligned labels, right-aligned cells, rules between the blocks."""
    columns = [str(c) for c in t.table.columns]
    blocks = _blocks(t)
    rows = [r for b in blocks for r in b]
    w0 = max([len(label) for label, _ in rows] + [0])
    widths = [max([len(c)] + [len(cells[j]) for _, cells in rows]) for j, c in enumerate(columns)]

    def line(label: str, cells: list[str]) -> str:
        return "  ".join([label.ljust(w0), *(c.rjust(w) for c, w in zip(cells, widths,
                                                                         strict=True))])

    width = w0 + sum(w + 2 for w in widths)
    out = ["=" * width, line("", columns)]
    for i, block in enumerate(blocks):
        if i and block:
            out.append("-" * width)
        out += [line(label, cells) for label, cells in block]
    out.append("=" * width)
    out += list(t.notes)
    return "\n".join(s.rstrip() for s in out)


# ------------------------------------------------------------------------------ Markdown

def _md(s: str) -> str:
    return re.sub(r"([\\`*_|])", r"\\\1", s)


def markdown(t: ETable) -> str:
    """A pipe table (GitHub / pandoc Markdown), the notes as paragraphs below."""
    columns = [_md(str(c)) for c in t.table.columns]
    rows = [(_md(label), [_md(c) for c in cells]) for b in _blocks(t) for label, cells in b]
    w0 = max([len(label) for label, _ in rows] + [1])
    widths = [max([len(c), 3] + [len(cells[j]) for _, cells in rows])
              for j, c in enumerate(columns)]

    def line(label: str, cells: list[str]) -> str:
        return "| " + " | ".join([label.ljust(w0), *(c.rjust(w) for c, w in zip(
            cells, widths, strict=True))]) + " |"

    rule = "|:" + "-" * (w0 + 1) + "|" + "|".join("-" * (w + 1) + ":" for w in widths) + "|"
    out = [line("", columns), rule, *(line(label, cells) for label, cells in rows)]
    if t.notes:
        out += ["", *(_md(n) + ("  " if i < len(t.notes) - 1 else "")
                      for i, n in enumerate(t.notes))]
    return "\n".join(out)


# ------------------------------------------------------------------------------ LaTeX

_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
          "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
          "^": r"\textasciicircum{}", "[": "{[}", "]": "{]}", "<": r"\textless{}",
          ">": r"\textgreater{}"}


def latex_escape(s: str) -> str:
    """Text safe in LaTeX's text mode.

    Examples
    --------
    >>> from attnreg.report.etable_render import latex_escape
    >>> print(latex_escape("C(g)[T.b] & log_x"))
    C(g){[}T.b{]} \\& log\\_x
    """
    return "".join(_LATEX.get(ch, ch) for ch in s)


def _latex_number(num: str) -> str:
    m = re.fullmatch(r"(-?[\d.]+)e([+-])0*(\d+)", num)
    if m:
        sign = "-" if m.group(2) == "-" else ""
        return rf"{m.group(1)} \times 10^{{{sign}{m.group(3)}}}"
    return num


def _latex_cell(cell: str) -> str:
    """Numbers in math mode (a true minus sign, stars as a superscript), text escaped."""
    inner, wrap = cell, ("", "")
    if cell.startswith("(") and cell.endswith(")"):
        inner, wrap = cell[1:-1], ("(", ")")
    m = _NUMBER.match(inner)
    if not m or inner == "NA":
        return latex_escape(cell)
    num = m.group("num")
    if num.lstrip("-") == "Inf":
        num = num.replace("Inf", r"\infty")
    stars = m.group("stars")
    sup = f"^{{{latex_escape(stars)}}}" if stars else ""
    return f"${wrap[0]}{_latex_number(num)}{sup}{wrap[1]}$"


def latex(t: ETable) -> str:
    """A ``tabular`` with booktabs rules; the notes span the last rows in footnote size."""
    n = t.table.shape[1]
    labels = _statistic_latex(t)
    header, coefs, bottom = _blocks(t)

    def row(label: str, cells: list[str], numeric: bool = True) -> str:
        body = [_latex_cell(c) if numeric else latex_escape(c) for c in cells]
        return " & ".join([label, *body]) + r" \\"

    out = [rf"\begin{{tabular}}{{l{'c' * n}}}", r"\toprule",
           row("", [str(c) for c in t.table.columns], numeric=False)]
    out += [row(latex_escape(label), cells, numeric=False) for label, cells in header]
    if coefs:
        out.append(r"\midrule")
        out += [row(latex_escape(label), cells) for label, cells in coefs]
    if bottom:
        out.append(r"\midrule")
        for label, cells in bottom:
            out.append(row(labels.get(label, latex_escape(label)), cells,
                           numeric=label in labels))
    out.append(r"\bottomrule")
    out += [rf"\multicolumn{{{n + 1}}}{{l}}{{\footnotesize {latex_escape(note)}}} \\"
            for note in t.notes]
    out.append(r"\end{tabular}")
    return "\n".join(out)


# ------------------------------------------------------------------------------ HTML

def _html_cell(cell: str) -> str:
    m = _NUMBER.match(cell)
    if m and m.group("stars"):
        return f"{_html.escape(m.group('num'))}<sup>{_html.escape(m.group('stars'))}</sup>"
    return _html.escape(cell)


def html(t: ETable) -> str:
    """An HTML table: ``<thead>`` (models), one ``<tbody>`` per block, notes in ``<tfoot>``."""
    n = t.table.shape[1]
    header, coefs, bottom = _blocks(t)

    def tr(label: str, cells: list[str], tag: str = "td") -> str:
        return ("<tr>" + f"<{tag} style=\"text-align:left\">{_html.escape(label)}</{tag}>"
                + "".join(f"<{tag}>{_html_cell(c)}</{tag}>" for c in cells) + "</tr>")

    out = ['<table class="attnreg-etable">', "<thead>",
           tr("", [str(c) for c in t.table.columns], "th")]
    out += [tr(label, cells) for label, cells in header]
    out.append("</thead>")
    for block in (coefs, bottom):
        if block:
            out += ["<tbody>", *(tr(label, cells) for label, cells in block), "</tbody>"]
    if t.notes:
        out += ["<tfoot>", *(f'<tr><td colspan="{n + 1}" style="text-align:left">'
                             f"{_html.escape(note)}</td></tr>" for note in t.notes), "</tfoot>"]
    out.append("</table>")
    return "\n".join(out)
