"""``attnreg("y ~ x | firm + year", data, method="poisson")``: GLMs with absorbed fixed effects.

fixest's ``feglm``/``fepois`` (and ppmlhdfe's PPML) on attnreg's exact core: the rows of levels
that only a infinite effect fits (every response 0 for Poisson, or every one 0 or 1 for
binomial) are dropped first and counted, then :func:`attnreg.glm.fe_irls.fe_irls` runs IRLS
on the working responses demeaned on the fixed effects, to the optimum. The result is a
:class:`~attnreg.glm.results.GlmResults` over the slopes: coefficients, standard errors
(model-based, HC0/HC1, cluster), deviance, AIC and the dispersion equal the dummy-variable
GLM's (``y ~ x + C(firm) + C(year)``), the fixed effects' levels counted in the residual
degrees of freedom.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from attnreg._typing import FloatArray
from attnreg._warn import warn_user
from attnreg.exceptions import ConvergenceWarning, DataError, OptionError
from attnreg.fe.demean import FixedEffects
from attnreg.fe.effects import redundant_levels
from attnreg.fe.frame import absorbed_design
from attnreg.glm.families import FAMILIES
from attnreg.glm.fe_irls import fe_irls, perfectly_fitted
from attnreg.glm.irls import IrlsFit, irls
from attnreg.glm.links import LINKS
from attnreg.glm.registration import check_glm_options, training_offset, warn_fit
from attnreg.glm.results import GlmResults

__all__ = ["AbsorbedGlm", "fit_fe_glm"]


@dataclass(frozen=True)
class AbsorbedGlm:
    """The fixed effects a GLM absorbed.

    Attributes
    ----------
    fe : FixedEffects
    terms : tuple of str
        The fixed-effect terms as written.
    n_params : int
        Their free levels (all levels less the redundant ones): the dummy-variable model's
        intercept and fixed-effect coefficients.
    n_perfect : int
        Rows left out because a level's responses are all 0 (or all 1): fitted only by an
        infinite effect.
    n_missing : dict of str to int
        Rows left out for a missing fixed effect, by term.
    x_tilde : ndarray, shape (n_obs, rank)
        The regressors demeaned with the final working weights (the sandwich's scores).
    demeaned : bool
        Every demeaning reached its rounding floor.
    """

    fe: FixedEffects
    terms: tuple[str, ...]
    n_params: int
    n_perfect: int
    n_missing: dict[str, int]
    x_tilde: FloatArray
    demeaned: bool

    def describe(self) -> str:
        """One line for the summary."""
        levels = ", ".join(f"{t} ({n:,} levels)" for t, n in
                           zip(self.terms, self.fe.n_levels, strict=True))
        out = f"Fixed effects: {levels}"
        missing = {t: k for t, k in self.n_missing.items() if k}
        if missing:
            out += "; rows without a fixed effect left out: " + ", ".join(
                f"{t} {k}" for t, k in missing.items())
        if self.n_perfect:
            out += (f"; {self.n_perfect} observation{'s' if self.n_perfect > 1 else ''} "
                    "removed (levels fitted perfectly)")
        return out


def _options(request: Any) -> dict[str, Any]:
    checked = check_glm_options(request.method, dict(request.options))
    if checked["control"] == "R":
        raise OptionError("control='R' is not available with absorbed fixed effects (R's glm "
                          "has none): the fit iterates to the optimum")
    return checked


def fit_fe_glm(request: Any, parts: Any, call: str) -> GlmResults:
    """Fit a GLM with the fixed effects of ``parts`` absorbed (module docstring); ``request``
    holds the data in memory, ``call`` is the call string the summary prints."""
    checked = _options(request)
    family, link = FAMILIES[checked["family"]], LINKS[checked["link"]]
    perfect = family.name in ("binomial", "poisson") and checked["separation"] != "none"

    dropped: list[int] = []

    def drop(design: Any, fe: FixedEffects, keep: Any) -> Any:
        out = perfectly_fitted(design.y[keep], fe, family.name) if perfect else \
            np.zeros(int(keep.sum()), dtype=bool)
        dropped.append(int(out.sum()))
        return out

    design, got, _, n_missing = absorbed_design(request, parts, extra_drop=drop)
    n_perfect = sum(dropped)
    if n_perfect and checked["separation"] == "error":
        raise DataError(f"{n_perfect} observation(s) are in fixed-effect levels whose "
                        "responses are all 0 (or all 1): their effects are infinite; drop them "
                        "or pass separation='drop'")
    slopes = [j for j, n in enumerate(design.column_names) if n != "(Intercept)"]
    inner = dataclasses.replace(design, X=np.ascontiguousarray(design.X[:, slopes]),
                                column_names=[design.column_names[j] for j in slopes],
                                intercept=False, formula=request.formula)
    wt = np.ones(inner.n_obs) if inner.weights is None else inner.weights
    offset = training_offset(checked["offset"], inner)
    fe = got.fe
    fit = fe_irls(inner.X, inner.y, wt, offset, fe, family, link,
                  epsilon=checked["epsilon"], maxit=checked["maxit"],
                  tol=min(1e-7, checked["epsilon"] / 1000))
    if not fit.demeaned:
        warn_user("the demeaning on the fixed effects did not reach the data's accuracy in "
                  "every IRLS step", ConvergenceWarning)
    irls_fit = IrlsFit(fit.coef, fit.eta, fit.mu, fit.r, fit.working_weights, fit.deviance,
                       fit.iter, fit.iter_r, fit.converged, False, 0, 0.0)
    warn_fit(irls_fit, family.name)
    absorbed = AbsorbedGlm(fe, tuple(t.text for t in got.terms),
                           int(sum(fe.n_levels)) - redundant_levels(fe), n_perfect, n_missing,
                           fit.demeaned_x, fit.demeaned)
    res = GlmResults(design=inner, family_name=family.name, link_name=link.name, fit=irls_fit,
                     kept=fit.kept, aliased=fit.aliased, offset=offset,
                     offset_spec=checked["offset"],
                     null_deviance=_null_deviance(inner, wt, offset, family, link, checked),
                     call=call,
                     method=request.method, absorbed=absorbed)
    v = checked["vcov"]
    return res if v["vcov"] == "classical" else res.with_vcov(v["vcov"], cluster=v["cluster"],
                                                              type=v["type"], **v["options"])


def _null_deviance(design: Any, wt: FloatArray, offset: FloatArray, family: Any, link: Any,
                   checked: dict[str, Any]) -> float:
    """The dummy-variable model's null deviance: its intercept alone (with the offset)."""
    if np.any(offset != 0):
        return irls(np.ones((design.n_obs, 1)), design.y, wt, offset, family, link,
                    epsilon=checked["epsilon"], maxit=checked["maxit"]).deviance
    mu0 = np.full(design.n_obs, np.sum(wt * design.y) / np.sum(wt))
    return float(np.sum(family.dev_resids(design.y, mu0, wt)))
