"""Issue 12 item 10: swizzles with an offset that is not a multiple of the swizzle period.

CuTe's ``slice_and_offset`` of ``Sw o OFF o L`` XORs the swizzle's Y/Z bits of the sliced-off
coordinates into ``OFF`` (``swizzle_layout.hpp``: ``offset_only_zy = layout.offset() ^
to_mixed_bits(...)``); with an offset whose Y/Z bits are set that is not ``Sw(OFF + L(c))``, so the
partitions -- and the addresses the real ``cute::copy`` dereferences -- are not the layout function.
symlayout reproduces CuTe's partitions and judges the copy on the addresses CuTe computes.
"""
import re

import pytest

from symlayout.algebra.layout import Layout
from symlayout.algebra.int_tuple import _
from symlayout.algebra.notation import parse_layout
from symlayout.prove.engine import prove_operand
from symlayout.prove.copy.model import build_operand_model
from symlayout.algebra.composed import ComposedLayout, Swizzle
from symlayout.algebra.symbolic import DynInt as D

F16 = "SM80_16x8x16_F16F16F16F16_TN"

# CuTe 4.2's own answers: slice_and_offset(coord, composition(Swizzle<3,3,3>{}, Int<OFF>{}, layout)),
# printed by a host program (static underscores stripped); D(...) marks a run-time coordinate.
C16 = ComposedLayout(Swizzle(3, 3, 3), 16, Layout((8, 64), (64, 1)))
C0 = ComposedLayout(Swizzle(3, 3, 3), 0, Layout((8, 64), (64, 1)))
C520 = ComposedLayout(Swizzle(3, 3, 3), 520, Layout((16, 64), (64, 1)))
CD = ComposedLayout(Swizzle(3, 3, 3), 16, Layout(((8, 4), (8, 8)), ((64, 512), (1, 8))))
CUTE_SLICES = [
    (C16, (1, _), "((8,2,4)):((1,-8,16))", 88),
    (C16, (D(1), _), "((8,2,2,2)):((1,-8,16,32))", 88),
    (C16, (_, 8), "((4,2)):((56,288))", 24),
    (C16, (_, D(16)), "((2,2,2)):((72,144,288))", 0),        # 16 ^ 16 = 0: Sw(16 + 16) would be 32
    (C16, (_, D(24)), "((2,2,2)):((56,144,288))", 8),
    (C0, (D(1), _), "((8,2,2,2)):((1,-8,16,32))", 72),
    (C0, (_, D(16)), "((2,2,2)):((72,112,288))", 16),
    (C520, (D(9), _), "((8,2,2,2)):((1,-8,16,32))", 1088),
    (C520, (_, D(8)), "((2,2,2,2)):((72,144,288,512))", 512),
    (CD, ((D(3), _), (_, D(2))), "(4,8):(512,1)", 216),
    (CD, ((_, D(1)), (0, _)), "Sw<3,3,3> o 16 o (8,8):(64,8)", 512),
    (CD, ((D(5), _), _), "(4,(8,(2,2,2))):(512,(1,(-8,16,-32)))", 376),
]


@pytest.mark.parametrize("L,crd,layout,offset", CUTE_SLICES, ids=[f"{c[0]}|{c[1]}" for c in CUTE_SLICES])
def test_slice_and_offset_is_cute(L, crd, layout, offset):
    got, off = L.slice_and_offset(crd)
    assert (str(got), int(off)) == (layout, offset)


def test_offset_swizzle_partition_is_not_the_layout_function():
    # the partition's offset for column 16 is Sw(16 ^ 16) = 0, while the element there is at Sw(32) = 32
    _L, off = C16.slice_and_offset((_, D(16)))
    assert int(off) == 0 and C16(0, 16) == 32


def test_cute_addresses_differ_only_for_offsets_with_swizzle_bits():
    from symlayout.prove.copy.model import cute_addresses_differ
    assert cute_addresses_differ(parse_layout("Sw<3,3,3> o 16 o (32,64):(64,1)"))
    assert cute_addresses_differ(parse_layout("Sw<3,3,3> o 520 o (32,64):(64,1)"))
    assert cute_addresses_differ(parse_layout("Sw<2,3,3> o 32 o (32,32):(32,1)"))     # bit 5: no Y/Z bit
    assert not cute_addresses_differ(parse_layout("Sw<3,3,3> o 512 o (32,64):(64,1)"))
    assert not cute_addresses_differ(parse_layout("Sw<3,3,3> o 0 o (32,64):(64,1)"))
    assert not cute_addresses_differ(parse_layout("(32,64):(64,1)"))


def _status(smem, atom="SM75_U32x4_LDSM_N", operand="A", method="auto"):
    rs = prove_operand(F16, "(2,2,1)", None, operand, atom, "half_t", smem, method=method)
    return {r.property: r for r in rs}


def test_offset_16_is_refuted_as_cute_copies_it():
    """CuTe C++ (tests/oracle): LDSM x4 on Sw<3,3,3> o 16 o (32,64):(64,1) delivers other elements than
    the MMA expects and never reads some; symlayout proved both before."""
    r = _status("Sw<3,3,3> o 16 o (32,64):(64,1)")
    assert r["slot_agreement"].status == "refuted"
    assert r["coverage"].status == "refuted"
    assert r["alignment"].status == "proved" and r["in_bounds"].status == "proved"
    m = r["slot_agreement"].counterexample.message
    assert re.match(r"thread \d+ slot \d+: the hardware delivers A\(\d+,\d+\), but the MMA expects A\(\d+,\d+\)", m), m


def test_offset_outside_the_swizzle_bits_still_carries_into_them():
    """Sw<2,3,3> o 32: bit 5 is neither a Y nor a Z bit, but CuTe adds it to the sliced-off rows outside
    the swizzle, so 32 + 32 carries into Y bit 6 unswizzled; CuTe C++ refutes slot_agreement."""
    r = prove_operand(F16, "(2,2,1)", None, "A", "SM75_U32x4_LDSM_N", "half_t", "Sw<2,3,3> o 32 o (32,32):(32,1)")
    assert {x.property: x.status for x in r}["slot_agreement"] == "refuted"


def test_offset_multiple_of_the_period_keeps_the_proofs():
    r = _status("Sw<3,3,3> o 512 o (32,64):(64,1)")
    assert r["slot_agreement"].status == "proved" and r["coverage"].status == "proved"


def test_store_onto_an_offset_swizzle():
    r = _status("Sw<3,3,3> o 8 o (32,64):(64,1)", atom="SM90_U32x2_STSM_N", operand="C")
    assert r["slot_agreement"].status == "refuted"


def test_model_names_addresses_that_hold_no_element():
    m = build_operand_model(F16, "(2,2,1)", None, "A", "SM75_U32x4_LDSM_N", "half_t", "Sw<3,3,3> o 16 o (32,64):(64,1)")
    n = m.smem.size()
    used = {i for calls in m.calls.values() for c in calls for i in c.smem}
    assert used <= set(range(n)) | set(m.stray)
    for i, a in m.stray.items():
        assert m.addr_table[i] == a and "no element of the tile" in m.name(i)


def test_z3_does_not_judge_offset_swizzles_as_layout_functions():
    # --method z3 on a concrete configuration gives the exhaustive (CuTe-exact) verdict
    r = _status("Sw<3,3,3> o 16 o (32,64):(64,1)", method="z3")
    assert r["slot_agreement"].status == "refuted"
    # a parametric one is not encoded: UNKNOWN, never PROVED
    from symlayout.config import loads_config
    from symlayout.prove.engine import prove_config
    cfg = loads_config('[params]\nm = { min = 1, max = 4 }\n[mma]\natom = "SM80_16x8x16_F16F16F16F16_TN"\n'
                       'layout = "(2,2,1)"\n[copy.A]\natom = "SM75_U32x4_LDSM_N"\ntype = "half_t"\n'
                       'smem = "Sw<3,3,3> o 16 o (32*m,64):(64,1)"\n[prove]\nproperties = ["slot_agreement", "alignment"]\n')
    rep = prove_config(cfg)
    assert rep.error is None and {r.status for r in rep.results} == {"unknown"}


def test_cute_snippet_keeps_the_offset():
    from symlayout.prove.report.cute_snippet import cpp_layout
    assert cpp_layout(parse_layout("Sw<3,3,3> o 16 o (32,64):(64,1)")).startswith(
        "composition(Swizzle<3,3,3>{}, Int<16>{}, Layout<Shape<_32,_64>, Stride<_64,_1>>{})")
