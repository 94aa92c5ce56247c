"""Covariances of a chunked fixed-effects fit: the chunked passes, with fixest's cluster rule.

The score passes of :func:`attnreg.large.covariance.chunked_vcov` run on the residualised
chunks (:class:`~attnreg.fe.chunk_spec.AbsorbedSpec`) and, through the fit's residual
degrees of freedom (which count the fixed-effect parameters), give the in-memory fit's
classical, HC0, HC1, HAC, Driscoll–Kraay and cluster covariances under the dummy-variable
convention (``ssc="dummy"``). fixest's convention (``ssc="fixest"``, the default,
:mod:`attnreg.fe.ssc`) leaves the fixed effects nested in a cluster dimension out of K and
multiplies by G/(G − 1) with the smallest G only: which fixed effects are nested is found in
one more pass, over the distinct (combination of levels, cluster ids) of the fitted rows.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from attnreg.fe.chunk_spec import KeySet, cluster_codes, key_part
from attnreg.fe.demean import FixedEffects
from attnreg.fe.ssc import nested_fixed_effects
from attnreg.large.covariance import chunked_vcov, score_stats
from attnreg.large.passes import frames_of

if TYPE_CHECKING:
    from attnreg.fe.chunked_results import ChunkedFixedEffectsResults

__all__ = ["fe_chunked_vcov", "nested_in_clusters", "nested_of_keys"]


def nested_in_clusters(res: ChunkedFixedEffectsResults, cluster: tuple[str, ...],
                       source: Any, progress: bool = False) -> tuple[int, int]:
    """(levels of the fixed effects nested in a cluster dimension, their number), from one
    pass over the distinct (combination, cluster ids) of the fitted rows."""
    spec: Any = res.spec  # an AbsorbedSpec
    if set(cluster) <= set(spec.key_columns):  # the ids are part of the combinations: no pass
        frame = spec.keys.to_frame(index=False)
        table = pd.DataFrame({"combination": np.arange(len(frame)),
                              **{f"cluster:{c}": frame[c].to_numpy() for c in cluster}})
        keys: Any = KeySet(table[spec.in_fit])
    elif hasattr(source, "map_reduce"):
        keys = source.map_reduce(key_part, (spec, cluster), columns=spec.read_columns(cluster),
                                 uses=spec.uses, label="attnreg pass (nested fixed effects)")
    else:
        keys = None
        for frame in frames_of(source, spec, spec.read_columns(cluster),
                               "attnreg pass (nested fixed effects): rows", progress):
            part = key_part(spec, cluster, frame)
            keys = part if keys is None else keys.merge(part)
    assert isinstance(keys, KeySet)
    return nested_of_keys(res, keys, cluster)


def nested_of_keys(res: ChunkedFixedEffectsResults, keys: KeySet, cluster: tuple[str, ...]
                   ) -> tuple[int, int]:
    """(levels of the fixed effects nested in a cluster dimension, their number), from the
    distinct (combination, cluster ids) of the fitted rows."""
    spec: Any = res.spec
    combo, codes = cluster_codes(keys, cluster)
    fe = res.absorbed.fe
    position = np.cumsum(spec.in_fit) - 1  # a combination's row among those in the fit
    rows = FixedEffects(codes=tuple(c[position[combo]] for c in fe.codes),
                        n_levels=fe.n_levels, names=fe.names, levels=fe.levels)
    return nested_fixed_effects(rows, codes)


def fe_chunked_vcov(res: ChunkedFixedEffectsResults, kind: str, ssc: str, *,
                    maxlags: int | None = None, adjust: bool = False, data: Any = None,
                    progress: bool = False, **options: Any) -> ChunkedFixedEffectsResults:
    """``res`` under the covariance ``kind`` and small-sample convention ``ssc`` (module
    notes); arguments as :meth:`ChunkedResults.with_vcov`."""
    out = chunked_vcov(res._with(ssc=ssc), kind, maxlags=maxlags, adjust=adjust, data=data,
                       progress=progress, **options)
    spec = out.vcov_spec
    if spec.kind != "cluster" or ssc != "fixest" or out.stats is None or not out._df_ok:
        return out  # type: ignore[no-any-return]
    estimator = spec.estimator
    needs = estimator.score_needs(spec)
    stats = score_stats(out.score_stats, needs, out.stats)
    source = res.source if data is None else res._reread(data)
    nested_levels, n_nested = nested_in_clusters(out, spec.option("cluster").names, source,
                                                 progress)
    k = int(out.edf) - nested_levels + n_nested
    plain = dataclasses.replace(spec, options=tuple(
        (key, False if key == "cadjust" else v) for key, v in spec.options))
    middle = estimator.middle_from_scores(
        plain, dataclasses.replace(stats, df_resid=float(out.nobs - k)))  # (n − 1)/(n − K)
    if spec.option("cadjust"):
        g = min(spec.option("cluster").n_clusters)
        middle = middle * (g / (g - 1.0))
    return out._with(middle_robust=middle)  # type: ignore[no-any-return]
