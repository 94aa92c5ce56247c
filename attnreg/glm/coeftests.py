"""What every GLM result shares, in memory or chunk by chunk: its family and link, and the z or
t tests of its coefficients under the covariance in use."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy import stats

from attnreg.glm.families import FAMILIES, Family
from attnreg.glm.links import LINKS, Link

__all__ = ["GlmTests"]


class GlmTests:
    """Mixin: ``family``, ``link``, ``z_tests``, ``statistic`` and ``p_value`` of a GLM fit
    from its ``family_name``, ``link_name``, ``robust``, ``coef``, ``std_err`` and ``df_resid``."""

    family_name: str
    link_name: str
    robust: str | None

    if TYPE_CHECKING:
        @property
        def coef(self) -> pd.Series: ...
        @property
        def std_err(self) -> pd.Series: ...
        @property
        def df_resid(self) -> int: ...

    @property
    def family(self) -> Family:
        """The family object."""
        return FAMILIES[self.family_name]

    @property
    def link(self) -> Link:
        """The link object."""
        return LINKS[self.link_name]

    @property
    def z_tests(self) -> bool:
        """Whether tests are z tests: dispersion fixed, or a sandwich covariance."""
        return self.family.fixed_dispersion or self.robust is not None

    @cached_property
    def statistic(self) -> pd.Series:
        """z (dispersion fixed, or a sandwich) or t (estimated dispersion) values."""
        return (self.coef / self.std_err).rename("statistic")

    @cached_property
    def p_value(self) -> pd.Series:
        """Two-sided p-values: normal for z tests, t(df_resid) otherwise."""
        s = np.abs(self.statistic.to_numpy())
        p = 2 * stats.norm.sf(s) if self.z_tests else 2 * stats.t.sf(s, self.df_resid)
        return pd.Series(p, index=self.coef.index, name="p_value")
