"""CR2 with absorbed fixed effects against clubSandwich on the dummy-variable ``lm``.

``tests/reference/fe_cr2_r.json`` is written by ``tests/reference/make_fe_cr2.R`` (versions
in its header): ``vcovCR(type = "CR2")`` and ``coef_test(test = "Satterthwaite")`` of
``lm(y ~ x1 + x2 + factor(firm) + factor(year))``, with and without weights, clustered by
firm (a fixed effect nested in the clusters) and by year. Tolerance RTOL_R throughout:
clubSandwich's CR2 is exact linear algebra (no kernel or bandwidth conventions), and the
values agree to about 1e-13.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import attnreg as ar
from tests.conftest import RTOL_R

REF = json.loads((Path(__file__).parents[1] / "reference" / "fe_cr2_r.json").read_text())
DATA = pd.DataFrame(REF["data"])


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("cluster", ["firm", "year"])
def test_equals_club_sandwich_cr2_and_satterthwaite(weighted: bool, cluster: str) -> None:
    case = REF["cases"]["weighted" if weighted else "unweighted"]
    ref = case[cluster]
    fit = ar.attnreg("y ~ x1 + x2 | firm + year", DATA, weights="w" if weighted else None,
                     vcov="cluster", cluster=cluster, type="CR2", df="satterthwaite")
    np.testing.assert_allclose(fit.coef, case["coef"], rtol=RTOL_R)
    np.testing.assert_allclose(fit.vcov.to_numpy(), ref["vcov"], rtol=RTOL_R)
    np.testing.assert_allclose(fit.std_err, ref["se"], rtol=RTOL_R)
    np.testing.assert_allclose(fit.df_coef, ref["df_satterthwaite"], rtol=RTOL_R)
    np.testing.assert_allclose(fit.p_value, ref["p_satterthwaite"], rtol=RTOL_R)
