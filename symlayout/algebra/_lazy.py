"""A lazy ``sympy``: concrete (all-integer) work never imports sympy.

``sympy.Basic`` is a placeholder class (no object is an instance of it) until
sympy has been imported by someone; any other attribute imports sympy.

>>> from symlayout.algebra._lazy import sympy
>>> isinstance(3, sympy.Basic)
False
"""
from __future__ import annotations

import sys


class _NotLoaded:
    """Stands in for ``sympy.Basic`` while sympy is not imported."""


class _LazySympy:
    def __getattr__(self, name):
        mod = sys.modules.get("sympy")
        if mod is None:
            if name == "Basic":
                return _NotLoaded
            import sympy as mod
        return getattr(mod, name)


sympy = _LazySympy()
