"""Tiled MMA and tiled copy (CuTe ``mma_atom.hpp`` / ``copy_atom.hpp``)."""
from .mma import TiledMMA, ThrMMA, make_tiled_mma  # noqa: F401
from .copy import TiledCopy, ThrCopy, make_tiled_copy, make_tiled_copy_A, make_tiled_copy_B, make_tiled_copy_C  # noqa: F401
