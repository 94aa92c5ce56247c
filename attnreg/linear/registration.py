"""The spectral family's side of the registry: its options checked, its fit started.

:mod:`attnreg.methods` registers one estimator per entry of
:data:`attnreg.linear.rules.RULES` with these two functions (as ``glm/registration.py`` does
for the GLM family).
"""

from __future__ import annotations

import numbers
from typing import Any

from attnreg.exceptions import OptionError
from attnreg.formula.design import Design
from attnreg.linear.fit import check_tuning, fit_spectral_design
from attnreg.inference.vcov.registry import VCOV_REGISTRY, check_vcov_options, make_vcov_spec
from attnreg.linear.results import LinearResults
from attnreg.linear.rules import RULES
from attnreg.linear.spectral import ALIAS_TOL

__all__ = ["check_spectral_options", "fit_spectral_options"]


def _vcov_option_names() -> tuple[str, ...]:
    """Options of the registered covariances besides ``maxlags`` (``cluster=``, ``time=``, ...)."""
    names = {n for e in VCOV_REGISTRY.values() for n in e.option_names}
    return tuple(sorted(names - {"maxlags", "adjust"}))


def check_spectral_options(name: str, options: dict[str, Any]) -> dict[str, Any]:
    """Validate the options of spectral method ``name`` (front-door keywords included).

    Returns
    -------
    dict
        ``tuning``, ``standardize``, ``vcov``, ``maxlags``, ``vcov_options`` and ``tol``.

    Raises
    ------
    OptionError
        Naming the option that does not apply or has an invalid value.
    """
    lam, k, std = options.pop("lam", None), options.pop("k", None), options.pop("standardize", None)
    vcov, maxlags = options.pop("vcov", "classical"), options.pop("maxlags", None)
    vcov_options = {n: options.pop(n) for n in _vcov_option_names() if n in options}
    tol = options.pop("tol", ALIAS_TOL)
    if options:
        raise OptionError(f"unknown option(s) for method {name!r}: {', '.join(sorted(options))}")
    tuning = check_tuning(name, lam, k)
    if std is not None and not isinstance(std, bool):
        raise OptionError(f"standardize must be True or False, however: standardize={std!r}")
    if not isinstance(tol, numbers.Real) or not 0 <= float(tol) < 1:
        raise OptionError(f"tol must be in [0, 1), however: {tol=}")
    check_vcov_options(vcov, maxlags=maxlags, **vcov_options)  # validated before any work
    return {"tuning": tuning, "standardize": RULES[name].penalized if std is None else std,
            "vcov": vcov, "maxlags": maxlags, "vcov_options": vcov_options, "tol": float(tol)}


def fit_spectral_options(name: str, design: Design, options: dict[str, Any],
                         call: str) -> LinearResults:
    """Fit spectral method ``name`` on a built design with options from
    :func:`check_spectral_options`."""
    spec = make_vcov_spec(options["vcov"], maxlags=options["maxlags"], n_obs=design.n_obs,
                          design=design, **options.get("vcov_options", {}))
    return fit_spectral_design(design, name, options["tuning"], standardize=options["standardize"],
                               tol=options["tol"], call=call, vcov_spec=spec)
