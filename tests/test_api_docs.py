"""The API reference (docs/api.rst) names every public object, and each has a docstring.

The public objects: the verbs of ``attnreg.__all__`` and its lazy ``AttnRegressor``, the
figures of ``attnreg.plots``, the exceptions and warnings, the extension points (method,
covariance and backend registries), and the type of every object the verbs return on a
small fit (so a new result type must be documented before it ships). The page itself is
built with warnings as errors by ``.ci/run`` (``python -m sphinx -W docs``).
"""

from __future__ import annotations

import importlib
import inspect
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import attnreg as ar
from tests.conftest import REPO

API = REPO / "docs" / "api.rst"


def documented(page: Path = API) -> set[str]:
    """Dotted names the page documents in full (autosummary tables only link to them), the
    members of automodule'd modules included."""
    text = page.read_text()
    names = set(re.findall(r"^\.\. auto(?:function|class|method|attribute):: (\S+)", text, flags=re.M))
    for module in re.findall(r"^\.\. automodule:: (\S+)", text, flags=re.M):
        mod = importlib.import_module(module)
        members = getattr(mod, "__all__", [n for n, v in vars(mod).items()
                                           if inspect.isclass(v) and v.__module__ == module])
        names |= {f"{module}.{n}" for n in members}
    return names


def _where(obj: Any) -> set[str]:
    """The dotted names under which ``obj`` may be documented (its home and its re-exports)."""
    return {f"{obj.__module__}.{obj.__qualname__}"}


def returned_types() -> dict[str, type]:
    """The type of each object the verbs return on a small fit."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x1": rng.normal(size=60), "x2": rng.normal(size=60),
                       "g": rng.choice(list("abc"), 60)},
                      index=pd.period_range("2000Q1", periods=60, freq="Q"))
    df["y"] = df.x1 + rng.normal(size=60)
    fit = ar.attnreg("y ~ x1 + x2 + C(g)", data=df)
    fc = ar.forecast("y ~ lag(y, 1)", df, horizon=1)
    iv = ar.attnreg("y ~ x2 | x1 ~ C(g)", data=df)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        objects = {"attnreg()": fit, "summary()": fit.summary(), "attention()": fit.attention(df.head(2)),
                   "anova()": ar.anova(fit), "wald_test()": fit.wald_test("x1 = 0"),
                   "t_test()": fit.t_test("x1 = 0"), "etable()": ar.etable([fit]),
                   "compare()": ar.compare([fit]), "diagnostics()": fit.diagnostics(),
                   "bootstrap()": fit.bootstrap(reps=9, seed=0),
                   "rolling()": ar.rolling("y ~ x1", df, window=20), "forecast()": fc,
                   "compare_forecasts()": ar.compare_forecasts([fc]),
                   "forecast(by=)": ar.forecast("y ~ lag(y, 1)", df.assign(s=1), by="s"),
                   "attnreg(method='quantreg')": ar.attnreg("y ~ x1", df, method="quantreg"),
                   "attnreg(method='logit')": ar.attnreg("I((y > 0) * 1.0) ~ x1", df, method="logit"),
                   "attnreg(method='logit', chunk_rows=)": ar.attnreg(
                       "I((y > 0) * 1.0) ~ x1", df.reset_index(drop=True), method="logit",
                       chunk_rows=20),
                   "attnreg('y ~ x | g')": ar.attnreg("y ~ x1 + x2 | g", df),
                   "attnreg('y ~ x | d ~ z')": iv, "IV weak_instruments()": iv.weak_instruments(),
                   "IV anderson_rubin()": iv.anderson_rubin(), "IV attention()": iv.attention(df.head(2))}
    return {k: type(v) for k, v in objects.items()}


def public_objects() -> dict[str, Any]:
    import attnreg.exceptions as exc
    import attnreg.large as large
    import attnreg.methods as methods
    import attnreg.plots as plots
    from attnreg.inference.vcov import registry
    from attnreg.linear import handover, rules

    out: dict[str, Any] = {f"attnreg.{n}": getattr(ar, n) for n in ar.__all__ if n != "__version__"}
    out["attnreg.AttnRegressor"] = ar.AttnRegressor
    out |= {f"attnreg.plots.{n}": getattr(plots, n) for n in plots.__all__ if callable(getattr(plots, n))}
    out |= {f"attnreg.exceptions.{n}": v for n, v in vars(exc).items()
            if inspect.isclass(v) and v.__module__ == exc.__name__}
    out |= {f"attnreg.methods.{n}": getattr(methods, n)
            for n in ("register", "method_names", "get_method", "Estimator", "Capabilities")}
    out["attnreg.linear.handover.least_squares_results"] = handover.least_squares_results
    out["attnreg.linear.rules.least_squares_rule"] = rules.least_squares_rule
    out["attnreg.linear.rules.SpectralRule"] = rules.SpectralRule
    out["attnreg.inference.vcov.registry.register_vcov"] = registry.register_vcov
    out["attnreg.inference.vcov.registry.CovarianceEstimator"] = registry.CovarianceEstimator
    out["attnreg.large.register_backend"] = large.register_backend
    out["attnreg.large.Backend"] = large.Backend
    out |= {f"returned by {k}": v for k, v in returned_types().items()
            if v.__module__.startswith("attnreg")}
    return out


def test_every_public_name_is_in_the_api_reference(page: Path = API) -> None:
    names = documented(page)
    missing = []
    for label, obj in public_objects().items():
        homes = _where(obj) | ({label} if not label.startswith("returned") else set())
        if obj.__module__ == "attnreg.sklearn":
            homes.add(f"attnreg.sklearn.{obj.__qualname__}")
        if not homes & names:
            missing.append(f"{label} ({', '.join(sorted(homes))})")
    assert not missing, "not in docs/api.rst: " + "; ".join(missing)


def test_every_documented_name_exists_and_has_a_docstring() -> None:
    for name in sorted(documented()):
        module, _, attr = name.rpartition(".")
        try:
            obj = getattr(importlib.import_module(module), attr)
        except ModuleNotFoundError:  # a class's member: module.Class.attr
            outer, _, cls = module.rpartition(".")
            obj = getattr(getattr(importlib.import_module(outer), cls), attr)
        assert inspect.getdoc(obj), f"{name} has no docstring"


def test_a_name_missing_from_the_page_is_found(tmp_path: Path) -> None:
    """The check can fail: drop one entry from a copy of the page and it is reported."""
    page = tmp_path / "api.rst"
    page.write_text(API.read_text().replace(".. autofunction:: attnreg.rolling\n", ""))
    with pytest.raises(AssertionError, match=r"attnreg\.rolling"):
        test_every_public_name_is_in_the_api_reference(page)
