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
itself needs the rest of ``cuda.bindings``).  :func:`install` returns the undo.
"""
from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types

__all__ = ["Stub", "install", "missing"]


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
            return args[0]       # used as a decorator
        return Stub(f"{self._name}(...)")

    def __mro_entries__(self, bases):
        return (object,)        # class M(torch.nn.Module): ... subclasses object

    def __bool__(self) -> bool:
        return False

    def __iter__(self):
        return iter(())

    def __getitem__(self, key) -> "Stub":
        return Stub(f"{self._name}[...]")

    def __or__(self, other):    # annotations: torch.Tensor | None
        return self

    __ror__ = __or__

    def __repr__(self) -> str:
        return f"<symlayout stub {self._name}>"


class _StubModule(types.ModuleType):
    def __getattr__(self, attr: str):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        return Stub(f"{self.__name__}.{attr}")


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, roots):
        self.roots = tuple(roots)

    def find_spec(self, fullname, path=None, target=None):
        if any(fullname == r or fullname.startswith(r + ".") for r in self.roots):
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
