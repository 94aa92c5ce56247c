"""The formula as text: R's ``.`` expanded, the formula parsed, every name it uses checked."""

from __future__ import annotations

import ast
import difflib
import keyword
import re
from typing import Any

import pandas as pd
import patsy

from attnreg.exceptions import FormulaError
from attnreg.formula.frame import names_in

__all__ = ["check_names", "expand_dot", "parse", "r_spelling_hint", "top_level_split"]

# names every formula can use without importing them (R-like helpers and numpy)
_BUILTIN_NAMES = {"np", "numpy", "C", "I", "Q", "center", "standardize", "scale", "bs", "cr", "cc",
                  "te", "Treatment", "Sum", "Poly", "Diff", "Helmert", "abs", "poly"}

# R's spellings of functions a formula writes otherwise here: name -> the Python function
_R_SPELLINGS = {"factor": "C", "as_factor": "C", "log": "np.log", "log2": "np.log2",
                "log10": "np.log10", "log1p": "np.log1p", "exp": "np.exp", "expm1": "np.expm1",
                "sqrt": "np.sqrt", "sin": "np.sin", "cos": "np.cos", "tan": "np.tan"}


def _quote(name: str) -> str:
    if name.isidentifier() and not keyword.iskeyword(name):
        return name
    return "Q(" + repr(name) + ")"


_DOT = re.compile(r"(?<![\w.)\]\"'])\.(?![\w(\"'])")


def expand_dot(formula: str, frame: pd.DataFrame, exclude: list[Any] | tuple[()] = ()) -> str:
    """Expand R's ``.`` on the right-hand side to every column not otherwise used.

    Examples
    --------
    >>> import pandas as pd
    >>> expand_dot("y ~ .", pd.DataFrame({"y": [1.0], "a": [2.0], "b c": [3.0]}))
    "y ~ (a + Q('b c'))"
    """
    lhs, rhs = formula.split("~", 1)
    if not _DOT.search(rhs):
        return formula
    lhs_names = names_in(lhs)
    skip = set(lhs_names) | {e for e in exclude if isinstance(e, str)}
    skip |= {c for c in frame.columns if lhs.strip() == str(c)}
    cols = [_quote(str(c)) for c in frame.columns if str(c) not in skip]
    if not cols:
        raise FormulaError(f"'.' in {formula!r} expands to no columns: data has only the response")
    return lhs + "~" + _DOT.sub("(" + " + ".join(cols) + ")", rhs)


_SINGLE = (ast.Name, ast.Attribute, ast.Call, ast.Subscript)


def top_level_split(text: str, sep: str) -> list[tuple[int, int]] | None:
    """Spans of ``text`` between the ``sep`` characters outside brackets and strings (None
    when a string or bracket is left open)."""
    spans, depth, quote, lo = [], 0, "", 0
    i = 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == sep and depth == 0:
            spans.append((lo, i))
            lo = i + 1
        i += 1
    if quote or depth:
        return None
    spans.append((lo, len(text)))
    return spans


def _parse_sum(formula: str) -> Any:
    """patsy's ModelDesc of ``response ~ term + term + ...``, built directly; else None.

    patsy's parser merges the terms of a sum one "+" at a time, each time de-duplicating the
    whole list (quadratic: 8 ms for 100 terms). When the response and every term are single
    Python expressions — a name, an attribute, a call or a subscript, such as ``x``,
    ``np.log(x)``, ``lag(x, 1)``, ``C(g)`` — the result is known: the response's term, then
    the intercept and each distinct term in order of first appearance, every factor with
    the code and origin patsy gives it (tested equal to patsy's). Anything else (operators,
    numbers, ``-1``, ``:``, ``*``) goes to patsy.
    """
    text = formula.strip()  # patsy's origins point into the stripped text
    sides = top_level_split(text, "~")
    if sides is None or len(sides) != 2:
        return None
    (l0, l1), (r0, r1) = sides
    spans = [(l0, l1)]
    terms = top_level_split(text[r0:r1], "+")
    if terms is None:
        return None
    spans += [(r0 + a, r0 + b) for a, b in terms]
    factors = []
    for a, b in spans:
        piece = text[a:b]
        code = piece.strip()
        if not code:
            return None
        try:
            node = ast.parse(code, mode="eval").body
        except SyntaxError:
            return None
        if not isinstance(node, _SINGLE):
            return None
        start = a + (len(piece) - len(piece.lstrip()))
        factors.append(patsy.EvalFactor(code, origin=patsy.Origin(text, start, start + len(code))))
    rhs, seen = [patsy.INTERCEPT], set()
    for factor in factors[1:]:
        if factor.code not in seen:
            seen.add(factor.code)
            rhs.append(patsy.Term([factor]))
    return patsy.ModelDesc([patsy.Term([factors[0]])], rhs)


def parse(formula: str) -> Any:
    """patsy's ModelDesc of ``formula`` (FormulaError when it does not parse).

    Examples
    --------
    >>> desc = parse("y ~ x1 + x2")
    >>> [t.name() for t in desc.rhs_termlist]
    ['Intercept', 'x1', 'x2']
    """
    direct = _parse_sum(formula)
    if direct is not None:
        return direct
    try:
        return patsy.ModelDesc.from_formula(formula)
    except patsy.PatsyError as exc:
        raise FormulaError(f"could not parse formula {formula!r}:\n{exc}") from None


def check_names(factors: Any, frame: pd.DataFrame, env: Any, what: str) -> None:
    """Every variable a factor uses must be a column of the data or a name in scope."""
    columns = [str(c) for c in frame.columns]
    known = set(columns)
    for factor in factors:
        code = factor.code if hasattr(factor, "code") else str(factor)
        for name in names_in(code):
            if name in known or name in _BUILTIN_NAMES or _in_env(env, name):
                continue
            close = difflib.get_close_matches(name, columns, n=3, cutoff=0.6)
            hint = r_spelling_hint(code, name) or (
                f"; did you mean {', '.join(repr(c) for c in close)}?" if close else "")
            raise FormulaError(f"{what} has no column {name!r} (used in term {code!r}){hint}")


def r_spelling_hint(code: str, name: str) -> str:
    """A hint when ``name`` is called in ``code`` as R spells the function ("" otherwise).

    Examples
    --------
    >>> print(r_spelling_hint("factor(g)", "factor"))
    ; factor() is R's spelling: write C(g) (a categorical variable)
    >>> print(r_spelling_hint("log(x + 1)", "log"))
    ; log() is R's spelling: write np.log(x + 1)
    """
    if name not in _R_SPELLINGS:
        return ""
    try:
        tree = ast.parse(code, mode="eval")
    except SyntaxError:
        return ""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name:
            args = ", ".join([ast.unparse(a) for a in node.args]
                             + [ast.unparse(k) for k in node.keywords])
            what = " (a categorical variable)" if _R_SPELLINGS[name] == "C" else ""
            return f"; {name}() is R's spelling: write {_R_SPELLINGS[name]}({args}){what}"
    return ""


def _in_env(env: Any, name: str) -> bool:
    try:
        env.namespace[name]
    except KeyError:
        return False
    return True
