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

from attnreg._typing import FloatArray, IntArray
from attnreg._warn import warn_user
from attnreg.exceptions import ConvergenceWarning, DataError, OptionError, SeparationWarning
from attnreg.fe.demean import FixedEffects
from attnreg.fe.effects import redundant_levels
from attnreg.fe.frame import absorbed_design
from attnreg.glm.families import FAMILIES
from attnreg.formula.design import Design
from attnreg.glm.fe_irls import fe_irls, perfectly_fitted
from attnreg.glm.fe_lp import sparse_separation
from attnreg.glm.fe_separation import rectifier
from attnreg.glm.irls import IrlsFit, irls
from attnreg.glm.links import LINKS
from attnreg.glm.registration import check_counts, check_glm_options, training_offset, warn_fit
from attnreg.glm.results import GlmResults
from attnreg.glm.separation import Separation
from attnreg.threads import narrow_blas

__all__ = ["AbsorbedGlm", "fit_fe_glm"]

#: rounds of the rectifier (each drops separated rows, then the fit is redone)
_MAX_ROUNDS = 5
#: a fit with a fitted mean this close to 0 (or 1) is checked for separation
_MU_SUSPECT = 1e-4


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
    mode = checked["separation"]
    separated = np.zeros(0, dtype=np.int64)  # data rows the rectifier proved separated
    found: list[Separation] = []
    for _ in range(_MAX_ROUNDS):  # again after separated rows are dropped
        got, inner, offset, fit, n_perfect, n_missing = _design_and_fit(
            request, parts, checked, separated)
        if (family.name not in ("poisson", "binomial") or mode == "none"
                or not (isinstance(fit, DataError) or _suspect(fit.mu, fit.converged,
                                                               family.name))):
            break
        rows = _rectified(inner, got.fe, mode, found, family.name)
        if rows is None:
            break
        separated = np.concatenate([separated, rows])
    if isinstance(fit, DataError):
        raise fit
    if not fit.demeaned:
        warn_user("the demeaning on the fixed effects did not reach the data's accuracy in "
                  "every IRLS step", ConvergenceWarning)
    irls_fit = IrlsFit(fit.coef, fit.eta, fit.mu, fit.r, fit.working_weights, fit.deviance,
                       fit.iter, fit.iter_r, fit.converged, False, 0, 0.0)
    warn_fit(irls_fit, family.name)
    fe = got.fe
    absorbed = AbsorbedGlm(fe, tuple(t.text for t in got.terms),
                           int(sum(fe.n_levels)) - redundant_levels(fe), n_perfect, n_missing,
                           fit.demeaned_x, fit.demeaned)
    wt = np.ones(inner.n_obs) if inner.weights is None else inner.weights
    res = GlmResults(design=inner, family_name=family.name, link_name=link.name, fit=irls_fit,
                     kept=fit.kept, aliased=fit.aliased, offset=offset,
                     offset_spec=checked["offset"],
                     null_deviance=_null_deviance(inner, wt, offset, family, link, checked),
                     call=call, method=request.method, absorbed=absorbed,
                     separation=_merged(found, mode == "drop"))
    v = checked["vcov"]
    return res if v["vcov"] == "classical" else res.with_vcov(v["vcov"], cluster=v["cluster"],
                                                              type=v["type"], **v["options"])


def _design_and_fit(request: Any, parts: Any, checked: dict[str, Any], separated: IntArray
                    ) -> tuple[Any, Design, FloatArray, Any, int, dict[str, int]]:
    """The design without the perfectly fitted levels' rows and the ``separated`` data rows,
    and its fit (or the DataError the fit raised)."""
    family, link = FAMILIES[checked["family"]], LINKS[checked["link"]]
    perfect = family.name in ("binomial", "poisson") and checked["separation"] != "none"
    dropped: list[int] = []

    def drop(design: Any, fe: FixedEffects, keep: Any) -> Any:
        out = perfectly_fitted(design.y[keep], fe, family.name) if perfect else \
            np.zeros(int(keep.sum()), dtype=bool)
        dropped.append(int(out.sum()))
        if separated.size and design.data_rows is not None:
            out = out | np.isin(design.data_rows[keep], separated)
        return out

    design, got, _, n_missing = absorbed_design(request, parts, extra_drop=drop, counts=True)
    check_counts(design, family.name)
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
    fit: Any
    try:
        with narrow_blas(inner.n_coef + 1):  # the threads are the row blocks' (attnreg.threads)
            fit = fe_irls(inner.X, inner.y, wt, offset, got.fe, family, link,
                          epsilon=checked["epsilon"], maxit=checked["maxit"],
                          tol=min(1e-7, checked["epsilon"] / 1000))
    except DataError as exc:  # a mean reached 0: the rectifier decides (Poisson)
        fit = exc
    return got, inner, offset, fit, n_perfect, n_missing


def _suspect(mu: FloatArray, converged: bool, family: str) -> bool:
    """Whether a Poisson or binomial fit may hide a separation: it did not converge, or a
    fitted mean is within :data:`_MU_SUSPECT` of 0 (or 1, binomial): a separated row's mean
    goes there by a factor of about e per step."""
    near = mu < _MU_SUSPECT
    if family == "binomial":
        near |= mu > 1 - _MU_SUSPECT
    return not converged or bool(near.any())


def _rectified(inner: Design, fe: FixedEffects, mode: str, found: list[Separation],
               family: str) -> IntArray | None:
    """Find separated rows (Poisson: the rectifier; binomial: the sparse LP); act as
    ``separation=`` says. The data rows to drop, or None."""
    if family == "poisson":
        res = rectifier(inner.X, inner.y, fe)
        separated, coef = res.separated, res.coef
    else:
        separated, coef = sparse_separation(inner.X, inner.y, fe)
    if not separated.any():
        return None
    top = float(np.abs(coef).max(initial=0.0))
    names = [inner.column_names[j] for j in np.flatnonzero(np.abs(coef) > 1e-6 * top)
             ] if top > 1e-8 else []
    sep = Separation(rows=inner.row_labels[separated],
                     regressors=names or ["the fixed effects"], direction=coef,
                     positions=np.flatnonzero(separated).astype(np.int64),
                     dropped=mode == "drop")
    bound = "0" if family == "poisson" else "0 or 1"
    what = (f"{sep.describe()} (with the fixed effects): the maximum-likelihood estimates of "
            f"a {family} GLM are infinite (fitted means exactly {bound})")
    if mode == "error":
        raise DataError(f"{what}; drop those rows or regressors, or pass separation='drop' "
                        "to leave the rows out of the fit")
    found.append(sep)
    if mode == "warn":
        warn_user(f"{what}; fitted anyway (separation='warn')", SeparationWarning)
        return None
    warn_user(f"{what}; they were dropped before the fit (separation='drop'; see "
              "fit.separation)", SeparationWarning)
    rows = inner.data_rows if inner.data_rows is not None else np.arange(inner.n_obs)
    return np.asarray(rows[separated], dtype=np.int64)


def _merged(found: list[Separation], dropped: bool) -> Separation | None:
    """What the rounds found, as one record (positions only for one round: each round's
    are among its own rows)."""
    if not found:
        return None
    if len(found) == 1:
        return dataclasses.replace(found[0], dropped=dropped)
    rows, names = found[0].rows, list(found[0].regressors)
    for sep in found[1:]:
        rows = rows.append(sep.rows)
        names += [n for n in sep.regressors if n not in names]
    return Separation(rows=rows, regressors=names, direction=found[0].direction,
                      positions=np.zeros(0, dtype=np.int64), dropped=dropped)


def _null_deviance(design: Any, wt: FloatArray, offset: FloatArray, family: Any, link: Any,
                   checked: dict[str, Any]) -> float:
    """The dummy-variable model's null deviance: its intercept alone (with the offset)."""
    if np.any(offset != 0):
        return irls(np.ones((design.n_obs, 1)), design.y, wt, offset, family, link,
                    epsilon=checked["epsilon"], maxit=checked["maxit"]).deviance
    mu0 = np.full(design.n_obs, np.sum(wt * design.y) / np.sum(wt))
    return float(np.sum(family.dev_resids(design.y, mu0, wt)))
