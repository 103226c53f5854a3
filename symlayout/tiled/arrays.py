"""Index tables as arrays: ``function_table(L)`` of a concrete layout as an int64 numpy array.

A layout's function table, ``L(i)`` for ``i`` in ``[0, size)``, built mode by mode over the flattened modes
(colexicographic: ``L(i) = sum_j ((i / prod(s_<j)) % s_j) * d_j``) instead of point by point; a swizzle
``Sw<B,M,S> o off o inner`` applied to the inner table at once.  Any other layout (symbolic, a
non-swizzle composition) falls back to :func:`~symlayout.algebra.layout.function_table`.  The tiled
partitions (wgmma reads, TMA boxes) and the prover's whole-tile tables use it.

>>> from symlayout.algebra.layout import Layout, function_table
>>> L = Layout((4, (2, 3)), (3, (1, 12)))
>>> index_array(L).tolist() == function_table(L)
True
"""
from __future__ import annotations

from ..algebra.layout import function_table
from ..algebra import int_tuple as it


def index_array(L):
    """``function_table(L)`` as an int64 numpy array (see the module docstring)."""
    import numpy as np
    if getattr(L, "is_composed", False):
        sw, off = L.swizzle, L.offset
        if type(sw).__name__ == "Swizzle" and type(off) is int:
            return sw(index_array(L.inner) + off)
    elif hasattr(L, "shape"):
        shp, std = it.flatten_leaves(L.shape), it.flatten_leaves(L.stride)
        if all(type(x) is int for x in shp + std):
            out = np.zeros(1, dtype=np.int64)
            for s_, d_ in zip(shp, std):                 # mode j: every earlier index, then s_j copies
                if s_ != 1:
                    out = (np.arange(s_, dtype=np.int64)[:, None] * d_ + out[None, :]).ravel()
            return out
    return np.array(function_table(L), dtype=np.int64)
