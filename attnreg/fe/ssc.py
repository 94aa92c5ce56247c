"""Small-sample corrections of cluster-robust covariances with absorbed fixed effects.

Two conventions (``ssc=``):

- ``"fixest"`` (default), fixest's and pyfixest's defaults (``ssc(adj = TRUE, fixef.K =
  "nested", cluster.adj = TRUE, t.df = "min")``): the cluster meat is multiplied by
  (n − 1)/(n − K) with K the slopes plus the fixed-effect parameters *not* nested in a
  cluster dimension (a fixed effect whose every level lies in one cluster counts for one
  parameter, not its level count), and by G/(G − 1) with G the smallest cluster count, for
  every term of a multi-way covariance;
- ``"dummy"``: the covariance of the dummy-variable regression ``y ~ x + C(firm) + ...``
  under sandwich's ``vcovCL(type = "HC1")``: (n − 1)/(n − K) with K every parameter, and
  G_S/(G_S − 1) for each intersection S of the cluster dimensions.

Classical and heteroskedasticity-robust covariances are the dummy-variable regression's under
both (fixest's "iid" and "hetero" are: their K counts every fixed effect).

The fixed-effect parameters are the levels less the redundant ones
(:func:`attnreg.fe.effects.redundant_levels`: one per connected component of the first two
fixed effects, as R fixest counts them for two; one per further fixed effect). pyfixest
subtracts one per fixed effect after the first whatever the components, so the two agree on
connected graphs (where pyfixest is the reference of the tests) and differ by the number of
extra components on a graph that falls apart.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from attnreg._typing import FloatArray, IntArray
from attnreg.exceptions import OptionError
from attnreg.fe.demean import FixedEffects
from attnreg.inference.vcov.registry import VcovSpec, middle_matrix
from attnreg.linear.spectral import Spectrum

__all__ = ["SSC_CHOICES", "check_ssc", "fixest_cluster_middle", "nested_fixed_effects"]

#: The small-sample conventions of ``ssc=``.
SSC_CHOICES = ("fixest", "dummy")


def check_ssc(ssc: Any) -> str:
    """``ssc`` validated; OptionError naming the choices otherwise."""
    if not isinstance(ssc, str) or ssc not in SSC_CHOICES:
        raise OptionError(f"ssc must be one of {', '.join(map(repr, SSC_CHOICES))}, however: "
                          f"{ssc=}")
    return ssc


def _intersection_codes(codes: IntArray) -> list[IntArray]:
    """Each cluster dimension's codes and, for several, their joint codes (as pyfixest)."""
    out = [codes[:, d] for d in range(codes.shape[1])]
    if codes.shape[1] > 1:
        _, joint = np.unique(codes, axis=0, return_inverse=True)
        out.append(joint.reshape(-1).astype(np.int64))
    return out


def nested_fixed_effects(fe: FixedEffects, cluster_codes: IntArray) -> tuple[int, int]:
    """(levels of the nested fixed effects, their number): a fixed effect is nested when
    each of its levels lies in a single cluster of some dimension (or of their intersection).

    Examples
    --------
    >>> fe = FixedEffects.from_columns([[0, 0, 1, 1], [0, 1, 0, 1]], ["firm", "year"])
    >>> nested_fixed_effects(fe, np.array([[0], [0], [1], [1]]))  # clustered by firm
    (2, 1)
    """
    levels, count = 0, 0
    dims = _intersection_codes(np.asarray(cluster_codes, dtype=np.int64))
    for code, n_levels in zip(fe.codes, fe.n_levels, strict=True):
        for cl in dims:
            owner = np.empty(n_levels, dtype=np.int64)
            owner[code] = cl  # one cluster of each level (the last row's)
            if np.array_equal(owner[code], cl):  # every row of the level in that cluster
                levels, count = levels + n_levels, count + 1
                break
    return levels, count


def fixest_cluster_middle(sp: Spectrum, spec: VcovSpec, *, sigma2: float, resid_w: FloatArray,
                          hat: FloatArray, n_params: int, fe: FixedEffects) -> FloatArray:
    """The cluster meat under fixest's small-sample correction (module docstring).

    ``n_params`` is every parameter of the model (slopes and fixed-effect levels not
    redundant); the fixed effects nested in a cluster dimension are taken out of it.
    """
    ids = spec.option("cluster")
    cadjust = bool(spec.option("cadjust"))
    plain = dataclasses.replace(spec, options=tuple(
        (k, False if k == "cadjust" else v) for k, v in spec.options))
    nested_levels, n_nested = nested_fixed_effects(fe, ids.codes)
    k = n_params - nested_levels + n_nested
    meat = middle_matrix(sp, spec=plain, sigma2=sigma2, resid_w=resid_w, hat=hat,
                         df_resid=float(sp.n_obs - k))  # HC1: (n − 1)/(n − K)
    if cadjust:
        g = min(ids.n_clusters)
        meat = meat * (g / (g - 1.0))
    return meat
