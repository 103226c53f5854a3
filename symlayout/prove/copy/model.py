"""The route model of one operand's copy: who moves which element where.

Built once from CuTe-exact objects (TiledMMA, TiledCopy, partitions, the
atom-call plan of ``copy()``) and the independent PTX model of the
instruction (:mod:`symlayout.arch.ptx`); every property, the CLI's
``show``/``explain`` and the GPU harness read it.  Nothing else computes a
layout.

Elements of the shared-memory tile are named by their *index* ``i`` in the
smem layout's domain (colexicographic, ``0 <= i < size(smem)``); their address
(in elements) is ``smem(i)``, their matrix coordinate ``coord(i)``.

>>> from symlayout.prove.copy.model import build_operand_model
>>> m = build_operand_model("SM80_16x8x16_F16F16F16F16_TN", "(2,2,1)", None, "A",
...                         "SM75_U32x2_LDSM_N", "half_t", "(32,16):(16,1)")
>>> m.threads, len(m.calls[0]), m.coord(m.calls[8][0].smem[0])
(128, 2, (8, 0))
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property, lru_cache

from ...algebra import int_tuple as it
from ...arch import ptx
from ...atoms import reinterpretation, value_type_bits
from ...atoms.copy import CopyAtom, make_copy_atom, moves_bits
from ...atoms.sm120 import operand_element_type
from ...errors import AlgebraError, AtomError, CuteStaticAssert, TilingError
from ...algebra.layout import Layout, composition, dice, function_table, is_layout, slice_and_offset
from ...algebra.symbolic import DynInt
from ...algebra.int_tuple import _
from ...algebra.notation import parse, parse_layout
from ...tiled.copy import auto_vectorizing_calls, auto_vectorizing_width, copy_calls, make_tiled_copy_X, view_values
from ...tiled.mma import TiledMMA, make_tiled_mma, value_key
from ..decide import tables


class CuteRejects(CuteStaticAssert):
    """CuTe does not compile this configuration: ``assertion`` is its static_assert,
    ``property`` the obligation that explains it (:func:`explain_rejection`)."""

    def __init__(self, message, assertion, side, prop):
        super().__init__(message, assertion, side)
        self.property = prop


def explain_rejection(e: CuteStaticAssert, direction: str, types_agree: bool) -> str:
    """The property a CuTe static_assert refutes (docs/prover.md, "When CuTe refuses"):

    * the copy's value type is not the element type the MMA reads, or the atom cannot
      move that type (``CopyOperation is not valid for ... ValType``, the atom's bit
      layouts do not divide into it): ``type_agreement``;
    * ``TiledCopy uses too few thrs/vals``: the MMA's per-thread fragment is not a whole
      number of atom calls: ``slot_agreement``;
    * ``src/dst failed to vectorize into registers`` (or its ``Divisibility condition``):
      on the shared-memory side the values of one instruction are not one contiguous
      vector: ``alignment``; on the register side they are not packed registers:
      ``slot_agreement``;
    * the smem tensor cannot be partitioned (``Shape/Stride Divisibility Condition`` when a
      swizzled layout is sliced, ``Src/Dst partitioning does not match``): ``coverage``.

    >>> explain_rejection(CuteStaticAssert("x", "TiledCopy uses too few vals for selected CopyAtom"), "load", True)
    'slot_agreement'
    """
    a = e.assertion
    if not types_agree or a.startswith("CopyOperation is not valid") or (a == "Divisibility condition" and e.side is None):
        return "type_agreement"
    if a.startswith("TiledCopy uses too few"):
        return "slot_agreement"
    if e.side is not None:
        smem_side = "src" if direction == "load" else "dst"
        return "alignment" if e.side == smem_side else "slot_agreement"
    return "coverage"


class _AddrTable(list):
    """A function table that evaluates the layout for indices outside it (or, for the
    model's placeholder indices of addresses that hold no tile element, gives that address)."""

    def __init__(self, table, layout, extra=None):
        super().__init__(table)
        self.layout = layout
        self.extra = extra or {}

    def __getitem__(self, i):
        if isinstance(i, int) and not 0 <= i < len(self):
            a = self.extra.get(i)
            return self.layout(i) if a is None else a
        return list.__getitem__(self, i)


@dataclass
class Call:
    """One thread's ``copy_unpack`` call ``c``.

    ``smem``: smem element indices of the smem-side values (source for loads,
    destination for stores); ``reg``: fragment slots of the register-side values.
    """
    smem: list
    reg: list


@dataclass
class Hardware:
    """How the instruction routes data inside a warp (from the PTX model)."""
    kind: str            # "ldsm", "stsm", "vector" (per-thread copy)
    num: int = 1         # matrices for ldmatrix/stmatrix
    trans: bool = False
    ptx: str = ""
    traits: object = None  # a CopyOp whose route is CuTe's Copy_Traits (SM100's narrow atoms), None: PTX model

    def provider(self, lane: int, value: int, value_bits: int, reg_bits: int):
        """For register-side value ``value`` of ``lane``: ``(providing lane, smem-side value index)``."""
        if self.kind == "vector":
            return lane, value
        key = (lane, value, value_bits, reg_bits)
        memo = self.__dict__.setdefault("_memo", {})
        hit = memo.get(key)
        if hit is None:
            hit = memo[key] = self._provider(lane, value, value_bits, reg_bits)
        return hit

    def _provider(self, lane, value, value_bits, reg_bits):
        if self.traits is not None:
            return _traits_provider(self.traits, lane, value, value_bits)
        per_reg = max(1, reg_bits // value_bits)
        reg, pos = divmod(value, per_reg)
        bit = pos * value_bits               # first bit of the value inside the 32-bit register
        matrix, row, col = ptx.ldmatrix_dest(self.num, self.trans, lane, reg, bit // 16)
        prov = ptx.ldmatrix_row_provider(self.num, matrix, row)
        bit_in_row = 16 * col + bit % 16     # a 4-bit value: its nibble inside the 16-bit element (issue 29)
        return prov, bit_in_row // value_bits

    def address_lanes(self):
        """Lanes whose smem addresses the instruction dereferences (per warp)."""
        if self.kind == "vector":
            return list(range(32))
        if self.traits is not None:
            return sorted({t for t, b in _traits_rows(self.traits)[1].values() if b == 0})
        return [l for grp in ptx.ldmatrix_address_lanes(self.num) for l in grp]


@lru_cache(maxsize=None)
def _traits_rows(op):
    """CuTe's Copy_Traits of an ldmatrix/stmatrix op as a route: ``(reg, smem)`` where ``reg`` maps a
    register-side ``(lane, bit)`` to its reference coordinate and ``smem`` maps a coordinate to the first
    ``(lane, bit)`` of the shared-memory side (a row's address lane) holding it."""
    regs, rows = (op.dst_layout, op.src_layout) if op.kind == "ldsm" else (op.src_layout, op.dst_layout)
    smem = {}
    for b in range(rows[1].size()):
        for t in range(32):
            smem.setdefault(rows(t, b), (t, b))
    return regs, smem


def _traits_provider(op, lane, value, value_bits):
    regs, smem = _traits_rows(op)
    b0 = value * value_bits
    t, sb = smem[regs(lane, b0)]
    if sb % value_bits or any(smem[regs(lane, b0 + k)] != (t, sb + k) for k in range(value_bits)):
        raise AtomError(f"{op.name}: a {value_bits}-bit value is not one contiguous piece of one shared-memory row")
    return t, sb // value_bits


def hardware_of(atom) -> Hardware:
    """The PTX routing of a copy atom (data from the atom catalog's ``ptx_model``; CuTe's traits for
    an op whose model says ``"route": "traits"``)."""
    op = atom.op
    pm = getattr(op, "ptx_model", None) or {}
    kind = getattr(op, "kind", "")
    if kind in ("ldsm", "stsm"):
        return Hardware(kind, int(pm.get("num", 1)), bool(pm.get("trans", False)), getattr(op, "ptx", ""),
                        traits=op if pm.get("route") == "traits" else None)
    return Hardware("vector", ptx=getattr(op, "ptx", ""))


@dataclass
class OperandModel:
    """Everything the prover knows about one ``[copy.X]`` of a configuration."""
    operand: str
    mma: TiledMMA
    tiled_copy: object
    atom: object
    smem: object                  # Layout or ComposedLayout (elements)
    value_type: str
    value_bits: int
    align: int                    # bytes
    direction: str                # "load" (smem -> registers) or "store"
    hw: Hardware
    calls: dict                   # thread -> list[Call]
    frag_size: int
    expected: dict                # thread -> list of smem indices, by fragment slot
    reg_bits_smem: int            # bits of one smem-side register (e.g. 128 for LDSM)
    reg_bits_frag: int            # bits of one fragment-side register (e.g. 32)
    mma_value_type: str = ""
    mma_value_bits: int = 0
    frag_type: str = ""           # element type of the register fragment the copy reads or writes
    vector_width: int = 0         # AutoVectorizingCopy: elements per access CuTe chose (0: other atoms)
    stand_in: bool = False        # smem is a compact stand-in for one copy tile (Z3's tile model): the
    #   route's element indices are right, its addresses are not (the real layout is Z3's)
    #: placeholder index -> element offset, for smem addresses ``cute::copy`` dereferences that hold no
    #: element of the tile (CuTe's partition of a swizzle with an offset, see :func:`_cute_smem_calls`)
    stray: dict = field(default_factory=dict)
    #: a hand-built TiledCopy (version 2 ``thr``/``val`` or ``tv``/``tiler``), None: ``make_tiled_copy_X``
    tiled: object = None
    #: the smem side follows CuTe's own partitions and recasts (:func:`_cute_smem_calls`), not the layout
    #: function: decided by enumeration only
    cute_routes: bool = False

    @property
    def threads(self) -> int:
        return len(self.calls)

    @cached_property
    def addr_table(self) -> list:
        """``smem(i)`` for every index of the smem tile (element offsets); an index
        outside the tile (a broken atom or tiling) is evaluated as CuTe would."""
        tb = tables.of(self)
        if tb is not None:                  # (its indices were checked against the tile)
            table = tb.addr[:tb.n].tolist()
            return _AddrTable(table, self.smem, self.stray) if self.stray else table
        table = function_table(self.smem)
        n = len(table)
        if not self.stray and \
                all(0 <= i < n for calls in self.calls.values() for call in calls for i in call.smem) and \
                all(0 <= i < n for exp in self.expected.values() for i in exp):
            return table
        return _AddrTable(table, self.smem, self.stray)

    @cached_property
    def shape2(self):
        s = self.smem.shape
        return it.product_each(s) if it.is_tuple(s) else (s,)

    def coord(self, i: int) -> tuple:
        """Index -> (row, col[, stage...]) matrix coordinate in the smem tile."""
        out = []
        for s in self.shape2[:-1]:
            out.append(i % s)
            i //= s
        out.append(i)
        return tuple(out)

    def name(self, i: int) -> str:
        """``A(8,0)``-style name of smem element ``i``."""
        if i in self.stray:
            return f"smem element offset {self.stray[i]} (no element of the tile)"
        return f"{self.operand}({','.join(str(x) for x in self.coord(i))})"

    @property
    def elem_bytes(self) -> float:
        return self.value_bits / 8

    def delivered_address(self, thread: int, call: int, e: int) -> int:
        """Element offset the hardware touches for smem-side value ``e`` of a call:
        the start of ``e``'s vector (the row/vector address the lane gives) plus
        ``e``'s position in it -- the hardware reads contiguous bytes."""
        k = max(1, self.reg_bits_smem // self.value_bits)
        sm = self.calls[thread][call].smem
        return self.addr_table[sm[e - e % k]] + e % k

    @cached_property
    def _addr_index(self):
        d = {}
        for i, a in enumerate(self.addr_table):
            d.setdefault(a, i)
        return d

    def index_of_address(self, a):
        """The smem element stored at element offset ``a`` (None if none)."""
        return self._addr_index.get(a)

    def instructions(self):
        """Yield ``(warp, call index)`` of every warp-collective instruction issue."""
        ncalls = len(self.calls[0])
        for w in range((self.threads + 31) // 32):
            for c in range(ncalls):
                yield w, c


def cute_addresses_differ(smem) -> bool:
    """True when CuTe's partitions of ``smem`` need not follow its layout function: a swizzled
    ComposedLayout ``Sw<B,M,S> o OFF o L`` whose offset is not a multiple of the swizzle period
    ``2^(B+M+|S|)``.  ``slice_and_offset`` XORs the offset's Y/Z bits with those of the sliced-off
    coordinates and adds its other bits outside the swizzle (so a carry out of them is never swizzled)
    (:meth:`symlayout.algebra.composed.ComposedLayout.slice_and_offset`); the addresses ``cute::copy``
    dereferences are then computed from the real partitions, not from element indices."""
    if not getattr(smem, "is_composed", False) or smem.swizzle.b == 0:
        return False
    off = smem.offset
    if not isinstance(off, int):
        return True
    sw = smem.swizzle
    return off % (1 << (sw.b + sw.m + abs(sw.s))) != 0


def swizzle_inside_register(smem, reg_elems: int) -> bool:
    """True when the swizzle of ``smem`` (``Sw<B,M,S>``, ``B > 0``) moves bits below one register of
    ``reg_elems`` elements (``2^M < reg_elems``): ``copy_unpack``'s ``recast`` upcasts the swizzle to the
    register type, which keeps its bits at or above the register width and drops the others, so the
    instruction is handed the swizzled offset of the register's first element rounded down to the register
    (:func:`_cute_smem_calls`), not that element's address."""
    if not getattr(smem, "is_composed", False) or smem.swizzle.b == 0:
        return False
    return (1 << smem.swizzle.m) < reg_elems


def _recast_starts(view, offsets: list, regs: int) -> list:
    """``&recast<Reg>(view)(r)`` for each register ``r`` of a call, in elements: for a swizzled view
    (a ComposedLayout ``Sw o o o L`` at pointer offset ``P``) CuTe's upcast gives
    ``P + k * Sw'((o + L(k r)) / k)`` with ``Sw'`` the swizzle upcast by ``k`` elements, which is
    ``P + k * floor(Sw(o + L(k r)) / k)``: the register's first element's offset rounded down to ``k``;
    for a plain view, that element's offset.  The other elements keep CuTe's offsets (what it assigns)."""
    L, P = view
    k = len(offsets) // regs if regs > 0 else 0
    if not getattr(L, "is_composed", False) or k <= 1:
        return offsets
    out = list(offsets)
    for r in range(0, len(offsets), k):
        out[r] = int(P + (offsets[r] - P) // k * k)
    return out


def _cute_smem_calls(tc, atom, smem, ret, direction, threads, operand=None, width=0):
    """thread -> per ``copy_unpack`` call, ``(smem-side element offsets, fragment-side register offsets)``:
    what the real ``cute::copy`` of ``partition_S/D(smem)`` dereferences (CuTe's partitions of the smem
    tensor itself).  A thread's plan depends on its partition's layout only up to the partition's offset
    (added last), so threads whose partitions share a layout share the work."""
    out, memo = {}, {}
    tidfrg = tc.tidfrg_S(smem) if direction == "load" else tc.tidfrg_D(smem)     # thread-independent
    for t in range(threads):
        L, off = slice_and_offset(tc.get_slice(t).thread_coord(smem), tidfrg)   # partition_S/D(smem)
        key = str(L)
        rel = memo.get(key)
        if rel is None and width:              # AutoVectorizingCopy: CuTe's vectorised accesses, k-block by k-block
            rel = []
            for k in _k_blocks(ret, operand):
                rel += auto_vectorizing_calls(_k_block((ret, 0), k), _k_block((L, 0), k), width)
            memo[key] = rel
        if rel is None:
            # (the smem side's register starts as copy_unpack's recast computes them)
            if direction == "load":
                plan = copy_calls(atom, (L, 0), (ret, 0))
                rel = [(_recast_starts(c.src, [int(c.src[1] + c.src[0](i)) for i in range(c.src[0].size())],
                                       atom.op.s_regs.count),
                        [int(c.dst[1] + c.dst[0](i)) for i in range(c.dst[0].size())]) for c in plan]
            else:
                plan = copy_calls(atom, (ret, 0), (L, 0))
                rel = [(_recast_starts(c.dst, [int(c.dst[1] + c.dst[0](i)) for i in range(c.dst[0].size())],
                                       atom.op.d_regs.count),
                        [int(c.src[1] + c.src[0](i)) for i in range(c.src[0].size())]) for c in plan]
            memo[key] = rel
        o = int(off)
        out[t] = [([a + o for a in sm], rg) for sm, rg in rel]
    return out


def tiled_copy_for(atom, mma, operand: str, tiled=None):
    """``make_tiled_copy_X(atom, mma)``, or the hand-built TiledCopy of a version-2 ``[copy.X]``
    (``tiled``: a :class:`~symlayout.config.TiledCopySpec` with ``thr``/``val`` or ``tv``/``tiler``),
    which replaces the MMA-derived one (the MMA's partition still says what each slot expects)."""
    if tiled is None:
        return make_tiled_copy_X(atom, mma, operand)
    return tiled.build(atom)


def _resolve_mma(mma, atom_layout=None, permutation=None):
    if isinstance(mma, TiledMMA):
        return mma
    return make_tiled_mma(mma, atom_layout, permutation)


def fragment_type(mma, operand: str, value_type: str, convert: bool = False) -> str:
    """Element type of the register fragment: the MMA's ValTypeA/B (``partition_fragment_A/B``),
    for C its accumulator ValTypeC, or ``value_type`` when the accumulator is converted first
    (``convert = true``, CuTe's ``convert_type``)."""
    if operand == "C" and convert:
        return value_type
    return getattr(mma.atom, f"val_type_{operand.lower()}", "") or value_type


def _is_auto_vectorizing(atom) -> bool:
    return getattr(atom.op, "kind", "") == "default"


def _reject(e: CuteStaticAssert, mma, operand, value_type, frag_t):
    direction = "store" if operand == "C" else "load"
    held = operand_element_type(mma.atom.name, operand, frag_t)     # SM120: the uint8_t / uint4_t slots hold e2m1 ...
    agree = reinterpretation(value_type, held) is not None and value_type_bits(value_type) == value_type_bits(frag_t)
    return CuteRejects(str(e), e.assertion, e.side, explain_rejection(e, direction, agree))


def cute_build_check(mma, operand: str, copy_op, value_type: str, smem, convert: bool = False, tiled=None,
                     atom_type: str | None = None):
    """Replay on the real shared-memory layout what CuTe instantiates for this copy and raise
    :class:`CuteRejects` where one of its static_asserts fires (see :func:`explain_rejection`):

    * ``Copy_Atom<op, T>``'s value layouts, ``make_tiled_copy_X``'s thread/value counts;
    * slicing a swizzled smem tensor (``slice_and_offset`` of a ``ComposedLayout`` composes the
      swizzle's projections with the sliced modes: shape/stride divisibility conditions), for the
      copy's ``partition_S/D`` and the MMA's ``partition_A/B/C``;
    * each ``copy_unpack`` of ``copy()``: ``recast`` of the src/dst views to the operation's
      register types must give exactly its register counts.

    >>> cute_build_check("SM80_16x8x16_F16F16F16F16_TN", "A", "SM75_U32x4_LDSM_N", "half_t", "(32,16):(1,32)")
    Traceback (most recent call last):
    symlayout.prove.copy.model.CuteRejects: copy_unpack: src view ((8,1)):((32,0)) of 16-bit values is 8 uint128_t registers after recast, SM75_U32x4_LDSM_N takes 1
    """
    mma = _resolve_mma(mma)
    if isinstance(smem, str):
        smem = parse_layout(smem)
    frag_t = fragment_type(mma, operand, value_type, convert)
    try:
        if hasattr(copy_op, "val_layout_src"):
            atom = copy_op
        else:                      # the registers' fill is checked below, where CuTe checks it
            try:                   # (the model's own atom when it is whole: one TiledCopy for both)
                atom = _strict_or_loose_atom(copy_op, written_type(copy_op, value_type, atom_type))
            except TypeError:      # (an operation object that is not hashable)
                atom = CopyAtom(copy_op, written_type(copy_op, value_type, atom_type), strict=False)
        tc = tiled_copy_for(atom, mma, operand, tiled)
        _check_swizzle_slices(mma, tc, operand, smem)
        frag = mma.get_slice(0).partition_fragment(operand, smem)     # (slices the smem tensor: every atom)
        if _is_auto_vectorizing(atom):
            return                                 # copy() never calls copy_unpack for it
        cp = tc.get_slice(0)
        ret = tc.retile(frag)
        tbits, fbits = value_type_bits(value_type), value_type_bits(frag_t)
        # a partition of a swizzled tensor that keeps its swizzle (CuTe's ComposedLayout): copy() slices
        # it per call at a run-time index, where it may decay into run-time strides (tiled.copy._iteration)
        if operand == "C":
            copy_calls(atom, (ret, 0), cp.partition_D(smem), bits=(fbits, tbits), first_only=True)
        else:
            copy_calls(atom, cp.partition_S(smem), (ret, 0), bits=(tbits, fbits), first_only=True)
        if not hasattr(copy_op, "val_layout_src"):
            make_copy_atom(copy_op, written_type(copy_op, value_type, atom_type))    # one call fills its registers
    except CuteRejects:
        raise
    except CuteStaticAssert as e:
        raise _reject(e, mma, operand, value_type, frag_t) from None


def written_type(copy_op, value_type: str, atom_type: str | None) -> str:
    """The value type of the ``Copy_Atom`` the model builds: the atom's ``type`` as the kernel writes it
    when the copy moves bits and that type has the elements' width (the layouts are the same; messages
    then name the atom as written), else ``value_type``, the element type (contract 2.1)."""
    if not atom_type or not isinstance(copy_op, str) or not moves_bits(copy_op):
        return value_type
    return atom_type if value_type_bits(atom_type) == value_type_bits(value_type) else value_type


def _strict_or_loose_atom(copy_op: str, value_type: str):
    """``Copy_Atom<copy_op, value_type>`` as :func:`~symlayout.atoms.copy.make_copy_atom` builds it
    (the atom the model uses, so the check and the model share one TiledCopy and its partitions) when
    the registers' fill check passes, else :func:`_loose_atom` (the fill is then refuted where CuTe
    checks it, after the checks that come first).  The two atoms have the same layouts."""
    try:
        return make_copy_atom(copy_op, value_type)
    except Exception:               # (whatever it is, the loose atom's path says it as before)
        return _loose_atom(copy_op, value_type)


@lru_cache(maxsize=1024)
def _loose_atom(copy_op: str, value_type: str):
    """``Copy_Atom<copy_op, value_type>`` without the register-fill check (cached: one TiledCopy per atom
    and TiledMMA, see :func:`~symlayout.tiled.copy.make_tiled_copy_X`)."""
    return CopyAtom(copy_op, value_type, strict=False)


def _check_swizzle_slices(mma, tc, operand, smem):
    """CuTe's ``slice_and_offset`` of a swizzled ``ComposedLayout`` at a thread coordinate
    composes the swizzle's two bit projections (``swizzle_anti_zy``/``swizzle_only_zy``) with the
    diced (thread) modes; with static shapes the composition's divisibility conditions are
    static_asserts (a swizzle over a row pitch that is not a power of two fails them)."""
    if not getattr(smem, "is_composed", False) or smem.swizzle.b == 0:
        return
    sw = smem.swizzle
    B, M, S = sw.b, sw.m, abs(sw.s)
    shp = (1 << M, 1 << B, 1 << (S - B), 1 << B, 1)
    anti = Layout(shp, (1, 0, 1 << (M + B), 0, 1 << (M + S + B)))
    only = Layout(shp, (0, 1 << M, 0, 1 << (M + S), 0))
    views = []
    tf = tc.tidfrg_D(smem) if operand == "C" else tc.tidfrg_S(smem)
    r = it.rank(tf.shape[2]) if it.is_tuple(tf.shape[2]) else 1
    views.append(("partition_" + ("D" if operand == "C" else "S"), (DynInt(0), _, tuple([_] * r) if r > 1 else _), tf))
    thrfrg = {"A": mma.thrfrg_A, "B": mma.thrfrg_B, "C": mma.thrfrg_C}[operand](smem)
    r2 = it.rank(thrfrg.shape[1][1]) if it.is_tuple(thrfrg.shape[1]) and it.is_tuple(thrfrg.shape[1][1]) else 1
    views.append((f"partition_{operand}", ((DynInt(0), (DynInt(0), DynInt(0))), (_, tuple([_] * r2) if r2 > 1 else _)),
                  thrfrg))
    for where, crd, C in views:
        if not getattr(C, "is_composed", False):
            continue
        try:
            diced = dice(crd, C.inner)
        except AlgebraError:
            continue
        for P in (anti, only):
            try:
                composition(P, diced)
            except AlgebraError as e:
                msg = str(e)
                a = "Stride Divisibility Condition" if "stride" in msg else "Shape Divisibility Condition"
                raise CuteStaticAssert(f"{where}: slicing {smem} at a thread composes the swizzle's bit projection "
                                       f"{P} with the thread modes {diced}: {msg}", a) from None


def build_operand_model(mma, atom_layout, permutation, operand: str, copy_op: str, value_type: str,
                        smem, align: int = 128, convert: bool = False, vector_width: int | None = None,
                        tiled=None, atom_type: str | None = None) -> OperandModel:
    """Build the route model of ``make_tiled_copy_X(Copy_Atom<copy_op, value_type>, mma)`` on ``smem``.

    Raises :class:`CuteRejects` where building the atom or the TiledCopy hits a CuTe static_assert
    (the smem-dependent ones are :func:`cute_build_check`'s).  ``vector_width`` overrides the
    elements per access of an AutoVectorizingCopy (default: CuTe's choice on ``smem``; a Z3 tile
    model gives the width of the real layout)."""
    mma = _resolve_mma(mma, atom_layout, permutation)
    if isinstance(smem, str):
        smem = parse_layout(smem)
    frag_t = fragment_type(mma, operand, value_type, convert)
    try:
        atom = copy_op if hasattr(copy_op, "val_layout_src") else \
            make_copy_atom(copy_op, written_type(copy_op, value_type, atom_type))
        tc = tiled_copy_for(atom, mma, operand, tiled)
    except CuteStaticAssert as e:
        raise _reject(e, mma, operand, value_type, frag_t) from None
    vbits = value_type_bits(value_type)
    # the smem tile must be a whole number of copy tiles
    shp = it.product_each(smem.shape)
    for d, t in zip(shp, tc.tiler_mn):
        if isinstance(d, int) and d % t:
            raise TilingError(f"smem {smem}: extent {d} is not a multiple of the {operand} tile {t} "
                              f"(tile {it.product_each(tc.tiler_mn)})")
    if len(shp) < 2:
        raise TilingError(f"smem {smem}: expected a rank-2 (or higher) layout")
    ident = Layout(smem.shape)                      # index of each smem element (colex)
    direction = "store" if operand == "C" else "load"
    src_reg_bits = atom.op.src_reg_bits
    dst_reg_bits = atom.op.dst_reg_bits
    # Thread-independent structure, computed once (a thread's partitions of the
    # index layout differ only by their offset; see ThrMMA/ThrCopy).
    thr0 = mma.get_slice(0)
    frag = thr0.partition_fragment(operand, smem)
    fs = frag.size()
    ret = tc.retile(frag)
    cp0 = tc.get_slice(0)
    avc = _is_auto_vectorizing(atom)
    width = 0
    if avc:
        try:
            width = vector_width if vector_width is not None else _avc_width(cp0, ret, operand, smem, value_type, frag_t, atom.op.vector_bits)
        except CuteStaticAssert as e:
            raise _reject(e, mma, operand, value_type, frag_t) from None
    # the route depends on the smem layout only through its shape (the index layout) and the fragment
    # (whose layout follows the smem strides' order): one per TiledCopy, operand, shape and fragment
    ik, fk = value_key(ident), value_key(frag)
    key = (id(tc), operand, ik, fk, width) if ik is not None and fk is not None else None
    hit = _ROUTES.get(key) if key is not None else None
    if hit is not None and hit[0] is tc:
        hit = hit[1]
    else:
        hit = None
    if hit is None:
        try:
            hit = _route(mma, tc, atom, operand, direction, ident, frag, ret, cp0, width)
        except CuteStaticAssert as e:
            if not width:
                raise
            raise _reject(e, mma, operand, value_type, frag_t) from None
        if key is not None and hit[3] is not None:       # (tables on: the arrays are shared, read-only)
            while len(_ROUTES) >= ROUTES_KEPT:
                del _ROUTES[next(iter(_ROUTES))]             # (the oldest first)
            _ROUTES[key] = (tc, hit)
    T, ft, base, arrays, thr_tab, poffs, pt = hit
    if arrays is not None:
        sm_a, rg_a, exp_a = arrays
        expected = tables.LazyRows(T, lambda t: exp_a[t].tolist())
        calls = tables.LazyRows(T, lambda t: [Call(sm, rg) for sm, rg in zip(sm_a[t].tolist(), rg_a[t].tolist())])
    else:
        calls, expected = {}, {}
        for t in range(T):
            poff = poffs[t]
            expected[t] = [0] * fs
            exp = expected[t]
            for k in range(fs):
                exp[ft[k]] = poff + pt[k]
            coff = thr_tab[t]
            calls[t] = [Call([i + coff for i in sm], list(rg)) for sm, rg in base]
    stray = {}
    smem_reg_elems = (src_reg_bits if direction == "load" else dst_reg_bits) // vbits
    cute_routes = cute_addresses_differ(smem) or (not avc and swizzle_inside_register(smem, smem_reg_elems))
    if cute_routes:
        arrays = None                          # (the route is CuTe's partitions' below, not the plan's)
        # name each address CuTe's partitions dereference by the element stored there (placeholder
        # indices past the tile for addresses that hold none)
        index = {}
        for i, a in enumerate(function_table(smem)):
            index.setdefault(a, i)
        n = smem.size()
        by_addr = {}
        for t, plan in _cute_smem_calls(tc, atom, smem, ret, direction, tc.tiled_num_thr, operand, width).items():
            new = []
            for sm, rg in plan:
                idx = []
                for a in sm:
                    i = index.get(a)
                    if i is None:
                        i = by_addr.get(a)
                        if i is None:
                            i = by_addr[a] = n + len(by_addr)
                            stray[i] = a
                    idx.append(i)
                new.append(Call(idx, rg))
            calls[t] = new
    frag_size = fs
    mma_type = {"A": "a", "B": "b", "C": "c"}[operand]
    mvt = getattr(mma.atom, f"val_type_{mma_type}", "") or ""
    if avc:                                    # one access of `width` values on each side
        smem_bits = frag_bits = width * vbits
    else:
        smem_bits = src_reg_bits if direction == "load" else dst_reg_bits
        frag_bits = dst_reg_bits if direction == "load" else src_reg_bits
    model = OperandModel(
        operand=operand, mma=mma, tiled_copy=tc, atom=atom, smem=smem, value_type=value_type,
        value_bits=vbits, align=align, direction=direction, hw=hardware_of(atom), calls=calls,
        frag_size=frag_size, expected=expected, reg_bits_smem=smem_bits, reg_bits_frag=frag_bits,
        mma_value_type=mvt, mma_value_bits=value_type_bits(mvt) if mvt else 0, frag_type=frag_t, vector_width=width,
        stray=stray, tiled=tiled, cute_routes=cute_routes)
    if arrays is not None:
        tables.attach(model, sm_a, rg_a, exp_a)
    return model


#: routes kept (TiledCopy, operand, tile shape, fragment, vector width -> route), the oldest dropped first:
#: a sweep over one tiling meets a few shapes, and a large tile's arrays take a few hundred KiB
ROUTES_KEPT = 256
_ROUTES: dict = {}


def _route(mma, tc, atom, operand, direction, ident, frag, ret, cp0, width):
    """The thread-independent call plan of thread 0 on the index layout and every thread's offsets:
    ``(threads, fragment table, plan, route arrays or None, thread offsets of the copy, of the MMA
    partition, partition table)`` (:func:`~symlayout.prove.decide.tables.route` gives the arrays)."""
    ft = function_table(frag)
    part0, _o = mma.get_slice(0).partition(operand, ident)
    pt = function_table(part0)
    if width:                                  # AutoVectorizingCopy: CuTe's accesses, k-block by k-block
        idx_view = ((cp0.partition_S(ident) if direction == "load" else cp0.partition_D(ident))[0], 0)
        base = []
        for k in _k_blocks(ret, operand):
            base += auto_vectorizing_calls(_k_block((ret, 0), k), _k_block(idx_view, k), width)
        tidfrg = tc.tidfrg_S(ident) if direction == "load" else tc.tidfrg_D(ident)
    elif direction == "load":
        sview = cp0.partition_S(ident)
        plan = copy_calls(atom, (sview[0], 0), (ret, 0))
        base = [(view_values(c.src), view_values(c.dst)) for c in plan]
        tidfrg = tc.tidfrg_S(ident)
    else:
        dview = cp0.partition_D(ident)
        plan = copy_calls(atom, (ret, 0), (dview[0], 0))
        base = [(view_values(c.dst), view_values(c.src)) for c in plan]
        tidfrg = tc.tidfrg_D(ident)
    thr_mode = tidfrg[0]
    # per-thread offsets of the MMA partition: the thread mode of thrfrg at the thread's (v, (m|n, k|n))
    thrfrg = {"A": mma.thrfrg_A, "B": mma.thrfrg_B, "C": mma.thrfrg_C}[operand](ident)
    sel = {"A": (1, 3), "B": (2, 3), "C": (1, 2)}[operand]
    tmode = thrfrg[0]
    ttab = function_table(tmode)
    nV = tmode[0].size()
    nA = tmode[1][0].size() if it.is_tuple(tmode.shape[1]) else tmode[1].size()
    thr_tab = function_table(thr_mode)
    T = tc.tiled_num_thr
    s0, s1 = sel
    poffs = [ttab[v[0] + nV * (v[s0] + nA * v[s1])] for v in mma.thr_vmnk_table(T)]
    arrays = tables.route(base, thr_tab, poffs, ft, pt, T)      # the same tables, whole-tile (numpy)
    if arrays is not None:
        for a in arrays:
            a.flags.writeable = False
    return T, ft, base, arrays, thr_tab, poffs, pt


def _k_blocks(ret, operand):
    """A and B are copied one k-block at a time (``copy(tiled_copy, tCsA(_,_,k), tCrA_view(_,_,k))``,
    as CuTe's cooperative GEMM and flash-attention do), C as a whole: the slices of mode 2."""
    if operand != "C" and it.is_tuple(ret.shape) and len(ret.shape) == 3:
        return list(range(it.product(ret.shape[2])))
    return [None]


def _k_block(view, k):
    if k is None:
        return view
    L, off = view
    s, o = slice_and_offset((_, _, k), L)
    return s, off + o


def _avc_width(cp0, ret, operand, smem, value_type, frag_t, max_vec_bits):
    load = operand != "C"
    k0 = _k_blocks(ret, operand)[0]
    r0 = _k_block((ret, 0), k0)
    s0 = _k_block(cp0.partition_S(smem) if load else cp0.partition_D(smem), k0)
    src, dst = (s0[0], r0[0]) if load else (r0[0], s0[0])
    st, dt = (value_type, frag_t) if load else (frag_t, value_type)
    return auto_vectorizing_width(src, dst, st, dt, max_vec_bits)


def copy_vector_width(mma, operand: str, copy_op: str, value_type: str, smem, convert: bool = False,
                      tiled=None) -> int:
    """Elements per access CuTe's auto-vectorizing copy uses for this ``[copy.X]`` (layout algebra
    only, no enumeration; 0 for atoms that are not AutoVectorizingCopy/DefaultCopy).

    >>> copy_vector_width("SM80_16x8x16_F16F16F16F16_TN", "C", "AutoVectorizingCopy", "half_t", "(32,16):(16,1)")
    2
    """
    mma = _resolve_mma(mma)
    if isinstance(smem, str):
        smem = parse_layout(smem)
    atom = make_copy_atom(copy_op, value_type)
    if not _is_auto_vectorizing(atom):
        return 0
    tc = tiled_copy_for(atom, mma, operand, tiled)
    ret = tc.retile(mma.get_slice(0).partition_fragment(operand, smem))
    return _avc_width(tc.get_slice(0), ret, operand, smem, value_type,
                      fragment_type(mma, operand, value_type, convert), atom.op.vector_bits)


def instantiated_model(tm: OperandModel, smem, vector_width: int | None = None) -> OperandModel:
    """The model of ``tm``'s copy on another smem layout (a Z3 witness's instantiated layout): the
    same TiledMMA, operand, atom, hand-built TiledCopy and C conversion, nothing rebuilt from names
    (``vector_width``: an AutoVectorizingCopy's width; default CuTe's choice on ``smem``)."""
    convert = tm.operand == "C" and tm.frag_type == tm.value_type != (tm.mma_value_type or tm.value_type)
    return build_operand_model(tm.mma, None, None, tm.operand, tm.atom, tm.value_type, smem, tm.align,
                               convert=convert, vector_width=vector_width, tiled=tm.tiled)


def stand_in_tile(model: OperandModel) -> OperandModel:
    """The model of one copy tile that Z3 works from: the same route (for an AutoVectorizingCopy,
    the vector width CuTe picks on the real layout) on a compact stand-in layout of the tile,
    marked ``stand_in`` (its indices are right, its addresses are not)."""
    convert = model.operand == "C" and model.frag_type == model.value_type != (model.mma_value_type or model.value_type)
    tm = build_operand_model(model.mma, None, None, model.operand, model.atom.op.name, model.value_type,
                             Layout(tuple(model.tiled_copy.tiler_mn)), model.align, convert=convert,
                             vector_width=model.vector_width or None, tiled=model.tiled)
    tm.stand_in = True
    return tm
