"""A scikit-learn estimator around :func:`attnreg.attnreg`: ``AttnRegressor``.

Drop attnreg's methods into pipelines, grid searches and cross-validation::

    from sklearn.model_selection import cross_val_score
    from attnreg.sklearn import AttnRegressor

    cross_val_score(AttnRegressor(method="ridge"), X, y, cv=5)

The estimator fits ``attnreg("y ~ x0 + x1 + ...", data, method=...)`` on the columns of ``X``
and keeps the full result (``summary()``, ``attention()``, ...) as ``result_``. Predictions
use a plain array predictor (coefficients for OLS, ridge and PCR; the fitted heads or network
otherwise), so they need no formula machinery and survive pickling. This module imports
scikit-learn; ``import attnreg`` does not import it (``attnreg.AttnRegressor`` loads it on
first use).
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

try:  # scikit-learn >= 1.6
    from sklearn.utils.validation import validate_data as _validate_data
except ImportError:  # pragma: no cover - older scikit-learn
    def _validate_data(estimator: Any, X: Any, y: Any = "no_validation", **kw: Any) -> Any:
        return estimator._validate_data(X, y, **kw)

from attnreg.exceptions import OptionError

__all__ = ["AttnRegressor"]



class AttnRegressor(RegressorMixin, BaseEstimator):
    """scikit-learn regressor for every method of :func:`attnreg.attnreg`.

    Parameters
    ----------
    method : {"ols", "ridge", "pcr", "softmax", "block", "ftt"}, default "ols"
        As in :func:`attnreg.attnreg`.
    lam : float or {"gcv", "loo"}, optional
        Ridge penalty (standardised scale), chosen by GCV when None. For ``"softmax"`` the
        attention penalty (see :func:`attnreg.attnreg`).
    k : int or {"gcv", "loo"}, optional
        PCR components, chosen by GCV when None.
    standardize : bool, optional
        Scale predictors before ridge/PCR (default True for them).
    fit_intercept : bool, default True
        Include an intercept (OLS, ridge, PCR); the networks and softmax always have biases.
    random_state : int, optional
        Seed of the softmax and network fits (None: 0, so fits are reproducible).
    options : dict, optional
        Further method options passed to :func:`attnreg.attnreg` (``heads``, ``max_epochs``,
        ``variant``, ``device``, ...).

    Attributes
    ----------
    result_ : LinearResults, SoftmaxResults or NetworkResults
        The attnreg fit on the training data, with ``summary()`` and the attention view; the
        predictors are named ``x0``, ``x1``, ... (or by ``feature_names_in_`` in the
        summary's call). Kept when the estimator is pickled.
    coef_ : ndarray of shape (n_features,)
        Slopes on the original scale (OLS, ridge, PCR); aliased ones are 0 in predictions.
    intercept_ : float
        Intercept (0.0 when ``fit_intercept=False``).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when ``X`` was a DataFrame with string column names.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.model_selection import cross_val_score
    >>> from attnreg.sklearn import AttnRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(100, 3))
    >>> y = 1.0 + X @ np.array([2.0, -1.0, 0.0]) + 0.1 * rng.normal(size=100)
    >>> model = AttnRegressor(method="ridge").fit(X, y)
    >>> model.coef_.round(1)
    array([ 2., -1., -0.])
    >>> bool(model.score(X, y) > 0.99)
    True
    >>> cross_val_score(AttnRegressor(), X, y, cv=3).round(2)
    array([1., 1., 1.])
    >>> w = model.attention(X[:1])                       # the dual view of a prediction
    >>> w.weights.shape
    (1, 100)
    >>> bool(abs(w.weights.to_numpy() @ y - model.predict(X[:1])).max() < 1e-8)
    True
    >>> print(model.summary())                          # doctest: +ELLIPSIS
    Call:
    attnreg(formula = y ~ x0 + x1 + x2, data = data, method = 'ridge')
    ...
    """

    def __init__(self, method: str = "ols", *, lam: float | str | None = None,
                 k: int | str | None = None, standardize: bool | None = None,
                 fit_intercept: bool = True, random_state: int | None = None,
                 options: dict[str, Any] | None = None) -> None:
        self.method = method
        self.lam = lam
        self.k = k
        self.standardize = standardize
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.options = options

    # -- scikit-learn plumbing ------------------------------------------------------------
    def __sklearn_tags__(self) -> Any:  # scikit-learn >= 1.6
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        tags.input_tags.allow_nan = False
        return tags

    def _more_tags(self) -> dict[str, Any]:  # scikit-learn < 1.6
        return {"allow_nan": False, "multioutput": False}

    # -- fit / predict --------------------------------------------------------------------
    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> AttnRegressor:
        """Fit ``attnreg`` on the columns of ``X``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Numeric predictors.
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional
            Prior weights (weighted least squares; OLS, ridge and PCR only). A zero weight
            drops the row, as in R's ``lm()``.

        Returns
        -------
        self
        """
        from attnreg.api import attnreg
        from attnreg.methods import get_method

        estimator = get_method(self.method)
        method, spectral = estimator.name, estimator.capabilities.linear
        X, y = _validate_data(self, X, y, y_numeric=True, ensure_min_samples=2, dtype=np.float64)
        options = dict(self.options or {})
        kwargs: dict[str, Any] = {}
        if spectral:
            if options:
                raise OptionError(f"options do not apply to method {method!r}: "
                                  f"{', '.join(sorted(options))}")
            kwargs = {"lam": self.lam, "k": self.k, "standardize": self.standardize}
        else:  # the method's own options check refuses what does not apply to it
            given = {"lam": self.lam, "k": self.k, "standardize": self.standardize}
            kwargs = {name: value for name, value in given.items() if value is not None}
            if self.random_state is not None and not isinstance(self.random_state, numbers.Integral):
                raise OptionError("random_state must be an int or None, however: "
                                  f"random_state={self.random_state!r}")
            if estimator.capabilities.torch:  # the stochastic fits: their seed
                options.setdefault("seed", 0 if self.random_state is None else int(self.random_state))
        if sample_weight is not None:
            sample_weight = np.asarray(sample_weight, dtype=np.float64).reshape(-1)
            if sample_weight.shape != (X.shape[0],):
                raise ValueError(f"sample_weight must have shape ({X.shape[0]},), "
                                 f"however: {sample_weight.shape}")
            if not np.all(np.isfinite(sample_weight)) or np.any(sample_weight < 0):
                raise ValueError("sample_weight must be finite and non-negative")
            if not np.any(sample_weight > 0):
                raise ValueError("sample_weight: all weights are zero; nothing to fit")
            if not estimator.capabilities.weights:
                raise OptionError(f"sample_weight is not supported by method {method!r}")
            keep = sample_weight > 0  # a zero weight removes the row, as in R's lm()
            if not keep.all():
                X, y, sample_weight = X[keep], y[keep], sample_weight[keep]
            kwargs["weights"] = sample_weight
        names = [f"x{j}" for j in range(X.shape[1])]
        data = pd.DataFrame(X, columns=names)
        data["y"] = y
        rhs = " + ".join(names) + ("" if self.fit_intercept else " - 1")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", pd.errors.PerformanceWarning)
            result = attnreg(f"y ~ {rhs}", data=data, method=method, na_action="raise",
                             **kwargs, **options)
        self.result_ = result
        if spectral:
            coef = result.coef.to_numpy(dtype=np.float64)
            self.intercept_ = float(np.nan_to_num(coef[0])) if self.fit_intercept else 0.0
            self.coef_ = coef[1:] if self.fit_intercept else coef
            self._predictor = None
        else:  # the registry's prediction from design rows (the intercept column included)
            self._predictor = estimator.name
        return self

    def predict(self, X: Any) -> np.ndarray:
        """Predictions for the rows of ``X``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        check_is_fitted(self, "result_")
        X = _validate_data(self, X, reset=False, dtype=np.float64)
        if self._predictor is None:
            return X @ np.nan_to_num(self.coef_) + self.intercept_
        from attnreg.methods import get_method

        rows = np.column_stack([np.ones(X.shape[0]), X]) if self.fit_intercept else X
        return get_method(self._predictor).predict_design(self.result_, rows)

    # -- the attnreg views ----------------------------------------------------------------
    def _result(self) -> Any:
        check_is_fitted(self, "result_")
        return self.result_

    def summary(self) -> Any:
        """The R-style summary of the fit (predictors named ``x0``, ``x1``, ...).

        Returns
        -------
        Summary
            ``print()`` it; see :func:`attnreg.attnreg`.
        """
        return self._result().summary()

    def attention(self, X: Any = None) -> Any:
        """Each prediction for the rows of ``X`` as weights over the training rows.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_queries, n_features), optional
            Query rows (default: the training rows).

        Returns
        -------
        AttentionWeights
            ``weights @ y_train`` reproduces ``predict(X)`` (OLS, ridge, PCR; softmax:
            convex weights over the values, see :func:`attnreg.attnreg`).
        """
        result = self._result()
        if X is None:
            return result.attention()
        X = _validate_data(self, X, reset=False, dtype=np.float64)
        return result.attention(pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])]))
