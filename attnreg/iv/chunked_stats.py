r"""The covariances and weak-instrument statistics of a chunked IV fit, from ``P`` and ``F``.

Every formula is the in-memory one (:mod:`attnreg.iv.covariance`,
:mod:`attnreg.iv.diagnostics`, :mod:`attnreg.iv.weak`, :mod:`attnreg.iv.arset`) with the
data's ``n``: the quadratic forms of the classical statistics are taken on the ``p`` rows of
``P`` (:class:`attnreg.iv.chunked.Merged`), and the robust ones' meats are blocks of the
factor ``F`` of pass 2 (:class:`attnreg.iv.chunked.MeatFactor`), whose columns are, in order:

* ``scores`` (k): ``x̂_i e_i`` of the fit (its HC and cluster covariances),
* ``weak j`` (l each, j = 1..k2): ``q̃_i v̂_ij``, the first stage of ``D_j`` (robust first-stage
  F, AER's weak-instruments test, the effective F),
* ``wu-hausman`` (k2): the robust Wu–Hausman test's contributions,
* ``kp wald``, ``kp lm`` (l − k2 + 1 each): the Kleibergen–Paap rk statistics'.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd
from scipy import stats
from scipy.linalg import qr, solve_triangular

from attnreg._typing import FloatArray
from attnreg.iv._wald import meat_scale
from attnreg.iv.arset import ARSet, anderson_rubin_set
from attnreg.iv.chunked import Merged, MeatFactor
from attnreg.iv.diagnostics import DIAGNOSTIC_COLUMNS
from attnreg.iv.estimators import IVFit, tsls
from attnreg.iv.weak import WeakIV

__all__ = ["Pieces"]


def _orth(a: FloatArray) -> FloatArray:
    return qr(a, mode="economic")[0]


@dataclass(frozen=True)
class Pieces:
    """The quantities of the in-memory statistics on the rows of ``P``, and the contributions'
    maps pass 2 evaluates.

    Attributes
    ----------
    merged : Merged
    fit : IVFit
        The fit of ``P``'s rows (its coefficients and bread are the data's).
    """

    merged: Merged
    fit: IVFit

    @cached_property
    def _q(self) -> dict[str, FloatArray]:
        d, f = self.merged.design, self.fit
        k2 = d.D.shape[1]
        V = d.annihilate(d.D)
        R = _orth(d.regressors)
        Qt = _orth(V - R @ (R.T @ V))
        g_wh = Qt.T @ d.y
        Qd = _orth(d.annihilate_x(d.D))
        U, s, Vt = np.linalg.svd(d.Qz.T @ Qd)
        direction = Qd @ Vt[-1]
        g_kp = np.zeros(d.Z.shape[1] - k2 + 1)
        g_kp[0] = s[-1]
        return {"xhat": d.project(d.regressors), "e": f.wresid, "V": V, "Qt": Qt, "g_wh": g_wh,
                "u": d.y - R @ (R.T @ d.y) - Qt @ g_wh, "s": s, "Pu": d.Qz @ U[:, k2 - 1:],
                "dir": direction, "a_wald": d.annihilate(direction), "g_kp": g_kp}

    def slices(self) -> dict[str, slice]:
        """Columns of each contribution in ``F`` (``"weak0"``, ``"weak1"``, ... per regressor)."""
        m = self.merged
        sizes = [("scores", m.k1 + m.k2), *((f"weak{j}", m.nz) for j in range(m.k2)),
                 ("wu-hausman", m.k2), ("kp wald", m.nz - m.k2 + 1), ("kp lm", m.nz - m.k2 + 1)]
        out, at = {}, 0
        for name, size in sizes:
            out[name], at = slice(at, at + size), at + size
        return out

    def maps(self) -> list[tuple[FloatArray, FloatArray]]:
        """``(C, c)`` per contribution, in the order of :meth:`slices` (see the module doc)."""
        m, q, Qz = self.merged, self._q, self.merged.design.Qz
        to = m.to_rows
        coef = self.fit.coef  # the residuals' coefficients, exactly: y - [X, D] coef
        c_e = np.concatenate([-coef[:m.k1], np.zeros(m.nz), -coef[m.k1:], [1.0]])
        return [(to(q["xhat"]), c_e), *((to(Qz), to(q["V"][:, j])) for j in range(m.k2)),
                (to(q["Qt"]), to(q["u"], response=True)), (to(q["Pu"]), to(q["a_wald"])),
                (to(q["Pu"]), to(q["dir"]))]


@dataclass(frozen=True)
class ChunkedIVStats:
    """The statistics of a chunked IV fit (see the module doc).

    Attributes
    ----------
    pieces : Pieces
    meat : MeatFactor
    kind : {"classical", "HC0", "HC1", "cluster"}
        The covariance in use (pass 2 summed per cluster exactly when ``"cluster"``).
    """

    pieces: Pieces
    meat: MeatFactor
    kind: str

    @property
    def n(self) -> int:
        """Rows used."""
        return self.pieces.merged.n

    def _wald(self, g: FloatArray, block: str, kind: str, k: int, debiased: bool) -> float:
        F = self.meat.block(self.pieces.slices()[block])
        c = meat_scale(kind, self.n, k, self.meat.n_clusters or 0, debiased)
        return float(np.sum(solve_triangular(F, g, trans="T") ** 2)) / c

    def vcov(self) -> FloatArray:
        """The covariance of the coefficients with AER's small-sample factors, shape (k, k)."""
        fit, n = self.pieces.fit, self.n
        k = fit.n_params
        if self.kind == "classical":
            e = fit.wresid
            Ainv = fit.solve_bread(np.eye(k))
            V = float(e @ e) / n * (Ainv @ fit.homoskedastic_meat @ Ainv)
            scale = n / (n - k)
        else:
            F = self.meat.block(self.pieces.slices()["scores"])
            B = fit.solve_bread(F.T)
            V = B @ B.T
            g = self.meat.n_clusters or 0
            scale = {"HC0": 1.0, "HC1": n / (n - k)}.get(
                self.kind, g / (g - 1) * (n - 1) / (n - k) if g > 1 else np.nan)
        return (V + V.T) / 2 * scale

    def _f_row(self, g: FloatArray, block: str, ss: float, df: tuple[int, int], k: int) -> list[float]:
        if self.kind == "classical":
            f = float(g @ g) / df[0] / (ss / df[1])
        else:
            f = self._wald(g, block, self.kind, k, self.kind == "cluster") / df[0]
        return [float(df[0]), float(df[1]), f, float(stats.f.sf(f, *df))]

    def diagnostics(self, endog_names: tuple[str, ...]) -> pd.DataFrame:
        """AER's diagnostics table (:func:`attnreg.iv.diagnostics.iv_diagnostics`)."""
        m, q, d = self.pieces.merged, self.pieces._q, self.pieces.merged.design
        n, L, k = self.n, m.k1 + m.nz, m.k1 + m.k2
        rows = [self._f_row(d.Qz.T @ d.D[:, j], f"weak{j}", float(q["V"][:, j] @ q["V"][:, j]),
                            (m.nz, n - L), L) for j in range(m.k2)]
        rows.append(self._f_row(q["g_wh"], "wu-hausman", float(q["u"] @ q["u"]),
                                (m.k2, n - k - m.k2), k + m.k2))
        rows.append(self._sargan())
        weak = ([f"Weak instruments ({name})" for name in endog_names] if m.k2 > 1
                else ["Weak instruments"])
        return pd.DataFrame(rows, index=[*weak, "Wu-Hausman", "Sargan"],
                            columns=DIAGNOSTIC_COLUMNS)

    def _sargan(self) -> list[float]:
        m, e = self.pieces.merged, self.pieces.fit.wresid
        q = m.nz - m.k2
        if q == 0:
            return [0.0, np.nan, np.nan, np.nan]
        coef = self.pieces.fit.coef
        c_e = np.concatenate([-coef[:m.k1], np.zeros(m.nz), -coef[m.k1:], [1.0]])
        mean = float(m.wsum @ c_e) / m.mean_w  # Σ (w/w̄) e on the data's scale
        centred = float(e @ e) - mean**2 / self.n
        left = m.design.annihilate(e)
        stat = self.n * (1 - float(left @ left) / centred)
        return [float(q), np.nan, stat, float(stats.chi2.sf(stat, q))]

    def _sw_f(self) -> FloatArray:
        d, m = self.pieces.merged.design, self.pieces.merged
        out = np.empty(m.k2)
        for j in range(m.k2):
            e = (d.annihilate_x(d.D[:, 0]) if m.k2 == 1
                 else tsls(d.D[:, j], d.X, np.delete(d.D, j, axis=1), d.Z).wresid)
            num = np.sum((d.Qz.T @ e) ** 2) / (m.nz - m.k2 + 1)
            out[j] = num / (np.sum(d.annihilate(e) ** 2) / (self.n - m.k1 - m.nz))
        return out

    def weak_instruments(self, tau: float = 0.10) -> WeakIV:
        """:func:`attnreg.iv.weak.weak_instruments` under the covariance in use (HC0 under the
        classical one)."""
        m, q, d, n = self.pieces.merged, self.pieces._q, self.pieces.merged.design, self.n
        kind = "HC0" if self.kind == "classical" else self.kind
        L, nz, k2 = m.k1 + m.nz, m.nz, m.k2
        G = d.Qz.T @ d.D
        rss = np.sum(q["V"] ** 2, axis=0)
        pr2 = 1.0 - rss / np.sum(d.annihilate_x(d.D) ** 2, axis=0)
        fc = np.sum(G**2, axis=0) / nz / (rss / (n - L))
        fr = np.array([self._wald(G[:, j], f"weak{j}", kind, L, kind != "HC0") / nz
                       for j in range(k2)])
        r2 = float(q["s"][-1] ** 2)
        rk_w = self._wald(q["g_kp"], "kp wald", kind, L, False)
        rk_lm = self._wald(q["g_kp"], "kp lm", kind, L, False)
        g = self.meat.n_clusters or 0
        rk_f = (rk_w / nz * (n - L) / (n - 1) * (g - 1) / g if kind == "cluster"
                else rk_w / nz * (n - L) / n)
        f_eff = cv = k_eff = float("nan")
        if k2 == 1:
            f_eff, cv, k_eff = self._effective_f(G[:, 0], kind, tau)
        return WeakIV(partial_r2=pr2, f_classical=fc, f_robust=fr, sw_f=self._sw_f(),
                      cragg_donald_f=r2 / (1.0 - r2) * (n - L) / nz, anderson_lm=n * r2,
                      cragg_donald_wald=n * r2 / (1 - r2), kp_rk_wald=rk_w, kp_rk_wald_f=rk_f,
                      kp_rk_lm=rk_lm, kp_rk_lm_pvalue=float(stats.chi2.sf(rk_lm, nz - k2 + 1)),
                      effective_f=f_eff, effective_f_cv=cv, k_eff=k_eff, kind=kind,
                      df=(nz, n - L))

    def _effective_f(self, pi: FloatArray, kind: str, tau: float) -> tuple[float, float, float]:
        m = self.pieces.merged
        F = self.meat.block(self.pieces.slices()["weak0"])
        W2 = F.T @ F
        if kind == "HC1":
            W2 = W2 * self.n / (self.n - m.k1 - m.nz)
        tr = float(np.trace(W2))
        x = 1.0 / tau
        eig_max = float(np.linalg.eigvalsh(W2)[-1])
        k_eff = tr**2 * (1 + 2 * x) / (float(np.sum(W2 * W2)) + 2 * x * tr * eig_max)
        cv = float(stats.ncx2.ppf(0.95, k_eff, x * k_eff)) / k_eff
        return float(pi @ pi) / tr, cv, k_eff

    def anderson_rubin(self, level: float) -> ARSet:
        """The homoskedastic AR set (:func:`attnreg.iv.arset.anderson_rubin_set`) on the rows
        of ``P``: the data's n enters only through ``n - L``, so the p rows of ``P`` count
        ``p - n`` absorbed levels to give ``n - L`` its value."""
        m = self.pieces.merged
        d = m.design
        return anderson_rubin_set(d.y, d.X if m.k1 else None, d.D, d.Z, alpha=1 - level,
                                  absorbed=d.n - m.n)
