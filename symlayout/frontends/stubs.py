"""Stub modules: a kernel that imports torch at module level loads on a machine without torch.

CuTe DSL kernels often ``import torch`` (flash-attention 4, QuACK) for their host wrappers and
tests, not for the layouts symlayout reads.  :func:`install` puts an import hook first on
``sys.meta_path`` that answers ``import torch`` (and ``torch.x.y``) with a stub module: every
attribute is a :class:`Stub` -- callable (a call with one function argument returns it, so
``@torch.compile`` / ``@torch.library.custom_op(...)`` decorate as the identity), subclassable
(``class M(torch.nn.Module)``), false (``if torch.cuda.is_available():`` takes the CPU branch),
usable in annotations.  Only names used at import time need to work: a kernel that *calls*
torch while its host code is traced gets a stub back, and fails there with its own line.

``symlayout dsl --stub-module torch`` turns it on; by default it is on for torch exactly when
torch is not installed (a note says so).  A dotted name stubs that module and its submodules only:
``--stub-module cuda.bindings.driver`` for a kernel that calls the driver at import time (the DSL
itself needs the rest of ``cuda.bindings``).  :func:`install` returns the undo.  ``--stub-missing``
(:func:`install_missing`) stubs every module that is not installed (a kernel package's host-side
dependencies: einops, triton, tvm_ffi), each named in a note.
"""
from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types

__all__ = ["Stub", "Decorated", "install", "install_missing", "uninstall_missing", "missing"]


class _StubMeta(type):
    def __getattr__(cls, attr: str) -> "Stub":
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        return Stub(f"{cls.__name__}.{attr}")


class StubBase(metaclass=_StubMeta):
    """What a class derived from a stub derives from: its missing attributes (``IndexFirstAxis.apply``
    of a ``torch.autograd.Function``) are stubs, on the class and on its instances."""

    def __init__(self, *args, **kwargs):
        pass

    def __getattr__(self, attr: str) -> "Stub":
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        return Stub(f"{type(self).__name__}.{attr}")


class Stub:
    """A stand-in for any attribute of a stubbed module."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attr: str) -> "Stub":
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        return Stub(f"{self._name}.{attr}")

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and not kwargs and callable(args[0]) and not isinstance(args[0], Stub):
            return Decorated(args[0], f"{self._name}(...)")      # used as a decorator
        return Stub(f"{self._name}(...)")

    def __mro_entries__(self, bases):
        return (StubBase,)      # class M(torch.nn.Module): ... subclasses StubBase

    def __bool__(self) -> bool:
        return False

    def __iter__(self):
        return iter(())

    def __getitem__(self, key) -> "Stub":
        return Stub(f"{self._name}[...]")

    def __or__(self, other):    # annotations: torch.Tensor | None
        return self

    __ror__ = __or__

    def _false(self, other) -> bool:   # torch version / config comparisons at import time
        return False

    def __instancecheck__(self, obj) -> bool:   # isinstance(torch.float16, torch.dtype): stubs are stubs'
        return isinstance(obj, Stub)

    __subclasscheck__ = _false

    __lt__ = __le__ = __gt__ = __ge__ = _false

    def _same(self, *other) -> "Stub":
        return self

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __floordiv__ = _same

    def __repr__(self) -> str:
        return f"<symlayout stub {self._name}>"


class Decorated:
    """A function a stub decorated (``@torch.library.custom_op(...)``): calls go to the function,
    other attributes are stubs (``@op.register_fake`` decorates as the identity), and as a method it
    binds ``self``."""

    def __init__(self, fn, name: str):
        self.__wrapped__, self._name = fn, name
        functools.update_wrapper(self, fn)

    def __call__(self, *args, **kwargs):
        return self.__wrapped__(*args, **kwargs)

    def __get__(self, obj, cls=None):
        return self if obj is None else functools.partial(self.__wrapped__, obj)

    def __getattr__(self, attr: str) -> Stub:
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        return Stub(f"{self._name}.{attr}")


class _StubModule(types.ModuleType):
    def __getattr__(self, attr: str):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        return Stub(f"{self.__name__}.{attr}")


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Stubs ``roots`` and their submodules; with ``missing=True`` (last on ``sys.meta_path``) every
    top-level module no other finder found, recorded in ``stubbed``."""

    def __init__(self, roots, missing: bool = False):
        self.roots, self.missing, self.stubbed = tuple(roots), missing, []

    def find_spec(self, fullname, path=None, target=None):
        top = fullname.partition(".")[0]
        if any(fullname == r or fullname.startswith(r + ".") for r in self.roots) or \
                (self.missing and _third_party(top) and (top == fullname or top in self.stubbed)):
            if self.missing and top == fullname:
                self.stubbed.append(top)
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        m = _StubModule(spec.name)
        m.__path__ = []
        m.__symlayout_stub__ = True
        return m

    def exec_module(self, module):
        pass


def missing(name: str) -> bool:
    """Whether ``name`` cannot be imported here (nor is already stubbed or loaded)."""
    if name in sys.modules:
        return False
    try:
        return importlib.util.find_spec(name) is None
    except (ImportError, ValueError):
        return True


def _third_party(top: str) -> bool:
    """Not a module of Python's standard library (whose optional C modules are probed with try/except)."""
    return not top.startswith("_") and top not in sys.stdlib_module_names


def install_missing() -> "_Finder":
    """Answer the import of every module that is not installed with a stub (``--stub-missing``);
    the finder's ``stubbed`` lists them.  Remove it with :func:`uninstall_missing`."""
    finder = _Finder((), missing=True)
    sys.meta_path.append(finder)
    return finder


def uninstall_missing(finder) -> None:
    if finder in sys.meta_path:
        sys.meta_path.remove(finder)
    for k in [k for k in sys.modules if k.partition(".")[0] in finder.stubbed]:
        del sys.modules[k]


def install(names) -> callable:
    """Answer ``import NAME`` (and its submodules) with stub modules; returns the undo."""
    names = [n for n in names if n]
    if not names:
        return lambda: None
    finder = _Finder(names)
    sys.meta_path.insert(0, finder)

    def undo():
        if finder in sys.meta_path:
            sys.meta_path.remove(finder)
        for k in [k for k, m in sys.modules.items() if getattr(m, "__symlayout_stub__", False)]:
            del sys.modules[k]
    return undo
