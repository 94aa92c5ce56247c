"""``poly(x, degree)`` in formulas: R's orthogonal polynomials, stateful, and raw powers.

``poly(x, d)`` is R's ``stats::poly``: the columns of the QR decomposition of the centred
Vandermonde matrix ``[1, x - mean, ..., (x - mean)^d]``, scaled to unit length, without the
constant. The fit remembers R's ``coefs`` (the recurrence's ``alpha`` and the squared norms
``norm2``), and new rows are built from them by the three-term recurrence, exactly as R's
``predict(poly_obj, newdata)`` (which ``lm``'s ``makepredictcall`` arranges): a prediction
uses the training polynomials, not polynomials of the new rows. ``poly(x, d, raw=True)``
is the plain powers ``x, x^2, ..., x^d``, which learn nothing. Chunk by chunk (chunked
and dask fits) the coefficients come from centred power sums merged across chunks
(:mod:`attnreg.formula.poly_moments`), equal to the in-memory QR's to 1e-10 relative.

Missing values are left out of the coefficients (R refuses them) and give missing rows, as
the other stateful transforms (:mod:`attnreg.formula.transforms`) do. Like them, ``poly``
learns from every row of the data given (before ``subset`` and before rows with a missing
response are dropped, as R's ``model.frame`` evaluates it), so ``forecast()`` refuses the
orthogonal form: it would carry the whole sample's polynomials into every window.

The design columns are named as R prints them, ``poly(x, 2)1``, ``poly(x, 2)2``
(:func:`r_column_names`; patsy's own names would be ``poly(x, 2)[0]``).

Examples
--------
>>> import numpy as np, pandas as pd
>>> import attnreg as ar
>>> df = pd.DataFrame({"x": np.arange(8.0)})
>>> df["y"] = 1.0 + df.x - 0.5 * df.x**2
>>> fit = ar.attnreg("y ~ poly(x, 2)", df)
>>> fit.names
['(Intercept)', 'poly(x, 2)1', 'poly(x, 2)2']
>>> [round(float(v), 6) for v in fit.predict(pd.DataFrame({"x": [10.0]}))]
[-39.0]
>>> from attnreg.formula.poly import poly
>>> [round(float(v), 6) for v in poly(np.array([1.0, 2.0, 3.0]), 1)[:, 0]]
[-0.707107, 0.0, 0.707107]
"""

from __future__ import annotations

import ast
from typing import Any

import numpy as np
import pandas as pd
import patsy

from attnreg.exceptions import DataError, OptionError
from attnreg.formula.indicators import indicator_column_names
from attnreg.formula.poly_moments import PowerSums

__all__ = ["poly", "r_column_names"]

#: a centred power column whose part not explained by the lower powers is below this
#: fraction of its length makes the basis rank-deficient (R's qr() tolerance, 1e-7)
_RANK_TOL = 1e-7


def _check_degree(degree: Any, raw: Any) -> int:
    if isinstance(degree, bool) or not isinstance(degree, (int, np.integer)) or degree < 1:
        raise OptionError(f"poly(): degree must be a positive integer, however: {degree=}")
    if not isinstance(raw, (bool, np.bool_)):
        raise OptionError(f"poly(): raw must be True or False, however: {raw=}")
    return int(degree)


def _as_vector(x: Any) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise OptionError(f"poly() takes one variable (a column), however it got an array of "
                          f"shape {arr.shape}; write poly(x1, d) + poly(x2, d)")
    return arr


def _mean(x: np.ndarray) -> float:
    """The mean with one refinement step, as R's ``mean()``."""
    m = float(x.mean())
    return m + float((x - m).mean())


def orthogonal_coefs(x: np.ndarray, degree: int) -> tuple[np.ndarray, np.ndarray]:
    """R's ``attr(poly(x, degree), "coefs")``: ``alpha`` (degree,) and ``norm2`` (degree + 2,).

    Householder QR of the centred Vandermonde matrix V = [1, xc, ..., xc^d] (xc = x - mean):
    with Z = Q diag(R), norm2_j = ||Z_j||² = R_jj² and alpha_j = Σ xc Z_j² / norm2_j + mean.
    ``norm2`` starts with R's leading 1.

    Parameters
    ----------
    x : ndarray, shape (n_obs,)
        Observed values (no NaN).
    degree : int
    """
    n_unique = np.unique(x).size
    if degree >= n_unique:
        raise DataError(f"poly(): degree ({degree}) must be less than the number of distinct "
                        f"values of the variable ({n_unique}); lower the degree")
    xbar = _mean(x)
    xc = x - xbar
    V = xc[:, None] ** np.arange(degree + 1)  # (n_obs, degree + 1)
    Q, R = np.linalg.qr(V)
    diag = np.abs(np.diag(R))
    lengths = np.sqrt(np.einsum("ij,ij->j", V, V))
    if (diag < _RANK_TOL * lengths).any():
        raise DataError(f"poly(): the values do not support a polynomial of degree {degree} "
                        "(the powers are collinear to working precision); lower the degree")
    norm2 = diag**2
    # Σ xc Z_j² / norm2_j with Z_j = Q_j R_jj is Σ xc Q_j²
    alpha = np.einsum("i,ij->j", xc, Q[:, :degree] ** 2) + xbar
    return alpha, np.concatenate([[1.0], norm2])


def orthogonal_values(x: np.ndarray, alpha: np.ndarray, norm2: np.ndarray) -> np.ndarray:
    """R's ``predict.poly``: the polynomials at ``x`` by the three-term recurrence.

    Parameters
    ----------
    x : ndarray, shape (n,)
    alpha : ndarray, shape (degree,)
    norm2 : ndarray, shape (degree + 2,)

    Returns
    -------
    ndarray, shape (n, degree)
    """
    degree = alpha.size
    Z = np.empty((x.size, degree + 1))
    Z[:, 0] = 1.0
    Z[:, 1] = x - alpha[0]
    for i in range(1, degree):  # over the degree, not the rows
        Z[:, i + 1] = (x - alpha[i]) * Z[:, i] - (norm2[i + 1] / norm2[i]) * Z[:, i - 1]
    Z /= np.sqrt(norm2[1:])
    return Z[:, 1:]


class _Poly:
    """poly(x, degree=1, raw=False): R's ``stats::poly`` as a patsy stateful transform."""

    def __init__(self) -> None:
        self._pieces: list[np.ndarray] = []  # the values, while only one chunk was seen
        self._sums: PowerSums | None = None  # what more chunks merge into
        self.degree: int | None = None
        self.raw = False
        self.alpha: np.ndarray | None = None
        self.norm2: np.ndarray | None = None

    def memorize_chunk(self, x: Any, degree: Any = 1, raw: Any = False) -> None:
        self.degree = _check_degree(degree, raw)
        self.raw = bool(raw)
        if not self.raw:
            arr = _as_vector(x)
            arr = arr[np.isfinite(arr)]
            if self._sums is None and not self._pieces:  # one chunk (in memory): its QR
                self._pieces.append(arr)
                return
            if self._sums is None:  # chunk by chunk: centred power sums, not the values
                self._sums = PowerSums(self.degree)
                self._sums.add(self._pieces.pop())
            self._sums.add(arr)

    def memorize_finish(self) -> None:
        if not self.raw:
            assert self.degree is not None
            if self._sums is not None:
                self.alpha, self.norm2 = self._sums.coefs()
            else:
                values = self._pieces[0] if self._pieces else np.zeros(0)
                self.alpha, self.norm2 = orthogonal_coefs(values, self.degree)
        self._pieces, self._sums = [], None  # the statistics are kept, not the data

    def transform(self, x: Any, degree: Any = 1, raw: Any = False) -> Any:
        if _check_degree(degree, raw) != self.degree or bool(raw) != self.raw:
            raise OptionError("poly(): degree and raw must be those the transform was fitted "
                              f"with ({self.degree}, {self.raw})")
        arr = _as_vector(x)
        if self.raw:
            out = arr[:, None] ** np.arange(1, self.degree + 1)
        else:
            assert self.alpha is not None and self.norm2 is not None
            with np.errstate(invalid="ignore", over="ignore"):
                out = orthogonal_values(arr, self.alpha, self.norm2)
        if isinstance(x, pd.Series):
            return pd.DataFrame(out, index=x.index, columns=range(1, self.degree + 1))
        return out


poly = patsy.stateful_transform(_Poly)
poly.__doc__ = """poly(x, degree=1, raw=False): R's ``stats::poly`` (orthogonal polynomials).

``degree`` columns: the orthogonal polynomials of the training values (their coefficients
remembered for new rows, as R's ``predict``), or with ``raw=True`` the powers x ... x^degree.
"""


def _poly_codes(info: Any) -> list[tuple[str, int]]:
    """(code, columns) of the multi-column ``poly(...)`` factors of a patsy design info."""
    out = []
    for factor_info in info.factor_infos.values():
        code = factor_info.factor.code
        if factor_info.type != "numerical" or factor_info.num_columns < 2:
            continue
        try:
            node = ast.parse(code, mode="eval").body
        except SyntaxError:  # pragma: no cover - patsy parsed it
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "poly":
            out.append((code, int(factor_info.num_columns)))
    return out


def r_column_names(info: Any) -> list[str]:
    """The design's column names, ``poly(...)`` columns named as R (``poly(x, 2)1``).

    patsy names the columns of a multi-column factor ``code[0]``, ``code[1]``; R pastes the
    matrix's column names ``1``, ``2`` to the code. The intercept is ``(Intercept)``.

    Parameters
    ----------
    info : patsy.DesignInfo

    Returns
    -------
    list of str, one per design column
    """
    names = ["(Intercept)" if c == "Intercept" else str(c) for c in info.column_names]
    for code, n_cols in _poly_codes(info):
        for j in range(n_cols):
            old, new = f"{code}[{j}]", f"{code}{j + 1}"
            names = [name.replace(old, new) for name in names]
    return indicator_column_names(info, names)
