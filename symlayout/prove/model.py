"""The route model of one operand's copy: who moves which element where.

Built once from CuTe-exact objects (TiledMMA, TiledCopy, partitions, the
atom-call plan of ``copy()``) and the independent PTX model of the
instruction (:mod:`symlayout.atoms.ptx`); every property, the CLI's
``show``/``explain`` and the GPU harness read it.  Nothing else computes a
layout.

Elements of the shared-memory tile are named by their *index* ``i`` in the
smem layout's domain (colexicographic, ``0 <= i < size(smem)``); their address
(in elements) is ``smem(i)``, their matrix coordinate ``coord(i)``.

>>> from symlayout.prove.model import build_operand_model
>>> m = build_operand_model("SM80_16x8x16_F16F16F16F16_TN", "(2,2,1)", None, "A",
...                         "SM75_U32x2_LDSM_N", "half_t", "(32,16):(16,1)")
>>> m.threads, len(m.calls[0]), m.coord(m.calls[8][0].smem[0])
(128, 2, (8, 0))
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from .. import int_tuple as it
from ..atoms import ptx
from ..errors import AtomError, TilingError
from ..layout import Layout, function_table, is_layout
from ..notation import parse, parse_layout
from ..tiled.copy import copy_calls, make_tiled_copy_X
from ..tiled.mma import TiledMMA, make_tiled_mma


class _AddrTable(list):
    """A function table that evaluates the layout for indices outside it."""

    def __init__(self, table, layout):
        super().__init__(table)
        self.layout = layout

    def __getitem__(self, i):
        if isinstance(i, int) and not 0 <= i < len(self):
            return self.layout(i)
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
        per_reg = max(1, reg_bits // value_bits)
        reg, pos = divmod(value, per_reg)
        b0 = pos * value_bits // 8           # first byte of the value inside the 32-bit register
        half = b0 // 2
        matrix, row, col = ptx.ldmatrix_dest(self.num, self.trans, lane, reg, half)
        prov = ptx.ldmatrix_row_provider(self.num, matrix, row)
        byte_in_row = 2 * col + b0 % 2
        return prov, byte_in_row * 8 // value_bits

    def address_lanes(self):
        """Lanes whose smem addresses the instruction dereferences (per warp)."""
        if self.kind == "vector":
            return list(range(32))
        return [l for grp in ptx.ldmatrix_address_lanes(self.num) for l in grp]


def hardware_of(atom) -> Hardware:
    """The PTX routing of a copy atom (data from the atom catalog's ``ptx_model``)."""
    op = atom.op
    pm = getattr(op, "ptx_model", None) or {}
    kind = getattr(op, "kind", "")
    if kind in ("ldsm", "stsm"):
        return Hardware(kind, int(pm.get("num", 1)), bool(pm.get("trans", False)), getattr(op, "ptx", ""))
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

    @property
    def threads(self) -> int:
        return len(self.calls)

    @cached_property
    def addr_table(self) -> list:
        """``smem(i)`` for every index of the smem tile (element offsets); an index
        outside the tile (a broken atom or tiling) is evaluated as CuTe would."""
        table = function_table(self.smem)
        n = len(table)
        if all(0 <= i < n for calls in self.calls.values() for call in calls for i in call.smem) and \
                all(0 <= i < n for exp in self.expected.values() for i in exp):
            return table
        return _AddrTable(table, self.smem)

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


def _resolve_mma(mma, atom_layout=None, permutation=None):
    if isinstance(mma, TiledMMA):
        return mma
    return make_tiled_mma(mma, atom_layout, permutation)


def build_operand_model(mma, atom_layout, permutation, operand: str, copy_op: str, value_type: str,
                        smem, align: int = 128) -> OperandModel:
    """Build the route model of ``make_tiled_copy_X(Copy_Atom<copy_op, value_type>, mma)`` on ``smem``."""
    from ..atoms.copy import make_copy_atom
    from ..atoms import value_type_bits as type_bits
    mma = _resolve_mma(mma, atom_layout, permutation)
    if isinstance(smem, str):
        smem = parse_layout(smem)
    atom = copy_op if hasattr(copy_op, "val_layout_src") else make_copy_atom(copy_op, value_type)
    tc = make_tiled_copy_X(atom, mma, operand)
    vbits = type_bits(value_type)
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
    ft = function_table(frag)
    part0, _o = thr0.partition(operand, ident)
    pt = function_table(part0)
    ret = tc.retile(frag)
    cp0 = tc.get_slice(0)
    if direction == "load":
        sview = cp0.partition_S(ident)
        plan = copy_calls(atom, (sview[0], 0), (ret, 0))
        base = [([int(c.src[1] + c.src[0](i)) for i in range(c.src[0].size())],
                 [int(c.dst[1] + c.dst[0](i)) for i in range(c.dst[0].size())]) for c in plan]
        tidfrg = tc.tidfrg_S(ident)
    else:
        dview = cp0.partition_D(ident)
        plan = copy_calls(atom, (ret, 0), (dview[0], 0))
        base = [([int(c.dst[1] + c.dst[0](i)) for i in range(c.dst[0].size())],
                 [int(c.src[1] + c.src[0](i)) for i in range(c.src[0].size())]) for c in plan]
        tidfrg = tc.tidfrg_D(ident)
    thr_mode = tidfrg[0]
    calls, expected = {}, {}
    # per-thread offsets of the MMA partition: the thread mode of thrfrg at the thread's (v, (m|n, k|n))
    thrfrg = {"A": mma.thrfrg_A, "B": mma.thrfrg_B, "C": mma.thrfrg_C}[operand](ident)
    sel = {"A": (1, 3), "B": (2, 3), "C": (1, 2)}[operand]
    tmode = thrfrg[0]
    ttab = function_table(tmode)
    nV = tmode[0].size()
    nA = tmode[1][0].size() if it.is_tuple(tmode.shape[1]) else tmode[1].size()
    thr_tab = function_table(thr_mode)
    for t in range(tc.tiled_num_thr):
        v = mma.thr_vmnk_ints(t)
        poff = ttab[v[0] + nV * (v[sel[0]] + nA * v[sel[1]])]
        expected[t] = [0] * fs
        exp = expected[t]
        for k in range(fs):
            exp[ft[k]] = poff + pt[k]
        coff = thr_tab[t]
        calls[t] = [Call([i + coff for i in sm], list(rg)) for sm, rg in base]
    frag_size = fs
    mma_type = {"A": "a", "B": "b", "C": "c"}[operand]
    mvt = getattr(mma.atom, f"val_type_{mma_type}", "") or ""
    return OperandModel(
        operand=operand, mma=mma, tiled_copy=tc, atom=atom, smem=smem, value_type=value_type,
        value_bits=vbits, align=align, direction=direction, hw=hardware_of(atom), calls=calls,
        frag_size=frag_size, expected=expected,
        reg_bits_smem=src_reg_bits if direction == "load" else dst_reg_bits,
        reg_bits_frag=dst_reg_bits if direction == "load" else src_reg_bits,
        mma_value_type=mvt, mma_value_bits=type_bits(mvt) if mvt else 0)
