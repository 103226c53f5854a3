"""Loads whose copy element width differs from the fragment CuTe builds (``partition_fragment_A``
holds the MMA's ``ValTypeA``), and float storage converted for a tf32 MMA: the two disagreements the
CuTe C++ oracle (tests/oracle) found after issue 12's items 7/8."""
import pytest

from symlayout.prove.engine import prove_operand
from symlayout.prove.verdict.result import PROVED, REFUTED

MIXED = ("SM80_16x8x16_F16F16F16F16_TN", "(2,2,1)", None, "A", "UniversalCopy<uint32_t>", "float", "(32,16):(16,1)")


def verdicts(args, method="auto"):
    from symlayout.algebra.notation import parse_layout
    mma, lay, perm, op, atom, typ, smem = args
    return {r.property: r for r in prove_operand(mma, lay, perm, op, atom, typ, parse_layout(smem), method=method)}


@pytest.mark.parametrize("method", ["auto", "z3"])
def test_float_through_a_32_bit_copy_into_a_half_fragment_is_refuted(method):
    # CuTe C++: thread 0 writes byte 16 of its 16-byte half_t fragment; fragment byte 2 gets the float's byte 2
    r = verdicts(MIXED, method)
    assert r["exactly_once"].status == REFUTED
    assert "bytes 16..31 land outside it" in r["exactly_once"].counterexample.message
    assert r["slot_agreement"].status == REFUTED
    assert "fragment byte 2" in r["slot_agreement"].counterexample.message
    assert r["type_agreement"].status == REFUTED


def test_same_width_raw_copy_is_not_affected():
    r = verdicts(("SM80_16x8x16_F16F16F16F16_TN", "(2,2,1)", None, "A", "UniversalCopy<uint32_t>", "half_t",
                  "(32,16):(16,1)"))
    assert r["exactly_once"].status == PROVED and r["slot_agreement"].status == PROVED


@pytest.mark.parametrize("atom", ["DefaultCopy", "AutoVectorizingCopy"])
def test_float_converted_for_a_tf32_mma_agrees(atom):
    # CuTe C++ converts float to tfloat32_t element by element: the values the tf32 MMA reads
    r = verdicts(("SM80_16x8x8_F32TF32TF32F32_TN", "(2,2,1)", None, "A", atom, "float", "(32,8):(8,1)"))
    assert r["type_agreement"].status == PROVED
    assert "converted to tfloat32_t" in r["type_agreement"].detail


def test_bf16_converted_for_an_f16_mma_is_still_refuted():
    r = verdicts(("SM80_16x8x16_F16F16F16F16_TN", "(2,2,1)", None, "A", "DefaultCopy", "bfloat16_t",
                  "(32,16):(16,1)"))
    assert r["type_agreement"].status == REFUTED
