"""Multi-part formulas: ``y ~ x | fe1 + fe2 | d ~ z``, fixest's spelling.

A formula has up to three parts separated by ``|`` outside brackets and strings:

- the model, ``y ~ x1 + x2`` (patsy's language, as for every other formula);
- the fixed effects to absorb, ``firm + year``: each term a column (``firm``), an interaction
  of columns (``firm^year``), or a varying slope (``firm[x1]``, ``firm[[x1]]`` for the slope
  alone); ``0`` means none;
- the instrumental-variable part, ``d1 + d2 ~ z1 + z2``: the endogenous regressors and the
  excluded instruments. It is always the last part and is recognised by its ``~``.

So ``y ~ x | firm`` absorbs ``firm``, ``y ~ x | d ~ z`` is an IV regression and
``y ~ x | firm + year | d ~ z`` is both. A formula without ``|`` has one part.

Examples
--------
>>> p = split_formula("wage ~ exper + union | worker + firm")
>>> p.model, p.fixed_effects, p.endogenous
('wage ~ exper + union', ('worker', 'firm'), None)
>>> p = split_formula("y ~ x | firm^year | d ~ z1 + z2")
>>> p.fixed_effects, p.endogenous, p.instruments
(('firm^year',), 'd', 'z1 + z2')
>>> split_formula("y ~ x").is_multipart
False
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from attnreg.exceptions import FormulaError
from attnreg.formula.parse import top_level_split

__all__ = ["FixedEffectTerm", "FormulaParts", "split_formula"]

_NAME = r"[A-Za-z_.][\w.]*"
_TERM = re.compile(rf"^(?P<fe>{_NAME}(?:\s*\^\s*{_NAME})*)"
                   rf"(?:\s*(?P<open>\[\[?)\s*(?P<slopes>{_NAME}(?:\s*,\s*{_NAME})*)\s*(?P<close>\]\]?))?$")


@dataclass(frozen=True)
class FixedEffectTerm:
    """One term of the fixed-effects part.

    Attributes
    ----------
    text : str
        The term as written, spaces removed (``"firm^year"``, ``"firm[x1]"``).
    columns : tuple of str
        The columns whose combinations are the levels (``("firm", "year")`` for ``firm^year``).
    slopes : tuple of str
        The variables with a slope per level (``firm[x1]``); empty for a plain fixed effect.
    intercepts : bool
        Whether the levels also have their own intercept (False only for ``firm[[x1]]``).
    """

    text: str
    columns: tuple[str, ...]
    slopes: tuple[str, ...] = ()
    intercepts: bool = True


@dataclass(frozen=True)
class FormulaParts:
    """A formula split into its model, fixed-effects and instrumental-variable parts.

    Attributes
    ----------
    formula : str
        The formula as written.
    model : str
        The model part, ``"y ~ x1 + x2"``, with the endogenous regressors not included.
    fixed_effects : tuple of str
        The fixed-effect terms as written (empty when there are none).
    endogenous, instruments : str or None
        The two sides of the IV part (None when there is none).
    """

    formula: str
    model: str
    fixed_effects: tuple[str, ...] = ()
    endogenous: str | None = None
    instruments: str | None = None

    @property
    def is_multipart(self) -> bool:
        """Whether the formula has a fixed-effects or an IV part."""
        return bool(self.fixed_effects) or self.endogenous is not None

    @property
    def fixed_effect_terms(self) -> tuple[FixedEffectTerm, ...]:
        """The fixed-effect terms, parsed (:class:`FixedEffectTerm`)."""
        return tuple(_fe_term(t, self.formula) for t in self.fixed_effects)


def _split_top(text: str, sep: str) -> list[str] | None:
    """``text`` split at ``sep`` outside brackets and strings (None when one is left open);
    ``||`` is not a ``|`` separator (its pieces are kept together)."""
    spans = top_level_split(text, sep)
    if spans is None:
        return None
    merged = [list(spans[0])]
    for lo, hi in spans[1:]:
        cut = lo - 1  # where the separator stood
        if sep == "|" and "|" in (text[cut - 1:cut], text[cut + 1:cut + 2]):
            merged[-1][1] = hi
        else:
            merged.append([lo, hi])
    return [text[lo:hi] for lo, hi in merged]


def _fe_term(term: str, formula: str) -> FixedEffectTerm:
    match = _TERM.match(term.strip())
    if match is None or (match["open"] or "") != (match["close"] or "").replace("]", "["):
        raise FormulaError(
            f"fixed effect {term.strip()!r} in {formula!r} is not a column, an interaction "
            "'a^b' or a varying slope 'a[x]': write e.g. 'y ~ x | firm + year' or "
            "'y ~ x | firm^year + firm[x]'")
    columns = tuple(c.strip() for c in match["fe"].split("^"))
    slopes = tuple(s.strip() for s in match["slopes"].split(",")) if match["slopes"] else ()
    return FixedEffectTerm(re.sub(r"\s+", "", term), columns, slopes,
                           intercepts=match["open"] != "[[")


def _fixed_effects(part: str, formula: str) -> tuple[str, ...]:
    terms = _split_top(part, "+") or []
    if [t.strip() for t in terms] == ["0"]:
        return ()
    if any(not t.strip() for t in terms):
        raise FormulaError(f"the fixed-effects part {part.strip()!r} of {formula!r} has an empty "
                           "term: write 'y ~ x | firm + year'")
    out = tuple(re.sub(r"\s+", "", t) for t in terms)
    for t in out:
        _fe_term(t, formula)
    return out


def _iv_part(part: str, formula: str) -> tuple[str, str]:
    sides = _split_top(part, "~") or []
    if len(sides) != 2 or not sides[0].strip() or not sides[1].strip():
        raise FormulaError(f"the instrumental-variable part {part.strip()!r} of {formula!r} must be "
                           "'endogenous ~ instruments', e.g. 'y ~ x | d ~ z1 + z2'")
    return sides[0].strip(), sides[1].strip()


def split_formula(formula: str) -> FormulaParts:
    """Split ``formula`` at its top-level ``|`` into model, fixed effects and IV parts.

    Parameters
    ----------
    formula : str
        ``"y ~ x"``, ``"y ~ x | fe1 + fe2"``, ``"y ~ x | d ~ z"`` or ``"y ~ x | fe | d ~ z"``.

    Returns
    -------
    FormulaParts

    Raises
    ------
    FormulaError
        More than three parts, an empty part, a fixed-effects part that is not last containing
        ``~``, a last third part without ``~``, or a fixed-effect term that is not a column,
        an interaction or a varying slope.
    """
    pieces = _split_top(formula, "|")
    if pieces is None or len(pieces) == 1:
        return FormulaParts(formula, formula)
    if len(pieces) > 3:
        raise FormulaError(f"{formula!r} has {len(pieces)} parts separated by '|'; at most three: "
                           "'y ~ x | fixed effects | endogenous ~ instruments'")
    if any(not p.strip() for p in pieces):
        raise FormulaError(f"{formula!r} has an empty part between '|'s")
    model = pieces[0].strip()
    if len(_split_top(model, "~") or []) != 2:
        raise FormulaError(f"the model part {model!r} of {formula!r} needs one '~': 'y ~ x | firm'")
    last_is_iv = len(_split_top(pieces[-1], "~") or []) > 1
    if len(pieces) == 3 and not last_is_iv:
        raise FormulaError(f"the third part {pieces[2].strip()!r} of {formula!r} must be "
                           "'endogenous ~ instruments'")
    fe_pieces = pieces[1:-1] if last_is_iv else pieces[1:]
    for piece in fe_pieces:
        if len(_split_top(piece, "~") or []) > 1:
            raise FormulaError(f"the fixed-effects part {piece.strip()!r} of {formula!r} contains "
                               "'~': the IV part 'endogenous ~ instruments' comes last")
    fixed = _fixed_effects(fe_pieces[0], formula) if fe_pieces else ()
    endogenous, instruments = _iv_part(pieces[-1], formula) if last_is_iv else (None, None)
    return FormulaParts(formula, model, fixed, endogenous, instruments)
