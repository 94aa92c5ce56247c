"""The report family: summaries as sections of numbers (``sections``, ``summary``), rendered as
R's text, HTML or LaTeX (``render``, with R's number formatting in ``rformat``); ``linear``
builds the summary of a linear fit, ``compare`` the side-by-side table of several fits.
"""

from __future__ import annotations

from attnreg.report.compare import Comparison, compare
from attnreg.report.linear import linear_summary
from attnreg.report.rformat import SIGNIF_LEGEND, fmt_g, format_c, r_format, residual_lines
from attnreg.report.summary import Summary

__all__ = ["SIGNIF_LEGEND", "Comparison", "Summary", "compare", "fmt_g", "format_c",
           "linear_summary", "r_format", "residual_lines"]
