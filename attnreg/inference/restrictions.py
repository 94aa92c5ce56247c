"""Linear restrictions on named coefficients, written as text: ``"x1 = x2, 2*x3 - x4 = 1"``.

The grammar (whitespace is free, also inside coefficient names)::

    restrictions := restriction ("," restriction)*          (or a list of strings)
    restriction  := side ["=" side]                          (no "=" means "= 0")
    side         := ["+" | "-"] term (("+" | "-") term)*
    term         := number ["*"] name  |  name ["*" number]  |  name "/" number  |  number

A *name* is a coefficient name exactly as the fit reports it (``(Intercept)``, or patsy's
``Intercept``; ``C(g)[T.b]``, ``np.log(x2)``, ``x1:x2``, ``I(x1 ** 2)``), found by matching
the known names, longest first: names may contain operators, brackets, commas and spaces,
and an ``=`` or ``,`` inside a name is part of it. Numbers are decimal literals (``2``,
``0.5``, ``1e-3``); a number followed by a name with or without ``*`` (``2*x1``, ``2 x1``) is
a coefficient. Both sides may hold names and numbers; the restriction is moved to the form
``R b = r``. A product of two coefficients is not linear and is refused.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from attnreg._typing import FloatArray
from attnreg.exceptions import OptionError

__all__ = ["format_restriction", "parse_restrictions"]

_NUMBER = re.compile(r"(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_IDENT = re.compile(r"[A-Za-z0-9_.]")
_OPERATORS = "+-*/=,"


@dataclass(frozen=True)
class _Token:
    kind: str  # "name", "number", one of _OPERATORS
    value: float | int | str
    start: int
    stop: int


class _Names:
    """Coefficient names as patterns that ignore whitespace, matched longest first."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = list(names)
        self.aliases: dict[str, int] = {}
        for j, name in enumerate(self.names):
            self.aliases.setdefault(name, j)
        if "(Intercept)" in self.aliases and "Intercept" not in self.aliases:
            self.aliases["Intercept"] = self.aliases["(Intercept)"]
        keyed = sorted(self.aliases, key=len, reverse=True)
        self._patterns = [(re.compile(r"\s*".join(re.escape(c) for c in key if not c.isspace())),
                           key) for key in keyed if key.strip()]

    def match(self, text: str, pos: int) -> tuple[int, int] | None:
        """(coefficient index, end) of the longest name at ``pos``, or None."""
        best: tuple[int, int] | None = None
        for pattern, key in self._patterns:
            m = pattern.match(text, pos)
            if m is None:
                continue
            end = m.end()
            if _IDENT.match(key[-1]) and end < len(text) and _IDENT.match(text[end]):
                continue  # "x1" is not a prefix of "x10"
            if best is None or end > best[1]:
                best = (self.aliases[key], end)
        return best


def _tokens(text: str, names: _Names, whole: str) -> list[_Token]:
    out: list[_Token] = []
    pos = 0
    while pos < len(text):
        if text[pos].isspace():
            pos += 1
            continue
        hit = names.match(text, pos)
        if hit is not None:
            out.append(_Token("name", hit[0], pos, hit[1]))
            pos = hit[1]
            continue
        num = _NUMBER.match(text, pos)
        if num is not None:
            out.append(_Token("number", float(num.group()), pos, num.end()))
            pos = num.end()
            continue
        if text[pos] in _OPERATORS:
            out.append(_Token(text[pos], text[pos], pos, pos + 1))
            pos += 1
            continue
        raise OptionError(_unknown_message(_chunk(text, pos), names.names, whole))
    return out


def _chunk(text: str, pos: int) -> str:
    """The word at ``pos``: up to the next space, sign, ``=`` or ``,`` outside brackets."""
    depth, end = 0, pos
    while end < len(text):
        c = text[end]
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif depth <= 0 and (c.isspace() or c in "+-=,*"):
            break
        end += 1
    return text[pos:end] or text[pos]


def _unknown_message(word: str, names: Sequence[str], whole: str) -> str:
    close = difflib.get_close_matches(word, names, n=3, cutoff=0.5)
    hint = f"; close matches: {', '.join(close)}" if close else ""
    listed = ", ".join(names[:20]) + (", ..." if len(names) > 20 else "")
    return (f"hypothesis {whole!r} names an unknown coefficient {word!r}{hint} (the "
            f"coefficients are: {listed})")


def _split(tokens: list[_Token]) -> list[list[_Token]]:
    groups: list[list[_Token]] = [[]]
    for tok in tokens:
        if tok.kind == ",":
            groups.append([])
        else:
            groups[-1].append(tok)
    return groups


def _factors(tokens: list[_Token], i: int, first: _Token, mult: float,
             text: str) -> tuple[float, int]:
    """Apply the ``* number`` and ``/ number`` factors from token ``i`` on: (multiplier, next)."""
    n = len(tokens)
    while i < n and tokens[i].kind in "*/":
        op = tokens[i].kind
        if i + 1 < n and tokens[i + 1].kind == "name":
            names = text[first.start:tokens[i + 1].stop]
            raise OptionError(f"hypothesis {text!r}: {names!r} is not linear in the "
                              "coefficients (a product of coefficients); restrictions "
                              "are linear combinations a*name")
        if i + 1 >= n or tokens[i + 1].kind != "number":
            raise OptionError(f"hypothesis {text!r}: {op!r} must be followed by a number")
        value = float(tokens[i + 1].value)
        if op == "/" and value == 0.0:
            raise OptionError(f"hypothesis {text!r}: division by zero")
        mult = mult * value if op == "*" else mult / value
        i += 2
    return mult, i


def _term(tokens: list[_Token], i: int, text: str) -> tuple[float, int | None, int]:
    """One term from token ``i``: number [*] name | name [* number | / number] | number.

    Returns (multiplier, coefficient position or None for a constant, next token)."""
    n = len(tokens)
    tok = tokens[i]
    mult, j = 1.0, None
    if tok.kind == "number":
        mult = float(tok.value)
        i += 1
        if i < n and tokens[i].kind == "*":
            i += 1
            if i >= n or tokens[i].kind != "name":
                raise OptionError(f"hypothesis {text!r}: '*' must be followed by a "
                                  "coefficient name")
        if i < n and tokens[i].kind == "name":
            j = int(tokens[i].value)
            i += 1
    elif tok.kind == "name":
        j = int(tok.value)
        i += 1
    else:
        raise OptionError(f"hypothesis {text!r}: unexpected {text[tok.start:tok.stop]!r} "
                          "where a term was expected")
    mult, i = _factors(tokens, i, tok, mult, text)
    return mult, j, i


def _side(tokens: list[_Token], k: int, text: str, where: str) -> tuple[FloatArray, float]:
    """Coefficients and constant of one side of a restriction."""
    coef = np.zeros(k)
    const = 0.0
    i, n = 0, len(tokens)
    if n == 0:
        raise OptionError(f"hypothesis {text!r}: the {where} side of a restriction is empty")
    expect_term = True
    sign = 1.0
    while i < n:
        tok = tokens[i]
        if tok.kind in "+-" and expect_term:
            sign *= -1.0 if tok.kind == "-" else 1.0
            i += 1
            continue
        if not expect_term:
            if tok.kind in "+-":
                expect_term, sign = True, (-1.0 if tok.kind == "-" else 1.0)
                i += 1
                continue
            if tok.kind == "name" and tokens[i - 1].kind == "name":
                raise OptionError(f"hypothesis {text!r}: two coefficients follow each other "
                                  f"({text[tokens[i - 1].start:tok.stop]!r}); join them with "
                                  "+ or -")
            raise OptionError(f"hypothesis {text!r}: unexpected {text[tok.start:tok.stop]!r} "
                              "(a term is a number, a coefficient or number*coefficient)")
        mult, j, i = _term(tokens, i, text)
        if j is None:
            const += sign * mult
        else:
            coef[j] += sign * mult
        expect_term, sign = False, 1.0
    if expect_term:
        raise OptionError(f"hypothesis {text!r}: the {where} side ends with an operator")
    return coef, const


def parse_restrictions(names: Sequence[str],
                       text: str | Sequence[str]) -> tuple[FloatArray, FloatArray]:
    """The matrix form ``R b = r`` of linear restrictions written as text.

    Parameters
    ----------
    names : list of str
        The coefficient names, in the order of the coefficient vector b (``fit.names``).
    text : str or list of str
        Restrictions separated by commas (commas inside a coefficient name belong to the
        name), or a list of such strings. Grammar (see :mod:`attnreg.inference.restrictions`):
        each restriction is a linear combination ``a*name`` of coefficients with ``+`` and
        ``-`` (``2*x1``, ``2 x1``, ``x1*2``, ``x1/2`` and plain numbers are terms), then
        optionally ``=`` and a constant or another combination; without ``=`` it is ``= 0``.
        ``Intercept`` also names ``(Intercept)``. Whitespace is ignored, also inside names
        (``I(x1**2)`` matches ``I(x1 ** 2)``).

    Returns
    -------
    R : ndarray, shape (q, len(names))
        One row per restriction.
    r : ndarray, shape (q,)

    Raises
    ------
    OptionError
        An unknown coefficient (the message lists close matches), a product of two
        coefficients, a malformed or empty restriction, a restriction without any
        coefficient.

    Examples
    --------
    >>> from attnreg.inference.restrictions import parse_restrictions
    >>> names = ["(Intercept)", "C(g)[T.b]", "x1", "x2", "x1:x2", "I(x1 ** 2)"]
    >>> R, r = parse_restrictions(names, "x1 = x2, 2*C(g)[T.b] - 0.5 x1:x2 = 1, I(x1**2)")
    >>> R
    array([[ 0. ,  0. ,  1. , -1. ,  0. ,  0. ],
           [ 0. ,  2. ,  0. ,  0. , -0.5,  0. ],
           [ 0. ,  0. ,  0. ,  0. ,  0. ,  1. ]])
    >>> r
    array([0., 1., 0.])
    >>> parse_restrictions(names, "x3 = 0")
    Traceback (most recent call last):
    ...
    attnreg.exceptions.OptionError: hypothesis 'x3 = 0' names an unknown coefficient 'x3'; ...
    """
    if isinstance(text, str):
        pieces = [text]
    elif isinstance(text, Sequence) and text and all(isinstance(t, str) for t in text):
        pieces = list(text)
    else:
        raise OptionError("hypothesis must be a string of restrictions or a list of strings, "
                          f"however: {text!r}")
    known = _Names(names)
    k = len(known.names)
    rows: list[FloatArray] = []
    rhs: list[float] = []
    for piece in pieces:
        for group in _split(_tokens(piece, known, piece)):
            if not group:
                raise OptionError(f"hypothesis {piece!r} has an empty restriction (two commas "
                                  "in a row, or a comma at an end)")
            sub = piece[group[0].start:group[-1].stop]
            eq = [i for i, t in enumerate(group) if t.kind == "="]
            if len(eq) > 1:
                raise OptionError(f"hypothesis {sub!r} has more than one '='")
            if eq:
                left, lc = _side(group[:eq[0]], k, sub, "left")
                right, rc = _side(group[eq[0] + 1:], k, sub, "right")
            else:
                (left, lc), right, rc = _side(group, k, sub, "left"), np.zeros(k), 0.0
            row = left - right
            if not np.any(row != 0.0):
                raise OptionError(f"hypothesis {sub!r} restricts no coefficient (its "
                                  "coefficients cancel or there are none)")
            rows.append(row)
            rhs.append(rc - lc)
    return np.vstack(rows), np.asarray(rhs, dtype=np.float64)


def _number(value: float) -> str:
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.15g}"


def format_restriction(names: Sequence[str], row: FloatArray, rhs: float) -> str:
    """One restriction as text that :func:`parse_restrictions` reads back to ``row, rhs``.

    Examples
    --------
    >>> import numpy as np
    >>> from attnreg.inference.restrictions import format_restriction
    >>> format_restriction(["a", "b", "c"], np.array([1.0, -1.0, 0.5]), 2.0)
    'a - b + 0.5*c = 2'
    """
    parts: list[str] = []
    for j in map(int, np.flatnonzero(row)):
        c = float(row[j])
        mag = "" if abs(c) == 1.0 else f"{_number(abs(c))}*"
        if not parts:
            parts.append(("-" if c < 0 else "") + mag + names[j])
        else:
            parts.append(("- " if c < 0 else "+ ") + mag + names[j])
    rhs_txt = _number(rhs) if math.isfinite(rhs) else str(rhs)
    return f"{' '.join(parts)} = {rhs_txt}"
