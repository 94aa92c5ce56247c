"""Covariance estimators for coefficients of a linear smoother: a registry of estimators.

:data:`VCOV_REGISTRY` maps each ``vcov=`` name to a :class:`CovarianceEstimator`, which
validates its options, computes the middle matrix of the spectral components, gives its
report label and its inference degrees of freedom. This module registers classical and
HC0–HC3; :mod:`attnreg.linear.hac` registers HAC (sandwich's kernels, bandwidths and
prewhitening), :mod:`attnreg.linear.hc45` HC4, HC4m and HC5, and
:mod:`attnreg.linear.cluster` the cluster-robust ones (``"cluster"``, ``"DK"``). A new
covariance is one :func:`register_vcov` call.

One layer for every fit: an estimator that states what it needs of the scores
(:meth:`CovarianceEstimator.score_needs`: cross-products, lagged ones, sums per cluster or
period; :mod:`attnreg.linear.scorestats`) and computes its middle matrix from them
(:meth:`CovarianceEstimator.middle_from_scores`) serves the in-memory fit (the statistics
from every row) and the chunked and dask fits (the statistics merged over their chunks,
:mod:`attnreg.large.covariance`) with the same code. Estimators that need the rows whole
(kernel HAC with bandwidth rules or prewhitening, HC4–HC5, CR2) override :meth:`middle`
instead and are in-memory only.

Every spectral fit is linear in the weighted response ỹ = sqrt(w) y:

    coef = M [c'ỹ ; U'ỹ],     c = sqrt(w)/Σw (intercept part),  U the left singular vectors,

so Var(coef) = M [c U]' Σ [c U] M' for any Cov(ỹ) = Σ. Classical inference uses Σ = σ² I
(then [c U]'[c U] = diag(1/Σw, I) because U ⟂ sqrt(w)); the sandwich estimators plug in
squared residuals (HC0–HC3), a Bartlett-kernel long-run covariance (Newey–West HAC) or
sums of scores per cluster (Σ_g s_g s_g', s_g = Σ_{i∈g} e_i [c_i, U_i]).
For OLS this is exactly (X'WX)⁻¹ and the usual sandwiches; for ridge and PCR it is the
covariance conditional on the chosen λ or k.

Scale. The covariance is computed as V = diag(2^E) V_z diag(2^E) with integer exponents E
(one per coefficient: the response's scale over the column's), so V_z is of the order of
the residual variance of the rescaled response, and standard errors, intervals and the Wald
test are computed from V_z and E: they are right even where an entry of V itself (a square
of the response's scale over a column's) lies outside the float64 range. With E = 0 nothing
changes, and multiplying by powers of two is exact.

The joint test. :func:`wald_f` is b' V⁻¹ b / q for the non-intercept coefficients under the
covariance in use (statsmodels' ``fvalue`` with a ``cov_type``, R's ``lmtest::waldtest`` with
``vcov=``). The slopes are b = B a with a = U'ỹ over the components the filter keeps and B of
full column rank, so b' V⁻¹ b = a' Ω⁻¹ a with Ω the covariance of a (a small positive definite
solve; aliased columns are not in b, and q is the number of components: the rank for OLS and
ridge, k for PCR).
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import numbers
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.linalg as sla

from attnreg._warn import warn_user
from attnreg._typing import FloatArray, IntArray
from attnreg.exceptions import InferenceWarning, OptionError
from attnreg.linear.spectral import Spectrum
from attnreg.linear.scaling import binary_exponents
from attnreg.linear.scorestats import ScoreNeeds, ScoreStats, memory_stats

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
    >>> from attnreg.linear.inference import make_vcov_spec
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


@dataclass(frozen=True)
class MiddleInputs:
    """What a covariance estimator may use of a fit, on the rescaled response.

    Attributes
    ----------
    sigma2 : float
        Residual variance (divided by ``y_scale²``).
    resid_w : ndarray, shape (n_obs,)
        Weighted residuals sqrt(w) e divided by ``y_scale``.
    hat : ndarray, shape (n_obs,)
        Hat values (NaN when the estimator's :attr:`~CovarianceEstimator.needs_hat` is
        False: they are then not computed).
    df_resid : float
        Residual degrees of freedom n − tr(H).
    f : ndarray, shape (rank,) or None
        Filter factors of the fit (None: OLS, all ones).
    """

    sigma2: float
    resid_w: FloatArray
    hat: FloatArray
    df_resid: float
    f: FloatArray | None = None


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
    >>> from attnreg.linear.inference import VCOV_REGISTRY
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
        computed from every row (:func:`~attnreg.linear.scorestats.memory_stats`); an
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
        (:class:`~attnreg.linear.scorestats.ScoreNeeds`), or None when the covariance needs
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
BUILTIN_MODULES = ("attnreg.linear.hac", "attnreg.linear.hc45", "attnreg.linear.cluster")


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
    >>> from attnreg.linear.inference import make_vcov_spec
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


def coef_map(sp: Spectrum, f: FloatArray, n_coef: int) -> tuple[FloatArray, IntArray]:
    """M_z, shape (n_coef, 1 + rank), and E with coef = diag(2^E) M_z [c'ỹ ; U'ỹ].

    ỹ is the spectrum's (rescaled) response, and c = sqrt(w)/Σw. The coefficient map M
    (coef = M [c'ỹ ; U'ỹ] on the response's own scale; aliased rows zero) has row j equal to
    2^(E_j) times row j of M_z / y_scale, with E_j (the response's binary exponent plus that
    of the row's largest entry) chosen so that M_z is of order one: the entries of M itself
    are ratios of the response's scale to the columns' and may lie outside float64.

    Examples
    --------
    >>> import numpy as np
    >>> from statsmodels.datasets import longley
    >>> from attnreg.linear import filters, spectral
    >>> from attnreg.linear.inference import coef_map
    >>> df = longley.load_pandas().data
    >>> X = np.column_stack([np.ones(16), df[["GNP", "UNEMP", "ARMED", "POP", "YEAR"]]])
    >>> sp = spectral.decompose(X, df["TOTEMP"].to_numpy(), intercept=0, weights=None,
    ...                         scaling="sd")
    >>> Mz, E = coef_map(sp, filters.ols_filter(sp.s), 6)
    >>> coef = np.ldexp(Mz @ np.r_[0.0, sp.uty], E)
    >>> print(f"{coef[2]:.4f}")  # the UNEMP slope (the intercept's own part is in c'ỹ)
    -1.9721
    """
    Mz = np.zeros((n_coef, 1 + sp.rank))
    E = np.zeros(n_coef, dtype=np.int64)
    B = sp.V * (f / sp.s)  # (n_kept, rank); M[kept] = B / d
    d = sp.scale[sp.kept]
    big = np.abs(B).max(axis=1, initial=0.0)
    t = np.where(big > 0, binary_exponents(big) - binary_exponents(d), 0)
    Mz[sp.kept, 1:] = B / np.ldexp(d, t)[:, None]  # = (B / d) / 2^t, exactly
    E[sp.kept] = t
    if sp.intercept is not None:
        row = np.r_[1.0, -(sp.center[sp.kept] / d) @ B]  # x̄/d: of order one at any scale
        t0 = int(binary_exponents(np.abs(row).max()))
        Mz[sp.intercept] = np.ldexp(row, -t0)
        E[sp.intercept] = t0
    return Mz, E + sp.y_exponent


def middle_matrix(sp: Spectrum, *, spec: VcovSpec, sigma2: float, resid_w: FloatArray,
                  hat: FloatArray, df_resid: float, f: FloatArray | None = None) -> FloatArray:
    """Covariance of [c'ỹ ; U'ỹ] / y_scale, shape (1 + rank, 1 + rank), under ``spec``.

    ``sigma2`` and ``resid_w`` are on the rescaled response (divided by ``sp.y_scale``).
    Classical: σ² diag(1/Σw, I) (no intercept part without one); HC0–HC3, HAC and the
    cluster-robust estimators: the meat of the sandwich Σ s s' of score sums s = Σ e [c, U],
    with their small-sample factors. ``f`` (the filter factors; None for OLS) is used by
    estimators that need the hat matrix's blocks (CR2).
    """
    inputs = MiddleInputs(sigma2=sigma2, resid_w=resid_w, hat=hat, df_resid=df_resid, f=f)
    return spec.estimator.middle(sp, spec, inputs)


def vcov_scaled(sp: Spectrum, f: FloatArray, n_coef: int,
                middle: FloatArray) -> tuple[FloatArray, IntArray]:
    """V_z and E with Var(coef) = diag(2^E) V_z diag(2^E); NaN rows/columns for aliased ones.

    ``middle`` is :func:`middle_matrix` of the covariance wanted.
    """
    Mz, E = coef_map(sp, f, n_coef)
    V = Mz @ middle @ Mz.T
    dead = np.setdiff1d(np.arange(n_coef), np.r_[sp.kept, [] if sp.intercept is None
                                                   else [sp.intercept]].astype(int))
    V[dead, :] = np.nan
    V[:, dead] = np.nan
    return (V + V.T) / 2.0, E


def scale_back(Vz: FloatArray, E: IntArray) -> FloatArray:
    """diag(2^E) V_z diag(2^E), exactly (inf or 0 only where an entry leaves float64)."""
    with np.errstate(over="ignore", under="ignore"):
        return np.ldexp(Vz, E[:, None] + E[None, :])


def vcov_matrix(sp: Spectrum, f: FloatArray, n_coef: int, *, spec: VcovSpec, sigma2: float,
                resid_w: FloatArray, hat: FloatArray, df_resid: float) -> FloatArray:
    """Covariance of the coefficients, shape (n_coef, n_coef); NaN rows/columns for aliased ones.

    Parameters
    ----------
    sp : Spectrum
    f : ndarray, shape (rank,)
        Filter factors of the fit.
    spec : VcovSpec
    sigma2 : float
        Residual variance (classical only).
    resid_w : ndarray, shape (n_obs,)
        Weighted residuals sqrt(w) e.
    hat : ndarray, shape (n_obs,)
        Hat values (HC2, HC3).
    df_resid : float
        Residual degrees of freedom (HC1 and adjusted HAC scale by n / df_resid).

    Examples
    --------
    >>> import numpy as np
    >>> from statsmodels.datasets import longley
    >>> from attnreg.linear import filters, spectral
    >>> df = longley.load_pandas().data
    >>> X = np.column_stack([np.ones(16), df[["GNP", "UNEMP", "ARMED", "POP", "YEAR"]]])
    >>> y = df["TOTEMP"].to_numpy()
    >>> sp = spectral.decompose(X, y, intercept=0, weights=None, scaling="sd")
    >>> from attnreg.linear.inference import make_vcov_spec, vcov_matrix
    >>> f = filters.ols_filter(sp.s)
    >>> e = y - X @ filters.apply_filter(sp, f, 6).coef
    >>> h = filters.hat_diagonal(sp, f)
    >>> for kind in ("classical", "HC3"):
    ...     V = vcov_matrix(sp, f, 6, spec=make_vcov_spec(kind), sigma2=e @ e / 10,
    ...                     resid_w=e, hat=h, df_resid=10.0)
    ...     print(kind, f"{np.sqrt(V[2, 2]):.4f}")
    classical 0.3861
    HC3 0.7378
    """
    e = sp.y_exponent
    middle = middle_matrix(sp, spec=spec, sigma2=float(np.ldexp(sigma2, -2 * e)),
                           resid_w=np.ldexp(resid_w, -e) if e else resid_w, hat=hat,
                           df_resid=df_resid)
    return scale_back(*vcov_scaled(sp, f, n_coef, middle))


def wald_f(sp: Spectrum, f: FloatArray, coef: FloatArray,
           middle: FloatArray) -> tuple[float, int]:
    """The Wald statistic b' V⁻¹ b / q of the non-intercept coefficients, and q.

    Parameters
    ----------
    sp : Spectrum
    f : ndarray, shape (rank,)
        Filter factors of the fit.
    coef : ndarray, shape (n_coef,)
        The coefficients (as reported: refined for OLS); only the kept ones are used.
    middle : ndarray, shape (1 + rank, 1 + rank)
        :func:`middle_matrix` of the covariance in use.

    Returns
    -------
    statistic : float
        NaN, with an :class:`~attnreg.exceptions.InferenceWarning`, when the covariance of
        the slopes is singular (e.g. HC residuals that vanish on a component).
    q : int
        Number of restrictions: the components the filter keeps (f > 0).

    Examples
    --------
    >>> import numpy as np
    >>> from statsmodels.datasets import longley
    >>> from attnreg.linear import filters, spectral
    >>> from attnreg.linear.inference import make_vcov_spec, middle_matrix, wald_f
    >>> df = longley.load_pandas().data
    >>> X = np.column_stack([np.ones(16), df[["GNP", "UNEMP", "ARMED", "POP", "YEAR"]]])
    >>> y = df["TOTEMP"].to_numpy()
    >>> sp = spectral.decompose(X, y, intercept=0, weights=None, scaling="sd")
    >>> f = filters.ols_filter(sp.s)
    >>> coef = filters.apply_filter(sp, f, 6).coef
    >>> e = y - X @ coef
    >>> mid = middle_matrix(sp, spec=make_vcov_spec("classical"), sigma2=e @ e / 10,
    ...                     resid_w=e, hat=filters.hat_diagonal(sp, f), df_resid=10.0)
    >>> stat, q = wald_f(sp, f, coef, mid)
    >>> print(f"{stat:.1f} on {q}")  # classical OLS: the usual F statistic
    438.8 on 5
    """
    act = np.flatnonzero(f > 0)
    q = int(act.size)
    if not q:
        return float("nan"), 0
    # the components a = U'ỹ / y_scale behind the reported slopes: b = V diag(f/s) a / d
    with np.errstate(over="ignore", invalid="ignore"):
        bd = coef[sp.kept] * sp.scale[sp.kept]
    a = (sp.V[:, act].T @ np.ldexp(bd, -sp.y_exponent)) * (sp.s[act] / f[act])
    omega = middle[1:, 1:][np.ix_(act, act)]
    try:
        factor = sla.cho_factor(omega, lower=True)
    except (np.linalg.LinAlgError, ValueError):
        warn_user("the covariance of the coefficients is singular (or not finite) on the "
                      "components of the fit, so the joint Wald F test is not defined: NaN",
                      InferenceWarning)
        return float("nan"), q
    return float(a @ sla.cho_solve(factor, a)) / q, q
