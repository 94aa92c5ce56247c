"""The model frame: formula + data -> response, design matrix, weights and row labels (patsy)."""

from __future__ import annotations

import ast
import difflib
import keyword
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd
import patsy

from attnreg._typing import FloatArray
from attnreg.exceptions import DataError, FormulaError, OptionError

NaAction = Literal["drop", "raise"]
INTERCEPT = "(Intercept)"

# names every formula can use without importing them (R-like helpers and numpy)
_BUILTIN_NAMES = {"np", "numpy", "C", "I", "Q", "center", "standardize", "scale", "bs", "cr", "cc",
                  "te", "Treatment", "Sum", "Poly", "Diff", "Helmert", "log", "exp", "sqrt", "abs"}


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

    @property
    def n_obs(self) -> int:
        """Number of rows used in the fit."""
        return int(self.X.shape[0])

    @property
    def n_coef(self) -> int:
        """Number of design columns."""
        return int(self.X.shape[1])

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
        frame = _as_frame(newdata, "newdata")
        _check_names(self.design_info.factor_infos.keys(), frame, self.eval_env, "newdata")
        try:  # missing values give missing predictions, as R's predict(na.action = na.pass)
            (mat,) = patsy.build_design_matrices([self.design_info], frame,
                                                 NA_action=patsy.NAAction(NA_types=[]),
                                                 return_type="dataframe")
        except patsy.PatsyError as exc:
            raise _translate_patsy_error(exc, "newdata") from None
        X_new = np.ascontiguousarray(mat.to_numpy(dtype=np.float64))
        _check_finite(np.where(np.isnan(X_new), 0.0, X_new), self.column_names, mat.index,
                      "newdata")
        return X_new, mat.index


def build_design(formula: str, data: pd.DataFrame | Mapping[str, Any], *,
                 weights: str | Any | None = None, subset: str | Any | None = None,
                 na_action: NaAction = "drop", eval_env: Any = None,
                 extra_names: Mapping[str, Any] | None = None) -> Design:
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

    Returns
    -------
    Design
    """
    if na_action not in ("drop", "raise"):
        raise OptionError(f"na_action must be one of 'drop', 'raise', however: {na_action=}")
    if not isinstance(formula, str) or "~" not in formula:
        raise FormulaError(f"formula must be a string of the form 'y ~ x1 + x2', however: {formula=}")
    frame = _as_frame(data, "data")
    if frame.shape[0] == 0:
        raise DataError("data has no rows")
    env = eval_env if eval_env is not None else patsy.EvalEnvironment.capture(1)
    if extra_names:
        env = env.with_outer_namespace(dict(extra_names))
    w_all = _weights_vector(weights, frame)
    formula = expand_dot(formula, frame, exclude=[weights] if isinstance(weights, str) else [])
    desc = _parse(formula)
    factors = [f for term in desc.lhs_termlist + desc.rhs_termlist for f in term.factors]
    _check_names(factors, frame, env, "data")
    frame, w_all, n_excluded = _apply_subset(frame, w_all, subset)
    return _build(formula, desc, frame, w_all, n_excluded, na_action, env)


def _build(formula: str, desc: Any, frame: pd.DataFrame, w_all: FloatArray | None,
           n_excluded: int, na_action: NaAction, env: Any) -> Design:
    try:
        y_df, X_df = patsy.dmatrices(desc, frame, eval_env=env, NA_action="drop",
                                     return_type="dataframe")
    except patsy.PatsyError as exc:
        raise _translate_patsy_error(exc, "data") from None
    design_info = X_df.design_info
    if w_all is not None:  # rows with a missing weight are dropped like R's model.frame
        keep = X_df.index
        w_series = pd.Series(w_all, index=frame.index)
        w_ok = w_series.loc[keep].notna().to_numpy()
        y_df, X_df = y_df.loc[w_ok], X_df.loc[w_ok]
    _check_response(y_df, desc, frame)
    dropped = frame.index.difference(X_df.index, sort=False)
    if na_action == "raise" and len(dropped):
        raise DataError(_na_message(frame, dropped, desc))
    if X_df.shape[0] == 0:
        raise DataError(f"no rows left after removing missing values ({len(dropped)} rows had NA)")
    names = [INTERCEPT if c == "Intercept" else str(c) for c in X_df.columns]
    X = np.ascontiguousarray(X_df.to_numpy(dtype=np.float64))
    y = y_df.iloc[:, 0].to_numpy(dtype=np.float64).copy()
    labels = X_df.index
    _check_finite(X, names, labels, "data")
    _check_finite(y[:, None], [str(y_df.columns[0])], labels, "data")
    w = None
    if w_all is not None:
        w = pd.Series(w_all, index=frame.index).loc[labels].to_numpy(dtype=np.float64)
        _check_weights(w, labels)
    intercept = bool(names) and names[0] == INTERCEPT
    return Design(formula=formula, y=y, X=X, column_names=names,
                  response_name=str(y_df.columns[0]), row_labels=labels, weights=w,
                  intercept=intercept, dropped_labels=dropped, n_subset_excluded=n_excluded,
                  design_info=design_info, eval_env=env)


def _as_frame(data: Any, what: str) -> pd.DataFrame:
    if isinstance(data, pd.DataFrame):
        return data
    if isinstance(data, Mapping):
        try:
            return pd.DataFrame(dict(data))
        except ValueError as exc:
            raise DataError(f"{what} could not be made into a DataFrame: {exc}") from None
    raise DataError(f"{what} must be a pandas DataFrame or a dict of columns, "
                    f"however: type({what}) is {type(data).__name__}")


def _quote(name: str) -> str:
    if name.isidentifier() and not keyword.iskeyword(name):
        return name
    return "Q(" + repr(name) + ")"


_DOT = re.compile(r"(?<![\w.)\]\"'])\.(?![\w(\"'])")


def expand_dot(formula: str, frame: pd.DataFrame, exclude: list[Any] | tuple[()] = ()) -> str:
    """Expand R's ``.`` on the right-hand side to every column not otherwise used.

    Examples
    --------
    >>> import pandas as pd
    >>> expand_dot("y ~ .", pd.DataFrame({"y": [1.0], "a": [2.0], "b c": [3.0]}))
    "y ~ (a + Q('b c'))"
    """
    lhs, rhs = formula.split("~", 1)
    if not _DOT.search(rhs):
        return formula
    lhs_names = _names_in(lhs)
    skip = set(lhs_names) | {e for e in exclude if isinstance(e, str)}
    skip |= {c for c in frame.columns if lhs.strip() == str(c)}
    cols = [_quote(str(c)) for c in frame.columns if str(c) not in skip]
    if not cols:
        raise FormulaError(f"'.' in {formula!r} expands to no columns: data has only the response")
    return lhs + "~" + _DOT.sub("(" + " + ".join(cols) + ")", rhs)


def _names_in(code: str) -> list[str]:
    """Free variable names in a Python expression (Q("name") counts as a name)."""
    try:
        tree = ast.parse(code.strip(), mode="eval")
    except SyntaxError:
        return []
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            out.append(node.id)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Q"
              and node.args and isinstance(node.args[0], ast.Constant)):
            out.append(str(node.args[0].value))
    return out


def _parse(formula: str) -> Any:
    try:
        return patsy.ModelDesc.from_formula(formula)
    except patsy.PatsyError as exc:
        raise FormulaError(f"could not parse formula {formula!r}:\n{exc}") from None


def _check_names(factors: Any, frame: pd.DataFrame, env: Any, what: str) -> None:
    """Every variable a factor uses must be a column of the data or a name in scope."""
    columns = [str(c) for c in frame.columns]
    known = set(columns)
    for factor in factors:
        code = factor.code if hasattr(factor, "code") else str(factor)
        for name in _names_in(code):
            if name in known or name in _BUILTIN_NAMES or _in_env(env, name):
                continue
            close = difflib.get_close_matches(name, columns, n=3, cutoff=0.6)
            hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
            raise FormulaError(f"{what} has no column {name!r} (used in term {code!r}){hint}")


def _in_env(env: Any, name: str) -> bool:
    try:
        env.namespace[name]
    except KeyError:
        return False
    return True


def _apply_subset(frame: pd.DataFrame, w: FloatArray | None,
                  subset: Any) -> tuple[pd.DataFrame, FloatArray | None, int]:
    if subset is None:
        return frame, w, 0
    if isinstance(subset, str):
        try:
            mask = np.asarray(frame.eval(subset), dtype=bool)
        except Exception as exc:
            raise OptionError(f"subset expression {subset!r} could not be evaluated: {exc}") from None
    else:
        mask = np.asarray(subset)
        if mask.dtype != bool:
            raise OptionError(f"subset must be a boolean mask or an expression string, "
                              f"however its dtype is {mask.dtype}")
    if mask.shape != (frame.shape[0],):
        raise OptionError(f"subset must have one entry per row of data ({frame.shape[0]}), "
                          f"however it has shape {mask.shape}")
    if not mask.any():
        raise DataError("subset selects no rows")
    return frame.loc[mask], (None if w is None else w[mask]), int((~mask).sum())


def _weights_vector(weights: Any, frame: pd.DataFrame) -> FloatArray | None:
    if weights is None:
        return None
    if isinstance(weights, str):
        if weights not in frame.columns:
            close = difflib.get_close_matches(weights, [str(c) for c in frame.columns], n=3)
            hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
            raise FormulaError(f"data has no weights column {weights!r}{hint}")
        values = frame[weights]
    else:
        values = weights
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise DataError("weights must be numeric") from None
    if arr.shape != (frame.shape[0],):
        raise DataError(f"weights must have one entry per row of data ({frame.shape[0]}), "
                        f"however they have shape {arr.shape}")
    return arr


def _check_weights(w: FloatArray, labels: pd.Index) -> None:
    bad = ~np.isfinite(w) | (w <= 0)
    if bad.any():
        i = int(np.argmax(bad))
        raise DataError(f"weights must be finite and positive; row {labels[i]!r} has weight {float(w[i])!r}"
                        " (use subset= to exclude rows)")


def _check_response(y_df: pd.DataFrame, desc: Any, frame: pd.DataFrame) -> None:
    if y_df.shape[1] == 1:
        return
    name = desc.lhs_termlist[0].factors[0].code if desc.lhs_termlist else "?"
    dtype = frame[name].dtype if name in frame.columns else "non-numeric"
    raise DataError(f"the response {name!r} must be numeric, however it is {dtype} "
                    f"(patsy made {y_df.shape[1]} indicator columns from it)")


def _check_finite(X: FloatArray, names: list[str], labels: pd.Index, what: str) -> None:
    bad = ~np.isfinite(X)
    if bad.any():
        row, col = np.argwhere(bad)[0]
        raise DataError(f"{what} column {names[col]!r} has a non-finite value ({X[row, col]}) "
                        f"at row {labels[row]!r}")


def _na_message(frame: pd.DataFrame, dropped: pd.Index, desc: Any) -> str:
    used = {n for t in desc.lhs_termlist + desc.rhs_termlist for f in t.factors
            for n in _names_in(f.code) if n in frame.columns}
    first = dropped[0]
    row = frame.loc[first]
    cols = [c for c in frame.columns if c in used and bool(pd.isna(row[c]))]
    where = f"column {cols[0]!r}" if cols else "a term (e.g. a lag) that evaluated to NaN"
    return (f"na_action='raise': {len(dropped)} rows have missing values; the first is row "
            f"{first!r} in {where}")


_LEVEL = re.compile(r"observation with value (.+?) does not match any of the expected levels "
                    r"\(expected: (.*)\)")


def _translate_patsy_error(exc: patsy.PatsyError, what: str) -> Exception:
    msg = str(exc.message) if hasattr(exc, "message") else str(exc)
    origin = getattr(exc, "origin", None)
    term = origin.relevant_code() if origin is not None else "?"
    match = _LEVEL.search(msg)
    if match:
        return DataError(f"{what}: factor {term!r} has level {match.group(1)} not seen when "
                         f"fitting (levels: {match.group(2)})")
    if "NameError" in msg:
        return FormulaError(f"{what}: {msg.splitlines()[0]} (in term {term!r})")
    return FormulaError(f"{what}: {exc}")
