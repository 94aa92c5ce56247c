"""The model frame: formula + data -> response, design matrix, weights and row labels (patsy)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd
import patsy

from attnreg._typing import BoolArray, FloatArray, IntArray
from attnreg.exceptions import DataError, FormulaError, OptionError
from attnreg.formula.builder import check_finite, design_rows
from attnreg.formula.checks import (
    as_frame,
    check_factor_levels,
    check_response_columns,
    check_weights,
    na_message,
    subset_mask,
    translate_patsy_error,
    weights_vector,
)
from attnreg.formula.counts import counts_code, counts_response
from attnreg.formula.builder import model_arrays as _model_arrays
from attnreg.formula.builder import model_arrays_public as _model_arrays_public  # noqa: F401
from attnreg.formula.kept import kept_frame, kept_names, names_of
from attnreg.formula.parse import check_names, expand_dot, parse
from attnreg.formula.poly import r_column_names
from attnreg.formula.frame import (
    check_factor_code,
    numeric_columns,
    prepare_frame,
    string_labels,
    uses_time_operator,
    variable_uses,
)

NaAction = Literal["drop", "raise"]
INTERCEPT = "(Intercept)"



@dataclass(frozen=True)
class Design:
    """A built model frame: everything a fitter needs, plus what prediction needs to rebuild it.

    Attributes
    ----------
    formula : str
        The formula as given (with R's ``.`` expanded).
    y : ndarray, shape (n_obs,)
        Response.
    X : ndarray, shape (n_obs, n_coef)
        Design matrix, C-contiguous float64.
    column_names : list of str
        Design column names; the intercept is called ``"(Intercept)"``.
    response_name : str
        Name of the response expression.
    row_labels : pandas.Index
        Labels of the rows used, from the data's index.
    weights : ndarray, shape (n_obs,) or None
        Prior weights (WLS), strictly positive.
    intercept : bool
        Whether the design has an intercept column (always column 0 when present).
    dropped_labels : pandas.Index
        Labels of rows removed because of missing values.
    n_subset_excluded : int
        Rows excluded by ``subset``.
    numeric_columns : frozenset of str
        Data columns the formula used as numbers (prediction requires numbers there too).
    zero_weight : ZeroWeightRows or None
        Rows with weight zero: left out of ``X`` and ``y`` (and so of the fit and its degrees
        of freedom) but kept for fitted values and residuals, as R's ``lm()`` does.
    data : DataFrame or None
        The data the design was built from: the caller's own DataFrame (never a copy; a
        dict of columns is kept as the DataFrame made of it), so that covariances can look
        up columns the formula does not use (cluster ids). A pickle or a copy keeps only its
        columns in ``kept_columns`` (every row). Not compared by ``==``.
    data_rows : ndarray of int, shape (n_obs,), or None
        Positions in ``data`` of the rows of ``X`` (after missing values, ``subset`` and
        weights of zero). Not compared by ``==``.
    kept_columns : frozenset of str or None
        The columns of ``data`` a pickle keeps: those the formula uses and those named when
        fitting (weights, subset, cluster, time, offset); None keeps them all. Not compared.
    data_complete : bool
        Whether ``data`` has all the caller's columns (False after pickling or copying: a
        column it lacks may be one the fit did not keep). Not compared by ``==``.
    trials : ndarray, shape (n_obs,), or None
        The binomial trials of a ``cbind(successes, failures)`` response
        (:mod:`attnreg.formula.counts`): ``y`` is then the proportion of successes and
        ``weights`` the prior weights times the trials; None for any other response.
    """

    formula: str
    y: FloatArray
    X: FloatArray
    column_names: list[str]
    response_name: str
    row_labels: pd.Index
    weights: FloatArray | None
    intercept: bool
    dropped_labels: pd.Index
    n_subset_excluded: int
    design_info: Any = field(repr=False)
    eval_env: Any = field(repr=False)
    numeric_columns: frozenset[str] = field(default=frozenset(), repr=False)
    zero_weight: ZeroWeightRows | None = field(default=None, repr=False)
    data: pd.DataFrame | None = field(default=None, repr=False, compare=False)
    data_rows: IntArray | None = field(default=None, repr=False, compare=False)
    kept_columns: frozenset[str] | None = field(default=None, repr=False, compare=False)
    data_complete: bool = field(default=True, repr=False, compare=False)
    trials: FloatArray | None = field(default=None, repr=False)

    @property
    def n_obs(self) -> int:
        """Number of rows used in the fit."""
        return int(self.X.shape[0])

    @property
    def predictor_names(self) -> list[str]:
        """Design column names without the intercept (the inputs of the nonlinear methods)."""
        return self.column_names[1:] if self.intercept else self.column_names

    @property
    def n_coef(self) -> int:
        """Number of design columns."""
        return int(self.X.shape[1])

    def predictor_matrix(self, method: str) -> FloatArray:
        """``X`` without the intercept column: the inputs of the softmax and network methods.

        Raises DataError when no predictor is left.
        """
        X = self.X[:, 1:] if self.intercept else self.X
        if X.shape[1] == 0:
            raise DataError(f"method {method!r} needs at least one predictor")
        return np.ascontiguousarray(X)

    def rebuild(self, newdata: pd.DataFrame | Mapping[str, Any]) -> tuple[FloatArray, pd.Index]:
        """Build the design matrix of new rows with the fit's transforms and factor levels.

        Parameters
        ----------
        newdata : DataFrame or dict
            New rows; must contain every variable the right-hand side uses.

        Returns
        -------
        X_new : ndarray, shape (n_new, n_coef)
        labels : pandas.Index
        """
        frame = string_labels(as_frame(newdata, "newdata", scalars=True), "newdata")
        factors = list(self.design_info.factor_infos.keys())
        check_names(factors, frame, self.eval_env, "newdata")
        uses = {name: name in self.numeric_columns for f in factors
                for name in variable_uses(f.code)}
        frame = prepare_frame(frame, uses, "newdata", numeric=self.numeric_columns)
        try:  # rows with a missing value (numeric or factor) are built apart, then NaN rows,
            mat, rows = design_rows(self.design_info, frame)  # as R's predict(na.pass)
        except patsy.PatsyError as exc:
            raise translate_patsy_error(exc, "newdata") from None
        X_new = np.full((frame.shape[0], len(self.column_names)), np.nan)
        X_new[rows] = mat
        check_finite(X_new[rows], self.column_names, frame.index[rows], "newdata")
        return X_new, frame.index

    def __getstate__(self) -> dict[str, Any]:
        """Pickle support: patsy's design info and the formula's scope as plain data.

        See :mod:`attnreg.formula.spec`; the scope keeps only the names the formula uses,
        and the data only its ``kept_columns`` (:mod:`attnreg.formula.kept`).
        """
        from attnreg.formula.spec import FormulaSpec

        state = {**self.__dict__, "design_info": FormulaSpec.from_design(self), "eval_env": None}
        if self.data is not None and self.kept_columns is not None and self.data_complete:
            state.update(data=kept_frame(self.data, self.kept_columns), data_complete=False)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Rebuild the patsy design info and the formula's scope saved by :meth:`__getstate__`."""
        design_info, eval_env = state["design_info"].to_patsy()
        self.__dict__.update({"kept_columns": None, "data_complete": True, **state,
                              "design_info": design_info, "eval_env": eval_env})


@dataclass(frozen=True)
class ZeroWeightRows:
    """Rows with prior weight zero, kept apart from the fit (R's ``lm()`` semantics).

    Attributes
    ----------
    X : ndarray, shape (n_zero, n_coef)
    y : ndarray, shape (n_zero,)
    labels : pandas.Index
    order : ndarray of int, shape (n_obs + n_zero,)
        Data order of the rows ``[fitted rows, zero-weight rows]``.
    """

    X: FloatArray
    y: FloatArray
    labels: pd.Index
    order: IntArray

    def all_rows(self, fit_values: FloatArray, fit_labels: pd.Index, zero_values: FloatArray,
                 name: str) -> pd.Series:
        """Values of the fitted rows and of these rows together, in data order."""
        values = np.concatenate([fit_values, zero_values])[self.order]
        return pd.Series(values, index=fit_labels.append(self.labels)[self.order], name=name)


def _split_zero_weights(X: FloatArray, y: FloatArray, w: FloatArray,
                        labels: pd.Index) -> tuple[FloatArray, FloatArray, FloatArray, pd.Index,
                                                   ZeroWeightRows | None]:
    """Move the rows of weight zero out of the fit (they keep fitted values and residuals)."""
    zero = w == 0
    if not zero.any():
        return X, y, w, labels, None
    if zero.all():
        raise DataError("every weight is zero: there are no rows to fit")
    fit = ~zero
    order = np.argsort(np.concatenate([np.flatnonzero(fit), np.flatnonzero(zero)]), kind="stable")
    rows = ZeroWeightRows(X=np.ascontiguousarray(X[zero]), y=y[zero], labels=labels[zero],
                          order=order)
    return np.ascontiguousarray(X[fit]), y[fit], w[fit], labels[fit], rows


def build_design(formula: str, data: pd.DataFrame | Mapping[str, Any], *,
                 weights: str | Any | None = None, subset: str | Any | None = None,
                 na_action: NaAction = "drop", eval_env: Any = None,
                 extra_names: Mapping[str, Any] | None = None,
                 keep_columns: Iterable[str] = (), counts: bool = False) -> Design:
    """Parse ``formula`` against ``data`` and build the model frame.

    Parameters
    ----------
    formula : str
        R-style formula ``"y ~ x1 + C(g) + np.log(x2)"``; ``.`` on the right expands to every
        other column of ``data``.
    data : DataFrame or dict of columns
        Never modified.
    weights : str, array-like or None
        Prior weights: a column name or a vector aligned with ``data``.
    subset : str, boolean array-like or None
        Rows to use: a boolean mask or a :meth:`pandas.DataFrame.eval` expression.
    na_action : {"drop", "raise"}
        Drop rows with missing values (reported on the result) or raise.
    eval_env : patsy.EvalEnvironment, optional
        Where names not in ``data`` are looked up (the caller's scope).
    extra_names : mapping, optional
        Helper functions made available inside formulas (e.g. ``lag``).
    keep_columns : iterable of str
        Further columns a pickle of the design keeps (named by fitting options: cluster,
        time, offset); it keeps the formula's, the weights' and the subset's columns too.
    counts : bool
        Accept a ``cbind(successes, failures)`` response (:mod:`attnreg.formula.counts`;
        a binomial GLM); otherwise such a response raises FormulaError.

    Returns
    -------
    Design
    """
    if na_action not in ("drop", "raise"):
        raise OptionError(f"na_action must be one of 'drop', 'raise', however: {na_action=}")
    if not isinstance(formula, str) or "~" not in formula:
        raise FormulaError(f"formula must be a string of the form 'y ~ x1 + x2', however: {formula=}")
    given = as_frame(data, "data")
    frame = string_labels(given, "data")
    if frame.shape[0] == 0:
        raise DataError("data has no rows")
    env = eval_env if eval_env is not None else patsy.EvalEnvironment.capture(1)
    if extra_names:
        env = env.with_outer_namespace(dict(extra_names))
    w_all = weights_vector(weights, frame)
    formula = expand_dot(formula, frame, exclude=[weights] if isinstance(weights, str) else [])
    desc = parse(formula)
    if not desc.lhs_termlist:
        raise FormulaError(f"the formula {formula!r} has no response left of '~'; a column whose "
                           "name is a number or not a Python name is written Q('name')")
    factors = [f for term in desc.lhs_termlist + desc.rhs_termlist for f in term.factors]
    for factor in factors:
        check_factor_code(factor.code, frame.columns)
    check_names(factors, frame, env, "data")
    codes = [f.code for f in factors]
    if uses_time_operator(codes):  # lag() shifts rows: rows must be periods in time order
        from attnreg.formula.time_index import check_time_index

        check_time_index(frame.index)
    uses: dict[str, bool] = {}
    for code in codes:
        for name, outside in variable_uses(code).items():
            uses[name] = uses.get(name, False) or outside
    keep = subset_mask(frame, subset)
    frame = prepare_frame(frame, uses, "data")
    named = set(uses).union(keep_columns, *(names_of(a) for a in (weights, subset)
                                            if isinstance(a, str)))
    design = _build(formula, desc, frame, w_all, keep, na_action, env, counts)
    return dataclasses.replace(design, numeric_columns=numeric_columns(frame, uses), data=given,
                               kept_columns=kept_names(given, named))


def _build(formula: str, desc: Any, frame: pd.DataFrame, w_all: FloatArray | None,
           keep: BoolArray | None, na_action: NaAction, env: Any,
           allow_counts: bool = False) -> Design:
    try:
        built = _model_arrays(desc, frame, env)
    except patsy.PatsyError as exc:
        raise translate_patsy_error(exc, "data") from None
    design_info = built.x_info
    y_mat, X, labels, rows = built.y, built.X, built.labels, built.rows
    n_excluded = 0
    if keep is not None:  # as R: the formula is evaluated on all rows (lags!), then subset
        n_excluded = int((~keep).sum())
        sel = keep[rows]
        if not sel.all():
            y_mat, X, labels, rows = y_mat[sel], X[sel], labels[sel], rows[sel]
        frame = frame.loc[keep]
    if w_all is not None:  # rows with a missing weight are dropped like R's model.frame
        w_ok = ~np.isnan(w_all[rows])
        if not w_ok.all():
            y_mat, X, labels, rows = y_mat[w_ok], X[w_ok], labels[w_ok], rows[w_ok]
    counts = counts_code(desc, len(built.y_info.column_names), allow_counts)
    if counts is None:
        check_response_columns(built.y_info.column_names, desc, frame)
    dropped = frame.index.difference(labels, sort=False)
    if na_action == "raise" and len(dropped):
        raise DataError(na_message(frame, dropped, desc, w_all))
    check_factor_levels(design_info)
    if X.shape[0] == 0:
        codes = [f.code for t in desc.lhs_termlist + desc.rhs_termlist for f in t.factors]
        why = (f": the formula's lags and differences need more than the {frame.shape[0]} rows "
               "of data" if uses_time_operator(codes) else "")
        raise DataError(f"no rows left after removing missing values ({len(dropped)} rows had "
                        f"NA){why}")
    names = r_column_names(design_info)  # poly(x, 2)1 as R, not patsy's poly(x, 2)[0]
    response = str(built.y_info.column_names[0])
    y = np.ascontiguousarray(y_mat[:, 0])  # y_mat is freshly built: no copy of the data
    check_finite(X, names, labels, "data")
    w, zero, trials = None, None, None
    if w_all is not None:
        w = np.asarray(w_all[rows], dtype=np.float64)
        check_weights(w, labels)
    if counts is not None:  # cbind(successes, failures): R's proportion, weights × trials
        response = counts
        y, w, trials = counts_response(response, y_mat, w, labels)
    check_finite(y[:, None], [response], labels, "data")
    if w is not None:
        if (w == 0).any():
            rows = rows[w != 0]
            trials = None if trials is None else trials[w != 0]
        X, y, w, labels, zero = _split_zero_weights(X, y, w, labels)
    intercept = bool(names) and names[0] == INTERCEPT
    return Design(formula=formula, y=y, X=X, column_names=names,
                  response_name=response, row_labels=labels, weights=w,
                  intercept=intercept, dropped_labels=dropped, n_subset_excluded=n_excluded,
                  design_info=design_info, eval_env=env, zero_weight=zero,
                  data_rows=np.asarray(rows, dtype=np.int64), trials=trials)
