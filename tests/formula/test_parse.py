"""The direct parse of "y ~ a + b + ..." formulas equals patsy's parse, origins included."""

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


@given(lhs=_names, rhs=st.lists(_names, min_size=1, max_size=12),
       spaces=st.lists(_space, min_size=30, max_size=30))
def test_plain_formulas_parse_as_patsy_does(lhs, rhs, spaces) -> None:
    text = spaces[0] + lhs + spaces[1] + "~" + spaces[2]
    for i, name in enumerate(rhs):
        text += (spaces[3 + i] + "+" + spaces[4 + i] if i else "") + name
    text += spaces[-1]
    assert parse_module._parse_plain(text) is not None
    ours, theirs = parse(text), patsy.ModelDesc.from_formula(text)
    assert _signature(ours) == _signature(theirs)
    assert ours.lhs_termlist == theirs.lhs_termlist and ours.rhs_termlist == theirs.rhs_termlist


def test_other_formulas_go_to_patsy() -> None:
    for text in ["y ~ x + 1", "y ~ x - 1", "y ~ 0 + x", "y ~ np.log(x)", "y ~ a:b", "y ~ a*b",
                 "y ~ if + x", "y ~ é + x", "y ~ (a + b)", "np.log(y) ~ x", "y ~ x +"]:
        assert parse_module._parse_plain(text) is None, text
