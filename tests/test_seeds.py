"""The seeds reproduce: every configuration and number in shared/seeds must come out of symlayout."""
import pytest

from symlayout.algebra.layout import Layout, function_table
from symlayout.atoms.copy import make_copy_atom
from symlayout.prove.copy.model import build_operand_model
from symlayout.prove.copy.obligations import slot_agreement, CHECKS
from symlayout.tiled.copy import copy_calls, make_tiled_copy_A, make_tiled_copy_B
from symlayout.tiled.mma import make_tiled_mma

ATOM = "SM80_16x8x16_F16F16F16F16_TN"


@pytest.fixture(scope="module")
def seed000():
    mma = make_tiled_mma(ATOM, "(2,2,1)")
    tc = make_tiled_copy_A(make_copy_atom("SM75_U32x2_LDSM_N", "half_t"), mma)
    return mma, tc, Layout((32, 16), (16, 1))


def test_seed000_views(seed000):
    mma, tc, sA = seed000
    assert str(mma.thr_layout_vmnk) == "(32,2,2,1):(1,32,64,0)"
    assert mma.tile_shape() == (32, 16, 16) and mma.size() == 128
    tXsA, _ = tc.get_slice(0).partition_S(sA)
    tCrA = mma.get_slice(0).partition_fragment_A(sA)
    tXrA = tc.retile_D(tCrA)
    assert str(tXsA) == "((8,2),1,1):((1,8),0,0)"
    assert str(tCrA) == "((2,2,2),1,1):((1,2,4),0,0)"
    assert str(tXrA) == "((4,2),1,1):((1,4),0,0)"


@pytest.mark.parametrize("thread,offset,mk", [(0, 0, (0, 0)), (1, 16, (1, 0)), (8, 128, (8, 0)), (16, 0, (0, 0)),
                                              (32, 256, (16, 0)), (64, 0, (0, 0)), (96, 256, (16, 0)),
                                              (127, 496, (31, 0))])
def test_seed000_row_starts(seed000, thread, offset, mk):
    mma, tc, sA = seed000
    _, off = tc.get_slice(thread).partition_S(sA)
    assert int(off) == offset and (offset // 16, offset % 16) == mk


def test_seed000_copy_unpack_calls(seed000):
    mma, tc, sA = seed000
    src = tc.get_slice(0).partition_S(sA)
    dst = (tc.retile_D(mma.get_slice(0).partition_fragment_A(sA)), 0)
    calls = copy_calls(tc.atom, src, dst)
    # CopyOp::copy(rS[0], rD[0], rD[1]) twice: one 16-byte row address, two 32-bit registers
    assert [(c.src_regs, c.dst_regs) for c in calls] == [((0,), (0, 2)), ((8,), (4, 6))]


def test_seed000_lane0_slots():
    m = build_operand_model(ATOM, "(2,2,1)", None, "A", "SM75_U32x2_LDSM_N", "half_t", "(32,16):(16,1)")
    # lane 0 slot 2 = A(8,0) (delivered by lane 8's row, d1 low half), slot 5 = A(0,9)
    assert m.name(m.expected[0][2]) == "A(8,0)"
    assert m.name(m.expected[0][5]) == "A(0,9)"
    call = next(c for c, cl in enumerate(m.calls[0]) if 2 in cl.reg)
    a = m.calls[0][call].reg.index(2)
    prov, e = m.hw.provider(0, a, 16, 32)
    assert prov == 8 and m.index_of_address(m.delivered_address(prov, call, e)) == m.expected[0][2]
    assert slot_agreement(m).status == "proved"


SEED001 = [("A", "SM75_U32x4_LDSM_N", "(16,16):(16,1)"), ("A", "SM75_U32x2_LDSM_N", "(16,16):(16,1)"),
           ("B", "SM75_U32x2_LDSM_N", "(8,16):(16,1)"), ("B", "SM75_U32x1_LDSM_N", "(8,16):(16,1)")]


def test_seed001_counts():
    slots = packed = 0
    for op, atom, smem in SEED001:
        m = build_operand_model(ATOM, None, None, op, atom, "half_t", smem)
        for p in ("coverage", "alignment", "exactly_once", "in_bounds", "type_agreement"):
            assert CHECKS[p](m).status == "proved", (op, atom, p)
        r = slot_agreement(m)
        assert r.status == "proved"
        slots += r.stats["fragment_slots"]
        packed += r.stats["packed_bindings"]
    assert (slots, packed) == (768, 384)


def test_seed001_lane0_targets():
    # "lane0 slot5" of A and "slot3" of B: the markers sA(0,9)=37 and sB(0,9)=53 in the trace program
    mA = build_operand_model(ATOM, None, None, "A", "SM75_U32x2_LDSM_N", "half_t", "(16,16):(16,1)")
    mB = build_operand_model(ATOM, None, None, "B", "SM75_U32x1_LDSM_N", "half_t", "(8,16):(16,1)")
    assert mA.name(mA.expected[0][5]) == "A(0,9)"
    assert mB.name(mB.expected[0][3]) == "B(0,9)"


def test_seed004_fragments():
    mma = make_tiled_mma(ATOM, "(2,2,1)", ["32", "32", "16"])
    thr = mma.get_slice(0)
    A = Layout((128, 32))
    B = Layout((128, 32))
    C = Layout((128, 128))
    assert str(thr.partition_fragment_A(A).shape).replace(" ", "") == "((2,2,2),4,2)"
    assert str(thr.partition_fragment_B(B).shape).replace(" ", "") == "((2,2),8,2)"
    fc = thr.partition_fragment_C(C)
    assert str(fc.shape).replace(" ", "") == "((2,2),4,8)" and fc.size() == 128
    pc, off = thr.partition_C(C)
    assert int(off) == 0
    # thread 0's first element of each (MMA_M, MMA_N) block: (0,0) 0, (0,1) 2048, (1,0) 32
    assert pc((0, 0, 0)) == 0 and pc((0, 0, 1)) == 2048 and pc((0, 1, 0)) == 32
    assert str(mma.get_layoutC_TV()) == "((4,8,2,2),((2,2),(1,2))):((64,1,16,256),((32,8),(0,512)))"


def test_seed004_no_permutation_c_map():
    # section 3 of seed 004: C(32x16) thread map of the (2,2,1) TiledMMA, col-major test_C
    mma = make_tiled_mma(ATOM, "(2,2,1)")
    C = Layout((32, 16))
    owner = {}
    for t in range(128):
        p, off = mma.get_slice(t).partition_C(C)
        for v in range(p[0].size()):
            owner[int(off) + p((v, 0, 0))] = t
    assert len(owner) == 512
    assert owner[0] == 0 and owner[32 * 8] == 64 and owner[16] == 32 and owner[1] == 4
