"""The spectral methods, declared once: what distinguishes OLS, ridge and PCR.

All three are one decomposition with different filters of the singular values. A
:class:`SpectralRule` says which filter, which option tunes it and how a criterion chooses
it; :data:`RULES` is the table :mod:`attnreg.methods` registers the spectral family from.
Adding a spectral method is one entry here.

Examples
--------
>>> list(RULES), RULES["ridge"].tuning, RULES["pcr"].counts
(['ols', 'ridge', 'pcr'], 'lam', True)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from attnreg._typing import FloatArray
from attnreg.linear.selection import Selection, select_k, select_lambda
from attnreg.linear.spectral import Spectrum
from attnreg.linear.filters import ols_filter, pcr_filter, ridge_filter

__all__ = ["RULES", "SpectralRule", "least_squares_rule"]


def _all_ones(s: FloatArray, value: float | None) -> FloatArray:
    return ols_filter(s)


def _shrink(s: FloatArray, value: float | None) -> FloatArray:
    return ridge_filter(s, float(value))  # type: ignore[arg-type]


def _truncate(s: FloatArray, value: float | None) -> FloatArray:
    return pcr_filter(s, int(value))  # type: ignore[arg-type]


@dataclass(frozen=True)
class SpectralRule:
    """One spectral method.

    Attributes
    ----------
    name : str
        The ``method=`` string.
    label : str
        The method's name in prose ("OLS", "ridge", "PCR").
    title : str
        One line for help texts.
    filter : callable
        ``filter(s, value) -> f``, the filter factors of the singular values ``s`` given the
        tuning value (None for OLS).
    tuning : str or None
        The option that sets the tuning value (``"lam"``, ``"k"``); None: nothing to tune.
    parameter : str
        What the summary calls the tuning value (``"lambda"``, ``"k"``).
    select : callable or None
        ``select(spectrum, criterion) -> Selection``: the tuning value by GCV or LOO.
    counts : bool
        The tuning value counts components: an integer from 1 to the rank.
    refine : bool
        Extended-precision iterative refinement of the coefficients (OLS).
    updating : bool
        The forecasting and rolling engines' rank-one updating path applies.
    """

    name: str
    label: str
    title: str
    filter: Callable[[FloatArray, float | None], FloatArray]
    tuning: str | None = None
    parameter: str = ""
    select: Callable[[Spectrum, str], Selection] | None = None
    counts: bool = False
    refine: bool = False
    updating: bool = False

    @property
    def penalized(self) -> bool:
        """A tuned filter: predictors standardised by default, effective degrees of freedom,
        and designs with no more rows than coefficients allowed (the thin SVD of the data)."""
        return self.tuning is not None

    @property
    def least_squares(self) -> bool:
        """Unpenalised least squares: the hat matrix is the projection onto the design's
        columns, so its hat values are exact leverages and the leave-one-out closed forms,
        sequential sums of squares (anova), residuals orthogonal to X (Durbin-Watson p-value,
        Breusch-Godfrey, RESET), the restricted fit and the refit on resampled rows (pairs
        bootstrap) hold."""
        return self.tuning is None

    def fixed(self, value: float) -> Selection:
        """The selection record of a tuning value given by the caller."""
        return Selection("fixed", float(value), np.zeros(0), np.zeros(0))


RULES: dict[str, SpectralRule] = {rule.name: rule for rule in (
    SpectralRule("ols", "OLS", "ordinary (or weighted) least squares", _all_ones, refine=True,
                 updating=True),
    SpectralRule("ridge", "ridge", "ridge regression, lambda by GCV or leave-one-out", _shrink,
                 tuning="lam", parameter="lambda", select=select_lambda, updating=True),
    SpectralRule("pcr", "PCR", "principal-component regression, k by GCV or LOO", _truncate,
                 tuning="k", parameter="k", select=select_k, counts=True),
)}


def least_squares_rule(name: str, label: str | None = None, title: str = "") -> SpectralRule:
    """The declaration of an unpenalised least-squares method (the all-ones filter).

    What an estimator registered from outside the package hands over with its coefficients
    (:func:`attnreg.linear.handover.least_squares_results`): with it, every operation of a
    linear fit applies (exact hat values, the leave-one-out closed forms, anova, the pairs
    bootstrap, Gaussian predictive intervals). Given to the estimator as well
    (``Estimator(rule=...)``), it lets the chunked and dask fits apply the rule themselves,
    with the same extended-precision refinement as OLS.

    Parameters
    ----------
    name : str
        The ``method=`` string.
    label : str, optional
        The method's name in prose (default: ``name``).
    title : str, optional
        One line for help texts.

    Examples
    --------
    >>> rule = least_squares_rule("lstsq")
    >>> rule.label, rule.least_squares, rule.penalized
    ('lstsq', True, False)
    """
    return SpectralRule(name, label or name, title or f"{name}: unpenalised least squares",
                        _all_ones, refine=True)
