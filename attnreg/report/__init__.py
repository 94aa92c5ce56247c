"""The report family: summaries as sections of numbers (``sections``, ``summary``) rendered as
R's text, HTML or LaTeX (``render``; R's number formatting and printing ported in ``rformat``
and ``rprint``); ``linear`` builds a linear fit's summary, ``compare`` several fits' table and ``etable`` the
publication table of several fits (rendered by ``etable_render``).
"""

from __future__ import annotations

from attnreg.report.compare import Comparison, compare
from attnreg.report.etable import ETable, etable
from attnreg.report.linear import linear_summary
from attnreg.report.rformat import fmt_g, format_c, r_format
from attnreg.report.rprint import SIGNIF_LEGEND, residual_lines
from attnreg.report.summary import Summary

__all__ = ["SIGNIF_LEGEND", "Comparison", "ETable", "Summary", "compare", "etable", "fmt_g",
           "format_c", "linear_summary", "r_format", "residual_lines"]
