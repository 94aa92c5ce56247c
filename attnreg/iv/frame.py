"""The arrays of an IV formula: one model frame for y, the exogenous regressors, the
endogenous regressors and the instruments, so the same rows are dropped for a missing value in
any of them.

``"y ~ x1 + C(g) | d1 + d2 ~ z1 + C(h)"`` is built as the single design
``y ~ x1 + C(g) + d1 + d2 + z1 + C(h)`` (:func:`attnreg.formula.design.build_design`), whose
columns are then split by term: the model part's terms (the intercept included) are the
exogenous regressors X, the IV part's left side the endogenous D, its right side the excluded
instruments Z. With fixed effects (``y ~ x | firm + year | d ~ z``) every column is demeaned on
them (:func:`attnreg.fe.demean.demean`) and the intercept is absorbed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import patsy
from scipy.linalg import qr

from attnreg._typing import FloatArray, IntArray
from attnreg.exceptions import DataError, FormulaError
from attnreg.formula.design import INTERCEPT, Design, build_design
from attnreg.formula.parts import FormulaParts
from attnreg.formula.poly import r_column_names

__all__ = ["IVFrame", "build_iv_frame", "first_dependent", "name_collinear_column"]

_RANK_TOL = 1e-9  # share of a unit-norm column left after projecting on the earlier ones


@dataclass(frozen=True)
class IVFrame:
    """The arrays of an IV fit, on the rows used.

    Attributes
    ----------
    design : Design
        The regressors' design: ``y``, ``X`` = [exogenous, endogenous] columns (shape
        (n_obs, k1 + k2), not demeaned) and what prediction needs to rebuild them.
    y : ndarray, shape (n_obs,)
        Response (demeaned on the fixed effects if any).
    X : ndarray, shape (n_obs, k1)
        Exogenous regressors (intercept column included when the model has one and there are
        no fixed effects; demeaned otherwise).
    D : ndarray, shape (n_obs, k2)
        Endogenous regressors.
    Z : ndarray, shape (n_obs, l)
        Excluded instruments.
    exog_names, endog_names, instrument_names : tuple of str
    fixed_effects : tuple of str
        The fixed-effect columns absorbed (empty when none).
    n_absorbed : int
        Parameters the fixed effects add to the model (levels less redundant ones).
    fe_codes : ndarray of int, shape (n_obs, n_fe), or None
        Level codes of the fixed effects (for cluster-robust inference on them).
    instruments_design : Design or None
        The first stage's design: ``X`` = [exogenous, excluded instruments] (not demeaned).
    fe : FixedEffects or None
        The absorbed fixed effects of the rows used (their levels, for prediction).
    fe_effects : ndarray, shape (n_levels_total, 1 + k1 + k2 + l), or None
        The demeaning's effects α of ``[y, X, D, Z]`` (one solution; ``v - D α`` is the
        demeaned column), from which the fit's fixed effects are put back.
    """

    design: Design
    y: FloatArray
    X: FloatArray
    D: FloatArray
    Z: FloatArray
    exog_names: tuple[str, ...]
    endog_names: tuple[str, ...]
    instrument_names: tuple[str, ...]
    fixed_effects: tuple[str, ...] = ()
    n_absorbed: int = 0
    fe_codes: IntArray | None = field(default=None, repr=False)
    instruments_design: Design | None = field(default=None, repr=False)
    fe: Any = field(default=None, repr=False)
    fe_effects: FloatArray | None = field(default=None, repr=False)

    @property
    def names(self) -> list[str]:
        """Coefficient names: exogenous then endogenous."""
        return [*self.exog_names, *self.endog_names]

    @property
    def weights(self) -> FloatArray | None:
        """Prior weights of the rows used (None without)."""
        return self.design.weights

    @property
    def intercept(self) -> bool:
        """Whether the exogenous part has an intercept column (never with fixed effects)."""
        return INTERCEPT in self.exog_names


def _term_names(part: str) -> list[str]:
    """patsy's names of the terms of one side of a formula (the implicit intercept left out)."""
    try:
        desc = patsy.ModelDesc.from_formula("~ " + part)
    except patsy.PatsyError as exc:
        raise FormulaError(f"could not parse {part!r}: {exc}") from None
    return [t.name() for t in desc.rhs_termlist if t.factors]


def _check_parts(model_terms: list[str], endog: list[str], instr: list[str], formula: str) -> None:
    """FormulaError for a term listed in two roles, before any data is read."""
    for a, b, what in ((endog, model_terms, "is listed both as endogenous and as exogenous "
                        "(left of the first '|'); keep it in one place"),
                       (instr, model_terms, "is both an excluded instrument and an exogenous "
                        "regressor: exogenous regressors instrument themselves, so list only the "
                        "excluded instruments right of the IV part's '~'"),
                       (instr, endog, "is both an endogenous regressor and its instrument")):
        both = [t for t in a if t in b]
        if both:
            raise FormulaError(f"{', '.join(map(repr, both))} {what}, in {formula!r}")


def first_dependent(R: FloatArray) -> int | None:
    """Index of the first column that is a linear combination of earlier ones, from the R
    factor (m, k) of columns scaled to unit norm (relative tolerance), or None."""
    if R.shape[1] == 0:
        return None
    r = qr(R, mode="r")[0] if R.shape[0] < R.shape[1] or np.any(np.tril(R, -1)) else R
    diag = np.zeros(R.shape[1])
    diag[:min(r.shape)] = np.abs(np.diag(r))
    small = diag <= _RANK_TOL
    return int(np.flatnonzero(small)[0]) if small.any() else None


def _check_columns(X: FloatArray, D: FloatArray, Z: FloatArray, names: Sequence[str],
                   formula: str, intercept: bool) -> None:
    """DataError naming an under-identifying, constant or all-zero column (before fitting)."""
    k1, k2, nz = X.shape[1], D.shape[1], Z.shape[1]
    endog, instr = names[k1:k1 + k2], names[k1 + k2:]
    if nz < k2:
        raise DataError(f"the model is under-identified: {k2} endogenous regressor(s) "
                        f"({', '.join(endog)}) but only {nz} excluded instrument(s) "
                        f"({', '.join(instr)}) in {formula!r}; add instruments right of the "
                        "IV part's '~'")
    for j, name in enumerate(instr):
        if intercept and np.ptp(Z[:, j]) == 0:
            raise DataError(f"instrument {name!r} is constant over the rows used (absorbed by the "
                            "intercept): it carries no information; drop it")
    ordered = [*names[:k1], *instr, *endog]
    norms = np.sqrt(np.sum(np.hstack([X, Z, D]) ** 2, axis=0))
    if np.any(norms == 0):
        raise DataError(f"column {ordered[int(np.flatnonzero(norms == 0)[0])]!r} is zero in every "
                        "row used; drop it")


def name_collinear_column(frame: IVFrame) -> None:
    """DataError naming the first exogenous regressor, instrument or endogenous regressor that
    is a linear combination of the columns before it; nothing when there is none.

    Called when a fit finds a rank deficiency (a tall QR is not free: it is not run on every
    fit). One QR of ``[X, Z, D]`` (columns scaled to unit norm); the R factors of ``[X, D]``
    and of the leading blocks come from it (small QRs of columns of R).
    """
    X, D, Z = frame.X, frame.D, frame.Z
    k1, k2, nz = X.shape[1], D.shape[1], Z.shape[1]
    exog, endog, instr = frame.exog_names, frame.endog_names, frame.instrument_names
    M = np.hstack([X, Z, D])
    R = qr(M / np.sqrt(np.sum(M**2, axis=0)), mode="r")[0][:M.shape[1]]  # (min(n, m), m)
    bad = first_dependent(R[:, :k1])
    if bad is not None:
        raise DataError(f"exogenous regressor {exog[bad]!r} is a linear combination of the "
                        "other exogenous regressors (or the fixed effects); drop it")
    bad = first_dependent(R[:, :k1 + nz])
    if bad is not None:
        raise DataError(f"instrument {instr[bad - k1]!r} is a linear combination of the "
                        "exogenous regressors and the other instruments (an instrument identical "
                        "to a regressor adds nothing); drop it")
    bad = first_dependent(R[:, [*range(k1), *range(k1 + nz, k1 + nz + k2)]])
    if bad is not None:
        raise DataError(f"endogenous regressor {endog[bad - k1]!r} is a linear combination of "
                        "the exogenous regressors and the other endogenous ones; drop it")


def _fe_codes(design: Design, parts: FormulaParts) -> tuple[tuple[str, ...], list[Any]]:
    """The fixed-effect columns of the rows used, each as an array."""
    data = design.data
    cols: list[str] = []
    for term in parts.fixed_effect_terms:
        if term.slopes or len(term.columns) != 1:
            raise FormulaError(f"fixed effect {term.text!r}: an IV formula absorbs plain columns "
                               "only ('y ~ x | firm + year | d ~ z'); write an interaction as "
                               "a column of its own")
        cols.append(term.columns[0])
    assert data is not None and design.data_rows is not None
    missing = [c for c in cols if c not in data.columns]
    if missing:
        raise FormulaError(f"data has no fixed-effect column {missing[0]!r} "
                           f"(in {parts.formula!r})")
    return tuple(cols), [data[c].to_numpy()[design.data_rows] for c in cols]


def _columns(design: Design, terms: list[str]) -> FloatArray:
    """The design columns of ``terms``, shape (n_obs, m)."""
    slices = design.design_info.term_name_slices
    idx = [j for t in terms for j in range(slices[t].start, slices[t].stop)]
    return np.ascontiguousarray(design.X[:, idx])


def build_iv_frame(parts: FormulaParts, data: Any, *, weights: Any = None, subset: Any = None,
                   na_action: Any = "drop", eval_env: Any = None,
                   extra_names: Any = None) -> IVFrame:
    """Build y, X, D and Z of an IV formula from one model frame.

    Parameters
    ----------
    parts : FormulaParts
        The split formula (``parts.endogenous`` and ``parts.instruments`` not None).
    data, weights, subset, na_action, eval_env, extra_names
        As :func:`attnreg.formula.design.build_design`.

    Returns
    -------
    IVFrame

    Raises
    ------
    FormulaError
        A term in two roles (an instrument that is also a regressor, ...).
    DataError
        Fewer instruments than endogenous regressors, a constant or collinear column.
    """
    assert parts.endogenous is not None and parts.instruments is not None
    lhs, rhs = (s.strip() for s in parts.model.split("~", 1))
    model_terms = _term_names(rhs)
    endog_terms, instr_terms = _term_names(parts.endogenous), _term_names(parts.instruments)
    _check_parts(model_terms, endog_terms, instr_terms, parts.formula)
    combined = f"{lhs} ~ {rhs} + {parts.endogenous} + {parts.instruments}"
    design = build_design(combined, data, weights=weights, subset=subset, na_action=na_action,
                          eval_env=eval_env, extra_names=extra_names)
    info = design.design_info
    roles = {name: ("z" if name in instr_terms else "d" if name in endog_terms else "x")
             for name in info.term_names}
    x_terms = [t for t in info.term_names if roles[t] == "x"]
    d_terms = [t for t in info.term_names if roles[t] == "d"]
    z_terms = [t for t in info.term_names if roles[t] == "z"]
    reg_info = info.subset(x_terms + d_terms)
    reg_names = r_column_names(reg_info)
    z_names = r_column_names(info.subset(z_terms)) if z_terms else []
    X, D, Z = (_columns(design, terms) for terms in (x_terms, d_terms, z_terms))
    n_x = X.shape[1]
    exog, endog = reg_names[:n_x], reg_names[n_x:]
    reg_design = dataclasses.replace(design, X=np.hstack([X, D]), column_names=list(reg_names),
                                     design_info=reg_info, formula=parts.formula)
    inst_info = info.subset(x_terms + z_terms)
    inst_design = dataclasses.replace(design, X=np.hstack([X, Z]), design_info=inst_info,
                                      column_names=r_column_names(inst_info), zero_weight=None,
                                      formula=f"{lhs} ~ {rhs} + {parts.instruments}")
    frame = IVFrame(design=reg_design, y=design.y, X=X, D=D, Z=Z, exog_names=tuple(exog),
                    endog_names=tuple(endog), instrument_names=tuple(z_names),
                    instruments_design=inst_design)
    if parts.fixed_effects:
        frame = _absorb(frame, parts)
    _check_columns(frame.X, frame.D, frame.Z, [*frame.names, *frame.instrument_names],
                   parts.formula, frame.intercept)
    return frame


def _absorb(frame: IVFrame, parts: FormulaParts) -> IVFrame:
    """Demean y, X, D and Z on the fixed effects; the intercept is absorbed."""
    from attnreg.fe.demean import FixedEffects, demean
    from attnreg.fe.effects import redundant_levels

    names, columns = _fe_codes(frame.design, parts)
    missing = [n for n, c in zip(names, columns, strict=True) if pd.isna(c).any()]
    if missing:
        raise DataError(f"fixed effect {missing[0]!r} has missing values in the rows used; drop "
                        "those rows (or fill the column) first")
    fe = FixedEffects.from_columns(columns, names)
    keep = [j for j, n in enumerate(frame.exog_names) if n != INTERCEPT]
    X = frame.X[:, keep]
    k1, k2 = X.shape[1], frame.D.shape[1]
    stacked = np.column_stack([frame.y, X, frame.D, frame.Z])
    demeaned = demean(stacked, fe, frame.weights, method="auto")
    r = demeaned.resid
    left = np.sqrt(np.sum(r**2, axis=0)) <= _RANK_TOL * np.sqrt(np.sum(stacked**2, axis=0))
    all_names = ["the response", *(frame.exog_names[j] for j in keep), *frame.endog_names,
                 *frame.instrument_names]
    if left.any():
        raise DataError(f"{all_names[int(np.flatnonzero(left)[0])]!r} is constant within the "
                        f"fixed effects {', '.join(names)} (absorbed by them); drop it")
    absorbed = int(sum(fe.n_levels)) - redundant_levels(fe)
    codes = np.column_stack(fe.codes)
    return dataclasses.replace(
        frame, y=r[:, 0], X=r[:, 1:1 + k1], D=r[:, 1 + k1:1 + k1 + k2], Z=r[:, 1 + k1 + k2:],
        exog_names=tuple(frame.exog_names[j] for j in keep), fixed_effects=names,
        n_absorbed=absorbed, fe_codes=codes, fe=fe, fe_effects=demeaned.effects,
        design=dataclasses.replace(frame.design, X=np.hstack([X, frame.D]),
                                   column_names=[frame.exog_names[j] for j in keep]
                                   + list(frame.endog_names), intercept=False))
