"""The options of :func:`~attnreg.report.etable.etable` checked, and the coefficient rows it
keeps, drops and renames."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from attnreg.exceptions import OptionError
from attnreg.report.etable_stats import DEFAULT_STARS, STATISTICS

__all__ = ["all_terms", "apply_se", "as_models", "check_compact", "check_digits", "check_names",
           "check_notes", "check_stars", "check_stats", "frame_of", "matches", "rename_terms",
           "select_terms", "term_patterns", "unspaced", "with_vcov"]


def as_models(fits: Any) -> list[Any]:
    """The fits of ``etable(fits)`` as a list (one fit or a sequence of them), checked."""
    if hasattr(fits, "method") and hasattr(fits, "nobs"):
        fits = [fits]
    if isinstance(fits, (str, bytes, Mapping)) or not isinstance(fits, Sequence):
        raise OptionError(f"fits must be a list of fitted models (results of attnreg()), "
                          f"however: {type(fits).__name__}")
    if not fits:
        raise OptionError("etable() needs at least one fit, however: fits is empty")
    for i, fit in enumerate(fits):
        if not all(hasattr(fit, a) for a in ("method", "nobs")) or frame_of(fit) is None:
            raise OptionError(f"etable() takes fitted models (results of attnreg()), however "
                              f"fits[{i}] is {type(fit).__name__}")
    return list(fits)


def check_names(names: Any, models: list[Any]) -> list[str]:
    """The column names of the models, checked: one per model (or none: numbered)."""
    if names is None:
        return []
    if isinstance(names, str) or not isinstance(names, Sequence):
        raise OptionError(f"names must be a list of column titles, however: {names=}")
    if len(names) != len(models):
        raise OptionError(f"names must have one entry per fit ({len(models)}), however: "
                          f"{len(names)=}")
    return [str(n) for n in names]


def check_compact(**is_default: bool) -> None:
    """Refuse the options the compact layout does not take."""
    given = [name for name, default in is_default.items() if not default]
    if given:
        raise OptionError(f"style='compact' has fixed rows and formats, however "
                          f"{', '.join(given)} {'was' if len(given) == 1 else 'were'} given; "
                          "leave them out or use style='publication'")


def check_digits(digits: Any) -> int:
    """Significant digits, checked (a positive integer)."""
    if (not isinstance(digits, (int, np.integer)) or isinstance(digits, bool)
            or not 0 <= digits <= 15):
        raise OptionError(f"digits must be an integer from 0 to 15, however: {digits=}")
    return int(digits)


def check_stars(stars: Any) -> dict[str, float]:
    """Significance stars and their cutoffs (True: the default ones; False: none)."""
    if stars is True:
        return dict(DEFAULT_STARS)
    if stars is False or stars is None:
        return {}
    if isinstance(stars, Mapping) and all(
            isinstance(k, str) and k and isinstance(v, (int, float)) and 0 < v < 1
            for k, v in stars.items()):
        return dict(sorted(stars.items(), key=lambda kv: kv[1]))
    raise OptionError(f"stars must be True, False or a dict of mark -> p-value cutoff in "
                      f"(0, 1), however: {stars=}")


def check_stats(stats: Any) -> list[str]:
    """The statistics rows asked for, each a name registered in STATISTICS."""
    if isinstance(stats, str):
        stats = [stats]
    if stats is None:
        return []
    if not isinstance(stats, Sequence) or not all(isinstance(s, str) for s in stats):
        raise OptionError(f"stats must be a list of statistic names, however: {stats=}")
    unknown = [s for s in stats if s not in STATISTICS]
    if unknown:
        raise OptionError(f"stats: unknown statistic(s) {', '.join(map(repr, unknown))}; "
                          f"known: {', '.join(STATISTICS)}")
    return list(stats)


def apply_se(models: list[Any], se: Any) -> list[Any]:
    """The fits under the covariance ``se=`` asks for (one for all, or one per fit)."""
    if se is None:
        return models
    if isinstance(se, (str, Mapping)):
        return [with_vcov(m, se, i) if hasattr(m, "with_vcov") else m
                for i, m in enumerate(models)]
    if isinstance(se, Sequence) and not isinstance(se, (str, bytes)):
        if len(se) != len(models):
            raise OptionError(f"se must have one entry per model ({len(models)}), however it "
                              f"has {len(se)}")
        out = []
        for i, (m, s) in enumerate(zip(models, se, strict=True)):
            if s is not None and not hasattr(m, "with_vcov"):
                raise OptionError(f"se[{i}]: model ({i + 1}) is a {m.method} fit, which has no "
                                  f"covariance to choose; use None for it, however: {s!r}")
            out.append(m if s is None else with_vcov(m, s, i))
        return out
    raise OptionError(f"se must be a covariance kind, a dict of with_vcov arguments or a list "
                      f"of those, however: {type(se).__name__}")


def with_vcov(fit: Any, se: Any, i: int) -> Any:
    """Fit ``i`` under the covariance ``se`` names."""
    try:
        if isinstance(se, str):
            return fit.with_vcov(se)
        if isinstance(se, Mapping):
            return fit.with_vcov(**dict(se))
    except OptionError as exc:
        raise OptionError(f"se for model ({i + 1}): {exc}") from None
    except TypeError as exc:
        raise OptionError(f"se for model ({i + 1}): with_vcov does not take {dict(se)!r} "
                          f"({exc})") from None
    raise OptionError(f"se for model ({i + 1}) must be a covariance kind or a dict of "
                      f"with_vcov arguments, however: {se!r}")


def all_terms(models: list[Any]) -> list[str]:
    """Every coefficient name of the models, in order of first appearance."""
    terms: dict[str, None] = {}
    for m in models:
        coef = getattr(m, "coef", None)
        if isinstance(coef, pd.Series):
            terms.update(dict.fromkeys(map(str, coef.index)))
    return list(terms)


def term_patterns(spec: Any, what: str) -> list[str]:
    """The patterns of ``keep=`` or ``drop=`` (``what``) as a list of strings."""
    if spec is None:
        return []
    if isinstance(spec, str):
        return [spec]
    if isinstance(spec, Sequence) and all(isinstance(s, str) for s in spec):
        return list(spec)
    raise OptionError(f"{what} must be a name or regular expression, or a list of them, "
                      f"however: {what}={spec!r}")


def unspaced(text: str) -> str:
    """A coefficient name without whitespace: ``I(x**2)`` and patsy's ``I(x ** 2)`` agree."""
    return "".join(text.split())


def matches(pattern: str, term: str) -> bool:
    """Whether ``term`` matches ``pattern`` (a regular expression, or the name spaces aside)."""
    if pattern == term or unspaced(pattern) == unspaced(term):
        return True
    try:
        return re.search(pattern, term) is not None
    except re.error:
        return False


def select_terms(terms: list[str], spec: Any, what: str, *, keep: bool) -> list[str]:
    """The terms kept by (``keep=True``) or left after (``keep=False``) the patterns."""
    patterns = term_patterns(spec, what)
    if not patterns:
        return terms
    idle = [p for p in patterns if not any(matches(p, t) for t in terms)]
    if idle:
        raise OptionError(f"{what}: {', '.join(map(repr, idle))} match(es) no coefficient; "
                          f"the coefficients are {', '.join(terms)}")
    return [t for t in terms if any(matches(p, t) for p in patterns) == keep]


def rename_terms(terms: list[str], rename: Any, models: list[Any]
            ) -> tuple[dict[str, list[str]], list[str]]:
    """Display label -> the terms it shows (in order of first appearance)."""
    if rename is None:
        rename = {}
    if not isinstance(rename, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in rename.items()):
        raise OptionError(f"rename must be a dict of coefficient name -> display name, "
                          f"however: {rename=}")
    spelled = {unspaced(t): t for t in terms}  # names match whatever their spacing
    rename = {spelled.get(unspaced(k), k): v for k, v in rename.items()}
    unknown = [k for k in rename if k not in terms]
    if unknown:
        raise OptionError(f"rename: {', '.join(map(repr, unknown))} is not a coefficient in "
                          f"the table; the coefficients are {', '.join(terms)}")
    rows: dict[str, list[str]] = {}
    for t in terms:
        rows.setdefault(rename.get(t, t), []).append(t)
    for label, group in rows.items():
        for i, m in enumerate(models):
            coef = getattr(m, "coef", None)
            both = [t for t in group if isinstance(coef, pd.Series) and t in coef.index]
            if len(both) > 1:
                raise OptionError(f"rename: model ({i + 1}) has both {both[0]!r} and "
                                  f"{both[1]!r}, which would share the row {label!r}")
    return rows, list(rows)


def check_notes(notes: Any) -> list[str]:
    """The notes under the table, checked: a string or a list of strings."""
    if notes is None:
        return []
    if isinstance(notes, str):
        return [notes]
    if isinstance(notes, Sequence) and all(isinstance(n, str) for n in notes):
        return list(notes)
    raise OptionError(f"notes must be a string or a list of strings, however: {notes=}")




def frame_of(fit: Any) -> Any:
    """What a fit knows of its model frame: the design of an in-memory fit, the spec of a
    chunked one (both have ``response_name`` and ``weights``, None when unweighted)."""
    design = getattr(fit, "design", None)
    return design if design is not None else getattr(fit, "spec", None)
