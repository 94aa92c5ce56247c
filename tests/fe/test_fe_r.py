"""Fixed-effects fits against R: the dummy-variable ``lm`` with sandwich covariances and plm's
two-way within estimator.

The reference numbers and their data are in ``tests/reference/fe_r.json``, written by
``tests/reference/make_fe.R`` (versions in its header). Tolerances: RTOL_R for coefficients,
fit statistics and classical standard errors, RTOL_R_VCOV for the sandwich ones (as for the
other covariances against sandwich).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import attnreg as ar
from tests.conftest import RTOL_R, RTOL_R_VCOV

REF = json.loads((Path(__file__).parents[1] / "reference" / "fe_r.json").read_text())["cases"]
FORMULA = "y ~ x1 + x2 | firm + year"


def fe_r_fit(case: str, **options: object) -> object:
    ref = REF[case]
    df = pd.DataFrame(ref["data"])
    return ar.attnreg(FORMULA, df, weights="w" if ref["weighted"] else None, ssc="dummy",
                      **options)


@pytest.mark.parametrize("case", ["grunfeld", "weighted", "movers"])
def test_equals_lm_with_dummies_and_sandwich(case: str) -> None:
    ref = REF[case]["dummy"]
    fit = fe_r_fit(case)
    np.testing.assert_allclose(fit.coef, ref["coef"], rtol=RTOL_R)
    np.testing.assert_allclose([fit.df_resid, fit.sigma, fit.r_squared, fit.adj_r_squared],
                               [ref["df_resid"], ref["sigma"], ref["r_squared"],
                                ref["adj_r_squared"]], rtol=RTOL_R)
    np.testing.assert_allclose(fit.fitted, ref["fitted"], rtol=RTOL_R)
    np.testing.assert_allclose(fit.std_err, ref["se_classical"], rtol=RTOL_R)
    kinds = [("se_HC1", "HC1", {}), ("se_firm", "cluster", {"cluster": "firm"}),
             ("se_firm_year", "cluster", {"cluster": "firm + year", "fix": False})]
    if case != "movers":  # leverages near 1 there: sandwich warns HC3 is unstable
        kinds.append(("se_HC3", "HC3", {}))
    for key, kind, options in kinds:
        np.testing.assert_allclose(fit.with_vcov(kind, **options).std_err, ref[key],
                                   rtol=RTOL_R_VCOV, err_msg=key)


def test_equals_plm_two_way_within() -> None:
    ref = REF["grunfeld"]["within"]
    fit = fe_r_fit("grunfeld")
    np.testing.assert_allclose(fit.coef, ref["coef"], rtol=RTOL_R)
    np.testing.assert_allclose(fit.vcov.to_numpy(), ref["vcov"], rtol=RTOL_R)
    np.testing.assert_allclose(fit.within_r_squared, ref["within_r_squared"], rtol=RTOL_R)
