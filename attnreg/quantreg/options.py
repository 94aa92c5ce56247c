"""The options of ``method="quantreg"``, checked before any work."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from attnreg.exceptions import OptionError
from attnreg.quantreg.se import SE_KINDS

__all__ = ["QUANTREG_OPTIONS", "SUMMARY_SE", "check_quantreg_options", "check_se", "check_taus"]

#: The ``se=`` values of a summary: the standard errors, and ``"rank"`` (rank-inversion
#: confidence intervals, :mod:`attnreg.quantreg.rank`).
SUMMARY_SE = (*SE_KINDS, "rank")

#: Option names and defaults: ``tau`` (one or several), ``se`` (R's ``summary.rq(se=)``; None
#: is R's default: ``"rank"`` below 1001 rows, else ``"nid"``; ``vcov()`` then gives ``"nid"``),
#: ``hs`` (Hall–Sheather bandwidth, else Bofinger), ``replicates`` and ``seed`` (``se="boot"``),
#: ``warm_start`` (coefficients, shape (n_coef, n_tau), whose vertex is tried first: the
#: forecasting loop passes the previous origin's; the solution does not depend on it when
#: it is unique, see :func:`attnreg.quantreg.solver.rq_fit`).
QUANTREG_OPTIONS: dict[str, Any] = {"tau": 0.5, "se": None, "hs": True, "replicates": 200,
                                    "seed": None, "warm_start": None}
_FRONT_DOOR = ("lam", "k", "standardize", "vcov", "maxlags", "tol")


def check_taus(tau: Any) -> tuple[float, ...]:
    """One τ or several, each in (0, 1); returned sorted and unique (as R's ``rq``)."""
    values = np.atleast_1d(np.asarray(tau, dtype=object)).ravel()
    if values.size == 0 or not all(isinstance(t, numbers.Real) and not isinstance(t, bool)
                                   for t in values):
        raise OptionError(f"tau must be a number in (0, 1) or a list of them, however: {tau=}")
    taus = np.asarray(values, dtype=np.float64)
    if not np.all((taus > 0) & (taus < 1)):
        raise OptionError(f"tau must be in (0, 1) (exclusive), however: {tau=}")
    return tuple(float(t) for t in np.unique(taus))


def check_se(se: Any) -> str | None:
    """A valid ``se=`` (one of :data:`SUMMARY_SE`), or None for R's default."""
    if se is not None and se not in SUMMARY_SE:
        raise OptionError(f"se must be one of {', '.join(map(repr, SUMMARY_SE))} or None (R's "
                          f"default: 'rank' below 1001 rows, else 'nid'), however: {se=}")
    return None if se is None else str(se)


def check_quantreg_options(name: str, options: dict[str, Any]) -> dict[str, Any]:
    """Validate ``attnreg(..., method="quantreg", **options)`` and return them resolved.

    Raises
    ------
    OptionError
        Naming the option that does not apply or its invalid value.
    """
    given = [k for k in _FRONT_DOOR if k in options]
    if given:
        raise OptionError(f"option(s) {', '.join(given)} do not apply to method {name!r} "
                          f"(its options: {', '.join(QUANTREG_OPTIONS)})")
    unknown = sorted(set(options) - set(QUANTREG_OPTIONS))
    if unknown:
        raise OptionError(f"unknown option(s) for method {name!r}: {', '.join(unknown)}; "
                          f"valid: {', '.join(QUANTREG_OPTIONS)}")
    out = {**QUANTREG_OPTIONS, **options}
    out["tau"] = check_taus(out["tau"])
    out["se"] = check_se(out["se"])
    if not isinstance(out["hs"], bool):
        raise OptionError(f"hs must be True or False, however: hs={out['hs']!r}")
    reps = out["replicates"]
    if not isinstance(reps, numbers.Integral) or isinstance(reps, bool) or reps < 2:
        raise OptionError(f"replicates must be an integer >= 2, however: replicates={reps!r}")
    if out["seed"] is not None and not isinstance(out["seed"], numbers.Integral):
        raise OptionError(f"seed must be an integer or None, however: seed={out['seed']!r}")
    start = out["warm_start"]
    if start is not None:
        start = np.asarray(start, dtype=np.float64)
        if start.ndim != 2 or start.shape[1] != len(out["tau"]) or not np.isfinite(start).all():
            raise OptionError(f"warm_start must be finite coefficients of shape (n_coef, "
                              f"{len(out['tau'])}) (a column per tau), however: shape "
                              f"{start.shape}")
        out["warm_start"] = start
    return out
