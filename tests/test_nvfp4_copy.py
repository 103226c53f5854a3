"""SM120's NVFP4 shared-to-register copy (issue 29): ``Copy_Atom<SM75_U32x*_LDSM_N, uint4_t>`` over packed fp4
(two e2m1 per byte), as ``CollectiveBuilder<Sm120, OpClassBlockScaledTensorOp, nv_float4_t<...>>`` builds it.

The route: ldmatrix moves 16-bit elements, so a 4-bit value travels as a nibble of its 16-bit element (the
PTX-ISA model, :class:`symlayout.prove.copy.model.Hardware`); the smem is CuTe's ``Sw<3,4,3> o smem_ptr[4b] o L``,
whose swizzle acts on the storage byte of the sub-byte pointer.  Ground truth: CuTe C++'s ``partition_S`` /
``retile_D`` of the SM120 NVFP4 TiledMMA (host-only g++), every thread's element coordinates and fragment slots."""
from __future__ import annotations

from pathlib import Path

import pytest

from config_checks import partition_lines
from cute_cpp import Compiler, cpp_layout, cute_site
from symlayout import cli
from symlayout.atoms.copy import make_copy_atom
from symlayout.config import load_config, loads_config
from symlayout.prove.copy.model import build_operand_model, hardware_of
from symlayout.prove.engine import prove_config
from symlayout.prove.verdict.result import PROVED, REFUTED

SM120 = Path(__file__).resolve().parents[1] / "proofs" / "blackwell" / "blockscaled" / "sm120"
NVFP4 = SM120 / "nvfp4_128x128x256.toml"
PITFALLS = SM120 / "pitfalls"

MMA = "SM120::BLOCKSCALED::SM120_16x8x64_TN_VS<float_e2m1_t,float_e2m1_t,float,float_ue4m3_t,16>"
PERM = ["128", "(8,2,2):(1,16,8)", "64"]
#: one stage of SmemLayoutA/B as nvcc prints CUTLASS 4.2's 128x128x256 builder (K-major, 128 B swizzle on bytes)
TILE = "((_8,_16),(_256,_1)):((_256,_2048),(_1,_0))"
SMEM = f"Sw<3,4,3> o smem_ptr[4b](unset) o {TILE}"
ELEMENT_SWIZZLE = f"Sw<3,5,3> o 0 o {TILE}"          # the same function over nibble offsets


def _results(text):
    return {(r.property, r.operand): r for r in prove_config(loads_config(text, "t.toml")).results}


def test_the_nvfp4_proof_copies_are_proved():
    rs = {(r.property, r.operand): r for r in prove_config(load_config(NVFP4)).results}
    for x in "AB":
        for p in ("coverage", "alignment", "exactly_once", "slot_agreement", "bank_conflicts", "in_bounds",
                  "type_agreement"):
            assert rs[(p, x)].status == PROVED and rs[(p, x)].checked, (p, x)
    # regression: the byte-granular route gave both nibbles of a byte the same provider (slot_agreement refuted)
    assert rs[("slot_agreement", "A")].checked == 65536


def test_a_nibble_is_routed_with_its_byte():
    # ldmatrix moves 16-bit elements: nibble n of value v sits where byte v//2 of the 8-bit route puts it
    hw = hardware_of(make_copy_atom("SM75_U32x4_LDSM_N", "uint4_t"))
    for lane in range(32):
        for v in range(32):
            p, e = hw.provider(lane, v // 2, 8, 32)
            assert hw.provider(lane, v, 4, 32) == (p, 2 * e + v % 2), (lane, v)


def test_smem_ptr_form_is_the_element_swizzle():
    text = NVFP4.read_text()
    cfg = load_config(NVFP4)
    assert SMEM.replace(TILE, "") in text and str(cfg.copies["A"].smem).startswith("Sw<3,5,3> o 0 o ")


def test_cute_program_keeps_the_swizzle_on_the_pointer(capsys):
    # `symlayout cute` re-read the smem_ptr spelling as notation and stopped with an input error
    assert cli.main(["cute", str(NVFP4)]) == 0
    out = capsys.readouterr().out
    assert "composition(Swizzle<3,4,3>{}, smem_ptr_flag_bits<4>{}, Layout<" in out


# --- one failing case per property ------------------------------------------------------------------------------

def test_containers_read_packed_are_refuted_with_the_bits_and_the_route():
    r = _results((PITFALLS / "nvfp4_containers_read_packed.toml").read_text())[("type_agreement", "A")]
    cex = r.counterexample
    assert r.status == REFUTED
    assert ("the element at offset 16 of the buffer lies at smem bits 128..131, the load puts bits 64..67 into the "
            "register nibble") in cex.message
    assert cex.route[-3:] == ["lane 2 d0 bits 0..3 = A(0,16) (smem byte 8)", "tCrA slot 0", "MMA expects A(0,16)"]
    assert (cex.thread, cex.slot, cex.element) == (2, 0, (0, 16))


def test_byte_swizzle_on_nibble_offsets_is_rejected_by_cute():
    # Sw<3,4,3> o 0 o L (the 8-bit kernel's element swizzle) over packed fp4 permutes 8-byte halves of a 16-byte
    # ldmatrix row: CuTe's copy cannot vectorize it (test_cute_agrees_on_what_compiles checks the C++)
    r = _results((PITFALLS / "nvfp4_byte_swizzle_on_nibbles.toml").read_text())[("alignment", "A")]
    assert r.status == REFUTED and r.method == "cute" and "src failed to vectorize" in r.counterexample.message


def test_unswizzled_packed_rows_conflict():
    text = NVFP4.read_text().replace(SMEM.replace(TILE, ""), "", 1)
    r = _results(text)[("bank_conflicts", "A")]
    assert r.status == REFUTED and "8-way bank conflict" in r.counterexample.message
    assert _results(text)[("slot_agreement", "A")].status == PROVED


def test_packed_copy_into_the_f8f6f4_mma_is_refuted():
    # the same packed copy into kind::f8f6f4 (e2m1 in 8-bit uint8_t slots): CuTe does not compile it, and the
    # reason is the types (4-bit values into 8-bit slots), not the smem
    text = (NVFP4.read_text().replace("SM120_16x8x64_TN_VS", "SM120_16x8x32_TN_VS")
            .replace("float_ue4m3_t,16>", "float_ue8m0_t,32>").replace('"64"]', '"32"]'))
    r = _results(text)[("type_agreement", "A")]
    assert r.status == REFUTED and r.method == "cute" and "reads A as uint8_t" in r.counterexample.message


# --- CuTe C++: partition_S / retile_D of Copy_Atom<SM75_U32x*_LDSM_N, uint4_t> over packed smem ---------------

PARTS = [("SM75_U32x4_LDSM_N", "A"), ("SM75_U32x4_LDSM_N", "B"), ("SM75_U32x2_LDSM_N", "A"),
         ("SM75_U32x1_LDSM_N", "B")]


def _partition_program():
    mma = (MMA.replace("float_e2m1_t", "cutlass::float_e2m1_t").replace("float_ue4m3_t", "cutlass::float_ue4m3_t"))
    sw = cpp_layout(ELEMENT_SWIZZLE).split("Int<0>{}, ", 1)[1][:-1]
    return "\n".join([
        "#define NDEBUG", '#include "cute_all.hpp"', "#include <cstdio>", "#include <vector>", "using namespace cute;",
        "using Fp4 = cutlass::float_e2m1_t;",
        "static array_subbyte<Fp4, 128 * 256> buf;",
        "template <class P> long key(P p) {       // the element offset of CuTe's swizzled sub-byte address",
        "  auto q = P::apply_swizzle(p.get()).get();",
        "  uint8_t* b = recast_ptr<uint8_t>(q);",
        "  return 2 * long(b - recast_ptr<uint8_t>(buf.begin())) + (q == subbyte_iterator<Fp4>(b, 4) ? 1 : 0); }",
        "template <class Atom, bool IsA> void show() {",
        f"  auto mma = make_tiled_mma({mma}{{}}, Layout<Shape<_4,_2,_1>>{{}},",
        "                            Tile<_128, Layout<Shape<_8,_2,_2>,Stride<_1,_16,_8>>, _64>{});",
        f"  auto sL = composition(Swizzle<3,4,3>{{}}, smem_ptr_flag_bits<4>{{}}, {sw});",
        "  auto sX = make_tensor(make_smem_ptr(buf.begin()), sL);",
        "  std::vector<int> index(size(sX));",
        "  for (int i = 0; i < int(size(sX)); ++i) index[key(sX.data() + sX.layout()(i))] = i;",
        "  auto cp = [&] { if constexpr (IsA) return make_tiled_copy_A(Copy_Atom<Atom, uint4_t>{}, mma);",
        "                  else return make_tiled_copy_B(Copy_Atom<Atom, uint4_t>{}, mma); }();",
        "  for (int t = 0; t < int(size(mma)); ++t) {",
        "    auto src = cp.get_slice(t).partition_S(sX);",
        "    auto fr = [&] { if constexpr (IsA) return mma.get_slice(t).partition_fragment_A(sX);",
        "                    else return mma.get_slice(t).partition_fragment_B(sX); }();",
        "    auto dst = cp.get_slice(t).retile_D(fr);",
        "    std::vector<int> slot(cosize(fr.layout()));      // fragment offset -> slot (CuTe's index of fr)",
        "    for (int j = 0; j < int(size(fr)); ++j) slot[fr.layout()(j)] = j;",
        '    printf("S %d", t);',
        '    for (int i = 0; i < int(size(src)); ++i) printf(" %d", index[key(src.data() + src.layout()(i))]);',
        '    printf("\\nD %d", t); for (int i = 0; i < int(size(dst)); ++i) printf(" %d", slot[dst.layout()(i)]);',
        '    printf("\\n"); } }', "int main() {"]
        + [f"  show<{a}, {str(x == 'A').lower()}>();" for a, x in PARTS]) + "\n}\n"


def _model_partition(atom, operand):
    m = build_operand_model(MMA, "(4,2,1)", PERM, operand, atom, "uint4_t", ELEMENT_SWIZZLE)
    return partition_lines(m)


def test_packed_partitions_are_cutes(tmp_path):
    if cute_site() is None:
        pytest.skip("CUTLASS headers not available")
    out, asserts = Compiler(tmp_path).run(_partition_program())
    assert not asserts, asserts
    lines = out.splitlines()
    n = len(lines) // len(PARTS)
    assert n == 2 * 256
    for i, (atom, x) in enumerate(PARTS):
        assert lines[n * i:n * (i + 1)] == _model_partition(atom, x), (atom, x)


def test_cute_rejects_the_byte_swizzle_on_nibble_offsets(tmp_path):
    # the pitfall's rejection is CuTe's: Sw<3,4,3> o 0 o L over a 4-bit smem pointer does not compile, the
    # swizzle on the pointer (smem_ptr_flag_bits<4>) does (test_packed_partitions_are_cutes)
    if cute_site() is None:
        pytest.skip("CUTLASS headers not available")
    mma = (MMA.replace("float_e2m1_t", "cutlass::float_e2m1_t").replace("float_ue4m3_t", "cutlass::float_ue4m3_t"))
    prog = "\n".join([
        '#include "cute_all.hpp"', "using namespace cute;",
        "static array_subbyte<cutlass::float_e2m1_t, 128 * 256> buf;", "int main() {",
        f"  auto mma = make_tiled_mma({mma}{{}}, Layout<Shape<_4,_2,_1>>{{}},",
        "                            Tile<_128, Layout<Shape<_8,_2,_2>,Stride<_1,_16,_8>>, _64>{});",
        f"  auto sA = make_tensor(make_smem_ptr(buf.begin()), {cpp_layout(ELEMENT_SWIZZLE.replace('<3,5,3>', '<3,4,3>'))});",
        "  auto cp = make_tiled_copy_A(Copy_Atom<SM75_U32x4_LDSM_N, uint4_t>{}, mma);",
        "  auto fr = mma.get_slice(0).partition_fragment_A(sA);",
        "  copy(cp, cp.get_slice(0).partition_S(sA), cp.get_slice(0).retile_D(fr));", "}"])
    out, asserts = Compiler(tmp_path).run(prog)
    assert any("src failed to vectorize" in a for a in asserts), asserts
