"""Which formula terms a chunked fit can evaluate chunk by chunk: not the stateful ones that
need every row at once (spline bases learn knots from quantiles) or the previous chunk's
rows (lags, differences)."""

from __future__ import annotations

import ast

from attnreg.exceptions import FormulaError

__all__ = ["NOT_CHUNKWISE", "check_chunkwise"]

#: function name -> why a term calling it cannot be evaluated chunk by chunk
NOT_CHUNKWISE = {
    "bs": "a spline basis learns its knots from quantiles of all the data (patsy keeps every "
          "value in memory)",
    "cr": "a spline basis learns its knots from quantiles of all the data",
    "cc": "a spline basis learns its knots from quantiles of all the data",
    "te": "a tensor spline learns its knots from quantiles of all the data",
    "lag": "a lag needs the rows of the previous chunk",
    "lags": "a lag needs the rows of the previous chunk",
    "diff": "a difference needs the rows of the previous chunk",
}


def _called(code: str) -> set[str]:
    try:
        tree = ast.parse(code.strip(), mode="eval")
    except SyntaxError:
        return set()
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            out.add(func.id if isinstance(func, ast.Name)
                    else func.attr if isinstance(func, ast.Attribute) else "")
    return out


def check_chunkwise(codes: list[str]) -> None:
    """FormulaError naming the first term that cannot be evaluated chunk by chunk.

    Examples
    --------
    >>> check_chunkwise(["x", "np.log(x)", "center(x)"])
    >>> check_chunkwise(["bs(x, df=4)"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attnreg.exceptions.FormulaError: the term 'bs(x, df=4)' cannot be evaluated chunk by chunk: ...
    """
    for code in codes:
        bad = sorted(_called(code) & NOT_CHUNKWISE.keys())
        if bad:
            raise FormulaError(
                f"the term {code!r} cannot be evaluated chunk by chunk: {NOT_CHUNKWISE[bad[0]]}. "
                "Compute it as a column of the data first, or fit a sample in memory")
