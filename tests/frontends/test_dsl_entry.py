"""``symlayout dsl KERNEL.py --entry ...``: a CuTe DSL kernel traced as written (no symlayout_configs()
wrapper), on the small kernels of tests/data/dsl_kernels (written for these tests in the style of CUTLASS's
examples); the torch stub; assumptions named; one-line errors.  Tests that trace skip without the DSL."""
from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

import pytest

from symlayout.cli import main
from symlayout.frontends import dsl_entry, stubs
from symlayout.frontends.dsl_entry import guess_arch, operand_letter, parse_assignments, stride_divisibility
from symlayout.frontends.stubs import Stub, install

KERNELS = Path(__file__).resolve().parents[1] / "data" / "dsl_kernels"
AMPERE = KERNELS / "ampere_tensorop_gemm.py"
HOPPER = KERNELS / "hopper_dense_gemm.py"
AMPERE_ARGS = ["--entry", "TensorOpGemm.__call__", "--shape", "M=4096,N=4096,K=4096", "--dtype", "f16"]
HOPPER_ARGS = ["--entry", "HopperGemm.__call__", "--shape", "M=4096,N=4096,K=4096", "--dtype", "f16"]
needs_dsl = pytest.mark.usefixtures("cute")


def run(capsys, *argv):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def toml_docs(out: str) -> list:
    return [tomllib.loads(d.split("\n", 1)[1]) for d in out.split("# ---- ")[1:]]


# ---------------------------------------------------------------- pieces without the DSL


@pytest.mark.parametrize("mod", [dsl_entry, stubs])
def test_doctests(mod):
    import doctest
    res = doctest.testmod(mod)
    assert res.failed == 0


def test_operand_letters_from_kernel_names():
    assert [operand_letter(n) for n in ("sA_layout", "a_smem_layout_staged", "tiled_copy_s2r_B", "mC", "sD",
                                        "tma_atom_b", "tiled_mma", "thr_mma")] == \
        ["A", "A", "B", "C", "C", "B", None, None]


def test_assignments_keep_brackets():
    assert parse_assignments("atom_layout_mnk=(2,2,1),swizzle=False", "--init") == \
        {"atom_layout_mnk": "(2,2,1)", "swizzle": "False"}


def test_arch_guessed_from_the_source():
    assert guess_arch("cute.nvgpu.tcgen05.MmaF16BF16Op") == "sm_100a"
    assert guess_arch("from cutlass.cute.nvgpu import warpgroup") == "sm_90a"
    assert guess_arch("warp.MmaF16BF16Op") == "sm_80"


def test_torch_stub_loads_module_level_torch_code(tmp_path, monkeypatch):
    """What kernels do with torch at import time works on the stub; the stub goes away after."""
    mod = tmp_path / "uses_torch.py"
    mod.write_text("import torch\nimport torch.nn.functional as F\n"
                   "DT = {torch.float16: 1}\n"
                   "class M(torch.nn.Module):\n    pass\n"
                   "@torch.compile\ndef f(x: torch.Tensor | None):\n    return 3\n"
                   "@torch.library.custom_op('x::y', mutates_args=())\ndef g():\n    return 4\n"
                   "CUDA = bool(torch.cuda.is_available())\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    undo = install(["torch"])
    try:
        import uses_torch
        assert uses_torch.f(None) == 3 and uses_torch.CUDA is False and issubclass(uses_torch.M, object)
        assert isinstance(sys.modules["torch"].float16, Stub)
    finally:
        undo()
        sys.modules.pop("uses_torch", None)
    assert "torch" not in sys.modules or not getattr(sys.modules["torch"], "__symlayout_stub__", False)


def test_staged_transpose_is_recognised():
    """A staged (rank-3) V^T view of a staged V tile is the transpose of every stage (it was refused with
    a false "is not the transpose of"); a wrong one still is not."""
    from symlayout.algebra.layout import Layout, composition
    from symlayout.algebra.notation import parse
    from symlayout.frontends.cute_dsl import _is_transpose
    v = "Sw<3,3,3> o 0 o ((8,8),(64,1),(1,2)):((64,512),(1,0),(0,4096))"
    vt = str(composition(parse(v), Layout((64, 64, 2), (64, 1, 4096))))
    assert _is_transpose(v, vt)
    assert not _is_transpose(v, v)
    assert not _is_transpose(v, str(composition(parse(v), Layout((64, 64, 2), (64, 1, 0)))))


def test_a_dotted_stub_keeps_the_real_parent(tmp_path, monkeypatch):
    """--stub-module pkg.sub stubs pkg.sub (a kernel's driver calls at import time), not pkg."""
    (tmp_path / "realpkg").mkdir()
    (tmp_path / "realpkg" / "__init__.py").write_text("REAL = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    undo = install(["realpkg.driver"])
    try:
        import realpkg.driver as drv
        import realpkg
        assert realpkg.REAL and isinstance(drv.cuInit, Stub) and not drv.cuDeviceGetCount()
    finally:
        undo()
        for k in ("realpkg", "realpkg.driver"):
            sys.modules.pop(k, None)


# ---------------------------------------------------------------- kernels traced as written


@needs_dsl
def test_ampere_kernel_proved_without_a_wrapper(capsys):
    """TensorOpGemm.__call__ traced on fake 4096^3 f16 tensors: the objects of its host code and of its
    kernel body (ldmatrix copies, autovec epilogue), named by its own variables, proved; coalescing holds
    only under ldX % 16 == 0 and says so instead of failing (exit 0)."""
    rc, out, err = run(capsys, "dsl", AMPERE, *AMPERE_ARGS, "--json")
    assert rc == 0, out + err
    doc = json.loads(out)
    assert len(doc["configs"]) == 1
    c = doc["configs"][0]
    assert c["ok"] and doc["summary"]["refuted"] == 0
    assert sorted(c["dsl"]["depends_on_assumption"]) == [
        "coalescing[g2s.A]: ldA % 16 == 0 (--assume ldA%16==0)", "coalescing[g2s.B]: ldB % 16 == 0 (--assume ldB%16==0)",
        "coalescing[s2g.C]: ldC % 16 == 0 (--assume ldC%16==0)"]
    coal = [r for r in c["results"] if r["property"] == "coalescing" and r["operand"] == "g2s.A"][0]
    assert "refuted" in coal["detail"] and "ldA = 40" in coal["detail"]
    assert c["dsl"]["stated_by_kernel"] == []     # the fakes' own 16-byte strides are no statement of the kernel
    assert "torch is not installed: the kernel's 'import torch' got a stub module" in err or "torch" in sys.modules


@needs_dsl
def test_ampere_kernel_names_and_tables(capsys):
    rc, out, _ = run(capsys, "dsl", AMPERE, *AMPERE_ARGS, "--toml")
    assert rc == 0
    (d,) = toml_docs(out)
    assert d["mma"] == {"atom": "SM80_16x8x16_F32F16F16F32_TN", "layout": "(2,2,1):(1,2,0)",
                        "permutation": ["32", "32", "16"]}
    assert d["copy"]["A"]["atom"] == "SM75_U32x4_LDSM_N" and d["copy"]["C"]["atom"] == "AutoVectorizingCopy"
    assert d["g2s"]["A"]["thr"] == "(32,4):(4,1)" and d["s2g"]["C"]["atom"] == "UniversalCopy<uint128_t>"
    assert d["stages"] == {"count": 3}
    for name in ("tiled_copy_s2r_A", "sA_layout", "tiled_copy_A", "tiled_copy_C", "tiled_mma"):
        assert name in out


@needs_dsl
def test_stated_assumption_is_not_reported_as_depending(capsys):
    rc, out, _ = run(capsys, "dsl", AMPERE, *AMPERE_ARGS, "--assume", "ldA%16==0", "-q")
    assert rc == 0
    assert "coalescing[g2s.A]" not in out and "DEPENDS" in out and "coalescing[g2s.B]" in out


@needs_dsl
def test_alignment_the_kernel_states_replaces_the_default(capsys):
    """The kernel states its leading dimensions multiples of 16 elements (``--init ld_divby=16``: every
    dynamic stride rebuilt with ``cute.assume(stride, divby=16)``): the DEPENDS results become proved under
    the kernel's own word, each naming the line that states it; the kernel that states nothing (the test
    above) still depends on the assumption."""
    rc, out, err = run(capsys, "dsl", AMPERE, *AMPERE_ARGS, "--init", "ld_divby=16", "--json")
    assert rc == 0, out + err
    (c,) = json.loads(out)["configs"]
    assert c["ok"] and c["dsl"]["depends_on_assumption"] == []
    line = [i for i, ln in enumerate(AMPERE.read_text().splitlines(), 1) if "cute.assume(s, divby=" in ln][0]
    assert sorted(c["dsl"]["stated_by_kernel"]) == [
        f"ld{x} % 16 == 0: stated by the kernel for tiled_copy_{x} (cute.assume(..., divby=16) at "
        f"ampere_tensorop_gemm.py:{line})" for x in "ABC"]
    coal = [r for r in c["results"] if r["property"] == "coalescing" and r["operand"] == "g2s.A"][0]
    assert coal["status"] == "proved" and "depends" not in (coal.get("detail") or "")
    rc, out, _ = run(capsys, "dsl", AMPERE, *AMPERE_ARGS, "--init", "ld_divby=16", "-q")
    assert rc == 0 and "DEPENDS" not in out and "STATED   " in out and "ldA % 16 == 0: stated by the kernel" in out


@needs_dsl
def test_alignment_stated_only_as_the_default_changes_nothing(capsys):
    """``cute.assume(stride, divby=8)`` (16 bytes of f16, what the front end assumes anyway): named, and
    coalescing still depends on ldX % 16 == 0."""
    rc, out, _ = run(capsys, "dsl", AMPERE, *AMPERE_ARGS, "--init", "ld_divby=8", "-q")
    assert rc == 0 and "DEPENDS" in out and "ldA % 16 == 0 (--assume ldA%16==0)" in out
    assert "ldA % 8 == 0: stated by the kernel for tiled_copy_A" in out and "what the front end assumes" in out


@needs_dsl
def test_alignment_is_not_read_from_a_body_that_did_not_trace_to_its_end(capsys):
    """The statement is per TiledCopy (the least over the gmem tensors it partitions): a body that fails
    before its end may hide a partition that states less, so nothing is read and the DEPENDS lines stay."""
    rc, out, _ = run(capsys, "dsl", AMPERE, *AMPERE_ARGS, "--init", "ld_divby=16,body_error=True", "--json")
    (c,) = json.loads(out)["configs"]
    assert rc == 0 and c["dsl"]["stated_by_kernel"] == [] and len(c["dsl"]["depends_on_assumption"]) == 3


def test_the_second_trace_only_where_the_kernels_code_says_divby(tmp_path):
    import types
    quiet, says = tmp_path / "quiet_kernel.py", tmp_path / "says_kernel.py"
    quiet.write_text("x = 1\n")
    says.write_text("y = cute.assume(s, divby=16)\n")
    assert not dsl_entry._may_state_alignment(types.SimpleNamespace(__name__="quiet_kernel", __file__=str(quiet)))
    assert dsl_entry._may_state_alignment(types.SimpleNamespace(__name__="says_kernel", __file__=str(says)))


def test_stride_divisibility_of_printed_layouts():
    assert stride_divisibility("((128,32),4):((?{i64 div=16},1),32)") == 16
    assert stride_divisibility("(128,32):(?{i32 div=8},?{i64 div=32})") == 8
    assert stride_divisibility("(128,32):(?,1)") == 1
    assert stride_divisibility("(128,32):(4096,1)") is None


@needs_dsl
def test_a_real_refutation_still_fails(capsys):
    """Without the smem swizzle (--init swizzle=False) ldmatrix conflicts: exit 1, named by the kernel's
    own variables; no assumption hides it."""
    rc, out, _ = run(capsys, "dsl", AMPERE, *AMPERE_ARGS, "--init", "swizzle=False", "-q")
    assert rc == 1
    assert "tiled_copy_s2r_A = LdMatrix8x8x16bOp(transpose=False, num_matrices=4) on sA" in out
    assert "bank_conflicts[A]" in out


@needs_dsl
def test_hopper_kernel_writes_smem_tma_stages_and_proves(capsys):
    rc, out, _ = run(capsys, "dsl", HOPPER, *HOPPER_ARGS, "--toml")
    assert rc == 0
    (d,) = toml_docs(out)
    assert d["mma"]["atom"] == "SM90_64x128x16_F32F16F16_SS<GMMA::Major::K,GMMA::Major::K>"
    assert d["smem"]["A"]["layout"] == \
        "Sw<3,4,3> o smem_ptr[16b](unset) o ((8,16),(64,1),(1,4)):((64,512),(1,0),(0,8192))"
    assert d["tma"]["B"] == {"atom": "SM90_TMA_LOAD", "gmem": "(4096,4096):(4096,1)", "box": "(128,64)"}
    assert d["stages"] == {"count": 4}
    rc, out, _ = run(capsys, "dsl", HOPPER, *HOPPER_ARGS, "--json")
    doc = json.loads(out)
    assert rc == 0 and doc["summary"]["refuted"] == 0
    props = {(r["property"], r["operand"]) for r in doc["configs"][0]["results"]}
    assert {("descriptor", "A"), ("tma", "A"), ("slot_agreement", "B")} <= props
    # what the kernel does that no table states is listed, not dropped: the epilogue's TMA store, pipelines
    left = doc["configs"][0]["dsl"]["not_proved_here"]
    assert any(x.startswith("tma_atom_c = make_tiled_tma_atom(CopyBulkTensorTileS2GOp)") for x in left)
    assert any("pipelines" in x for x in left) and any("tail predication" in x for x in left)


@needs_dsl
def test_hopper_mn_major_b(capsys):
    rc, out, _ = run(capsys, "dsl", HOPPER, *HOPPER_ARGS, "--major", "B=N", "--toml")
    assert rc == 0
    (d,) = toml_docs(out)
    assert d["mma"]["atom"].endswith("<GMMA::Major::K,GMMA::Major::MN>")
    assert d["tma"]["B"]["gmem"] == "(4096,4096):(1,4096)"


@needs_dsl
def test_tcgen05_mma_tiled_by_an_atom_layout_is_not_supported_one_line(capsys, tmp_path):
    k = tmp_path / "bw.py"
    k.write_text(HOPPER.read_text().replace(
        "        tiled_mma = sm90_utils.make_trivial_tiled_mma(",
        "        from cutlass.cute.nvgpu import tcgen05\n"
        "        tiled_mma = cute.make_tiled_mma(tcgen05.MmaF16BF16Op(self.a_dtype, self.acc_dtype, (128, 128, 16),"
        " tcgen05.CtaGroup.ONE, tcgen05.OperandSource.SMEM, tcgen05.OperandMajorMode.K, tcgen05.OperandMajorMode.K),"
        " (2, 1, 1))\n"
        "        _unused = (lambda *a, **k: None)(", 1))
    rc, _, err = run(capsys, "dsl", k, *HOPPER_ARGS, "--arch", "sm_100a")
    assert rc == 2
    assert err.count("\n") <= 2 and "not supported: tiled_mma = a TiledMma of (1,2,1,1)" in err
    assert "tcgen05.MmaF16BF16Op" in err and "Traceback" not in err
    assert "bw.py:36" in err   # the line that built it


BLACKWELL = KERNELS / "blackwell_dense_gemm.py"
BLACKWELL_ARGS = ["--entry", "BlackwellGemm.__call__", "--shape", "M=4096,N=4096,K=4096", "--dtype", "f16"]


@needs_dsl
def test_blackwell_kernel_writes_umma_tma_tmem_tables_and_proves(capsys):
    rc, out, _ = run(capsys, "dsl", BLACKWELL, *BLACKWELL_ARGS, "--toml")
    assert rc == 0
    (d,) = toml_docs(out)
    assert d["mma"] == {"atom": "SM100_MMA_F16BF16_SS<half_t,half_t,float,128,256,UMMA::Major::K,UMMA::Major::K>",
                        "cluster": "(2,1,1)"}
    assert d["smem"]["B"]["layout"] == \
        "Sw<3,4,3> o smem_ptr[16b](unset) o ((256,16),1,4,4):((64,1),0,16,16384)"
    # A is multicast over the cluster's N mode (1 CTA), B over its M mode (2 CTAs)
    assert d["tma"]["A"] == {"atom": "SM90_TMA_LOAD", "gmem": "(4096,4096):(4096,1)", "box": "(128,64)"}
    assert d["tma"]["B"] == {"atom": "SM90_TMA_LOAD_MULTICAST", "multicast": 2, "gmem": "(4096,4096):(4096,1)",
                             "box": "(256,64)"}
    assert d["tmem"] == {"columns": 512, "accumulator_stages": 2}
    assert d["tmem_copy"]["C"]["warps"] == [4, 5, 6, 7] and d["tmem_copy"]["C"]["tile"] == "(128,32)"
    assert d["tmem_copy"]["C"]["atom"].startswith("SM100_TMEM_LOAD_32dp32b")
    rc, out, _ = run(capsys, "dsl", BLACKWELL, *BLACKWELL_ARGS, "--json")
    doc = json.loads(out)
    assert rc == 0 and doc["summary"]["refuted"] == 0
    props = {(r["property"], r["operand"]) for r in doc["configs"][0]["results"]}
    assert {("descriptor", "A"), ("tma", "B"), ("tmem_alloc", "tmem"), ("tmem_access", "tmem_copy.C")} <= props


@needs_dsl
def test_blackwell_cta_pair(capsys):
    rc, out, _ = run(capsys, "dsl", BLACKWELL, *BLACKWELL_ARGS, "--init", "pair=True,mma_tiler_mn=(256,128),"
                     "cluster_shape_mn=(2,2)", "--toml")
    assert rc == 0
    (d,) = toml_docs(out)
    assert d["mma"]["atom"].startswith("SM100_MMA_F16BF16_2x1SM_SS<half_t,half_t,float,256,128,")
    assert d["mma"]["cluster"] == "(2,2,1)"
    assert d["tma"]["A"]["atom"] == "SM100_TMA_2SM_LOAD_MULTICAST" and d["tma"]["A"]["multicast"] == 2
    assert d["tma"]["B"]["atom"] == "SM100_TMA_2SM_LOAD" and "multicast" not in d["tma"]["B"]
    rc, out, _ = run(capsys, "dsl", BLACKWELL, *BLACKWELL_ARGS, "--init", "pair=True,mma_tiler_mn=(256,128),"
                     "cluster_shape_mn=(2,2)", "-q")
    assert rc == 0 and " 0 refuted," in out


@needs_dsl
def test_blackwell_smem_layout_of_each_tma_atom(capsys):
    """A and B of a 128x128 tile have the same one-stage layout; B's staged layout (3 stages) is the one
    named after B's TMA atom (tma_atom_b -> b_smem_layout_staged), not the first that matches."""
    rc, out, _ = run(capsys, "dsl", BLACKWELL, *BLACKWELL_ARGS, "--init", "mma_tiler_mn=(128,128),b_stages=3",
                     "--toml")
    assert rc == 0
    (d,) = toml_docs(out)
    assert d["smem"]["A"]["layout"].endswith("o ((128,16),1,4,4):((64,1),0,16,8192)")
    assert d["smem"]["B"]["layout"].endswith("o ((128,16),1,4,3):((64,1),0,16,8192)")


@needs_dsl
@pytest.mark.parametrize("kernel,args,calls", [
    (HOPPER, HOPPER_ARGS, {"a, a_smem_layout,\n": "gmem_tensor=a, smem_layout_=a_smem_layout,\n",
                           "(bM, bK))": "cta_tiler=(bM, bK), num_multicast=1)"}),
    (BLACKWELL, BLACKWELL_ARGS, {"mma_tiler, tiled_mma, cluster_layout_vmnk.shape)":
                                 "mma_tiler_mnk=mma_tiler, tiled_mma=tiled_mma, "
                                 "cluster_shape_vmnk=cluster_layout_vmnk.shape)"})])
def test_tma_atoms_called_with_the_dsls_keywords(capsys, tmp_path, kernel, args, calls):
    """A TMA atom built with the DSL's own keyword names (``smem_layout_``, ``mma_tiler_mnk``,
    ``cluster_shape_vmnk``) is traced as the positional call is (the trace used to fail on them)."""
    text = kernel.read_text()
    for old, new in calls.items():
        assert old in text
        text = text.replace(old, new)
    k = tmp_path / kernel.name
    k.write_text(text)
    rc, out, err = run(capsys, "dsl", k, *args, "--toml")
    assert rc == 0, err
    rc, want, _ = run(capsys, "dsl", kernel, *args, "--toml")
    assert rc == 0 and toml_docs(out) == toml_docs(want)


@needs_dsl
def test_blackwell_epilogue_warps_are_the_kernels(capsys, tmp_path):
    """The warps of [tmem_copy.C] are the kernel's epilogue_warp_id: warps 5-8 reach the TMEM lanes in the
    wrong order (warp w reaches lanes 32*(w%4)..), which the proof refutes."""
    k = tmp_path / "bw.py"
    k.write_text(BLACKWELL.read_text().replace("self.epilogue_warp_id = (4, 5, 6, 7)",
                                               "self.epilogue_warp_id = (5, 6, 7, 8)"))
    rc, out, _ = run(capsys, "dsl", k, *BLACKWELL_ARGS, "-q")
    assert rc == 1
    assert "REFUTED  tmem_access[tmem_copy.C]" in out


@needs_dsl
@pytest.mark.parametrize("argv,words", [
    (["--entry", "Nope.__call__", "--shape", "M=64,N=64,K=64"], "no Nope"),
    (["--entry", "TensorOpGemm.__call__", "--shape", "M=64,N=64"], "no K"),
    (["--entry", "TensorOpGemm.__call__", "--shape", "M=64,N=x,K=64"], "positive integer"),
    (["--entry", "TensorOpGemm.__call__", "--shape", "M=64,N=64,K=64", "--init", "bogus=1"], "--init"),
    (["--entry", "TensorOpGemm.__call__", "--shape", "M=64,N=64,K=64", "--assume", "ldA>3"], "NAME%N==0"),
])
def test_entry_errors_are_one_line(capsys, argv, words):
    rc, _, err = run(capsys, "dsl", AMPERE, *argv)
    assert rc == 2 and words in err and "Traceback" not in err
    assert len([x for x in err.splitlines() if x.startswith("symlayout")]) >= 1


@needs_dsl
def test_wrapper_path_keeps_working(capsys):
    example = Path(__file__).resolve().parents[2] / "examples" / "dsl" / "ampere_gemm.py"
    rc, out, _ = run(capsys, "dsl", example, "-q")
    assert rc == 0 and "DEPENDS" not in out


@needs_dsl
def test_output_writes_files_prove_reads(capsys, tmp_path):
    """-o writes one file per configuration (a --toml stream is several documents); prove reads them."""
    example = Path(__file__).resolve().parents[2] / "examples" / "dsl" / "ampere_gemm.py"
    rc, out, _ = run(capsys, "dsl", example, "-o", tmp_path / "gemm.toml")
    assert rc == 0 and out.split() == [str(tmp_path / "gemm_k_major.toml"), str(tmp_path / "gemm_mn_major.toml")]
    rc, out, _ = run(capsys, "prove", tmp_path / "gemm_mn_major.toml", "-q")
    assert rc == 0
    rc, out, _ = run(capsys, "dsl", HOPPER, *HOPPER_ARGS, "-o", tmp_path)
    assert rc == 0 and out.split() == [str(tmp_path / "hopper_dense_gemm.toml")]
    rc, _, _ = run(capsys, "prove", tmp_path / "hopper_dense_gemm.toml", "-q")
    assert rc == 0


@needs_dsl
def test_function_entry_with_an_argument(capsys):
    """--entry FN: a host function; --arg sets its Constexpr parameter; no torch note (it imports none)."""
    rc, out, err = run(capsys, "dsl", KERNELS / "function_entry.py", "--entry", "run_mma",
                       "--shape", "M=256,N=256,K=64", "--arg", "warps_m=4", "--toml")
    assert rc == 0 and "torch" not in err
    (d,) = toml_docs(out)
    assert d["mma"]["layout"] == "(4,2,1):(1,4,0)" and d["copy"]["A"]["atom"] == "SM75_U32x4_LDSM_N"
    assert "tiled_copy_s2r_A" in out and "sA_layout" in out


FA2 = KERNELS / "flash_attention_v2.py"
FA2_ARGS = ["--entry", "FlashAttentionForward.__call__", "--shape", "B=1,S=4096,H=16,D=128", "--dtype", "f16",
            *[a for t in "QKVO" for a in ("--tensor", f"m{t}=B,S,H,D")]]


@needs_dsl
def test_flash_attention_two_gemms_from_one_tiled_mma(capsys):
    """One TiledMma, two GEMMs: S = Q K^T (A = sQ, B = sK) and O = P V (B = V^T through composition(sV, ...),
    filled by the same cp.async copy as sV; C = sO stored by gmem_tiled_copy_O); leading dimensions named
    after the kernel's tensors; P from registers listed as not checked."""
    rc, out, _ = run(capsys, "dsl", FA2, *FA2_ARGS, "--toml")
    assert rc == 0
    qk, pv = toml_docs(out)
    assert set(qk["copy"]) == {"A", "B"} and set(pv["copy"]) == {"B", "C"}
    assert pv["copy"]["B"]["atom"] == "SM75_U16x8_LDSM_T" and pv["copy"]["C"]["convert"] is True
    assert qk["g2s"]["A"]["gmem"] == "(128,128):(ldQ,1)" and pv["g2s"]["B"]["gmem"] == "(128,64):(1,ldV)"
    assert pv["s2g"]["C"]["gmem"] == "(128,128):(ldO,1)"
    assert "smem_tiled_copy_V" in out and "sVt" in out and "gmem_tiled_copy_QKV" in out
    rc, out, _ = run(capsys, "dsl", FA2, *FA2_ARGS, "--json")
    doc = json.loads(out)
    assert rc == 0 and doc["summary"]["refuted"] == 0 and len(doc["configs"]) == 2
    assert any("P" in x and "registers" in x for x in doc["configs"][1]["dsl"]["not_proved_here"])
    assert any(r["operand"] == "g2s.B" and r["property"] == "slot_agreement" and r["status"] == "proved"
               for r in doc["configs"][1]["results"])


@needs_dsl
def test_constructor_element_types_follow_dtype(capsys, tmp_path):
    """A kernel class that takes its element types in its constructor (ab_dtype, c_dtype, acc_dtype without
    defaults, as CUTLASS's examples do) is built from --dtype; the rest still needs --init (one line)."""
    k = tmp_path / "gemm.py"
    k.write_text(AMPERE.read_text().replace(
        "def __init__(self, ab_dtype=cutlass.Float16, c_dtype=cutlass.Float16, acc_dtype=cutlass.Float32,\n"
        "                 atom_layout_mnk=(2, 2, 1), swizzle=True, ld_divby=None, body_error=False):",
        "def __init__(self, ab_dtype, c_dtype, acc_dtype, atom_layout_mnk, swizzle=True, ld_divby=None, "
        "body_error=False):"))
    assert "def __init__(self, ab_dtype, c_dtype" in k.read_text()
    rc, _, err = run(capsys, "dsl", k, *AMPERE_ARGS[:-2], "--dtype", "bf16")
    assert rc == 2 and "atom_layout_mnk" in err and "--init" in err
    rc, out, _ = run(capsys, "dsl", k, *AMPERE_ARGS[:-2], "--dtype", "bf16", "--init", "atom_layout_mnk=(2,2,1)",
                     "--toml")
    assert rc == 0
    (d,) = toml_docs(out)
    assert d["mma"]["atom"] == "SM80_16x8x16_F32BF16BF16F32_TN" and d["copy"]["A"]["type"] == "bfloat16_t"


@needs_dsl
def test_wrong_arch_is_one_line_naming_the_option(capsys):
    rc, _, err = run(capsys, "dsl", HOPPER, *HOPPER_ARGS, "--arch", "sm_80")
    assert rc == 2 and "Traceback" not in err and "-->" not in err
    (line,) = [x for x in err.splitlines() if x.startswith("symlayout: error")]
    assert "hopper_dense_gemm.py:" in line and "expects arch to be sm_90a" in line and "--arch" in line


@needs_dsl
def test_hopper_fp8(capsys):
    rc, out, _ = run(capsys, "dsl", HOPPER, *HOPPER_ARGS[:-2], "--dtype", "A=e4m3,B=e4m3,C=f16", "--json")
    doc = json.loads(out)
    assert rc == 0 and doc["summary"]["refuted"] == 0
    rc, out, _ = run(capsys, "dsl", HOPPER, *HOPPER_ARGS[:-2], "--dtype", "A=e4m3,B=e4m3,C=f16", "--toml")
    (d,) = toml_docs(out)
    assert d["mma"]["atom"] == "SM90_64x128x32_F32E4M3E4M3_SS_TN" and d["smem"]["B"]["type"] == "float_e4m3_t"
    assert d["smem"]["A"]["layout"].startswith("Sw<2,4,3> o smem_ptr[8b](unset) o ")   # 64-byte rows: SW64


COPY_ONLY = KERNELS / "copy_only.py"
COPY_ARGS = ["--entry", "scale_rows", "--shape", "M=1024,N=1024", "--tensor", "mX=M,N", "--tensor", "mY=M,N",
             "--dtype", "f16"]


@needs_dsl
def test_copy_only_kernel_writes_g2r_r2g_and_proves(capsys):
    rc, out, _ = run(capsys, "dsl", COPY_ONLY, *COPY_ARGS, "--toml")
    assert rc == 0
    (d,) = toml_docs(out)
    assert "mma" not in d
    assert d["g2r"]["tile_x"] == {"atom": "UniversalCopy<uint128_t>", "type": "half_t", "thr": "(8,32):(32,1)",
                                  "val": "(1,8)", "gmem": "(8,256):(1024,1)", "gmem_align": 16}
    # a CopyUniversalOp atom without num_bits_per_copy vectorises as the layouts allow: CuTe's AutoVectorizingCopy
    assert d["r2g"]["tile_y"]["atom"] == "AutoVectorizingCopy"
    rc, out, _ = run(capsys, "dsl", COPY_ONLY, *COPY_ARGS, "--json")
    doc = json.loads(out)
    assert rc == 0 and doc["summary"]["refuted"] == 0
    props = {(r["property"], r["operand"]) for r in doc["configs"][0]["results"]}
    assert {("coverage", "g2r.tile_x"), ("coalescing", "g2r.tile_x"), ("alignment", "r2g.tile_y")} <= props


@needs_dsl
def test_copy_only_threads_down_columns_refuted(capsys):
    rc, out, _ = run(capsys, "dsl", COPY_ONLY, *COPY_ARGS, "--arg", "threads_down_columns=True", "-q")
    assert rc == 1
    assert "REFUTED  coalescing[g2r.tile_x]" in out and "32 32-byte sectors" in out


@needs_dsl
def test_copy_only_base_alignment_the_kernel_states_is_used(capsys):
    """X's pointer rebuilt by the kernel with ``cute.make_ptr(..., assumed_align=B)``: ``[g2r.tile_x]
    gmem_align`` is B, a comment says the kernel states it; Y keeps the fake tensors' 16.  Stating 4 bytes
    under 16-byte loads is refuted (the kernel's own word does not cover its vectors)."""
    rc, out, _ = run(capsys, "dsl", COPY_ONLY, *COPY_ARGS, "--arg", "base_align=32", "--toml")
    assert rc == 0
    (d,) = toml_docs(out)
    assert d["g2r"]["tile_x"]["gmem_align"] == 32 and d["r2g"]["tile_y"]["gmem_align"] == 16
    assert "gmem_align 32 B: stated by the kernel: the tile's pointer is ptr<f16, gmem, align<32>>" in out
    rc, out, _ = run(capsys, "dsl", COPY_ONLY, *COPY_ARGS, "--arg", "base_align=4", "-q")
    assert rc == 1 and "REFUTED  alignment[g2r.tile_x]" in out


@needs_dsl
def test_copy_only_autovec_copy_of_partition_slices_is_read(capsys):
    """A 1-D TiledCopy over one row, copied slice by slice (``cute.autovec_copy(tXgX[None, i], tXrX[None, i])``,
    CUTLASS's cta_norm): ``[g2r.gX]`` / ``[r2g.gY]`` of the whole partition with CuTe's AutoVectorizingCopy,
    the row written as the (1, N) tile of the contract."""
    rc, out, err = run(capsys, "dsl", COPY_ONLY, "--entry", "copy_row_slices", "--shape", "M=1024,N=4096",
                       "--tensor", "mX=M,N", "--tensor", "mY=M,N", "--dtype", "f16", "--toml")
    assert rc == 0, err
    (d,) = toml_docs(out)
    assert d["g2r"]["gX"] == {"atom": "AutoVectorizingCopy", "type": "half_t", "thr": "(1,128):(0,1)",
                              "val": "(1,8)", "gmem": "(1,4096):(4096,1)", "gmem_align": 16}
    assert d["r2g"]["gY"]["gmem"] == "(1,4096):(4096,1)" and "cute.autovec_copy at line" in out
    rc, out, _ = run(capsys, "dsl", COPY_ONLY, "--entry", "copy_row_slices", "--shape", "M=1024,N=4096",
                     "--tensor", "mX=M,N", "--tensor", "mY=M,N", "--dtype", "f16", "-q")
    assert rc == 0 and "10 proved, 0 refuted" in out


@needs_dsl
def test_copy_only_cp_async_staging_into_smem_is_read(capsys):
    """``cute.copy(cp.async atom, thr.partition_S(gmem tile), thr.partition_D(sX))`` without a TiledMma (QuACK's
    norms and softmax stage X so): ``[g2s.X]`` named for the tensor, with the atom cute.copy was given, the smem
    tensor's layout and the pointers' alignment; rows padded to 260 halves break the 16-byte vectors."""
    args = ["--entry", "stage_rows", "--shape", "M=1024,N=1024", "--tensor", "mX=M,N", "--dtype", "f16"]
    rc, out, err = run(capsys, "dsl", COPY_ONLY, *args, "--toml")
    assert rc == 0, err
    (d,) = toml_docs(out)
    assert d["g2s"]["tXgX"] == {"atom": "SM80_CP_ASYNC_CACHEALWAYS<uint128_t>", "type": "half_t",
                                "smem": "(8,256):(256,1)", "align": 16, "thr": "(8,32):(32,1)", "val": "(1,8)",
                                "gmem": "(8,256):(1024,1)", "gmem_align": 16}
    rc, out, _ = run(capsys, "dsl", COPY_ONLY, *args, "-q")
    assert rc == 0 and "7 proved, 0 refuted" in out
    rc, out, _ = run(capsys, "dsl", COPY_ONLY, *args, "--arg", "smem_pitch=260", "-q")
    assert rc == 1 and "REFUTED  alignment[g2s.tXgX]" in out


@needs_dsl
def test_copy_only_broadcast_tile_is_listed_not_refuted(capsys):
    """W (N,) added to every row is read by every row's threads on purpose: no [g2r] table (its exactly_once
    would be refuted), a line under "not proved here"."""
    rc, out, _ = run(capsys, "dsl", COPY_ONLY, "--entry", "add_row", "--shape", "M=1024,N=1024", "--tensor",
                     "mX=M,N", "--tensor", "mW=N", "--tensor", "mY=M,N", "--dtype", "f16", "--json")
    doc = json.loads(out)
    assert rc == 0 and doc["summary"]["refuted"] == 0
    operands = {r["operand"] for r in doc["configs"][0]["results"]}
    assert {"g2r.tile_x", "r2g.tile_y"} <= operands and "g2r.tile_w" not in operands
    left = doc["configs"][0]["dsl"]["not_proved_here"]
    assert any("tile_w (8,256):(0,1) is broadcast" in x for x in left)


def test_layouts_named_after_the_operands_tensor_first():
    q, k, kk = object(), object(), object()
    names = {id(q): "sQ_layout", id(k): "sK_layout", id(kk): "k_smem_layout_staged"}
    assert dsl_entry._prefer_stem([q, k], names, "K") == [k, q]
    assert dsl_entry._prefer_stem([q, kk], names, "k") == [kk, q]
    assert dsl_entry._prefer_stem([q, k], names, None) == [q, k]
