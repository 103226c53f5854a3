"""The SM80 data path benchmark (issue 14; run by hand, never in CI):

    python bench/datapath.py [--repeat R] [--no-append] [--no-cpp]

For each whole-path configuration of ``proofs/sm80_datapath`` (flash-attention 2 forward hd64/hd128,
CUTLASS SM80 f16/tf32 with 3 stages):

* **concrete**: the file with every leading dimension fixed to its least value (the ``[params]``
  dropped, numbers written into the gmem layouts): every property, exhaustive, in process
  (load + models + obligations; median of R runs);
* **family**: the file as it is, every property for every admissible leading dimension (decided on
  the exact representatives of ``symlayout.prove.datapath.g2s``), in process (median of R);
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


FAMILY_FILES = ["fa2_fwd_hd64_qk.toml", "fa2_fwd_hd128_pv.toml"]


def family_oracle_cases(name: str, text: str, ld_cap: int) -> list:
    """``tests/oracle/datapath_oracle.py`` cases for the global-memory copies of a configuration: every
    admissible leading dimension up to ``ld_cap`` (its own [params] range otherwise), the same residues."""
    from symlayout.config import loads_config
    cfg = loads_config(text)
    out = []
    for gc in list(cfg.g2s.values()) + list(cfg.s2g.values()):
        g = gc.gmem
        major = "k" if g.stride[1] == 1 else "m"
        sym = g.stride[0] if major == "k" else g.stride[1]
        p = cfg.params[str(sym)]
        vals = p.values()
        M, N = (g.shape[0], g.shape[1])
        out.append({"id": f"{name}/{gc.kind}.{gc.operand}", "family": "bench", "note": "", "operand": gc.operand,
                    "mma": {"atom": cfg.mma.atom, "layout": "(1,1,1)", "permutation": None}, "copy": None,
                    "g": {"kind": gc.kind, "atom": gc.atom, "type": gc.type, "thr": str(gc.tiled.thr),
                          "val": str(gc.tiled.val), "gmem": gc.raw_gmem, "major": major, "R": M, "K": N,
                          "ld": [vals[0], min(vals[-1], ld_cap), p.multiple_of], "gmem_align": gc.gmem_align,
                          "align": gc.align, "residue": list(gc.residue), "smem": gc.raw_smem or str(gc.smem)},
                    "stages": None, "pipe": None})
    return out


def family_vs_cpp(repeat: int, ld_cap: int) -> str:
    """The FA2 leading-dimension families: symlayout (every admissible ld, decided on representatives) vs
    CuTe C++ enumerating the members ld <= ld_cap with the same checks (tests/oracle/datapath_oracle.hpp,
    g++ -O2), and whether the verdicts agree."""
    sys.path.insert(0, str(common.REPO / "tests" / "oracle"))
    import cute_oracle as co
    import datapath_oracle as dpo
    incs = co.include_dirs()
    rows = []
    for f in FAMILY_FILES:
        text = (DIR / f).read_text()
        tf, _, rep = common.time_call(prove_text, text, repeat=repeat)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "symlayout", "prove", str(DIR / f)], capture_output=True)
        tcli = time.perf_counter() - t0
        sym = {(r.operand, r.property): r.status for r in rep.results}
        cases = family_oracle_cases(f.removesuffix(".toml"), text, ld_cap)
        members = sum(len(range(c["g"]["ld"][0], c["g"]["ld"][1] + 1, c["g"]["ld"][2])) for c in cases)
        comp = run = float("nan")
        agree = "—"
        if incs is not None:
            work = Path(tempfile.mkdtemp(prefix="bench-dpo-"))
            for h in ("oracle.hpp", "datapath_oracle.hpp"):
                (work / h).write_text((common.REPO / "tests" / "oracle" / h).read_text())
            (work / "p.cpp").write_text(dpo.program(cases)[0])
            t0 = time.perf_counter()
            subprocess.run(["g++", "-std=c++17", "-O2", "-w", f"-I{work}", *[f"-I{d}" for d in incs],
                            str(work / "p.cpp"), "-o", str(work / "p")], check=True, capture_output=True)
            comp = time.perf_counter() - t0
            t0 = time.perf_counter()
            out = subprocess.run([str(work / "p")], check=True, capture_output=True, text=True).stdout
            run = time.perf_counter() - t0
            got = dpo._parse(out)
            diffs = []
            for c in cases:
                op = f"{c['g']['kind']}.{c['operand']}"
                for prop in dpo.GLOBAL_PROPS:
                    if got[c["id"]][prop] != sym.get((op, prop)):
                        diffs.append(f"{op} {prop}: C++ {got[c['id']][prop]}, symlayout {sym.get((op, prop))}")
            agree = "same verdicts" if not diffs else "; ".join(diffs)
        rows.append([f, len(rep.results), common.fmt_s(tf), common.fmt_s(tcli), members, common.fmt_s(comp),
                     common.fmt_s(run), agree])
        print(rows[-1], flush=True)
    return common.md_table(["configuration", "results", "symlayout: every ld (in process)", "symlayout CLI",
                            f"C++ members (ld <= {ld_cap}, every copy)", "C++: g++ -O2 compile",
                            "C++: run (every member, residue and property)", "verdicts"], rows)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--no-append", action="store_true")
    ap.add_argument("--no-cpp", action="store_true")
    ap.add_argument("--family", action="store_true", help="only the FA2 ld families vs the CuTe C++ enumeration")
    ap.add_argument("--ld-cap", type=int, default=8192, help="C++ enumerates the members with ld <= this")
    a = ap.parse_args(argv)
    if a.family:
        import os
        table = family_vs_cpp(a.repeat, a.ld_cap)
        load = os.getloadavg()
        table += (f"\n\nLoad average during the run: {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} (1/5/15 min) on "
                  f"{os.cpu_count()} cores.\n")
        print(table)
        if not a.no_append:
            common.append_results("bench/datapath.py --family — FA2 leading-dimension families vs CuTe C++ (issue 14)",
                                  table, command=f"python bench/datapath.py --family --repeat {a.repeat} --ld-cap {a.ld_cap}")
        return
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
