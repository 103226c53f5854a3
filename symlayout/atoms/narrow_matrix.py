"""CuTe's narrow ``ldmatrix`` / ``stmatrix`` atoms of SM100 (``cute/arch/copy_sm100.hpp``,
``cute/atom/copy_traits_sm100.hpp``) as data: 8-bit transposed loads and stores
(``ldmatrix.m16n16.trans.shared.b8``, ``stmatrix.m16n8.trans.shared.b8``) and the fp4/fp6 loads that widen
each element into a byte (``ldmatrix.m8n16.shared.b8x16.b4x16_p64`` / ``.b6x16_p32``: 16 elements and 64 / 32
bits of padding per 16-byte row, the source format kind::f8f6f4 reads).  Layouts are in bits, as in
``Copy_Traits`` (the 8-bit ``_T`` loads include CuTe's byte shuffle after the instruction).

These instructions need sm_100a / sm_120a (CuTe guards them with ``CUTE_ARCH_LDSM_SM100A_ENABLED``): none
runs on the project's H200, so there is no atom-probe measurement; the lane maps here are CuTe's, not yet
checked against an independent PTX-ISA model.  ``[copy.X] atom`` accepts them
(:func:`~symlayout.atoms.copy.get_copy_op`); their ``ptx_model`` says ``"route": "traits"``: the prover's
lane-to-lane route of the instruction is CuTe's Copy_Traits (the row a value comes from is the SrcLayout
position holding the same reference coordinate), not the PTX-ISA model of the 16-bit forms.

>>> [e["name"] for e in ENTRIES][:2]
['SM100_U8x8_LDSM_T', 'SM100_U8x16_LDSM_T']
"""
from __future__ import annotations


def _model(ptx):
    instr, _, _, shape, xn = ptx.split(".")[:5]
    return {"instr": instr, "shape": shape, "type": "b8", "num": int(xn[1:]), "trans": ".trans." in ptx,
            "route": "traits"}


def _ld(name, src, dst, d_regs, ptx):
    return {"name": name, "kind": "ldsm", "thr_id": "32:1", "src": src, "dst": dst, "ref": "dst",
            "regs": {"S": ["uint128_t", 1], "D": ["uint32_t", d_regs]}, "ptx": ptx, "ptx_model": _model(ptx),
            "arch": "sm_100a"}


def _st(name, src, dst, s_regs, ptx):
    return {"name": name, "kind": "stsm", "thr_id": "32:1", "src": src, "dst": dst, "ref": "src",
            "regs": {"S": ["uint32_t", s_regs], "D": ["uint128_t", 1]}, "ptx": ptx, "ptx_model": _model(ptx),
            "arch": "sm_100a"}


_T8 = "((4,8),(8,2,2{})):((256,8),(1,128,64{}))"
ENTRIES = [
    _ld("SM100_U8x8_LDSM_T", "((2,2,4,2),128):((128,1024,256,0),1)", _T8.format(",2", ",1024"), 2,
        "ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8"),
    _ld("SM100_U8x16_LDSM_T", "((2,2,4,2),128):((128,1024,256,2048),1)", _T8.format(",4", ",1024"), 4,
        "ldmatrix.sync.aligned.m16n16.x2.trans.shared.b8"),
] + [
    _ld(f"SM100_SU{b}_DU8x16_x{n}_LDSM_N", src, dst, n,
        f"ldmatrix.sync.aligned.m8n16.x{n}.shared.b8x16.b{b}x16_p{64 if b == 4 else 32}")
    for n, src, dst in [(1, "((8,4),128):((128,0),1)", "(32,32):(32,1)"),
                        (2, "((16,2),128):((128,0),1)", "(32,(32,2)):(32,(1,1024))"),
                        (4, "(32,128):(128,1)", "(32,(32,4)):(32,(1,1024))")]
    for b in (4, 6)
] + [
    _st("SM100_U8x4_STSM_T", _T8.format("", ""), "((8,4),128):((128,0),1)", 1,
        "stmatrix.sync.aligned.m16n8.x1.trans.shared.b8"),
    _st("SM100_U8x8_STSM_T", _T8.format(",2", ",1024"), "((16,2),128):((128,0),1)", 2,
        "stmatrix.sync.aligned.m16n8.x2.trans.shared.b8"),
    _st("SM100_U8x16_STSM_T", _T8.format(",4", ",1024"), "(32,128):(128,1)", 4,
        "stmatrix.sync.aligned.m16n8.x4.trans.shared.b8"),
]
_BY_NAME = {e["name"]: e for e in ENTRIES}


def narrow_copy_names() -> list[str]:
    return list(_BY_NAME)


def narrow_entry(name: str) -> dict | None:
    """A fresh catalog entry of one of these atoms (CuTe's name), None for another name."""
    e = _BY_NAME.get(name.replace("cute::", "").strip())
    return None if e is None else dict(e)
