"""Reproduction of the paper's benchmarks: the Table 1 protocol (:mod:`~attnreg.bench.protocol`), the
ablation grid (:mod:`~attnreg.bench.ablation`), the Monte Carlo (:mod:`~attnreg.bench.montecarlo`,
:mod:`~attnreg.bench.dgp`), the published numbers (:mod:`~attnreg.bench.published`), the
reports (:mod:`~attnreg.bench.reports`) and the command line (:mod:`~attnreg.bench.cli`).

Examples
--------
>>> from attnreg.bench.published import ABLATION, TABLE1
>>> TABLE1["kin8nm"]["block"], ABLATION["kin8nm"]["A0"]
(0.92, 0.914)
"""
