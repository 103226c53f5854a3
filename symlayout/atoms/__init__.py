"""MMA and copy atoms: CuTe's MMA_Traits / Copy_Traits as data.

The catalog lives in ``symlayout/atoms/data/*.json`` (``mma.json``, ``copy.json``,
``types.json``): CuTe's layouts as notation strings in CuTe's own units, register
arrays, the PTX each operation issues and a ``ptx_model`` key linking it to the
independent PTX-ISA model (:mod:`symlayout.arch.ptx`).  Modules: :mod:`.types` (the
value types), :mod:`.catalog` (the template engine that generates families),
:mod:`.mma` / :mod:`.copy` (the atoms, CuTe's ``MMA_Atom`` / ``Copy_Atom``),
:mod:`.gmma` / :mod:`.tma` (SM90), :mod:`.listing` (the whole catalog).

This package face re-exports the public names; the atom classes are imported lazily
(PEP 562), so the value types stay importable without sympy (the GPU harness uses them):

* :func:`value_type_bits`, :func:`canonical_type`, :func:`value_type_names`, :func:`value_type_info`,
  :func:`reinterpretation`, :func:`exact_conversion`, :class:`Registers`
* :class:`~symlayout.atoms.mma.MMAAtom`, :func:`get_mma_atom`, :func:`mma_atom_names`
* :class:`~symlayout.atoms.copy.CopyOp`, :class:`~symlayout.atoms.copy.CopyAtom`,
  :func:`get_copy_op`, :func:`copy_op_names`, :func:`make_copy_atom`
* :func:`catalog_json`, :func:`catalog_text`

>>> value_type_bits("half_t"), value_type_bits("cutlass::bfloat16_t")
(16, 16)
>>> from symlayout.atoms import get_mma_atom
>>> get_mma_atom("SM80_16x8x8_F16F16F16F16_TN").shape_mnk
(16, 8, 8)
"""
from __future__ import annotations

import importlib

from .types import (REINTERPRETATIONS, Registers, canonical_type, exact_conversion, reinterpretation,
                    value_type_bits, value_type_info, value_type_names)

__all__ = [
    "Registers", "value_type_bits", "canonical_type", "value_type_names", "value_type_info", "reinterpretation",
    "exact_conversion", "REINTERPRETATIONS",
    "MMAAtom", "get_mma_atom", "mma_atom_names",
    "CopyOp", "CopyAtom", "get_copy_op", "copy_op_names", "make_copy_atom",
    "catalog_json", "catalog_text",
]

#: the lazily imported names and their modules (they import sympy)
_LAZY = {
    "MMAAtom": "mma", "get_mma_atom": "mma", "mma_atom_names": "mma",
    "CopyOp": "copy", "CopyAtom": "copy", "get_copy_op": "copy", "copy_op_names": "copy",
    "make_copy_atom": "copy", "catalog_json": "listing", "catalog_text": "listing",
}


def __getattr__(name: str):  # PEP 562: import mma/copy (and sympy) only when used
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'symlayout.atoms' has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{mod}"), name)
