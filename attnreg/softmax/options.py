"""Argument checking and small helpers for softmax attention regression."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from attnreg._typing import FloatArray
from attnreg.exceptions import DataError, OptionError

#: target bytes of one (heads × chunk × keys) block when the chunk size is automatic:
#: small enough to stay in a core's cache, large enough to amortise per-block overhead
BLOCK_BYTES = 2 * 2**20
_MIN_AUTO_CHUNK = 16
#: the same for the fitter's fused loss-and-gradient pass, whose chunks are the tasks of its
#: worker threads: larger blocks amortise the per-chunk Python and dispatch cost (N = 3,400,
#: 5 heads, one thread: 11.7 s with 16-row chunks, 9.6 s at 2 MiB, 7.2 s at 12 MiB)
TASK_BYTES = 12 * 2**20

VALUES = ("ridge", "y")
KERNELS = ("dot", "distance")
DEVICES = ("cpu", "cuda", "auto")
DTYPES = ("float64", "float32")
KEYS = ("full", "landmarks", "top_k")
LANDMARK_METHODS = ("kmeans", "sample")
#: landmarks of ``keys="landmarks"`` when ``n_keys`` is not given
N_LANDMARKS = 1024
#: neighbours per query of ``keys="top_k"`` when ``n_keys`` is not given: on Concrete (824
#: training rows; three splits × three seeds) 128 lost 0.006 of test R² to the full fit on
#: average, 256 lost 0.0026 (``benchmarks/softmax_landmark_accuracy.py``)
N_TOP_K = 256
#: keys per block of the exact path; a fit with more training rows visits its keys in blocks.
#: Up to it the one-block pass (one exponential per pair) is kept: at 10,200 training rows it
#: took 1.2 s per evaluation against 2.3 s in blocks of 8,192, and its (heads × 16 × N) block
#: is 10 MiB per worker at N = 32,768 (5 heads, float32)
KEY_BLOCK = 32768


@dataclass(frozen=True)
class Options:
    """Validated fitting options (see :func:`attnreg.softmax.fit_softmax`)."""

    heads: int
    lams: tuple[float, ...]
    rank: int | None
    value: str
    kernel: str
    mask_self: bool
    val_frac: float
    max_iter: int
    tol: float
    patience: int
    restarts: int
    seed: int
    device: str
    dtype: torch.dtype
    score_dtype: torch.dtype
    chunk_size: int | None
    init_noise: float
    refit: bool
    threads: int | None
    keys: str = "full"
    n_keys: int = N_LANDMARKS
    landmark_method: str = "kmeans"
    key_block: int = KEY_BLOCK
    landmark_refresh: int = 1


def _choice(name: str, val: Any, valid: tuple[str, ...]) -> str:
    if not isinstance(val, str) or val not in valid:
        raise OptionError(f"{name} must be one of {', '.join(map(repr, valid))}; got {val!r}")
    return val


def _int(name: str, val: Any, lo: int, *, none_ok: bool = False) -> int | None:
    if val is None and none_ok:
        return None
    if isinstance(val, bool) or not isinstance(val, (int, np.integer)) or val < lo:
        extra = " or None" if none_ok else ""
        raise OptionError(f"{name} must be an integer >= {lo}{extra}; got {val!r}")
    return int(val)


def _float(name: str, val: Any, lo: float, hi: float, *, lo_open: bool = False) -> float:
    ok = isinstance(val, (int, float, np.floating)) and not isinstance(val, bool)
    ok = ok and math.isfinite(float(val)) and (float(val) > lo if lo_open else float(val) >= lo)
    if not ok or float(val) > hi:
        left = "(" if lo_open else "["
        raise OptionError(f"{name} must be a number in {left}{lo}, {hi}]; got {val!r}")
    return float(val)


def _lams(lam: Any, grid: tuple[float, ...]) -> tuple[float, ...]:
    if isinstance(lam, str):
        if lam != "auto":
            raise OptionError(f"lam must be a non-negative number or 'auto'; got {lam!r}")
        return grid
    return (_float("lam", lam, 0.0, math.inf),)


def _n_keys(val: Any, keys: Any) -> int:
    """``n_keys``: landmarks (at least 2) or neighbours per query (at least 1); None: the default."""
    if val is None:
        return N_TOP_K if keys == "top_k" else N_LANDMARKS
    return _int("n_keys", val, 1 if keys == "top_k" else 2)  # type: ignore[return-value]


def check_options(**kw: Any) -> Options:
    """Validate the keyword arguments of ``fit_softmax``; raises :class:`OptionError`."""
    dev = _choice("device", kw["device"], DEVICES)
    if dev == "cuda" and not torch.cuda.is_available():
        raise OptionError("device='cuda' but CUDA is not available; use 'cpu' or 'auto'")
    for flag in ("mask_self", "refit"):
        if not isinstance(kw[flag], (bool, np.bool_)):
            raise OptionError(f"{flag} must be True or False; got {kw[flag]!r}")
    return Options(
        heads=_int("heads", kw["heads"], 1),  # type: ignore[arg-type]
        lams=_lams(kw["lam"], kw["lam_grid"]),
        rank=_int("rank", kw["rank"], 1, none_ok=True),
        value=_choice("value", kw["value"], VALUES),
        kernel=_choice("kernel", kw["kernel"], KERNELS),
        mask_self=bool(kw["mask_self"]),
        val_frac=_float("val_frac", kw["val_frac"], 0.0, 0.5, lo_open=True),
        max_iter=_int("max_iter", kw["max_iter"], 1),  # type: ignore[arg-type]
        tol=_float("tol", kw["tol"], 0.0, 1.0),
        patience=_int("patience", kw["patience"], 1),  # type: ignore[arg-type]
        restarts=_int("restarts", kw["restarts"], 1),  # type: ignore[arg-type]
        seed=_int("seed", kw["seed"], 0),  # type: ignore[arg-type]
        device=dev,
        dtype=getattr(torch, _choice("dtype", kw["dtype"], DTYPES)),
        score_dtype=getattr(torch, _choice("score_dtype", kw["score_dtype"], DTYPES)),
        chunk_size=_int("chunk_size", kw["chunk_size"], 1, none_ok=True),
        init_noise=_float("init_noise", kw["init_noise"], 0.0, 10.0),
        refit=bool(kw["refit"]),
        threads=_int("threads", kw["threads"], 1, none_ok=True),
        keys=_choice("keys", kw.get("keys", "full"), KEYS),
        n_keys=_n_keys(kw.get("n_keys"), kw.get("keys", "full")),
        landmark_method=_choice("landmark_method", kw.get("landmark_method", "kmeans"), LANDMARK_METHODS),
        key_block=_int("key_block", kw.get("key_block", KEY_BLOCK), 1),  # type: ignore[arg-type]
        landmark_refresh=_int("landmark_refresh", kw.get("landmark_refresh", 1), 0),  # type: ignore[arg-type]
    )


def as_design(x: Any, n_cols: int | None, name: str = "X") -> FloatArray:
    """A finite float64 (n, P) array; raises :class:`DataError` otherwise."""
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise DataError(f"{name} must be numeric: {exc}") from exc
    if arr.ndim == 1 and n_cols == 1:
        arr = arr.reshape(-1, 1)
    if arr.ndim != 2:
        raise DataError(f"{name} must be 2-dimensional (rows × predictors); got shape {arr.shape}")
    if n_cols is not None and arr.shape[1] != n_cols:
        raise DataError(f"{name} has {arr.shape[1]} columns; the fit has {n_cols} predictors")
    if not np.all(np.isfinite(arr)):
        raise DataError(f"{name} contains non-finite values (NaN or inf)")
    return arr


def as_outcome(y: Any, n_rows: int) -> FloatArray:
    """A finite float64 (n,) array matching the design's rows."""
    try:
        arr = np.asarray(y, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError) as exc:
        raise DataError(f"y must be numeric: {exc}") from exc
    if arr.shape[0] != n_rows:
        raise DataError(f"y has {arr.shape[0]} values but X has {n_rows} rows")
    if not np.all(np.isfinite(arr)):
        raise DataError("y contains non-finite values (NaN or inf)")
    return arr


def split_sizes(n: int, p: int, opts: Options) -> tuple[int, int]:
    """Sizes (train part, validation part); raises :class:`DataError` when too few rows."""
    n_val = math.ceil(opts.val_frac * n)
    need = max(p + 2, opts.heads + 1, 5)
    if n_val < 2 or n - n_val < need:
        raise DataError(
            f"too few rows: {n} training rows leave {n - n_val} for fitting and {n_val} for "
            f"validation (val_frac={opts.val_frac}); need at least 2 validation rows and "
            f"max(P + 2, heads + 1, 5) = {need} fitting rows"
        )
    return n - n_val, n_val


def choose_chunk(chunk_size: int | None, heads: int, n_q: int, n_k: int, itemsize: int,
                 budget: int = BLOCK_BYTES) -> int:
    """Query rows per block: the user's value, else about ``budget`` bytes per block."""
    if chunk_size is not None:
        return max(1, min(int(chunk_size), max(n_q, 1)))
    rows = budget // max(1, heads * n_k * itemsize)
    return int(max(1, min(max(n_q, 1), max(_MIN_AUTO_CHUNK, rows))))


def torch_device(device: str) -> torch.device:
    """Resolve ``"cpu" | "cuda" | "auto"`` to a torch device (auto: CUDA when available)."""
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)
