"""SM100's 8-bit ldmatrix/stmatrix atoms (symlayout/atoms/narrow_matrix.py) as ``[copy.X] atom`` (issue 29 item
4): their lane route is CuTe's Copy_Traits (``ptx_model`` route "traits"), which reproduces the PTX-ISA model
on every 16-bit form; the proofs of proofs/blackwell/narrow_ldsm, a refutation, bad input, and the CuTe DSL's
narrow warp ops mapped to CuTe's names."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from config_checks import partition_lines
from cute_cpp import Compiler, cpp_layout, cute_site
from symlayout import cli
from symlayout.atoms.copy import copy_op_names, get_copy_op, make_copy_atom
from symlayout.atoms.narrow_matrix import m8n16_dest, m8n16_row_lane, narrow_copy_names, source_bit, source_bits
from symlayout.config import load_config, loads_config
from symlayout.errors import ConfigError
from symlayout.frontends.cute_dsl import DslError, copy_name
from symlayout.prove.copy.model import Hardware, build_operand_model, hardware_of
from symlayout.prove.engine import prove_config
from symlayout.prove.report.explain import operand_models
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


SM120 = Path(__file__).resolve().parents[1] / "proofs" / "blackwell" / "blockscaled" / "sm120"
MXFP4 = SM120 / "mxfp4_f8f6f4_128x128x128.toml"
WIDENING = [n for n in narrow_copy_names() if source_bits(n)]


@pytest.mark.parametrize("name", WIDENING)
def test_widening_load_route_is_the_ptx_isa_m8n16_model(name):
    # CuTe's Copy_Traits (route "traits") in the uint8_t view == the PTX ISA's .m8n16 fragment and row lanes
    hw = hardware_of(make_copy_atom(name, "uint8_t"))
    num = int(name.split("_x")[1][0])
    assert hw.traits is not None and hw.address_lanes() == list(range(8 * num))
    for lane in range(32):
        for reg in range(num):
            for byte in range(4):
                matrix, row, elem = m8n16_dest(lane, reg, byte)
                assert hw.provider(lane, 4 * reg + byte, 8, 32) == (m8n16_row_lane(matrix, row), elem)


def test_source_format_bits():
    assert [source_bits(n) for n in WIDENING] == [4, 6] * 3
    assert source_bits("SM100_U8x16_LDSM_T") is None and source_bit(4, 16) == 128 and source_bit(6, 15) == 90


def test_widening_fp4_load_of_containers_is_proved():
    v = _verdicts(load_config(MXFP4))
    assert set(v.values()) == {PROVED}
    r = {(x.property, x.operand): x for x in prove_config(load_config(MXFP4)).results}[("type_agreement", "A")]
    assert ".b4x16_p64" in r.detail and r.checked == 1


def _agreement(text):
    rs = prove_config(loads_config(text, "t.toml")).results
    return {r.operand: r for r in rs if r.property == "type_agreement"}


@pytest.mark.parametrize("edit, says", [
    # bytes moved unchanged out of .b4x16_p64 rows: the register byte of A(0,1) holds elements 2 and 3
    (("SM100_SU4_DU8x16_x4_LDSM_N", "SM75_U32x4_LDSM_N"),
     "moves bytes unchanged: the element at offset 1 of the buffer lies at smem bits 4..7, the load puts bits 8..15"),
    # the fp6 form over fp4 rows
    (("SM100_SU4_DU8x16_x4_LDSM_N", "SM100_SU6_DU8x16_x4_LDSM_N"),
     "as .b6x16_p32 (16 6-bit elements, then padding) and widens each element into a byte: the element at offset 1 "
     "of the buffer lies at smem bits 4..7, the load puts bits 6..11"),
    # fp6 containers through the fp4 form
    (('element = "float_e2m1_unpacksmem_t"', 'element = "float_e2m3_unpacksmem_t"'),
     "the element at offset 1 of the buffer lies at smem bits 6..11, the load puts bits 4..7"),
    # fp4 packed two per byte (no padding) read as .b4x16_p64 rows
    (('element = "float_e2m1_unpacksmem_t"', 'element = "float_e2m1_t"'),
     "the element at offset 16 of the buffer lies at smem bits 64..67, the load puts bits 128..131"),
    # 8-bit data through the widening load
    (('element = "float_e2m1_unpacksmem_t"', 'element = "float_e4m3_t"'),
     "the element at offset 1 of the buffer lies at smem bits 8..15, the load puts bits 4..7"),
])
def test_padded_source_format_mismatches_are_refuted_with_the_bits(edit, says):
    text = MXFP4.read_text().replace(*edit)
    assert text != MXFP4.read_text()
    r = _agreement(text)["A"]
    assert r.status == REFUTED and says in r.counterexample.message, r.counterexample.message
    assert r.counterexample.route and r.counterexample.thread is not None


def test_widened_fp4_into_an_fp6_mma_is_refuted():
    text = MXFP4.read_text().replace("float_e2m1_t,float_e2m1_t,float", "float_e2m3_t,float_e2m1_t,float")
    r = _agreement(text)["A"]
    assert r.status == REFUTED and "gives the MMA float_e2m1_t elements, but it reads A as float_e2m3_t" in \
        r.counterexample.message
    assert _agreement(text)["B"].status == PROVED


def test_widening_load_takes_bytes():
    r = _agreement(MXFP4.read_text().replace('type = "uint8_t"', 'type = "uint16_t"', 1))["A"]
    assert r.status == REFUTED and 'one byte per element: type = "uint8_t"' in r.counterexample.message


# --- CuTe C++: the partitions of Copy_Atom<SU{4,6}..., uint8_t> over an SM120 kind::f8f6f4 TiledMMA --------------

PART_MMA = "SM120::BLOCKSCALED::SM120_16x8x32_TN_VS<float_e2m1_t,float_e2m1_t,float,float_ue8m0_t,32>"
PART_SMEM = "Sw<3,4,3> o (32,128):(128,1)"
PARTS = [("SM100_SU4_DU8x16_x4_LDSM_N", "A"), ("SM100_SU6_DU8x16_x2_LDSM_N", "B"), ("SM100_SU4_DU8x16_x1_LDSM_N", "A")]


def _partition_program():
    mma = PART_MMA.replace("float_e2m1_t", "cutlass::float_e2m1_t").replace("float_ue8m0_t", "cutlass::float_ue8m0_t")
    out = ['#include "cute_all.hpp"', "#include <cstdio>", "using namespace cute;",
           "template <class Atom, bool IsA> void show() {",
           f"  auto mma = make_tiled_mma({mma}{{}}, Layout<Shape<_2,_2,_1>>{{}});",
           f"  auto sL = {cpp_layout(PART_SMEM)};",
           "  static uint8_t buf[cosize_v<decltype(sL)>];",
           "  auto sX = make_tensor(make_smem_ptr(buf), sL);",
           "  auto cp = [&] { if constexpr (IsA) return make_tiled_copy_A(Copy_Atom<Atom, uint8_t>{}, mma);",
           "                  else return make_tiled_copy_B(Copy_Atom<Atom, uint8_t>{}, mma); }();",
           "  for (int t = 0; t < int(size(mma)); ++t) {",
           "    auto src = cp.get_slice(t).partition_S(sX);",
           "    auto fr = [&] { if constexpr (IsA) return mma.get_slice(t).partition_fragment_A(sX);",
           "                    else return mma.get_slice(t).partition_fragment_B(sX); }();",
           "    auto dst = cp.get_slice(t).retile_D(fr);",
           '    printf("S %d", t); for (int i = 0; i < int(size(src)); ++i) printf(" %d", int(&src(i) - buf));',
           '    printf("\\nD %d", t); for (int i = 0; i < int(size(dst)); ++i) printf(" %d", int(&dst(i) - &fr(0)));',
           '    printf("\\n"); } }', "int main() {"]
    out += [f"  show<{a}, {str(x == 'A').lower()}>();" for a, x in PARTS]
    return "\n".join(out) + "\n}\n"


def _model_partition(atom, operand):
    m = build_operand_model(PART_MMA, "(2,2,1)", None, operand, atom, "uint8_t", PART_SMEM)
    return partition_lines(m, m.addr_table.__getitem__)


def test_widening_load_partitions_are_cutes(tmp_path):
    if cute_site() is None:
        pytest.skip("CUTLASS headers not available")
    out, asserts = Compiler(tmp_path).run(_partition_program())
    assert not asserts, asserts
    lines = out.splitlines()
    n = len(lines) // len(PARTS)
    for i, (atom, x) in enumerate(PARTS):
        assert lines[n * i:n * (i + 1)] == _model_partition(atom, x), atom


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


def test_container_buffers_count_one_byte_per_element_in_show_and_stages():
    # CuTe's uint8_t view: show/explain build the route over bytes, and a stage of the 128x128 tile is 16384 bytes
    cfg = load_config(MXFP4)
    _mma, models = operand_models(cfg)
    assert models["A"].value_bits == models["B"].value_bits == 8
    stages = [r for r in prove_config(cfg).results if r.operand == "stages.A" and r.detail]
    assert stages and "2 stages of 16384 bytes" in stages[0].detail


def test_cute_program_instantiates_the_copy_over_the_byte_buffer(capsys):
    # `symlayout cute` used to instantiate copy_A over float_e2m1_unpacksmem_t*, which CuTe's namespace lacks and
    # CUTLASS never copies (its buffer is uint8_t): the program did not compile
    assert cli.main(["cute", str(MXFP4)]) == 0
    out = capsys.readouterr().out
    assert "copy_A(0, (uint8_t*)nullptr)" in out and "unpacksmem" not in out.split("int main")[1]
