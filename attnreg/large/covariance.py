"""A chunked fit's covariance: the registry's estimator, fed by one more pass over the rows.

:func:`chunked_vcov` has no covariance formula of its own. It binds the estimator of
:data:`~attnreg.inference.vcov.registry.VCOV_REGISTRY` to the fit
(:meth:`~attnreg.inference.vcov.registry.CovarianceEstimator.bind_streamed`), asks it what it needs
of the scores (:meth:`~attnreg.inference.vcov.registry.CovarianceEstimator.score_needs`), runs the
pass that accumulates exactly that (:func:`attnreg.large.passes.run_pass`: cross-products,
Bartlett-lagged ones, score sums per cluster or period), turns the merged partial into
:class:`~attnreg.inference.vcov.scorestats.ScoreStats` and lets the estimator compute its middle
matrix (:meth:`~attnreg.inference.vcov.registry.CovarianceEstimator.middle_from_scores`), as it
does for an in-memory fit. A covariance registered once therefore works for both.

Examples
--------
>>> import numpy as np, pandas as pd
>>> import attnreg as ar
>>> rng = np.random.default_rng(1)
>>> df = pd.DataFrame({"x": rng.normal(size=200), "g": rng.integers(0, 8, 200)})
>>> df["y"] = df.x + rng.normal(size=200)
>>> fit = ar.attnreg("y ~ x", df, chunk_rows=64)
>>> mem = ar.attnreg("y ~ x", df)
>>> a = chunked_vcov(fit, "cluster", cluster="g").std_err
>>> bool(np.allclose(a, mem.with_vcov("cluster", cluster="g").std_err, rtol=1e-10))
True
"""

from __future__ import annotations

import dataclasses
from typing import Any

from attnreg.exceptions import OptionError
from attnreg.large.meat import MeatPart
from attnreg.large.passes import pass_plan, run_pass
from attnreg.inference.vcov.registry import VcovSpec, check_vcov_options, get_vcov, split_df
from attnreg.inference.vcov.scorestats import ScoreNeeds, ScoreStats

__all__ = ["check_chunked_vcov", "check_vcov_chunked", "chunked_vcov", "score_stats"]


def check_chunked_vcov(name: str, checked: dict[str, Any]) -> None:
    """OptionError for a covariance (or an option of it) that needs every row, before any
    pass over them (the estimator's
    :meth:`~attnreg.inference.vcov.registry.CovarianceEstimator.check_streamed`)."""
    get_vcov(name).check_streamed(split_df(checked)[0])


def score_stats(base: ScoreStats, needs: ScoreNeeds, part: MeatPart) -> ScoreStats:
    """``base`` (the fit's sizes and σ²) with the scores' sums of a pass's merged ``part``
    (group sums in sorted key order where ``needs.ordered``)."""
    sums = tuple((s.sort_index() if needs.ordered else s).to_numpy() for s in part.sums)
    return dataclasses.replace(base, cross=part.meat if needs.cross else None, sums=sums)


def chunked_vcov(res: Any, kind: str = "classical", *, maxlags: int | None = None,
                 adjust: bool = False, data: Any = None, progress: bool = False,
                 **options: Any) -> Any:
    """``res`` (a :class:`~attnreg.large.results.ChunkedResults`) under the covariance
    ``kind``, from one more pass over its rows; arguments as its ``with_vcov``.

    Raises
    ------
    OptionError
        An unknown covariance or option, one that needs every row (before any work), a
        cluster or time column the data lacks, or no source to read.
    """
    options, df = split_df(options)  # df=np.inf: z and chi-squared tests (not an option)
    checked = check_vcov_options(kind, maxlags=maxlags, adjust=adjust, **options)
    estimator = get_vcov(kind)
    check_chunked_vcov(estimator.name, checked)
    source = res.source if data is None else res._reread(data)
    if source is None:
        if estimator.classical and res.stats is not None:
            return res._with(vcov_spec=VcovSpec(estimator.name, df=df), middle_robust=None)
        raise OptionError(f"with_vcov({kind!r}) reads the rows again, but this fit does not "
                          f"keep its source ({res.source_description}): pass data=")
    spec = estimator.bind_streamed(checked, n_obs=res.nobs)
    needs = estimator.score_needs(spec)
    assert needs is not None  # check_streamed refused the others
    groups = tuple(tuple(needs.keys[i] for i in dims) for dims in needs.groups)
    for col in dict.fromkeys(c for g in groups for c in g):
        if col not in source.columns:
            raise OptionError(f"{estimator.name} column {col!r} is not a column of the data "
                              f"({source.description})")
    plan = pass_plan(res, estimator.name if needs.cross or groups else "none", needs.maxlags,
                     groups, residuals=needs.residuals, cross=needs.cross)
    part = run_pass(plan, source, progress=progress)
    base = res._with(stats=part)  # the exact RSS of this pass
    stats = score_stats(base.score_stats, needs, part)
    spec = estimator.bind_stats(spec, stats)
    middle = estimator.middle_from_scores(spec, stats) if needs.cross or groups else None
    # df=np.inf: z and chi-squared tests, as the in-memory fit's (split_df)
    return base._with(vcov_spec=dataclasses.replace(spec, df=df), middle_robust=middle)


def check_vcov_chunked(checked: dict[str, Any]) -> None:
    """A covariance the chunk passes cannot compute (``checked``: a method's checked options),
    refused before the first pass."""
    vcov = checked.get("vcov", "classical")
    check_chunked_vcov(get_vcov(vcov).name, check_vcov_options(
        vcov, maxlags=checked.get("maxlags"), **checked.get("vcov_options", {})))
