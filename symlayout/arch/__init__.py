"""Hardware facts from the PTX ISA.

The modules here state what the hardware does, written from NVIDIA's PTX ISA and
CUDA driver documentation (sections cited by title, because their numbers move
between releases), *not* from CuTe/CUTLASS traits.  CuTe's traits live in
:mod:`symlayout.atoms`; tests check one against the other, and the GPU harness
(:mod:`symlayout.harness.probe_sm90`) checks these facts against the hardware,
model-free.

* :mod:`~symlayout.arch.gmma`: ``wgmma.mma_async`` (SM90): the shared-memory
  matrix descriptor, the canonical K-/MN-major layouts under each swizzle mode,
  which shared-memory byte the instruction reads for each element, the register
  fragments of A (RS form) and of the accumulator.
* :mod:`~symlayout.arch.tma`: ``cp.async.bulk.tensor`` and ``CUtensorMap``
  (``cuTensorMapEncodeTiled``): the encoding rules, where each element of a box
  lands in shared memory, the swizzle TMA applies, alignment.

Pure Python, integers only (no sympy, z3 or numpy), so the GPU harness imports
them on a machine without z3.

>>> from symlayout.arch import gmma, tma
>>> gmma.instruction_k("f16"), tma.SWIZZLE_SPAN_BYTES["128B"]
(16, 128)
"""
from __future__ import annotations

import importlib

__all__ = ["gmma", "tma"]


def __getattr__(name: str):
    if name in __all__:
        mod = importlib.import_module(f"{__name__}.{name}")
        globals()[name] = mod
        return mod
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
