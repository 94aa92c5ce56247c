"""The paper's published numbers, as data: Table 1 and the ablation grid (PAPER.md §2.4, §3.2).

Everything here is copied from PAPER.md (camera-ready, corrected protocol); the test suite
checks these tables against that file. The Abalone values used a mis-encoded target and are
kept for completeness only (comparisons use :data:`COMPARED`).

Examples
--------
>>> TABLE1["yacht"]["block"], ABLATION["kin8nm"]["A2"], ABLATION["protein"]["trimmed"]
(0.989, 0.449, 0.435)
>>> PARAMS["RB"], PARAMS["trimmed"]
(30401, 7489)
"""

from __future__ import annotations

__all__ = ["ABLATION", "ABLATION_SUMMARY", "COMPARED", "DATASETS", "DEFAULT_VARIANTS", "PARAMS",
           "TABLE1", "VARIANT_DESCRIPTIONS", "VARIANT_NAMES"]

#: the benchmark datasets in the paper's order
DATASETS = ("california", "yacht", "energy", "concrete", "airfoil", "abalone", "kin8nm", "protein")
#: the datasets compared with the paper (all but Abalone, whose published target was mis-encoded)
COMPARED = tuple(d for d in DATASETS if d != "abalone")

#: published Table 1 (camera-ready, ``tab:realdata_main``): R² per dataset and method
TABLE1: dict[str, dict[str, float]] = {
    name: dict(zip(("ols", "rf", "mlp", "ftt", "softmax", "block"), vals, strict=True))
    for name, vals in {
        "california": (.597, .777, .763, .764, .738, .766), "yacht": (.562, .979, .970, .988, .958, .989),
        "energy": (.913, .996, .994, .994, .995, .995), "concrete": (.624, .892, .895, .898, .837, .907),
        "airfoil": (.497, .910, .917, .924, .757, .927), "abalone": (.260, .322, .323, .324, .312, .329),
        "kin8nm": (.430, .664, .912, .914, .851, .920), "protein": (.285, .521, .486, .426, .361, .455),
    }.items()
}

#: the ablation configurations of App. E, in the paper's order (keys of ``attnreg.nn.VARIANTS``)
VARIANT_NAMES = ("A0", "A1", "A2", "A3", "A4", "A5", "A6", "A7", "RB", "trimmed")
#: the variants ``python -m attnreg.bench ablation`` runs by default
DEFAULT_VARIANTS = ("A0", "A2", "A4", "A6", "RB", "trimmed")
VARIANT_DESCRIPTIONS: dict[str, str] = {
    "A0": "FT-Transformer (3 blocks, d=64)",
    "A1": "FT-T on degree-2 polynomial inputs",
    "A2": "RB without the polynomial map (PCA of the raw tokens)",
    "A3": "RB without PCA (W on the full φ)",
    "A4": "softmax MHA in the RB skeleton, no warm start",
    "A5": "FT-T shrunk to the RB budget (d=36)",
    "A6": "RB stacked to 3 blocks",
    "A7": "RB widened to the FT-T budget (d=128, 260 comps)",
    "RB": "Regression Block (1 block, d=64, 200 comps)",
    "trimmed": "2 regression mixers, no FFN, 50 comps",
}

#: published trainable parameters at P=8 (App. E)
PARAMS: dict[str, int] = {"A0": 101_697, "A1": 106_305, "A2": 21_697, "A3": 173_249, "A4": 34_177,
                          "A5": 33_013, "A6": 89_921, "A7": 101_249, "RB": 30_401, "trimmed": 7_489}

_ABL = {  # tab:abl (A0–A7, RB)
    "california": (.764, .769, .701, .757, .728, .772, .736, .768, .766),
    "yacht": (.988, .981, .572, .990, .538, .982, .968, .989, .989),
    "energy": (.994, .994, .941, .977, .922, .980, .991, .995, .995),
    "concrete": (.899, .898, .806, .874, .814, .873, .888, .908, .907),
    "airfoil": (.924, .926, .524, .908, .865, .913, .933, .921, .929),
    "abalone": (.324, .314, .286, .324, .328, .324, .310, .330, .329),
    "kin8nm": (.914, .909, .449, .923, .821, .911, .885, .917, .920),
    "protein": (.427, .391, .295, .434, .337, .418, .461, .469, .456),
}
_TRIMMED = {  # tab:trim, the "trimmed" column
    "california": .759, "yacht": .989, "energy": .988, "concrete": .880, "airfoil": .912,
    "abalone": .327, "kin8nm": .905, "protein": .435,
}
#: published ablation grid: R² per dataset and variant (``tab:abl``; "trimmed" from ``tab:trim``)
ABLATION: dict[str, dict[str, float]] = {
    d: {**dict(zip(VARIANT_NAMES[:9], _ABL[d], strict=True)), "trimmed": _TRIMMED[d]} for d in DATASETS
}
#: published ablation summary (``tab:ablsum``, over the eight datasets): median, mean, avg rank
ABLATION_SUMMARY: dict[str, tuple[float, float, float]] = {
    "A0": (.906, .779, 4.38), "A1": (.904, .773, 4.75), "A2": (.548, .572, 8.75),
    "A3": (.891, .773, 4.62), "A4": (.771, .669, 7.62), "A5": (.892, .772, 5.00),
    "A6": (.887, .772, 5.25), "A7": (.912, .787, 2.12), "RB": (.913, .786, 2.50),
}
