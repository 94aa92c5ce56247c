"""What the registry's GLM methods run (``"glm"`` and the shortcuts ``"logit"``, ``"probit"``,
``"poisson"``, registered in :mod:`attnreg.methods`): the options, checked before any work,
and the fit of a built design."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from attnreg._typing import FloatArray, IntArray
from attnreg._warn import warn_user
from attnreg.exceptions import ConvergenceWarning, DataError, OptionError, RankDeficiencyWarning
from attnreg.formula.design import Design
from attnreg.glm.families import ALIASES, FAMILIES, family_names
from attnreg.glm.irls import AliasingUnsure, IrlsFit, aliased_columns, irls
from attnreg.glm.links import LINKS
from attnreg.glm.offset import check_offset, evaluate_offset
from attnreg.glm.results import GlmResults
from attnreg.inference.vcov.registry import VCOV_REGISTRY, check_vcov_options, get_vcov, vcov_names
from attnreg.threads import narrow_blas
from attnreg.glm.separation import check_separation_mode, find_separation, handle_separation

__all__ = ["SHORTCUTS", "check_counts", "check_glm_options", "fit_glm_design", "training_offset",
           "warn_fit", "warn_state"]

#: The shortcut methods: their family and link (``"poisson"`` also takes ``link=``).
SHORTCUTS = {"logit": ("binomial", "logit"), "probit": ("binomial", "probit"),
             "poisson": ("poisson", None)}
_OPTIONS = ("family", "link", "offset", "epsilon", "maxit", "control", "vcov", "cluster", "type",
            "separation")
#: The spectral family's front-door keywords (``attnreg.methods.SPECTRAL_KEYWORDS``).
_SPECTRAL = ("lam", "k", "standardize", "tol")
_FIXED_EPS = 10 * float(np.finfo(np.float64).eps)
#: the largest last step (relative) of a fit that certifies itself free of separation: far
#: above the rounding floor of a well-conditioned fit, far below the unit steps of a divergence
_STEP_CERTIFIED = 1e-8


def check_glm_options(name: str, options: dict[str, Any]) -> dict[str, Any]:
    """Validate ``family``, ``link``, ``offset``, ``epsilon``, ``maxit`` and ``control``."""
    bad = [k for k in options if k in _SPECTRAL]
    if bad:
        raise OptionError(f"option(s) {', '.join(bad)} do not apply to method {name!r}; "
                          "a GLM takes vcov= (any registered covariance, e.g. 'HC3', 'HAC' with "
                          "maxlags=, 'cluster' with cluster=)")
    unknown = sorted(set(options) - set(_OPTIONS) - vcov_option_names())
    if unknown:
        raise OptionError(f"unknown option(s) for method {name!r}: {', '.join(unknown)} "
                          f"(valid: {', '.join(_OPTIONS)})")
    family, link = _family_and_link(name, options.get("family"), options.get("link"))
    eps, maxit = options.get("epsilon", 1e-8), options.get("maxit", 25)
    if isinstance(eps, bool) or not isinstance(eps, numbers.Real) or not 0 < float(eps) < 1:
        raise OptionError(f"epsilon must be a number in (0, 1), however: epsilon={eps!r}")
    if isinstance(maxit, bool) or not isinstance(maxit, numbers.Integral) or maxit < 1:
        raise OptionError(f"maxit must be a positive integer, however: maxit={maxit!r}")
    control = options.get("control", "optimum")
    if control not in ("optimum", "R"):
        raise OptionError("control must be 'optimum' (iterate to the optimum) or 'R' (stop "
                          f"where R's glm.fit stops), however: control={control!r}")
    return {"family": family, "link": link, "offset": check_offset(options.get("offset")),
            "epsilon": float(eps), "maxit": int(maxit), "control": control,
            "vcov": _check_vcov(options),
            "separation": check_separation_mode(options.get("separation", "drop"))}


def _check_vcov(options: dict[str, Any]) -> dict[str, Any]:
    """``vcov=`` any registered covariance, with its options (checked by the registry)."""
    vcov = options.get("vcov", "classical")
    get_vcov("classical")  # the built-in estimators are registered on first lookup
    if not isinstance(vcov, str) or vcov not in VCOV_REGISTRY:
        raise OptionError(f"vcov must be one of {', '.join(map(repr, vcov_names()))} for a "
                          f"GLM, however: vcov={vcov!r}")
    cluster, kind = options.get("cluster"), options.get("type")
    if (cluster is not None or kind is not None) and vcov != "cluster":
        raise OptionError("cluster= and type= go with vcov='cluster', however: "
                          f"vcov={vcov!r}")
    if vcov == "cluster" and cluster is None:
        raise OptionError("vcov='cluster' needs cluster= (a column name or one id per row)")
    extra = {k: v for k, v in options.items()
             if k in vcov_option_names() and k != "type" and v is not None}
    check_vcov_options(vcov, **extra, **({"cluster": cluster} if cluster is not None else {}),
                       **({"type": kind} if kind is not None else {}))
    return {"vcov": vcov, "cluster": cluster, "type": kind, "options": extra}


def vcov_option_names() -> set[str]:
    """The options of every registered covariance but ``cluster`` and ``type`` (a GLM's own)."""
    get_vcov("classical")  # the built-in estimators are registered on first lookup
    names = {n for kind in vcov_names() for n in get_vcov(kind).option_names}
    return (names | {"maxlags", "adjust"}) - {"cluster", "type", "working_variance"}


def _family_and_link(name: str, family: Any, link: Any) -> tuple[str, str]:
    if name in SHORTCUTS:
        fixed, fixed_link = SHORTCUTS[name]
        if family is not None:
            raise OptionError(f"method {name!r} is the {fixed} family: family= does not apply "
                              f"(use method='glm', family={family!r})")
        if fixed_link is not None and link is not None:
            raise OptionError(f"method {name!r} fixes the link: link= does not apply "
                              f"(use method='glm', family='binomial', link={link!r})")
        family, link = fixed, fixed_link if fixed_link is not None else link
    family = "gaussian" if family is None else family
    if not isinstance(family, str) or ALIASES.get(family, family) not in FAMILIES:
        raise OptionError(f"family must be one of {', '.join(map(repr, family_names()))}, "
                          f"however: family={family!r}")
    fam = FAMILIES[ALIASES.get(family, family)]
    link = fam.links[0] if link is None else link
    if link not in fam.links:
        raise OptionError(f"link {link!r} is not available for the {fam.name} family; "
                          f"use one of {', '.join(map(repr, fam.links))}")
    return fam.name, link


def training_offset(spec: Any, design: Design) -> FloatArray:
    if spec is None:
        return np.zeros(design.n_obs)
    if design.data is None or design.data_rows is None or design.data_rows.size != design.n_obs:
        raise DataError("offset= needs the data the design was built from, row for row: "
                        "it is not available in forecasting windows; fit with attnreg()")
    values = evaluate_offset(spec, design.data, design.eval_env, "data")[design.data_rows]
    if not np.isfinite(values).all():
        raise DataError(f"offset {spec!r} is missing or not finite in "
                        f"{int((~np.isfinite(values)).sum())} row(s) of the fit; drop them "
                        "with subset= or fill them")
    return values


def _irls_fit(design: Design, family: Any, link: Any, offset: FloatArray,
              options: dict[str, Any]) -> tuple[IrlsFit, IntArray, IntArray]:
    """IRLS on the design's columns that are not aliased: (fit, kept, aliased), no warnings."""
    wt = np.ones(design.n_obs) if design.weights is None else design.weights
    tol = min(1e-7, options["epsilon"] / 1000)  # R's glm.fit passes this to its QR
    if options["control"] != "R":  # no aliasing: certified by the fit's first pass
        try:
            fit = irls(design.X, design.y, wt, offset, family, link, epsilon=options["epsilon"],
                       maxit=options["maxit"], trials=design.trials, alias_tol=tol)
            return fit, np.arange(design.n_coef), np.zeros(0, dtype=np.intp)
        except AliasingUnsure:
            pass
    aliased = aliased_columns(design.X, tol, None if design.weights is None else np.sqrt(wt))
    kept = np.setdiff1d(np.arange(design.n_coef), aliased)
    X = design.X if kept.size == design.n_coef else design.X[:, kept]  # no copy when none is
    fit = irls(X, design.y, wt, offset, family, link, epsilon=options["epsilon"],
               maxit=options["maxit"], exact_r=options["control"] == "R", trials=design.trials)
    return fit, kept, aliased


def _certified(fit: IrlsFit, family: str) -> bool:
    """Whether the fit itself proves there is no separation.

    The log-likelihood of a binomial or Poisson GLM with a full-rank design is strictly
    concave while the fitted means are inside the family's range, and its maximum is finite
    exactly when the data are not separated (Albert and Anderson; Santos Silva and Tenreyro
    for Poisson). A fit that reaches a stationary point — the continuation to the optimum
    stopped with a last step at rounding level — with every mean away from the boundary has
    found that finite maximum: no separation, and the linear program need not run. Anything
    else (R's rule alone, a step that did not shrink, a mean near 0 or 1) goes to the linear
    program.
    """
    mu = fit.mu
    tiny = 1e-10
    inside = (mu > tiny).all() and (family != "binomial" or (mu < 1 - tiny).all())
    return bool(fit.converged and fit.final_step <= _STEP_CERTIFIED and inside)


def _fit_checked(design: Design, family: Any, link: Any, options: dict[str, Any]
                 ) -> tuple[Design, Any, FloatArray, IrlsFit, IntArray, IntArray]:
    """The fit with ``separation=`` applied: certified by the fit itself when it can be,
    else checked by the linear program first (rows dropped, a warning or an error)."""
    mode = options.get("separation", "drop")
    checked = (mode != "none" and family.name in ("binomial", "poisson")
               and options["control"] == "optimum" and np.isfinite(design.y).all()
               and (design.y >= 0).all() and (family.name != "binomial" or (design.y <= 1).all()))
    if checked:
        offset = training_offset(options["offset"], design)
        try:
            fit, kept, aliased = _irls_fit(design, family, link, offset, options)
        except DataError:  # an invalid step: the linear program decides
            fit = None
        if fit is not None and _certified(fit, family.name):
            none = find_separation(np.zeros((0, design.n_coef)), np.zeros(0), family.name,
                                   design.column_names, design.row_labels[:0])
            return design, none, offset, fit, kept, aliased
    design, separation = handle_separation(design, family.name, mode)
    offset = training_offset(options["offset"], design)
    fit, kept, aliased = _irls_fit(design, family, link, offset, options)
    return design, separation, offset, fit, kept, aliased


def fit_glm_design(name: str, design: Design, options: dict[str, Any], call: str) -> GlmResults:
    """Fit a GLM to a built design with options from :func:`check_glm_options`."""
    family, link = FAMILIES[options["family"]], LINKS[options["link"]]
    check_counts(design, family.name)
    with narrow_blas(design.n_coef):  # every product of the fit (see attnreg.threads)
        design, separation, offset, fit, kept, aliased = _fit_checked(design, family, link,
                                                                      options)
    wt = np.ones(design.n_obs) if design.weights is None else design.weights
    if aliased.size:
        warn_user(f"{aliased.size} coefficient(s) not defined because of singularities "
                  f"(aliased columns: {', '.join(design.column_names[j] for j in aliased)})",
                  RankDeficiencyWarning)
    control = {"epsilon": options["epsilon"], "maxit": options["maxit"],
               "exact_r": options["control"] == "R"}
    warn_fit(fit, family.name)
    if design.intercept and np.any(offset != 0):  # R refits y ~ 1 with the offset
        null = irls(np.ones((design.n_obs, 1)), design.y, wt, offset, family, link,
                    trials=design.trials, **control).deviance
    else:
        mu0 = (np.full(design.n_obs, np.sum(wt * design.y) / np.sum(wt)) if design.intercept
               else link.linkinv(offset))
        null = float(np.sum(family.dev_resids(design.y, mu0, wt)))
    res = GlmResults(design=design, family_name=family.name, link_name=link.name, fit=fit,
                     kept=kept, aliased=aliased, offset=offset, offset_spec=options["offset"],
                     null_deviance=null, call=call, method=name, control=options["control"],
                     separation=separation)
    v = options["vcov"]
    return res if v["vcov"] == "classical" else res.with_vcov(v["vcov"], cluster=v["cluster"],
                                                              type=v["type"], **v["options"])


def check_counts(design: Design, family: str) -> None:
    """Refuse a ``cbind(successes, failures)`` response outside the binomial family."""
    if design.trials is not None and family != "binomial":
        raise OptionError(f"the response {design.response_name!r} counts successes and "
                          f"failures: it needs the binomial family, not {family!r} (use "
                          "method='logit', 'probit' or family='binomial')")


def warn_fit(fit: IrlsFit, family: str) -> None:
    """R's warnings of ``glm.fit``, each once per fit."""
    mu = fit.mu
    at_bound = mu < _FIXED_EPS
    if family == "binomial":
        at_bound = at_bound | (mu > 1 - _FIXED_EPS)
    warn_state(fit.n_halved, fit.boundary, fit.converged,
               int(at_bound.sum()) if family in ("binomial", "poisson") else 0, family)


def warn_state(n_halved: int, boundary: bool, converged: bool, n_at_bound: int,
               family: str) -> None:
    """R's warnings of ``glm.fit`` from the state of a fit (in memory or chunk by chunk):
    ``n_at_bound`` fitted means numerically 0 (or 1, binomial) of a binomial or Poisson fit."""
    if n_halved:
        warn_user(f"step size truncated in {n_halved} IRLS step(s): the deviance was not "
                  "finite or the fitted means were out of bounds", ConvergenceWarning)
    if boundary:
        warn_user("glm.fit: algorithm stopped at boundary value", ConvergenceWarning)
    if not converged:
        warn_user("glm.fit: algorithm did not converge; raise maxit=", ConvergenceWarning)
    if n_at_bound:
        what = "probabilities numerically 0 or 1" if family == "binomial" else "rates numerically 0"
        warn_user(f"glm.fit: fitted {what} occurred", ConvergenceWarning)