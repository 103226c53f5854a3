"""``symlayout dsl --entry`` on real kernels, read (never copied) from where they are published.

* flash-attention 4 (``flash-attn-4``) and QuACK (``quack-kernels``): the distributions of the pinned
  versions below (whose kernel files are those of the commits the verdicts were first taken at,
  flash-attention 0251105a but one line of ``mask.py``, quack c8ec317 but ``__version__``), through ``symlayout dsl --package``: installed, else their
  wheels downloaded with pip into ``~/.cache/symlayout`` (``$SYMLAYOUT_CACHE``); else the checkouts under
  ``$SYMLAYOUT_KERNELS`` (``fa/flash_attn/cute``, ``quack/quack``); else skipped, saying why.
* CUTLASS's CuTe DSL examples are in no wheel (``nvidia-cutlass`` ships only their notebooks): the checkout
  ``$SYMLAYOUT_KERNELS/cutlass/examples/python/CuTeDSL`` (commit 7107b0553), else skipped.

Skipped without the DSL too.  The verdicts are the ones of docs/frontends.md "Tried on real kernels"."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from symlayout.cli import main
from symlayout.frontends.kernels import KernelNotFound, package_root, parse_package

ROOT = Path(os.environ["SYMLAYOUT_KERNELS"]) if os.environ.get("SYMLAYOUT_KERNELS") else None
pytestmark = [pytest.mark.usefixtures("cute")]
#: checkout directory under $SYMLAYOUT_KERNELS -> (the distribution of the pinned version, its directory there)
PACKAGES = {"fa": ("flash-attn-4==4.0.0b29", "fa"), "quack": ("quack-kernels==0.6.5", "quack")}
CUTE = Path("cutlass/examples/python/CuTeDSL/cute")
FA = Path("fa/flash_attn/cute")
GEMM = ["--shape", "M=4096,N=4096,K=4096", "--dtype", "f16"]
ATTN = ["--shape", "B=2,S=4096,H=16,D=128", "--dtype", "bf16", *[a for t in ("mQ", "mK", "mV", "mO")
                                                                 for a in ("--tensor", f"{t}=B,S,H,D")]]
FA4 = ["--path", "{quack}", "--stub-missing"]

CASES = {   # name: (file, arguments, exit code, configurations or the error's words)
    "tensorop_gemm": (CUTE / "ampere/kernel/dense_gemm/tensorop_gemm.py",
                      ["--entry", "TensorOpGemm.__call__", "--init", "atom_layout_mnk=(2,2,1)", *GEMM], 0, 1),
    "tensorop_gemm_fp8": (CUTE / "ampere/kernel/dense_gemm/tensorop_gemm.py",
                          ["--entry", "TensorOpGemm.__call__", "--init", "atom_layout_mnk=(2,2,1)",
                           "--shape", "M=4096,N=4096,K=4096", "--dtype", "A=e4m3,B=e4m3,C=f16"], 1,
                          "LdMatrix8x16x8bOp(transpose=False, num_matrices=4) on sA"),   # as SM75_U32x4_LDSM_N:
    #   47 proved, bank_conflicts[A/B] refuted (2-way under S<2,4,4>)
    "sgemm": (CUTE / "ampere/kernel/dense_gemm/sgemm.py", ["--entry", "SGemm.__call__", *GEMM[:2], "--dtype", "f32"],
              2, "[params] ldA: 1048569 values are too many to list"),   # UniversalFMA read; the engine's limit
    "elementwise_add": (CUTE / "ampere/kernel/elementwise/elementwise_add.py",
                        ["--entry", "elementwise_add", "--shape", "M=4096,N=4096", "--tensor", "mA=M,N", "--tensor",
                         "mB=M,N", "--tensor", "mC=M,N", "--dtype", "f16"], 0, 1),     # copy-only: [g2r.X], [r2g.X]
    "cta_norm": (CUTE / "hopper/kernel/cta_norm/cta_norm.py",
                 ["--entry", "CtaNorm.__call__", "--init", 'N=4096,norm_type="layer"', "--shape", "M=4096,N=4096",
                  "--tensor", "mY=M,N", "--tensor", "mX=M,N", "--tensor", "mWeight=N", "--tensor", "mBias=N",
                  "--dtype", "f16"], 0, 1),   # autovec_copy of tXgX[None, i]: [g2r.gX/mWeight/mBias], [r2g.gY]
    "quack_rmsnorm": (Path("quack/quack/rmsnorm.py"),
                      ["--path", "{quack}", "--stub-missing", "--entry", "RMSNorm.__call__", "--init",
                       "dtype=bf16,N=4096", "--shape", "M=4096,N=4096", "--tensor", "mX=M,N", "--tensor", "mW=N",
                       "--tensor", "mO=M,N", "--dtype", "bf16"], 0, 1),   # [g2s.gX], [r2g.gO]; W (broadcast): listed
    "quack_softmax": (Path("quack/quack/softmax.py"),
                      ["--stub-missing", "--entry", "Softmax.__call__", "--init", "dtype=bf16,N=4096", "--shape",
                       "M=4096,N=4096", "--tensor", "mX=M,N", "--tensor", "mO=M,N", "--dtype", "bf16"], 0, 1),
    #   [g2s.gX] (X's cp.async staging into smem) and [r2g.gO]: 12 proved; the smem -> register copy listed
    "flash_attention_v2": (CUTE / "ampere/kernel/attention/flash_attention_v2.py",
                           ["--entry", "FlashAttentionForwardAmpere.__call__", "--init", "head_dim=128,n_block_size=64",
                            *ATTN], 0, 2),
    "hopper_dense_gemm": (CUTE / "hopper/kernel/dense_gemm/dense_gemm.py",
                          ["--entry", "HopperWgmmaGemmKernel.__call__",
                           "--init", "tile_shape_mn=(128,128),cluster_shape_mn=(1,1)", *GEMM], 0, 1),
    "hopper_dense_gemm_persistent": (CUTE / "hopper/kernel/dense_gemm/dense_gemm_persistent.py",
                                     ["--entry", "HopperWgmmaGemmPersistentKernel.__call__", "--init",
                                      "tile_shape_mn=(128,128),cluster_shape_mn=(1,1),swizzle_size=1,"
                                      "raster_along_m=True", "--arg", "max_active_clusters=132", *GEMM], 0, 1),
    "fa4_fwd_sm80": (FA / "flash_fwd.py", ["--entry", "FlashAttentionForwardSm80.__call__",
                                           "--init", "dtype=bf16,head_dim=128", *ATTN, *FA4], 0, 2),
    "fa4_bwd_sm80": (FA / "flash_bwd.py", ["--entry", "FlashAttentionBackwardSm80.__call__",
                                           "--init", "dtype=bf16,head_dim=128", *ATTN[:4],
                                           *[a for t in ("mQ", "mK", "mV", "mdO", "mdK", "mdV")
                                             for a in ("--tensor", f"{t}=B,S,H,D")],
                                           "--tensor", "mLSE=B,H,S:f32", "--tensor", "mdPsum=B,H,S:f32",
                                           "--tensor", "mdQaccum=B,H,524288:f32", *FA4], 0, 3),
    "fa4_fwd_sm90": (FA / "flash_fwd_sm90.py", ["--entry", "FlashAttentionForwardSm90.__call__", "--init",
                                                "dtype=bf16,head_dim=128,tile_m=128,tile_n=128,num_stages=2,"
                                                "num_threads=384", *ATTN, "--tensor", "mLSE=B,H,S:f32", *FA4], 0, 2),
    "fa4_fwd_sm100": (FA / "flash_fwd_sm100.py", ["--entry", "FlashAttentionForwardSm100.__call__", "--init",
                                                  "head_dim=128,is_static_persistent=False", *ATTN,
                                                  "--tensor", "mLSE=B,H,S:f32", *FA4], 0, 2),
    "hopper_fmha": (CUTE / "hopper/kernel/attention/fmha.py",
                    ["--path", "{root}/cutlass/examples/python/CuTeDSL", "--entry",
                     "HopperFusedMultiHeadAttentionForward.__call__", "--init",
                     "qk_acc_dtype=f32,pv_acc_dtype=f32,mma_tiler=(64,128,128),is_persistent=False,"
                     "mask_type=fmha_utils.MaskEnum.RESIDUAL_MASK", "--shape", "S=4096,D=128,B=2,H=16",
                     *[a for t in "qkvo" for a in ("--tensor", f"{t}=S,D,1,H,B@3,0,1,2,4")],
                     "--tensor", "lse=S,1,1,H,B:f32@0,1,2,3,4", "--dtype", "f16"], 0, 2),
    "quack_gemm_sm90": (Path("quack/quack/gemm_default_epi.py"),
                        ["--entry", "GemmDefaultSm90.__call__", "--init", "acc_dtype=f32,a_dtype=f16,"
                         "tile_shape_mnk=(128,128,64),cluster_shape_mnk=(1,1,1)", "--arg",
                         "epilogue_args=GemmDefaultSm90.EpilogueArguments(),"
                         "scheduler_args=quack.tile_scheduler.TileSchedulerOptions(132)",
                         "--shape", "L=1,M=4096,N=4096,K=4096", "--tensor", "mA=L,M,K", "--tensor", "mB=L,N,K",
                         "--tensor", "mD=L,M,N", "--dtype", "f16", "--stub-missing"], 0, 1),
    "blackwell_dense_gemm": (CUTE / "blackwell/kernel/dense_gemm/dense_gemm.py",
                             ["--entry", "DenseGemmKernel.__call__", "--init", "use_2cta_instrs=False,"
                              "mma_tiler_mn=(128,128),cluster_shape_mn=(1,1),use_tma_store=True", *GEMM], 0, 1),
    "blackwell_dense_gemm_2sm": (CUTE / "blackwell/kernel/dense_gemm/dense_gemm.py",
                                 ["--entry", "DenseGemmKernel.__call__", "--init", "use_2cta_instrs=True,"
                                  "mma_tiler_mn=(256,128),cluster_shape_mn=(2,2),use_tma_store=True", *GEMM], 0, 1),
    "blackwell_fmha": (CUTE / "blackwell/kernel/attention/fmha/fmha.py",
                       ["--path", "{root}/cutlass/examples/python/CuTeDSL", "--entry",
                        "BlackwellFusedMultiHeadAttentionForward.__call__", "--init",
                        "qk_acc_dtype=f32,pv_acc_dtype=f32,mma_tiler=(128,128),head_dim=128,is_persistent=False,"
                        "mask_type=fmha_utils.MaskEnum.RESIDUAL_MASK,enable_ex2_emulation=False,"
                        "enable_skip_correction=False", "--shape", "B=2,S=4096,H=16,D=128",
                        *[a for t in "qkvo" for a in ("--tensor", f"{t}_tensor=B,S,H,1,D")],
                        "--arg", "problem_size=(2,4096,4096,4096,16,16,128,128),use_pdl=False", "--dtype", "f16"],
                       0, 2),   # S = Q K^T and O = P V (P from TMEM); TMA and TMEM plan listed as not proved here
    "blackwell_dense_gemm_persistent": (CUTE / "blackwell/kernel/dense_gemm/dense_gemm_persistent.py",
                                        ["--entry", "PersistentDenseGemmKernel.__call__", "--init",
                                         "use_2cta_instrs=True,mma_tiler_mn=(256,256),cluster_shape_mn=(2,1),"
                                         "use_tma_store=True", "--arg", "max_active_clusters=74", *GEMM], 0, 1),
}


@pytest.fixture(scope="session")
def packages():
    """``{checkout name: (directory of the distribution, None) or (None, why not)}`` (downloaded once)."""
    out = {}
    for name, (spec, _) in PACKAGES.items():
        try:
            out[name] = (package_root(parse_package(spec))[0], None)
        except KernelNotFound as e:
            out[name] = (None, str(e))
    return out


def _from_package(path: Path, args: list, packages: dict):
    """The command line reading ``path`` (``fa/...``, ``quack/...``) through ``--package``, or ``None``."""
    kind = path.parts[0]
    needed = [kind] + (["quack"] if kind == "fa" else [])
    if any(packages[k][0] is None for k in needed):
        return None
    inside = Path(*path.parts[1:])
    return ([a for k in needed for a in ("--package", PACKAGES[k][0])] + [str(inside)]
            + [a.format(quack=packages["quack"][0]) for a in args])


def _from_checkout(path: Path, args: list):
    if ROOT is None or not (ROOT / path).is_file():
        return None
    return [str(ROOT / path)] + [a.format(quack=ROOT / "quack") for a in args]


@pytest.mark.parametrize("name", sorted(CASES))
def test_real_kernel(capsys, name, packages):
    path, args, code, expect = CASES[name]
    argv = None
    if path.parts[0] in PACKAGES:
        argv = _from_package(path, args, packages)
    argv = argv or _from_checkout(path, [a.replace("{root}", str(ROOT)) for a in args] if ROOT else args)
    if argv is None:
        why = "; ".join(r for k, (_, r) in packages.items() if r and path.parts[0] in (k, "fa"))
        pytest.skip(f"{path}: not in $SYMLAYOUT_KERNELS ({ROOT})" + (f"; {why}" if why else ""))
    rc = main(["dsl", *argv, "-q"])
    out, err = capsys.readouterr()
    assert rc == code, out + err
    if code == 0:
        assert f"# {expect} configuration(s) from" in out and " 0 refuted," in out
    elif "error:" in err:
        assert expect in err and len([ln for ln in err.splitlines() if "error" in ln]) == 1
    else:
        assert expect in out
