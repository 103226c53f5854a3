"""The SM80 data path benchmark (issue 14; run by hand, never in CI):

    python bench/datapath.py [--repeat R] [--no-append] [--no-cpp]

For each whole-path configuration of ``proofs/sm80_datapath`` (flash-attention 2 forward hd64/hd128,
CUTLASS SM80 f16/tf32 with 3 stages):

* **concrete**: the file with every leading dimension fixed to its least value (the ``[params]``
  dropped, numbers written into the gmem layouts): every property, exhaustive, in process
  (load + models + obligations; median of R runs);
* **family**: the file as it is, every property for every admissible leading dimension (decided on
  the exact representatives of ``symlayout.prove.g2s``), in process (median of R);
* **CLI**: ``symlayout prove FILE`` in a fresh process (interpreter start and imports included);
* **CuTe C++**: the same global-memory copies enumerated by CuTe itself (``tests/test_datapath_cute.py``'s
  host program: real ``make_tiled_copy`` partitions of every thread, printed), compile time and run time
  with g++ (only with the CuTe headers: ``SYMLAYOUT_CUTE_SITE``).
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

DIR = common.REPO / "proofs" / "sm80_datapath"
FILES = ["fa2_fwd_hd64_qk.toml", "fa2_fwd_hd64_pv.toml", "fa2_fwd_hd128_qk.toml", "fa2_fwd_hd128_pv.toml",
         "cutlass_sm80_f16_tn_3stage.toml", "cutlass_sm80_tf32_tn_3stage.toml"]


def concrete_text(text: str) -> str:
    """The file with each gmem symbol replaced by its least admissible value (the leading dimensions
    fixed; a problem-size symbol such as ``K`` of the residues stays)."""
    from symlayout.config import loads_config
    cfg = loads_config(text)
    out = text

    def fix(m):
        line = m.group(0)
        for name, p in cfg.params.items():
            line = re.sub(rf"\b{name}\b", str(p.values()[0]), line)
        return line
    return re.sub(r"^gmem = .*$", fix, out, flags=re.M)


def prove_text(text: str):
    from symlayout.config import loads_config
    from symlayout.prove.engine import prove_config
    rep = prove_config(loads_config(text))
    assert rep.error is None, rep.error
    return rep


def cpp_cases(text: str):
    """tests/test_datapath_cute.py cases for the global-memory copies of a configuration."""
    from symlayout.config import loads_config
    cfg = loads_config(concrete_text(text))
    out = []
    for gc in list(cfg.g2s.values()) + list(cfg.s2g.values()):
        g = gc.gmem
        major = "k" if g.stride[1] == 1 else "m"
        ld = int(g.stride[0] if major == "k" else g.stride[1])
        out.append((gc.table, gc.kind, gc.operand, gc.atom, gc.type, (str(gc.tiled.thr), str(gc.tiled.val)),
                    str(gc.smem), major, ld))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--no-append", action="store_true")
    ap.add_argument("--no-cpp", action="store_true")
    a = ap.parse_args(argv)
    rows = []
    gxx = None
    if not a.no_cpp:
        sys.path.insert(0, str(common.REPO / "tests"))
        from cute_cpp import Compiler, cute_site
        if cute_site() is not None:
            gxx = Compiler(Path(tempfile.mkdtemp()))
    for f in FILES:
        text = (DIR / f).read_text()
        ctext = concrete_text(text)
        tc, _, rep_c = common.time_call(prove_text, ctext, repeat=a.repeat)
        tf, _, rep_f = common.time_call(prove_text, text, repeat=a.repeat)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "from symlayout.cli import main; raise SystemExit(main())", "prove",
                        str(DIR / f)], capture_output=True)
        tcli = time.perf_counter() - t0
        n = len(rep_c.results)
        ok = all(r.status == "proved" for r in rep_c.results + rep_f.results)
        comp = run = None
        if gxx is not None:
            import test_datapath_cute as T
            comp = run = 0.0
            for case in cpp_cases(text):
                src = gxx._src(T.program(case))
                t0 = time.perf_counter()
                subprocess.run(["g++", "-std=c++17", "-O2", f"-I{gxx.dir}", *gxx._flags(), str(src / "p.cpp"), "-o",
                                str(src / "p")], check=True, capture_output=True)
                t1 = time.perf_counter()
                subprocess.run([str(src / "p")], check=True, capture_output=True)
                comp += t1 - t0
                run += time.perf_counter() - t1
        rows.append([f, n, "all proved" if ok else "NOT all proved", common.fmt_s(tc), common.fmt_s(tf),
                     common.fmt_s(tcli), common.fmt_s(comp) if comp is not None else "—",
                     common.fmt_s(run) if run is not None else "—"])
        print(rows[-1], flush=True)
    table = common.md_table(["configuration", "results", "verdicts", "concrete (in process)",
                             "ld family (in process)", "CLI, fresh process", "CuTe C++: g++ -O2 compile",
                             "CuTe C++: run (partitions only)"], rows)
    print(table)
    import os
    load = os.getloadavg()
    table += (f"\n\nLoad average during the run: {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} (1/5/15 min) on "
              f"{os.cpu_count()} cores: times are wall clock, other processes included.\n")
    if not a.no_append:
        common.append_results("bench/datapath.py — SM80 whole data path (issue 14)", table,
                              command="python bench/datapath.py --repeat %d" % a.repeat)


if __name__ == "__main__":
    main()
