"""CuTe's ``SM100_TMEM_LOAD_*`` / ``SM100_TMEM_STORE_*`` copy atoms (``cute/arch/copy_sm100.hpp``,
``cute/atom/copy_traits_sm100.hpp``) as data: the ``tcgen05.ld/st`` each one issues (shape,
``.num``, ``.pack::16b``) and, per thread of the warp and register, the Tensor Memory lane and
column it moves -- the PTX ISA's map (:func:`symlayout.arch.tcgen05.ld_cell`), which the tests
check against CuTe's ``Copy_Traits`` evaluated in C++.

CuTe names a shape by its data-path lanes and bits: ``32dp32b`` is ``.32x32b``, ``16dp64b``
``.16x64b``, ``16dp128b``, ``16dp256b``, and ``16dp32b`` is ``.16x32bx2``; ``<N>x`` is ``.num``;
a ``_16b`` suffix is ``.pack::16b`` (load) / ``.unpack::16b`` (store).

>>> op = tmem_copy_op("SM100_TMEM_LOAD_16dp256b4x_16b")
>>> op.ptx, op.registers, op.columns
('tcgen05.ld.sync.aligned.16x256b.x4.pack::16b.b32', 16, 64)
>>> op.cell(5, 3)                  # thread 5, register 3: (lane, column) of its low 16 bits
(9, 6)
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..algebra.layout import Layout
from ..arch import tcgen05 as arch
from ..errors import AtomError
from .copy import CopyAtom, CopyOp
from .types import Registers

#: The bit stride of one data-path lane in CuTe's TMEM bit addresses (``TMEM::DP_b``).
DP_B = 1 << 21

#: CuTe's shape names -> PTX shapes.
SHAPES = {"32dp32b": "32x32b", "16dp64b": "16x64b", "16dp128b": "16x128b", "16dp256b": "16x256b",
          "16dp32b": "16x32bx2"}
_NAME_RE = re.compile(r"^\s*(?:cute::)?(?:SM100::TMEM::(?:LOAD|STORE)::)?SM100_TMEM_(LOAD|STORE)_"
                      r"(32dp32b|16dp64b|16dp128b|16dp256b|16dp32b)(\d+)x(_16b)?\s*$")


@dataclass(frozen=True)
class TmemCopyOp:
    """One ``SM100_TMEM_{LOAD,STORE}_<shape><N>x[_16b]``."""
    name: str
    direction: str           # "load" (TMEM -> registers) or "store"
    shape: str               # the PTX shape
    num: int
    pack16: bool

    @property
    def lanes(self) -> int:
        return arch.LD_SHAPES[self.shape][0]

    @property
    def registers(self) -> int:
        """``.b32`` registers per thread (CuTe's ``DRegisters`` of a load, ``SRegisters`` of a store)."""
        return arch.ld_registers(self.shape, self.num)

    @property
    def columns(self) -> int:
        return arch.ld_columns(self.shape, self.num, self.pack16)

    @property
    def ptx(self) -> str:
        op = "ld" if self.direction == "load" else "st"
        pack = (".pack::16b" if op == "ld" else ".unpack::16b") if self.pack16 else ""
        return f"tcgen05.{op}.sync.aligned.{self.shape}.x{self.num}{pack}.b32"

    @property
    def bits_per_lane(self) -> int:
        """Bits of one lane the atom moves (``columns * 32``; packed: 16 bits of each column)."""
        return self.columns * (16 if self.pack16 else 32)

    @property
    def val_id(self) -> Layout:
        """CuTe's ``ValID``: ``(bit, dp) -> TMEM bit address`` (lane stride ``TMEM::DP_b``; packed atoms
        take 16 bits of each 32-bit column).

        >>> print(tmem_copy_op("SM100_TMEM_LOAD_16dp64b4x_16b").val_id)
        ((16,16),16):((1,32),2097152)
        """
        if self.pack16:
            return Layout(((16, self.columns), self.lanes), ((1, 32), DP_B))
        return Layout((self.bits_per_lane, self.lanes), (1, DP_B))

    @property
    def tmem_layout(self) -> Layout:
        """The TMEM side ``(thr, bit) -> bit`` of the ``ValID`` domain (every thread names the whole atom:
        a load's ``SrcLayout``, a store's ``DstLayout``; also the ``RefLayout`` of both)."""
        return Layout((32, self.bits_per_lane * self.lanes), (0, 1))

    @property
    def register_layout(self) -> Layout:
        """The register side ``(thr, bit) -> bit`` of the ``ValID`` domain (a load's ``DstLayout``, a
        store's ``SrcLayout``), per shape with ``N = .num``:

        * ``32dp32b``: ``(32, 32N):(32N, 1)``;
        * ``16dp64b``: ``((2,2,8),(32,N)):((512N,32,64N),(1,64))``;
        * ``16dp128b``: ``((4,8),(32,2,N)):((32,128N),(1,1024N,128))``;
        * ``16dp256b``: ``((4,8),(64,2,N)):((64,256N),(1,2048N,256))``;
        * ``16dp32b`` (``.16x32bx2``): ``((16,2),32N):((64N,32N),1)``.

        >>> print(tmem_copy_op("SM100_TMEM_LOAD_16dp128b4x").register_layout)
        ((4,8),(32,2,4)):((32,512),(1,4096,128))
        """
        n = self.num
        return {"32x32b": Layout((32, 32 * n), (32 * n, 1)),
                "16x64b": Layout(((2, 2, 8), (32, n)), ((512 * n, 32, 64 * n), (1, 64))),
                "16x128b": Layout(((4, 8), (32, 2, n)), ((32, 128 * n), (1, 1024 * n, 128))),
                "16x256b": Layout(((4, 8), (64, 2, n)), ((64, 256 * n), (1, 2048 * n, 256))),
                "16x32bx2": Layout(((16, 2), 32 * n), ((64 * n, 32 * n), 1))}[self.shape]

    def copy_op(self) -> CopyOp:
        """The atom as a :class:`~symlayout.atoms.copy.CopyOp` (kind ``"tmem"``; the TMEM side is one
        32-bit address register, the register side ``.b32[registers]``)."""
        tm, rg = self.tmem_layout, self.register_layout
        load = self.direction == "load"
        addr, regs = Registers("uint32_t", 1), Registers("uint32_t", self.registers)
        return CopyOp(name=self.name, kind="tmem", thr_id=Layout(32, 1), src_layout=tm if load else rg,
                      dst_layout=rg if load else tm, ref_layout=tm, ref="src" if load else "dst",
                      s_regs=addr if load else regs, d_regs=regs if load else addr, ptx=self.ptx, arch="sm_100a")

    def copy_atom(self, value_type: str) -> CopyAtom:
        """``Copy_Atom<Op, value_type>``."""
        return CopyAtom(self.copy_op(), value_type, strict=False)

    def cell(self, thread: int, reg: int, half: int = 0) -> tuple[int, int]:
        """``(lane, column)`` (relative to the atom's TMEM address) of register ``reg`` of ``thread``."""
        return arch.ld_cell(self.shape, self.num, thread, reg, half, self.pack16)


def tmem_copy_op(name: str) -> TmemCopyOp:
    """The :class:`TmemCopyOp` of a CuTe name; CuTe defines ``.num`` up to 128 registers per thread.

    >>> tmem_copy_op("SM100_TMEM_STORE_32dp32b128x").registers
    128
    >>> tmem_copy_op("SM100_TMEM_LOAD_16dp256b64x")
    Traceback (most recent call last):
     ...
    symlayout.errors.AtomError: SM100_TMEM_LOAD_16dp256b64x: tcgen05.ld/st.16x256b.x64 needs 256 registers per thread (at most 128); CuTe defines no such atom
    """
    m = _NAME_RE.match(name)
    if not m:
        raise AtomError(f"not an SM100 TMEM copy atom (SM100_TMEM_{{LOAD,STORE}}_{{32dp32b,16dp64b,16dp128b,"
                        f"16dp256b,16dp32b}}<N>x[_16b]): {name!r}")
    op = TmemCopyOp(name.strip(), m.group(1).lower(), SHAPES[m.group(2)], int(m.group(3)), bool(m.group(4)))
    try:
        op.registers
    except ValueError as e:
        raise AtomError(f"{op.name}: {e}; CuTe defines no such atom") from None
    return op


def tmem_copy_names() -> list[str]:
    """Every SM100 TMEM copy atom CuTe defines (load and store, packed or not).

    >>> len(tmem_copy_names()), tmem_copy_names()[0]
    (148, 'SM100_TMEM_LOAD_32dp32b1x')
    """
    out = []
    for d in ("LOAD", "STORE"):
        for cute_shape, shape in SHAPES.items():
            for n in arch.NUMS:
                if arch.LD_SHAPES[shape][1] * n <= arch.MAX_REGISTERS:
                    out += [f"SM100_TMEM_{d}_{cute_shape}{n}x", f"SM100_TMEM_{d}_{cute_shape}{n}x_16b"]
    return out
