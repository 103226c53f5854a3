"""symlayout: prove CuTe/CUTLASS GPU tiling configurations correct.

The public API (documented in ``docs/api.md``), imported lazily so that
``import symlayout`` stays light (no sympy or z3 until used):

* configurations: :func:`load` (a file), :func:`config` (TOML text or tables);
* proving: :func:`prove` -> :class:`Report` (results, counterexamples,
  ``explain()``, ``svg()``);
* CuTe's objects: :func:`layout` (CuTe notation), :class:`Layout` and the
  CuTe-named algebra functions (``composition``, ``complement``,
  ``logical_divide``, ``tile_to_shape``, ...), :func:`tiled_mma`,
  :func:`tiled_copy_A` / :func:`tiled_copy_B` / :func:`tiled_copy_C`.

``symlayout.prove`` and ``symlayout.config`` are also the subpackage / module of
those names (``symlayout.prove.engine``, ``symlayout.config.load_config``): calling
them calls :func:`symlayout.api.prove` / :func:`symlayout.api.config`.

>>> import symlayout
>>> print(symlayout.composition(symlayout.layout("(6,2):(8,2)"), symlayout.layout("(4,3):(3,1)")))
((2,2),3):((24,2),8)
>>> rep = symlayout.prove(symlayout.config(mma={"atom": "SM80_16x8x16_F16F16F16F16_TN"}))
>>> rep.ok, [r.status for r in rep.results]
(True, ['proved', 'proved', 'proved'])
"""
from __future__ import annotations

import types as _types


class _CallableModule(_types.ModuleType):
    """A module that is also the API function of its name: ``symlayout.prove(cfg)``."""

    def __call__(self, *args, **kwargs):
        # lazy: PEP 562, 'import symlayout' stays light until the API is used
        from . import api
        return getattr(api, self.__name__.rsplit(".", 1)[1])(*args, **kwargs)


from . import config, prove  # noqa: E402 (the callable modules)

config.__class__ = _CallableModule
prove.__class__ = _CallableModule

_API = ("load", "Report", "layout", "tiled_mma", "tiled_copy_A", "tiled_copy_B", "tiled_copy_C")
_ALGEBRA = ("Layout", "make_layout", "composition", "complement", "right_inverse", "left_inverse", "coalesce",
            "logical_divide", "zipped_divide", "tiled_divide", "logical_product", "blocked_product",
            "raked_product", "tile_to_shape", "upcast", "downcast", "max_common_vector")

__all__ = ["config", "prove"] + list(_API + _ALGEBRA) + ["__version__"]


def __getattr__(name: str):  # PEP 562: import on first use
    if name in _API:
        # lazy: PEP 562, 'import symlayout' stays light until the API is used
        from . import api
        return getattr(api, name)
    if name in _ALGEBRA:
        # lazy: PEP 562, 'import symlayout' stays light until the algebra is used
        from .algebra import layout as _layout
        return getattr(_layout, name)
    if name == "__version__":
        try:
            from importlib.metadata import version
            return version("symlayout")
        except Exception:  # noqa: BLE001 (a source tree that is not installed)
            return "unknown"
    raise AttributeError(f"module 'symlayout' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + __all__)
