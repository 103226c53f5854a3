"""Recovered objects -> configuration tables: the one step every front end shares.

A front end finds a kernel's objects its own way (a probe program's printout of a C++
traits type, the CuTe DSL's objects at trace time) and hands them here as CuTe's print
notation; the tables they become do not depend on where they came from:

* ``[mma]`` -- ``atom``, ``layout``, ``permutation``; :func:`check_tiled_mma` builds
  symlayout's TiledMMA from the table and compares its ``get_layoutA/B/C_TV`` with the
  front end's own (a disagreement is an error, never a silent configuration);
* a TiledCopy's layout -- :func:`tiled_copy_keys`: the ``make_tiled_copy(atom, thr, val)``
  arguments ``thr``/``val`` when :mod:`~symlayout.frontends.recover` reads them back (and
  they rebuild the same copy), else the TV layout and tiler as they are (``tv``/``tiler``);
* the gmem side of ``[g2s.X]`` / ``[s2g.C]`` -- :func:`gmem_side`: the smem tile's shape
  with one contiguous mode (:func:`vector_mode`: the mode the copy's vectors run along)
  and a leading-dimension symbol in ``[params]``;
* ``[stages]`` -- :func:`record_stages`: the PIPE mode of a rank-3 smem layout.

>>> tiled_copy_keys("((_8,_16),_8):((_128,_1),_16)", "(_16,_64)")[0]
{'thr': '(16,8):(8,1)', 'val': '(1,8)'}
>>> tiled_copy_keys("((_8,_16),_8):((_128,_1),_16)", "(_16,_64)", transposed=True)[0]
{'thr': '(8,16):(1,8)', 'val': '(8,1)'}
"""
from __future__ import annotations

from ..algebra import int_tuple as it
from ..algebra.notation import parse, parse_layout
from ..atoms import get_copy_op, get_mma_atom
from ..tiled.mma import make_tiled_mma
from .document import ConfigDoc, gmem_tile, stage_slice, strip_static
from .recover import format_val, same_function, thr_val_from_tv, tiler_extents, transpose_thr_val

__all__ = ["OPERAND_MODES", "in_catalog", "check_tiled_mma", "tiled_copy_keys", "tiler_text", "vector_mode",
           "smem_tile_shape", "gmem_side", "record_stages"]

#: the modes of each operand's tile
OPERAND_MODES = {"A": ("M", "K"), "B": ("N", "K"), "C": ("M", "N")}


def in_catalog(kind: str, name: str) -> bool:
    """Whether symlayout's atom catalog has the MMA (``kind="mma"``) or copy operation ``name``.

    >>> in_catalog("mma", "SM80_16x8x16_F32F16F16F32_TN"), in_catalog("copy", "SM75_U32x4_LDSM_N"), in_catalog("copy", "Nope")
    (True, True, False)
    """
    try:
        (get_mma_atom if kind == "mma" else get_copy_op)(name)
        return True
    except Exception:  # noqa: BLE001 - a name the catalog cannot read is not in it
        return False


def check_tiled_mma(mma: dict, theirs: dict):
    """``(model, problem)``: symlayout's TiledMMA of the ``[mma]`` table, and ``None`` when its
    ``get_layoutX_TV`` equals the front end's own TV layout of every operand (``theirs``:
    ``{"A": (what the front end calls it, Layout), ...}``), else the first disagreement in words."""
    model = make_tiled_mma(mma["atom"], mma["layout"], mma["permutation"])
    for x, (name, tv) in theirs.items():
        ours = getattr(model, f"get_layout{x}_TV")()
        if not same_function(ours, tv):
            return model, f"symlayout's TiledMMA model disagrees with {name}: {ours} vs {tv}"
    return model, None


def tiler_text(extents, printed: str) -> str:
    """A tiler as extents ``(8,1)`` when it is one (a tile of identity layouts), else as printed."""
    if extents is not None:
        return "(" + ",".join(str(e) for e in extents) + ")"
    return _compact(strip_static(printed))


def tiled_copy_keys(tv: str, tiler: str, transposed: bool = False):
    """``(keys, (thr, val))`` of a TiledCopy printed as ``tv`` (``TiledLayout_TV``) and ``tiler``
    (``Tiler_MN``): ``thr``/``val`` recovered and checked to rebuild the same copy (of the
    transposed tile when ``transposed``), else ``tv``/``tiler`` and no ``(thr, val)``; keys are
    ``None`` for a transposed copy without a ``(thr, val)`` form (nothing to transpose)."""
    extents = tiler_extents(tiler)
    rec = thr_val_from_tv(parse_layout(strip_static(tv)), extents) if extents is not None else None
    if rec is not None:
        if transposed:
            rec = transpose_thr_val(*rec)
        return {"thr": str(rec[0]), "val": format_val(rec[1])}, rec
    if transposed:
        return None, None
    return {"tv": _compact(strip_static(tv)), "tiler": tiler_text(extents, tiler)}, None


def vector_mode(val) -> int | None:
    """The mode of a rank-2 tile a copy's vectors run along: the one mode where its value
    layout ``val`` has more than one value; ``None`` when that does not tell (both or neither).

    >>> from symlayout.algebra.layout import Layout
    >>> vector_mode(Layout((1, 8))), vector_mode(Layout((8, 1))), vector_mode(Layout((2, 4)))
    (1, 0, None)
    """
    wide = [val.shape[0] > 1, val.shape[1] > 1]
    return wide.index(True) if wide.count(True) == 1 else None


def smem_tile_shape(smem: str) -> tuple:
    """The (rows, columns) of an smem layout in the contract's notation (swizzle and stages aside).

    >>> smem_tile_shape("Sw<3,3,3> o 0 o ((8,16),(64,1),(1,4)):((64,512),(1,0),(0,8192))")
    (128, 64)
    """
    inner = parse(smem)
    return tuple(it.product_each(getattr(inner, "inner", inner).shape)[:2])


def gmem_side(doc: ConfigDoc, x: str, smem: str, mode: int, why: str, ld: str, atom: str, value_type: str,
              multiple_of: int | None = None) -> tuple[dict, str]:
    """``(keys, note)``: the gmem keys of a global-memory copy of operand ``x`` whose smem tile is
    ``smem``, its ``mode`` contiguous (``why``: the reason, for the note), the other of stride
    ``ld``, whose range goes into ``doc.params`` (a multiple of the copy's vector, or of
    ``multiple_of`` elements when given: ``ValueError`` unless that is a multiple of the vector)."""
    keys, rng, ld_note = gmem_tile(smem_tile_shape(smem), mode, ld, atom, value_type)
    if multiple_of is not None:
        if multiple_of % rng["multiple_of"]:
            raise ValueError(f"ld_multiple_of={multiple_of} is not a multiple of the copy's vector "
                             f"({rng['multiple_of']} elements)")
        rng = dict(rng, multiple_of=int(multiple_of))
        ld_note = f"{ld} = the leading dimension, assumed a multiple of {multiple_of} elements (as given)"
    doc.params[ld] = rng
    return keys, f"the {x} tile, {OPERAND_MODES[x][mode]}-contiguous ({why}); {ld_note}"


def record_stages(doc: ConfigDoc, smem: str) -> tuple[int, int] | None:
    """Set ``doc.stages`` from the PIPE mode of a rank-3 smem layout; ``(recorded, found)`` when
    it contradicts the count already recorded (``doc.stages`` then unchanged), else ``None``."""
    sl = stage_slice(smem)
    if sl is None:
        return None
    if doc.stages not in (None, sl[1]):
        return doc.stages, sl[1]
    doc.stages = sl[1]
    return None


def _compact(s: str) -> str:
    return s.replace(" ", "")
