"""Saving fits: a patsy design and its formula's scope as plain, picklable data.

patsy refuses to pickle its design objects: ``DesignInfo``, ``EvalFactor``, ``Term``,
``ContrastMatrix``, ``EvalEnvironment`` and its stateful transforms raise
``NotImplementedError``. A fit keeps a design so that :meth:`~attnreg.formula.design.Design.rebuild`
can build the design matrix of new rows. :class:`FormulaSpec` holds what that needs as plain
data and builds the patsy objects again through patsy's constructors:

- the column names, the terms and how each is coded (its contrast matrices);
- every factor: its code, where it sits in the formula, its type, its categorical levels and
  its memorised state (the code patsy evaluates and the training statistics of stateful
  transforms such as ``center()``, ``standardize()``, ``scale()`` and ``bs()``; a transform
  of patsy's own is kept as its class and attributes, patsy having no constructor for a
  memorised transform);
- the formula's scope, reduced to the names the formula uses: a module is stored by name and
  imported again; a function or class by reference (module and name, as pickle does, and
  also when a module holds it under another name, as for patsy's stateful-transform
  wrappers); anything else by value.

A lambda, or a function or class defined inside a function, has no name to be found by;
pickling a fit whose formula uses one raises :class:`~attnreg.exceptions.FormulaPicklingError`
naming it, and a pickler that stores functions by value (cloudpickle, dill) stores it. Such a
pickler also gets the functions of ``__main__`` (a script or a notebook) to store as it
usually does: by value, so that a worker process can load them.

Examples
--------
>>> import pickle
>>> import numpy as np, pandas as pd
>>> import attnreg as ar
>>> df = pd.DataFrame({"y": [1.0, 2.5, 2.9, 4.2, 5.1], "x": [1.0, 2.0, 3.0, 4.0, 6.0]})
>>> fit = ar.attnreg("y ~ np.log(x) + center(x)", df)
>>> back = pickle.loads(pickle.dumps(fit))
>>> new = pd.DataFrame({"x": [2.5, 5.0]})
>>> bool((back.predict(new) == fit.predict(new)).all())
True
"""

from __future__ import annotations

import importlib
import inspect
import sys
import types
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import patsy

from attnreg.exceptions import FormulaError, FormulaPicklingError

if TYPE_CHECKING:
    from attnreg.formula.design import Design

__all__ = ["FormulaSpec"]

#: modules whose ``Pickler`` stores functions by value
_BY_VALUE_PICKLERS = ("cloudpickle", "joblib.externals.cloudpickle", "dill")


# ---------------------------------------------------------------- names of the formula's scope
@dataclass(frozen=True)
class _ModuleRef:
    """A module in a formula's scope (``np``), imported again by name when loaded."""

    module: str


@dataclass(frozen=True)
class _GlobalRef:
    """A function or class in a formula's scope, found again as ``module.name`` when loaded."""

    module: str
    name: str


class _Dynamic:
    """A function or class of ``__main__``, or one without an importable name (a lambda, a closure).

    A pickler that stores functions by value (cloudpickle, dill) gets the object itself and
    decides, as it does for functions of ``__main__``. Plain pickle gets the reference when
    there is one, and otherwise an error naming the formula's name. A deep copy shares the
    object, as :func:`copy.deepcopy` does for functions.
    """

    def __init__(self, name: str, formula: str, value: Any, ref: _GlobalRef | None) -> None:
        self.name = name
        self.formula = formula
        self.value = value
        self.ref = ref

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, tuple[Any]]:
        if _pickler_stores_functions_by_value():
            return _identity, (self.value,)
        if self.ref is not None:
            return _identity, (self.ref,)
        raise FormulaPicklingError(
            f"cannot pickle a fit of {self.formula!r}: the formula uses {self.name!r}, "
            f"{_describe(self.value)}, which has no importable name, and pickle stores "
            f"functions and classes by name only. Define {self.name!r} at the top level of a "
            "module, or save the fit with cloudpickle (cloudpickle.dumps(fit)), which stores "
            "it by value")

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        return self.value


def _identity(value: Any) -> Any:
    return value


def _describe(value: Any) -> str:
    what = "a class" if isinstance(value, type) else "a function"
    qualname = getattr(value, "__qualname__", "")
    if getattr(value, "__name__", "") == "<lambda>":
        return "a lambda"
    if "<locals>" in qualname:
        return f"{what} defined inside a function ({qualname})"
    return f"{what} ({qualname})"


def _pickler_stores_functions_by_value() -> bool:
    """Whether the running pickler stores functions by value (cloudpickle, dill).

    pickle gives a reduction no way to ask which pickler calls it. The picklers that store
    functions by value run their ``dump`` in Python, so their frame is on the stack.
    """
    kinds = tuple(pickler for name in _BY_VALUE_PICKLERS if name in sys.modules
                  if isinstance(pickler := getattr(sys.modules[name], "Pickler", None), type))
    frame = inspect.currentframe()
    while kinds and frame is not None:
        if isinstance(frame.f_locals.get("self"), kinds):
            return True
        frame = frame.f_back
    return False


def _reference(value: Any) -> _GlobalRef | None:
    """Where ``value`` can be imported from: by its qualified name, else under any module name."""
    module_name = getattr(value, "__module__", None)
    if not isinstance(module_name, str) or sys.modules.get(module_name) is None:
        return None
    module = sys.modules[module_name]
    qualname = getattr(value, "__qualname__", None)
    if isinstance(qualname, str) and "<" not in qualname:
        found: Any = module
        for part in qualname.split("."):
            found = getattr(found, part, None)
        if found is value:
            return _GlobalRef(module_name, qualname)
    for name, obj in vars(module).items():  # e.g. center = patsy.stateful_transform(_Center)
        if obj is value:
            return _GlobalRef(module_name, name)
    return None


def _portable(name: str, value: Any, formula: str) -> Any:
    """``value``, a name of a formula's scope, as something pickle stores well."""
    if isinstance(value, types.ModuleType):
        return _ModuleRef(value.__name__)
    if isinstance(value, (types.FunctionType, type)):
        ref = _reference(value)
        if ref is not None and ref.module != "__main__":
            return ref
        return _Dynamic(name, formula, value, ref)
    return value


def _resolve(name: str, value: Any, formula: str) -> Any:
    """The inverse of :func:`_portable`."""
    try:
        if isinstance(value, _ModuleRef):
            return importlib.import_module(value.module)
        if isinstance(value, _GlobalRef):
            found: Any = importlib.import_module(value.module)
            for part in value.name.split("."):
                found = getattr(found, part)
            return found
    except (ImportError, AttributeError) as exc:
        where = value.module if isinstance(value, _ModuleRef) else f"{value.module}.{value.name}"
        raise FormulaError(f"the saved fit of {formula!r} uses {name!r}, saved as a reference to "
                           f"{where}, which cannot be loaded here: {exc}") from None
    return value.value if isinstance(value, _Dynamic) else value


@dataclass(frozen=True)
class _Scope:
    """An ``EvalEnvironment`` reduced to the names a formula uses, as plain data."""

    namespace: dict[str, Any]
    flags: int

    @classmethod
    def capture(cls, env: Any, codes: list[str], formula: str) -> _Scope:
        from attnreg.formula.frame import names_in

        ns = env.namespace
        names = dict.fromkeys(n for code in codes for n in names_in(code) if n in ns)
        return cls({n: _portable(n, ns[n], formula) for n in names}, int(env.flags))

    def restore(self, formula: str) -> Any:
        namespace = {n: _resolve(n, v, formula) for n, v in self.namespace.items()}
        return patsy.EvalEnvironment([namespace], self.flags)


# ---------------------------------------------------------------- a factor's memorised state
@dataclass(frozen=True)
class _PatsyObject:
    """A patsy object that refuses pickling (a memorised stateful transform), as data."""

    cls: type[Any]
    attributes: dict[str, Any]


def _is_patsy_object(value: Any) -> bool:
    return type(value).__module__.split(".")[0] == "patsy" and hasattr(value, "__dict__")


def _plain(value: Any, code: str, formula: str) -> Any:
    """A factor's state with its patsy objects replaced by plain data (recursively)."""
    if isinstance(value, patsy.EvalEnvironment):
        return _Scope.capture(value, [code], formula)
    if isinstance(value, dict):
        return {k: _plain(v, code, formula) for k, v in value.items()}
    if type(value) in (list, tuple, set, frozenset):
        return type(value)(_plain(v, code, formula) for v in value)
    if _is_patsy_object(value):
        return _PatsyObject(type(value), _plain(vars(value), code, formula))
    return value


def _unplain(value: Any, formula: str) -> Any:
    """The inverse of :func:`_plain`."""
    if isinstance(value, _Scope):
        return value.restore(formula)
    if isinstance(value, dict):
        return {k: _unplain(v, formula) for k, v in value.items()}
    if type(value) in (list, tuple, set, frozenset):
        return type(value)(_unplain(v, formula) for v in value)
    if isinstance(value, _PatsyObject):
        obj = object.__new__(value.cls)
        obj.__dict__.update(_unplain(value.attributes, formula))
        return obj
    return value


# ---------------------------------------------------------------- the design info
@dataclass(frozen=True)
class _FactorSpec:
    code: str
    origin: tuple[str, int, int] | None
    type: str
    state: dict[str, Any]
    num_columns: int | None
    categories: tuple[Any, ...] | None


@dataclass(frozen=True)
class _SubtermSpec:
    factors: tuple[str, ...]
    contrasts: dict[str, tuple[np.ndarray, list[str]]]
    num_columns: int


@dataclass(frozen=True)
class FormulaSpec:
    """What prediction needs from a patsy design and its scope, as picklable data.

    Attributes
    ----------
    formula : str
        The formula (for messages).
    column_names : list of str
        patsy's design column names.
    factors : tuple
        Every factor's code, origin, type, levels and memorised state.
    terms : tuple
        Each term's factor codes and its subterm codings, in design order.
    scope : _Scope or None
        The names of the design's scope that the formula (response included) uses.
    """

    formula: str
    column_names: list[str]
    factors: tuple[_FactorSpec, ...]
    terms: tuple[tuple[tuple[str, ...], tuple[_SubtermSpec, ...]], ...]
    scope: _Scope | None

    @classmethod
    def from_design(cls, design: Design) -> FormulaSpec:
        """The spec of ``design.design_info`` and ``design.eval_env``."""
        info, formula = design.design_info, design.formula
        factors = []
        for factor, fi in info.factor_infos.items():
            if not isinstance(factor, patsy.EvalFactor):
                raise FormulaPicklingError(f"cannot pickle a fit of {formula!r}: its factor "
                                           f"{factor!r} is not a formula expression")
            origin = factor.origin
            factors.append(_FactorSpec(
                code=factor.code, type=fi.type, num_columns=fi.num_columns,
                origin=None if origin is None else (origin.code, origin.start, origin.end),
                state=_plain(fi.state, factor.code, formula),
                categories=None if fi.categories is None else tuple(fi.categories)))
        terms = tuple(
            (tuple(f.code for f in term.factors),
             tuple(_SubtermSpec(factors=tuple(f.code for f in sub.factors),
                                contrasts={f.code: (np.asarray(cm.matrix), list(cm.column_suffixes))
                                           for f, cm in sub.contrast_matrices.items()},
                                num_columns=int(sub.num_columns)) for sub in subterms))
            for term, subterms in info.term_codings.items())
        codes = [f.code for f in factors] + [design.response_name]
        scope = None if design.eval_env is None else _Scope.capture(design.eval_env, codes, formula)
        return cls(formula=formula, column_names=list(info.column_names), factors=tuple(factors),
                   terms=terms, scope=scope)

    def to_patsy(self) -> tuple[Any, Any]:
        """patsy's ``DesignInfo`` and the ``EvalEnvironment`` of the formula's scope.

        Returns
        -------
        design_info : patsy.DesignInfo
        eval_env : patsy.EvalEnvironment or None
        """
        by_code: dict[str, Any] = {}
        factor_infos = {}
        for fs in self.factors:
            origin = None if fs.origin is None else patsy.Origin(*fs.origin)
            factor = by_code[fs.code] = patsy.EvalFactor(fs.code, origin=origin)
            factor_infos[factor] = patsy.FactorInfo(
                factor, fs.type, _unplain(fs.state, self.formula), num_columns=fs.num_columns,
                categories=fs.categories)
        term_codings: OrderedDict[Any, list[Any]] = OrderedDict()
        for codes, subterms in self.terms:
            term = patsy.Term([by_code[c] for c in codes])
            term_codings[term] = [
                patsy.SubtermInfo([by_code[c] for c in sub.factors],
                                  {by_code[c]: patsy.ContrastMatrix(m, suffixes)
                                   for c, (m, suffixes) in sub.contrasts.items()},
                                  sub.num_columns)
                for sub in subterms]
        info = patsy.DesignInfo(self.column_names, factor_infos=factor_infos,
                                term_codings=term_codings)
        env = None if self.scope is None else self.scope.restore(self.formula)
        return info, env
