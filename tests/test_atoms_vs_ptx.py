"""Atom by atom: CuTe's traits (symlayout.atoms, data from CuTe) and the independent
PTX-ISA model (symlayout.arch.ptx) describe the same hardware.

MMA: for every (thread, value) of ALayout / BLayout / CLayout, the (m,k) / (n,k) /
(m,n) element CuTe assigns equals what the PTX fragment formula puts in element
``value`` of lane ``ThrID(thread)`` (CuTe's value order is the register order:
``mma_unpack`` recasts the value fragment to the register array, low bits first).

ldmatrix / stmatrix: a datum is bit ``b`` of element ``(matrix j, row r, col c)``
of the 8x8 b16 matrices in shared memory, numbered ``1024*j + 128*r + 16*c + b``
(the bit order of CuTe's Copy_Traits codomain).  The register side of the
instruction must agree with the PTX fragment routing (``ldmatrix_dest`` /
``stmatrix_dest``), the shared-memory side with the row-address rule (lane
``8*j + r`` supplies row ``r`` of matrix ``j``; other lanes are not read).
"""
from __future__ import annotations

import pytest

from symlayout.arch import ptx
from symlayout.atoms import value_type_bits
from symlayout.atoms.copy import copy_op_names, get_copy_op
from symlayout.atoms.mma import get_mma_atom, mma_atom_names
from symlayout.errors import AtomError

_MMA = [n for n in mma_atom_names() if (get_mma_atom(n).ptx_model or {}).get("instr") == "mma"]


def _ptx_variant(name):
    pm = get_mma_atom(name).ptx_model
    return pm["shape"], pm["atype"], pm["ctype"]


# Disagreement found (see the report): CUTLASS 4.2 issues
# mma.sync.aligned.m16n8k32.row.col.f16.{e4m3,e5m2}.{e4m3,e5m2}.f16 (cute/arch/mma_sm89.hpp,
# guarded by CUDA >= 12.8, i.e. PTX ISA 8.7), an instruction the PTX ISA does define;
# symlayout.arch.ptx lists only f32 accumulators for m16n8k32 e4m3/e5m2, so it cannot
# model these atoms.  The PTX model is incomplete here, not CuTe.  Strict xfail: the
# test starts failing (XPASS) once ptx.py learns the f16 accumulator.
_PTX_GAP = pytest.mark.xfail(
    strict=True, raises=ValueError,
    reason="symlayout.arch.ptx lacks the f16 accumulator of mma m16n8k32 e4m3/e5m2 (PTX ISA 8.7, sm_89)")
# (the f16-accumulator FP8 variants were added to ptx.py after this disagreement was found)
_MMA_C = [pytest.param(n, marks=_PTX_GAP) if _ptx_variant(n) not in ptx.MMA_VARIANTS else n for n in _MMA]
_MATRIX = [n for n in copy_op_names() if get_copy_op(n).kind in ("ldsm", "stsm")]


def test_every_mma_sync_atom_is_checked():
    # every SM70..SM89 mma.sync atom of the catalog has a PTX model key
    want = [n for n in mma_atom_names() if n.startswith(("SM70_", "SM75_", "SM80_", "SM89_"))]
    assert want == _MMA and len(_MMA) == 8 + 2 + 9 + 24 + 8
    missing = sorted({_ptx_variant(n) for n in _MMA} - set(ptx.MMA_VARIANTS))
    assert missing == []


def _spec(a):
    pm = a.ptx_model
    return ptx.mma_spec(pm["shape"], pm["atype"], pm["ctype"])


@pytest.mark.parametrize("name", _MMA_C)
def test_mma_registers_and_instruction(name):
    a = get_mma_atom(name)
    pm = a.ptx_model
    spec = _spec(a)
    bspec = ptx.mma_spec(pm["shape"], pm["btype"], pm["ctype"])
    assert (a.shape_mnk) == (spec.m, spec.n, spec.k)
    assert a.a_regs.count == spec.a_regs and a.b_regs.count == bspec.b_regs
    assert a.c_regs.count == spec.c_regs and a.d_regs == a.c_regs
    assert a.a_layout[1].size() == spec.a_elems and a.b_layout[1].size() == bspec.b_elems
    assert a.c_layout[1].size() == spec.c_elems
    # value types are the PTX types
    assert value_type_bits(a.val_type_a) == ptx.TYPE_BITS[pm["atype"]]
    assert value_type_bits(a.val_type_b) == ptx.TYPE_BITS[pm["btype"]]
    assert value_type_bits(a.val_type_c) == ptx.TYPE_BITS[pm["ctype"]]
    # the instruction string names the same shape, layouts and types
    base = f"mma.sync.aligned.{pm['shape']}.{pm['alayout']}.{pm['blayout']}." \
           f"{pm['ctype']}.{pm['atype']}.{pm['btype']}.{pm['ctype']}"
    assert a.ptx in (base, base + ".satfinite")
    assert a.min_sm >= spec.min_sm


def _lanes(a):
    return [a.thr_id(t) for t in range(a.thr_id.size())]


@pytest.mark.parametrize("name", _MMA)
def test_mma_a_fragment(name):
    a = get_mma_atom(name)
    pm = a.ptx_model
    M, N, K = a.shape_mnk
    L = a.a_layout
    for t, lane in enumerate(_lanes(a)):
        assert ptx.mma_batch(pm["shape"], pm["atype"], lane) == 0
        for v in range(L[1].size()):
            idx = L(t, v)
            want = ptx.mma_a_elem(pm["shape"], pm["atype"], lane, v, alayout=pm["alayout"])
            assert (idx % M, idx // M) == want, (t, lane, v)


@pytest.mark.parametrize("name", _MMA)
def test_mma_b_fragment(name):
    a = get_mma_atom(name)
    pm = a.ptx_model
    M, N, K = a.shape_mnk
    L = a.b_layout
    for t, lane in enumerate(_lanes(a)):
        for v in range(L[1].size()):
            idx = L(t, v)
            k, n = ptx.mma_b_elem(pm["shape"], pm["btype"], lane, v, blayout=pm["blayout"])
            assert (idx % N, idx // N) == (n, k), (t, lane, v)


@pytest.mark.parametrize("name", _MMA_C)
def test_mma_c_fragment(name):
    a = get_mma_atom(name)
    pm = a.ptx_model
    M, N, K = a.shape_mnk
    L = a.c_layout
    for t, lane in enumerate(_lanes(a)):
        for v in range(L[1].size()):
            idx = L(t, v)
            want = ptx.mma_c_elem(pm["shape"], pm["atype"], lane, v, ctype=pm["ctype"])
            assert (idx % M, idx // M) == want, (t, lane, v)


def test_sm70_quadpair_is_one_ptx_batch():
    # SM70 m8n8k4: a warp runs 4 independent products; CuTe's atom is quad-pair 0
    a = get_mma_atom("SM70_8x8x4_F32F16F16F32_TN")
    assert sorted(_lanes(a)) == [0, 1, 2, 3, 16, 17, 18, 19]
    assert {ptx.mma_batch("m8n8k4", "f16", lane) for lane in range(32)} == {0, 1, 2, 3}


# --------------------------------------------------------------------------- ldmatrix / stmatrix


def _datum(matrix: int, row: int, col: int, bit: int) -> int:
    return 1024 * matrix + 128 * row + 16 * col + bit


@pytest.mark.parametrize("name", _MATRIX)
def test_matrix_op_instruction(name):
    op = get_copy_op(name)
    pm = op.ptx_model
    verb = "ldmatrix" if op.kind == "ldsm" else "stmatrix"
    assert pm["instr"] == verb and pm["shape"] == "m8n8" and pm["type"] == "b16"
    assert op.ptx == f"{verb}.sync.aligned.x{pm['num']}{'.trans' if pm['trans'] else ''}.m8n8.shared.b16"
    rows, regs = (op.s_regs, op.d_regs) if op.kind == "ldsm" else (op.d_regs, op.s_regs)
    assert rows.count == 1 and rows.bits == 8 * ptx.LDMATRIX_ROW_BYTES      # one 16-byte row per lane
    assert regs.type == "uint32_t" and regs.count == pm["num"]              # one b32 register per matrix
    assert op.min_sm == (75 if op.kind == "ldsm" else 90)


@pytest.mark.parametrize("name", _MATRIX)
def test_matrix_op_register_side(name):
    """Register fragment (LDSM Dst / STSM Src) vs ldmatrix_dest / stmatrix_dest."""
    op = get_copy_op(name)
    pm = op.ptx_model
    num, trans = pm["num"], pm["trans"]
    L = op.dst_layout if op.kind == "ldsm" else op.src_layout
    route = ptx.ldmatrix_dest if op.kind == "ldsm" else ptx.stmatrix_dest
    assert L[1].size() == 32 * num
    for t in range(32):
        lane = op.thr_id(t)
        for v in range(32 * num):
            reg, half, bit = v // 32, (v % 32) // 16, v % 16
            j, r, c = route(num, trans, lane, reg, half)
            assert L(t, v) == _datum(j, r, c, bit), (t, v)


@pytest.mark.parametrize("name", _MATRIX)
def test_matrix_op_smem_side(name):
    """Shared-memory side (LDSM Src / STSM Dst): lane 8j+r's 128 bits are row r of matrix j."""
    op = get_copy_op(name)
    pm = op.ptx_model
    num = pm["num"]
    L = op.src_layout if op.kind == "ldsm" else op.dst_layout
    addr_lanes = [lane for grp in ptx.ldmatrix_address_lanes(num) for lane in grp]
    assert L[1].size() == 8 * ptx.LDMATRIX_ROW_BYTES
    for t in range(32):
        lane = op.thr_id(t)
        for v in range(128):
            if lane in addr_lanes:
                j, r = divmod(lane, 8)
                assert ptx.ldmatrix_row_provider(num, j, r) == lane
                assert L(t, v) == _datum(j, r, 0, 0) + v, (t, v)
            else:
                # PTX does not read these addresses; CuTe repeats a real row (stride 0) -> harmless
                assert L(t, v) == L(lane % (8 * num), v)


def test_row_alignment_rule_matches_cute_bits():
    # a row is 128 bits = 16 bytes in CuTe's SrcLayout; PTX requires 16-byte aligned row addresses
    assert ptx.LDMATRIX_ROW_BYTES * 8 == get_copy_op("SM75_U32x1_LDSM_N").src_layout[1].size()
    assert ptx.ldmatrix_row_aligned(16) and not ptx.ldmatrix_row_aligned(8)


# --------------------------------------------------------------------------- cp.async


@pytest.mark.parametrize("nbytes", [4, 8, 16])
@pytest.mark.parametrize("cache", ["ca", "cg"])
def test_cp_async_sizes_and_cache_ops(nbytes, cache):
    t = {4: "uint32_t", 8: "uint64_t", 16: "uint128_t"}[nbytes]
    name = f"SM80_CP_ASYNC_{'CACHEALWAYS' if cache == 'ca' else 'CACHEGLOBAL'}<{t}>"
    allowed = cache in ptx.cp_async_cache_ops(nbytes)
    if not allowed:
        with pytest.raises(AtomError):
            get_copy_op(name)
        return
    op = get_copy_op(name)
    assert op.ptx_model["cache"] == cache and op.ptx_model["cp_size"] == nbytes
    assert op.ptx.startswith(f"cp.async.{cache}.shared.global")
    assert op.s_regs.total_bits == op.d_regs.total_bits == 8 * nbytes
    assert nbytes in ptx.CP_ASYNC_SIZES
