"""Structural facts and PTX ISA figure examples for symlayout.arch.ptx."""
import itertools
import subprocess
import sys

import pytest

from symlayout.arch import ptx

LANES = range(32)


# ---------------------------------------------------------------------------
# ldmatrix / stmatrix
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("num", ptx.LDMATRIX_NUMS)
@pytest.mark.parametrize("trans", [False, True])
def test_ldmatrix_dest_is_a_bijection(num, trans):
    got = [ptx.ldmatrix_dest(num, trans, l, r, h) for l in LANES for r in range(num) for h in (0, 1)]
    assert sorted(got) == [(j, r, c) for j in range(num) for r in range(8) for c in range(8)]


@pytest.mark.parametrize("num", ptx.LDMATRIX_NUMS)
@pytest.mark.parametrize("trans", [False, True])
def test_ldmatrix_source_inverts_dest(num, trans):
    for l, r, h in itertools.product(LANES, range(num), (0, 1)):
        assert ptx.ldmatrix_source(num, trans, *ptx.ldmatrix_dest(num, trans, l, r, h)) == (l, r, h)
        assert ptx.stmatrix_source(num, trans, *ptx.stmatrix_dest(num, trans, l, r, h)) == (l, r, h)


def test_ldmatrix_address_lanes():
    assert ptx.ldmatrix_address_lanes(1) == [list(range(8))]
    assert ptx.ldmatrix_address_lanes(4)[3] == list(range(24, 32))
    used = [l for m in ptx.ldmatrix_address_lanes(2) for l in m]
    assert used == list(range(16))  # lanes 16-31 are not read for .x2
    assert ptx.stmatrix_address_lanes(4) == ptx.ldmatrix_address_lanes(4)
    for j in range(4):
        for r in range(8):
            assert ptx.ldmatrix_row_provider(4, j, r) in ptx.ldmatrix_address_lanes(4)[j]


def test_ldmatrix_figure_examples():
    # PTX ISA ldmatrix fragment figure: row i of the matrix is spread over lanes 4i..4i+3,
    # two consecutive b16 per lane.
    assert ptx.ldmatrix_dest(1, False, 0, 0, 0) == (0, 0, 0)
    assert ptx.ldmatrix_dest(1, False, 0, 0, 1) == (0, 0, 1)
    assert ptx.ldmatrix_dest(1, False, 3, 0, 1) == (0, 0, 7)
    assert ptx.ldmatrix_dest(1, False, 4, 0, 0) == (0, 1, 0)
    assert ptx.ldmatrix_dest(4, False, 31, 3, 1) == (3, 7, 7)
    # .trans: lane 0 gets column 0, rows 0 and 1
    assert ptx.ldmatrix_dest(1, True, 0, 0, 0) == (0, 0, 0)
    assert ptx.ldmatrix_dest(1, True, 0, 0, 1) == (0, 1, 0)
    assert ptx.ldmatrix_dest(2, True, 5, 1, 0) == (1, 2, 1)


def test_ldmatrix_alignment_and_errors():
    assert ptx.LDMATRIX_ROW_BYTES == 16
    assert ptx.ldmatrix_row_aligned(0) and ptx.ldmatrix_row_aligned(48)
    assert not ptx.ldmatrix_row_aligned(8)
    with pytest.raises(ValueError):
        ptx.ldmatrix_dest(3, False, 0, 0, 0)
    with pytest.raises(ValueError):
        ptx.ldmatrix_dest(2, False, 0, 2, 0)
    with pytest.raises(ValueError):
        ptx.ldmatrix_dest(1, False, 32, 0, 0)
    with pytest.raises(ValueError):
        ptx.ldmatrix_source(1, False, 0, 8, 0)


# ---------------------------------------------------------------------------
# mma.sync
# ---------------------------------------------------------------------------

LAYOUTS = [("row", "col")]
VARIANTS = [(s, a, c, "row", "col") for (s, a, c) in ptx.MMA_VARIANTS] + [
    ("m8n8k4", "f16", c, al, bl) for c in ("f32", "f16")
    for al, bl in (("col", "col"), ("row", "row"), ("col", "row"))]


def _ids(v):
    return ".".join(v)


@pytest.mark.parametrize("v", VARIANTS, ids=_ids)
def test_mma_fragments_cover_each_element_once(v):
    shape, atype, ctype, al, bl = v
    s = ptx.mma_spec(shape, atype, ctype)
    for op, rows, cols, count in (("A", s.m, s.k, s.a_elems), ("B", s.k, s.n, s.b_elems),
                                  ("C", s.m, s.n, s.c_elems)):
        t = ptx.mma_fragment_table(shape, atype, op, ctype, alayout=al, blayout=bl)
        assert len(t) == 32 * count
        want = sorted((b, r, c) for b in range(s.batches) for r in range(rows) for c in range(cols))
        assert sorted(t.values()) == want, op


@pytest.mark.parametrize("v", ptx.MMA_VARIANTS, ids=_ids)
def test_mma_register_counts(v):
    shape, atype, ctype = v
    s = ptx.mma_spec(shape, atype, ctype)
    per_batch_lanes = 32 // s.batches
    assert s.a_elems * per_batch_lanes == s.m * s.k
    assert s.b_elems * per_batch_lanes == s.k * s.n
    assert s.c_elems * per_batch_lanes == s.m * s.n
    assert s.a_regs * ptx.mma_elems_per_reg(atype) == s.a_elems
    assert s.b_regs * ptx.mma_elems_per_reg(atype) == s.b_elems
    assert s.c_regs * ptx.mma_elems_per_reg(ctype) == s.c_elems
    assert ptx.mma_reg_counts(shape, atype, ctype) == (s.a_regs, s.b_regs, s.c_regs)


@pytest.mark.parametrize("key,regs", [
    (("m16n8k16", "f16", "f32"), (4, 2, 4)), (("m16n8k16", "f16", "f16"), (4, 2, 2)),
    (("m16n8k8", "bf16", "f32"), (2, 1, 4)), (("m16n8k8", "tf32", "f32"), (4, 2, 4)),
    (("m16n8k4", "tf32", "f32"), (2, 1, 4)), (("m16n8k16", "s8", "s32"), (2, 1, 4)),
    (("m16n8k32", "s8", "s32"), (4, 2, 4)), (("m16n8k32", "e4m3", "f32"), (4, 2, 4)),
    (("m8n8k16", "u8", "s32"), (1, 1, 2)), (("m8n8k4", "f64", "f64"), (1, 1, 2)),
    (("m8n8k4", "f16", "f32"), (2, 2, 8)), (("m8n8k4", "f16", "f16"), (2, 2, 4)),
])
def test_mma_register_counts_from_the_isa(key, regs):
    assert ptx.mma_reg_counts(*key) == regs


def test_group_and_thread_id():
    assert [ptx.group_id(l) for l in LANES] == [l >> 2 for l in LANES]
    assert [ptx.thread_id_in_group(l) for l in LANES] == [l % 4 for l in LANES]


def test_mma_m16n8k16_figure_examples():
    # Figure "MMA .m16n8k16 fragment layout for matrix A with .f16/.bf16 type"
    assert [ptx.mma_a_elem("m16n8k16", "f16", 0, i) for i in range(8)] == [
        (0, 0), (0, 1), (8, 0), (8, 1), (0, 8), (0, 9), (8, 8), (8, 9)]
    assert ptx.mma_a_elem("m16n8k16", "bf16", 31, 7) == (15, 15)
    # B: lane 0 holds k 0,1 (b0,b1) and 8,9 (b2,b3) of column 0
    assert [ptx.mma_b_elem("m16n8k16", "f16", 0, i) for i in range(4)] == [(0, 0), (1, 0), (8, 0), (9, 0)]
    assert ptx.mma_b_elem("m16n8k16", "f16", 31, 3) == (15, 7)
    # C/D: lane 0 -> (0,0),(0,1),(8,0),(8,1)
    assert [ptx.mma_c_elem("m16n8k16", "f16", 0, i) for i in range(4)] == [(0, 0), (0, 1), (8, 0), (8, 1)]
    assert ptx.mma_c_elem("m16n8k16", "f16", 31, 3, ctype="f16") == (15, 7)


def test_mma_tf32_register_order_differs_from_f16():
    f16 = [ptx.mma_a_elem("m16n8k8", "f16", 0, i) for i in range(4)]
    tf32 = [ptx.mma_a_elem("m16n8k8", "tf32", 0, i) for i in range(4)]
    assert f16 == [(0, 0), (0, 1), (8, 0), (8, 1)]
    assert tf32 == [(0, 0), (8, 0), (0, 4), (8, 4)]   # a1 is the row+8 element
    assert [ptx.mma_b_elem("m16n8k8", "tf32", 6, i) for i in range(2)] == [(2, 1), (6, 1)]
    assert [ptx.mma_a_elem("m16n8k4", "tf32", 6, i) for i in range(2)] == [(1, 2), (9, 2)]
    assert ptx.mma_b_elem("m16n8k4", "tf32", 6, 0) == (2, 1)


def test_mma_integer_and_fp8_examples():
    assert [ptx.mma_a_elem("m16n8k32", "s8", 1, i) for i in (0, 3, 4, 8, 15)] == [
        (0, 4), (0, 7), (8, 4), (0, 20), (8, 23)]
    assert [ptx.mma_a_elem("m16n8k32", "e4m3", 1, i) for i in (0, 3, 4, 8, 15)] == [
        (0, 4), (0, 7), (8, 4), (0, 20), (8, 23)]
    assert [ptx.mma_b_elem("m16n8k32", "e5m2", 1, i) for i in (0, 3, 4, 7)] == [(4, 0), (7, 0), (20, 0), (23, 0)]
    assert [ptx.mma_a_elem("m16n8k16", "u8", 1, i) for i in (0, 3, 4, 7)] == [(0, 4), (0, 7), (8, 4), (8, 7)]
    assert [ptx.mma_a_elem("m8n8k16", "s8", 5, i) for i in range(4)] == [(1, 4), (1, 5), (1, 6), (1, 7)]
    assert [ptx.mma_c_elem("m8n8k16", "s8", 5, i) for i in range(2)] == [(1, 2), (1, 3)]


def test_mma_f64_examples():
    assert ptx.mma_a_elem("m8n8k4", "f64", 6, 0) == (1, 2)
    assert ptx.mma_b_elem("m8n8k4", "f64", 6, 0) == (2, 1)
    assert [ptx.mma_c_elem("m8n8k4", "f64", 6, i) for i in range(2)] == [(1, 4), (1, 5)]


def test_mma_m8n8k4_f16_quadpairs():
    assert [ptx.mma_batch("m8n8k4", "f16", l) for l in (0, 3, 4, 15, 16, 19, 20, 31)] == [0, 0, 1, 3, 0, 0, 1, 3]
    assert ptx.mma_batch("m16n8k16", "f16", 20) == 0
    # lanes 16..19 hold rows 4..7 of their quad-pair's row-major A
    assert ptx.mma_a_elem("m8n8k4", "f16", 17, 2) == (5, 2)
    assert ptx.mma_a_elem("m8n8k4", "f16", 17, 2, alayout="col") == (6, 1)
    assert ptx.mma_b_elem("m8n8k4", "f16", 17, 2) == (2, 5)
    assert ptx.mma_b_elem("m8n8k4", "f16", 17, 2, blayout="row") == (1, 6)
    assert ptx.mma_c_elem("m8n8k4", "f16", 17, 5, ctype="f16") == (5, 5)
    assert ptx.mma_c_elem("m8n8k4", "f16", 3, 6, ctype="f32") == (3, 6)


def test_mma_errors():
    with pytest.raises(ValueError):
        ptx.mma_spec("m16n8k16", "tf32")
    with pytest.raises(ValueError):
        ptx.mma_spec("m16n8k16", "bf16", "f16")
    with pytest.raises(ValueError):
        ptx.mma_a_elem("m16n8k16", "f16", 0, 8)
    with pytest.raises(ValueError):
        ptx.mma_a_elem("m8n8k4", "f16", 0, 0, alayout="diag")


# ---------------------------------------------------------------------------
# cp.async
# ---------------------------------------------------------------------------

def test_cp_async_alignment():
    assert ptx.CP_ASYNC_SIZES == (4, 8, 16)
    for size in ptx.CP_ASYNC_SIZES:
        for addr in range(0, 64, 4):
            assert ptx.cp_async_aligned(addr, 0, size) == (addr % size == 0)
            assert ptx.cp_async_aligned(0, addr, size) == (addr % size == 0)
    with pytest.raises(ValueError):
        ptx.cp_async_aligned(0, 0, 32)


def test_cp_async_cache_ops_and_fill():
    assert ptx.cp_async_cache_ops(4) == ("ca",)
    assert ptx.cp_async_cache_ops(16) == ("ca", "cg")
    assert ptx.cp_async_fill(8, 8) == (8, 0)
    assert ptx.cp_async_fill(16, 12) == (12, 4)
    with pytest.raises(ValueError):
        ptx.cp_async_fill(8, 12)


def test_module_is_light():
    code = ("import sys; import symlayout.arch.ptx; "
            "bad = [m for m in ('z3', 'sympy', 'numpy', 'cupy') if m in sys.modules]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
