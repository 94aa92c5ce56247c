"""Covariance estimators for coefficients of a linear smoother: a registry of estimators.

:data:`VCOV_REGISTRY` maps each ``vcov=`` name to a :class:`CovarianceEstimator`, which
validates its options, computes the middle matrix of the spectral components, gives its
report label and its inference degrees of freedom. This module registers classical and
HC0–HC3; :mod:`attnreg.inference.vcov.hac` registers HAC (sandwich's kernels, bandwidths and
prewhitening), :mod:`attnreg.inference.vcov.hc45` HC4, HC4m and HC5, and
:mod:`attnreg.inference.vcov.cluster` the cluster-robust ones (``"cluster"``, ``"DK"``). A new
covariance is one :func:`register_vcov` call.

One layer for every fit: an estimator that states what it needs of the scores
(:meth:`CovarianceEstimator.score_needs`: cross-products, lagged ones, sums per cluster or
period; :mod:`attnreg.inference.vcov.scorestats`) and computes its middle matrix from them
(:meth:`CovarianceEstimator.middle_from_scores`) serves the in-memory fit (the statistics
from every row) and the chunked and dask fits (the statistics merged over their chunks,
:mod:`attnreg.large.covariance`) with the same code. Estimators that need the rows whole
(kernel HAC with bandwidth rules or prewhitening, HC4–HC5, CR2) override :meth:`middle`
instead and are in-memory only.

The coordinates they compute in (a spectral fit's components, exactly rescaled) and the
maps to the coefficients are in :mod:`attnreg.inference.vcov.vcov_coords`.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import numbers
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from attnreg._typing import FloatArray, IntArray
from attnreg.exceptions import OptionError
from attnreg.inference.vcov.scorestats import ScoreNeeds, ScoreStats, memory_stats
from attnreg.inference.vcov.vcov_coords import (
    MiddleInputs,
    coef_map,
    middle_matrix,
    scale_back,
    vcov_matrix,
    vcov_scaled,
    wald_f,
)

if TYPE_CHECKING:
    from attnreg.linear.spectral import Spectrum

#: The coordinates' functions are in :mod:`attnreg.inference.vcov.vcov_coords` (imported here for
#: the callers that know them from this module).
__all__ = ["BUILTIN_MODULES", "VCOV_REGISTRY", "CovarianceEstimator", "MiddleInputs", "VcovSpec",
           "check_lags", "check_vcov_options", "coef_map", "get_vcov", "make_vcov_spec",
           "middle_matrix", "register_vcov", "scale_back", "split_df", "vcov_matrix",
           "vcov_names", "vcov_scaled", "wald_f"]

#: The covariance estimators by name (and alias): one :class:`CovarianceEstimator` each.
#: A new covariance is one :func:`register_vcov` call, never another string comparison.
VCOV_REGISTRY: dict[str, CovarianceEstimator] = {}


@dataclass(frozen=True)
class VcovSpec:
    """A covariance choice: the estimator's name and its validated options.

    Attributes
    ----------
    kind : str
        A name in :data:`VCOV_REGISTRY` (its canonical name, never an alias).
    maxlags : int or None
        HAC and Driscoll–Kraay truncation lag (Bartlett kernel weights 1 − l/(maxlags+1)).
    adjust : bool
        HAC only: multiply by n/(n − df) (sandwich's ``adjust=TRUE``).
    options : tuple of (str, object) pairs
        The estimator's other options (cluster ids, small-sample type, ...), name-sorted;
        read them with :meth:`option`.
    df : float or None
        ``inf`` when asked for with ``df=np.inf``: z and χ² tests under any covariance (as
        ``lmtest::coeftest(fit, vcov. = V, df = Inf)``); None: the estimator's own df.

    Examples
    --------
    >>> from attnreg.inference.vcov.registry import make_vcov_spec
    >>> spec = make_vcov_spec("HAC", maxlags=3)
    >>> spec.kind, spec.maxlags, spec.estimator.name
    ('HAC', 3, 'HAC')
    """

    kind: str = "classical"
    maxlags: int | None = None
    adjust: bool = False
    options: tuple[tuple[str, Any], ...] = field(default=(), repr=False)
    df: float | None = field(default=None, repr=False)

    @property
    def estimator(self) -> CovarianceEstimator:
        """The registered estimator of :attr:`kind`."""
        return get_vcov(self.kind)

    def option(self, name: str, default: Any = None) -> Any:
        """The value of the estimator option ``name`` (``default`` when not set)."""
        return dict(self.options).get(name, default)

    def label(self, fit: Any = None) -> str:
        """Short description used in reports (the estimator's :meth:`~CovarianceEstimator.label`,
        or :meth:`~CovarianceEstimator.label_fit` with what it chose on ``fit``, e.g. a HAC
        bandwidth; with ``; z and chi-squared tests`` under ``df=np.inf``)."""
        est = self.estimator
        text = est.label(self) if fit is None else est.label_fit(self, fit)
        if self.df is None:
            return text
        # an estimator's own df clause ("; t and F on 4 df") no longer applies
        return text.split("; t and F")[0] + "; z and chi-squared tests"

    def df_inference(self, df_resid: float) -> float:
        """Degrees of freedom of t and F under this covariance (given the residual df);
        ``inf`` (normal and χ² reference distributions) under ``df=np.inf``."""
        if self.df is not None:
            return self.df
        return self.estimator.df_inference(self, df_resid)


class CovarianceEstimator:
    """One covariance estimator of the coefficients, as the spectral machinery uses it.

    A subclass sets :attr:`name` (and :attr:`aliases`, :attr:`option_names`) and
    implements :meth:`score_needs` and :meth:`middle_from_scores` (then it works for
    in-memory, chunked and dask fits), or :meth:`middle` alone (in-memory fits only), and
    :meth:`label`; :meth:`check` validates the options before any work, :meth:`bind`
    resolves what needs the data (cluster ids, default lags), :meth:`bind_streamed` and
    :meth:`bind_stats` do that for a fit that keeps no rows (before and after its pass),
    and :meth:`df_inference` and :meth:`adjust_vcov` may be overridden. Register an instance
    with :func:`register_vcov`.

    Examples
    --------
    >>> from attnreg.inference.vcov.registry import VCOV_REGISTRY
    >>> VCOV_REGISTRY["HC3"].label(VCOV_REGISTRY["HC3"].bind({}, n_obs=10))
    'heteroskedasticity-robust HC3'
    """

    #: The ``vcov=`` / ``with_vcov`` name.
    name: str = ""
    #: Other names accepted for it.
    aliases: tuple[str, ...] = ()
    #: Options it accepts (keyword arguments of ``with_vcov``).
    option_names: tuple[str, ...] = ()
    #: Whether this is the classical σ² (X'WX)⁻¹ (R's F test applies).
    classical: bool = False
    #: Whether :meth:`middle` reads ``inputs.hat`` (the hat values are computed only then;
    #: otherwise ``inputs.hat`` is NaN).
    needs_hat: bool = True
    #: Why options for which :meth:`score_needs` gives None are refused by a chunked fit
    #: (empty: a message naming the covariances it computes).
    streamed_refusal: str = ""

    def check(self, options: dict[str, Any]) -> dict[str, Any]:
        """Validate the options (no data needed); OptionError names the offending one."""
        unknown = sorted(k for k, v in options.items() if k not in self.option_names
                         and v is not None and not (k == "adjust" and v is False))
        if unknown:
            takes = (f"vcov {self.name!r} takes " + ", ".join(self.option_names)
                     if self.option_names else f"vcov {self.name!r} takes no options")
            given = ", ".join(f"{k}={options[k]!r}" for k in unknown)
            raise OptionError(f"{', '.join(unknown)} do(es) not apply to vcov {self.name!r} "
                              f"({takes}), however: {given}")
        return {k: v for k, v in options.items() if k in self.option_names}

    def bind(self, options: dict[str, Any], *, n_obs: int | None = None,
             design: Any = None) -> VcovSpec:
        """The :class:`VcovSpec` of checked ``options`` for a fit of ``n_obs`` rows."""
        return VcovSpec(self.name, options=tuple(sorted(options.items())))

    def middle(self, sp: Spectrum, spec: VcovSpec, inputs: MiddleInputs) -> FloatArray:
        """Covariance of [c'ỹ ; U'ỹ] / y_scale, shape (1 + rank, 1 + rank).

        By default :meth:`middle_from_scores` of the statistics :meth:`score_needs` asks for,
        computed from every row (:func:`~attnreg.inference.vcov.scorestats.memory_stats`); an
        estimator that needs the rows themselves (a VAR of the scores, blocks of the hat
        matrix) overrides it.
        """
        needs = self.score_needs(spec)
        if needs is None:
            raise NotImplementedError(f"vcov {self.name!r} implements neither middle() nor "
                                      "score_needs()")
        stats = memory_stats(sp, needs, sigma2=inputs.sigma2, resid_w=inputs.resid_w,
                             hat=inputs.hat, df_resid=inputs.df_resid)
        return self.middle_from_scores(spec, stats)

    # ---------------------------------------------------------------- score statistics
    def score_needs(self, spec: VcovSpec) -> ScoreNeeds | None:
        """What :meth:`middle_from_scores` needs of the scores under ``spec``
        (:class:`~attnreg.inference.vcov.scorestats.ScoreNeeds`), or None when the covariance needs
        every row (then only :meth:`middle` computes it, and a chunked fit refuses it)."""
        return None

    def middle_from_scores(self, spec: VcovSpec, stats: ScoreStats) -> FloatArray:
        """The middle matrix, shape (1 + rank, 1 + rank), from the score statistics that
        :meth:`score_needs` asked for (in memory or merged over chunks)."""
        raise NotImplementedError(f"vcov {self.name!r} is computed from the rows (middle())")

    @property
    def streamed(self) -> bool:
        """Whether a fit that keeps only score statistics (chunked, dask) can use it."""
        return type(self).score_needs is not CovarianceEstimator.score_needs

    def check_streamed(self, options: dict[str, Any]) -> None:
        """OptionError, before any pass over the rows, when the checked ``options`` need
        every row (which a chunked fit cannot revisit): :attr:`streamed_refusal`, or a
        message naming the covariances to use instead."""
        if self.streamed and self.score_needs(
                self.bind_streamed(options, n_obs=None)) is not None:
            return
        if self.streamed_refusal:
            raise OptionError(self.streamed_refusal)
        usable = ", ".join(repr(e.name) for e in dict.fromkeys(VCOV_REGISTRY.values())
                           if e.streamed)
        raise OptionError(f"vcov {self.name!r} is not computed for a chunked fit (it needs "
                          f"every row at once); use one of {usable} or fit the data in memory")

    def bind_streamed(self, options: dict[str, Any], *, n_obs: int | None) -> VcovSpec:
        """The :class:`VcovSpec` of checked ``options`` for a fit that keeps no rows (before
        its pass); :meth:`bind` without the design unless overridden (cluster ids are then
        the column names a pass reads)."""
        return self.bind(options, n_obs=n_obs)

    def bind_stats(self, spec: VcovSpec, stats: ScoreStats) -> VcovSpec:
        """``spec`` completed with what the pass found (the number of clusters or periods, a
        lag chosen from them); unchanged unless overridden."""
        return spec

    def label(self, spec: VcovSpec) -> str:
        """Short description used in reports."""
        return self.name

    def label_fit(self, spec: VcovSpec, fit: Any) -> str:
        """The description for a given fit (what a data-driven rule chose); :meth:`label`
        unless overridden."""
        return self.label(spec)

    def df_inference(self, spec: VcovSpec, df_resid: float) -> float:
        """Degrees of freedom of t and F: the residual df unless overridden."""
        return df_resid

    def adjust_vcov(self, spec: VcovSpec, Vz: FloatArray, E: IntArray) -> FloatArray:
        """A final correction of V_z (e.g. an eigenvalue fix); identity by default."""
        return Vz


def register_vcov(estimator: CovarianceEstimator) -> CovarianceEstimator:
    """Add ``estimator`` to :data:`VCOV_REGISTRY` under its name and aliases."""
    for name in (estimator.name, *estimator.aliases):
        VCOV_REGISTRY[name] = estimator
    return estimator


def vcov_names() -> tuple[str, ...]:
    """The canonical names of the registered covariance estimators, in registration order."""
    return tuple(dict.fromkeys(e.name for e in VCOV_REGISTRY.values()))


#: Modules whose import registers further built-in estimators (loaded on first lookup, so
#: that they may themselves import this module).
BUILTIN_MODULES = ("attnreg.inference.vcov.hac", "attnreg.inference.vcov.hc45",
                   "attnreg.inference.vcov.cluster")


def get_vcov(kind: Any) -> CovarianceEstimator:
    """The estimator registered as ``kind``; OptionError listing the valid names otherwise."""
    for module in BUILTIN_MODULES:
        importlib.import_module(module)  # registers "HAC", "HC4"-"HC5", "cluster", "DK"
    if not isinstance(kind, str) or kind not in VCOV_REGISTRY:
        names = ", ".join(map(repr, VCOV_REGISTRY))
        same = [k for k in VCOV_REGISTRY if isinstance(kind, str) and k.lower() == kind.lower()]
        hint = f"; did you mean {same[0]!r} (names are case-sensitive)?" if same else ""
        raise OptionError(f"vcov type must be one of {names}, however: {kind=}{hint}")
    return VCOV_REGISTRY[kind]


def split_df(options: dict[str, Any]) -> tuple[dict[str, Any], float | None]:
    """The options without a numeric ``df`` and that df (``inf``; None when not given).

    ``df=np.inf`` asks for z and χ² tests under any covariance; a text ``df`` (the cluster
    estimators' ``"cluster"`` / ``"residual"``) stays with the estimator's options.
    """
    df = options.get("df")
    if df is None or isinstance(df, str):
        return options, None
    if isinstance(df, bool) or not isinstance(df, numbers.Real) or not math.isinf(df) or df < 0:
        raise OptionError(f"df must be np.inf (z and chi-squared tests) or, for a "
                          f"cluster-robust covariance, 'cluster' or 'residual', however: {df=}")
    return {k: v for k, v in options.items() if k != "df"}, math.inf


def check_vcov_options(kind: Any, **options: Any) -> dict[str, Any]:
    """Validate a covariance request before any work (no data needed); the checked options
    (with ``df=inf`` when it was asked for)."""
    options, df = split_df(options)
    checked = get_vcov(kind).check(dict(options))
    return checked if df is None else {**checked, "df": df}


def make_vcov_spec(kind: str, *, maxlags: int | None = None, adjust: bool = False,
                   n_obs: int | None = None, design: Any = None, **options: Any) -> VcovSpec:
    """Validate a covariance request and bind it to a fit's rows; the HAC default lag is
    floor(4 (n/100)^(2/9)).

    Parameters
    ----------
    kind : str
        A name in :data:`VCOV_REGISTRY` (``"classical"``, ``"HC0"``–``"HC3"``, ``"HAC"``,
        ``"cluster"``, ``"DK"``, ...).
    maxlags, adjust
        HAC (and Driscoll–Kraay) options.
    n_obs : int, optional
        Rows of the fit.
    design : Design, optional
        The fit's design (cluster ids given as column names are looked up in its data).
    **options
        The estimator's other options (``cluster=``, ``type=``, ``time=``, ...), and
        ``df=np.inf`` for z and χ² tests under any covariance.

    Examples
    --------
    >>> from attnreg.inference.vcov.registry import make_vcov_spec
    >>> make_vcov_spec("HAC", n_obs=16)
    VcovSpec(kind='HAC', maxlags=2, adjust=False)
    >>> make_vcov_spec("HC3").label()
    'heteroskedasticity-robust HC3'
    """
    estimator = get_vcov(kind)
    options, df = split_df(options)
    checked = estimator.check({"maxlags": maxlags, "adjust": adjust, **options})
    spec = estimator.bind(checked, n_obs=n_obs, design=design)
    return spec if df is None else dataclasses.replace(spec, df=df)


# ------------------------------------------------------------------------------ estimators

class _Classical(CovarianceEstimator):
    name, classical, needs_hat = "classical", True, False

    def score_needs(self, spec: VcovSpec) -> ScoreNeeds:
        return ScoreNeeds()  # σ² and Σw alone

    def middle_from_scores(self, spec: VcovSpec, stats: ScoreStats) -> FloatArray:
        middle = np.eye(1 + stats.rank) * stats.sigma2
        middle[0, 0] = stats.sigma2 / stats.sum_w if stats.intercept else 0.0
        return middle

    def label(self, spec: VcovSpec) -> str:
        return "classical (iid errors)"


class _HC(CovarianceEstimator):
    """White's HC0–HC3: the meat of squared (scaled) residuals; HC1 times n/df_resid."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.needs_hat = name in ("HC2", "HC3")

    def score_needs(self, spec: VcovSpec) -> ScoreNeeds:
        return ScoreNeeds(residuals=self.name if self.needs_hat else "plain", cross=True)

    def middle_from_scores(self, spec: VcovSpec, stats: ScoreStats) -> FloatArray:
        assert stats.cross is not None
        middle = np.array(stats.cross)
        if self.name == "HC1":
            middle *= stats.n_obs / stats.df_resid if stats.df_resid > 0 else np.nan
        return middle

    def label(self, spec: VcovSpec) -> str:
        return f"heteroskedasticity-robust {self.name}"


def check_lags(maxlags: Any, name: str = "maxlags") -> int:
    """``maxlags`` as a non-negative int; OptionError otherwise."""
    if not isinstance(maxlags, (int, np.integer)) or isinstance(maxlags, bool) or maxlags < 0:
        raise OptionError(f"{name} must be a non-negative integer, however: {name}={maxlags!r}")
    return int(maxlags)


for _estimator in (_Classical(), *(_HC(k) for k in ("HC0", "HC1", "HC2", "HC3"))):
    register_vcov(_estimator)
