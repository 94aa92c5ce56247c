"""The report family: summaries as sections of numbers (``sections``, ``summary``) rendered as
R's text, HTML or LaTeX (``render``; R's number formatting and printing ported in ``rformat``
and ``rprint``); ``linear`` builds a linear fit's summary, ``compare`` several fits' table.
"""

from __future__ import annotations

from attnreg.report.compare import Comparison, compare
from attnreg.report.linear import linear_summary
from attnreg.report.rformat import fmt_g, format_c, r_format
from attnreg.report.rprint import SIGNIF_LEGEND, residual_lines
from attnreg.report.summary import Summary

__all__ = ["SIGNIF_LEGEND", "Comparison", "Summary", "compare", "fmt_g", "format_c",
           "linear_summary", "r_format", "residual_lines"]
