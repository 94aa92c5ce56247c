"""One bootstrap of a linear fit: the prepared maps, the replications block by block, the results.

The kinds and their algebra are described in :mod:`attnreg.inference.bootstrap`; the pairs
refits are in :mod:`attnreg.inference.bootstrap_pairs`.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from attnreg._progress import Progress
from attnreg._typing import FloatArray, IntArray
from attnreg._warn import warn_user
from attnreg.exceptions import InferenceWarning
from attnreg.inference.bootstrap_draws import draw_rows, draw_weights, enumerate_signs
from attnreg.inference.bootstrap_engines import (
    BLOCK_NUMBERS,
    WildCluster,
    WildRows,
    cluster_grams,
    z_blocks,
)
from attnreg.inference.bootstrap_pairs import pairs_replications
from attnreg.inference.bootstrap_results import BootstrapResults, BootstrapTest, tail_share
from attnreg.inference.vcov.registry import coef_map

if TYPE_CHECKING:
    from attnreg.linear.spectral import Spectrum

__all__ = ["BootstrapRun"]


class BootstrapRun:
    """One bootstrap: the prepared maps, the replications block by block, the results."""

    def __init__(self, fit: Any, kind: str, weights: str | None, codes: IntArray | None,
                 n_groups: int, reps: int, rng: np.random.Generator,
                 restr: tuple[FloatArray, FloatArray, list[str]] | None, impose_null: bool,
                 progress: bool | Callable[[int, int], Any]) -> None:
        self.fit, self.kind, self.weights, self.codes, self.G = fit, kind, weights, codes, n_groups
        self.rng, self.restr, self.impose_null, self.progress = rng, restr, impose_null, progress
        self.reps_requested = reps
        sp: Spectrum = fit.spectrum
        self.sp = sp
        K = len(fit.names)
        self.K = K
        Mz, E = coef_map(sp, fit.filtered.f, K)
        self.Mz, self.E = Mz, np.asarray(E, dtype=np.int64)
        self.d = np.r_[sp.sum_w if sp.intercept is not None else 0.0, fit.filtered.f]
        self.est = np.asarray(fit._estimable, dtype=np.int64)
        self.dead = np.setdiff1d(np.arange(K), self.est)
        self.bz = np.ldexp(fit._coef_zeroed, -self.E)
        self.u = np.asarray(fit._resid_ws, dtype=np.float64)
        n, edf = sp.n_obs, fit.edf
        df = n - edf
        if codes is None:
            self.factor = n / df
        else:
            self.factor = n_groups / (n_groups - 1.0) * (n - 1.0) / df
        self.enumerated = False
        if kind == "wild":
            if weights == "rademacher" and n_groups < 63 and 2 ** n_groups < reps:
                self.enumerated = True
                reps = 2 ** n_groups
                warn_user(f"with {n_groups} {'clusters' if codes is not None else 'rows'} the "
                          f"Rademacher weights have only 2^{n_groups} = {reps} distinct draws, "
                          f"fewer than reps: all {reps} sign vectors are used (full "
                          "enumeration)", InferenceWarning)
            elif weights in ("webb", "mammen"):
                points = 6 if weights == "webb" else 2
                if n_groups * math.log(points) < math.log(reps):
                    warn_user(f"with {n_groups} clusters the {weights} weights have only "
                              f"{points}^{n_groups} = {points ** n_groups} distinct draws, "
                              f"fewer than reps = {reps}: draws repeat", InferenceWarning)
        self.reps = reps

    # -------------------------------------------------------------- labels
    def se_type(self) -> str:
        if self.kind == "residual":
            return "classical standard errors (iid errors)"
        if self.codes is None:
            return "HC1 (heteroskedasticity-robust)"
        return f"CR1 (vcovCL's HC1) by cluster, {self.G} clusters"

    def note(self) -> str:
        fit, rule = self.fit, self.fit.rule
        if rule.least_squares:
            return ""
        value = getattr(fit, rule.tuning)
        if rule.counts:
            return (f"Conditional on {rule.parameter} = {value} components ({rule.label}): "
                    "b* = b + M e*.")
        return f"Conditional on {rule.parameter} = {value:.5g} ({rule.label}): b* = b + M e*."

    # -------------------------------------------------------------- blocks
    def blocks(self, width: int) -> Iterator[tuple[int, int]]:
        """(lo, hi) of each block of replications, about BLOCK_NUMBERS numbers at ``width`` each."""
        step = max(1, BLOCK_NUMBERS // max(width, 1))
        enabled = self.progress is True
        with Progress(self.reps, "bootstrap", enabled=enabled) as bar:
            for lo in range(0, self.reps, step):
                hi = min(lo + step, self.reps)
                yield lo, hi
                bar.update(hi)
                if callable(self.progress) and not isinstance(self.progress, bool):
                    self.progress(hi, self.reps)

    def _draws(self, lo: int, hi: int) -> FloatArray:
        if self.enumerated:
            return enumerate_signs(self.G, lo, hi)
        V = draw_weights(self.rng, self.weights or "rademacher", hi - lo, self.G)
        return V

    def wild_engine(self, L: FloatArray, u: FloatArray,
                     grams: FloatArray | None) -> WildCluster | WildRows:
        if self.codes is None:
            return WildRows(self.sp, L, u, self.d)
        assert grams is not None
        return WildCluster(self.sp, L, u, self.codes, self.G, self.d, grams)

    # -------------------------------------------------------------- the kinds
    def wild(self) -> tuple[FloatArray, FloatArray, FloatArray, Any]:
        """(δz (reps × K), var_z (reps × K), plain var_z (K), test draws or None)."""
        grams = None if self.codes is None else cluster_grams(self.sp, self.codes, self.G)
        coef_eng = self.wild_engine(self.Mz, self.u, grams)
        test = self._test_setup(grams) if self.restr is not None else None
        width = coef_eng.width() + (test[0].width() if test is not None else 0)
        delta = np.empty((self.reps, self.K))
        var = np.empty((self.reps, self.K))
        q = 0 if test is None else test[1].shape[0]
        stats_ = np.empty(self.reps) if test is not None else None
        for lo, hi in self.blocks(width + self.G):
            V = self._draws(lo, hi)
            num, v = coef_eng.run(V, full=False)
            delta[lo:hi], var[lo:hi] = num.T, v.T
            if test is not None:
                eng = test[0]
                tnum, tvar = eng.run(V, full=q > 1)
                assert stats_ is not None
                stats_[lo:hi] = self._statistic(tnum, tvar)
        plain = np.diag(coef_eng.plain())
        out_test = None
        if test is not None:
            L = test[1]
            obs_eng = self.wild_engine(L, self.u, grams)  # the original fit's residuals
            R, r, _ = self.restr  # type: ignore[misc]
            Rz, rz = self._scaled_restrictions(R, r)
            num0 = Rz @ self.bz - rz  # R b̂ − r in the rescaled units
            stat0 = self._statistic(num0[:, None], obs_eng.plain()[None] if q > 1
                                    else np.diag(obs_eng.plain())[:, None])
            out_test = (float(stat0[0]), stats_)
        return delta, var, plain, out_test

    def _test_setup(self, grams: FloatArray | None) -> tuple[Any, FloatArray, FloatArray]:
        R, r, _ = self.restr  # type: ignore[misc]
        Rz, rz = self._scaled_restrictions(R, r)
        L = Rz @ self.Mz  # (q, k)
        u = self.u
        if self.impose_null:
            u = self._restricted_residuals(L, Rz @ self.bz - rz)
        return self.wild_engine(L, u, grams), L, u

    def _scaled_restrictions(self, R: FloatArray, r: FloatArray) -> tuple[FloatArray, FloatArray]:
        """R and r in the coefficients' rescaled units, each row divided by a power of two."""
        E = self.E
        with np.errstate(divide="ignore"):
            mag = np.where(R != 0, np.frexp(np.abs(R))[1] + E[None, :], np.iinfo(np.int64).min)
        F = mag.max(axis=1)
        self._F = F
        return np.ldexp(R, E[None, :] - F[:, None]), np.ldexp(r, -F)

    def _restricted_residuals(self, L: FloatArray, excess: FloatArray) -> FloatArray:
        """ũ = û + Z L'λ: residuals of the least-squares fit with L θ = r imposed."""
        sp = self.sp
        gamma_inv = np.r_[1.0 / sp.sum_w if sp.intercept is not None else 0.0,
                          np.ones(sp.rank)]
        lam = np.linalg.solve((L * gamma_inv) @ L.T, excess)
        shift = gamma_inv * (L.T @ lam) * self.d  # = L'λ on the active components
        u = self.u.copy()
        for lo, hi, Z in z_blocks(sp):
            u[lo:hi] += Z @ shift
        return u

    def _statistic(self, num: FloatArray, var: FloatArray) -> FloatArray:
        """t = num / sqrt(factor var) (one restriction) or F = num' (factor var)⁻¹ num / q."""
        q = num.shape[0]
        if q == 1:
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.asarray(num[0] / np.sqrt(self.factor * var[0]))
        mats = self.factor * var
        out = np.full(num.shape[1], np.nan)
        try:
            sol = np.linalg.solve(mats, num.T[:, :, None])[:, :, 0]
            out = np.einsum("bi,bi->b", num.T, sol) / q
        except np.linalg.LinAlgError:
            for b in range(num.shape[1]):  # only where a replication's covariance is singular
                with contextlib.suppress(np.linalg.LinAlgError):
                    out[b] = num[:, b] @ np.linalg.solve(mats[b], num[:, b]) / q
        return out

    def residual(self) -> tuple[FloatArray, FloatArray, FloatArray]:
        sp, n = self.sp, self.sp.n_obs
        df = n - self.fit.edf
        base = (self.u - self.u.mean()) * math.sqrt(n / df)
        cls = np.einsum("jl,l,jl->j", self.Mz,
                        np.r_[1.0 / sp.sum_w if sp.intercept is not None else 0.0,
                              np.ones(sp.rank)], self.Mz)  # diag of Mz Γ⁻¹ Mz'
        delta = np.empty((self.reps, self.K))
        var = np.empty((self.reps, self.K))
        k = 1 + sp.rank
        for lo, hi in self.blocks(3 * n):
            e = base[draw_rows(self.rng, hi - lo, n)]  # (B, n)
            W = np.zeros((k, hi - lo))
            for a, b, Z in z_blocks(sp):
                W += Z.T @ e[:, a:b].T
            DW = self.d[:, None] * W
            rss = np.zeros(hi - lo)
            for a, b, Z in z_blocks(sp):
                res = e[:, a:b].T - Z @ DW
                rss += np.einsum("ib,ib->b", res, res)
            delta[lo:hi] = (self.Mz @ W).T
            var[lo:hi] = (rss / df)[:, None] * cls[None, :]
        plain = self.fit._rss_s / df * cls
        return delta, var, plain

    # -------------------------------------------------------------- assembly
    def _replicate(self) -> tuple[FloatArray, FloatArray, FloatArray, Any, int, float]:
        """(δz, var_z, plain var_z, test draws or None, failed refits, the SE factor)."""
        if self.kind == "wild":
            delta, var, plain, test_out = self.wild()
            return delta, var, plain, test_out, 0, self.factor
        if self.kind == "residual":
            delta, var, plain = self.residual()
            return delta, var, plain, None, 0, 1.0
        delta, var, plain, failed = pairs_replications(self)
        return delta, var, plain, None, failed, self.factor

    def _test(self, test_out: Any) -> BootstrapTest | None:
        """The wild bootstrap test of the restrictions from (statistic, draws), or None."""
        if test_out is None:
            return None
        stat0, draws = test_out
        q = self.restr[0].shape[0]  # type: ignore[index]
        form = "t" if q == 1 else "F"
        if q == 1:
            pv = float(tail_share(np.abs(draws)[:, None], np.array([abs(stat0)]))[0])
        else:
            pv = float(tail_share(draws[:, None], np.array([stat0]))[0])
        return BootstrapTest(restrictions=tuple(self.restr[2]),  # type: ignore[index]
                             statistic=stat0, p_value=pv, draws=draws, form=form, q=q,
                             impose_null=self.impose_null, covariance=self.se_type())

    def _intervals(self, delta: FloatArray, t_rep: FloatArray, reps_b: FloatArray,
                   coef: FloatArray, se: FloatArray,
                   level: float) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        """(bootstrap SEs (K), percentile (2, K), studentized (2, K), p-values (K))."""
        K, E = self.K, self.E
        a = (1.0 - level) / 2.0
        valid = np.isfinite(reps_b[:, self.est]).all(axis=1) if self.est.size else np.ones(
            self.reps, bool)
        ok = reps_b[valid]
        tok = t_rep[valid]
        with np.errstate(invalid="ignore"):
            # from b* − b̂ in the rescaled units: no square leaves float64 at any data scale
            boot_se = (np.ldexp(delta[valid].std(axis=0, ddof=1), E) if ok.shape[0] > 1
                       else np.full(K, np.nan))
            boot_se[self.dead] = np.nan
            pct = (np.quantile(ok, [a, 1 - a], axis=0) if ok.shape[0]
                   else np.full((2, K), np.nan))
            tq = (np.quantile(tok, [a, 1 - a], axis=0) if tok.shape[0]
                  else np.full((2, K), np.nan))
        pct[:, self.dead] = np.nan
        tq[:, self.dead] = np.nan
        stud = np.vstack([coef - tq[1] * se, coef - tq[0] * se])
        with np.errstate(invalid="ignore", divide="ignore"):
            t_obs = np.abs(coef / se)
        return boot_se, pct, stud, tail_share(np.abs(tok), t_obs)

    def results(self, cname: str | None, seed: int | None, level: float) -> BootstrapResults:
        """Run the replications and summarise them (``cname``: the cluster's name)."""
        fit, E = self.fit, self.E
        delta, var, plain, test_out, failed, factor = self._replicate()
        with np.errstate(invalid="ignore", divide="ignore"):
            se_z = np.sqrt(factor * plain)
            t_rep = delta / np.sqrt(factor * var)
        t_rep[:, self.dead] = np.nan
        coef = fit.coef.to_numpy()
        with np.errstate(over="ignore", invalid="ignore"):
            reps_b = coef[None, :] + np.ldexp(delta, E[None, :])
            se = np.ldexp(se_z, E)
        reps_b[:, self.dead] = np.nan
        se[self.dead] = np.nan
        boot_se, pct, stud, p = self._intervals(delta, t_rep, reps_b, coef, se, level)
        idx = pd.Index(fit.names)
        a = (1.0 - level) / 2.0
        cols = [f"{100 * a:.3g} %", f"{100 * (1 - a):.3g} %"]
        return BootstrapResults(
            kind=self.kind, weights=self.weights, cluster=cname,
            n_clusters=self.G if self.codes is not None else None, reps=self.reps,
            reps_requested=self.reps_requested, enumerated=self.enumerated, seed=seed,
            level=level, method=fit.method, coef=fit.coef.copy(),
            std_err_analytic=pd.Series(se, index=idx, name="std_err"),
            std_err=pd.Series(boot_se, index=idx, name="boot_std_err"),
            replications=reps_b, t_replications=t_rep,
            percentile=pd.DataFrame(pct.T, index=idx, columns=cols),
            studentized=pd.DataFrame(stud.T, index=idx, columns=cols),
            p_value=pd.Series(p, index=idx, name="boot_p_value"), test=self._test(test_out),
            se_type=self.se_type().replace("by cluster", f"by {cname}") if cname else
            self.se_type(), n_failed=failed, note=self.note())
