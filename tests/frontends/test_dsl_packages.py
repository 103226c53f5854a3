"""``symlayout dsl --entry`` on kernels that live in a package (flash-attention 4's ``flash_attn.cute``,
QuACK): the package root found from the kernel's own imports, ``--path``, ``--stub-missing``, stubs that
survive what such packages do with torch at import time, optional and scalar entry parameters, and
``--tensor NAME=DIMS:TYPE``.  A small package is written for each test (in the style of those kernels)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from symlayout.cli import main
from symlayout.frontends.dsl_entry import _memspace, _scalar, package_roots
from symlayout.frontends.stubs import Decorated, Stub, install, install_missing, uninstall_missing

FUNCTION_ENTRY = Path(__file__).resolve().parents[1] / "data" / "dsl_kernels" / "function_entry.py"
needs_dsl = pytest.mark.usefixtures("cute")


def run(capsys, *argv):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_package_root_from_the_kernels_own_imports(tmp_path):
    fa, quack, script = tmp_path / "fa/flash_attn_t/cute", tmp_path / "quack_t/quack_t", tmp_path / "cutlass/examples"
    for d in (fa, quack, script):
        d.mkdir(parents=True)
    (fa / "__init__.py").write_text("")
    (quack / "__init__.py").write_text("")
    assert package_roots(fa / "k.py", "from flash_attn_t.cute import utils\nimport os\n") == [str(tmp_path / "fa")]
    assert package_roots(quack / "g.py", "import quack_t.copy_utils as cu\nfrom quack_t.x import y\n") == \
        [str(tmp_path / "quack_t")]
    assert package_roots(script / "k.py", "import cutlass\nfrom helpers import h\n") == []   # not a package


def test_stubs_survive_import_time_torch_use(tmp_path, monkeypatch):
    """custom_op(...).register_fake, autograd.Function subclasses' .apply, version comparisons and
    isinstance against a stub class (flash-attention 4 and QuACK do each at import time)."""
    (tmp_path / "uses_torch2.py").write_text(
        "import torch\n"
        "@torch.library.custom_op('x::y', mutates_args=())\ndef op(x):\n    return x + 1\n"
        "@op.register_fake\ndef _fake(x):\n    return x\n"
        "class F(torch.autograd.Function):\n    pass\n"
        "apply = F.apply\n"
        "LIMIT = max(torch._dynamo.config.limit, 64)\n"
        "IS_T = isinstance(3, torch.Tensor)\n"
        "class K:\n    @torch.compile\n    def m(self, x):\n        return x * 2\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    undo = install(["torch"])
    try:
        import uses_torch2 as m
        assert m.op(1) == 2 and isinstance(m.op, Decorated) and m._fake(5) == 5
        assert isinstance(m.apply, Stub) and m.IS_T is False and m.K().m(4) == 8
    finally:
        undo()
        sys.modules.pop("uses_torch2", None)


def test_stub_missing_answers_only_modules_that_are_not_installed(tmp_path, monkeypatch):
    (tmp_path / "uses_missing.py").write_text("import einops_not_here\nfrom einops_not_here.sub import rearrange\n"
                                              "import json\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    finder = install_missing()
    try:
        import uses_missing as m
        assert isinstance(m.rearrange, Stub) and finder.stubbed == ["einops_not_here"]
        assert not getattr(m.json, "__symlayout_stub__", False)
    finally:
        uninstall_missing(finder)
        sys.modules.pop("uses_missing", None)
    assert "einops_not_here" not in sys.modules
    with pytest.raises(ImportError):
        import einops_not_here  # noqa: F401


def test_scalar_parameters():
    assert (_scalar("<class 'cutlass.base_dsl.typing.Float32'>"), _scalar("Int32"), _scalar("cute.Tensor")) == \
        (1.0, 1, None)


def _package(tmp_path: Path, extra: str = "") -> Path:
    """``root/mykern/kernels/gemm.py`` importing its sibling ``mykern.setup`` (absolute, as flash_attn.cute does)
    and ``otherpkg`` from a second checkout (as flash-attention 4 imports quack)."""
    pkg = tmp_path / "root" / "mykern"
    (pkg / "kernels").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "kernels" / "__init__.py").write_text("")
    (pkg / "setup.py").write_text(FUNCTION_ENTRY.read_text())
    other = tmp_path / "other" / "otherpkg"
    other.mkdir(parents=True)
    (other / "__init__.py").write_text("WARPS = 2\n")
    k = pkg / "kernels" / "gemm.py"
    k.write_text(
        "from typing import Optional\nimport cutlass\nimport cutlass.cute as cute\n"
        "from mykern.setup import mma_kernel\nfrom otherpkg import WARPS\n" + extra +
        "from cutlass.cute.nvgpu import warp\n\n"
        "@cute.jit\n"
        "def run(mA: cute.Tensor, mLSE: Optional[cute.Tensor], scale: cutlass.Float32, mB: cute.Tensor,\n"
        "        mSeq: Optional[cute.Tensor] = None):\n"
        "    tiled_mma = cute.make_tiled_mma(warp.MmaF16BF16Op(mA.element_type, cutlass.Float32, (16, 8, 16)),\n"
        "                                    cute.make_layout((WARPS, 2, 1)), permutation_mnk=(WARPS * 16, 32, 16))\n"
        "    sA_layout = cute.tile_to_shape(cute.make_composed_layout(cute.make_swizzle(2, 3, 3), 0,\n"
        "        cute.make_layout((8, 32), stride=(32, 1))), (WARPS * 16, 32), (0, 1))\n"
        "    mma_kernel(mA, sA_layout, tiled_mma).launch(grid=[1, 1, 1], block=[WARPS * 64, 1, 1])\n")
    return k


@needs_dsl
def test_a_kernel_in_a_package_with_path_and_stubs(capsys, tmp_path):
    """The package root comes from the kernel's imports, a second checkout from --path; a missing
    host-side dependency from --stub-missing; optional tensors are None, scalars 1.0."""
    k = _package(tmp_path, extra="import not_installed_dep\n")
    args = ["dsl", k, "--entry", "run", "--shape", "M=256,N=256,K=64", "--toml"]
    rc, _, err = run(capsys, *args)
    assert rc == 2 and "otherpkg" in err and "--path DIR" in err and len(err.strip().splitlines()) == 1
    rc, _, err = run(capsys, *args, "--path", tmp_path / "other")
    assert rc == 2 and "not_installed_dep" in err and "--stub-missing" not in err and "--stub-module" in err
    rc, out, err = run(capsys, *args, "--path", tmp_path / "other", "--stub-missing")
    assert rc == 0, err
    assert "stubbed (--stub-missing): not_installed_dep" in err
    assert 'atom = "SM75_U32x4_LDSM_N"' in out and "(2,2,1)" in out   # WARPS = 2 from otherpkg


@needs_dsl
def test_tensor_with_its_own_type(capsys, tmp_path):
    """--tensor NAME=DIMS:TYPE: mLSE f32 while --dtype is f16."""
    k = _package(tmp_path)
    rc, out, err = run(capsys, "dsl", k, "--entry", "run", "--shape", "M=256,N=256,K=64,S=128", "--path",
                       tmp_path / "other", "--tensor", "mLSE=S:f32", "--toml")
    assert rc == 0, err
    rc, _, err = run(capsys, "dsl", k, "--entry", "run", "--shape", "M=256,N=256,K=64,S=128", "--path",
                     tmp_path / "other", "--tensor", "mLSE=S:nope", "--toml")
    assert rc == 2 and "--dtype nope" in err


@needs_dsl
def test_a_coordinate_tensor_has_no_memspace(cute):
    """partition_S of an identity tensor (flash-attention's predicates) crashed the watch (ValueError)."""
    from symlayout.frontends.cute_dsl import trace
    got = []

    @cute.jit
    def build():
        got.append(_memspace(cute.make_identity_tensor((128, 128))))
    trace(build)
    assert got == [""]


HOPPER = Path(__file__).resolve().parents[1] / "data" / "dsl_kernels" / "hopper_dense_gemm.py"
_BODY = """        tidx, _, _ = cute.arch.thread_idx()
        smem = cutlass.utils.SmemAllocator()
        sQ = smem.allocate_tensor(cutlass.Float16, q_smem_layout_staged.outer, byte_alignment=1024,
                                  swizzle=q_smem_layout_staged.inner)
        sK = smem.allocate_tensor(cutlass.Float16, k_smem_layout_staged.outer, byte_alignment=1024,
                                  swizzle=k_smem_layout_staged.inner)
        thr_mma = tiled_mma.get_slice(tidx)
        tCsQ = thr_mma.partition_A(sQ)
        tCsK = thr_mma.partition_B(sK)
"""


@needs_dsl
def test_warpgroup_smem_from_the_tensors_the_mma_partitions(capsys, tmp_path):
    """Attention kernels name their smem layouts after Q, K, V (no operand letter): [smem.A/B] come from
    the smem tensors the kernel partitions with thr_mma.partition_A/B (was an error: 'needs an [smem.A]')."""
    text = HOPPER.read_text().replace("a_smem_layout", "q_smem_layout").replace("b_smem_layout", "k_smem_layout")
    text = text.replace("        tidx, _, _ = cute.arch.thread_idx()\n", _BODY, 1)
    k = tmp_path / "hopper_qk.py"
    k.write_text(text)
    rc, out, err = run(capsys, "dsl", k, "--entry", "HopperGemm.__call__", "--shape", "M=4096,N=4096,K=4096",
                       "--dtype", "f16", "-q")
    assert rc == 0, out + err
    assert "0 errors" in out and " 0 proved" not in out
    rc, out, err = run(capsys, "dsl", k, "--entry", "HopperGemm.__call__", "--shape", "M=4096,N=4096,K=4096",
                       "--dtype", "f16", "--toml")
    assert "[smem.A]" in out and "[smem.B]" in out and "q_smem_layout_staged" in out


@needs_dsl
def test_universal_fma_is_read(cute):
    """CUTLASS's sgemm example builds MmaUniversalOp(Float32): CuTe's UniversalFMA<float> (was 'not supported')."""
    import cutlass
    from symlayout.frontends.cute_dsl import mma_name, trace
    got = []

    @cute.jit
    def build():
        got.append(mma_name(cute.nvgpu.MmaUniversalOp(cutlass.Float32)))
    trace(build)
    assert got == ["UniversalFMA<float>"]


def test_doctests():
    import doctest
    from symlayout.frontends import assumptions, dsl_entry
    for mod in (dsl_entry, assumptions):
        res = doctest.testmod(mod)
        assert res.attempted > 0 and res.failed == 0


def test_tma_gmem_is_the_tensor_the_kernel_passed():
    """QuACK permutes its (L,M,K) parameter to (M,K,L) before make_tiled_tma_atom: [tma.X] gmem is that
    tensor's first modes (the box covers them), not the fake parameter's (was refuted: 'Majorness of smem
    doesn't match majorness of gmem')."""
    from types import SimpleNamespace
    from symlayout.frontends.dsl_entry import _tma_gmem
    assert _tma_gmem(SimpleNamespace(layout="(4096,4096,1):(4096,1,16777216)"), (128, 64)) == "(4096,4096):(4096,1)"
    assert _tma_gmem(SimpleNamespace(layout="(?,4096,1):(4096,1,?)"), (128, 64)) is None


@needs_dsl
def test_arg_is_an_expression_of_the_kernels_module(cute):
    """--arg scheduler_args=TileSchedulerOptions(132): evaluated in the kernel module's namespace."""
    import cutlass
    from types import SimpleNamespace
    from symlayout.frontends.cute_dsl import DslError
    from symlayout.frontends.dsl_entry import _value
    mod = SimpleNamespace(Options=lambda n: ("opts", n))
    assert _value("Options(132)", mod, cutlass) == ("opts", 132) and _value("f16", mod, cutlass) is cutlass.Float16
    assert _value("json.dumps([1])", mod, cutlass) == "[1]"      # a module by its name, imported
    with pytest.raises(DslError, match="NameError"):
        _value("Nope(1)", mod, cutlass)


def test_a_tma_load_is_matched_to_its_operand_by_name_and_layout():
    """flash-attention 4 names its TMA atoms tma_atom_Q/K/V: a load is [tma.X] when its gmem tensor is named
    as the operand's smem tensor (mK, sK) and it fills that layout; V (same layout as Q) is not Q's."""
    from types import SimpleNamespace
    from symlayout.frontends.dsl_entry import _tma_operand

    class Lay(SimpleNamespace):
        def __str__(self):
            return self.text
    q = Lay(text="Sw<3,4,3> o 0 o (128,128):(128,1)", outer=SimpleNamespace(shape=(128, 128)))
    chosen, stems = {"A": q}, {"A": "Q"}
    assert _tma_operand("Sw<3,4,3> o 0 o (128,128):(128,1)", chosen, "Q", stems) == "A"
    assert _tma_operand("Sw<3,4,3> o 0 o (128,128):(128,1)", chosen, "V", stems) is None
    assert _tma_operand("Sw<3,4,3> o 0 o (64,128):(128,1)", chosen, "Q", stems) is None


@needs_dsl
def test_operands_with_different_stage_counts(capsys, tmp_path):
    """Hopper FMHA stages Q and K differently: no [stages] count, each smem layout its own PIPE mode
    (the contract allows it); was the error 'smem layouts with 4 and 2 stages'."""
    text = HOPPER.read_text()
    old = "self.b_dtype,\n                                                             self.ab_stage)"
    assert old in text
    k = tmp_path / "hopper_stages.py"
    k.write_text(text.replace(old, "self.b_dtype, 2)"))
    args = ["dsl", k, "--entry", "HopperGemm.__call__", "--shape", "M=4096,N=4096,K=4096", "--dtype", "f16"]
    rc, out, err = run(capsys, *args, "--toml")
    assert rc == 0, err
    assert "\n[stages]" not in out and "have 4 and 2 stages, each its own PIPE mode" in out
    rc, out, err = run(capsys, *args, "-q")
    assert rc == 0 and "0 errors" in out and " 0 proved" not in out, out + err
