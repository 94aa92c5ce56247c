"""etable(): the publication table: golden files for every renderer, its numbers against the
fits', the covariance row, keep/drop/rename, the statistics registry, errors.

Golden files are ``tests/snapshots/etable_*``; rewrite them with
``python -m pytest tests/report/test_etable.py --update-snapshots`` and review the diff.
"""

from __future__ import annotations

import dataclasses
import pickle
import re
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import pytest

import attnreg as ar
from attnreg.exceptions import ConvergenceWarning, OptionError
from attnreg.report.etable import ETable
from attnreg.report.etable_stats import STATISTICS, covariance_name

LONGLEY = "TOTEMP ~ GNPDEFL + GNP + UNEMP + ARMED + POP + YEAR"


@pytest.fixture
def data(mixed_frame: pd.DataFrame) -> pd.DataFrame:
    return mixed_frame.assign(log_x2=np.log(mixed_frame["x2"]))


@pytest.fixture
def fits(data: pd.DataFrame) -> list[Any]:
    """Four columns: OLS, WLS, ridge and PCR, with a factor and an underscore name."""
    return [ar.attnreg("y ~ x1 + C(g)", data=data),
            ar.attnreg("y ~ x1 + log_x2 + C(g)", data=data, weights="w"),
            ar.attnreg("y ~ x1 + log_x2 + C(g)", data=data, method="ridge", lam=1.0),
            ar.attnreg("y ~ x1 + log_x2", data=data, method="pcr", k=1)]


@pytest.fixture
def table(fits: list[Any]) -> ETable:
    return ar.etable(fits, se=[None, "HC1", {"kind": "HAC", "maxlags": 3}, None],
                     stats=["nobs", "r2", "adj_r2", "sigma", "f", "df_resid", "lam", "k"],
                     notes="Simulated data.")


# ---------------------------------------------------------------------------- golden files
@pytest.mark.parametrize(("render", "name"), [
    (str, "etable.txt"), (ETable.to_markdown, "etable.md"), (ETable.to_latex, "etable.tex"),
    (ETable.to_html, "etable.html")])
def test_renderers_match_golden_files(table: ETable, snapshot, render: Any, name: str) -> None:
    snapshot(name, render(table) + "\n")


def test_t_statistics_golden(longley: pd.DataFrame, snapshot) -> None:
    fits = [ar.attnreg("TOTEMP ~ GNP + UNEMP", data=longley),
            ar.attnreg(LONGLEY, data=longley)]
    t = ar.etable(fits, show="t", digits=2, keep=["GNP$", "UNEMP", "YEAR"],
                  rename={"YEAR": "Year"}, stars={"+": 0.1, "*": 0.05})
    snapshot("etable_t.txt", str(t) + "\n")
    assert t.notes[0] == "t statistics in parentheses. Significance: * p<0.05, + p<0.1."


# ---------------------------------------------------------------------------- the numbers
def _number(cell: str) -> float:
    return float(re.sub(r"[^\d.eE+-]", "", cell.strip("()")))


@pytest.mark.parametrize("digits", [2, 3, 5])
@pytest.mark.parametrize("show", ["se", "t"])
def test_cells_are_the_fits_numbers_rounded(fits: list[Any], digits: int, show: str) -> None:
    t = ar.etable(fits, digits=digits, show=show).table
    for j, fit in enumerate(fits):
        col = f"({j + 1})"
        err = fit.std_err if show == "se" else fit.t_value
        for term in fit.coef.index:
            est, below = t.loc[(term, "estimate"), col], t.loc[(term, show), col]
            assert _number(est) == round(float(fit.coef[term]), digits), (col, term)
            assert _number(below) == round(float(err[term]), digits), (col, term)
            assert below.startswith("(") and below.endswith(")")
            p = fit.p_value[term]
            stars = est[len(est.rstrip("*")):]
            assert stars == ("***" if p < 0.01 else "**" if p < 0.05 else "*" if p < 0.1
                             else ""), (col, term, p)
        absent = [term for term in t.index.get_level_values(0).unique()
                  if (term, "estimate") in t.index and term not in fit.coef.index]
        assert all(t.loc[(term, "estimate"), col] == "" for term in absent)


def test_statistic_rows_are_the_fits_statistics(fits: list[Any]) -> None:
    t = ar.etable(fits, digits=4, stats=list(STATISTICS)).table
    for j, fit in enumerate(fits):
        stat = t.xs("statistic", level="part")[f"({j + 1})"]
        cell = stat.__getitem__
        assert cell("Observations") == str(fit.nobs)
        assert _number(cell("R2")) == round(fit.r_squared, 4)
        assert _number(cell("Adj. R2")) == round(fit.adj_r_squared, 4)
        assert _number(cell("Residual std. error")) == round(fit.sigma, 4)
        assert _number(cell("F statistic")) == round(fit.f_test.statistic, 4)
        assert _number(cell("AIC")) == round(fit.aic, 4)
        assert _number(cell("BIC")) == round(fit.bic, 4)
        assert _number(cell("Log likelihood")) == round(fit.loglik, 4)
        df = fit.df_resid
        assert cell("Residual df") == (str(int(df)) if df == int(df) else f"{df:.2f}")
        assert cell("lambda") == ("" if fit.lam is None else f"{fit.lam:.4g}")
        assert cell("Components k") == ("" if fit.k is None else str(fit.k))
        assert cell("Clusters") == ""


def test_terms_in_order_of_first_appearance(fits: list[Any]) -> None:
    t = ar.etable(fits[::-1]).table
    terms = [r for r, part in t.index if part == "estimate"]
    assert terms == ["(Intercept)", "x1", "log_x2", "C(g)[T.b]", "C(g)[T.c]"]
    assert t.loc[("C(g)[T.b]", "estimate"), "(1)"] == ""  # the PCR fit has no factor


def test_se_choices_leave_the_fits_unchanged(fits: list[Any]) -> None:
    hc = ar.etable(fits, se="HC3").table.loc[("Covariance", "covariance")].tolist()
    assert hc == ["HC3"] * 4
    assert all(f.vcov_spec.kind == "classical" for f in fits)
    mixed = ar.etable(fits[:2], se=[{"kind": "HAC", "maxlags": 1}, None])
    assert mixed.table.loc[("Covariance", "covariance")].tolist() == ["HAC (1 lag)", "classical"]
    assert mixed.models["covariance_label"].iloc[0] == fits[0].with_vcov(
        "HAC", maxlags=1).vcov_spec.label()
    robust = fits[1].with_vcov("HC1")
    se = ar.etable([robust]).table.loc[("x1", "se"), "(1)"]
    assert _number(se) == round(float(robust.std_err["x1"]), 3)
    assert _number(se) != round(float(fits[1].std_err["x1"]), 3)


def test_covariance_name_reads_kind_and_cluster_attributes() -> None:
    """Names derive from ``vcov_spec.kind`` and cluster-like options, whatever the kind."""
    spec = SimpleNamespace(kind="cluster", option=lambda name, default=None: {
        "cluster": "firm"}.get(name, default), label=lambda: "cluster-robust")
    assert covariance_name(SimpleNamespace(vcov_spec=spec)) == "cluster (firm)"
    two = SimpleNamespace(kind="CR2", cluster_names=("firm", "year"))
    assert covariance_name(SimpleNamespace(vcov_spec=two)) == "CR2 (firm + year)"
    ids = SimpleNamespace(kind="cluster", option=lambda name, default=None: (
        np.arange(3) if name == "cluster" else default))  # ids, not a name: the kind alone
    assert covariance_name(SimpleNamespace(vcov_spec=ids)) == "cluster"
    assert covariance_name(SimpleNamespace(vcov_spec=SimpleNamespace(kind="DK"))) == "DK"
    with_ids = SimpleNamespace(kind="DK", maxlags=2, option=lambda name, default=None: (
        SimpleNamespace(names=("year",), n_clusters=(9,)) if name == "time" else default))
    assert covariance_name(SimpleNamespace(vcov_spec=with_ids)) == "DK (year, 2 lags)"
    assert covariance_name(SimpleNamespace()) == ""


def test_cluster_covariances_side_by_side(data: pd.DataFrame) -> None:
    panel = data.assign(firm=np.arange(len(data)) % 12, year=np.arange(len(data)) // 12)
    fit = ar.attnreg("y ~ x1 + C(g)", data=panel)
    try:
        one = fit.with_vcov("cluster", cluster="firm")
    except (OptionError, TypeError):
        pytest.skip("cluster-robust covariances are not available")
    two = fit.with_vcov("cluster", cluster="firm + year")
    dk = fit.with_vcov("DK", time="year", maxlags=2)
    t = ar.etable([fit, one, two, dk], stats=["nobs", "clusters"])
    assert t.table.loc[("Covariance", "covariance")].tolist() == [
        "classical", "cluster (firm)", "cluster (firm + year)", "DK (year, 2 lags)"]
    assert t.table.loc[("Clusters", "statistic")].tolist() == ["", "12", "12 x 10", "10"]
    assert t.models["covariance_label"].tolist() == [f.vcov_spec.label()
                                                    for f in (fit, one, two, dk)]
    for j, f in enumerate((fit, one, two, dk)):
        se, est = t.table.loc[("x1", "se"), f"({j + 1})"], t.table.loc[("x1", "estimate")]
        assert _number(se) == round(float(f.std_err["x1"]), 3)
        p = f.p_value["x1"]  # on the cluster df G - 1 where the covariance says so
        stars = est.iloc[j][len(est.iloc[j].rstrip("*")):]
        assert stars == ("***" if p < 0.01 else "**" if p < 0.05 else "*" if p < 0.1 else "")
    same = ar.etable([fit], se={"kind": "cluster", "cluster": "firm"})
    assert same.table.loc[("x1", "se"), "(1)"] == t.table.loc[("x1", "se"), "(2)"]


def test_keep_drop_rename(fits: list[Any]) -> None:
    def terms(t: ETable) -> list[str]:
        return [r for r, part in t.table.index if part == "estimate"]

    assert terms(ar.etable(fits, keep="C(g)[T.b]")) == ["C(g)[T.b]"]  # an exact name
    assert terms(ar.etable(fits, keep=r"^C\(g\)")) == ["C(g)[T.b]", "C(g)[T.c]"]  # a regex
    assert terms(ar.etable(fits, drop=["Intercept", "C\\(g"])) == ["x1", "log_x2"]
    t = ar.etable(fits, keep=["x1", "log_x2"], rename={"log_x2": "log(x2)"})
    assert terms(t) == ["x1", "log(x2)"]
    assert t.table.loc[("log(x2)", "estimate"), "(1)"] == ""
    a = ar.attnreg("y ~ x1", data=pd.DataFrame({"y": [1.0, 2, 4, 3], "x1": [0.0, 1, 2, 2]}))
    b = ar.attnreg("y ~ x2", data=pd.DataFrame({"y": [1.0, 2, 4, 3], "x2": [1.0, 1, 3, 2]}))
    merged = ar.etable([a, b], rename={"x1": "x", "x2": "x"}, drop="Intercept")
    assert terms(merged) == ["x"]
    assert merged.table.loc[("x", "estimate")].ne("").all()


def test_names_match_whatever_their_spacing() -> None:
    """rename/keep/drop take ``I(x**2)`` for patsy's ``I(x ** 2)``, as ``wald_test`` does."""
    data = pd.DataFrame({"y": [1.0, 2, 4, 3, 6, 5], "x": [0.0, 1, 2, 2, 3, 4]})
    fit = ar.attnreg("y ~ x + I(x**2)", data=data)
    assert "I(x ** 2)" in fit.coef.index
    t = ar.etable([fit], rename={"I(x**2)": "x squared"}, keep=["x", "I(x**2)"])
    assert [r for r, part in t.table.index if part == "estimate"] == ["x", "x squared"]
    assert fit.wald_test("I(x**2) = 0").statistic == fit.wald_test("I(x ** 2) = 0").statistic


def test_nonlinear_fits_show_only_their_statistics(fits: list[Any], data: pd.DataFrame) -> None:
    with pytest.warns(ConvergenceWarning):  # five iterations: enough for a column of numbers
        soft = ar.attnreg("y ~ x1 + log_x2", data=data, method="softmax", seed=0, max_iter=5)
    t = ar.etable([fits[0], soft], se="HC1")
    col = t.table["(2)"]
    assert (col.xs("estimate", level="part") == "").all()
    assert col[("Covariance", "covariance")] == ""
    assert col[("Method", "header")] == "softmax" and col[("Dependent var.", "header")] == "y"
    assert col[("Observations", "statistic")] == str(soft.nobs)
    assert _number(col[("R2", "statistic")]) == round(soft.r_squared, 3)
    assert col[("Adj. R2", "statistic")] == ""
    assert t.table.loc[("Covariance", "covariance"), "(1)"] == "HC1"
    with pytest.raises(OptionError, match=r"se\[1\].*softmax"):
        ar.etable([fits[0], soft], se=[None, "HC1"])


def test_escaping_in_each_format(table: ETable) -> None:
    tex, md, htm = table.to_latex(), table.to_markdown(), table.to_html()
    assert r"C(g){[}T.b{]}" in tex and r"log\_x2" in tex and "C(g)[T.b]" not in tex
    assert r"\toprule" in tex and r"\midrule" in tex and r"\bottomrule" in tex
    assert re.search(r"\$-?\d+\.\d{3}\^\{\*+\}\$", tex)
    assert r"log\_x2" in md and r"\*\*\*" in md and "| C(g)[T.b]" in md
    assert "<sup>***</sup>" in htm and "p&lt;0.01" in htm and "<table" in table._repr_html_()
    weird = ar.etable([ar.attnreg("y ~ x", data=pd.DataFrame(
        {"y": [1.0, 2, 4, 3, 5], "x": [0.0, 1, 2, 2, 4]}))], rename={"x": "a & b_%"},
        notes="50% <more> & #1")
    assert r"a \& b\_\%" in weird.to_latex() and r"50\% \textless{}more\textgreater{}" in (
        weird.to_latex())
    assert "a &amp; b_%" in weird.to_html() and "&lt;more&gt;" in weird.to_html()


def test_notes(fits: list[Any]) -> None:
    t = ar.etable(fits[:2], notes=["One.", "Two."])
    assert t.notes == ("Standard errors in parentheses. Significance: *** p<0.01, ** p<0.05, "
                       "* p<0.1.", "One.", "Two.")
    assert ar.etable(fits[:2], default_note=False, notes="Only.").notes == ("Only.",)
    assert "Ridge and PCR" in ar.etable(fits).notes[1]
    assert ar.etable(fits[:1], stars=False).notes == ("Standard errors in parentheses.",)
    assert "*" not in "".join(ar.etable(fits[:1], stars=False).table["(1)"])


def test_frozen_and_pickles(table: ETable) -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        table.notes = ()  # type: ignore[misc]
    back = pickle.loads(pickle.dumps(table))
    assert str(back) == str(table) and back.to_latex() == table.to_latex()
    pd.testing.assert_frame_equal(back.table, table.table)


def test_compare_keeps_working(fits: list[Any]) -> None:
    c = ar.compare(fits)
    assert list(c.table.columns) == ["(1) ols", "(2) ols", "(3) ridge", "(4) pcr"]
    assert c.table.loc["N"].tolist() == [str(f.nobs) for f in fits]


# ---------------------------------------------------------------------------- errors
@pytest.mark.parametrize(("kwargs", "message"), [
    ({"digits": -1}, "digits"), ({"digits": 2.5}, "digits"), ({"show": "p"}, "show"),
    ({"stars": "yes"}, "stars"), ({"stars": {"*": 5}}, "stars"),
    ({"stats": ["nobs", "rsq"]}, "'rsq'.*known: nobs"), ({"stats": [1]}, "stats"),
    ({"se": ["HC1"]}, "one entry per model"), ({"se": "HC9"}, r"se for model \(1\)"),
    ({"se": {"kind": "HAC", "lags": 2}}, r"se for model \(1\)"), ({"se": 3}, "se must"),
    ({"keep": "zzz"}, "keep: 'zzz' match"), ({"drop": ["x1", "nope"]}, "drop: 'nope'"),
    ({"keep": 3}, "keep must"), ({"rename": {"nope": "a"}}, "rename: 'nope'"),
    ({"rename": {"x1": 2}}, "rename must"), ({"notes": 5}, "notes must"),
    ({"rename": {"x1": "z", "log_x2": "z"}}, "would share the row 'z'"),
])
def test_errors_name_the_argument(fits: list[Any], kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(OptionError, match=message):
        ar.etable(fits[1:3], **kwargs)


@pytest.mark.parametrize(("arg", "message"), [
    ([], "at least one fit"), ("fit", "fits must be a list"), ([1], r"fits\[0\] is int"),
    ({"a": 1}, "fits must be a list")])
def test_fits_must_be_fits(arg: Any, message: str) -> None:
    with pytest.raises(OptionError, match=message):
        ar.etable(arg)


def test_one_fit_alone(fits: list[Any]) -> None:
    assert ar.etable(fits[0]).table.columns.tolist() == ["(1)"]
