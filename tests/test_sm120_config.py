"""SM120 block-scaled configurations (issue 29): CuTe's ``SM120_*`` ``mma.sync`` atoms as a Version-2 TiledMMA,
``[sf.X] placement = "registers"`` with ``sf`` (the thread and register byte ``mma.sync`` reads each (row,
K-block) from, PTX ISA selectors) and ``sf_kind``; the proofs of ``proofs/blackwell/blockscaled/sm120``, a refutation of
each kind, and bad input as one-line errors."""
from __future__ import annotations

import math
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from config_checks import check_block_scaled_proof, check_pitfall, one_line_error, verdicts
from cute_cpp import cute_site
from symlayout.algebra.notation import parse
from symlayout.atoms.sm120 import (parse_sm120_name, scale_factor_source, scale_vec, selector_problems,
                                   sm120_sf_layouts, smem_layout_sf)
from symlayout.algebra.layout import function_table
from symlayout.config import load_config, loads_config
from symlayout.errors import ConfigError
from symlayout.prove.verdict.result import PROVED, REFUTED

REPO = Path(__file__).resolve().parents[1]
PROOFS = REPO / "proofs" / "blackwell" / "blockscaled" / "sm120"
GOOD = sorted(PROOFS.glob("*.toml"))
PITFALLS = sorted((PROOFS / "pitfalls").glob("*.toml"))
MXFP8 = (PROOFS / "mxfp8_128x128x128.toml").read_text()
NVFP4 = (PROOFS / "nvfp4_128x128x256.toml").read_text()
NVFP4_ATOM = "SM120::BLOCKSCALED::SM120_16x8x64_TN_VS<float_e2m1_t,float_e2m1_t,float,float_ue4m3_t,16>"
MXFP8_ATOM = "SM120::BLOCKSCALED::SM120_16x8x32_TN_VS<float_e4m3_t,float_e4m3_t,float,float_ue8m0_t,32>"


def _prove(text):
    return verdicts(loads_config(text, "t.toml"))


@pytest.mark.parametrize("path", GOOD, ids=lambda p: p.stem)
def test_sm120_block_scaled_gemms_prove(path):
    check_block_scaled_proof(path)


def test_mxfp8_proves_the_ldmatrix_path_with_e4m3_elements():
    res = _prove(MXFP8)
    for p in ("slot_agreement", "bank_conflicts", "exactly_once", "type_agreement"):
        assert res[(p, "A")].status == PROVED and res[(p, "B")].status == PROVED
    # e5m2 data into the e4m3 atom: the uint8_t fragment holds the PTX type the name gives
    r = _prove(MXFP8.replace('element = "float_e4m3_t"', 'element = "float_e5m2_t"', 1))[("type_agreement", "A")]
    assert r.status == REFUTED and "reads A as float_e4m3_t" in r.counterexample.message


@pytest.mark.parametrize("path", PITFALLS, ids=lambda p: p.stem)
def test_sm120_pitfalls_are_refuted_as_expected(path):
    check_pitfall(path)


def test_refutation_names_thread_byte_row_and_k_block():
    r = _prove(NVFP4.replace('[sf.A]\n', '[sf.A]\nregisters = "((16,2),64):((1,0),16)"\n'))[("sf", "sf.A")]
    assert r.status == REFUTED and r.counterexample.thread == 4
    assert "(row 1, K-block 0) of A: mma.sync (thread-id-a 0, byte-id-a 0) reads its factor from thread 4, " \
           "register byte 0, which holds the factor of (row 4, K-block 0)" in r.counterexample.message
    r = _prove(NVFP4.replace('[sf.B]\n', '[sf.B]\nbyte_id = 1\n'))[("sf", "sf.B")]
    assert r.status == REFUTED and "byte-id-b 1: with .scale_vec::4X" in r.counterexample.message


@pytest.mark.parametrize("x,tid,bid,bad", [("A", 1, 0, False), ("A", 2, 0, True), ("B", 3, 0, False),
                                           ("B", 0, 3, True), ("A", 0, 0, False)])
def test_selectors(x, tid, bid, bad):
    # CuTe's fragments broadcast the factors to every thread the selectors can pick: any allowed
    # thread-id proves; a byte-id past the register is refuted
    text = NVFP4.replace(f'[sf.{x}]\n', f'[sf.{x}]\nthread_id = {tid}\nbyte_id = {bid}\n')
    assert (_prove(text)[("sf", f"sf.{x}")].status == REFUTED) == bad
    assert bool(selector_problems(parse_sm120_name(NVFP4_ATOM), x, tid, bid)) == bad


@pytest.mark.parametrize("atom", [NVFP4_ATOM, MXFP8_ATOM])
def test_isa_reader_is_one_of_the_threads_cutes_fragment_gives_the_factor(atom):
    # the PTX ISA's lane (selector 0) holds, in CuTe's SFALayout / SFBLayout (tested against CuTe C++ in
    # test_sm120.py), the factor of the (row, K-block) it is read for
    op = parse_sm120_name(atom)
    sfa, sfb, vs, _ = sm120_sf_layouts(op)
    for x, L, mn in (("A", sfa, 16), ("B", sfb, 8)):
        tab = function_table(L)
        for m in range(mn):
            for j in range(op.k // vs):
                lane, byte = scale_factor_source(op, x, m, j)
                idx = tab[lane + 32 * byte * vs]
                assert (idx % mn, idx // mn // vs) == (m, j)


def test_smem_not_where_the_collective_puts_it_is_refuted():
    # a row-major factor buffer (one factor per row per K-block, each once) read through the 128x4 blocks
    text = MXFP8.replace('smem = "(((_32,_4),_1),((_32,_1),_4,_1),_2):(((_16,_4),_512),((_0,_1),_1,_512),_512)"\n\n[sf.B]',
                         'smem = "(128,(32,4),2):(4,(0,1),512)"\n\n[sf.B]')
    r = _prove(text)[("sf", "sf.A")]
    assert r.status == REFUTED and "(row 1, K-block 0, stage 0) of A: [sf.A] smem keeps its factor at byte 4, but " \
        "the kernel's shared-to-register copy reads it from byte 16" in r.counterexample.message


def test_sf_kind_refutes_the_factor_type():
    text = NVFP4.replace('[sf.A]\ntype = "float_ue4m3_t"\nvec = 16', '[sf.A]\ntype = "float_ue8m0_t"\nvec = 32')
    r = _prove(text)[("sf_kind", "sf.A")]
    assert r.status == REFUTED and "reads float_ue4m3_t factors, one per 16 elements" in r.counterexample.message


@pytest.mark.parametrize("edit,msg", [
    (lambda t: t.replace('[sf.A]\ntype = "float_ue4m3_t"\nvec = 16\nplacement = "registers"',
                         '[sf.A]\ntype = "float_ue4m3_t"\nvec = 16\nplacement = "tmem"'),
     "(mma.sync) reads its scale factors from registers"),
    (lambda t: t.replace("[sf.A]\n", '[sf.A]\nregisters = "(16,64):(1,16)"\n'), "TV layout (T32,V)"),
    (lambda t: t.replace("[sf.A]\n", "[sf.A]\nbyte_id = 4\n"), "byte_id"),
    (lambda t: t.replace("float_ue4m3_t,16>", "float_ue4m3_t,8>"), "vector size has to be 16 or 32"),
    (lambda t: t.replace("float_e2m1_t,float_e2m1_t,float,float_ue4m3_t", "float_e4m3_t,float_e2m1_t,float,"
                                                                       "float_ue4m3_t", 1), "No MMA matches"),
])
def test_bad_input_is_one_line(edit, msg):
    text = edit(NVFP4)
    assert text != NVFP4
    one_line_error(text, msg)


def test_packed_fp4_through_ldmatrix_loads_with_cutes_sub_byte_swizzle():
    # packed fp4 through ldmatrix (SM120's NVFP4 copy) is routed nibble by nibble (tests/test_nvfp4_copy.py); the
    # swizzle of CuTe's print form acts on the byte address of the 4-bit pointer: Sw<3,5,3> over nibble offsets
    assert 'smem = "Sw<3,4,3> o smem_ptr[4b](unset) o ((_8,_16),(_256,_1),(_1,_2))' in NVFP4
    cfg = loads_config(NVFP4, "t.toml")
    assert str(cfg.copies["A"].smem) == "Sw<3,5,3> o 0 o ((8,16),(256,1)):((256,2048),(1,0))"
    with pytest.raises(ConfigError, match=re.escape("the layout is for 8-bit elements (smem_ptr[8b]) but the copy's "
                                                    "type has 4 bits")) as e:
        loads_config(NVFP4.replace("smem_ptr[4b]", "smem_ptr[8b]", 1), "t.toml")
    assert "\n" not in str(e.value)


def test_register_keys_need_an_sm120_atom():
    text = (REPO / "proofs" / "blackwell" / "blockscaled" / "nvfp4_1sm_128x256x256.toml").read_text()
    with pytest.raises(ConfigError, match=re.escape("only with an SM120 block-scaled atom")):
        loads_config(text.replace("[sf.A]\n", "[sf.A]\nbyte_id = 1\n"), "t.toml")


# --- CUTLASS's SM120 collective (host side of nvcc): the proofs' layouts are the ones it builds ---------------

MXFP4_F8F6F4_ATOM = "SM120::BLOCKSCALED::SM120_16x8x32_TN_VS<float_e2m1_t,float_e2m1_t,float,float_ue8m0_t,32>"
AUTO, MXF8F6F4 = "collective::KernelScheduleAuto", "KernelScheduleMxf8f6f4Sm120"
#: (element pair, alignment, tile, atom, proof, schedule, the smem copy atom CUTLASS picks for A and B)
BUILDS = [("mx_float8_t<cutlass::float_e4m3_t>", 16, (128, 128, 128), MXFP8_ATOM, "mxfp8_128x128x128.toml", AUTO,
           "Copy_Atom<SM75_U32x4_LDSM_N, uint8_t>"),
          ("nv_float4_t<cutlass::float_e2m1_t>", 32, (128, 128, 256), NVFP4_ATOM, "nvfp4_128x128x256.toml", AUTO,
           "Copy_Atom<SM75_U32x4_LDSM_N, uint4_t>"),
          ("mx_float4_t<cutlass::float_e2m1_t>", 128, (128, 128, 128), MXFP4_F8F6F4_ATOM,
           "mxfp4_f8f6f4_128x128x128.toml", MXF8F6F4, "Copy_Atom<SM100_SU4_DU8x16_x4_LDSM_N, uint8_t>")]


def _collective_program():
    out = ["#include <cutlass/cutlass.h>", "#include <cute/tensor.hpp>",
           "#include <cutlass/gemm/collective/collective_builder.hpp>", "#include <cstdio>", "using namespace cute;",
           "template <class A, class L, class P> void perm(TiledMMA<A, L, P>) { print(P{}); }",
           "template <class E, int A, class TS, class S, class Cp> void show() {",
           "  using C = typename cutlass::gemm::collective::CollectiveBuilder<cutlass::arch::Sm120, "
           "cutlass::arch::OpClassBlockScaledTensorOp, E, cutlass::layout::RowMajor, A, E, "
           "cutlass::layout::ColumnMajor, A, float, TS, Shape<_1,_1,_1>, cutlass::gemm::collective::StageCount<2>, "
           "S>::CollectiveOp;",
           "  static_assert(is_same_v<typename C::SmemCopyAtomA, Cp> && is_same_v<typename C::SmemCopyAtomB, Cp>);",
           "  print(typename C::SmemLayoutSFA{}); printf(\"\\n\"); print(typename C::SmemLayoutSFB{}); printf(\"\\n\");",
           "  print(typename C::SmemLayoutA{}); printf(\"\\n\"); print(typename C::TiledMma::ThrLayoutVMNK{});",
           "  printf(\"\\n\"); perm(typename C::TiledMma{}); printf(\"\\n\"); }", "int main() {"]
    for e, a, (m, n, k), _atom, _f, sched, cp in BUILDS:
        out.append(f"  show<cutlass::{e}, {a}, Shape<Int<{m}>,Int<{n}>,Int<{k}>>, "
                   f"cutlass::gemm::{sched}, {cp}>();")
    return "\n".join(out) + "\n}\n"


@pytest.fixture(scope="module")
def collective_layouts(tmp_path_factory):
    nvcc, inc = shutil.which("nvcc"), cute_site()
    if nvcc is None or inc is None:
        pytest.skip("nvcc / CUTLASS headers not available")
    d = tmp_path_factory.mktemp("sm120_collective")
    (d / "p.cu").write_text(_collective_program())
    subprocess.run([nvcc, "-std=c++17", "-arch=sm_120a", f"-I{inc[0]}", str(d / "p.cu"), "-o", str(d / "p")],
                   check=True, capture_output=True)
    lines = subprocess.run([str(d / "p")], check=True, capture_output=True, text=True).stdout.splitlines()
    return [lines[5 * i:5 * i + 5] for i in range(len(BUILDS))]


@pytest.mark.parametrize("i", range(len(BUILDS)))
def test_smem_layout_sf_and_the_proofs_are_the_sm120_collectives(collective_layouts, i):
    sfa, sfb, smem_a, thr_vmnk, perm = collective_layouts[i]
    _e, _a, (m, n, k), atom, name, _s, copy_atom = BUILDS[i]
    cfg = load_config(str(PROOFS / name))
    op = parse_sm120_name(atom)
    for printed, mn, x in ((sfa, m, "A"), (sfb, n, "B")):
        cute = parse(printed)
        ours = smem_layout_sf(op, mn, k, 2)
        assert function_table(ours) == function_table(cute)
        assert [math.prod(_flat(s)) for s in cute.shape] == [mn, k, 2]
        assert cfg.sf[x].raw_smem == printed
    assert cfg.mma.atom == atom
    if "A" in cfg.copies:
        assert cfg.copies["A"].raw_smem.split(" o ")[-1] == smem_a.split(" o ")[-1]
        assert f"Copy_Atom<{cfg.copies['A'].atom}, {cfg.copies['A'].type}>" == copy_atom
    # the TiledMMA: warps (V = the atom's 32 threads) and the permutation
    assert parse(thr_vmnk).shape[1:] == tuple(int(v) for v in cfg.mma.raw_layout.strip("()").split(","))
    assert perm.replace("_", "") == "(" + ",".join(cfg.mma.raw_permutation) + ")"


def _flat(t):
    return [v for e in t for v in _flat(e)] if isinstance(t, tuple) else [t]


# --- the selectors, cross-checked (issue 29 item 4) -----------------------------------------------------------

#: PTX ISA 9.7.14.3 "Block Scaling for mma.sync", table "Valid values for various selector components"
#: (docs.nvidia.com/cuda/parallel-thread-execution/#mma-scaling-valid-values-of-selector-components), copied as
#: data: .scale_vec::NX -> (byte-id-a, thread-id-a, byte-id-b, thread-id-b); any other value is undefined behavior
ISA_SELECTORS = {1: ({0, 1, 2, 3}, {0, 1}, {0, 1, 2, 3}, {0, 1, 2, 3}),
                 2: ({0, 2}, {0, 1}, {0, 2}, {0, 1, 2, 3}),
                 4: ({0}, {0, 1}, {0}, {0, 1, 2, 3})}
SCALE_VEC_ATOMS = {1: MXFP8_ATOM,
                   2: "SM120::BLOCKSCALED::SM120_16x8x64_TN_VS<float_e2m1_t,float_e2m1_t,float,float_ue8m0_t,32>",
                   4: NVFP4_ATOM}


@pytest.mark.parametrize("n", sorted(ISA_SELECTORS))
def test_selector_ranges_are_the_ptx_isa_table(n):
    op = parse_sm120_name(SCALE_VEC_ATOMS[n])
    assert op.k // scale_vec(op) == n
    bytes_a, threads_a, bytes_b, threads_b = ISA_SELECTORS[n]
    for x, bytes_ok, threads_ok in (("A", bytes_a, threads_a), ("B", bytes_b, threads_b)):
        for tid in range(6):
            for bid in range(6):
                assert (not selector_problems(op, x, tid, bid)) == (tid in threads_ok and bid in bytes_ok), (x, tid, bid)


def test_cutlass_sm120_atoms_issue_selectors_zero():
    # CUTLASS 4.2 gives every SM120 block-scaled mma.sync (dense and sparse) constant selectors 0 and no
    # collective passes others: non-zero ids come only from a hand-written kernel ([sf.X] thread_id / byte_id)
    inc = cute_site()
    if inc is None:
        pytest.skip("CUTLASS headers not available")
    arch = Path(inc[0]) / "cute" / "arch"
    decls = [m for f in ("mma_sm120.hpp", "mma_sm120_sparse.hpp")
             for m in re.findall(r"static constexpr uint16_t ([tb]id[AB]) = (\w+);", (arch / f).read_text())]
    assert len(decls) >= 4 * 27 * 2 and {v for _n, v in decls} == {"0"}


def test_sm120_and_umma_names_resolve_in_a_fresh_interpreter():
    """get_mma_atom finds the SM120 and SM100 families whichever modules were imported before (a fresh
    interpreter importing only the TiledMMA): they registered themselves only as a side effect of the config."""
    import subprocess
    import sys
    code = ("from symlayout.tiled.mma import make_tiled_mma\n"
            "print(make_tiled_mma('SM120_16x8x32_TN<float_e4m3_t,float_e4m3_t,float>', '(1,1,1)', None).size())\n"
            "from symlayout.atoms.mma import get_mma_atom\n"
            "print(get_mma_atom('SM100_MMA_F16BF16_SS<half_t,half_t,float,128,256,UMMA::Major::K,UMMA::Major::K>').name)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-800:]
    assert out.stdout.splitlines()[0] == "32" and out.stdout.splitlines()[1].startswith("SM100_MMA_F16BF16_SS")


def test_sm120_stages_are_checked_against_an_sm120_blocks_shared_memory():
    """An SM120 block may use 101376 bytes of shared memory (CUTLASS's cutlass/arch/arch.h
    sm120_smem_capacity_bytes, the budget its SM120 builders count stages against), not SM80's 166912, and the
    factor buffers and the pipeline's barriers take their part of it: three stages of the MXFP8 128x128x128
    buffers (96 KiB) with their factors (3 KiB) fit exactly, but not with the 16 barrier bytes a stage the builder
    counts; the proof's two stages fit."""
    text = (PROOFS / "mxfp8_128x128x128.toml").read_text()
    three = text.replace("(_1,_2)):((_128,_1024),(_1,_0),(_0,_16384))", "(_1,_3)):((_128,_1024),(_1,_0),(_0,_16384))")
    three = three.replace(",_2):(((_16,_4),_512),((_0,_1),_1,_512),_512)", ",_3):(((_16,_4),_512),((_0,_1),_1,_512),_512)")
    three = three.replace("count = 2", "count = 3")
    r = verdicts(loads_config(three, "t.toml"))[("in_bounds", "stages.A")]
    assert r.status == REFUTED and r.counterexample.message == (
        "the shared memory of the mainloop (A: 49152 bytes (3 stages), B: 49152 bytes (3 stages), SFA: 1536 bytes, "
        "SFB: 1536 bytes, barriers: 48 bytes (3 x 16)) takes 101424 bytes; an SM120 block may use at most 101376")
    assert r.counterexample.extra["buffers"] == {"A": 49152, "B": 49152, "SFA": 1536, "SFB": 1536, "barriers": 48}
    no_barriers = verdicts(loads_config(three.replace("barrier_bytes = 16\n", ""), "t.toml"))[("in_bounds", "stages.A")]
    assert no_barriers.status == PROVED and "not counted: the pipeline's barriers" in no_barriers.detail
    r = verdicts(loads_config(text, "t.toml"))[("in_bounds", "stages.A")]
    assert r.status == PROVED and "barriers 32 = 67616 bytes" in r.detail


def test_sm120_factor_buffers_count_against_the_capacity():
    """Regression (task tma4): the NVFP4 128x128x256 kernel with 3 stages proved in_bounds[stages] counting only
    A and B (98304 bytes); its factor buffers (2 x 6144 bytes) take it past 101376 even without barriers."""
    text = (PROOFS / "pitfalls" / "nvfp4_3_stages_over_99k.toml").read_text()
    text = text.replace("barrier_bytes = 16\n", "").replace('refuted = ["in_bounds[stages.A]", "in_bounds[stages.B]"]',
                                                              "refuted = []")
    r = verdicts(loads_config(text, "t.toml"))[("in_bounds", "stages.B")]
    assert r.status == REFUTED and "SFA: 6144 bytes, SFB: 6144 bytes) takes 110592 bytes" in r.counterexample.message


def test_barrier_bytes_is_checked_input():
    text = (PROOFS / "mxfp8_128x128x128.toml").read_text().replace("barrier_bytes = 16", "barrier_bytes = -1")
    with pytest.raises(ConfigError, match=r"barrier_bytes"):
        loads_config(text, "t.toml")