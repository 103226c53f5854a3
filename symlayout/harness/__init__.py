"""Model-free observation of GPU instructions (the ``gpu --atoms`` part of symlayout).

Importing this package needs neither CuPy nor a GPU: the submodules
(:mod:`~symlayout.harness.cuda`, :mod:`~symlayout.harness.atoms_probe`) are
loaded on first attribute access, and they import CuPy only inside the
functions that talk to the device.  Nothing here imports z3 or sympy.

>>> import symlayout.harness as h
>>> isinstance(h.have_gpu(), bool)
True
"""
from __future__ import annotations

import importlib

__all__ = ["have_gpu", "cuda", "atoms_probe"]

_SUBMODULES = ("cuda", "atoms_probe", "values", "plan", "codegen", "run", "isolation", "report")


def have_gpu() -> bool:
    """True iff CuPy imports and sees at least one CUDA device; never raises.

    >>> have_gpu() in (True, False)
    True
    """
    try:
        import cupy  # noqa: F401
    except Exception:
        return False
    try:
        return int(cupy.cuda.runtime.getDeviceCount()) > 0
    except Exception:
        return False


def __getattr__(name: str):
    if name in _SUBMODULES:
        mod = importlib.import_module(f"{__name__}.{name}")
        globals()[name] = mod
        return mod
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
