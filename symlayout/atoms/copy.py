"""Copy operations (CuTe ``Copy_Traits``, in bits) and copy atoms (``Copy_Atom<Op, ValType>``).

Data: ``symlayout/atoms/data/copy.json``.  A :class:`CopyOp` holds CuTe's
``SrcLayout`` / ``DstLayout`` / ``RefLayout`` in bits; a :class:`CopyAtom` converts
them to elements of a value type exactly as ``Copy_Atom`` does::

    ValLayoutX = recast_layout<uint1_t, ValType>(BitLayoutX) = upcast<sizeof_bits(ValType)>(BitLayoutX)

>>> atom = make_copy_atom("SM75_U32x4_LDSM_N", "half_t")
>>> str(atom.val_layout_src), str(atom.val_layout_dst), atom.num_val_src, atom.num_val_dst
('(32,8):(8,1)', '(32,(2,4)):(2,(1,64))', 8, 8)
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping

from ..errors import AlgebraError, AtomError, CuteStaticAssert
from ..algebra.layout import Layout, recast_layout
from ..algebra.notation import parse_layout
from .catalog import Catalog
from .narrow_matrix import narrow_entry
from .types import Registers, canonical_type, value_type_bits


@functools.lru_cache(maxsize=None)
def _catalog() -> Catalog:
    return Catalog("copy", "ops", "copy operation")


KINDS = ("ldsm", "stsm", "universal", "cp_async", "default")


@dataclass(frozen=True)
class CopyOp:
    """A copy operation with CuTe's Copy_Traits (layouts in **bits**).

    ``kind`` is one of ``"ldsm"``, ``"stsm"``, ``"universal"``, ``"cp_async"``,
    ``"default"`` (DefaultCopy / AutoVectorizingCopy: ``Copy_Atom::call`` hands
    these to the auto-vectorizing copy, so their registers are nominal).
    ``ref`` says which of src/dst the RefLayout is.

    >>> op = get_copy_op("SM90_U32x2_STSM_N")
    >>> op.kind, op.ref, str(op.s_regs), str(op.d_regs), op.vector_bits, op.arch
    ('stsm', 'src', 'uint32_t[2]', 'uint128_t[1]', 128, 'sm_90')
    """
    name: str
    kind: str
    thr_id: Layout
    src_layout: Layout
    dst_layout: Layout
    ref_layout: Layout
    ref: str
    s_regs: Registers
    d_regs: Registers
    ptx: str | None
    arch: str | None
    ptx_model: Mapping[str, Any] | None = field(default=None, compare=False)

    @property
    def vector_bits(self) -> int:
        """Width of the widest register the instruction moves (e.g. 128 for a 16-byte ldmatrix row).

        >>> get_copy_op("SM80_CP_ASYNC_CACHEALWAYS<uint64_t>").vector_bits
        64
        """
        return max(self.s_regs.bits, self.d_regs.bits)

    @property
    def src_reg_bits(self) -> int:
        """Width of one SRegisters element (``s_regs.bits``).

        >>> get_copy_op("SM75_U32x2_LDSM_N").src_reg_bits
        128
        """
        return self.s_regs.bits

    @property
    def src_reg_count(self) -> int:
        """Length of SRegisters (``s_regs.count``).

        >>> get_copy_op("SM90_U32x4_STSM_N").src_reg_count
        4
        """
        return self.s_regs.count

    @property
    def dst_reg_bits(self) -> int:
        """Width of one DRegisters element (``d_regs.bits``).

        >>> get_copy_op("SM75_U32x2_LDSM_N").dst_reg_bits
        32
        """
        return self.d_regs.bits

    @property
    def dst_reg_count(self) -> int:
        """Length of DRegisters (``d_regs.count``).

        >>> get_copy_op("SM75_U32x2_LDSM_N").dst_reg_count
        2
        """
        return self.d_regs.count

    @property
    def min_sm(self) -> int:
        """Minimum SM version as an int (``0`` = any).

        >>> get_copy_op("SM75_U16x2_LDSM_T").min_sm, get_copy_op("DefaultCopy").min_sm
        (75, 0)
        """
        if not self.arch:
            return 0
        return int("".join(ch for ch in self.arch.split("_", 1)[1] if ch.isdigit()))

    @property
    def num_threads(self) -> int:
        """``size(ThrID)``.

        >>> get_copy_op("SM75_U32x1_LDSM_N").num_threads
        32
        """
        return self.thr_id.size()

    def to_json(self) -> dict:
        """Catalog record: name, kind ("copy"), op_kind, thr_id, src/dst/ref layouts in bits, registers, ptx.

        >>> get_copy_op("UniversalCopy<uint32_t>").to_json()["ref_layout"]
        '(1,32):(0,1)'
        """
        return {
            "name": self.name, "kind": "copy", "op_kind": self.kind, "thr_id": str(self.thr_id),
            "src_layout": str(self.src_layout), "dst_layout": str(self.dst_layout),
            "ref_layout": str(self.ref_layout), "ref": self.ref,
            "registers": {"S": {"type": self.s_regs.type, "count": self.s_regs.count},
                          "D": {"type": self.d_regs.type, "count": self.d_regs.count}},
            "ptx": self.ptx, "arch": self.arch,
            "ptx_model": None if self.ptx_model is None else dict(self.ptx_model),
        }


def _build(entry: dict) -> CopyOp:
    src, dst = parse_layout(entry["src"]), parse_layout(entry["dst"])
    ref = entry["ref"]
    if ref not in ("src", "dst"):
        raise ValueError(f"copy.json: {entry['name']}: ref must be 'src' or 'dst'")
    kind = entry["kind"]
    if kind not in KINDS:
        raise ValueError(f"copy.json: {entry['name']}: unknown kind {kind!r}")
    pm = entry.get("ptx_model")
    return CopyOp(
        name=entry["name"], kind=kind, thr_id=parse_layout(entry["thr_id"]),
        src_layout=src, dst_layout=dst, ref_layout=src if ref == "src" else dst, ref=ref,
        s_regs=Registers(canonical_type(entry["regs"]["S"][0]), int(entry["regs"]["S"][1])),
        d_regs=Registers(canonical_type(entry["regs"]["D"][0]), int(entry["regs"]["D"][1])),
        ptx=entry.get("ptx"), arch=entry.get("arch"),
        ptx_model=None if pm is None else MappingProxyType(dict(pm)),
    )


@functools.lru_cache(maxsize=None)
def get_copy_op(name: str) -> CopyOp:
    """The :class:`CopyOp` called ``name`` (CuTe's spelling; cached).

    Template forms: ``UniversalCopy<S[,D]>`` (any type of >= 8 bits),
    ``SM80_CP_ASYNC_CACHEALWAYS<T>`` (4, 8 or 16 bytes), ``SM80_CP_ASYNC_CACHEGLOBAL<T>``
    (16 bytes only, as in CuTe), ``AutoVectorizingCopyWithAssumedAlignment<N>``.

    >>> print(get_copy_op("UniversalCopy<half_t>").src_layout)
    (1,16):(0,1)
    >>> get_copy_op("SM80_CP_ASYNC_CACHEGLOBAL<uint64_t>")
    Traceback (most recent call last):
    symlayout.errors.AtomError: SM80_CP_ASYNC_CACHEGLOBAL<uint64_t>: cp.async.cg copies only 16 bytes (CuTe static_assert sizeof(TS) == 16; use SM80_CP_ASYNC_CACHEALWAYS for 4 or 8)
    >>> get_copy_op("SM100_U8x16_LDSM_T").ptx_model["route"]
    'traits'
    """
    narrow = narrow_entry(name)
    return _build(narrow if narrow is not None else _catalog().lookup(name))


def copy_op_names() -> list[str]:
    """Names of every catalogued copy operation.

    >>> [n for n in copy_op_names() if n.startswith("UniversalCopy")]
    ['UniversalCopy<uint8_t>', 'UniversalCopy<uint16_t>', 'UniversalCopy<uint32_t>', 'UniversalCopy<uint64_t>', 'UniversalCopy<uint128_t>']
    """
    return _catalog().names()


@dataclass(frozen=True)
class CopyAtom:
    """CuTe's ``Copy_Atom<Op, ValType>``: the op's bit layouts in units of ``value_type``.

    ``op`` may be a :class:`CopyOp` or its name.  Construction fails with
    :class:`~symlayout.errors.AtomError` when the value type cannot feed the
    atom: the upcast is impossible, ``size<0>(ValLayoutX) != size(ThrID)``
    (CuTe's static_assert), or the values of one call do not exactly fill the
    operation's register arrays (CuTe's ``copy_unpack`` static_assert).

    >>> a = CopyAtom("SM75_U32x1_LDSM_N", "float")
    >>> str(a.val_layout_src), str(a.val_layout_dst), a.num_val_src, a.num_val_dst
    ('((8,4),4):((4,0),1)', '(32,1):(1,1)', 4, 1)
    >>> CopyAtom("SM75_U32x4_LDSM_N", "double")
    Traceback (most recent call last):
    symlayout.errors.CuteStaticAssert: Copy_Atom<SM75_U32x4_LDSM_N,double>: 64-bit values cannot feed the atom: ValLayoutDst (16,(1,4)):(1,(1,16)) covers 16 threads, ThrID has 32
    """
    op: CopyOp
    value_type: str
    strict: bool = field(default=True, compare=False, repr=False)   # False: leave the register-fill
    #   check to the copy_unpack replay (symlayout.prove.copy.model.cute_build_check), which names CuTe's own assert
    value_bits: int = field(init=False)
    val_layout_src: Layout = field(init=False)
    val_layout_dst: Layout = field(init=False)
    val_layout_ref: Layout = field(init=False)
    num_val_src: int = field(init=False)
    num_val_dst: int = field(init=False)

    def __post_init__(self):
        op = self.op if isinstance(self.op, CopyOp) else get_copy_op(self.op)
        vt = canonical_type(self.value_type)
        bits = value_type_bits(vt)
        object.__setattr__(self, "op", op)
        object.__setattr__(self, "value_type", vt)
        object.__setattr__(self, "value_bits", bits)
        who = f"Copy_Atom<{op.name},{vt}>"
        nthr = op.thr_id.size()
        vals = {}
        for what, L in (("Src", op.src_layout), ("Dst", op.dst_layout), ("Ref", op.ref_layout)):
            try:
                V = recast_layout(L, 1, bits)
            except AlgebraError as e:       # CuTe's upcast: static_assert "Divisibility condition"
                raise CuteStaticAssert(f"{who}: {bits}-bit values cannot be cut from the {what} bit layout {L} "
                                       f"({e})", "Divisibility condition") from None
            if V.rank() != 2:
                raise AtomError(f"{who}: ValLayout{what} {V} is not a (thread, value) layout")
            if V[0].size() != nthr:
                raise CuteStaticAssert(f"{who}: {bits}-bit values cannot feed the atom: ValLayout{what} {V} "
                                       f"covers {V[0].size()} threads, ThrID has {nthr}",
                                       f"CopyOperation is not valid for {what} of ValType.")
            vals[what] = V
        nsrc, ndst = vals["Src"][1].size(), vals["Dst"][1].size()
        if op.kind != "default" and self.strict:
            for what, n, regs in (("src", nsrc, op.s_regs), ("dst", ndst, op.d_regs)):
                if n * bits != regs.total_bits:       # what copy_unpack's recast then asserts
                    raise CuteStaticAssert(
                        f"{who}: {n} {what} value(s) x {bits} bits = {n * bits} bits do not fill "
                        f"the {'SRegisters' if what == 'src' else 'DRegisters'} {regs} ({regs.total_bits} bits)",
                        f"Copy_Traits: {what} failed to vectorize into registers. Layout is incompatible with this "
                        "CopyOp.", side=what)
        object.__setattr__(self, "val_layout_src", vals["Src"])
        object.__setattr__(self, "val_layout_dst", vals["Dst"])
        object.__setattr__(self, "val_layout_ref", vals["Ref"])
        object.__setattr__(self, "num_val_src", nsrc)
        object.__setattr__(self, "num_val_dst", ndst)

    @property
    def thr_id(self) -> Layout:
        """The op's ``ThrID``.

        >>> print(CopyAtom("UniversalCopy<uint32_t>", "half_t").thr_id)
        1:0
        """
        return self.op.thr_id

    @property
    def name(self) -> str:
        """``Copy_Atom<Op,ValType>`` spelled out.

        >>> CopyAtom("SM75_U16x2_LDSM_T", "half_t").name
        'Copy_Atom<SM75_U16x2_LDSM_T,half_t>'
        """
        return f"Copy_Atom<{self.op.name},{self.value_type}>"


def moves_bits(name: str) -> bool:
    """Whether the copy operation moves bits (ldmatrix, stmatrix, ``UniversalCopy``, cp.async): CuTe
    recasts the tensors to its registers and never converts, so ``Copy_Atom<name, T>``'s ``T`` is a
    width.  ``AutoVectorizingCopy`` / ``DefaultCopy`` do not: the tensors' own types decide.

    >>> moves_bits("SM75_U32x4_LDSM_N"), moves_bits("AutoVectorizingCopy")
    (True, False)
    """
    return get_copy_op(name).kind != "default"


def width_mismatch(name: str, atom_type: str, element: str) -> str | None:
    """Why ``Copy_Atom<name, atom_type>`` cannot move tensors of ``element`` (contract 2.1): a
    bit-moving atom's value type must have the element's width; None when it can.

    >>> width_mismatch("SM75_U32x4_LDSM_N", "uint8_t", "int8_t") is None
    True
    >>> width_mismatch("SM75_U32x4_LDSM_N", "uint32_t", "half_t")[:87]
    'Copy_Atom<SM75_U32x4_LDSM_N, uint32_t> moves 32-bit values, but the tensors hold 16-bit'
    """
    if not moves_bits(name):
        return None
    a, e = value_type_bits(atom_type), value_type_bits(element)
    if a == e:
        return None
    return (f"Copy_Atom<{name}, {atom_type}> moves {a}-bit values, but the tensors hold {e}-bit {element}: a "
            "copy that moves bits takes the elements' width as its atom's value type")


@functools.lru_cache(maxsize=None)
def make_copy_atom(name: str, value_type: str) -> CopyAtom:
    """``Copy_Atom<name, value_type>`` (cached).

    >>> print(make_copy_atom("SM80_CP_ASYNC_CACHEALWAYS<uint128_t>", "uint8_t").val_layout_src)
    (1,16):(0,1)
    """
    return CopyAtom(get_copy_op(name), value_type)
