"""Stock–Yogo (2005) critical values of the Cragg–Donald F statistic, as data.

Stock, J. H. and Yogo, M. (2005), Testing for weak instruments in linear IV regression, in
D. W. K. Andrews and J. H. Stock (eds.), *Identification and Inference for Econometric Models:
Essays in Honor of Thomas Rothenberg*, Cambridge University Press, 80–108: Table 5.1 (2SLS
relative bias, 5/10/20/30 %), Table 5.2 (2SLS size of a nominal 5 % Wald test, 10/15/20/25 %),
Table 5.3 (Fuller-k relative bias), Table 5.4 (LIML size); and the Fuller maximal-bias table
ivreg2 prints with them (Baum, Schaffer and Stillman 2007). The Fuller tables are for
Fuller's ``alpha = 1``. Each table is indexed by K1, the number of endogenous regressors
(1–3 for the 2SLS bias, 1–2 otherwise), and L2, the number of excluded instruments (up to 30,
the published range); the bias tables start at L2 = K1 + 2 (the bias needs two
over-identifying restrictions), the others at L2 = K1. Outside that range there is no value.

The statistic compared with them is the Cragg–Donald F (i.i.d. errors) or, as ivreg2 does
under a robust covariance, the Kleibergen–Paap rk Wald F (the tables are not derived for it).
"""

from __future__ import annotations

import math

import pandas as pd

__all__ = ["MAX_INSTRUMENTS", "TABLES", "critical_value", "stock_yogo"]

#: the largest number of excluded instruments in the published tables
MAX_INSTRUMENTS = 30

# One string per K1 (1, 2, 3), the values for L2 = first, first + 1, ..., 30, where the first
# L2 is K1 + 2 for "tsls_bias" and K1 otherwise.
_TABLES: dict[tuple[str, float], tuple[str, ...]] = {
    ("tsls_bias", 0.05): (
        "13.91 16.85 18.37 19.28 19.86 20.25 20.53 20.74 20.90 21.01 21.10 21.18 21.23 21.28 "
        "21.31 21.34 21.36 21.38 21.39 21.40 21.41 21.41 21.42 21.42 21.42 21.42 21.42 21.42",
        "11.04 13.97 15.72 16.88 17.70 18.30 18.76 19.12 19.40 19.64 19.83 19.98 20.12 20.23 "
        "20.33 20.41 20.48 20.54 20.60 20.65 20.69 20.73 20.76 20.79 20.82 20.84 20.86",
        "9.53 12.20 13.95 15.18 16.10 16.80 17.35 17.80 18.17 18.47 18.73 18.94 19.13 19.29 19.44 "
        "19.56 19.67 19.77 19.86 19.94 20.01 20.07 20.13 20.18 20.23 20.27",
    ),
    ("tsls_bias", 0.10): (
        "9.08 10.27 10.83 11.12 11.29 11.39 11.46 11.49 11.51 11.52 11.52 11.52 11.51 11.50 11.49 "
        "11.48 11.46 11.45 11.44 11.42 11.41 11.40 11.38 11.37 11.36 11.34 11.33 11.32",
        "7.56 8.78 9.48 9.92 10.22 10.43 10.58 10.69 10.78 10.84 10.89 10.93 10.96 10.99 11.00 "
        "11.02 11.03 11.04 11.05 11.05 11.05 11.06 11.06 11.06 11.05 11.05 11.05",
        "6.61 7.77 8.50 9.01 9.37 9.64 9.85 10.01 10.14 10.25 10.33 10.41 10.47 10.52 10.56 10.60 "
        "10.63 10.65 10.68 10.70 10.71 10.73 10.74 10.75 10.76 10.77",
    ),
    ("tsls_bias", 0.20): (
        "6.46 6.71 6.77 6.76 6.73 6.69 6.65 6.61 6.56 6.53 6.49 6.45 6.42 6.39 6.36 6.33 6.31 "
        "6.28 6.26 6.24 6.22 6.20 6.18 6.16 6.14 6.13 6.11 6.09",
        "5.57 5.91 6.08 6.16 6.20 6.22 6.23 6.23 6.22 6.21 6.20 6.19 6.17 6.16 6.14 6.13 6.11 "
        "6.10 6.08 6.07 6.06 6.05 6.03 6.02 6.01 6.00 5.99",
        "4.99 5.35 5.56 5.69 5.78 5.83 5.87 5.90 5.92 5.93 5.94 5.94 5.94 5.94 5.94 5.93 5.93 "
        "5.92 5.92 5.91 5.90 5.90 5.89 5.88 5.88 5.87",
    ),
    ("tsls_bias", 0.30): (
        "5.39 5.34 5.25 5.15 5.07 4.99 4.92 4.86 4.80 4.75 4.71 4.67 4.63 4.59 4.56 4.53 4.51 "
        "4.48 4.46 4.43 4.41 4.39 4.37 4.35 4.34 4.32 4.31 4.29",
        "4.73 4.79 4.78 4.76 4.73 4.69 4.66 4.62 4.59 4.56 4.53 4.50 4.48 4.45 4.43 4.41 4.39 "
        "4.37 4.35 4.33 4.32 4.30 4.29 4.27 4.26 4.24 4.23",
        "4.30 4.40 4.44 4.46 4.46 4.45 4.44 4.42 4.41 4.39 4.37 4.36 4.34 4.32 4.31 4.29 4.28 "
        "4.27 4.25 4.24 4.23 4.21 4.20 4.19 4.18 4.17",
    ),
    ("tsls_size", 0.10): (
        "16.38 19.93 22.30 24.58 26.87 29.18 31.50 33.84 36.19 38.54 40.90 43.27 45.64 48.01 "
        "50.39 52.77 55.15 57.53 59.92 62.30 64.69 67.07 69.46 71.85 74.24 76.62 79.01 81.40 "
        "83.79 86.17",
        "7.03 13.43 16.87 19.45 21.68 23.72 25.64 27.51 29.32 31.11 32.88 34.62 36.36 38.08 39.80 "
        "41.51 43.22 44.92 46.62 48.31 50.01 51.70 53.39 55.07 56.76 58.45 60.13 61.82 63.51",
    ),
    ("tsls_size", 0.15): (
        "8.96 11.59 12.83 13.96 15.09 16.23 17.38 18.54 19.71 20.88 22.06 23.24 24.42 25.61 26.80 "
        "27.99 29.19 30.38 31.58 32.77 33.97 35.17 36.37 37.57 38.77 39.97 41.17 42.37 43.57 "
        "44.78",
        "4.58 8.18 9.93 11.22 12.33 13.34 14.31 15.24 16.16 17.06 17.95 18.84 19.72 20.60 21.48 "
        "22.35 23.22 24.09 24.96 25.82 26.69 27.56 28.42 29.29 30.15 31.02 31.88 32.74 33.61",
    ),
    ("tsls_size", 0.20): (
        "6.66 8.75 9.54 10.26 10.98 11.72 12.48 13.24 14.01 14.78 15.56 16.35 17.14 17.93 18.72 "
        "19.51 20.31 21.10 21.90 22.70 23.50 24.30 25.10 25.90 26.71 27.51 28.31 29.12 29.92 "
        "30.72",
        "3.95 6.40 7.54 8.38 9.10 9.77 10.41 11.03 11.65 12.25 12.86 13.45 14.05 14.65 15.24 "
        "15.83 16.42 17.02 17.61 18.20 18.79 19.38 19.97 20.56 21.15 21.74 22.33 22.92 23.51",
    ),
    ("tsls_size", 0.25): (
        "5.53 7.25 7.80 8.31 8.84 9.38 9.93 10.50 11.07 11.65 12.23 12.82 13.41 14.00 14.60 15.19 "
        "15.79 16.39 16.99 17.60 18.20 18.80 19.41 20.01 20.61 21.22 21.83 22.43 23.04 23.65",
        "3.63 5.45 6.28 6.89 7.42 7.91 8.39 8.85 9.31 9.77 10.22 10.68 11.13 11.58 12.03 12.49 "
        "12.94 13.39 13.84 14.29 14.74 15.19 15.64 16.10 16.55 17.00 17.45 17.90 18.35",
    ),
    ("fuller_bias", 0.05): (
        "24.09 13.46 9.61 7.63 6.42 5.61 5.02 4.58 4.23 3.96 3.73 3.54 3.38 3.24 3.12 3.01 2.92 "
        "2.84 2.76 2.69 2.63 2.58 2.52 2.48 2.43 2.39 2.36 2.32 2.29 2.26",
        "15.50 10.83 8.53 7.16 6.24 5.59 5.10 4.71 4.41 4.15 3.94 3.76 3.60 3.47 3.35 3.24 3.15 "
        "3.06 2.98 2.91 2.85 2.79 2.73 2.68 2.63 2.59 2.55 2.51 2.47",
    ),
    ("fuller_bias", 0.10): (
        "19.36 10.89 7.90 6.37 5.44 4.81 4.35 4.01 3.74 3.52 3.34 3.19 3.06 2.95 2.85 2.76 2.69 "
        "2.62 2.56 2.50 2.45 2.40 2.36 2.32 2.28 2.24 2.21 2.18 2.15 2.12",
        "12.55 8.96 7.15 6.07 5.34 4.82 4.43 4.12 3.87 3.67 3.49 3.35 3.22 3.11 3.01 2.92 2.84 "
        "2.77 2.71 2.65 2.60 2.55 2.50 2.46 2.42 2.38 2.35 2.31 2.28",
    ),
    ("fuller_bias", 0.20): (
        "15.64 9.00 6.61 5.38 4.62 4.11 3.75 3.47 3.25 3.07 2.92 2.80 2.70 2.61 2.53 2.46 2.39 "
        "2.34 2.29 2.24 2.20 2.16 2.13 2.10 2.06 2.04 2.01 1.99 1.96 1.94",
        "9.72 7.18 5.85 5.04 4.48 4.08 3.77 3.53 3.33 3.17 3.04 2.92 2.82 2.73 2.65 2.58 2.52 "
        "2.46 2.41 2.36 2.32 2.28 2.24 2.21 2.18 2.15 2.12 2.09 2.07",
    ),
    ("fuller_bias", 0.30): (
        "12.71 7.49 5.60 4.63 4.03 3.63 3.33 3.11 2.93 2.79 2.67 2.57 2.48 2.41 2.34 2.28 2.23 "
        "2.18 2.14 2.10 2.07 2.04 2.01 1.98 1.95 1.93 1.90 1.88 1.86 1.84",
        "8.03 6.15 5.10 4.44 3.98 3.65 3.39 3.19 3.02 2.88 2.77 2.67 2.58 2.51 2.44 2.38 2.33 "
        "2.28 2.23 2.19 2.16 2.12 2.09 2.06 2.03 2.01 1.98 1.96 1.94",
    ),
    ("fuller_max", 0.05): (
        "23.81 12.38 8.66 6.81 5.71 4.98 4.45 4.06 3.76 3.51 3.31 3.15 3.00 2.88 2.78 2.69 2.61 "
        "2.53 2.47 2.41 2.36 2.31 2.27 2.23 2.19 2.15 2.12 2.09 2.07 2.04",
        "14.19 10.00 7.88 6.60 5.74 5.13 4.66 4.30 4.01 3.77 3.57 3.41 3.26 3.13 3.02 2.92 2.84 "
        "2.76 2.69 2.62 2.56 2.51 2.46 2.42 2.37 2.33 2.30 2.26 2.23",
    ),
    ("fuller_max", 0.10): (
        "19.40 10.14 7.18 5.72 4.85 4.27 3.86 3.55 3.31 3.12 2.96 2.83 2.71 2.62 2.53 2.46 2.39 "
        "2.33 2.28 2.23 2.19 2.15 2.11 2.08 2.05 2.02 1.99 1.97 1.94 1.92",
        "11.92 8.39 6.64 5.60 4.90 4.40 4.03 3.73 3.50 3.31 3.15 3.01 2.89 2.79 2.70 2.62 2.55 "
        "2.49 2.43 2.38 2.33 2.29 2.25 2.21 2.18 2.14 2.11 2.08 2.06",
    ),
    ("fuller_max", 0.20): (
        "15.39 8.16 5.87 4.75 4.08 3.64 3.32 3.08 2.89 2.74 2.62 2.51 2.42 2.35 2.28 2.22 2.17 "
        "2.12 2.08 2.04 2.01 1.98 1.95 1.92 1.89 1.87 1.85 1.83 1.81 1.79",
        "9.41 6.79 5.47 4.66 4.13 3.74 3.45 3.22 3.03 2.88 2.76 2.65 2.56 2.48 2.40 2.34 2.28 "
        "2.23 2.19 2.15 2.11 2.07 2.04 2.01 1.98 1.96 1.93 1.91 1.89",
    ),
    ("fuller_max", 0.30): (
        "12.76 6.97 5.11 4.19 3.64 3.27 3.00 2.80 2.64 2.52 2.41 2.33 2.25 2.19 2.13 2.08 2.04 "
        "2.00 1.96 1.93 1.90 1.87 1.84 1.82 1.80 1.78 1.76 1.74 1.73 1.71",
        "8.01 5.88 4.78 4.12 3.67 3.35 3.10 2.91 2.76 2.63 2.52 2.43 2.35 2.29 2.22 2.17 2.12 "
        "2.08 2.04 2.01 1.97 1.94 1.92 1.89 1.87 1.84 1.82 1.80 1.79",
    ),
    ("liml_size", 0.10): (
        "16.38 8.68 6.46 5.44 4.84 4.45 4.18 3.97 3.81 3.68 3.58 3.50 3.42 3.36 3.31 3.27 3.24 "
        "3.20 3.18 3.21 3.39 3.57 3.68 3.75 3.79 3.82 3.85 3.86 3.87 3.88",
        "7.03 5.44 4.72 4.32 4.06 3.90 3.78 3.70 3.64 3.60 3.58 3.56 3.55 3.54 3.55 3.55 3.56 "
        "3.57 3.58 3.59 3.60 3.62 3.64 3.65 3.67 3.74 3.87 4.02 4.12",
    ),
    ("liml_size", 0.15): (
        "8.96 5.33 4.36 3.87 3.56 3.34 3.18 3.04 2.93 2.84 2.76 2.69 2.63 2.57 2.52 2.48 2.44 "
        "2.41 2.37 2.34 2.32 2.29 2.27 2.25 2.24 2.22 2.21 2.20 2.19 2.18",
        "4.58 3.81 3.39 3.13 2.95 2.83 2.73 2.66 2.60 2.55 2.52 2.48 2.46 2.44 2.42 2.41 2.40 "
        "2.39 2.38 2.38 2.37 2.37 2.37 2.37 2.38 2.38 2.38 2.39 2.39",
    ),
    ("liml_size", 0.20): (
        "6.66 4.42 3.69 3.30 3.05 2.87 2.73 2.63 2.54 2.46 2.40 2.34 2.29 2.25 2.21 2.18 2.14 "
        "2.11 2.09 2.06 2.04 2.02 2.00 1.98 1.96 1.95 1.93 1.92 1.90 1.89",
        "3.95 3.32 2.99 2.78 2.63 2.52 2.43 2.36 2.30 2.25 2.21 2.17 2.14 2.11 2.09 2.07 2.05 "
        "2.03 2.02 2.01 1.99 1.98 1.98 1.97 1.96 1.96 1.95 1.95 1.95",
    ),
    ("liml_size", 0.25): (
        "5.53 3.92 3.32 2.98 2.77 2.61 2.49 2.39 2.32 2.25 2.19 2.14 2.10 2.06 2.03 2.00 1.97 "
        "1.94 1.92 1.90 1.88 1.86 1.84 1.83 1.81 1.80 1.78 1.77 1.76 1.75",
        "3.63 3.09 2.79 2.60 2.46 2.35 2.27 2.20 2.14 2.09 2.05 2.02 1.99 1.96 1.93 1.91 1.89 "
        "1.87 1.86 1.84 1.83 1.81 1.80 1.79 1.78 1.77 1.77 1.76 1.75",
    ),
}


#: The tables: (kind, level) -> one tuple of values per K1, L2 from the first defined onwards.
TABLES: dict[tuple[str, float], tuple[tuple[float, ...], ...]] = {
    key: tuple(tuple(float(v) for v in column.split()) for column in columns)
    for key, columns in _TABLES.items()
}

#: what each table bounds, as ivreg2 labels it (``{p}`` is the level in per cent)
_LABELS = {"tsls_bias": "{p}% maximal IV relative bias", "tsls_size": "{p}% maximal IV size",
           "liml_size": "{p}% maximal LIML size", "fuller_bias": "{p}% maximal Fuller rel. bias",
           "fuller_max": "{p}% Fuller maximum bias"}

#: the tables ivreg2 prints for each estimator (GMM and CUE: the 2SLS ones)
_FOR_METHOD = {"tsls": ("tsls_bias", "tsls_size"), "gmm": ("tsls_bias", "tsls_size"),
               "cue": ("tsls_bias", "tsls_size"), "liml": ("liml_size",),
               "fuller": ("fuller_bias", "fuller_max")}


def critical_value(kind: str, level: float, n_endog: int, n_instruments: int) -> float:
    """One entry of a table: NaN outside its range.

    Parameters
    ----------
    kind : {"tsls_bias", "tsls_size", "liml_size", "fuller_bias", "fuller_max"}
    level : float
        The bias or size bound: 0.05, 0.10, 0.20, 0.30 (bias) or 0.10, 0.15, 0.20, 0.25 (size).
    n_endog : int
        K1, the number of endogenous regressors.
    n_instruments : int
        L2, the number of excluded instruments.

    Returns
    -------
    float

    Examples
    --------
    >>> critical_value("tsls_size", 0.10, 1, 1), critical_value("tsls_bias", 0.05, 1, 3)
    (16.38, 13.91)
    >>> critical_value("tsls_bias", 0.05, 1, 2)  # one over-identifying restriction: none
    nan
    """
    columns = TABLES[(kind, level)]
    first = n_endog + 2 if kind == "tsls_bias" else n_endog
    if not 1 <= n_endog <= len(columns) or not first <= n_instruments <= MAX_INSTRUMENTS:
        return math.nan
    return columns[n_endog - 1][n_instruments - first]


def stock_yogo(method: str, n_endog: int, n_instruments: int) -> pd.Series:
    """The critical values ivreg2 prints for ``method``, labelled as it labels them.

    2SLS (and GMM, CUE): relative bias 5/10/20/30 % and size 10/15/20/25 %; LIML: size;
    Fuller: relative bias and maximal bias (for ``alpha = 1``). Entries outside the
    tables' range are left out: an empty Series when none is available.

    Parameters
    ----------
    method : {"tsls", "liml", "fuller", "gmm", "cue"}
    n_endog : int
    n_instruments : int

    Returns
    -------
    Series, indexed by label (``"10% maximal IV size"``), name ``"critical value"``

    Examples
    --------
    >>> stock_yogo("liml", 1, 2).to_dict()  # doctest: +NORMALIZE_WHITESPACE
    {'10% maximal LIML size': 8.68, '15% maximal LIML size': 5.33,
     '20% maximal LIML size': 4.42, '25% maximal LIML size': 3.92}
    """
    out: dict[str, float] = {}
    for kind in _FOR_METHOD[method]:
        for (k, level) in TABLES:
            if k != kind:
                continue
            value = critical_value(kind, level, n_endog, n_instruments)
            if not math.isnan(value):
                out[_LABELS[kind].format(p=round(100 * level))] = value
    return pd.Series(out, dtype=float, name="critical value")
