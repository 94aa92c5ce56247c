"""The numpydoc Examples of every attnreg module run as doctests, and the public API has them.

Every module under ``attnreg/`` is imported and its docstring examples executed with
ELLIPSIS and NORMALIZE_WHITESPACE. A module that needs an optional extra that is not installed
(scikit-learn for :mod:`attnreg.sklearn`, matplotlib for the plots' examples) is skipped with
that reason. Importing a module must not need the benchmark data.
"""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import io
import pkgutil

import pytest

import attnreg

OPTIONAL = {"sklearn": "scikit-learn", "matplotlib": "matplotlib"}
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _module_names() -> list[str]:
    names = ["attnreg"]
    for info in pkgutil.walk_packages(attnreg.__path__, "attnreg."):
        if info.name.rsplit(".", 1)[-1] != "__main__":  # running them is the command line
            names.append(info.name)
    return sorted(names)


MODULES = _module_names()


@pytest.fixture(autouse=True)
def _one_thread():
    """The examples fit small torch models; one thread keeps them cheap and reproducible."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _import(name: str):
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        missing = (exc.name or "").split(".")[0]
        if missing in OPTIONAL:
            pytest.skip(f"{name} needs {OPTIONAL[missing]}, which is not installed")
        raise


def _needs_optional(test: doctest.DocTest) -> str | None:
    source = "\n".join(example.source for example in test.examples)
    for module, label in OPTIONAL.items():
        uses = f"import {module}" in source or f"from {module}" in source
        if uses and importlib.util.find_spec(module) is None:
            return label
    return None


@pytest.mark.parametrize("name", MODULES)
def test_module_examples(name: str) -> None:
    module = _import(name)
    if name.endswith(".plots") or "matplotlib" in name:
        import matplotlib

        matplotlib.use("Agg")
    finder = doctest.DocTestFinder(exclude_empty=True)
    tests = [t for t in finder.find(module, name) if t.examples]
    if not tests:
        pytest.skip(f"{name} has no docstring examples")
    out = io.StringIO()
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    skipped = []
    for test in sorted(tests, key=lambda t: t.name):
        label = _needs_optional(test)
        if label is not None:
            skipped.append(f"{test.name} (needs {label})")
            continue
        runner.run(test, out=out.write)
    result = runner.summarize(verbose=False)
    try:
        import matplotlib.pyplot as plt

        plt.close("all")
    except ImportError:  # pragma: no cover - optional
        pass
    assert result.failed == 0, f"{result.failed} failing example(s) in {name}:\n{out.getvalue()}"
    if skipped and result.attempted == 0:
        pytest.skip("examples need optional packages: " + ", ".join(skipped))


def _public_callables() -> list[str]:
    return [n for n in attnreg.__all__ if callable(getattr(attnreg, n))]


@pytest.mark.parametrize("name", _public_callables())
def test_public_names_have_examples(name: str) -> None:
    doc = getattr(attnreg, name).__doc__ or ""
    assert doc.strip(), f"attnreg.{name} has no docstring"
    assert "Examples\n" in doc and ">>>" in doc, f"attnreg.{name} has no numpydoc Examples section"


def _result_classes() -> list[type]:
    from attnreg.views.attention import AttentionWeights, Embedding
    from attnreg.iv.results import IVResults
    from attnreg.inference.anova_table import AnovaTable
    from attnreg.inference.bootstrap_results import BootstrapResults, BootstrapTest
    from attnreg.diagnostics.battery import DiagnosticTable
    from attnreg.diagnostics.outliers import OutlierTest
    from attnreg.inference.hypothesis_results import TTest, WaldTest
    from attnreg.nn.results import NetworkResults
    from attnreg.report import Comparison, Summary
    from attnreg.report.etable import ETable
    from attnreg.linear.results import LinearResults
    from attnreg.softmax.results import SoftmaxResults
    from attnreg.timeseries.forecast_results import ForecastResults
    from attnreg.timeseries.rolling import RollingResults

    return [LinearResults, SoftmaxResults, NetworkResults, ForecastResults, RollingResults,
            AttentionWeights, Embedding, Summary, Comparison, WaldTest, TTest, AnovaTable,
            DiagnosticTable, OutlierTest, BootstrapResults, BootstrapTest, ETable, IVResults]


@pytest.mark.parametrize("cls", _result_classes(), ids=lambda c: c.__name__)
def test_result_classes_document_every_public_member(cls: type) -> None:
    """What a user reaches from a result (methods and properties) says what it is."""
    import functools
    import inspect

    assert "Examples\n" in (cls.__doc__ or ""), f"{cls.__name__} has no Examples section"
    missing = []
    for name, member in inspect.getmembers(cls):
        if name.startswith("_"):
            continue
        if isinstance(member, property):
            target = member.fget
        elif isinstance(member, functools.cached_property):
            target = member.func
        else:
            target = member
        if callable(target) and not (inspect.getdoc(target) or "").strip():
            missing.append(name)
    assert not missing, f"{cls.__name__}: members without a docstring: {missing}"


def test_import_attnreg_is_light() -> None:
    """``import attnreg`` imports neither torch, scikit-learn nor matplotlib."""
    import subprocess
    import sys

    code = ("import sys, attnreg; heavy = [m for m in ('torch', 'sklearn', 'matplotlib') "
            "if m in sys.modules]; print(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
