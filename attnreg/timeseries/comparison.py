"""The comparison of several forecasts: :class:`ForecastComparison` (the table of
:func:`~attnreg.timeseries.compare.compare_forecasts`, its report and its figures)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from attnreg._typing import FloatArray
from attnreg.timeseries.mcs import ModelConfidenceSet

__all__ = ["ForecastComparison"]


@dataclass(frozen=True)
class ForecastComparison:
    """Several forecasts of one target compared with a benchmark and with one another.

    Made by :func:`compare_forecasts`. ``str()`` is the report in the house style (as
    ``fc.summary()``), ``to_latex()`` / ``to_markdown()`` / ``_repr_html_()`` render it.

    Attributes
    ----------
    table : DataFrame, shape (n_models + 1, 16)
        One row per model, then the benchmark. Columns: ``msfe``, ``msfe_ratio`` and
        ``oos_r2`` (against the benchmark); ``dm_statistic`` / ``dm_p_value``
        (Diebold–Mariano, HLN-corrected, two-sided); ``cw_statistic`` / ``cw_p_value``
        (Clark–West, one-sided, for models nesting the benchmark, else NaN);
        ``gw_statistic`` / ``gw_p_value`` (Giacomini–White, instruments (1, lagged loss
        difference), χ²(2)); ``enc_statistic`` / ``enc_p_value`` (H₀: the benchmark
        encompasses the model — a small p-value says the model adds information),
        ``enc_weight`` (λ̂, the model's weight in the best combination with the benchmark),
        ``enc_rev_statistic`` / ``enc_rev_p_value`` (H₀: the model encompasses the
        benchmark); ``mcs_p_value`` and ``in_mcs`` (the model confidence set over all models
        and the benchmark). The benchmark's row has its MSFE, ratio 1 and its MCS entries.
    names : tuple of str
        The models' names (the table's first rows).
    benchmark_name : str
    targets : pandas.Index, shape (n_forecasts,)
        The common target dates.
    actual : ndarray, shape (n_forecasts,)
    forecasts : ndarray, shape (n_forecasts, n_models)
    benchmark : ndarray, shape (n_forecasts,)
    horizon : int
    loss : {"squared", "absolute"}
        The loss of the DM and GW tests and of the MCS (MSFE, OOS R², CW and the
        encompassing tests are squared-error by definition).
    mcs : ModelConfidenceSet or None
        None when the set is not defined (two models with identical losses; a note says so).
    notes : tuple of str
        Remarks on this comparison (tests that could not be computed, differing benchmarks).

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import macrodata
    >>> macro = macrodata.load_pandas().data
    >>> macro.index = pd.period_range("1959Q1", periods=len(macro), freq="Q")
    >>> f = "infl ~ lag(infl, 1) + lag(unemp, 1)"
    >>> fcs = [ar.forecast(f, macro, method=m, start="1990Q1") for m in ("ols", "ridge")]
    >>> cmp = ar.compare_forecasts(fcs)
    >>> cmp.table[["msfe_ratio", "dm_p_value", "gw_p_value", "mcs_p_value"]].round(3)
    ... # doctest: +NORMALIZE_WHITESPACE
           msfe_ratio  dm_p_value  gw_p_value  mcs_p_value
    model
    ols         0.853       0.491       0.618        0.279
    ridge       0.849       0.473       0.624        1.000
    mean        1.000         NaN         NaN        0.376
    """

    table: pd.DataFrame
    names: tuple[str, ...]
    benchmark_name: str
    targets: pd.Index = field(repr=False)
    actual: FloatArray = field(repr=False)
    forecasts: FloatArray = field(repr=False)
    benchmark: FloatArray = field(repr=False)
    horizon: int
    loss: str
    mcs: ModelConfidenceSet | None = field(repr=False)
    notes: tuple[str, ...] = ()

    @property
    def errors(self) -> pd.DataFrame:
        """Forecast errors ``actual − forecast`` by target date, one column per model and the
        benchmark, shape (n_forecasts, n_models + 1)."""
        values = np.column_stack([self.actual[:, None] - self.forecasts, self.actual - self.benchmark])
        return pd.DataFrame(values, index=self.targets, columns=[*self.names, self.benchmark_name])

    def summary(self) -> Any:
        """The report: setting, the table of accuracy and tests, what each test is.

        Returns
        -------
        attnreg.report.Summary
        """
        from attnreg.report import Summary
        from attnreg.report.fcfigures import ComparisonNotes, ComparisonSetup, ModelConfidence
        from attnreg.report.sections import Coefficients, Lines

        m = self.mcs
        setup = ComparisonSetup(len(self.names), self.benchmark_name, int(self.horizon),
                                self.loss, int(self.targets.size), str(self.targets[0]),
                                str(self.targets[-1]))
        mcs = (Lines(("MCS: not computed.",)) if m is None else ModelConfidence(
            m.method, m.bootstrap, int(m.block_size), int(m.reps), m.seed, float(m.size),
            tuple(m.included)))
        return Summary("attnreg forecast comparison", (
            setup, Coefficients(self._display(), stars=False, heading=False),
            ComparisonNotes(int(self.horizon)), mcs, Lines(tuple(self.notes))))

    def _display(self) -> pd.DataFrame:
        """The printed columns: accuracy, each test's p-value, the MCS p-value."""
        t = self.table
        return pd.DataFrame({
            "MSFE": t["msfe"], "OOS R2": t["oos_r2"], "Pr(DM)": t["dm_p_value"],
            "Pr(CW)": t["cw_p_value"], "Pr(GW)": t["gw_p_value"],
            "Pr(ENC)": t["enc_p_value"], "Pr(ENC rev)": t["enc_rev_p_value"],
            "Pr(MCS)": t["mcs_p_value"]}, index=t.index)

    def _cells(self) -> tuple[list[str], list[list[str]]]:
        """The printed table as strings (4 significant digits, blank where undefined)."""
        from attnreg.report.rformat import fmt_g

        table = self._display()
        body = [[str(i), *("" if not np.isfinite(v) else fmt_g(float(v), 4) for v in row)]
                for i, row in zip(table.index, table.to_numpy(dtype=float), strict=True)]
        return ["model", *table.columns], body

    def _notes(self) -> list[str]:
        """The lines after the table (without the blank line that starts them)."""
        from attnreg.report import render

        return [line for section in self.summary().sections[2:]
                for line in render.text(section)][1:]

    def __str__(self) -> str:
        return str(self.summary())

    def __repr__(self) -> str:
        return (f"<attnreg forecast comparison: {len(self.names)} models vs "
                f"{self.benchmark_name!r}, h={self.horizon}, {self.targets.size} forecasts, "
                f"MCS {{{', '.join(self.mcs.included if self.mcs else ())}}}>")

    def _repr_html_(self) -> str:
        return str(self.summary()._repr_html_())

    def to_latex(self) -> str:
        """The printed table as a booktabs LaTeX tabular (needs ``\\usepackage{booktabs}``;
        special characters escaped), the notes as ``%`` comments below it."""
        from tabulate import tabulate

        headers, body = self._cells()
        text = tabulate(body, headers=headers, tablefmt="latex_booktabs", disable_numparse=True,
                        colalign=("left", *("right",) * (len(headers) - 1)))
        return "\n".join([str(text), *(f"% {line}" for line in self._notes())])

    def to_markdown(self) -> str:
        """The printed table as a Markdown (pipe) table, 4 significant digits, notes below."""
        from tabulate import tabulate

        headers, body = self._cells()
        text = tabulate(body, headers=headers, tablefmt="pipe", disable_numparse=True,
                        colalign=("left", *("right",) * (len(headers) - 1)))
        return "\n".join([str(text), "", *self._notes()])

    def plot(self, kind: str = "cumulative", **kw: Any) -> Any:
        """Plot the comparison: ``"cumulative"`` (each model's cumulative squared-error
        difference against the benchmark, Goyal–Welch) or ``"oos_r2"`` (rolling OOS R²,
        ``window=``). Returns the matplotlib Axes; see
        :func:`attnreg.timeseries.fcplots.plot_forecasts`."""
        from attnreg.timeseries.fcplots import plot_forecasts

        return plot_forecasts(self, kind, **kw)
