"""Multi-part formulas (fixest's ``y ~ x | fe | d ~ z``): the split and its errors."""

from __future__ import annotations

import pytest

from attnreg.exceptions import FormulaError
from attnreg.formula.parts import FixedEffectTerm, split_formula


@pytest.mark.parametrize(("formula", "model", "fe", "endo", "inst"), [
    ("y ~ x", "y ~ x", (), None, None),
    ("y ~ x | firm", "y ~ x", ("firm",), None, None),
    ("wage ~ exper + union | worker + firm", "wage ~ exper + union", ("worker", "firm"), None, None),
    ("y ~ x | d ~ z", "y ~ x", (), "d", "z"),
    ("y ~ x | firm + year | d1 + d2 ~ z1 + z2", "y ~ x", ("firm", "year"), "d1 + d2", "z1 + z2"),
    ("y ~ x | 0 | d ~ z", "y ~ x", (), "d", "z"),
    ("y ~ I(a | b) | g", "y ~ I(a | b)", ("g",), None, None),
    ("y ~ x | firm ^ year + firm[x1]", "y ~ x", ("firm^year", "firm[x1]"), None, None),
])
def test_the_parts(formula, model, fe, endo, inst) -> None:
    parts = split_formula(formula)
    assert (parts.model, parts.fixed_effects, parts.endogenous, parts.instruments) == \
        (model, fe, endo, inst)
    assert parts.is_multipart == bool(fe or endo)


def test_fixed_effect_terms() -> None:
    terms = split_formula("y ~ x | a^b + firm[x1, x2] + firm[[x3]]").fixed_effect_terms
    assert terms == (FixedEffectTerm("a^b", ("a", "b")),
                     FixedEffectTerm("firm[x1,x2]", ("firm",), ("x1", "x2")),
                     FixedEffectTerm("firm[[x3]]", ("firm",), ("x3",), intercepts=False))


@pytest.mark.parametrize(("formula", "match"), [
    ("y ~ x | a | b", "third part 'b'"),
    ("y ~ x | a ~ b | c", "third part 'c'"),
    ("y ~ x | a + ", "empty term"),
    ("y ~ x | log(a)", "fixed effect 'log\\(a\\)'"),
    ("y ~ x | a[x]]", None),
    ("y ~ x | a || b", "fixed effect 'a\\|\\|b'"),
    ("y ~ x | | d ~ z", "empty part"),
    ("y ~ x | d ~ ", "'endogenous ~ instruments'"),
    ("x | a", "model part 'x'"),
    ("y ~ x | a | b | c ~ d", "4 parts"),
])
def test_errors_name_the_part(formula, match) -> None:
    if match is None:  # unbalanced brackets: left whole for patsy to report
        assert not split_formula(formula).is_multipart
        return
    with pytest.raises(FormulaError, match=match):
        split_formula(formula)
