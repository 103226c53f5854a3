"""Hopper (SM90) obligations: GMMA descriptor operands, register fragments, accumulators, TMA.

Reads the models of :mod:`symlayout.tiled.gmma` (what every warpgroup's ``wgmma``
reads through its descriptors, CuTe's view and the PTX ISA's) and
:mod:`symlayout.tiled.tma` (where every TMA box element lands) and decides, by
enumerating every obligation:

* ``descriptor`` [A|B]: CuTe builds every descriptor (``make_gmma_desc`` compiles:
  canonical K-/MN-major INTER/SW32/SW64/SW128 form, the swizzle on the pointer), the
  descriptor can say it (start address on the 16-byte grid for every base the
  alignment allows, LBO/SBO in the 14-bit fields, MN-major only for 16-bit types);
* ``slot_agreement`` [A|B]: for every warpgroup, fragment element (MN-block, K-block,
  stage) and instruction element ``(row, k)``, the byte ``wgmma`` reads through the
  descriptor (PTX ISA, checked on the H200) is the byte where CuTe's partition of the
  smem tensor keeps that element; [A] of an RS atom: CuTe's ``ALayout_64xK`` against
  the PTX A fragment of every thread; [C]: ``CLayout_64xN`` against the PTX accumulator;
* ``coverage`` [A|B] every byte of the smem tile is read by some ``wgmma``; [C] the
  accumulators own the C tile (TiledMMA TV layout); ``exactly_once`` [A|B] no
  warpgroup reads one byte twice (overlapping stages or broadcast modes);
  ``in_bounds`` [A|B] every byte read lies in the tile's buffer;
* via TMA (``via = "tma"``): ``tma`` (CuTe's ``make_tma_copy`` succeeds, the driver
  would encode the map, global strides multiples of 16 bytes, destinations 128-byte
  aligned, the map's swizzle is the smem layout's, and every box element lands on the
  byte where the smem layout keeps it), ``coverage`` (every byte of every stage is
  written), ``exactly_once`` (no byte written twice, multicast slices included),
  ``in_bounds`` (every write inside the buffer).

What CuTe rejects at compile time is never PROVED: a ``make_gmma_desc`` that does not
compile refutes ``descriptor`` and nothing else of that operand is checked.
"""
from __future__ import annotations

import functools
import time

from ...algebra import int_tuple as it
from ...algebra._lazy import sympy
from ...algebra.composed import ComposedLayout
from ...algebra.layout import Layout
from ...algebra.symbolic import decide
from ...arch import gmma as arch
from ...arch import tma as arch_tma
from ...atoms import value_type_bits, value_type_info
from ...atoms.gmma import GmmaSmemLayout, arch_descriptor
from ...atoms.mma import get_mma_atom
from ...atoms.tma import tma_swizzle
from ...tiled.gmma import WARPGROUP, gmma_operand_model
from ...tiled.arrays import index_array
from ...tiled.tma import tma_model
from ..copy.obligations import tv_coverage
from ..decide.tables import index_table, lazy_np as np, one_owner
from ..verdict.result import ERROR, PROVED, REFUTED, UNKNOWN, Counterexample, Result, verdict
from ..verdict.shared import reused, shared

#: properties of a GMMA configuration, in report order
HOPPER_PROPERTIES = ("descriptor", "slot_agreement", "coverage", "exactly_once", "in_bounds", "tma")
_DESC_PROPS = ("descriptor", "slot_agreement", "coverage", "exactly_once", "in_bounds")
_TMA_PROPS = ("tma", "coverage", "exactly_once", "in_bounds")


def is_gmma_atom(name: str) -> bool:
    """True for the name of an SM90 GMMA (wgmma) MMA atom."""
    return ((get_mma_atom(name).ptx_model or {}).get("instr")) == "wgmma"


def is_gmma(mma) -> bool:
    """True for a TiledMMA of an SM90 GMMA (wgmma) atom."""
    pm = getattr(mma.atom, "ptx_model", None) or {}
    return pm.get("instr") == "wgmma"


def _bases(align: int, period: int) -> list[int]:
    """Smem base addresses that stand for every base aligned to ``align``: the verdicts
    depend on the base only modulo ``period`` (the descriptor's 16-byte grid, TMA's
    128-byte destination rule; the swizzles act on absolute addresses on both sides)."""
    if align >= period:
        return [0]
    return [align * j for j in range(period // align)]


def _res(prop, op, t0, cex=None, checked=None, method="exhaustive", via="", detail="", status=None):
    st = status or verdict(cex, checked)
    return Result(prop, st, operand=op, checked=checked, method=method, counterexample=cex, via=via,
                  detail=detail, seconds=time.perf_counter() - t0)


def _el(op, coord) -> str:
    names = ("m", "k") if op == "A" else ("n", "k")
    s = f"{op}({names[0]}={coord[0]},{names[1]}={coord[1]})"
    return s + (f" of stage {coord[2]}" if len(coord) > 2 else "")


def _where(m, rd) -> str:
    blk = rd.block
    mn = "M" if m.operand == "A" else "N"
    s = f"warpgroup {rd.warpgroup} (threads {rd.thread}-{rd.thread + WARPGROUP - 1}), {mn}-block {blk[0]}, K-block {blk[1]}"
    return s + (f", stage {blk[2]}" if len(blk) > 2 else "")


def _desc_text(d) -> str:
    return (f"descriptor start {d.start_address}, LBO {d.leading_byte_offset}, SBO {d.stride_byte_offset}, "
            f"swizzle {d.swizzle}")


# ---------------------------------------------------------------------------
# Descriptor operands
# ---------------------------------------------------------------------------


#: a descriptor operand's properties, in the order they are reported
DESCRIPTOR_PROPERTIES = ("descriptor", "slot_agreement", "coverage", "exactly_once", "in_bounds")


def descriptor_operand_results(sc, props, t0, error, checks: dict, via: str) -> list:
    """The properties ``props`` of the descriptor operand ``sc`` (one ``[smem.X]``) by ``checks`` (property ->
    its check, called with its start time), in :data:`DESCRIPTOR_PROPERTIES` order; where CuTe does not
    compile the operand (``error``, the ``static_assert`` it fails), one REFUTED ``descriptor`` instead: shared
    by wgmma (SM90) and tcgen05.mma (SM100) operands."""
    op = sc.operand
    if error is not None:
        cex = Counterexample(f"[smem.{op}] {sc.raw_layout}: CuTe does not compile this descriptor operand: {error}",
                             extra={"cute_static_assert": str(error)})
        return [_res("descriptor", op, t0, cex, 1, method="cute", via=via,
                     detail="CuTe rejects the configuration at compile time; the other properties of this "
                            "operand are not checked")]
    return [checks[p](time.perf_counter()) for p in DESCRIPTOR_PROPERTIES if p in props]


def descriptor_results(mma, sc, props, model=None) -> list:
    """``descriptor``, ``slot_agreement``, ``coverage``, ``exactly_once``, ``in_bounds`` of [smem.X];
    ``model()``: its :func:`~symlayout.tiled.gmma.gmma_operand_model`, when the caller keeps one."""
    op = sc.operand
    t0 = time.perf_counter()
    m = model() if model is not None else gmma_operand_model(mma, op, sc.element_type, sc.layout)
    bases = _bases(sc.align, 16)
    out = descriptor_operand_results(sc, props, t0, m.error, {
        "descriptor": lambda t: _descriptor(m, sc, bases, op, t),
        "slot_agreement": lambda t: _slot_agreement(m, bases, op, t),
        "coverage": lambda t: _coverage(m, op, bases, t),
        "exactly_once": lambda t: _exactly_once(m, op, bases, t),
        "in_bounds": lambda t: _in_bounds(m, op, bases, t)}, via="wgmma")
    for r in out:
        r.via = "wgmma"
    return out


def _descriptor(m, sc, bases, op, t0):
    checked = 0
    if m.major == "MN" and not arch.supports_mn_major(m.atype):
        return _res("descriptor", op, t0, Counterexample(
            f"[smem.{op}] is MN-major, but the PTX ISA has no MN-major (transposed) wgmma operand for .{m.atype} "
            "(only .f16/.bf16)"), 1)
    seen = set()
    tops: dict = {}                            # base -> the largest byte each read reads (all reads at once)
    for j, rd in enumerate(m.reads):
        key = (rd.desc.start_address, rd.desc.leading_byte_offset, rd.desc.stride_byte_offset)
        for base in bases:
            checked += 1
            start = base + rd.desc.start_address
            if start % 16:
                return _res("descriptor", op, t0, Counterexample(
                    f"{_where(m, rd)}: the descriptor's start address is smem byte {start} (base {base}, aligned to "
                    f"{sc.align} bytes, + offset {rd.desc.start_address}), not a multiple of 16: the descriptor "
                    f"holds {start >> 4} x 16 and wgmma reads from byte {start & ~15}", thread=rd.thread,
                    address_bytes=start, extra={"base": base}), checked)
            if (key, base) in seen:
                continue
            seen.add((key, base))
            if base not in tops:
                tops[base] = m.ptx_reads(base, wrap=False).max(axis=1).tolist()
            top = tops[base][j] + m.bytes
            if top > arch.ENCODE_MASK + 1:
                return _res("descriptor", op, t0, Counterexample(
                    f"{_where(m, rd)}: the operand reaches smem byte {top - 1} (base {base}); descriptor addresses are "
                    f"14-bit fields of 16-byte units: nothing beyond {arch.ENCODE_MASK + 1} bytes (256 KiB) can be "
                    "read", thread=rd.thread, address_bytes=top - 1, extra={"base": base}), checked)
            ad = arch_descriptor(rd.desc._replace(start_address=start))
            probs = [p for p in ad.problems() if not p.startswith("start_address")]
            if probs:
                return _res("descriptor", op, t0, Counterexample(
                    f"{_where(m, rd)}: {_desc_text(ad)}: {'; '.join(probs)}", thread=rd.thread), checked)
    return _res("descriptor", op, t0, None, checked,
                detail=f"{len(m.reads)} descriptors ({m.major}-major, {m.reads[0].desc.layout_type}) x "
                       f"{len(bases)} base(s) mod 16")


def _slot_agreement(m, bases, op, t0):
    # every (read, base, value) at once, in the order the obligations are counted
    _e, offs = m.read_arrays()
    got = np.stack([m.ptx_reads(base) for base in bases], axis=1)                    # (reads, bases, values)
    want = np.stack([m.smem.swizzle(base + offs * m.bits // 8) for base in bases], axis=1)
    bad = (got != want).ravel()
    checked = bad.size
    if bad.any():
        i = int(np.argmax(bad))
        checked = i + 1
        vals = m.rows * m.kin
        rd, base, v = m.reads[i // (vals * len(bases))], bases[i // vals % len(bases)], i % vals
        got, want = m.ptx_address(rd, base, v), m.cute_address(base, rd.offsets[v])
        coord = m.coord(rd.elements[v])
        d = m._descriptor_at(rd, base)
        return _res("slot_agreement", op, t0, Counterexample(
            f"{_where(m, rd)}: wgmma reads {_el(op, coord)} (instruction row {v % m.rows}, k {v // m.rows}) "
            f"from smem byte {got} through the {_desc_text(d)}, but CuTe's partition of [smem.{op}] "
            f"keeps it at byte {want}", thread=rd.thread, value=v, element=coord, address_bytes=got,
            extra={"base": base, "cute_address_bytes": want}), checked)
    return _res("slot_agreement", op, t0, None, checked,
                detail=f"every (row, k) of {len(m.reads)} wgmma operand reads, PTX descriptor decoding vs CuTe's "
                       "partition")


def _read_at(m, i):
    """(read, value) of flat position ``i`` of one base's ``(reads, values)`` array."""
    vals = m.rows * m.kin
    return m.reads[i // vals], i % vals


def _coverage(m, op, bases, t0):
    tab = index_table(m.smem.layout)
    checked = 0
    for base in bases:
        read = m.ptx_reads(base).ravel() - base
        want = m.smem.swizzle(base + tab * m.bits // 8) - base
        miss = ~np.isin(want, read)
        if miss.any():
            e = int(np.argmax(miss))
            checked += e + 1
            a = int(want[e])
            return _res("coverage", op, t0, Counterexample(
                f"{_el(op, m.coord(e))} (smem byte {base + a}, base {base}) is never read by any wgmma of the "
                "TiledMMA", element=m.coord(e), address_bytes=base + a, extra={"base": base}), checked)
        checked += len(tab)
    return _res("coverage", op, t0, None, checked)


def _exactly_once(m, op, bases, t0):
    """Every byte wgmma reads holds one tile element: no two elements (stages included)
    are read from the same byte, by any warpgroup (warpgroups that share an operand
    slice read the same elements, which is not a violation)."""
    els = m.read_arrays()[0].ravel()
    checked = 0
    for base in bases:
        a = m.ptx_reads(base).ravel() - base
        if one_owner(a, els):
            checked += len(a)
            continue
        _u, first, inv = np.unique(a, return_index=True, return_inverse=True)
        f = first[inv.ravel()]
        bad = els[f] != els
        if bad.any():
            i = int(np.argmax(bad))
            checked += i + 1
            (rd0, v0), (rd, v) = _read_at(m, int(f[i])), _read_at(m, i)
            c0, c1 = m.coord(rd0.elements[v0]), m.coord(rd.elements[v])
            return _res("exactly_once", op, t0, Counterexample(
                f"smem byte {base + int(a[i])} is read as two tile elements: as {_el(op, c0)} by {_where(m, rd0)} and "
                f"as {_el(op, c1)} by {_where(m, rd)}", thread=rd.thread, element=c1, address_bytes=base + int(a[i])),
                checked)
        checked += len(a)
    return _res("exactly_once", op, t0, None, checked)


def _in_bounds(m, op, bases, t0):
    hi = m.cosize_bytes()
    checked = 0
    for base in bases:
        a = m.ptx_reads(base).ravel() - base
        bad = (a < 0) | (a + m.bytes > hi)
        if bad.any():
            i = int(np.argmax(bad))
            checked += i + 1
            rd, v = _read_at(m, i)
            c = m.coord(rd.elements[v])
            return _res("in_bounds", op, t0, Counterexample(
                f"{_where(m, rd)}: wgmma reads {_el(op, c)} at smem byte {base + int(a[i])}, outside the tile's bytes "
                f"[{base}, {base + hi})", thread=rd.thread, element=c, address_bytes=base + int(a[i]),
                extra={"base": base}), checked)
        checked += len(a)
    return _res("in_bounds", op, t0, None, checked)


# ---------------------------------------------------------------------------
# Register operands: RS A fragment, accumulators
# ---------------------------------------------------------------------------


_PTX_TABLES: dict = {}


def _ptx_table(kind: str, n: int) -> list:
    """The PTX ISA's wgmma fragment as one table, index ``t + 128 i`` (``t`` fastest, as CuTe's
    ``ALayout_64xK`` / ``CLayout_64xN`` are read): ``m + 64 k`` of A register element ``i`` of thread ``t``
    (``kind`` the A type), or ``m + 64 n`` of accumulator element ``i`` (``kind`` "C", ``n`` the atom's N).
    Built once per form from :mod:`symlayout.arch.gmma`'s per-element functions."""
    key = (kind, n)
    tab = _PTX_TABLES.get(key)
    if tab is None:
        if kind == "C":
            # the accumulator's per-element function of thread t over every element i at once (its
            # formula is arithmetic in i: numpy arrays go through it unchanged)
            cnt = arch.accumulator_count(n)
            i = np.arange(cnt, dtype=np.int64)
            cols = np.empty((cnt, WARPGROUP), dtype=np.int64)
            for t in range(WARPGROUP):
                r, c = arch.accumulator_elem(t, i)
                cols[:, t] = r + 64 * c
            tab = cols.ravel().tolist()
        else:
            cnt = n
            tab = [0] * (WARPGROUP * cnt)
            for t in range(WARPGROUP):
                for i in range(cnt):
                    r, c = arch.a_fragment_elem(kind, t, i)
                    tab[t + WARPGROUP * i] = r + 64 * c
        tab = _PTX_TABLES[key] = tab
    return tab


def _atom_table(atom, name: str) -> list:
    """``function_table`` of the atom's ``name`` layout (``a_layout`` / ``c_layout``), as plain ints,
    kept on the atom (an atom's layouts are fixed)."""
    memo = atom.__dict__.setdefault("_fn_tables", {})
    tab = memo.get(name)
    if tab is None:
        tab = memo[name] = index_array(getattr(atom, name)).tolist()
    return tab


def rs_fragment_result(mma) -> Result:
    """``slot_agreement[A]`` of an RS atom: CuTe's ALayout_64xK vs the PTX A fragment, every thread."""
    t0 = time.perf_counter()
    a = mma.atom
    atype = value_type_info(a.val_type_a)["ptx"]
    n = arch.a_fragment_count(atype)
    checked = 0
    tab = _atom_table(a, "a_layout")                 # (t, i) -> m + 64 k, t fastest
    if tab == _ptx_table(atype, n):                  # every (t, i) at once; else the loop finds the first
        return _res("slot_agreement", "A", t0, None, WARPGROUP * n, via="registers",
                    detail="RS: the A register fragment CuTe partitions vs the PTX ISA's wgmma A fragment")
    for t in range(WARPGROUP):                       # every warpgroup's thread t runs the same atom
        for i in range(n):
            checked += 1
            m, k = arch.a_fragment_elem(atype, t, i)
            c = int(tab[t + WARPGROUP * i])
            if c != m + 64 * k:
                return _res("slot_agreement", "A", t0, Counterexample(
                    f"thread {t} (and every thread {t} + 128 w): A register element {i} holds "
                    f"A(m={c % 64},k={c // 64}) of the atom in CuTe's ALayout_64xK, but wgmma reads it as "
                    f"A(m={m},k={k})", thread=t, slot=i), checked)
    return _res("slot_agreement", "A", t0, None, checked, via="registers",
                detail="RS: the A register fragment CuTe partitions vs the PTX ISA's wgmma A fragment")


def accumulator_results(mma, props) -> list:
    out = []
    if "slot_agreement" in props:
        t0 = time.perf_counter()
        a = mma.atom
        n = a.shape_mnk[1]
        checked, cex = 0, None
        tab = _atom_table(a, "c_layout")
        if tab == _ptx_table("C", n):                # every (t, i) at once; else the loop finds the first
            checked, cex = len(tab), None
        for t in (() if checked else range(WARPGROUP)):                   # every warpgroup's thread t runs the same atom
            for i in range(arch.accumulator_count(n)):
                checked += 1
                m, nn = arch.accumulator_elem(t, i)
                c = int(tab[t + WARPGROUP * i])
                if c != m + 64 * nn:
                    cex = Counterexample(f"thread {t} (and every thread {t} + 128 w): accumulator element {i} is "
                                         f"C(m={c % 64},n={c // 64}) of the atom in CuTe's CLayout_64xN, but wgmma "
                                         f"writes C(m={m},n={nn})", thread=t, slot=i)
                    break
            if cex:
                break
        out.append(_res("slot_agreement", "C", t0, cex, checked, via="registers",
                        detail="the accumulator fragment CuTe partitions vs the PTX ISA's wgmma D fragment"))
    if "coverage" in props:
        t0 = time.perf_counter()
        checked, cex = tv_coverage(mma, "C")
        out.append(_res("coverage", "C", t0, cex, checked, via="registers"))
    return out


# ---------------------------------------------------------------------------
# TMA
# ---------------------------------------------------------------------------


def tma_results(cfg, sc, tc, props, model=None) -> list:
    """``tma``, ``coverage``, ``exactly_once``, ``in_bounds`` of the TMA loads of [tma.X] into [smem.X];
    ``model()``: its :func:`~symlayout.tiled.tma.tma_model`, when the caller keeps one."""
    op = tc.operand
    t0 = time.perf_counter()
    m = model() if model is not None else tma_model(sc.element_type, tc.gmem, sc.layout, tc.box, tc.multicast,
                                                    tc.atom, tc.swizzle)
    out = []
    if m.error is not None:
        cex = Counterexample(f"[tma.{op}]: CuTe's make_tma_copy fails: {m.error}", extra={"cute_assert": str(m.error)})
        out.append(_res("tma", op, t0, cex, 1, method="cute", via="tma",
                        detail="CuTe rejects this TMA copy; its coverage is not checked"))
        return out
    bases = _bases(sc.align, arch_tma.SMEM_ALIGN)
    r = _tma(cfg, m, tc, sc, bases, op, time.perf_counter())
    if "tma" in props or r.stats.get("runs") is False:
        out.append(r)
    if r.stats.pop("runs", True) is False:     # the driver or the instruction refuses it: nothing is written
        r.detail = (r.detail + "; " if r.detail else "") + "the load does not run: its coverage is not checked"
        return out
    # every write at once (write-major, box element minor: the order the obligations are counted and
    # the first failing one is told in)
    if any(p in props for p in ("coverage", "exactly_once", "in_bounds")):
        _t, _inside, addr = m.write_arrays()
        flat = addr.ravel()
        nb = addr.shape[1]

        def at(i):                            # (write, box coordinate) of flat position i
            w, b = divmod(int(i), nb)
            return m.writes[w], m.element(m.writes[w], b)[0]
    if "coverage" in props:
        t1 = time.perf_counter()
        tab = index_table(m.smem.layout)
        want = m.layout_bytes(0, tab)
        miss = ~np.isin(want, flat)
        cex, checked = None, len(tab)
        if miss.any():
            e = int(np.argmax(miss))
            checked = e + 1
            a = int(want[e])
            coord = _coord(e, _flat(m.smem.layout))
            cex = Counterexample(f"{_el(op, coord)} ({m.where(a)}) is never written by the TMA loads of "
                                 f"[tma.{op}]", element=coord, address_bytes=a // m.per_byte)
        out.append(_res("coverage", op, t1, cex, checked, via="tma"))
    if "exactly_once" in props:
        t1 = time.perf_counter()
        cex, checked = None, len(flat)
        if one_owner(flat, np.arange(len(flat))):
            again = None                      # every byte written once
        else:
            _u, first, inv = np.unique(flat, return_index=True, return_inverse=True)
            again = first[inv.ravel()] != np.arange(len(flat))
        if again is not None and again.any():
            i = int(np.argmax(again))
            checked = i + 1
            a = int(flat[i])
            (w0, c0), (w, c) = at(first[inv.ravel()[i]]), at(i)
            cex = Counterexample(f"{m.where(a)} is written twice: by box element {c0} of {_wtext(w0, m)} and by "
                                 f"box element {c} of {_wtext(w, m)}", address_bytes=a // m.per_byte)
        out.append(_res("exactly_once", op, t1, cex, checked, via="tma"))
    if "in_bounds" in props:
        t1 = time.perf_counter()
        hi = int(m.smem.layout.cosize()) * m.bytes
        cex, checked = None, len(flat)
        bad = (flat < 0) | (flat > hi - m.bytes)
        if bad.any():
            i = int(np.argmax(bad))
            checked = i + 1
            a = int(flat[i])
            w, c = at(i)
            cex = Counterexample(f"box element {c} of {_wtext(w, m)} is written to {m.where(a)}, outside the "
                                 f"[smem.{op}] buffer of {hi // m.per_byte} bytes", address_bytes=a // m.per_byte)
        out.append(_res("in_bounds", op, t1, cex, checked, via="tma"))
    return out


def _flat(L):
    return tuple(int(it.product(s)) for s in L.shape)


def _coord(e, shape):
    out = []
    for s in shape:
        out.append(e % s)
        e //= s
    return tuple(out)


def _wtext(w, m) -> str:
    s = f"box {w.box}"
    if m.copy.multicast > 1:
        s += f" (multicast slice {w.slice} of {m.copy.multicast})"
    return s + (f" of stage {w.stage}" if len(m.stage_offsets) > 1 else "")


def _tma(cfg, m, tc, sc, bases, op, t0):
    copy = m.copy
    checked = 1
    probs = copy.encode_problems()
    if probs:
        return _norun(_res("tma", op, t0, Counterexample(f"[tma.{op}]: cuTensorMapEncodeTiled would reject the map: "
                                                         f"{'; '.join(probs)}"), checked, via="tma"))
    # global strides of run-time (symbolic) extents: multiples of 16 bytes for every parameter value
    r = _symbolic_strides(cfg, copy, op, t0)
    if r is not None:
        return r
    want = tma_swizzle(m.smem.swizzle)
    if m.element_swizzle is None and m.swizzle != want:
        return _res("tma", op, t0, Counterexample(
            f"[tma.{op}]: the tensor map swizzles {m.swizzle} but [smem.{op}] ({m.smem.swizzle} on byte addresses) "
            f"is a {want} layout: the boxes land permuted", extra={"tma_swizzle": m.swizzle, "smem_swizzle": want}),
            checked, via="tma")
    for w in m.writes:
        for base in bases:
            checked += 1
            if (m.units(base) + w.dst) % (arch_tma.SMEM_ALIGN * m.per_byte):
                dst = (m.units(base) + w.dst) / m.per_byte
                dst = int(dst) if dst == int(dst) else dst
                return _norun(_res("tma", op, t0, Counterexample(
                    f"{_wtext(w, m)}: the TMA destination is smem byte {dst} (base {base}, aligned to "
                    f"{sc.align} bytes), not {arch_tma.SMEM_ALIGN}-byte aligned as cp.async.bulk.tensor requires",
                    address_bytes=int(dst), extra={"base": base}), checked, via="tma"))
    # every box element of every write at once: inside the tile, and TMA's byte is CuTe's; both swizzle the
    # absolute address unless the layout's swizzle acts on element offsets: then every base mod 1024 counts
    tile, inside, addr0 = m.write_arrays()
    stages = np.array([w.stage for w in m.writes], dtype=np.int64)[:, None]
    coords = np.where(inside[..., None], tile, 0)
    for base in (_bases(sc.align, PERIOD_BYTES) if m.element_swizzle is not None else (0,)):
        addr = addr0 if base == 0 else m.write_arrays(base)[2] - m.units(base)
        bad = (~inside | (addr != m.cute_addresses(base, stages, coords) - m.units(base))).ravel()
        if bad.any():
            return _tma_mismatch(m, op, t0, int(np.argmax(bad)), checked, base)
        checked += addr.size
    return _res("tma", op, t0, None, checked, via="tma",
                detail=f"box {copy.box_dim} swizzle {m.swizzle}, {len(m.writes)} box loads"
                       + (f" (multicast {copy.multicast})" if copy.multicast > 1 else "")
                       + (f", the layout's {m.element_swizzle} on element offsets" if m.element_swizzle else ""))


def _tma_mismatch(m, op, t0, i, checked, base):
    """The refutation of ``tma`` at flat (write, box element) ``i`` of base ``base``, told point by point."""
    copy = m.copy
    checked += i + 1
    w = m.writes[i // len(m.box_arrays()[2])]
    c, t, a = m.element(w, i % len(m.box_arrays()[2]), base)
    at = f" (smem base {base})" if base else ""
    if t is None:
        return _res("tma", op, t0, Counterexample(
            f"box element {c} of {_wtext(w, m)} (box {copy.box_dim}) lies outside the {m.tile_shape} tile",
            address_bytes=a), checked, via="tma")
    want_a = m.cute_address(base, w.stage, t)
    if a != want_a:
        coord = t + ((w.stage,) if len(m.stage_offsets) > 1 else ())
        keeps = f"[smem.{op}] keeps it at {m.where(want_a)[5:]}"
        if m.element_swizzle is not None:
            keeps += f" (its {m.element_swizzle} acts on element offsets, written without smem_ptr)"
        return _res("tma", op, t0, Counterexample(
            f"{_wtext(w, m)}: TMA writes {_el(op, coord)} (box element {c} of box {copy.box_dim}, "
            f"swizzle {m.swizzle}) to {m.where(a)}{at}, but {keeps}",
            element=coord, address_bytes=a // m.per_byte, extra={"cute_address_bytes": want_a // m.per_byte,
                                                                  "base": base}), checked, via="tma")
    raise AssertionError(f"[tma.{op}]: the tables and the point-by-point check disagree")   # pragma: no cover


def _norun(r: Result) -> Result:
    r.stats["runs"] = False
    return r


#: (stride expression, parameter substitution) -> whether it is a multiple of 16 bytes for every value
#: (the same global strides recur in every operand and file of a GEMM family)
_STRIDE_DECIDED: dict = {}
#: most stride expressions whose divisibility by 16 is remembered (a bound: a long-lived process proves many families)
STRIDE_DECIDED_KEPT = 4096


def _multiple_of(e, k: int) -> bool:
    """True when the sympy expression ``e`` is a sum of integer terms whose integer coefficients are
    multiples of ``k`` (then every value of it is; sympy's ``Mod(e, k)`` is 0 the same way): the cheap
    sufficient case, without sympy's assumption machinery (False: not decided here)."""
    try:
        terms = e.as_coefficients_dict()
    except AttributeError:
        return False
    for term, c in terms.items():
        if not (c.is_Integer and int(c) % k == 0):
            return False
        if not (term.is_Integer or all(f.is_Symbol and f.is_integer for f in term.as_ordered_factors())):
            return False
    return True


def _symbolic_strides(cfg, copy, op, t0):
    """The driver's divisibility rules on run-time extents, for every parameter value: each global stride a
    multiple of 16 bytes (32 for the 16-byte-aligned packed types), and global dimension 0 of a packed type a
    multiple of 128 (``16U4_ALIGN16B`` / ``16U6_ALIGN16B``) or 2 (``16U4_ALIGN8B``)."""
    rules = [(f"global stride {i}", s, arch_tma.stride_multiple(copy.data_type), "bytes")
             for i, s in enumerate(copy.global_strides, start=1)]
    dim0 = arch_tma.dim0_multiple(copy.data_type)
    if dim0 > 1 and copy.global_dim:
        rules.append(("global dimension 0", copy.global_dim[0], dim0, f"elements ({copy.data_type})"))
    for what, s, k, unit in rules:
        if isinstance(s, int):
            continue
        expr = sympy.sympify(s)
        subs = {}
        for name, p in cfg.params.items():
            if p.multiple_of > 1:
                subs[p.symbol] = p.multiple_of * sympy.Symbol(f"_{name}_q", integer=True, positive=True)
        key = (expr, tuple(sorted(subs.items(), key=str)), k)
        if key not in _STRIDE_DECIDED:
            if len(_STRIDE_DECIDED) >= STRIDE_DECIDED_KEPT:
                del _STRIDE_DECIDED[next(iter(_STRIDE_DECIDED))]     # (the oldest first)
            e = expr.subs(subs)
            _STRIDE_DECIDED[key] = True if _multiple_of(e, k) else decide(sympy.Eq(sympy.Mod(e, k), 0))
        ok = _STRIDE_DECIDED[key]
        if ok:
            continue
        # look for a value that breaks it
        syms = sorted(expr.free_symbols, key=str)
        if len(syms) == 1 and str(syms[0]) in cfg.params:
            p = cfg.params[str(syms[0])]
            for v in p.values()[:4096]:
                if int(expr.subs(syms[0], v)) % k:
                    return _norun(_res("tma", op, t0, Counterexample(
                        f"[tma.{op}]: {what} is {int(expr.subs(syms[0], v))} {unit} for {p.name} = {v}, "
                        f"not a multiple of {k} (cuTensorMapEncodeTiled rejects the map)", params={p.name: v}),
                        1, via="tma"))
        return _res("tma", op, t0, None, None, method="exhaustive", via="tma", status=UNKNOWN,
                    detail=f"{what} = {expr} {unit}: cannot decide that it is a multiple of {k}")
    return None


# ---------------------------------------------------------------------------
# The configuration
# ---------------------------------------------------------------------------


#: largest number of parameter combinations enumerated when the translation argument does not apply
FAMILY_ENUM_LIMIT = 16
#: the largest swizzle period (Sw<3,4,3> on bytes): translates by multiples of it change no verdict
PERIOD_BYTES = 1024


def _leaves(t):
    if isinstance(t, tuple):
        out = []
        for x in t:
            out.extend(_leaves(x))
        return out
    return [t]


def _smem_inner(lay):
    if isinstance(lay, GmmaSmemLayout):
        return lay.layout
    return lay.inner if getattr(lay, "is_composed", False) else lay


def _substitute(lay, values: dict):
    """``lay`` with its symbolic extents replaced by ``values`` (symbol -> int)."""

    def sub(t):
        if isinstance(t, tuple):
            return tuple(sub(x) for x in t)
        return t if isinstance(t, int) else int(t.subs(values))
    inner = _smem_inner(lay)
    new = Layout(sub(inner.shape), inner.stride)
    if isinstance(lay, GmmaSmemLayout):
        return GmmaSmemLayout(lay.swizzle, lay.bits, new)
    if getattr(lay, "is_composed", False):
        return ComposedLayout(lay.swizzle, lay.offset, new)
    return new


def _symbols_of(cfg) -> list:
    out = []
    for sc in cfg.smem.values():
        for x in _leaves(_smem_inner(sc.layout).shape):
            if not isinstance(x, int) and x not in out:
                out.append(x)
    return out


def _translation_argument(cfg, mma, syms) -> str | None:
    """Why every member of the family has the verdicts of the member with every parameter 1,
    or None when the argument does not apply.  Each parameter must be the outermost extent of
    a mode whose stride is a multiple of the 1024-byte swizzle period, the parameter-1 tile along
    that mode a whole number of TiledMMA tiles, and the translates must not overlap: then a member
    is disjoint translates of the parameter-1 tile, read (and loaded) by translated descriptors
    (and boxes), and the swizzles, the 16-byte grid and TMA's 128-byte rule do not see the shift."""
    ones = {x: 1 for x in syms}
    tile = mma.tile_shape()
    why = []
    for op, sc in cfg.smem.items():
        inner = _smem_inner(sc.layout)
        e = sc.layout.bits // 8 if hasattr(sc.layout, "bits") else None
        e = value_type_bits(sc.element_type) // 8
        shape = inner.shape if isinstance(inner.shape, tuple) else (inner.shape,)
        stride = inner.stride if isinstance(inner.stride, tuple) else (inner.stride,)
        mine = []
        for t, (sh, st) in enumerate(zip(shape, stride)):
            ls, ld = _leaves(sh), _leaves(st)
            for i, (x, d) in enumerate(zip(ls, ld)):
                if isinstance(x, int):
                    continue
                if i != len(ls) - 1:
                    return None
                if (d * e) % PERIOD_BYTES:
                    return None
                ext1 = 1
                for y in ls[:-1]:
                    ext1 *= y if isinstance(y, int) else 1
                need = (tile[0] if op == "A" else tile[1]) if t == 0 else tile[2] if t == 1 else 1
                if t < 2 and ext1 % need:
                    return None
                if t < 2 and op in cfg.tma:
                    return None            # the TMA box is the whole stage tile: a K or MN family changes it
                p = cfg.params.get(str(x))
                if p is None:
                    return None
                mine.append((d, x, p))
        block = _substitute(sc.layout, ones)
        reach = int(_smem_inner(block).cosize())
        for d, x, p in sorted(mine, key=lambda z: z[0]):
            if reach > d:
                return None                # translates would overlap
            reach = (p.max - 1) * d + reach
            if (sc.align if sc.align < 1024 else 0) + reach * e > arch.ENCODE_MASK + 1:
                return None                # the largest members do not fit the descriptor's 256 KiB
            why.append(f"{x}: [smem.{op}] is {x} translates by {d * e} bytes (a multiple of {PERIOD_BYTES})")
    return "; ".join(why)


def prove_hopper(cfg, mma, props, refuted, memo: dict | None = None) -> list:
    """Every Hopper obligation of a GMMA configuration; a family (parameters as extents of
    smem modes: stages, K tiles) by the translation argument, or member by member.  ``memo``: the
    pieces of a concrete configuration shared with other configurations (:func:`piece_keys`; a family's
    are not)."""
    syms = _symbols_of(cfg)
    if not syms:
        return _prove_hopper_member(cfg, mma, props, refuted, memo)
    from dataclasses import replace
    params = {str(x): cfg.params[str(x)] for x in syms if str(x) in cfg.params}
    why = _translation_argument(cfg, mma, syms)
    if why is not None:
        member = replace(cfg, smem={op: replace(sc, layout=_substitute(sc.layout, {x: 1 for x in syms}))
                                    for op, sc in cfg.smem.items()})
        out = _prove_hopper_member(member, mma, props, refuted)
        for r in out:
            if r.counterexample is not None:
                r.counterexample.params = {n: p.first_value() if p.count() <= 1_000_000 else p.min
                                           for n, p in params.items()}
            if r.via in ("wgmma", "tma"):
                r.method = (r.method + ", " if r.method else "") + "translation"
                r.detail = (r.detail + "; " if r.detail else "") + \
                    f"every member of the family is the member with {', '.join(params)} = 1, translated ({why})"
        return out
    import itertools
    combos = 1
    for p in params.values():
        combos *= p.count()
    if combos > FAMILY_ENUM_LIMIT:
        out = []
        for op in cfg.smem:
            for p in props:
                if p in _DESC_PROPS or p == "tma" and op in cfg.tma:
                    out.append(Result(p, UNKNOWN, operand=op, via="wgmma" if p != "tma" else "tma",
                                      detail=f"a family of {combos} members whose tiles are not translates by "
                                             f"multiples of {PERIOD_BYTES} bytes: not decided"))
        out.extend(accumulator_results(mma, props) if "C" not in cfg.copies else [])
        for r in out:
            r.expected = REFUTED if r.property in refuted else PROVED
        return out
    merged: dict = {}
    names = list(params)
    for vals in itertools.product(*(params[n].values() for n in names)):
        env = {x: v for x, v in zip(syms, vals) if str(x) in params}
        member = replace(cfg, smem={op: replace(sc, layout=_substitute(sc.layout, env)) for op, sc in cfg.smem.items()})
        for r in _prove_hopper_member(member, mma, props, refuted):
            key = (r.property, r.operand, r.via)
            prev = merged.get(key)
            if prev is None or (prev.status != REFUTED and r.status == REFUTED):
                if r.counterexample is not None:
                    r.counterexample.params = dict(zip(names, vals))
                if prev is not None and prev.checked is not None and r.checked is not None and r.status != REFUTED:
                    r.checked += prev.checked
                merged[key] = r
            elif prev.status != REFUTED and prev.checked is not None and r.checked is not None:
                prev.checked += r.checked
    out = list(merged.values())
    for r in out:
        if r.via in ("wgmma", "tma"):
            r.detail = (r.detail + "; " if r.detail else "") + f"each of the {combos} members of the family"
    return out


def _prove_hopper_member(cfg, mma, props, refuted, memo: dict | None = None) -> list:
    """Every Hopper obligation of a GMMA configuration (``props`` filters, in order); ``memo``: each piece
    proved once per key of what it reads (:func:`piece_keys`, :mod:`symlayout.prove.verdict.shared`), the
    operand models it reads built once for the pieces that differ only in what the models do not read (the
    smem base alignment: :func:`~symlayout.prove.verdict.shared.reused`)."""
    out = []
    src = (mma.atom.ptx_model or {}).get("a_source")
    keys = piece_keys(cfg, props, memo)
    for op in ("A", "B"):
        sc = cfg.smem.get(op)
        if sc is not None:
            model = functools.partial(_gmma_model, memo, keys["mma"], mma, sc)
            out.extend(r for r in shared(memo, keys.get(("descriptor", op)),
                                         lambda sc=sc, model=model: descriptor_results(mma, sc, props, model))
                       if r.property in props or r.method == "cute")
        elif op == "A" and src == "reg" and "slot_agreement" in props:
            out.append(shared(memo, keys.get("rs"), lambda: rs_fragment_result(mma)))
        tc = cfg.tma.get(op)
        if tc is not None and sc is not None:
            model = functools.partial(_tma_model, memo, sc, tc)
            out.extend(r for r in shared(memo, keys.get(("tma", op)),
                                         lambda sc=sc, tc=tc, model=model: tma_results(cfg, sc, tc, props, model))
                       if r.property in props or r.method == "cute")
    if "C" not in cfg.copies:
        out.extend(shared(memo, keys.get("accumulators"), lambda: accumulator_results(mma, props)))
    for r in out:
        r.expected = REFUTED if r.property in refuted else PROVED
    return out


def _gmma_model(memo, mma_key, mma, sc):
    """[smem.X]'s :func:`~symlayout.tiled.gmma.gmma_operand_model`, built once per what it reads."""
    return reused(memo, ("gmma",) + mma_key + (sc.operand, sc.element_type, repr(sc.layout)),
                  lambda: gmma_operand_model(mma, sc.operand, sc.element_type, sc.layout))


def _tma_model(memo, sc, tc):
    """[tma.X]'s :func:`~symlayout.tiled.tma.tma_model` into [smem.X], built once per what it reads."""
    return reused(memo, ("tma_model", sc.element_type, repr(tc), repr(sc.layout)),
                  lambda: tma_model(sc.element_type, tc.gmem, sc.layout, tc.box, tc.multicast, tc.atom, tc.swizzle))


def piece_keys(cfg, props, memo=None) -> dict:
    """Everything each piece of :func:`_prove_hopper_member` reads, as hashable keys (none without ``memo``):
    the ``descriptor`` piece of [smem.X] reads the TiledMMA and the whole [smem.X] table (its layout with the
    stages, its alignment, which messages name); the ``tma`` piece reads [smem.X], [tma.X] and ``[params]``
    (global strides), not the TiledMMA; the accumulators and an RS A fragment read the TiledMMA alone; every
    piece reads the properties (``[expect]`` is applied after)."""
    m = cfg.mma
    out = {"mma": (m.atom, repr(m.layout), repr(m.permutation))}
    if memo is None:
        return out
    p = tuple(props)
    for op, sc in cfg.smem.items():
        out[("descriptor", op)] = ("descriptor",) + out["mma"] + (repr(sc), p)
        if op in cfg.tma:
            out[("tma", op)] = ("tma", repr(sc), repr(cfg.tma[op]), repr(sorted(cfg.params.items())), p)
    out["rs"] = ("rs_fragment",) + out["mma"]
    out["accumulators"] = ("accumulators",) + out["mma"] + (p,)
    return out
