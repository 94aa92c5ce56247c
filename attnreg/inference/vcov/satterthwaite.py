"""Satterthwaite degrees of freedom and HTZ Wald tests for the CR2 covariance, as clubSandwich.

``fit.with_vcov("cluster", cluster=..., type="CR2", df="satterthwaite")`` gives each
coefficient's t test and interval its own degrees of freedom (clubSandwich's
``coef_test(test = "Satterthwaite")`` and ``conf_int``), and joint Wald tests the
Hotelling T² approximation ``Wald_test(test = "HTZ")`` of Pustejovsky and Tipton (2018).

The CR2 variance of a contrast ℓ'a of the components a = [c'ỹ ; U'ỹ] (every coefficient and
every restriction R b is one) is Σ_g (p_g' e_g)² with p_g = A_g (√w_g ⊙ [c, U]_g ℓ) and e the
residuals, a quadratic form in y. Under the working model Var(y) = I its mean and variance
follow from P_jk = p_j' [(I − H)(I − H)']_jk p_k = δ_jk p_j'p_j + (L_j'p_j)' S (L_k'p_k)
(:mod:`attnreg.inference.vcov.cr2`), and the Satterthwaite df is (tr P)² / ‖P‖²_F. For q
contrasts, P has blocks P_st,jk; with Ω = Σ_j P_jj (q × q) and B_jk = Ω^(-1/2) P_jk Ω^(-1/2),
ν = q (q + 1) / Σ_jk [tr(B_jk²) + (tr B_jk)²], and the test is F = δ W / q on (q, ν − q + 1)
degrees of freedom with δ = (ν − q + 1)/ν and W the Wald statistic under CR2. Every sum over
pairs of clusters is written with the m × q × m × q moments Σ_j N_j ⊗ N_j (N_j = L_j' P_j),
so nothing is of size G² and nothing n × n is formed.

The working model Θ = I is clubSandwich's for ``lm`` (with prior weights too: W is then the
weight matrix, Θ still I on the response's scale). The df do not depend on the scale of the
weights or of the contrasts. For ridge and PCR everything is conditional on λ or k (the hat
matrix is the filter's).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import stats

from attnreg._typing import FloatArray
from attnreg.inference.vcov._blocks import indicator as _indicator
from attnreg.inference.vcov._blocks import scores_c as _scores_c
from attnreg.inference.vcov.cr2 import Cr2Parts, _row_block, cr2_parts
from attnreg.inference.vcov.registry import VcovSpec, coef_map

__all__ = ["coefficient_df", "htz_test", "is_satterthwaite", "restriction_contrasts"]

#: eigenvalues of Ω below this (relative to the largest) get a zero inverse square root
_OMEGA_TOL = 1e-12


def is_satterthwaite(spec: VcovSpec) -> bool:
    """Whether ``spec`` asks for Satterthwaite df (the CR2 cluster covariance)."""
    return spec.kind == "cluster" and spec.option("df") == "satterthwaite"


def cr2_parts_of(fit: Any) -> Cr2Parts:
    """The CR2 adjustment of the clusters of a fit under a one-way CR2 covariance."""
    ids = fit.vcov_spec.option("cluster")
    return cr2_parts(fit.spectrum, fit.filtered.f, ids.codes[:, 0], ids.n_clusters[0])


def _parts(fit: Any) -> Any:
    """The fit's CR2 parts: a Cr2Parts, or a family's own object with ``contrast_df(C)`` and
    ``htz_nu(C)`` methods (fixed-effects fits, whose hat matrix is not the spectrum's)."""
    cached = getattr(fit, "_cr2_parts", None)  # LinearResults keeps them (cached_property)
    return cached if cached is not None else cr2_parts_of(fit)


def _moments(parts: Cr2Parts, C: FloatArray) -> tuple[FloatArray, FloatArray]:
    """D_g = P_g'P_g, shape (G, q, q), and N_g = L_g'P_g, shape (G, m, q), with P_g the
    n_g × q matrix of the p vectors of the q contrasts ``C`` (rows, shape (q, 1 + rank))."""
    sp, G, codes = parts.sp, parts.n_groups, parts.codes
    q, m = C.shape[0], parts.m
    c = _scores_c(sp)
    RR = np.zeros((G, q * q))
    Lam = np.zeros((G, m * q))
    step = _row_block(max(q * q, m * q))  # rows per product block (about 2**22 numbers)
    for start, stop, U in sp.U.blocks():
        r = (np.column_stack([c[start:stop], U]) @ C.T) * sp.sqrt_w[start:stop, None]  # (b, q)
        L = parts.l_rows(start, stop, U)
        ones = _indicator(codes[start:stop], G, np.ones(stop - start))
        for lo in range(0, stop - start, step):
            hi = min(lo + step, stop - start)
            rb, Lb, ob = r[lo:hi], L[lo:hi], ones[:, lo:hi]
            RR += ob @ np.einsum("bs,bt->bst", rb, rb).reshape(-1, q * q)
            Lam += ob @ np.einsum("ba,bs->bas", Lb, rb).reshape(-1, m * q)
    RR3, Lam3 = RR.reshape(G, q, q), Lam.reshape(G, m, q)
    TL = parts.T @ Lam3  # (G, m, q); P_g = R_g + L_g T_g Λ_g
    cross = np.swapaxes(Lam3, 1, 2) @ TL
    D = RR3 + cross + np.swapaxes(cross, 1, 2) + np.swapaxes(TL, 1, 2) @ parts.gram @ TL
    N = Lam3 + parts.gram @ TL
    return (D + np.swapaxes(D, 1, 2)) / 2.0, N


def contrast_df(parts: Any, C: FloatArray) -> FloatArray:
    """Satterthwaite df of each contrast (row of ``C``) alone, shape (q,): (tr P)² / ‖P‖²."""
    if not isinstance(parts, Cr2Parts):
        return np.asarray(parts.contrast_df(C))
    D, N = _moments(parts, C)
    S = parts.S
    d = np.einsum("gss->gs", D)  # (G, q): p_g'p_g
    quad = np.einsum("gas,ab,gbs->gs", N, S, N)  # (G, q): n_gs' S n_gs
    trace = (d + quad).sum(axis=0)
    M = np.einsum("gas,gbs->sab", N, N)  # (q, m, m): Σ_g n_gs n_gs'
    SM = S[None, :, :] @ M
    frob = (d**2).sum(axis=0) + 2.0 * (d * quad).sum(axis=0) + np.einsum("sab,sba->s", SM, SM)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(trace**2 / frob)


def _inverse_root(omega: FloatArray) -> FloatArray:
    vals, vecs = np.linalg.eigh((omega + omega.T) / 2.0)
    top = max(float(vals.max(initial=0.0)), np.finfo(float).tiny)
    ok = vals > _OMEGA_TOL * top
    inv = np.where(ok, 1.0 / np.sqrt(np.where(ok, vals, 1.0)), 0.0)
    return np.asarray((vecs * inv) @ vecs.T)


def htz_nu(parts: Any, C: FloatArray) -> float:
    """ν of the HTZ test of the q contrasts ``C`` (rows): q (q + 1) / Σ_jk [tr B² + (tr B)²]."""
    if not isinstance(parts, Cr2Parts):
        return float(parts.htz_nu(C))
    D, N = _moments(parts, C)
    S = parts.S
    q = C.shape[0]
    omega = D.sum(axis=0) + np.einsum("gas,ab,gbt->st", N, S, N)
    root_inv = _inverse_root(omega)
    Dp = root_inv @ D @ root_inv  # (G, q, q)
    Np = N @ root_inv  # (G, m, q)
    Cjj = np.swapaxes(Np, 1, 2) @ S @ Np  # (G, q, q): the diagonal blocks of N' S N
    Y = np.einsum("gas,gct->asct", Np, Np)  # Σ_g N'_g ⊗ N'_g, (m, q, m, q)
    tr_dd = np.einsum("gst,gts->", Dp, Dp) + float((np.einsum("gss->g", Dp) ** 2).sum())
    tr_dc = np.einsum("gst,gts->", Dp, Cjj) + float(
        (np.einsum("gss->g", Dp) * np.einsum("gss->g", Cjj)).sum())
    SY = np.einsum("ab,asct->bsct", S, Y)  # Σ_a S_ab Y[a,s,c,t]
    SYS = np.einsum("bsct,cd->bsdt", SY, S)  # Σ_ac S_ab S_cd Y[a,s,c,t]
    tr_cc = np.einsum("bsdt,btds->", SYS, Y) + np.einsum("bsdt,bsdt->", SYS, Y)
    total = tr_dd + 2.0 * tr_dc + tr_cc
    return float(q * (q + 1) / total)


def restriction_contrasts(fit: Any, R: FloatArray) -> FloatArray:
    """The rows of R (shape (q, n_coef)) as contrasts of the components, shape (q, 1 + rank),
    each row rescaled by a power of two (the tests do not depend on the rows' scale)."""
    Mz, E = coef_map(fit.spectrum, fit.filtered.f, len(fit.names))
    with np.errstate(divide="ignore"):
        mag = np.where(R != 0, np.frexp(np.abs(R))[1] + E[None, :], np.iinfo(np.int64).min)
    F = mag.max(axis=1)
    return np.asarray(np.ldexp(R, E[None, :] - F[:, None]) @ Mz)


def coefficient_df(fit: Any) -> FloatArray:
    """Satterthwaite df of every coefficient, shape (n_coef,) (NaN where aliased)."""
    Mz, _ = coef_map(fit.spectrum, fit.filtered.f, len(fit.names))
    out = np.full(len(fit.names), np.nan)
    live = np.flatnonzero(np.abs(Mz).max(axis=1) > 0)
    if live.size:
        out[live] = contrast_df(_parts(fit), Mz[live])
    return out


def htz_test(fit: Any, C: FloatArray, wald: float) -> tuple[float, float, float, float]:
    """(F, δ, df2, p) of clubSandwich's HTZ test of the contrasts ``C`` (rows) given the
    Wald statistic ``wald`` under CR2; p is NaN when df2 ≤ 0 (as clubSandwich)."""
    q = C.shape[0]
    parts = _parts(fit)
    nu = contrast_df(parts, C)[0] if q == 1 else htz_nu(parts, C)
    delta = max((nu - q + 1.0) / nu, 0.0)
    df2 = nu - q + 1.0
    F = delta * wald / q
    p = float(stats.f.sf(F, q, df2)) if df2 > 0 and np.isfinite(F) else float("nan")
    return float(F), float(delta), float(df2), p


def wald_reference(fit: Any, R: FloatArray, wald: float) -> tuple[float, float, FloatArray]:
    """(F, df2, df of each restriction alone) of the HTZ test of R b = r, shape of the last
    (q,): what :meth:`~attnreg.inference.hypotheses.Hypotheses.wald_test` reports under
    ``df="satterthwaite"``."""
    C = restriction_contrasts(fit, R)
    F, _, df2, _ = htz_test(fit, C, wald)
    return F, df2, contrast_df(_parts(fit), C)


def restriction_df(fit: Any, R: FloatArray) -> FloatArray:
    """Satterthwaite df of each restriction (row of R) alone, shape (q,)."""
    return contrast_df(_parts(fit), restriction_contrasts(fit, R))


def overall_reference(fit: Any, wald: float) -> tuple[float, float]:
    """(F, df2) of the HTZ test that every slope is zero, given its Wald statistic W under
    CR2: the contrasts are the components the filter keeps (the slopes are an invertible
    map of them, and the HTZ test does not change under one)."""
    f = fit.filtered.f
    act = np.flatnonzero(f > 0)
    C = np.zeros((act.size, 1 + fit.spectrum.rank))
    C[np.arange(act.size), 1 + act] = 1.0
    F, _, df2, _ = htz_test(fit, C, wald)
    return F, df2
