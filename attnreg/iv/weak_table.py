"""The weak-instrument statistics of :class:`attnreg.iv.weak.WeakIV` as one table of numbers."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from attnreg.iv.weak import WeakIV

__all__ = ["WEAK_COLUMNS", "weak_iv_table"]

WEAK_COLUMNS = ["statistic", "df1", "df2", "p-value"]
_NA = float("nan")


def weak_iv_table(wk: WeakIV, endog_names: Sequence[str]) -> pd.DataFrame:
    """One row per statistic: value, degrees of freedom and p-value where they are defined.

    Per endogenous regressor ``d``: ``partial R2 (d)``; ``first-stage F (d)`` on
    ``(l, n - L)``; ``robust first-stage F (d)`` (Wald / l, p-value from χ²(l)); and
    ``Sanderson-Windmeijer F (d)`` on ``(l - k2 + 1, n - L)``. Then ``Cragg-Donald F`` and
    ``Kleibergen-Paap rk Wald F`` (compared with Stock–Yogo's tables: no p-value),
    ``Kleibergen-Paap rk LM`` (χ²(l - k2 + 1), under-identification), and with one endogenous
    regressor the ``effective F`` and its 5 % ``effective F critical value``.

    Returns
    -------
    DataFrame, shape (4 k2 + 3 or 4 k2 + 5, 4)
    """
    nz, dfd = wk.df
    k2 = len(endog_names)
    q = nz - k2 + 1
    rows: dict[str, list[float]] = {}
    for j, name in enumerate(endog_names):
        fc, fr, sw = float(wk.f_classical[j]), float(wk.f_robust[j]), float(wk.sw_f[j])
        rows[f"partial R2 ({name})"] = [float(wk.partial_r2[j]), _NA, _NA, _NA]
        rows[f"first-stage F ({name})"] = [fc, nz, dfd, float(stats.f.sf(fc, nz, dfd))]
        rows[f"robust first-stage F ({name})"] = [fr, nz, _NA, float(stats.chi2.sf(fr * nz, nz))]
        rows[f"Sanderson-Windmeijer F ({name})"] = [sw, q, dfd, float(stats.f.sf(sw, q, dfd))]
    rows["Cragg-Donald F"] = [wk.cragg_donald_f, nz, dfd, _NA]
    rows["Kleibergen-Paap rk Wald F"] = [wk.kp_rk_wald_f, nz, dfd, _NA]
    rows["Kleibergen-Paap rk LM"] = [wk.kp_rk_lm, q, _NA, wk.kp_rk_lm_pvalue]
    if not np.isnan(wk.effective_f):
        rows["effective F"] = [wk.effective_f, wk.k_eff, _NA, _NA]
        rows["effective F critical value"] = [wk.effective_f_cv, wk.k_eff, _NA, _NA]
    return pd.DataFrame.from_dict(rows, orient="index", columns=WEAK_COLUMNS)
