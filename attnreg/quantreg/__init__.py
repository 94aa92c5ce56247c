"""Linear quantile regression (``attnreg(..., method="quantreg", tau=...)``).

``solver``: Frisch–Newton interior point and the exact vertex (R's ``rq``); ``se``: standard
errors as R's ``summary.rq`` (``"nid"``, ``"iid"``, ``"ker"``, ``"boot"``); ``rank``: its
rank-inversion intervals (``se="rank"``, R's default below 1001 rows); ``options``: the
method's options; ``results``: :class:`QuantregResults`; ``report``: its R-style summary.
"""

from __future__ import annotations

from attnreg.quantreg.results import QuantregResults
from attnreg.quantreg.se import bandwidth_rq, quantreg_vcov
from attnreg.quantreg.solver import QuantregFit, rq_fit

__all__ = ["QuantregFit", "QuantregResults", "bandwidth_rq", "quantreg_vcov", "rq_fit"]
