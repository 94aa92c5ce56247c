"""Stock–Yogo (2005) critical values: entries spot-checked against the published tables (and
the blocks ivreg2 prints with them), the lookup by (K1 endogenous, L2 excluded instruments),
and the block in the IV summary for the estimator in use."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import attnreg as ar
from attnreg.iv.stock_yogo import MAX_INSTRUMENTS, TABLES, critical_value, stock_yogo

#: (kind, level, K1, L2, value): Stock and Yogo (2005), Table 5.1 (2SLS relative bias),
#: Table 5.2 (2SLS size), Table 5.3 (Fuller relative bias), Table 5.4 (LIML size); the Fuller
#: maximal bias as ivreg2 prints it (Baum, Schaffer and Stillman 2007). Typed here from the
#: published values, apart from the module's data.
PUBLISHED = [
    ("tsls_size", 0.10, 1, 1, 16.38), ("tsls_size", 0.15, 1, 1, 8.96),
    ("tsls_size", 0.20, 1, 1, 6.66), ("tsls_size", 0.25, 1, 1, 5.53),
    ("tsls_size", 0.10, 1, 2, 19.93), ("tsls_size", 0.10, 1, 3, 22.30),
    ("tsls_size", 0.15, 1, 3, 12.83), ("tsls_size", 0.10, 2, 2, 7.03),
    ("tsls_size", 0.10, 2, 6, 21.68), ("tsls_size", 0.25, 2, 30, 18.35),
    ("tsls_bias", 0.05, 1, 3, 13.91), ("tsls_bias", 0.10, 1, 3, 9.08),
    ("tsls_bias", 0.20, 1, 3, 6.46), ("tsls_bias", 0.30, 1, 3, 5.39),
    ("tsls_bias", 0.05, 2, 4, 11.04), ("tsls_bias", 0.05, 3, 5, 9.53),
    ("tsls_bias", 0.10, 3, 30, 10.77), ("liml_size", 0.10, 1, 2, 8.68),
    ("liml_size", 0.25, 2, 2, 3.63), ("fuller_bias", 0.05, 1, 1, 24.09),
    ("fuller_bias", 0.10, 2, 2, 12.55), ("fuller_max", 0.05, 1, 1, 23.81),
    ("fuller_max", 0.30, 1, 1, 12.76),
]


@pytest.mark.parametrize(("kind", "level", "k1", "l2", "value"), PUBLISHED)
def test_published_entries(kind: str, level: float, k1: int, l2: int, value: float) -> None:
    assert critical_value(kind, level, k1, l2) == value  # the tables' two decimals, exactly


def test_every_table_covers_its_range_and_nothing_else() -> None:
    for (kind, level), columns in TABLES.items():
        assert len(columns) == (3 if kind == "tsls_bias" else 2)
        for k1 in range(1, len(columns) + 1):
            first = k1 + 2 if kind == "tsls_bias" else k1
            defined = [critical_value(kind, level, k1, l2) for l2 in range(first, MAX_INSTRUMENTS + 1)]
            assert all(v > 0 for v in defined)
            assert math.isnan(critical_value(kind, level, k1, first - 1))
            assert math.isnan(critical_value(kind, level, k1, MAX_INSTRUMENTS + 1))
        assert math.isnan(critical_value(kind, level, len(columns) + 1, 10))
        assert math.isnan(critical_value(kind, level, 0, 10))


def test_size_tables_rise_with_instruments() -> None:
    """2SLS size distortion grows with the number of instruments (each row above the last)."""
    for level in (0.10, 0.15, 0.20, 0.25):
        for k1 in (1, 2):
            col = [critical_value("tsls_size", level, k1, l2) for l2 in range(k1, 31)]
            assert np.all(np.diff(col) > 0)


def test_the_estimator_picks_the_tables() -> None:
    assert list(stock_yogo("tsls", 1, 3).index) == [
        "5% maximal IV relative bias", "10% maximal IV relative bias",
        "20% maximal IV relative bias", "30% maximal IV relative bias", "10% maximal IV size",
        "15% maximal IV size", "20% maximal IV size", "25% maximal IV size"]
    assert list(stock_yogo("tsls", 1, 2).index) == [  # no bias table below L2 = K1 + 2
        "10% maximal IV size", "15% maximal IV size", "20% maximal IV size", "25% maximal IV size"]
    assert stock_yogo("liml", 2, 2).to_dict() == {
        "10% maximal LIML size": 7.03, "15% maximal LIML size": 4.58,
        "20% maximal LIML size": 3.95, "25% maximal LIML size": 3.63}
    assert stock_yogo("fuller", 1, 1).iloc[[0, 4]].to_dict() == {
        "5% maximal Fuller rel. bias": 24.09, "5% Fuller maximum bias": 23.81}
    assert stock_yogo("gmm", 1, 3).equals(stock_yogo("tsls", 1, 3))
    assert stock_yogo("tsls", 3, 4).empty and stock_yogo("liml", 1, 31).empty


def iv_data(n: int = 300, seed: int = 2) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.normal(size=(n, 6)), columns=["x", "z1", "z2", "z3", "z4", "u"])
    df["d1"] = df.z1 + 0.5 * df.z2 + df.u + rng.normal(size=n)
    df["d2"] = df.z3 - 0.5 * df.z4 + df.u + rng.normal(size=n)
    df["d3"] = df.z2 + df.z4 + rng.normal(size=n)
    df["y"] = 1 + df.x + df.d1 - df.d2 + df.u
    return df


def test_the_summary_prints_ivreg2s_block() -> None:
    fit = ar.attnreg("y ~ x | d1 ~ z1 + z2 + z3", iv_data())
    text = str(fit.summary())
    assert ("  Stock-Yogo weak ID test critical values: 5% maximal IV relative bias      13.91\n"
            "                                           10% maximal IV relative bias      9.08\n"
            ) in text
    assert "                                           10% maximal IV size              22.30\n" in text
    assert "Source: Stock-Yogo (2005); compare the Cragg-Donald F" in text
    assert fit.stock_yogo()["25% maximal IV size"] == 7.80  # Table 5.2, K1 = 1, L2 = 3
    robust = str(fit.with_vcov("HC1").summary())
    assert "compare the Kleibergen-Paap rk Wald F" in robust
    liml = ar.attnreg("y ~ x | d1 ~ z1 + z2 + z3", iv_data(), method="fuller", alpha=4)
    assert "5% Fuller maximum bias" in str(liml.summary())
    assert "NB: the Fuller critical values are for Fuller's alpha = 1" in str(liml.summary())


def test_beyond_the_tables_says_not_available() -> None:
    fit = ar.attnreg("y ~ x | d1 + d2 + d3 ~ z1 + z2 + z3 + z4", iv_data())
    assert fit.stock_yogo().empty
    assert ("Stock-Yogo weak ID test critical values: not available for 3 endogenous "
            "regressor(s) and 4 excluded instrument(s) (beyond the tables)") in str(fit.summary())
