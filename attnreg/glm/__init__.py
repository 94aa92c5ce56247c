"""Generalised linear models: R's ``glm()`` as ``attnreg(..., method="glm", family=, link=)``.

Families and links (:mod:`attnreg.glm.families`, :mod:`attnreg.glm.links`), IRLS with R's
``glm.fit`` conventions (:mod:`attnreg.glm.irls`), the result (:mod:`attnreg.glm.results`)
and its R summary (:mod:`attnreg.glm.summary`). The methods ``"glm"``, ``"logit"``,
``"probit"`` and ``"poisson"`` are registered by :mod:`attnreg.glm.registration`.
"""

from __future__ import annotations

from attnreg.glm.families import FAMILIES, Family
from attnreg.glm.links import LINKS, Link
from attnreg.glm.results import GlmResults

__all__ = ["FAMILIES", "LINKS", "Family", "GlmResults", "Link"]
