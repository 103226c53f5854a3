"""Front ends: time to extract a configuration from a CuTe C++ traits header, and from CuTe DSL objects.

Run by hand: ``python bench/frontends.py [--repeat N]``.  Uses what is present and says what is not:
CuTe headers (nvidia-cutlass or $SYMLAYOUT_CUTE_SITE) and a C++ compiler; flash-attention's
kernel_traits.h ($SYMLAYOUT_FLASH_ATTN); CUTLASS's test/ tree ($SYMLAYOUT_CUTLASS_SRC); the CuTe DSL
(nvidia-cutlass-dsl or $SYMLAYOUT_DSL_SITE).  Prints a markdown section (for bench/RESULTS-frontends.md).

Columns: *extract* is the whole ``extract()`` (write the probe program, compile, run, build the
documents); *compile* the compiler alone; *prove v1* proving the version-1 part of every document.
For the DSL: *trace* is one ``@cute.jit`` call that builds the objects and converts them (the first
call in a process also pays the DSL's own warm-up, reported apart), *prove v1* as above.
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "frontends"))


def prove_v1(docs):
    from symlayout.config import loads_config
    from symlayout.prove.engine import prove_config
    t0 = time.perf_counter()
    n = 0
    for d in docs:
        v1, _ = d.version1()
        rep = prove_config(loads_config(v1.to_toml()))
        assert rep.error is None, rep.error
        n += sum(r.status == "proved" for r in rep.results)
    return time.perf_counter() - t0, n


def cpp_cases():
    from symlayout.frontends.cute_cpp.probe import cutlass_include_dirs
    if not cutlass_include_dirs()[0]:
        print("(no CuTe headers: C++ extraction not measured)")
        return []
    cases = []
    tmp = Path(tempfile.mkdtemp())
    from test_extract_cpp import COLLECTIVE
    (tmp / "my_mainloop.h").write_text(COLLECTIVE)
    cases.append(("CollectiveMma SM80 f16, 4 stages (own header)", tmp / "my_mainloop.h", "mykernel::Mainloop<4>"))
    fa = os.environ.get("SYMLAYOUT_FLASH_ATTN")
    if fa and (Path(fa) / "csrc/flash_attn/src/kernel_traits.h").is_file():
        h = Path(fa) / "csrc/flash_attn/src/kernel_traits.h"
        cases.append(("FA2 fwd hdim64", h, "Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, cutlass::half_t>"))
        cases.append(("FA2 fwd hdim128", h, "Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::half_t>"))
    else:
        print("(SYMLAYOUT_FLASH_ATTN not set: flash-attention not measured)")
    cs = os.environ.get("SYMLAYOUT_CUTLASS_SRC")
    if cs and (Path(cs) / "test/unit/gemm/device/default_gemm_configuration.hpp").is_file():
        h = Path(cs) / "test/unit/gemm/device/default_gemm_configuration.hpp"
        cases.append(("CUTLASS DefaultGemmConfigurationToCutlass3Types SM80 f16 TN", h,
                      "cutlass::gemm::device::DefaultGemmConfigurationToCutlass3Types<cutlass::arch::OpClassTensorOp, "
                      "cutlass::arch::Sm80, cutlass::half_t, cutlass::layout::RowMajor, cutlass::half_t, "
                      "cutlass::layout::ColumnMajor, float, cutlass::layout::RowMajor, float>"))
    else:
        print("(SYMLAYOUT_CUTLASS_SRC not set: CUTLASS's default configurations not measured)")
    return cases


def bench_cpp(repeat):
    from symlayout.frontends.cute_cpp import extract
    rows = []
    for label, h, t in cpp_cases():
        tot, comp, pv = [], [], []
        for _ in range(repeat):
            ex = extract(h, t)
            tot.append(ex.seconds)
            comp.append(ex.probe.seconds)
            s, n = prove_v1(ex.docs)
            pv.append(s)
        rows.append(f"| {label} | {len(ex.docs)} | {statistics.median(tot):.1f} s | {statistics.median(comp):.1f} s | "
                    f"{statistics.median(pv) * 1000:.0f} ms ({n} proved) | {ex.probe.compiler} |")
    return rows


def bench_dsl(repeat):
    from symlayout.frontends.cute_dsl import DslError, import_dsl
    try:
        t0 = time.perf_counter()
        cute = import_dsl()
        t_import = time.perf_counter() - t0
    except DslError as e:
        print(f"({e}: DSL not measured)")
        return [], None
    import cutlass
    import test_cute_dsl as T
    rows, first = [], None
    cases = [("tensorop_gemm (6 variants)", lambda: {n: T.gemm_config(cute, T.gemm_objects(
                 cute, *(getattr(cutlass, kw[k]) for k in ("ab", "acc", "c")),
                 **{k: v for k, v in kw.items() if k not in ("ab", "acc", "c")}), getattr(cutlass, kw["c"]))
                 for n, kw in T.GEMM_CASES.items()}),
             ("flash_attention_v2 (2 x qk + pv)", lambda: {k: c for (dt, hd, bm, bn, nt) in T.FA2_CASES
                                                          for k, c in zip((f"{dt}{hd}qk", f"{dt}{hd}pv"),
                                                                          T.fa2_configs(cute, getattr(cutlass, dt), hd, bm, bn, nt))})]
    for label, build in cases:
        times, out = [], {}
        for _ in range(repeat + 1):
            @cute.jit
            def trace():
                out.update(build())
            t0 = time.perf_counter()
            trace()
            times.append(time.perf_counter() - t0)
        if first is None:
            first = times[0]
        docs = [c.doc for n, c in out.items() if "broken" not in n]
        s, n = prove_v1(docs)
        rows.append(f"| {label} | {len(out)} | {statistics.median(times[1:]) * 1000:.0f} ms | "
                    f"{s * 1000:.0f} ms ({n} proved) |")
    return rows, (t_import, first)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"## bench/frontends.py — configurations from C++ headers and CuTe DSL objects — "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n")
    print(f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; Python "
          f"{platform.python_version()}\n\nCommand: `python bench/frontends.py --repeat {args.repeat}` (medians)\n")
    rows = bench_cpp(args.repeat)
    if rows:
        print("| C++ traits type | documents | extract | compile + run | prove v1 | compiler |")
        print("|---|---|---|---|---|---|")
        print("\n".join(rows) + "\n")
    rows, warm = bench_dsl(args.repeat)
    if rows:
        print(f"CuTe DSL: import {warm[0]:.2f} s; first @cute.jit call {warm[1]:.2f} s (warm-up)\n")
        print("| DSL example (reconstructed) | configurations | trace + convert | prove v1 |")
        print("|---|---|---|---|")
        print("\n".join(rows))


if __name__ == "__main__":
    main()
