"""The proof obligations, each a documented function of an :class:`OperandModel`.

Each returns a :class:`~symlayout.prove.verdict.result.Result`.  Concrete models are
decided by exhaustive evaluation of the finite domain (a complete proof, marked
``method="exhaustive"``); :mod:`symlayout.prove.copy.z3backend` decides the same
obligations with Z3 (parametric configurations, and the cross-check).

Names follow ``shared/spec/configs.md``: ``coverage``, ``alignment``,
``exactly_once``, ``slot_agreement``, ``bank_conflicts``, ``in_bounds``,
``type_agreement``.
"""
from __future__ import annotations

import time
from collections import Counter, defaultdict

from ...algebra.layout import function_table
from ...errors import AlgebraError
from ...arch import ptx
from ...atoms import canonical_type, exact_conversion, reinterpretation, value_type_info
from ...atoms.sm120 import operand_element_type
from .model import OperandModel
from ..verdict.result import Counterexample, Result, verdict
from . import story
from ..decide import tables

PROPERTIES = ("coverage", "alignment", "exactly_once", "slot_agreement", "bank_conflicts", "in_bounds",
              "type_agreement")


def _result(name, m, t0, cex=None, checked=None, **kw):
    return Result(name, verdict(cex, checked), operand=m.operand, seconds=time.perf_counter() - t0,
                  checked=checked, method=kw.pop("method", "exhaustive"), counterexample=cex, **kw)


def access_vectors(m: OperandModel):
    """Every smem vector an instruction dereferences, as a list (cached on the
    model): ``(warp, call, lane, thread, reg, indices)``; ``indices`` are the
    smem-side value indices of that register inside the lane's call."""
    cached = m.__dict__.get("_vectors_cache")
    if cached is not None:
        return cached
    k = max(1, m.reg_bits_smem // m.value_bits)
    lanes = m.hw.address_lanes()
    out = []
    idx_of = {}
    for w, c in m.instructions():
        for l in lanes:
            t = 32 * w + l
            if t >= m.threads:
                continue
            n = len(m.calls[t][c].smem) // k
            for r in range(n):
                idx = idx_of.get(r)
                if idx is None:
                    idx = idx_of[r] = list(range(r * k, (r + 1) * k))
                out.append((w, c, l, t, r, idx))
    m.__dict__["_vectors_cache"] = out
    return out


# ---------------------------------------------------------------- coverage


def _tv_coverage_holds(tv, T: int, V: int, rep: int, n: int) -> bool:
    """True when the TV table ``(t, v) -> e`` (``t`` fastest) has distinct elements in every thread and owns
    every element ``e < n`` exactly ``rep`` times (what :func:`tv_coverage`'s loop checks, on whole arrays);
    False when it does not or the tables are off (numpy not loaded for a small table,
    ``SYMLAYOUT_NO_TABLES``): the loop then decides and tells the counterexample."""
    import os
    import sys
    if os.environ.get("SYMLAYOUT_NO_TABLES", "") not in ("", "0"):
        return False
    if "numpy" not in sys.modules and T * V < tables.LARGE:
        return False
    np = tables.lazy_np
    try:
        tab = tables.index_table(tv)
    except (AlgebraError, TypeError, ValueError, OverflowError):
        return False
    if tab.shape != (T * V,) or (T * V and tab.min() < 0):
        return False
    per_thread = np.sort(tab.reshape(V, T).T, axis=1)        # row t: thread t's V elements
    if V > 1 and bool((per_thread[:, 1:] == per_thread[:, :-1]).any()):
        return False
    counts = np.bincount(tab, minlength=n)[:n]
    return bool((counts == rep).all())


def tv_coverage(mma, operand: str):
    """The TiledMMA's TV layout of ``operand`` owns every tile element exactly
    (replication) times and no thread holds an element twice.  Replication: A
    across the N-threads, B across the M-threads, C across the K-threads.
    Returns ``(checked, counterexample or None)``.

    >>> from symlayout.tiled.mma import make_tiled_mma
    >>> tv_coverage(make_tiled_mma("SM80_16x8x16_F16F16F16F16_TN", "(2,2,1)"), "A")
    (1024, None)
    """
    memo = mma.__dict__.setdefault("_tv_coverage_ok", {})     # a TiledMMA's answer, once it holds
    if operand in memo:
        return memo[operand], None
    tv = mma.get_layout_TV(operand)
    vm = mma.thr_layout_vmnk
    rep = {"A": vm[2].size(), "B": vm[1].size(), "C": vm[3].size()}[operand]
    T, V = tv[0].size(), tv[1].size()
    rows, cols = mma.operand_tile(operand)
    if _tv_coverage_holds(tv, T, V, rep, rows * cols):   # the whole table at once; else the loop tells why
        memo[operand] = T * V
        return T * V, None
    tvt = function_table(tv)
    counts = Counter()
    owners = defaultdict(list)
    checked = 0
    for t in range(T):
        seen = {}
        for v in range(V):
            e = tvt[t + T * v]
            checked += 1
            if e in seen:
                return checked, Counterexample(
                    f"thread {t} holds tile element {operand}({e % rows},{e // rows}) twice (values {seen[e]} and {v})",
                    thread=t, value=v, element=(e % rows, e // rows))
            seen[e] = v
            counts[e] += 1
            if len(owners[e]) < 4:
                owners[e].append((t, v))
    for e in range(rows * cols):
        if counts[e] != rep:
            el = (e % rows, e // rows)
            return checked, Counterexample(
                f"tile element {operand}({el[0]},{el[1]}) is owned {counts[e]} times by the TiledMMA, expected {rep}"
                + (f" (by thread/value {owners[e]})" if owners[e] else ""),
                element=el, thread=owners[e][0][0] if owners[e] else None)
    memo[operand] = checked
    return checked, None


def hardware_elements(m: OperandModel):
    """What the instructions really read (loads) or write (stores) in shared memory: for every
    dereferenced vector, the ``k`` consecutive elements from the address its lane gives (an
    ldmatrix/stmatrix row is 16 contiguous bytes at the row address, a vector copy its width) --
    not the indices CuTe's partition assigns.  Yields ``(element offset, (warp, call, lane, thread,
    register))``."""
    k = max(1, m.reg_bits_smem // m.value_bits)
    addr = m.addr_table
    for w, c, l, t, r, idx in access_vectors(m):
        sm = m.calls[t][c].smem
        if m.stand_in:            # a stand-in layout: only CuTe's indices are meaningful (Z3 links them
            for i in idx:         # to the hardware's bytes by proving every vector contiguous)
                yield addr[sm[i]], (w, c, l, t, r)
            continue
        a0 = addr[sm[idx[0]]]
        for e in range(k):
            yield a0 + e, (w, c, l, t, r)


def coverage(m: OperandModel) -> Result:
    """Every tile element is owned exactly (replication) times by the MMA's TV
    layout (:func:`tv_coverage`), each thread's fragment holds distinct elements,
    and the instructions really read (loads) or write (stores) every element of the
    smem tile: the bytes at the addresses the hardware dereferences
    (:func:`hardware_elements`), not the indices CuTe assigns.
    """
    t0 = time.perf_counter()
    checked, cex = tv_coverage(m.mma, m.operand)
    if cex is not None:
        return _result("coverage", m, t0, cex, checked)
    tb = tables.of(m)
    if tb is not None and tables.coverage_holds(m, tb):
        return _result("coverage", m, t0, None, checked + tb.n)
    touched = set()
    for a, _where in hardware_elements(m):
        touched.add(a)
    n = m.smem.size()
    addr = m.addr_table
    missing = [i for i in range(n) if addr[i] not in touched]
    if missing:
        i = missing[0]
        verb = "read" if m.direction == "load" else "written"
        cex = Counterexample(
            f"smem element {m.name(i)} (byte {int(addr[i] * m.elem_bytes)}) is never {verb} by any {m.atom.name} "
            f"instruction: the hardware {'reads' if m.direction == 'load' else 'writes'} {n - len(missing)} of the "
            f"{n} tile elements at the addresses the lanes give",
            element=m.coord(i), address_bytes=int(addr[i] * m.elem_bytes),
            extra={"elements_touched": n - len(missing), "elements": n})
        return _result("coverage", m, t0, cex, checked + n)
    return _result("coverage", m, t0, None, checked + n)


# ---------------------------------------------------------------- alignment


def alignment(m: OperandModel) -> Result:
    """Every smem vector an instruction dereferences (ldmatrix/stmatrix 16-byte
    rows, vector copies) starts at a byte address aligned to its width, given the
    base alignment, and its elements are contiguous."""
    t0 = time.perf_counter()
    vb = max(m.reg_bits_smem, m.value_bits) // 8
    addr = m.addr_table
    eb = m.elem_bytes
    checked = 0
    tb = tables.of(m)
    if tb is not None and tables.alignment_holds(m, tb):
        return _result("alignment", m, t0, None, tb.vector_starts().size)
    if m.align % vb and vb > 1:
        cex = Counterexample(f"smem base alignment {m.align} B is less than the {vb}-byte vector width of {m.atom.name}",
                             address_bytes=m.align)
        return _result("alignment", m, t0, cex, 0)
    for w, c, l, t, r, idx in access_vectors(m):
        sm = m.calls[t][c].smem
        a0 = addr[sm[idx[0]]]
        checked += 1
        if (a0 * eb) % vb:
            cex = Counterexample(
                f"lane {l} (thread {t}) gives {'row' if m.hw.kind != 'vector' else 'vector'} address "
                f"{int(a0 * eb)} B, not {vb}-byte aligned",
                thread=t, slot=r, element=m.coord(sm[idx[0]]), address_bytes=int(a0 * eb),
                route=story.vector_story(m, w, c, l, r))
            return _result("alignment", m, t0, cex, checked)
        for e, i in enumerate(idx):
            if addr[sm[i]] != a0 + e:
                cex = Counterexample(
                    f"lane {l} (thread {t}): element {e} of its {vb}-byte vector is {m.name(sm[i])} at "
                    f"{int(addr[sm[i]] * eb)} B, not contiguous with {m.name(sm[idx[0]])} at {int(a0 * eb)} B",
                    thread=t, slot=r, value=e, element=m.coord(sm[i]), address_bytes=int(addr[sm[i]] * eb),
                    route=story.vector_story(m, w, c, l, r))
                return _result("alignment", m, t0, cex, checked)
    return _result("alignment", m, t0, None, checked)


# ---------------------------------------------------------------- in_bounds


def in_bounds(m: OperandModel) -> Result:
    """Every byte an instruction dereferences lies inside the smem tile
    ``[0, cosize(smem) * sizeof(T))``."""
    t0 = time.perf_counter()
    vb = max(m.reg_bits_smem, m.value_bits) // 8
    eb = m.elem_bytes
    limit = int(m.smem.cosize() * eb)
    addr = m.addr_table
    checked = 0
    tb = tables.of(m)
    if tb is not None and tables.in_bounds_holds(m, tb):
        return _result("in_bounds", m, t0, None, tb.vector_starts().size)
    for w, c, l, t, r, idx in access_vectors(m):
        sm = m.calls[t][c].smem
        a0 = int(addr[sm[idx[0]]] * eb)
        checked += 1
        if a0 < 0 or a0 + vb > limit:
            cex = Counterexample(f"lane {l} (thread {t}) accesses bytes [{a0}, {a0 + vb}) outside the smem tile [0, {limit})",
                                 thread=t, slot=r, element=m.coord(sm[idx[0]]), address_bytes=a0)
            return _result("in_bounds", m, t0, cex, checked)
    return _result("in_bounds", m, t0, None, checked)


# ---------------------------------------------------------------- exactly_once


def fragment_width_mismatch(m: OperandModel, prop: str) -> Result | None:
    """``exactly_once`` and ``slot_agreement`` of a load by a raw copy (no element conversion) of
    ``T`` data into the fragment CuTe builds (``partition_fragment_A/B``: the MMA's ``ValTypeA/B``)
    when the two widths differ: the copy writes ``slots * bits(T)`` bits into a fragment of
    ``slots * bits(V)`` bits, so some bytes land outside the fragment (or are never written) and
    fragment slot 1 does not start where the copy's slot 1 does.  ``None`` when the widths agree
    (or the copy converts element by element, or for other properties).

    >>> from symlayout.prove.copy.model import build_operand_model
    >>> m = build_operand_model("SM80_16x8x16_F16F16F16F16_TN", "(2,2,1)", None, "A",
    ...                         "UniversalCopy<uint32_t>", "float", "(32,16):(16,1)")
    >>> fragment_width_mismatch(m, "exactly_once").counterexample.message
    'thread 0: copy() writes 8 float values (32 bytes) into its 8-slot half_t fragment (16 bytes): bytes 16..31 land outside it'
    """
    if prop not in ("exactly_once", "slot_agreement") or m.direction != "load" or m.vector_width:
        return None
    V = m.frag_type or m.mma_value_type
    if not V:
        return None
    tb, vb = m.value_bits, value_type_info(canonical_type(V))["bits"]
    if tb == vb:
        return None
    t0 = time.perf_counter()
    fs, T = m.frag_size, m.value_type
    wrote, holds = fs * tb // 8, fs * vb // 8
    if prop == "exactly_once":
        if wrote > holds:
            msg = (f"thread 0: copy() writes {fs} {T} values ({wrote} bytes) into its {fs}-slot {V} fragment "
                   f"({holds} bytes): bytes {holds}..{wrote - 1} land outside it")
        else:
            msg = (f"thread 0: copy() writes {fs} {T} values ({wrote} bytes) into its {fs}-slot {V} fragment "
                   f"({holds} bytes): bytes {wrote}..{holds - 1} are never written")
        cex = Counterexample(msg, thread=0, extra={"copy_bits": tb, "fragment_bits": vb})
        return _result(prop, m, t0, cex, fs)
    b = min(tb, vb) // 8                        # the first byte where the two slot grids part
    msg = (f"thread 0 fragment byte {b}: the MMA reads it as " +
           (f"the first byte of {V} slot 1, but the copy writes byte {b} of its {T} slot 0 there"
            if tb > vb else f"byte {b} of {V} slot 0, but the copy writes the first byte of its {T} slot 1 there"))
    cex = Counterexample(msg, thread=0, slot=1 if tb > vb else 0, extra={"copy_bits": tb, "fragment_bits": vb})
    return _result(prop, m, t0, cex, fs)


def exactly_once(m: OperandModel) -> Result:
    """Loads: every fragment slot of every thread is written exactly once over
    all atom calls of ``copy()``.  Stores: every smem element is written
    exactly once over all threads and calls, counting the bytes the hardware
    writes (:func:`hardware_elements`)."""
    t0 = time.perf_counter()
    checked = 0
    tb = tables.of(m)
    if tb is not None and tables.exactly_once_holds(m, tb):
        return _result("exactly_once", m, t0, None, m.threads * m.frag_size if m.direction == "load" else tb.n)
    if m.direction == "load":
        fs = m.frag_size
        for t in range(m.threads):
            cnt = [0] * fs
            extra = 0
            for call in m.calls[t]:
                for s in call.reg:
                    if 0 <= s < fs:
                        cnt[s] += 1
                    else:
                        extra += 1
            checked += fs
            if extra or any(x != 1 for x in cnt):
                bad = next((s for s in range(fs) if cnt[s] != 1), None)
                where = [(c, a) for c, call in enumerate(m.calls[t]) for a, s in enumerate(call.reg) if s == bad]
                if bad is None:
                    cex = Counterexample(f"thread {t}: copy() writes {extra} values outside its {fs}-slot fragment",
                                         thread=t)
                else:
                    cex = Counterexample(
                        f"thread {t} fragment slot {bad} is written {cnt[bad]} times by copy() (expected once)"
                        + (f": calls/values {where}" if where else ""), thread=t, slot=bad)
                return _result("exactly_once", m, t0, cex, checked)
        return _result("exactly_once", m, t0, None, checked)
    cnt = Counter()
    who = defaultdict(list)
    for a, (w, c, l, t, r) in hardware_elements(m):      # the bytes the stores really write
        cnt[a] += 1
        if len(who[a]) < 3:
            who[a].append((t, c))
    for i in range(m.smem.size()):
        a = m.addr_table[i]
        checked += 1
        if cnt[a] != 1:
            cex = Counterexample(f"smem element {m.name(i)} (address {int(a * m.elem_bytes)} B) is written "
                                 f"{cnt[a]} times (expected once)" + (f" by thread/call {who[a]}" if who[a] else ""),
                                 element=m.coord(i), address_bytes=int(a * m.elem_bytes),
                                 thread=who[a][0][0] if who[a] else None)
            return _result("exactly_once", m, t0, cex, checked)
    return _result("exactly_once", m, t0, None, checked)


# ---------------------------------------------------------------- slot_agreement


def packed_bindings(m: OperandModel):
    """Each register a copy call writes is packed storage of the MMA fragment:
    ``k`` consecutive slots starting at a multiple of ``k`` (k values per register).
    Returns ``(count, counterexample or None)``."""
    k = max(1, m.reg_bits_frag // m.value_bits)
    packed = 0
    for t in range(m.threads):
        for c, call in enumerate(m.calls[t]):
            for j in range(len(call.reg) // k):
                packed += 1
                s0 = call.reg[j * k]
                if s0 % k or any(call.reg[j * k + q] != s0 + q for q in range(k)):
                    return packed, Counterexample(
                        f"thread {t} call {c}: register {j} binds fragment slots {call.reg[j * k:(j + 1) * k]}, "
                        f"not {k} consecutive slots of one {m.reg_bits_frag}-bit register", thread=t, slot=s0)
    return packed, None


def mma_route(atom, operand: str):
    """Check the MMA atom's CuTe layout for ``operand`` against the PTX ISA's
    mma.sync fragment: value ``v`` of thread ``t`` (register ``v // k``, position
    ``v % k``) is the element ``mma.sync`` reads there.  Returns ``(checked,
    counterexample or None)``; ``(0, None)`` for atoms without a PTX model.  An atom's
    agreement is remembered once it holds (it depends on the atom alone)."""
    hit = _MMA_ROUTE_OK.get((id(atom), operand))
    if hit is not None and hit[0] is atom:
        return hit[1], None
    checked, cex = _mma_route(atom, operand)
    if cex is None:
        _MMA_ROUTE_OK[(id(atom), operand)] = (atom, checked)
    return checked, cex


_MMA_ROUTE_OK: dict = {}


def _mma_route(atom, operand: str):
    pm = getattr(atom, "ptx_model", None) or {}
    if pm.get("instr") != "mma":
        return 0, None
    M, N, K = atom.shape_mnk
    L = {"A": atom.a_layout, "B": atom.b_layout, "C": atom.c_layout}[operand]
    rows = {"A": M, "B": N, "C": M}[operand]
    checked = 0
    try:
        for t in range(atom.thr_id.size()):
            lane = atom.thr_id(t)
            for v in range(L[1].size()):
                idx = L(t, v)
                got = (idx % rows, idx // rows)
                if operand == "A":
                    want = ptx.mma_a_elem(pm["shape"], pm["atype"], lane, v, alayout=pm.get("alayout", "row"))
                elif operand == "B":
                    k, n = ptx.mma_b_elem(pm["shape"], pm["btype"], lane, v, blayout=pm.get("blayout", "col"))
                    want = (n, k)
                else:
                    want = ptx.mma_c_elem(pm["shape"], pm["atype"], lane, v, ctype=pm.get("ctype"))
                checked += 1
                if got != want:
                    return checked, Counterexample(
                        f"{atom.name}'s {operand} layout puts {operand}{got} in lane {lane} value {v}, but mma.sync "
                        f"({pm['shape']}) reads {operand}{want} there (PTX ISA fragment)".replace(" ", " "),
                        thread=t, value=v, element=got, extra={"ptx_element": list(want)})
    except ValueError:
        return checked, None          # the PTX model does not cover this variant
    return checked, None


def slot_agreement(m: OperandModel) -> Result:
    """For every thread and fragment slot, the element the hardware route
    delivers (PTX model: whose address, which row and column) is the element the
    MMA expects in that slot; and each register the copy writes is packed
    storage of the MMA fragment (consecutive slots starting at a register
    boundary)."""
    t0 = time.perf_counter()
    tb = tables.of(m)
    if tb is not None and tables.slot_agreement_holds(m, tb):
        mma_checked, cex = mma_route(m.mma.atom, m.operand)
        if cex is None:
            T, C, R = tb.reg.shape
            stats = {"fragment_slots": T * C * R,
                     "packed_bindings": T * C * (R // max(1, m.reg_bits_frag // m.value_bits))}
            if mma_checked:
                stats["mma_fragment_values"] = mma_checked
            return _result("slot_agreement", m, t0, None, T * C * R, stats=stats)
    addr = m.addr_table
    slots = 0
    k = max(1, m.reg_bits_smem // m.value_bits)
    calls, expected, T = m.calls, m.expected, m.threads
    vb, rb = m.value_bits, m.reg_bits_frag
    route = {}                                  # (lane, a) -> (provider lane, row-start value, offset)
    for w, c in m.instructions():
        for l in range(32):
            t = 32 * w + l
            if t >= T:
                continue
            call = calls[t][c]
            exp = expected[t]
            for a, s in enumerate(call.reg):
                hit = route.get((l, a))
                if hit is None:
                    p, e = m.hw.provider(l, a, vb, rb)
                    hit = route[(l, a)] = (p, e - e % k, e % k)
                p, e0, off = hit
                moved_addr = addr[calls[32 * w + p][c].smem[e0]] + off
                want = exp[s]
                slots += 1
                if moved_addr != addr[want]:
                    moved = m.index_of_address(moved_addr)
                    got = m.name(moved) if moved is not None else f"smem element offset {moved_addr}"
                    cex = Counterexample(
                        f"thread {t} slot {s}: the hardware {'delivers' if m.direction == 'load' else 'stores it to'} "
                        f"{got}, but the MMA expects {m.name(want)}",
                        thread=t, slot=s, value=a, element=m.coord(moved) if moved is not None else None,
                        address_bytes=int(moved_addr * m.elem_bytes),
                        route=story.slot_story(m, w, c, l, a), extra={"expected_element": list(m.coord(want))})
                    return _result("slot_agreement", m, t0, cex, slots)
    packed, cex = packed_bindings(m)
    if cex is not None:
        return _result("slot_agreement", m, t0, cex, slots)
    mma_checked, cex = mma_route(m.mma.atom, m.operand)
    if cex is not None:
        return _result("slot_agreement", m, t0, cex, slots)
    stats = {"fragment_slots": slots, "packed_bindings": packed}
    if mma_checked:
        stats["mma_fragment_values"] = mma_checked
    return _result("slot_agreement", m, t0, None, slots, stats=stats)


# ---------------------------------------------------------------- bank_conflicts


def bank_phases(m: OperandModel):
    """Group the dereferenced vectors of each instruction into shared-memory phases."""
    vb = max(m.reg_bits_smem, m.value_bits) // 8
    groups = defaultdict(list)
    for w, c, l, t, r, idx in access_vectors(m):
        if m.hw.kind in ("ldsm", "stsm"):
            ph = l // 8                                # one 8x8 matrix (8 rows x 16 B) per phase
        else:
            ph = l // max(1, 128 // max(vb, 4)) if vb > 4 else 0
        groups[(w, c, r, ph)].append((l, t, idx))
    return vb, groups


def _phase_banks(m: OperandModel, key, items, vb):
    """One phase's wavefronts: ``(need, minimum, banks)``, ``banks``: bank -> word -> first lane."""
    eb = m.elem_bytes
    banks = defaultdict(dict)          # bank -> word -> lane
    tb = tables.of(m)
    if tb is not None:                 # (the same element offsets, read off the arrays)
        c = key[1]
        starts = [int(tb.addr[tb.smem[t, c, idx[0]]]) for _l, t, idx in items]
    else:
        addr = m.addr_table
        starts = [addr[m.calls[t][key[1]].smem[idx[0]]] for _l, t, idx in items]
    for (l, t, idx), a0 in zip(items, starts):
        b0 = int(a0 * eb)
        for wd in range(b0 // 4, (b0 + vb + 3) // 4):
            banks[wd % 32].setdefault(wd, l)
    need = max(len(ws) for ws in banks.values())
    # the minimum is what the phase's bytes need when the vectors are aligned: one
    # wavefront (phases are formed as at most 128 bytes, see bank_phases)
    minimum = max(1, -(-(len(items) * vb) // 128))
    return need, minimum, banks


def bank_conflicts(m: OperandModel) -> Result:
    """Per instruction phase, the shared-memory wavefronts needed (max over the
    32 4-byte banks of the distinct words a bank serves) equal the minimum (one
    wavefront per 128 bytes of the phase, which misaligned vectors exceed).
    Refuted with the degree and the colliding lanes and addresses (the worst phase,
    the first of them in issue order)."""
    t0 = time.perf_counter()
    tb = tables.of(m)
    if tb is not None:
        if tables.bank_conflicts_holds(m, tb):
            return _result("bank_conflicts", m, t0, None, tables.phase_count(m, tb))
        key, items = tables.worst_phase(m, tb)          # found on the tables, told from its vectors
        vb = max(m.reg_bits_smem, m.value_bits) // 8
        need, minimum, banks = _phase_banks(m, key, items, vb)
        if need > minimum:
            bank = max(banks, key=lambda b: len(banks[b]))
            return _bank_refutation(m, t0, (need / minimum, need, minimum, key, bank, banks[bank]),
                                    tables.phase_count(m, tb))
    vb, groups = bank_phases(m)
    worst = None
    phases = 0
    for key, items in groups.items():
        phases += 1
        need, minimum, banks = _phase_banks(m, key, items, vb)
        if need > minimum and (worst is None or need / minimum > worst[0]):
            bank = max(banks, key=lambda b: len(banks[b]))
            worst = (need / minimum, need, minimum, key, bank, banks[bank])
    if worst is None:
        return _result("bank_conflicts", m, t0, None, phases)
    return _bank_refutation(m, t0, worst, phases)


def _bank_refutation(m, t0, worst, phases):
    ratio, need, minimum, (w, c, r, ph), bank, ws = worst
    lanes = sorted(set(ws.values()))
    addrs = [wd * 4 for wd in sorted(ws)]
    deg = int(round(ratio))
    cex = Counterexample(
        f"{deg}-way bank conflict: warp {w} instruction {c} phase {ph} needs {need} wavefronts (minimum {minimum}); "
        f"lanes {lanes} hit bank {bank} at byte addresses {addrs}",
        thread=32 * w + lanes[0], address_bytes=addrs[0],
        extra={"degree": deg, "wavefronts": need, "minimum": minimum, "lanes": lanes, "addresses": addrs, "bank": bank})
    return _result("bank_conflicts", m, t0, cex, phases)


# ---------------------------------------------------------------- type_agreement


def type_agreement(m: OperandModel) -> Result:
    """The MMA reads the element type the data is stored as.

    A copy that moves raw bits (ldmatrix, stmatrix, UniversalCopy, cp.async) must give the MMA
    fragment exactly its element type (``ValTypeA/B``; for C, the accumulator type
    ``ValTypeC``, or the stored type when ``convert = true``), or one of the reinterpretations
    the hardware defines (:data:`symlayout.atoms.REINTERPRETATIONS`: float storage for tf32).
    Equal widths are not enough: bf16 data in an f16 MMA, int8 in a u8 MMA, e5m2 in an e4m3
    MMA are refuted (NVIDIA/cutlass#1988, #2114).  CuTe's auto-vectorizing copy of mismatched
    types converts element by element: into an MMA operand the conversion must be exact
    (:func:`symlayout.atoms.exact_conversion`); from the accumulator into shared memory any
    conversion is the epilogue's choice (named in the result's detail)."""
    t0 = time.perf_counter()
    T, V = m.value_type, m.frag_type or m.mma_value_type
    if not V:
        return _result("type_agreement", m, t0, None, 1)
    op, mma = m.operand, m.mma.atom.name
    V = operand_element_type(mma, op, V)               # SM120: uint8_t / uint4_t hold the PTX type the name gives
    extra = {"copy_type": T, "mma_type": V}
    if m.vector_width and T != V:                      # CuTe's element-by-element converting copy
        if m.direction == "store":
            return _result("type_agreement", m, t0, None, 1,
                           detail=f"the accumulator ({V}) is converted to {T} element by element by the copy")
        if exact_conversion(T, V):
            return _result("type_agreement", m, t0, None, 1,
                           detail=f"{T} is converted exactly to {V} element by element by the copy")
        if reinterpretation(T, V) is not None:        # float -> tfloat32_t: the values the tf32 MMA reads
            return _result("type_agreement", m, t0, None, 1,
                           detail=f"{T} is converted to {V} element by element by the copy (rounded to {V}'s "
                                  f"precision; the MMA reads {T} storage as {V} the same way)")
        cex = Counterexample(f"{m.atom.name} converts the {T} data to {V} element by element for {mma}'s {op}, "
                             f"and not every {T} value is a {V} value", extra=extra)
        return _result("type_agreement", m, t0, cex, 1)
    why = reinterpretation(T, V)
    if why is not None:
        return _result("type_agreement", m, t0, None, 1, detail="" if T == V else why)
    if m.direction == "store":
        msg = f"{mma}'s accumulator C is {V}, but {m.atom.name} stores its bits as {T}"
    else:
        msg = f"{m.atom.name} moves {T} data, but {mma} reads {op} as {V}"
        if m.value_bits == m.mma_value_bits:
            msg += " (same width, different element type)"
    return _result("type_agreement", m, t0, Counterexample(msg, extra=extra), 1)


def obligations(m: OperandModel, prop: str) -> int:
    """How many obligations ``prop`` has on ``m``, counted as its exhaustive check
    counts them (a Z3 proof quantifies over the same cases on each rest tile);
    0 means a proof of it would be vacuous.

    >>> from symlayout.prove.copy.model import build_operand_model
    >>> m = build_operand_model("SM80_16x8x16_F16F16F16F16_TN", "(2,2,1)", None, "A",
    ...                         "SM75_U32x2_LDSM_N", "half_t", "(32,16):(16,1)")
    >>> [obligations(m, p) for p in ("alignment", "exactly_once", "bank_conflicts", "type_agreement")]
    [128, 1024, 16, 1]
    """
    if prop == "coverage":
        tv = m.mma.get_layout_TV(m.operand)
        return tv.size() + m.smem.size()
    if prop in ("alignment", "in_bounds"):
        return len(access_vectors(m))
    if prop == "exactly_once":
        return m.threads * m.frag_size if m.direction == "load" else m.smem.size()
    if prop == "slot_agreement":
        return sum(len(call.reg) for calls in m.calls.values() for call in calls)
    if prop == "bank_conflicts":
        return len(bank_phases(m)[1])
    return 1


CHECKS = {
    "coverage": coverage,
    "alignment": alignment,
    "exactly_once": exactly_once,
    "slot_agreement": slot_agreement,
    "bank_conflicts": bank_conflicts,
    "in_bounds": in_bounds,
    "type_agreement": type_agreement,
}
