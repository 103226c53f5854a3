"""Blackwell (SM100) obligations of the MMA side: ``tcgen05.mma`` operands read through UMMA
shared-memory descriptors, the CTA pair of a ``2x1SM`` atom, and the SM100 TMA loads.

Reads the models of :mod:`symlayout.tiled.umma` (per block and ``(row, k)`` of one instruction: the
logical element the TiledMMA's partition names, CuTe's byte address of it, and the byte the PTX
ISA says ``tcgen05.mma`` reads through the descriptor) and decides, enumerating every obligation:

* ``descriptor`` [A|B]: ``UMMA::make_umma_desc`` compiles (its ``static_assert``-s are refutations with
  CuTe's message), every field of every block's descriptor is legal (PTX ISA: version ``0b001``,
  layout type, reserved bits, 16-byte grid, 14-bit fields; a hand-written ``desc`` decoded bit by bit),
  and what the MMA reads through it is where CuTe keeps each element;
* ``slot_agreement`` [A|B]: for every block (MN-block, K-block, stage) and ``(row, k)``, the byte read
  through the descriptor is the byte CuTe's partition keeps that element at;
* ``coverage`` / ``exactly_once`` / ``in_bounds`` [A|B]: every element of the buffer is read, no byte
  is read as two elements, every read lies in the buffer; ``type_agreement`` [A|B]: the buffer's
  element type is the one the atom reads;
* ``cta_pair``: a ``2x1SM`` atom's peer mode ``tiled_divide(cluster, AtomThrID)`` names two distinct
  CTAs, and peer ``p`` supplies rows ``p*M/2 ..`` of A and columns ``p*N/2 ..`` of B from its own
  buffer at the same descriptor addresses (its TV layouts, against the per-CTA reads);
* ``tma`` and the TMA's ``coverage`` / ``exactly_once`` / ``in_bounds`` [A|B]: the Version-2 model
  (:mod:`symlayout.prove.hopper.obligations`) on each CTA's share (``SM100_TMA_2SM_LOAD``: the pair's
  box, each peer its half), multicast over the cluster.

What CuTe rejects at compile time is never PROVED.  No Blackwell GPU confirmed any of this: CuTe
C++ is the oracle (``tests/test_sm100_prove.py``, ``tests/oracle/blackwell_fuzz.py``).
"""
from __future__ import annotations

import time
from dataclasses import replace

from ...algebra import int_tuple as it
from ...algebra.layout import Layout, tiled_divide
from ...arch import tcgen05 as arch
from ...atoms import value_type_bits
from ...atoms.gmma import GmmaSmemLayout
from ...atoms.blockscaled import BlockScaledOp, operand_type_problems
from ...atoms.umma import mn_k_view, parse_umma_name
from .sf import SF_PROPERTIES, sf_results
from ...tiled.mma import make_tiled_mma
from ...tiled.arrays import index_array
from ...tiled.umma import umma_read_arrays
from ..copy.obligations import tv_coverage
from ..decide.tables import lazy_np as np
from ..hopper.obligations import descriptor_operand_results, tma_results
from ..verdict.result import REFUTED, Counterexample, Result, verdict

#: properties of an SM100 configuration (the MMA side), in report order
BLACKWELL_PROPERTIES = ("descriptor", "slot_agreement", "cta_pair", "coverage", "exactly_once", "in_bounds",
                        "type_agreement", "tma")
BLACKWELL_PROPERTIES = BLACKWELL_PROPERTIES + SF_PROPERTIES          # issue 29: [sf.X] (prove/blackwell/sf.py)
_DESC_PROPS = ("descriptor", "slot_agreement", "coverage", "exactly_once", "in_bounds", "type_agreement")
#: the 14-bit descriptor address fields reach 2^18 bytes of shared memory
SMEM_REACH = arch.ENCODE_MASK + 1


def _res(prop, op, t0, cex=None, checked=None, method="exhaustive", via="tcgen05.mma", detail=""):
    return Result(prop, verdict(cex, checked), operand=op, checked=checked, method=method, counterexample=cex,
                  via=via, detail=detail, seconds=time.perf_counter() - t0)


def _buffer_bases(sc) -> list[int]:
    """The buffer's base addresses to prove: a hand-written descriptor names its buffer's address (its start
    address field); else every base the alignment allows (:func:`_bases`)."""
    if sc.desc is None:
        return _bases(sc.align)
    return [(sc.desc & (1 << 14) - 1) << 4]


def _bases(align: int) -> list[int]:
    """Base addresses standing for every base aligned to ``align``: both CuTe and the PTX ISA swizzle the
    absolute address, so only the descriptor's 16-byte grid sees the base."""
    return [0] if align >= 16 else [align * j for j in range(16 // align)]


# ---------------------------------------------------------------------------
# The atom: CuTe's static_asserts
# ---------------------------------------------------------------------------


def _rejected_property(msg: str) -> str:
    """The property a CuTe ``static_assert`` on an SM100 atom refutes."""
    if "type" in msg or "bit" in msg or "Format" in msg:
        return "type_agreement"
    if "2 CTA" in msg:
        return "cta_pair"
    return "slot_agreement"


def atom_rejection(cfg, refuted) -> Result:
    msg = cfg.mma.cute_rejections[0]
    p = _rejected_property(msg)
    more = f" (and {len(cfg.mma.cute_rejections) - 1} more)" if len(cfg.mma.cute_rejections) > 1 else ""
    cex = Counterexample(f"[mma] atom {cfg.mma.atom}: CuTe does not compile this atom: static_assert \"{msg}\"{more}",
                         extra={"cute_static_assert": msg, "cute_static_asserts": list(cfg.mma.cute_rejections)})
    return Result(p, REFUTED, operand="mma", checked=1, method="cute", counterexample=cex, via="tcgen05.mma",
                  detail="CuTe rejects the configuration at compile time; the other properties are not checked",
                  expected=REFUTED if p in refuted else "proved")


# ---------------------------------------------------------------------------
# Descriptor operands
# ---------------------------------------------------------------------------


def _inner(lay) -> Layout:
    """The layout of a buffer without its swizzle (CuTe's smem_ptr form, an element swizzle, or none)."""
    if isinstance(lay, GmmaSmemLayout):
        return lay.layout
    return lay.inner if getattr(lay, "is_composed", False) else lay


def cta_tile(sc) -> tuple:
    """One CTA's ``(MN, K, stages)`` of a ``((MMA_MN,MMA_K),MMAs_MN,MMAs_K[,PIPE])`` buffer."""
    s = _inner(sc.layout).shape
    (mn, k) = (int(it.product(x)) for x in s[0])
    pipe = int(it.product(s[3])) if len(s) > 3 else 1
    return (mn * int(it.product(s[1])), k * int(it.product(s[2])), pipe)


def _el(op, coord) -> str:
    names = ("m", "k") if op == "A" else ("n", "k")
    s = f"{op}({names[0]}={coord[0]},{names[1]}={coord[1]})"
    return s + (f" of stage {coord[2]}" if len(coord) > 2 and coord[2] else "")


def _block(m, j) -> str:
    b = m.blocks[j]
    mn = "M" if m.operand == "A" else "N"
    return f"{mn}-block {b[0]}, K-block {b[1]}" + (f", stage {b[2]}" if len(b) > 2 and b[2] else "")


def _desc_text(d) -> str:
    return (f"descriptor 0x{d.encode():016x} (start {d.start_address}, LBO {d.leading_byte_offset}, SBO "
            f"{d.stride_byte_offset}, {d.layout_type}, base offset {d.base_offset})")


def _route(m, sc, j, v) -> tuple:
    """The route of value ``v`` of block ``j``, re-derived point by point: ``(route, element, CuTe's byte, the
    byte read)``."""
    op = m.operand
    row, k = v % m.rows, v // m.rows
    e = int(m.elements[j, v])
    coord = m.coord(e)
    off = int(m.offsets[j, v])
    want = int(m.cute_at(sc.layout.swizzle, off * (m.bits // 8)))
    d = m.descs[j]
    got = _read(m, j, v)
    route = [f"logical {_el(op, coord)}", f"[smem.{op}] element offset {off} -> {m.where(want)} "
             f"({sc.layout.swizzle} on the byte address, base {m.base})",
             f"{_block(m, j)}, instruction (row {row}, k {k}) -> {_desc_text(d)} -> byte {got}"]
    return route, coord, want, got


def descriptor_results(mma, sc, props, peers: int) -> list:
    """``descriptor``, ``slot_agreement``, ``coverage``, ``exactly_once``, ``in_bounds``, ``type_agreement``
    of one ``[smem.X]`` buffer (every base the alignment allows)."""
    op = sc.operand
    out = []
    t0 = time.perf_counter()
    if "type_agreement" in props:
        out.append(_type_agreement(mma, sc, op, t0))
    bits = getattr(sc.layout, "bits", 0) or value_type_bits(sc.element_type)    # storage: packed fp4 is 4
    span = -(-int(_inner(sc.layout).cosize()) * bits // 8)
    if span > SMEM_REACH:                     # (never enumerated: no CTA has that much shared memory)
        return out + [_res("descriptor", op, t0, Counterexample(
            f"[smem.{op}] spans {span} bytes: a descriptor's 14-bit address fields (16-byte units) reach "
            f"{SMEM_REACH} bytes (256 KiB), more than any SM100 CTA's shared memory (228 KiB)"), 1,
            detail="the other properties of this operand are not checked")]
    mn, k, st = cta_tile(sc)
    tile = (mn * peers, k, st)               # partition_A/B of the pair's tile by peer 0 (get_slice(0)), as CuTe
    models = [umma_read_arrays(mma, op, sc.layout, tile, base, sc.desc) for base in _buffer_bases(sc)]
    pair = " (in each CTA of the pair)" if peers > 1 else ""
    return out + descriptor_operand_results(sc, props, t0, models[0].error, {
        "descriptor": lambda t: _descriptor(models, sc, op, pair, t),
        "slot_agreement": lambda t: _slot_agreement(models, sc, op, pair, t),
        "coverage": lambda t: _coverage(models, sc, op, t),
        "exactly_once": lambda t: _exactly_once(models, sc, op, t),
        "in_bounds": lambda t: _in_bounds(models, sc, op, t)}, via="tcgen05.mma")


def _type_agreement(mma, sc, op, t0):
    want = mma.atom.val_type_a if op == "A" else mma.atom.val_type_b
    have = sc.element_type
    cex = None
    bs = parse_umma_name(mma.atom.name)
    storage = operand_type_problems(bs, op, have, sc.layout.bits) if isinstance(bs, BlockScaledOp) else []
    if storage:                                   # issue 29: the kind's format / packed vs container storage
        cex = Counterexample(storage[0], extra={"mma_type": want, "smem_type": have, "problems": storage})
    elif have != want:
        why = "" if value_type_bits(have) == value_type_bits(want) else \
            f" ({value_type_bits(have)}-bit elements read as {value_type_bits(want)}-bit)"
        cex = Counterexample(f"[smem.{op}] holds {have}, but {mma.atom.name} reads {op} as {want}{why}",
                             extra={"mma_type": want, "smem_type": have})
    return _res("type_agreement", op, t0, cex, 1)


def _mismatch(models):
    """``(model, block, value)`` of the first read whose byte is not CuTe's, or None."""
    for m in models:
        bad = (m.ptx != m.cute).ravel()
        if bad.any():
            i = int(np.argmax(bad))
            return m, i // (m.rows * m.kin), i % (m.rows * m.kin), i
    return None


def _read_refutation(prop, models, sc, op, pair, t0, hit, checked, lead=""):
    m, j, v, _i = hit
    route, coord, want, got = _route(m, sc, j, v)
    if got == want:                      # the tables and the point-by-point check disagree
        raise AssertionError(f"[smem.{op}]: block {j} value {v}: re-validation reads {got} = {want}")
    cex = Counterexample(f"{lead}{_block(m, j)}{pair}: tcgen05.mma reads {_el(op, coord)} (instruction row "
                         f"{v % m.rows}, k {v // m.rows}) from smem byte {got} through the {_desc_text(m.descs[j])}, "
                         f"but CuTe's partition of [smem.{op}] keeps it at byte {want}", value=v, element=coord,
                         address_bytes=got, route=route, extra={"base": m.base, "cute_address_bytes": want})
    return _res(prop, op, t0, cex, checked)


def _descriptor(models, sc, op, pair, t0):
    checked = 0
    for m in models:
        for j, d in enumerate(m.descs):
            checked += 1
            probs = list(m.desc_problems) if j == 0 else []
            probs += [p for p in d.problems() if p not in probs]
            top = (int(m.ptx[j].max()) + m.bits // 8 + m.per - 1) // m.per      # bytes (packed fp4: by element)
            if top > SMEM_REACH:
                probs.append(f"the operand reaches smem byte {top - 1}: the 14-bit address fields (16-byte units) "
                             f"reach {SMEM_REACH} bytes")
            if sc.desc is None and j == 0:     # make_umma_desc's byte fields before CuTe's bit fields truncate them
                cd = m.cute_desc
                raw = arch.SmemDescriptor(cd.start_address, cd.leading_byte_offset, cd.stride_byte_offset,
                                          cd.layout_type)
                probs += [f"make_umma_desc's {p} (CuTe's bit field truncates it)" for p in raw.problems()
                          if p not in probs]
            if sc.desc is not None and j == 0 and m.base % sc.align:
                probs.append(f"its start address {m.base} (the buffer's base) is not aligned to [smem.{op}] align = "
                             f"{sc.align}")
            if probs:
                hand = f"[smem.{op}] desc = 0x{sc.desc:016x}: " if sc.desc is not None and j == 0 else ""
                return _res("descriptor", op, t0, Counterexample(
                    f"{hand}{_block(m, j)}{pair}: {_desc_text(d)}: {'; '.join(probs)}",
                    extra={"descriptor": f"0x{d.encode():016x}", "problems": probs, "base": m.base}), checked)
    hit = _mismatch(models)
    if hit is not None:
        lead = ""
        if sc.desc is not None:
            lead = f"[smem.{op}] desc = 0x{sc.desc:016x} is not the descriptor the layout needs " \
                   f"(make_umma_desc: 0x{models[0].cute_desc.value:016x}): "
        return _read_refutation("descriptor", models, sc, op, pair, t0, hit, checked + hit[3] + 1, lead)
    checked += sum(m.obligations() for m in models)
    m = models[0]
    return _res("descriptor", op, t0, None, checked,
                detail=f"{len(m.descs)} descriptors ({m.major}-major, {m.descs[0].layout_type}) x {len(models)} "
                       "base(s) mod 16, fields and every read")


def _slot_agreement(models, sc, op, pair, t0):
    hit = _mismatch(models)
    if hit is not None:
        before = sum(x.obligations() for x in models[:models.index(hit[0])])
        return _read_refutation("slot_agreement", models, sc, op, pair, t0, hit, before + hit[3] + 1)
    m = models[0]
    return _res("slot_agreement", op, t0, None, sum(x.obligations() for x in models),
                detail=f"every (row, k) of {len(m.descs)} tcgen05.mma operand blocks{pair}: the PTX descriptor "
                       "decoding vs CuTe's partition")


def _marks(addr, lo: int, hi: int):
    """A bitmap over bytes ``[lo, hi)`` with the addresses of ``addr`` inside it set."""
    mark = np.zeros(hi - lo, dtype=bool)
    a = addr[(addr >= lo) & (addr < hi)]
    mark[a - lo] = True
    return mark


def _read(m, j: int, v: int) -> int:
    """The byte ``tcgen05.mma`` reads for value ``v`` of block ``j``, point by point (re-validation)."""
    return int(m.ptx_at(m.descs[j], v % m.rows, v // m.rows))


def _revalidated(ok: bool, what: str) -> None:
    if not ok:                                   # the tables and the point-by-point check disagree
        raise AssertionError(f"re-validation failed: {what}")


def _coverage(models, sc, op, t0):
    checked = 0
    for m in models:
        want = m.cute.ravel()
        lo, hi = int(want.min()), int(want.max()) + 1
        miss = ~_marks(m.ptx.ravel(), lo, hi)[want - lo]
        if miss.any():
            i = int(np.argmax(miss))
            j, v = divmod(i, m.rows * m.kin)
            a = int(want[i])
            _revalidated(not np.isin(a, m.ptx).item(), f"coverage[{op}]: byte {a} is read")
            coord = m.coord(int(m.elements[j, v]))
            return _res("coverage", op, t0, Counterexample(
                f"{_el(op, coord)} (smem byte {a}, base {m.base}) is never read by any tcgen05.mma of the TiledMMA",
                element=coord, address_bytes=a, extra={"base": m.base}), checked + i + 1)
        checked += len(want)
    return _res("coverage", op, t0, None, checked)


def _exactly_once(models, sc, op, t0):
    checked = 0
    for m in models:
        a, els = m.ptx.ravel(), m.elements.ravel()
        order = np.lexsort((els, a))
        sa, se = a[order], els[order]
        clash = (sa[1:] == sa[:-1]) & (se[1:] != se[:-1])
        if clash.any():
            i = int(np.argmax(clash))
            n = m.rows * m.kin
            (j0, v0), (j1, v1) = divmod(int(order[i]), n), divmod(int(order[i + 1]), n)
            c0, c1 = m.coord(int(m.elements[j0, v0])), m.coord(int(m.elements[j1, v1]))
            _revalidated(_read(m, j0, v0) == _read(m, j1, v1) == int(sa[i]) and c0 != c1,
                         f"exactly_once[{op}]: byte {int(sa[i])}")
            return _res("exactly_once", op, t0, Counterexample(
                f"smem byte {int(sa[i])} is read as two elements: as {_el(op, c0)} by {_block(m, j0)} and as "
                f"{_el(op, c1)} by {_block(m, j1)}", element=c1, address_bytes=int(sa[i])), checked + i + 2)
        checked += len(a)
    return _res("exactly_once", op, t0, None, checked)


def _in_bounds(models, sc, op, t0):
    checked = 0
    for m in models:
        hi = int(sc.layout.layout.cosize()) * m.bits // 8
        a = m.ptx.ravel() - m.base
        bad = (a < 0) | (a + m.bits // 8 > hi)
        if bad.any():
            i = int(np.argmax(bad))
            j, v = divmod(i, m.rows * m.kin)
            got = _read(m, j, v)
            _revalidated(got == m.base + int(a[i]) and not m.base <= got <= m.base + hi - m.bits // 8,
                         f"in_bounds[{op}]: byte {got}")
            coord = m.coord(int(m.elements[j, v]))
            return _res("in_bounds", op, t0, Counterexample(
                f"{_block(m, j)}: tcgen05.mma reads {_el(op, coord)} at smem byte {m.base + int(a[i])}, outside the "
                f"buffer's bytes [{m.base}, {m.base + hi})", element=coord, address_bytes=m.base + int(a[i])),
                checked + i + 1)
        checked += len(a)
    return _res("in_bounds", op, t0, None, checked)


# ---------------------------------------------------------------------------
# The CTA pair
# ---------------------------------------------------------------------------


def peer_mode(cluster: tuple, peers: int) -> Layout:
    """``tiled_divide(cluster, AtomThrID)``'s mode 0: which CTA of the cluster is each peer."""
    return tiled_divide(Layout(tuple(cluster)), (Layout(peers, 1),))[0]


def cta_pair_result(cfg, mma, op) -> Result:
    t0 = time.perf_counter()
    cl = cfg.mma.cluster
    peers = peer_mode(cl, op.cta_group)
    ctas = [int(peers(p)) for p in range(op.cta_group)]
    checked = len(ctas)
    if len(set(ctas)) < len(ctas) or cl[0] % op.cta_group:
        return _res("cta_pair", "mma", t0, Counterexample(
            f"[mma] {op.name} is a 2x1SM atom, but cluster = {cl}: its peer mode tiled_divide(cluster, AtomThrID) = "
            f"{peers} names CTAs {ctas}" + (" (stride 0: both peers are the same CTA, there is no pair; CUTLASS's "
                                             "builder: static_assert \"Cluster shape not divisible by MMA size\")"
                                             if len(set(ctas)) < len(ctas) else
                                             f" ({cl[0]} CTAs along x do not split into pairs: static_assert "
                                             "\"Cluster shape not divisible by MMA size\")"),
            route=[f"cluster {cl} -> Layout {Layout(tuple(cl))}", f"tiled_divide by AtomThrID {mma.atom.thr_id} -> "
                   f"peer mode {peers}", f"peer 0 -> CTA {ctas[0]}, peer 1 -> CTA {ctas[1]}"],
            extra={"peer_mode": str(peers), "ctas": ctas}), checked, via="cluster")
    # each peer supplies its half: value v = row + half*k of peer p is (p*MN/2 + row, k) of the instruction
    for o, lay, mn in (("A", mma.atom.a_layout, op.m), ("B", mma.atom.b_layout, op.n)):
        half, peers = mn // op.cta_group, op.cta_group
        got = index_array(lay).reshape(-1, peers)               # [v, p] (colex: the peer mode fastest)
        v = np.arange(got.shape[0], dtype=np.int64)[:, None]
        want = np.arange(peers, dtype=np.int64)[None, :] * half + v % half + mn * (v // half)
        bad = (got != want).ravel()
        if bad.any():
            i = int(np.argmax(bad))
            (vv, p), g, w = divmod(i, peers), int(got.ravel()[i]), int(want.ravel()[i])
            if int(lay(p, vv)) == w:
                raise AssertionError("cta_pair: the table and the point-by-point check disagree")
            return _res("cta_pair", o, t0, Counterexample(
                f"peer {p} (CTA {ctas[p]}) value {vv}: the atom's {o} layout names {o}({g % mn},{g // mn}) of the "
                f"instruction, but the peer's own buffer holds {o}({w % mn},{w // mn})", value=vv),
                checked + i + 1, via="cluster")
        checked += got.size
    for o in ("A", "B"):
        sc = cfg.smem.get(o)
        if sc is None:
            continue
        checked += 1
        rows = int(it.product(_inner(sc.layout).shape[0][0]))
        want = (op.m if o == "A" else op.n) // op.cta_group
        if rows != want:
            return _res("cta_pair", o, t0, Counterexample(
                f"[smem.{o}] holds {rows} {'rows' if o == 'A' else 'columns'} per instruction, but each peer of "
                f"{op.name} supplies its half, {want}"), checked, via="cluster")
    return _res("cta_pair", "mma", t0, None, checked, via="cluster",
                detail=f"peer mode {peers}: CTAs {ctas}; each peer's half of A's rows and B's columns from its own "
                       "buffer at the same descriptor addresses")


# ---------------------------------------------------------------------------
# SM100 TMA
# ---------------------------------------------------------------------------


def multicast_mode(cluster: tuple, peers: int, operand: str) -> int:
    """The CTAs (pairs) that share one A (B) tile: ``size<2>`` (``size<1>``) of ``cluster_layout_vmnk =
    tiled_divide(cluster, AtomThrID)``, the N (M) mode of the cluster."""
    return cluster[1] if operand == "A" else cluster[0] // peers


def _multicast_problem(cfg, op, tc) -> str:
    """Why the multicast of ``[tma.X]`` is not one the cluster has (empty: it is).
    ``make_tma_atom_A/B_sm100`` multicasts an ``SM100_TMA_2SM_LOAD_MULTICAST`` over the whole mode; an
    ``SM90_TMA_LOAD_MULTICAST`` (``make_tma_atom`` with a count) over at most the mode."""
    mode = multicast_mode(cfg.mma.cluster, op.cta_group, tc.operand)
    what = f"size<{2 if tc.operand == 'A' else 1}>(cluster_layout_vmnk) of cluster {cfg.mma.cluster} is {mode}"
    if tc.atom == "SM100_TMA_2SM_LOAD_MULTICAST" and tc.multicast != mode:
        return f"make_tma_atom_{tc.operand}_sm100 multicasts over the whole mode: {what}"
    if tc.multicast > mode:
        return f"{what}: there are not {tc.multicast} {'pairs' if op.cta_group > 1 else 'CTAs'} sharing the tile"
    return ""


def sm100_tma_results(cfg, op, sc, tc, props) -> list:
    """``[tma.X]`` of an SM100 configuration: the Version-2 TMA model on one CTA's share of the box
    (``SM100_TMA_2SM_LOAD*``: the pair's box, split along MN between the peers)."""
    o = tc.operand
    t0 = time.perf_counter()
    box = tuple(tc.box)
    pair = tc.atom.startswith("SM100_TMA_2SM")
    tile = cta_tile(sc)
    if pair:
        if op.cta_group != 2:
            return [_res("tma", o, t0, Counterexample(
                f"[tma.{o}] {tc.atom} loads a CTA pair's box, but {op.name} is a 1SM atom: there is no peer"),
                1, via="tma")]
        if box[0] % 2 or box[0] // 2 != tile[0]:
            return [_res("tma", o, t0, Counterexample(
                f"[tma.{o}] {tc.atom}: the pair's box {box} splits into two halves of {box[0] / 2:g} "
                f"{'rows' if o == 'A' else 'columns'}, but each peer's [smem.{o}] holds {tile[0]}"), 1, via="tma")]
        box = (box[0] // 2,) + box[1:]
    why = _multicast_problem(cfg, op, tc)
    if why:
        return [_res("tma", o, t0, Counterexample(f"[tma.{o}] {tc.atom}, multicast = {tc.multicast}: {why}"), 1,
                     via="tma")]
    atom = "SM90_TMA_LOAD_MULTICAST" if tc.atom.endswith("_MULTICAST") else "SM90_TMA_LOAD"
    share = replace(tc, atom=atom, box=box)
    view = replace(sc, layout=mn_k_view(sc.layout))
    out = tma_results(cfg, view, share, props)
    for r in out:
        r.via = "tma"
        if pair and r.property == "tma":
            r.detail = (r.detail + "; " if r.detail else "") + \
                f"{tc.atom}: the pair's box {tuple(tc.box)}, each peer loads its half {box} into its own buffer"
    return out


# ---------------------------------------------------------------------------
# The configuration
# ---------------------------------------------------------------------------


def prove_blackwell(cfg, props, refuted) -> tuple[list, set]:
    """Every SM100 obligation of the MMA side (``props`` filters, in order): ``(results, rejected)``;
    an atom CuTe does not compile is its one refutation (``rejected``: every operand)."""
    if cfg.mma.cute_rejections:
        return [atom_rejection(cfg, refuted)], {"A", "B", "C", "mma"}
    mma = make_tiled_mma(cfg.mma.atom, cfg.mma.layout,
                         list(cfg.mma.permutation) if cfg.mma.permutation is not None else None)
    op = parse_umma_name(cfg.mma.atom)
    out = []
    if "cta_pair" in props and op.cta_group == 2:
        out.append(cta_pair_result(cfg, mma, op))
    for o in ("A", "B"):
        sc = cfg.smem.get(o)
        if sc is not None:
            out.extend(r for r in descriptor_results(mma, sc, props, op.cta_group)
                       if r.property in props or r.method == "cute")
        tc = cfg.tma.get(o)
        if tc is not None and sc is not None:
            out.extend(r for r in sm100_tma_results(cfg, op, sc, tc, props) if r.property in props or r.method == "cute")
    out.extend(sf_results(cfg, op, props, cta_tile))   # issue 29: block-scale factors
    if "coverage" in props:
        t0 = time.perf_counter()
        checked, cex = tv_coverage(mma, "C")
        out.append(_res("coverage", "C", t0, cex, checked))
    for r in out:
        r.expected = REFUTED if r.property in refuted else "proved"
    return out, set()
