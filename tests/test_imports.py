"""The package's import graph has no cycles, counting imports inside functions too."""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

import attnreg

ROOT = Path(attnreg.__file__).parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in ROOT.rglob("*.py")}


def _nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node, skipping ``if TYPE_CHECKING:`` blocks (annotations only)."""
    todo = list(ast.iter_child_nodes(tree))
    while todo:
        node = todo.pop()
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        yield node
        todo.extend(ast.iter_child_nodes(node))


def imports_of(name: str) -> set[str]:
    """attnreg modules that module ``name`` imports anywhere in its code."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in _nodes(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                head = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*head, *([node.module] if node.module else [])])
            out |= {f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base
                    for a in node.names}
    return {m for m in out if m in MODULES and m != name}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_relative_and_function_level_imports_are_seen() -> None:
    graph = imports_of("attnreg.api")
    assert {"attnreg.formula.design", "attnreg.methods"} <= graph
    assert "attnreg.softmax.fit" in imports_of("attnreg.adapters")  # imported inside a function


def test_attnreg_has_no_import_cycles() -> None:
    graph = {name: imports_of(name) for name in MODULES}
    assert cycles(graph) == []


# ------------------------------------------------------------------------------ the layout rules

#: the package-wide private helpers every family may use (warnings, typing, progress)
SHARED = {"attnreg._typing", "attnreg._warn", "attnreg._progress"}

#: cross-family private imports still to remove: (importer, imported dotted name). The
#: importer's family is another engineer's area; each entry can only be deleted, never added.
PRIVATE_PENDING: set[tuple[str, str]] = set()

#: a module may be longer than this many lines only while it is listed in OVERSIZED
MAX_MODULE_LINES = 400
#: modules still over MAX_MODULE_LINES, with the most lines each may have (a ratchet: an entry
#: may only shrink or go; a module split below the limit must be removed from the list)
OVERSIZED: dict[str, int] = {}

#: a function's body may have more code lines than this only with a reason in its docstring
MAX_FUNCTION_LINES = 60
#: how a docstring gives that reason: a sentence starting with these words
LONG_REASON = "Long because"
#: functions still too long without a reason: "path:qualified name"
LONG_PENDING: set[str] = set()


def family(name: str) -> str:
    """The family of a module: its sub-package (``attnreg.linear``) or, at the top, itself."""
    parts = name.split(".")
    if len(parts) > 2 or MODULES[name].name == "__init__.py":
        return ".".join(parts[:2])
    return name


def private_imports(name: str) -> set[str]:
    """Private names (a module or a name with a leading underscore) module ``name`` imports
    from another family; the package-wide helpers of SHARED are not private to a family."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in _nodes(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                head = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*head, *([node.module] if node.module else [])])
            targets = [f"{base}.{a.name}" for a in node.names]
        else:
            continue
        for target in targets:
            module = target if target in MODULES else target.rpartition(".")[0]
            if module not in MODULES or family(module) == family(name):
                continue
            inner = target.split(".")[1:]
            if module in SHARED:
                inner = inner[1:]
            if any(p.startswith("_") and not p.startswith("__") for p in inner):
                out.add(target)
    return out


def _code_lines(source: str) -> set[int]:
    """Lines holding code (not blank, not only a comment)."""
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
            tokenize.ENDMARKER}
    out: set[int] = set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type not in skip:
            out.update(range(tok.start[0], tok.end[0] + 1))
    return out


def long_functions(path: Path) -> dict[str, int]:
    """Functions of ``path`` whose body (docstring, comments and blank lines not counted) has
    more than MAX_FUNCTION_LINES code lines and whose docstring gives no reason."""
    source = path.read_text()
    code = _code_lines(source)
    out: dict[str, int] = {}
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        doc = ast.get_docstring(node) or ""
        body = node.body[1:] if ast.get_docstring(node) is not None else node.body
        if not body or LONG_REASON in " ".join(doc.split()):
            continue
        n_lines = len({i for i in code if body[0].lineno <= i <= (node.end_lineno or 0)})
        if n_lines > MAX_FUNCTION_LINES:
            out[node.name] = n_lines
    return out


def _rel(path: Path) -> str:
    return path.relative_to(ROOT.parent).as_posix()


def test_the_private_name_finder_sees_a_private_import(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("from attnreg.softmax.results import _private\n"
                     "from attnreg._warn import warn_user\n"
                     "def f():\n    from attnreg.linear import _tallqr_like\n")
    monkeypatch.setitem(MODULES, "attnreg.probe", probe)
    assert private_imports("attnreg.probe") == {"attnreg.softmax.results._private",
                                                "attnreg.linear._tallqr_like"}
    assert private_imports("attnreg.inference.bootstrap") == set()  # _warn etc. are shared


def test_no_module_imports_another_familys_private_names() -> None:
    found = {(name, target) for name in MODULES for target in private_imports(name)}
    assert found - PRIVATE_PENDING == set(), "give the helper a public name in its family"
    assert found >= PRIVATE_PENDING, "a pending private import is gone: remove its entry"


def test_modules_stay_under_the_line_limit() -> None:
    sizes = {_rel(p): len(p.read_text().splitlines()) for p in ROOT.rglob("*.py")}
    over = {m: n for m, n in sizes.items() if n > OVERSIZED.get(m, MAX_MODULE_LINES)}
    assert over == {}, f"split these modules (at most {MAX_MODULE_LINES} lines): {over}"
    stale = {m for m in OVERSIZED if sizes.get(m, 0) <= MAX_MODULE_LINES}
    assert stale == set(), "these modules are short enough now: remove them from OVERSIZED"


def test_the_function_measure_counts_code_lines_only(tmp_path: Path) -> None:
    body = "".join(f"    x{i} = (1,\n          2)  # two lines\n\n" for i in range(31))
    source = f'def f():\n    """Doc.\n\n    More.\n    """\n{body}\n\ndef g():\n    pass\n'
    (tmp_path / "m.py").write_text(source)
    assert long_functions(tmp_path / "m.py") == {"f": 62}  # 31 statements of two lines each
    (tmp_path / "m.py").write_text(source.replace("More.", f"{LONG_REASON} it is a table."))
    assert long_functions(tmp_path / "m.py") == {}


def test_functions_stay_under_the_line_limit() -> None:
    found = {f"{_rel(p)}:{name}" for p in ROOT.rglob("*.py") for name in long_functions(p)}
    assert found - LONG_PENDING == set(), (
        f"split these functions (at most {MAX_FUNCTION_LINES} code lines) or say in their "
        f"docstring why not ('{LONG_REASON} ...')")
    assert found >= LONG_PENDING, "a pending long function is short now: remove its entry"


# ------------------------------------------------------------------------------ family cycles

#: cross-family imports (importer module, imported module), function-level ones included, that
#: still close a cycle between families, each with the reason it stays. A shrink-only
#: allow-list: without these the family graph has no cycle; an entry that no longer closes one
#: (or whose import is gone) must be deleted; a new one may not be added.
FAMILY_CYCLE_EDGES: dict[tuple[str, str], str] = {}


def family_graph(skip: frozenset[tuple[str, str]] = frozenset()) -> dict[str, set[str]]:
    """Families and the families each imports (module or function level), leaving out the
    module imports ``skip``."""
    graph: dict[str, set[str]] = {family(name): set() for name in MODULES}
    for name in MODULES:
        for target in imports_of(name):
            if family(name) != family(target) and (name, target) not in skip:
                graph[family(name)].add(family(target))
    return graph


def test_the_family_graph_sees_function_level_imports() -> None:
    assert "attnreg.softmax" in family_graph()["attnreg.adapters"]  # imported in functions
    skip = frozenset(("attnreg.adapters", m) for m in imports_of("attnreg.adapters")
                     if m.startswith("attnreg.softmax."))
    assert "attnreg.softmax" not in family_graph(skip)["attnreg.adapters"]


def test_the_method_registry_imports_no_family_that_uses_it() -> None:
    assert "attnreg.adapters" not in family_graph()["attnreg.methods"]
    assert "attnreg.methods" in family_graph()["attnreg.adapters"]  # adapters registers


def test_families_form_no_cycle_but_through_the_allowed_edges() -> None:
    found = cycles(family_graph(frozenset(FAMILY_CYCLE_EDGES)))
    assert found == [], (f"these families import each other in a cycle: {found}; move the "
                         "helper to the family that owns it, or pass it as an argument")
    edges = {(name, target) for name in MODULES for target in imports_of(name)}
    gone = set(FAMILY_CYCLE_EDGES) - edges
    assert gone == set(), f"these imports are gone: remove them from FAMILY_CYCLE_EDGES: {gone}"
    components = [set(c) for c in cycles(family_graph())]
    open_ = {(a, b) for a, b in FAMILY_CYCLE_EDGES
             if not any({family(a), family(b)} <= c for c in components)}
    assert open_ == set(), f"these close no cycle now: remove them from FAMILY_CYCLE_EDGES: {open_}"


#: families that read a fit through :mod:`attnreg.inference.contract` only, and import nothing
#: of the linear (spectral) family, not even inside functions (types under TYPE_CHECKING only)
FIT_INDEPENDENT = ("attnreg.inference", "attnreg.views", "attnreg.diagnostics")


def test_inference_views_and_diagnostics_import_nothing_of_the_linear_family() -> None:
    graph = family_graph()
    found = {f for f in FIT_INDEPENDENT if "attnreg.linear" in graph[f]}
    assert found == set(), (f"{sorted(found)} import attnreg.linear: ask the fit (the contract) "
                            "or take the spectrum as an argument")
    assert "attnreg.inference.vcov.registry" in MODULES  # the covariance registry lives here
