"""The direct parse of "y ~ a + f(b) + ..." formulas equals patsy's parse, origins included."""

from __future__ import annotations

import keyword

import patsy
from hypothesis import given
from hypothesis import strategies as st

from attnreg.formula import parse as parse_module
from attnreg.formula.parse import parse


def _signature(desc):
    def side(terms):
        return [[(f.code, f.origin) for f in t.factors] for t in terms]

    return side(desc.lhs_termlist), side(desc.rhs_termlist)


_names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,6}", fullmatch=True).filter(
    lambda s: not keyword.iskeyword(s))
_space = st.sampled_from(["", " ", "  ", "\t"])


@st.composite
def _terms(draw):
    """A single Python expression: a name, an attribute, a call (with a string argument
    that holds formula operators), or a subscript, with random spacing inside."""
    name = draw(_names)
    kind = draw(st.sampled_from(["name", "attr", "call", "subscript", "string"]))
    sp = draw(_space)
    if kind == "name":
        return name
    if kind == "attr":
        return f"np.{name}"
    if kind == "call":
        return f"lag({sp}{name},{sp}{draw(st.integers(1, 9))}{sp})"
    if kind == "subscript":
        return f"{name}[{draw(st.integers(0, 3))}]"
    return f"Q('{name} + {draw(_names)}:x')"


@given(lhs=_terms(), rhs=st.lists(_terms(), min_size=1, max_size=12),
       spaces=st.lists(_space, min_size=30, max_size=30))
def test_sums_of_single_expressions_parse_as_patsy_does(lhs, rhs, spaces) -> None:
    text = spaces[0] + lhs + spaces[1] + "~" + spaces[2]
    for i, term in enumerate(rhs):
        text += (spaces[3 + i] + "+" + spaces[4 + i] if i else "") + term
    text += spaces[-1]
    assert parse_module._parse_sum(text) is not None
    ours, theirs = parse(text), patsy.ModelDesc.from_formula(text)
    assert _signature(ours) == _signature(theirs)
    assert ours.lhs_termlist == theirs.lhs_termlist and ours.rhs_termlist == theirs.rhs_termlist


def test_other_formulas_go_to_patsy() -> None:
    for text in ["y ~ x + 1", "y ~ x - 1", "y ~ 0 + x", "y ~ a:b", "y ~ a*b", "y ~ x**2",
                 "y ~ (a + b)", "y ~ -x", "y ~ x +", "y ~ if + x", "y ~ a ~ b", "y ~ 'a'",
                 "y ~ a | b", "y ~ f(x", "np.log(y) + 1 ~ x", "y"]:
        assert parse_module._parse_sum(text) is None, text
