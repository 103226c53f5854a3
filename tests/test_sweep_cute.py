"""The legal sets of the bundled SM80 sweep spaces against CuTe C++ (issue 32): a seeded sample of each space's
survivors and rejects compiled with host-only g++ against the CuTe headers (``tests/cute_cpp.py``; skipped
without them), all cases of a space in one program.

* Every operand the sweep says CuTe rejects at compile time (a refutation whose reason is CuTe's
  static_assert) does not compile; every other operand of the sample compiles (a survivor, or a reject for a
  reason that is not a compile-time one: bank conflicts, alignment, ...).
* The first :data:`SHOWN` survivors' copies give CuTe's layouts: the TiledCopy's ``get_layoutS_TV()`` and, for
  a few threads, the smem offsets of ``partition_S`` -- printed by the compiled program, computed by symlayout.

Slow (``-m slow``): 10 and 4 minutes for the two spaces on the shared 2-core machine, most of it g++.

The SM100 space is ``tests/test_sweep_cute_sm100.py``'s (8 survivors, 8 compile-time rejects, 8 others). The SM90
spaces are ``tests/test_sweep_cute_sm90.py``'s: neither has an illegal candidate, so 16 survivors and 8 pruned
(capacity) rejects per space -- TiledMMA, CuTe's ``tile_to_shape`` buffers and their byte offsets, the partitions'
descriptors and verdicts, 64 TMA maps and the buffers' cosize: 0 disagreements.
"""
import random
import re
import subprocess
import tempfile
from pathlib import Path

import pytest

from cute_cpp import Compiler, _mma_expr, cpp_layout, cute_site
from symlayout.atoms.copy import make_copy_atom
from symlayout.prove.engine import prove_config
from symlayout.sweep import load_spec
from symlayout.sweep.prover import load_candidate, prove_candidate
from symlayout.tiled.copy import make_tiled_copy_X, view_values
from symlayout.tiled.mma import make_tiled_mma

ROOT = Path(__file__).resolve().parents[1]
SPACES = ["sm80_gemm.toml", "attention_sm80.toml"]
PER_KIND = 20
#: survivors whose layouts are compared (their program is compiled to code and run: minutes per case here)
SHOWN = 6
COMPILE_TIME = "CuTe does not compile"

pytestmark = [pytest.mark.skipif(cute_site() is None, reason="needs the CuTe C++ headers (SYMLAYOUT_CUTE_SITE)"),
              pytest.mark.slow]


def _sample(spec, seed=32):
    """Up to :data:`PER_KIND` candidates of each kind -- legal, illegal at CuTe's compile time, illegal for
    another reason -- in a seeded order of the space: {kind: [(id, cfg, operands CuTe rejects)]}."""
    ids = list(range(len(spec)))
    random.Random(seed).shuffle(ids)
    out = {"legal": [], "compile-time": [], "other": []}
    for i in ids:
        row = prove_candidate(spec, i)
        kind = {"legal": "legal", "illegal": "compile-time" if COMPILE_TIME in row["reason"] else "other"}.get(
            row["status"])
        if kind is None or len(out[kind]) >= PER_KIND:
            continue
        cfg = load_candidate(spec, i)
        out[kind].append((i, cfg, prove_config(cfg).rejected))
        if all(len(v) >= PER_KIND for v in out.values()):
            break
    return out


def _case(n, cfg, op, show: bool) -> str:
    """``void case_n()``: the route of ``[copy.op]`` (compile-time checks); with ``show`` it prints the
    TiledCopy's TV layout and a few threads' partition_S offsets (the copy itself is instantiated, not run:
    ldmatrix has no host path)."""
    m, cc = cfg.mma, cfg.copies[op]
    perm = tuple(m.permutation) if m.permutation else None
    threads = "{0, 1, 31, int(size(mma)) - 1}"
    body = (f"void case_{n}() {{\n"
            f"  auto mma = {_mma_expr(m.atom, m.raw_layout, perm)};\n"
            f"  auto sL = {cpp_layout(cc.raw_smem)};\n"
            f"  using T = {cc.type};\n"
            f"  static T buf[cosize_v<decltype(sL)>];\n"
            f"  auto sX = make_tensor(make_smem_ptr(buf), sL);\n"
            f"  auto cp = make_tiled_copy_{op}(Copy_Atom<{cc.atom}, T>{{}}, mma);\n")
    if show:
        body += (f'  printf("{n} TV"); values(cp.get_layoutS_TV()); printf("\\n");\n'
                 f"  for (int t : {threads}) {{\n"
                 f'    auto src = cp.get_slice(t).partition_S(sX); printf("{n} T%d", t);\n'
                 f'    for (int i = 0; i < int(size(src)); ++i) printf(" %d", int(&src(i) - buf));\n'
                 f'    printf("\\n");\n  }}\n')
    body += ("  auto thr = cp.get_slice(0);\n  auto tmma = mma.get_slice(0);\n"
             "  auto src = thr.partition_S(sX);\n"
             f"  auto fr = tmma.partition_fragment_{op}(sX);\n"
             "  auto dst = thr.retile_D(fr);\n"
             "  if (size(sX) < 0) copy(cp, src, dst);\n}\n")
    return body


def _program(cases, show: bool) -> tuple[str, list]:
    """One program of every case, and each case's first and last line (to name a compiler error's case)."""
    text = ('#include "cute_all.hpp"\n#include <cstdio>\nusing namespace cute;\n'
            "template <class L> void values(L const& l) {\n"
            '  for (int i = 0; i < int(size(l)); ++i) printf(" %d", int(l(i)));\n}\n')
    spans = []
    for n, (cfg, op) in enumerate(cases):
        first = text.count("\n") + 1
        text += _case(n, cfg, op, show)
        spans.append((first, text.count("\n")))
    text += "int main() {\n" + "".join(f"  case_{n}();\n" for n in range(len(cases))) + "}\n"
    return text, spans


def _failing_cases(gxx, cases) -> set:
    """The cases CuTe does not compile: the compiler's errors, each named by the line of ``p.cpp`` its
    instantiation is required from (an error of an instantiation two cases share is reported once: a case
    expected to fail that no error names is compiled alone)."""
    text, spans = _program(cases, show=False)
    d = Path(tempfile.mkdtemp(dir=gxx.dir))
    (d / "p.cpp").write_text(text)
    p = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", "-fmax-errors=0", f"-I{gxx.dir}", *gxx._flags(),
                        str(d / "p.cpp")], capture_output=True, text=True)
    failing, line = set(), None
    for s in p.stderr.splitlines():
        m = re.search(r"p\.cpp:(\d+):", s)
        if m:
            line = int(m.group(1))
        if "error:" in s and line is not None:
            failing |= {n for n, (a, b) in enumerate(spans) if a <= line <= b}
    return failing


def _symlayout_lines(n, cfg, op) -> list:
    mma = make_tiled_mma(cfg.mma.atom, cfg.mma.layout, cfg.mma.permutation)
    cc = cfg.copies[op]
    tc = make_tiled_copy_X(make_copy_atom(cc.atom, cc.type), mma, op)
    tv = tc.get_layoutS_TV()
    out = [f"{n} TV " + " ".join(str(int(tv(i))) for i in range(tv.size()))]
    size = mma.size()
    for t in (0, 1, 31, size - 1):
        out.append(f"{n} T{t} " + " ".join(map(str, view_values(tc.get_slice(t).partition_S(cc.smem)))))
    return out


@pytest.mark.parametrize("name", SPACES)
def test_the_legal_set_agrees_with_cute_cpp(name, tmp_path):
    spec = load_spec(ROOT / "examples" / "sweep" / name)
    sample = _sample(spec)
    assert len(sample["legal"]) == PER_KIND
    cases = [(i, cfg, op, op in rejected) for kind in sample.values() for i, cfg, rejected in kind
             for op in sorted(cfg.copies)]
    gxx = Compiler(tmp_path)
    failing = _failing_cases(gxx, [(c[1], c[2]) for c in cases])
    for n, (i, cfg, op, rejected) in enumerate(cases):
        if rejected and n not in failing and gxx.static_asserts(
                (cfg.mma.atom, cfg.mma.raw_layout, tuple(cfg.mma.permutation or ()) or None, op, cfg.copies[op].atom,
                 cfg.copies[op].type, cfg.copies[op].raw_smem)):
            failing.add(n)                    # (its error was reported for another case of the program)
    disagree = [(i, op, rejected) for n, (i, cfg, op, rejected) in enumerate(cases) if rejected != (n in failing)]
    assert disagree == []
    legal = [(cfg, op) for i, cfg, _r in sample["legal"][:SHOWN] for op in sorted(cfg.copies)]
    out, errors = gxx.run(_program(legal, show=True)[0])
    assert errors == []
    want = [line for n, (cfg, op) in enumerate(legal) for line in _symlayout_lines(n, cfg, op)]
    assert [s.rstrip() for s in out.splitlines()] == want
