"""Hypothesis tests on the coefficients of a linear fit under the covariance in use.

:class:`Hypotheses` is a mixin of :class:`~attnreg.linear.results.LinearResults`:
``wald_test`` (a joint F or χ² test of linear restrictions R b = r, as
``car::linearHypothesis``), ``t_test`` (each restriction alone, with its confidence
interval) and ``anova`` (the tables of :mod:`attnreg.inference.anova`).

Restrictions are text (:func:`parse_restrictions`: ``"x1 = x2, x3 = 0"``), a matrix R with
a right-hand side r, or the coefficients of formula terms (``term="C(g)"``). Every test uses
the covariance in use (:attr:`vcov_spec`: classical, HC0–HC3, HAC, and what
:meth:`with_vcov` adds) and :attr:`df_inference` as the denominator degrees of freedom of F
and t; under ``with_vcov(..., df=np.inf)`` they are z and χ² tests (``lmtest::coeftest(df =
Inf)``), and ``wald_test`` defaults to ``test="Chisq"``. The covariance is taken in its
exactly rescaled form diag(2^E) V_z diag(2^E) and each restriction row is rescaled by a
power of two, so the statistics are right at any scale of the data; the quadratic form is a
Cholesky solve, never an inverse.

Ridge and PCR: the tests are of the filtered coefficients, conditional on the chosen λ or
k, with the covariance of that linear smoother and the effective residual degrees of freedom
n − tr(H) (as the summary's overall F). Under PCR only the directions the kept components
span can be tested: a restriction set outside them is an error.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import scipy.linalg as sla
from scipy import stats

from attnreg._typing import FloatArray
from attnreg._warn import warn_user
from attnreg.exceptions import InferenceWarning, OptionError
from attnreg.inference.contract import LinearFitContract
from attnreg.inference.hypothesis_results import TTest, WaldTest, df_text
from attnreg.inference.restriction_matrix import matrix_restrictions, term_restrictions
from attnreg.inference.restrictions import format_restriction, parse_restrictions
from attnreg.inference.tstats import f_sf, is_z

__all__ = ["WALD_TESTS", "Hypotheses"]

#: the ``test`` choices of :meth:`Hypotheses.wald_test`
WALD_TESTS = ("F", "Chisq")
#: restrictions whose scaled rows have a singular value below this (relative) are dependent
_DEPENDENT_TOL = 1e-9
#: the correlation matrix of R b with an eigenvalue below this is singular
_SINGULAR_TOL = 1e-12


@dataclass(frozen=True)
class _Combination:
    """R b − r and its covariance, rescaled: Rb − r = 2^F u, Cov = diag(2^F) S diag(2^F)."""

    u: FloatArray
    S: FloatArray
    F: Any

    @property
    def estimate(self) -> FloatArray:
        return np.asarray(np.ldexp(self.u, self.F))

    @property
    def std_err(self) -> FloatArray:
        with np.errstate(invalid="ignore"):
            return np.asarray(np.ldexp(np.sqrt(np.diag(self.S)), self.F))


class Hypotheses(LinearFitContract):
    """Wald and t tests of linear restrictions, and anova (a mixin of ``LinearResults``)."""

    @property
    def _term_info(self) -> Any:
        """The formula's patsy ``DesignInfo`` (its terms and their columns)."""
        return self.design.design_info

    # ------------------------------------------------------------ restrictions
    def _restrictions(self, hypothesis: Any, rhs: Any,
                      term: str | Sequence[str] | None) -> tuple[FloatArray, FloatArray]:
        """(R, r) from text, a matrix or formula terms; validated against the fit."""
        names = self.names
        if term is not None:
            if hypothesis is not None or rhs is not None:
                raise OptionError("give either a hypothesis (with rhs) or term=, not both")
            return self._term_restrictions(term)
        if hypothesis is None:
            raise OptionError("a hypothesis is needed: text such as 'x1 = x2, x3 = 0', a "
                              "matrix R (with rhs=r), or term='name of a formula term'")
        if isinstance(hypothesis, str) or (isinstance(hypothesis, (list, tuple)) and hypothesis
                                           and all(isinstance(h, str) for h in hypothesis)):
            if rhs is not None:
                raise OptionError("rhs= applies to a matrix hypothesis; in text write the "
                                  "right-hand side after '=' (e.g. 'x1 + x2 = 1')")
            return parse_restrictions(names, hypothesis)
        return matrix_restrictions(names, hypothesis, rhs)

    def _term_restrictions(self, term: str | Sequence[str]) -> tuple[FloatArray, FloatArray]:
        """(R, r) setting the estimable coefficients of formula terms to zero."""
        return term_restrictions(self._term_info, self.names, self._estimable_positions(), term)

    def _estimable_positions(self) -> list[int]:
        sp = self.spectrum
        pos = [int(j) for j in sp.kept]
        if sp.intercept is not None:
            pos.append(int(sp.intercept))
        return sorted(pos)

    def _combination(self, R: FloatArray, r: FloatArray) -> _Combination:
        """R b − r and its covariance in exactly rescaled form, after the checks."""
        names = self.names
        aliased = [int(j) for j in self.spectrum.aliased]
        hit = [names[j] for j in aliased if np.any(R[:, j] != 0)]
        if hit:
            raise OptionError(f"hypothesis restricts aliased coefficient(s) {', '.join(hit)}: "
                              "they are not estimable (NaN, linear combinations of earlier "
                              "columns), so no restriction on them can be tested")
        Vz, E = self._vcov_z
        E = np.asarray(E, dtype=np.int64)
        with np.errstate(divide="ignore"):
            mag = np.where(R != 0, np.frexp(np.abs(R))[1] + E[None, :], np.iinfo(np.int64).min)
        F = mag.max(axis=1)
        Rz = np.ldexp(R, E[None, :] - F[:, None])
        self._check_independent(Rz, R, r)
        Vz0 = np.array(Vz, dtype=np.float64)
        Vz0[aliased, :] = 0.0
        Vz0[:, aliased] = 0.0
        bz = np.ldexp(self._coef_zeroed, -E)
        with np.errstate(over="ignore", invalid="ignore"):
            u = Rz @ bz - np.ldexp(r, -F)
            S = Rz @ Vz0 @ Rz.T
        return _Combination(u, (S + S.T) / 2.0, F)

    def _check_independent(self, Rz: FloatArray, R: FloatArray, r: FloatArray) -> None:
        q = Rz.shape[0]
        if q > len(self._estimable_positions()):
            raise OptionError(f"{q} restrictions on {len(self._estimable_positions())} "
                              "estimable coefficients are linearly dependent")
        for i in range(1, q + 1):
            s = np.linalg.svd(Rz[:i] / np.abs(Rz[:i]).max(axis=1, keepdims=True),
                              compute_uv=False)
            if s[-1] <= _DEPENDENT_TOL * s[0]:
                text = format_restriction(self.names, R[i - 1], float(r[i - 1]))
                raise OptionError(f"the restrictions are linearly dependent: {text!r} (number "
                                  f"{i}) is a linear combination of the ones before it; drop it")

    def _labels(self, R: FloatArray, r: FloatArray) -> list[str]:
        return [format_restriction(self.names, R[i], float(r[i])) for i in range(R.shape[0])]

    def _conditional_note(self) -> str:
        fit: Any = self
        rule = self.rule
        if rule.least_squares:
            return ""
        value = getattr(fit, rule.tuning)  # type: ignore[arg-type]
        if rule.counts:
            return (f"Conditional on {rule.parameter} = {value} components ({rule.label}); "
                    f"residual df n - tr(H) = {df_text(self.df_resid)}.")
        return (f"Conditional on {rule.parameter} = {value:.5g} ({rule.label}); effective "
                f"residual df n - tr(H) = {self.df_resid:.2f}.")

    # ------------------------------------------------------------ tests
    def wald_test(self, hypothesis: Any = None, rhs: Any = None, *,
                  term: str | Sequence[str] | None = None, test: str | None = None) -> WaldTest:
        """Joint Wald test of linear restrictions R b = r under the covariance in use.

        Parameters
        ----------
        hypothesis : str, list of str, array-like or DataFrame
            Text (``"x1 = x2, x3 = 0"``; grammar in :func:`parse_restrictions`), or the
            matrix R, shape (q, n_coef), its columns in the order of :attr:`names` (a
            DataFrame may name a subset of the coefficients as columns: the others are 0).
        rhs : float or array-like, shape (q,), optional
            r for a matrix hypothesis (default 0).
        term : str or list of str, optional
            Instead of a hypothesis: all (estimable) coefficients of these formula terms are
            0, e.g. ``term="C(g)"`` or ``term=["x1", "x1:x2"]`` (names as in the formula's
            terms, ``fit.design.design_info.term_names``).
        test : {"F", "Chisq"}, optional
            F = W / q on (q, :attr:`df_inference`) degrees of freedom, or W on χ²(q).
            Default ``"F"``, or ``"Chisq"`` under ``with_vcov(..., df=np.inf)``.

        Returns
        -------
        WaldTest
            ``statistic``, ``df``, ``p_value``, the restriction table and the covariance's
            name; prints as a report, ``.to_frame()`` gives the test as one row.

        Raises
        ------
        OptionError
            An unknown coefficient or term, a restriction on an aliased coefficient,
            linearly dependent restrictions, or (PCR) restrictions outside the directions
            the kept components span.

        Notes
        -----
        W = (Rb − r)' (R V R')⁻¹ (Rb − r) with V the covariance in use (:attr:`vcov_spec`),
        so under the classical covariance this is ``car::linearHypothesis(fit, ...)`` and
        under a sandwich ``car::linearHypothesis(fit, ..., vcov. = sandwich::vcovHC(fit,
        type = "HC1"))``. Ridge and PCR: conditional on λ or k, with the effective df.

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import longley
        >>> df = longley.load_pandas().data
        >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP + ARMED + POP + YEAR", data=df)
        >>> wt = fit.wald_test("UNEMP = ARMED, POP = 0")
        >>> print(f"F = {wt.statistic:.4f} on {wt.df[0]:g} and {wt.df[1]:g} DF, p = {wt.p_value:.4f}")
        F = 14.1778 on 2 and 10 DF, p = 0.0012
        >>> wt.table.index.tolist()
        ['UNEMP - ARMED = 0', 'POP = 0']
        >>> robust = fit.with_vcov("HC1").wald_test("UNEMP = ARMED, POP = 0", test="Chisq")
        >>> print(f"{robust.statistic:.3f} on {robust.df[0]:g} DF")
        20.953 on 2 DF
        >>> import numpy as np
        >>> R = np.zeros((1, 6)); R[0, 2] = 1.0
        >>> print(f"{fit.wald_test(R, -2.0).statistic:.4f}")  # UNEMP = -2
        0.0052
        """
        if test is None:
            test = "Chisq" if is_z(self.df_inference) else "F"
        if test not in WALD_TESTS:
            raise OptionError(f"test must be one of {WALD_TESTS}, however: {test=}")
        R, r = self._restrictions(hypothesis, rhs, term)
        comb = self._combination(R, r)
        q = R.shape[0]
        W = self._quadratic_form(comb)
        est, se = comb.estimate, comb.std_err
        with np.errstate(divide="ignore", invalid="ignore"):
            t = est / se
        if test == "F":
            stat, df2, df_rows = self._f_reference(R, W)
            p = f_sf(stat, q, df2) if math.isfinite(stat) else float("nan")
            z = "z" if is_z(df2) else "t"
            table = pd.DataFrame({"Estimate": est, "Std. Error": se, f"{z} value": t,
                                  f"Pr(>|{z}|)": 2.0 * stats.t.sf(np.abs(t), df_rows)})
        else:
            stat, df2 = W, math.inf
            p = float(stats.chi2.sf(stat, q)) if math.isfinite(stat) else float("nan")
            table = pd.DataFrame({"Estimate": est, "Std. Error": se, "z value": t,
                                  "Pr(>|z|)": 2.0 * stats.norm.sf(np.abs(t))})
        table.index = pd.Index(self._labels(R, r), name="restriction")
        fit: Any = self
        return WaldTest(statistic=float(stat), df=(float(q), df2), p_value=p, test=test,
                        table=table,
                        hypothesis_matrix=pd.DataFrame(R, index=table.index, columns=self.names),
                        rhs=r, covariance=self.vcov_spec.label(), method=fit.method,
                        note=self._conditional_note())

    def _f_reference(self, R: FloatArray, W: float) -> tuple[float, float, FloatArray]:
        """(F, df2, df of each restriction's t): W / q on :attr:`df_inference`, or under
        ``df="satterthwaite"`` clubSandwich's HTZ test (F = δ W / q on ν − q + 1 df) and
        each restriction's Satterthwaite df (:mod:`attnreg.inference.vcov.satterthwaite`)."""
        from attnreg.inference.vcov.satterthwaite import is_satterthwaite, wald_reference

        q = R.shape[0]
        if is_satterthwaite(self.vcov_spec) and math.isfinite(W):
            return wald_reference(self, R, W)
        df2 = float(self.df_inference)
        return W / q, df2, np.full(q, df2)

    def _quadratic_form(self, comb: _Combination) -> float:
        """W = u' S⁻¹ u, by a Cholesky solve of S in correlation form."""
        S, u = comb.S, comb.u
        if not (np.isfinite(S).all() and np.isfinite(u).all()):
            return float("nan")  # no residual df (warned), or a coefficient out of range
        d = np.sqrt(np.diag(S))
        C = S / np.outer(d, d) if (d > 0).all() else S
        singular = not (d > 0).all() or np.linalg.eigvalsh(C)[0] <= _SINGULAR_TOL
        fit: Any = self
        rule = self.rule
        if singular and rule.counts:  # truncated: the kept components span a subspace
            raise OptionError(f"the restrictions are not testable under {rule.label} with "
                              f"{rule.parameter} = {getattr(fit, rule.tuning)} "  # type: ignore[arg-type]
                              "components: the covariance of R b is singular (they restrict "
                              "directions the kept components do not span); restrict fewer "
                              "or other combinations, or use more components")
        if singular:
            warn_user("the covariance of the restricted combinations R b is singular under "
                      f"the {self.vcov_spec.label()} covariance, so the Wald test is not "
                      "defined: NaN", InferenceWarning)
            return float("nan")
        z = u / d
        factor = sla.cho_factor(C, lower=True)
        return float(z @ sla.cho_solve(factor, z))

    def t_test(self, hypothesis: Any, rhs: Any = None, *, level: float = 0.95) -> TTest:
        """Each restriction tested alone by Student's t, with its confidence interval.

        Parameters
        ----------
        hypothesis : str, list of str, array-like or DataFrame
            As for :meth:`wald_test` (``"x1 - x2 = 0"``, or several: ``"x1 = 0, x2 = 1"``).
        rhs : float or array-like, optional
            r for a matrix hypothesis.
        level : float
            Coverage of the intervals, strictly between 0 and 1.

        Returns
        -------
        TTest
            ``table``: ``Estimate`` (Rb − r), ``Std. Error``, ``t value``, ``Pr(>|t|)`` and
            the interval of Rb − r, on :attr:`df_inference` degrees of freedom under the
            covariance in use. For one restriction t² is the :meth:`wald_test` F.

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import longley
        >>> df = longley.load_pandas().data
        >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP + ARMED + POP + YEAR", data=df)
        >>> tt = fit.t_test("UNEMP - ARMED = 0, YEAR = 1800", level=0.9)
        >>> tt.table.columns.tolist()
        ['Estimate', 'Std. Error', 't value', 'Pr(>|t|)', '5 %', '95 %']
        >>> row = tt.table.loc["UNEMP - ARMED = 0"]
        >>> print(f"{row['Estimate']:.4f} {row['Std. Error']:.4f} {row['t value']:.3f}")
        -0.9522 0.3243 -2.936
        >>> f = fit.wald_test("UNEMP - ARMED = 0").statistic
        >>> print(f"{row['t value'] ** 2:.6f} {f:.6f}")
        8.621510 8.621510
        """
        from attnreg.inference.tstats import check_level
        from attnreg.inference.vcov.satterthwaite import is_satterthwaite, restriction_df

        check_level(level)
        R, r = self._restrictions(hypothesis, rhs, None)
        q = R.shape[0]
        ests, ses = np.empty(q), np.empty(q)
        for i in range(q):  # each alone: a dependent set is allowed here
            comb = self._combination(R[i:i + 1], r[i:i + 1])
            ests[i], ses[i] = comb.estimate[0], comb.std_err[0]
        df = float(self.df_inference)
        df_rows = np.full(q, df)
        if is_satterthwaite(self.vcov_spec) and self._df_ok:  # one df per restriction
            df_rows = restriction_df(self, R)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = ests / ses
        half = stats.t.ppf(0.5 + level / 2.0, df_rows) * ses
        a = (1.0 - level) / 2.0
        z = "z" if is_z(df) else "t"  # coeftest's names under df = Inf
        table = pd.DataFrame({"Estimate": ests, "Std. Error": ses, f"{z} value": t,
                              f"Pr(>|{z}|)": 2.0 * stats.t.sf(np.abs(t), df_rows),
                              f"{100 * a:.3g} %": ests - half,
                              f"{100 * (1 - a):.3g} %": ests + half},
                             index=pd.Index(self._labels(R, r), name="restriction"))
        if math.isnan(df):  # df="satterthwaite": each restriction's own df, last column
            table["df"] = df_rows
        return TTest(table=table, level=float(level), df=df,
                     covariance=self.vcov_spec.label(), note=self._conditional_note())

    def anova(self, type: int = 1) -> Any:
        """The analysis of variance table of this fit (see :func:`attnreg.anova`).

        Parameters
        ----------
        type : {1, 2, 3}
            1: R's sequential ``anova(lm)``; 2 and 3: ``car::Anova(fit, type=)``.

        Returns
        -------
        AnovaTable

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import longley
        >>> df = longley.load_pandas().data
        >>> tab = ar.attnreg("TOTEMP ~ GNP + UNEMP", data=df).anova()
        >>> tab.table.columns.tolist()
        ['Df', 'Sum Sq', 'Mean Sq', 'F value', 'Pr(>F)']
        >>> tab.table.index.tolist()
        ['GNP', 'UNEMP', 'Residuals']
        """
        from attnreg.inference.anova import anova

        return anova(self, type=type)
