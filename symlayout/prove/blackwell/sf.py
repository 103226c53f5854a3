"""Block-scale factors (issue 29): the ``sf`` and ``sf_kind`` obligations of ``[sf.A]`` / ``[sf.B]``.

The factor of data element ``(mn, k)`` of A (of B: ``(n, k)``) scales the K-block ``k // vec``. The MMA
finds it through the 128x4 block format: ``tcgen05.cp`` (UTCCP ``4x32dp128bit``) copies each 512-byte
block of the CTA's factor buffer into Tensor Memory as CuTe's ``tmem_sf_frg`` lays it out, so the byte a
factor must sit at in shared memory is the one ``Sm1xxBlockScaledConfig<vec>::deduce_smem_layoutSFA/SFB``
gives for the CTA tile (SFA: the M rows of this CTA; SFB: the N columns of the whole MMA, rounded up to
128), and in global memory the one ``tile_atom_to_shape_SFA/SFB`` gives.

``sf`` [sf.X], decided by enumerating every (row, K-block, stage) of the CTA tile (and every (row,
K-block, batch) of ``gmem`` when given):

* one factor per K-block: the ``vec`` elements of a block read one byte (the layout's stride over them is 0);
* exactly one: no two (row, K-block, stage) share a byte;
* where the layouts put it: the byte ``[sf.X] smem`` (``gmem``) gives is the one the kernel's UTCCP copy
  (TMA load) reads; a row or K-block the buffer has no slot for is refuted.

``sf_kind`` [sf.X]: the factor type and vector size are the atom's (``ValTypeSF``, ``SFVecSize``) and a pair
the MMA kind takes (PTX ISA, :data:`symlayout.atoms.blockscaled.KINDS`).

Every refutation is re-derived point by point (CuTe's ``crd2idx`` on the hierarchical coordinate) before
it is reported.  The TMEM side (``placement = "tmem"``: the columns ``tmem_sf_frg`` takes after the
accumulators) is a hook for ``tmem_alloc`` and is not decided here.
"""
from __future__ import annotations

import time

from ...algebra import int_tuple as it
from ...algebra.layout import Layout, function_array
from ...atoms.blockscaled import (KINDS, BlockScaledOp, deduce_smem_layout_sf, staged_smem_layout_sf,
                                  tile_atom_to_shape_sf, tmem_sf_columns)
from ...atoms.umma import parse_umma_name
from ..decide.tables import lazy_np as np
from ..verdict.result import Counterexample, Result, verdict

#: the properties of a ``[sf.X]`` table
SF_PROPERTIES = ("sf_kind", "sf")


def _res(prop, op, t0, cex=None, checked=None, via="tcgen05.cp", detail=""):
    return Result(prop, verdict(cex, checked), operand=f"sf.{op}", checked=checked, method="exhaustive",
                  counterexample=cex, via=via, detail=detail, seconds=time.perf_counter() - t0)


def each_sf(cfg, props, kind_result, sf_check) -> list:
    """``sf_kind`` (``kind_result(sc)``) and ``sf`` (``sf_check(x, sc)``, None where it is not decided here) of
    every ``[sf.X]``, A then B: shared by the TMEM (SM100) and the register (SM120) placements."""
    out = []
    for x in ("A", "B"):
        sc = cfg.sf.get(x)
        if sc is None:
            continue
        if "sf_kind" in props:
            out.append(kind_result(sc))
        if "sf" in props:
            out += [r for r in (sf_check(x, sc),) if r is not None]
    return out


def sf_results(cfg, op, props, cta_tile) -> list:
    """``sf_kind`` and ``sf`` of every ``[sf.X]`` (``cta_tile(smem)``: one CTA's (MN, K, stages))."""
    return each_sf(cfg, props, lambda sc: sf_kind_result(op, sc),
                   lambda x, sc: sf_result(op, sc, cta_tile(cfg.smem[x])) if x in cfg.smem else None)


def sf_tmem_blocks(cfg, cta_tile) -> list:
    """The hook for ``tmem_alloc``: ``[("sf.A", columns), ("sf.B", columns)]``, the TMEM column blocks the
    factors take after ``tcgen05.cp``, in CUTLASS's order (SFA right after the accumulator stages, SFB right
    after SFA; ``find_tmem_tensor_col_offset``), for the ``[sf.X]`` tables a configuration has.

    ``cta_tile``: :func:`symlayout.prove.blackwell.obligations.cta_tile`."""
    op = parse_umma_name(cfg.mma.atom)
    return [(f"sf.{x}", tmem_columns(op, x, cta_tile(cfg.smem[x]))) for x in ("A", "B")
            if x in cfg.sf and x in cfg.smem and isinstance(op, BlockScaledOp)]


# ---------------------------------------------------------------------------- sf_kind


def sf_kind_result(op, sc) -> Result:
    t0 = time.perf_counter()
    x = sc.operand
    if not isinstance(op, BlockScaledOp):
        cex = Counterexample(f"[sf.{x}]: {op.name} is not a block-scaled atom; kind::{op.kind} reads no scale "
                             "factors", extra={"atom": op.name})
        return _res("sf_kind", x, t0, cex, 1, via="tcgen05.mma")
    kind = KINDS[op.kind]
    have, want = (sc.type, sc.vec), (op.sf_type, op.vec)
    cex = None
    if have != want:
        cex = Counterexample(f"[sf.{x}] holds {sc.type} factors, one per {sc.vec} elements, but {op.name} "
                             f"(kind::{op.kind} .block{op.vec}) reads {op.sf_type} factors, one per {op.vec} elements",
                             extra={"sf_type": sc.type, "vec": sc.vec, "mma_sf_type": op.sf_type, "mma_vec": op.vec})
    elif have not in kind.factors:
        cex = Counterexample(f"[sf.{x}] {sc.type}/{sc.vec}: kind::{op.kind} takes " + " or ".join(
            f"{t}/{v}" for t, v in sorted(kind.factors)) + " (PTX ISA, tcgen05.mma block scaling)",
            extra={"sf_type": sc.type, "vec": sc.vec, "kind": op.kind})
    return _res("sf_kind", x, t0, cex, 2, via="tcgen05.mma",
                detail=f"{sc.type}/{sc.vec}: the atom's and kind::{op.kind}'s")


# ---------------------------------------------------------------------------- sf


def kernel_tile_layout(op, x: str, tile: tuple):
    """One stage of the factor buffer the kernel's UTCCP copy reads: ``deduce_smem_layoutSFA/SFB`` of the
    MMA tile (A: this CTA's M rows times the peers; B: the N columns of the pair)."""
    mn, k, _stages = tile
    peers = op.cta_group
    return deduce_smem_layout_sf(x, op.vec, op.k, (mn * peers, mn * peers, k), peers)   # (A reads mode 0, B mode 1)


def kernel_smem_layout(op, x: str, tile: tuple):
    """:func:`kernel_tile_layout` with the collective's stage mode."""
    return staged_smem_layout_sf(kernel_tile_layout(op, x, tile), tile[2])


def tmem_columns(op, x: str, tile: tuple) -> int:
    """The TMEM columns the factors of ``[sf.X]`` take after ``tcgen05.cp`` (``tmem_sf_frg``; CUTLASS puts
    SFA after the accumulators and SFB after SFA): what ``tmem_alloc`` must add to the allocation."""
    dup = op.cta_group == 2 and op.m == 128                     # ScaleFactorDuplicated2by2
    return tmem_sf_columns(kernel_tile_layout(op, x, tile), op.cta_group, x, dup)


def _table(L):
    return function_array(L, np)


def _mode_sizes(L) -> tuple:
    """``(MMA_MN, MMA_K, MMAs_MN, MMAs_K, stages)`` of an MMA-partitioned factor buffer."""
    s = L.shape
    mode0 = s[0] if it.is_tuple(s[0]) and len(s[0]) == 2 else (s[0], 1)
    rest = [int(it.product(m)) for m in s[1:]] + [1] * (4 - len(s))
    return (int(it.product(mode0[0])), int(it.product(mode0[1])), *rest[:3])


class Offsets:
    """``off[r, k, s]``, the byte of every (row, K element, stage or batch) through a layout, -1 where it has
    no slot, and ``index(p)``, the layout's 1-D index of a point (for the report).

    A plain layout is a sum over its modes (CuTe's ``crd2idx`` is the inner product of the hierarchical
    coordinate with the strides), so when rows, K and stages run through separate modes ``off`` is
    ``a[r] + b[k] + c[s]`` (``sep``: the three vectors and where each has a slot) and is never built whole;
    ``dense`` is the whole array otherwise (a swizzled or symbolic layout)."""

    def __init__(self, shape, index, dense=None, sep=None):
        self.shape, self.index, self._dense, self.sep = shape, index, dense, sep

    @property
    def size(self) -> int:
        return self.shape[0] * self.shape[1] * self.shape[2]

    def at_k(self, ks):
        """``off[:, ks, :]`` as an array."""
        if self._dense is not None:
            return self._dense[:, ks, :]
        (a, ra), (b, rb), (c, rc) = self.sep
        b, rb = b[ks], rb[ks]
        ok = ra[:, None, None] & rb[None, :, None] & rc[None, None, :]
        return np.where(ok, a[:, None, None] + b[None, :, None] + c[None, None, :], -1)

    def first_split(self, vec: int):
        """The first ``(r, k, s)`` (stage slowest, then K, then row) whose byte is not the one of its
        K-block's first element, None when there is none (every row, stage and block start has a slot)."""
        first = (np.arange(self.shape[1]) // vec) * vec
        if self._dense is not None:
            split = self._dense != self._dense[:, first, :]
            return _first(split) if split.any() else None
        (_a, ra), (b, rb), (_c, rc) = self.sep   # a[r] + c[s] cancel where the row and stage have a slot
        bad = (rb != rb[first]) | (rb & (b != b[first]))
        if not (bad.any() and ra.any() and rc.any()):
            return None
        return int(np.argmax(ra)), int(np.argmax(bad)), int(np.argmax(rc))


def _sep_ok(L, modes: int) -> bool:
    """Whether ``L`` is a plain, concrete layout of at most ``modes`` top-level modes."""
    if getattr(L, "is_composed", False) or getattr(L, "is_swizzle", False) or not it.is_tuple(L.shape):
        return False
    return len(L.shape) <= modes and all(isinstance(v, int) for v in it.flatten((L.shape, L.stride)))


def _mode(L, i):
    """Mode ``i`` of ``L`` (a layout of one point past its rank)."""
    return L[i] if i < len(L.shape) else Layout(1, 0)


def _smem_offsets(L, rows: int, k: int, stages: int, separable: bool = True) -> Offsets:
    """The bytes of every (row, K element, stage) through an MMA-partitioned buffer (``separable=False``:
    the whole array, as for a layout that is not a sum over its modes)."""
    mmn, mk, nmn, nk, ns = _mode_sizes(L)

    def index(p):
        r, kk, s = p
        return r % mmn + mmn * (kk % mk) + mmn * mk * (r // mmn + nmn * (kk // mk + nk * s))
    if separable and _sep_ok(L, 4):
        two = it.is_tuple(L.shape[0]) and len(L.shape[0]) == 2
        lmn, lk = (L[0][0], L[0][1]) if two else (L[0], Layout(1, 0))
        return Offsets((rows, k, stages), index, sep=(_split(lmn, _mode(L, 1), rows, mmn, nmn),
                                                      _split(lk, _mode(L, 2), k, mk, nk),
                                                      _split(Layout(1, 0), _mode(L, 3), stages, 1, ns)))
    r = np.arange(rows)[:, None, None]
    kk = np.arange(k)[None, :, None]
    s = np.arange(stages)[None, None, :]
    rin, rblk, kin, kit = r % mmn, r // mmn, kk % mk, kk // mk
    idx = rin + mmn * kin + mmn * mk * (rblk + nmn * (kit + nk * s))
    ok = (rblk < nmn) & (kit < nk) & (s < ns)
    off = np.where(ok, _table(L)[np.where(ok, idx, 0)], -1)
    return Offsets((rows, k, stages), index, dense=off)


def _split(inner, outer, n: int, size: int, blocks: int):
    """``(inner(i % size) + outer(i // size), i // size < blocks)`` for ``i < n``."""
    i = np.arange(n)
    blk = i // size
    ok = blk < blocks
    return _table(inner)[i % size] + _table(outer)[np.where(ok, blk, 0)], ok


def _gmem_offsets(L, rows: int, k: int, batches: int, dims=None, separable: bool = True) -> Offsets:
    """The bytes of every (row, K element, batch) through a layout over ``(MN, K, L)`` whose first two modes
    have ``dims`` (default ``(rows, k)``: a kernel layout may be padded beyond the data)."""
    R, K = dims or (rows, k)

    def index(p):
        r, kk, b = p
        return r + R * (kk + K * b)
    sizes = [int(it.product(m)) for m in L.shape] if it.is_tuple(L.shape) else []
    if separable and _sep_ok(L, 3) and sizes[:2] == [R, K]:
        return Offsets((rows, k, batches), index, sep=tuple(_split(Layout(1, 0), _mode(L, i), n, 1, n)
                                                            for i, n in enumerate((rows, k, batches))))
    r = np.arange(rows)[:, None, None]
    kk = np.arange(k)[None, :, None]
    b = np.arange(batches)[None, None, :]
    return Offsets((rows, k, batches), index, dense=_table(L)[r + R * (kk + K * b)])


def sf_result(op, sc, tile) -> Result:
    """``sf`` of one ``[sf.X]``: the shared-memory buffer of every stage, then ``gmem`` when given."""
    t0 = time.perf_counter()
    x = sc.operand
    if not isinstance(op, BlockScaledOp):
        return _res("sf", x, t0, Counterexample(f"[sf.{x}]: {op.name} reads no scale factors"), 1)
    mn, k, stages = tile
    rows = mn if x == "A" else mn * op.cta_group
    want_l = kernel_smem_layout(op, x, tile)
    have = _smem_offsets(sc.smem, rows, k, stages)
    want = _smem_offsets(want_l, rows, k, stages)
    where = (f"Sm1xxBlockScaledConfig<{op.vec}>::deduce_smem_layoutSF{x} of the MMA tile, "
             f"{stages} stage(s): {want_l}")
    cex, checked = _decide(x, op.vec, have, want, ("row" if x == "A" else "column", "stage"), "[sf.%s] smem" % x,
                           "the kernel's tcgen05.cp (UTCCP) and the MMA read it", where,
                           lambda p: _revalidate(sc.smem, have.index(p)), lambda p: _revalidate(want_l, want.index(p)))
    if cex is None and sc.gmem is not None:
        sizes = [int(it.product(m)) for m in sc.gmem.shape] + [1]
        g_mn, g_k, g_b = sizes[:3]
        # CUTLASS passes the problem's M/N/K at run time: CuTe's tile_to_shape pads them to whole 128x4 blocks
        pad = (-(-g_mn // 128) * 128, -(-g_k // (4 * op.vec)) * 4 * op.vec)
        want_g = tile_atom_to_shape_sf(op.vec, pad[0], pad[1], g_b)
        have = _gmem_offsets(sc.gmem, g_mn, g_k, g_b)
        want = _gmem_offsets(want_g, g_mn, g_k, g_b, pad)
        cex, more = _decide(x, op.vec, have, want, ("row" if x == "A" else "column", "batch"), f"[sf.{x}] gmem",
                            "the kernel's TMA load reads it", f"Sm1xxBlockScaledConfig<{op.vec}>::"
                            f"tile_atom_to_shape_SF{x}: {want_g}", lambda p: _revalidate(sc.gmem, have.index(p)),
                            lambda p: _revalidate(want_g, want.index(p)))
        checked += more
    return _res("sf", x, t0, cex, checked,
                detail=f"every ({'row' if x == 'A' else 'column'}, K-block) of {rows}x{k // op.vec} blocks x "
                       f"{stages} stage(s): one factor, once, where UTCCP reads it"
                       + (" (and the global buffer)" if sc.gmem is not None else "")
                       + (f"; in TMEM: {tmem_columns(op, x, tile)} columns (tmem_sf_frg)"
                          if sc.placement == "tmem" else ""))


def _revalidate(L, idx) -> int:
    """``L(idx)`` by CuTe's ``crd2idx`` on the hierarchical coordinate of ``idx`` (not the table)."""
    return int(it.crd2idx(int(idx), L.shape, L.stride))


def _first(mask):
    """The first ``(r, k, s)`` where ``mask`` holds, stage slowest, then K, then row."""
    r, k, s = np.nonzero(mask)
    i = int(np.lexsort((r, k, s))[0])
    return int(r[i]), int(k[i]), int(s[i])


def _decide(x, vec, have, want, names, buf, reader, where, have_at, want_at):
    """The three checks over ``have[r, k, s]`` (the buffer's byte, -1: no slot) and ``want`` (the
    reader's byte): ``(counterexample or None, obligations)``."""
    rows, k, ns = have.shape
    first = (np.arange(k) // vec) * vec
    reps = have.at_k(slice(None, None, vec))
    checked = 0

    def point(r, kk, s):
        return f"({names[0]} {r}, K-block {kk // vec}" + (f", {names[1]} {s})" if ns > 1 else ")")

    def el(r, kk):
        return f"{x}({'m' if x == 'A' else 'n'}={r},k={kk})"

    # a (row, K-block) the buffer has no slot for
    miss = reps < 0
    checked += reps.size
    if miss.any():
        r, j, s = _first(miss)
        return Counterexample(f"{point(r, j * vec, s)} of {x}: {buf} has no slot for its factor (its extent ends "
                              f"before it); {reader} from byte {want_at((r, j * vec, s))} ({where})",
                              element=(r, j * vec, s), route=[f"logical {el(r, j * vec)} .. k={j * vec + vec - 1}",
                                                              f"{buf}: no slot", where]), checked
    # one factor per K-block
    split = have.first_split(vec)
    checked += have.size
    if split is not None:
        r, kk, s = split
        a, b = have_at((r, kk, s)), have_at((r, int(first[kk]), s))
        if a == b:
            raise AssertionError(f"sf re-validation: {buf} ({r},{kk},{s})")
        return Counterexample(f"{point(r, kk, s)} of {x}: {buf} gives {el(r, kk)} the factor at byte {a} but "
                              f"{el(r, int(first[kk]))} of the same {vec}-element block the one at byte {b}: a "
                              f"block is scaled by one factor", element=(r, kk, s), address_bytes=a), checked
    # exactly once
    flat = reps.ravel()
    lo = int(flat.min()) if flat.size else 0
    counts = np.bincount(flat - lo)          # (every byte >= 0 here: each point has a slot)
    if (counts > 1).any():                   # the smallest shared byte, its first two points in flat order
        both = np.nonzero(flat == lo + int(np.argmax(counts > 1)))[0][:2]
        p0 = np.unravel_index(int(both[0]), reps.shape)
        p1 = np.unravel_index(int(both[1]), reps.shape)
        (r0, j0, s0), (r1, j1, s1) = ((int(v) for v in p) for p in (p0, p1))
        a = have_at((r1, j1 * vec, s1))
        if a != have_at((r0, j0 * vec, s0)):
            raise AssertionError(f"sf re-validation: {buf} duplicates")
        return Counterexample(f"{buf} byte {a} holds the factor of {point(r0, j0 * vec, s0)} and of "
                              f"{point(r1, j1 * vec, s1)} of {x}: every (row, K-block) needs its own factor",
                              element=(r1, j1 * vec, s1), address_bytes=a), checked
    # where the reader looks
    wreps = want.at_k(slice(None, None, vec))
    bad = reps != wreps
    checked += reps.size
    if bad.any():
        r, j, s = _first(bad)
        p = (r, j * vec, s)
        a, b = have_at(p), want_at(p)
        if a == b:
            raise AssertionError(f"sf re-validation: {buf} {p}")
        return Counterexample(f"{point(r, j * vec, s)} of {x}: {buf} keeps its factor at byte {a}, but {reader} from "
                              f"byte {b} ({where})", element=p, address_bytes=a,
                              route=[f"logical {el(r, j * vec)} .. k={j * vec + vec - 1}, K-block {j}",
                                     f"{buf} -> byte {a}", f"{reader} -> byte {b}"],
                              extra={"expected_address_bytes": b}), checked
    return None, checked
