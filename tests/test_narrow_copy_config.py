"""SM100's 8-bit ldmatrix/stmatrix atoms (symlayout/atoms/narrow_matrix.py) as ``[copy.X] atom`` (issue 29 item
4): their lane route is CuTe's Copy_Traits (``ptx_model`` route "traits"), which reproduces the PTX-ISA model
on every 16-bit form; the proofs of proofs/blackwell/narrow_ldsm, a refutation, bad input, and the CuTe DSL's
narrow warp ops mapped to CuTe's names."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from symlayout.atoms.copy import copy_op_names, get_copy_op, make_copy_atom
from symlayout.config import load_config, loads_config
from symlayout.errors import ConfigError
from symlayout.frontends.cute_dsl import DslError, copy_name
from symlayout.prove.copy.model import Hardware, hardware_of
from symlayout.prove.engine import prove_config
from symlayout.prove.verdict.result import PROVED, REFUTED

PROOFS = Path(__file__).resolve().parents[1] / "proofs" / "blackwell" / "narrow_ldsm"
GOOD = PROOFS / "int8_b_u8x16_ldsm_t.toml"
PLAIN = PROOFS / "int8_b_u8x16_ldsm_t_plain_n_major.toml"


def _verdicts(cfg):
    return {r.property: r.status for r in prove_config(cfg).results}


def _register_values(op):
    regs = op.d_regs if op.kind == "ldsm" else op.s_regs
    return regs.bits * regs.count


@pytest.mark.parametrize("name", [n for n in copy_op_names() if n.startswith(("SM75_", "SM90_U"))
                                  and ("LDSM" in n or "STSM" in n)])
def test_traits_route_is_the_ptx_model_on_the_16_bit_forms(name):
    op = get_copy_op(name)
    ptx_hw = hardware_of(make_copy_atom(name, "half_t"))
    traits_hw = Hardware(ptx_hw.kind, ptx_hw.num, ptx_hw.trans, ptx_hw.ptx, traits=op)
    assert traits_hw.address_lanes() == ptx_hw.address_lanes()
    for vb in (8, 16):
        for lane in range(32):
            for v in range(_register_values(op) // vb):
                assert traits_hw.provider(lane, v, vb, 32) == ptx_hw.provider(lane, v, vb, 32), (lane, v, vb)


def test_narrow_atoms_take_the_traits_route():
    hw = hardware_of(make_copy_atom("SM100_U8x16_LDSM_T", "uint8_t"))
    assert hw.traits is get_copy_op("SM100_U8x16_LDSM_T") and hw.num == 2 and hw.trans
    assert hw.address_lanes() == list(range(32))         # m16n16.x2: 32 rows of 16 bytes
    assert hardware_of(make_copy_atom("SM100_U8x8_LDSM_T", "uint8_t")).address_lanes() == list(range(16))


def test_transposed_8bit_load_route_is_proved_and_its_banks_conflict():
    v = _verdicts(load_config(GOOD))
    assert {p: v[p] for p in ("coverage", "alignment", "exactly_once", "slot_agreement", "in_bounds")} == \
        dict.fromkeys(("coverage", "alignment", "exactly_once", "slot_agreement", "in_bounds"), PROVED)
    assert v["bank_conflicts"] == REFUTED


def test_transposed_8bit_load_over_plain_n_major_smem_is_rejected_by_cute():
    assert _verdicts(load_config(PLAIN))["alignment"] == REFUTED


def test_widening_fp4_load_is_not_supported():
    text = PLAIN.read_text().replace("SM100_U8x16_LDSM_T", "SM100_SU4_DU8x16_x4_LDSM_N")
    with pytest.raises(ConfigError, match=re.escape("t.toml:12: [copy.B] atom: not supported: "
                                                    "SM100_SU4_DU8x16_x4_LDSM_N widens packed fp4/fp6")) as e:
        loads_config(text, "t.toml")
    assert "\n" not in str(e.value)


def _dsl_atom(op_name, transpose, n, unpack=None):
    op = type(op_name, (), {})()
    op.transpose, op.num_matrices, op.unpack_bits = transpose, n, unpack
    return type("Atom", (), {"op": op})()


@pytest.mark.parametrize("op, args, name", [
    ("LdMatrix8x16x8bOp", (False, 4), "SM75_U32x4_LDSM_N"),
    ("LdMatrix8x16x8bOp", (False, 2, 4), "SM100_SU4_DU8x16_x2_LDSM_N"),
    ("LdMatrix16x16x8bOp", (True, 2), "SM100_U8x16_LDSM_T"),
    ("StMatrix16x8x8bOp", (True, 4), "SM100_U8x16_STSM_T"),
])
def test_dsl_narrow_ops_map_to_cute_names(op, args, name):
    assert copy_name(_dsl_atom(op, *args)) == name


def test_dsl_ops_without_a_cute_counterpart_are_not_supported():
    for atom in (_dsl_atom("LdMatrix16x16x8bOp", True, 1, 6), _dsl_atom("LdMatrix16x8x8bOp", True, 2)):
        with pytest.raises(DslError, match="not supported: LdMatrix16x"):
            copy_name(atom)
