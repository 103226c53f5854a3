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
from symlayout.atoms.sm120 import (parse_sm120_name, scale_factor_source, selector_problems, sm120_sf_layouts,
                                   smem_layout_sf)
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
    text = MXFP8.replace('smem = "(((_32,_4),_1),((_32,_1),_4,_1),_3):(((_16,_4),_512),((_0,_1),_1,_512),_512)"\n\n[sf.B]',
                         'smem = "(128,(32,4),3):(4,(0,1),512)"\n\n[sf.B]')
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


def test_packed_fp4_through_ldmatrix_is_not_supported_rather_than_refuted():
    # the byte-granular ldmatrix route would refute CUTLASS's own NVFP4 smem copy (two e2m1 per byte)
    copy = ('[copy.A]\natom = "SM75_U32x4_LDSM_N"\ntype = "uint4_t"\nelement = "float_e2m1_t"\n'
            'smem = "Sw<3,4,3> o 0 o ((_8,_16),(_256,_1)):((_256,_2048),(_1,_0))"\n\n')
    with pytest.raises(ConfigError, match=re.escape("not supported: SM75_U32x4_LDSM_N of uint4_t")) as e:
        loads_config(NVFP4.replace("[sf.A]\n", copy + "[sf.A]\n"), "t.toml")
    assert "\n" not in str(e.value)


def test_register_keys_need_an_sm120_atom():
    text = (REPO / "proofs" / "blackwell" / "blockscaled" / "nvfp4_1sm_128x256x256.toml").read_text()
    with pytest.raises(ConfigError, match=re.escape("only with an SM120 block-scaled atom")):
        loads_config(text.replace("[sf.A]\n", "[sf.A]\nbyte_id = 1\n"), "t.toml")


# --- CUTLASS's SM120 collective (host side of nvcc): the proofs' layouts are the ones it builds ---------------

BUILDS = [("mx_float8_t<cutlass::float_e4m3_t>", 16, (128, 128, 128), MXFP8_ATOM, "mxfp8_128x128x128.toml"),
          ("nv_float4_t<cutlass::float_e2m1_t>", 32, (128, 128, 256), NVFP4_ATOM, "nvfp4_128x128x256.toml")]


def _collective_program():
    out = ["#include <cutlass/cutlass.h>", "#include <cute/tensor.hpp>",
           "#include <cutlass/gemm/collective/collective_builder.hpp>", "#include <cstdio>", "using namespace cute;",
           "template <class A, class L, class P> void perm(TiledMMA<A, L, P>) { print(P{}); }",
           "template <class E, int A, class TS> void show() {",
           "  using C = typename cutlass::gemm::collective::CollectiveBuilder<cutlass::arch::Sm120, "
           "cutlass::arch::OpClassBlockScaledTensorOp, E, cutlass::layout::RowMajor, A, E, "
           "cutlass::layout::ColumnMajor, A, float, TS, Shape<_1,_1,_1>, cutlass::gemm::collective::StageCount<3>, "
           "cutlass::gemm::collective::KernelScheduleAuto>::CollectiveOp;",
           "  print(typename C::SmemLayoutSFA{}); printf(\"\\n\"); print(typename C::SmemLayoutSFB{}); printf(\"\\n\");",
           "  print(typename C::SmemLayoutA{}); printf(\"\\n\"); print(typename C::TiledMma::ThrLayoutVMNK{});",
           "  printf(\"\\n\"); perm(typename C::TiledMma{}); printf(\"\\n\"); }", "int main() {"]
    for e, a, (m, n, k), _atom, _f in BUILDS:
        out.append(f"  show<cutlass::{e}, {a}, Shape<Int<{m}>,Int<{n}>,Int<{k}>>>();")
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
    _e, _a, (m, n, k), atom, name = BUILDS[i]
    cfg = load_config(str(PROOFS / name))
    op = parse_sm120_name(atom)
    for printed, mn, x in ((sfa, m, "A"), (sfb, n, "B")):
        cute = parse(printed)
        ours = smem_layout_sf(op, mn, k, 3)
        assert function_table(ours) == function_table(cute)
        assert [math.prod(_flat(s)) for s in cute.shape] == [mn, k, 3]
        assert cfg.sf[x].raw_smem == printed
    if "A" in cfg.copies:
        assert cfg.copies["A"].raw_smem.split(" o ")[-1] == smem_a.split(" o ")[-1]
    # the TiledMMA: warps (V = the atom's 32 threads) and the permutation
    assert parse(thr_vmnk).shape[1:] == tuple(int(v) for v in cfg.mma.raw_layout.strip("()").split(","))
    assert perm.replace("_", "") == "(" + ",".join(cfg.mma.raw_permutation) + ")"


def _flat(t):
    return [v for e in t for v in _flat(e)] if isinstance(t, tuple) else [t]
