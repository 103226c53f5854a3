"""The legal set of the bundled SM100 sweep space (examples/sweep/sm100_gemm.toml) against CuTe C++ (issue 32):
a seeded sample of its survivors and rejects compiled host-only with g++ against the CuTe headers
(``tests/sm100_cpp.py``; skipped without them).

* Every candidate the sweep refutes because CuTe does not compile its UMMA atom (the reason names CuTe's
  static_assert) does not compile: ``make_tiled_mma(atom)`` and the buffers of ``UMMA::tile_to_mma_shape``;
  every other candidate of the sample (a survivor, or a reject for another reason: a 2SM atom in a cluster of one
  CTA) compiles.
* For those, the A and B buffers CuTe builds -- ``UMMA::tile_to_mma_shape(UMMA::Layout_K_SW*_Atom<T>{},
  partition_shape_A/B(mma, (tile, tile_k, stages)))``, printed by the compiled program -- are the buffers the
  space writes: put in the candidate's place, the configuration has the same modes, the same element offsets and
  the same proof (every result's property, operand, status, count, method).

Slow (``-m slow``): a few minutes here, most of it g++.
"""
import random

import pytest

from sm100_cpp import compiler, cpp_atom, strip
from symlayout.algebra import int_tuple as it
from symlayout.atoms.umma import parse_umma_name
from symlayout.config import loads_config
from symlayout.prove.decide.tables import index_table
from symlayout.prove.engine import prove_config
from symlayout.sweep import load_spec
from symlayout.sweep.prover import load_candidate, prove_candidate
from symlayout.sweep.toml import to_toml

from test_sweep_cute import ROOT

PER_KIND = 8
COMPILE_TIME = "CuTe does not compile"
ATOMS = {128: "K_SW128", 64: "K_SW64", 32: "K_SW32"}

pytestmark = [pytest.mark.skipif(compiler() is None, reason="needs the CuTe C++ headers (SYMLAYOUT_CUTE_SITE)"),
              pytest.mark.slow]


def _sample(spec, seed=32):
    """Up to :data:`PER_KIND` candidate ids of each kind -- legal, illegal at CuTe's compile time, illegal for
    another reason -- in a seeded order of the space."""
    ids = list(range(len(spec)))
    random.Random(seed).shuffle(ids)
    out = {"legal": [], "compile-time": [], "other": []}
    for i in ids:
        row = prove_candidate(spec, i)
        kind = {"legal": "legal", "illegal": "compile-time" if COMPILE_TIME in row["reason"] else "other"}.get(
            row["status"])
        if kind is not None and len(out[kind]) < PER_KIND:
            out[kind].append(i)
        if all(len(v) >= PER_KIND for v in out.values()):
            break
    return out


def _case(n, env, op) -> str:
    """A block of ``main``: candidate ``env``'s TiledMMA and the ``op`` buffer CuTe builds, printed."""
    atom = cpp_atom(parse_umma_name(load_atom(env)))
    mn = env["mma_m"] if op == "A" else env["tile_n"]
    return (f"  {{ auto mma = make_tiled_mma({atom});\n"
            f"    auto shp = partition_shape_{op}(mma, make_shape(Int<{mn}>{{}}, Int<{env['tile_k']}>{{}}, "
            f"Int<{env['stages']}>{{}}));\n"
            f"    auto sL = UMMA::tile_to_mma_shape(UMMA::Layout_{ATOMS[env['sw_bytes']]}_Atom<{env['type']}>{{}}, shp);\n"
            f'    printf("{n} {op} "); print(sL); printf("\\n"); }}\n')


def load_atom(env) -> str:
    return f"SM100_MMA_{env['family']}{env['pair']}_SS<{env['type']},{env['type']},float,{env['mma_m']},{env['tile_n']}," \
           "UMMA::Major::K,UMMA::Major::K>"


def _report(cfg):
    rep = prove_config(cfg)
    return rep.error, [(r.property, r.operand, r.status, r.checked, r.method) for r in rep.results]


def _top_sizes(layout):
    return [it.product(s) for s in layout.shape]


def test_the_sm100_legal_set_agrees_with_cute_cpp():
    spec = load_spec(ROOT / "examples" / "sweep" / "sm100_gemm.toml")
    sample = _sample(spec)
    assert all(len(v) == PER_KIND for v in sample.values()), {k: len(v) for k, v in sample.items()}
    cxx = compiler()
    for i in sample["compile-time"]:               # each alone: its static_assert is CuTe's refusal
        env = spec.scope(i)
        asserts = cxx.static_asserts("int main() {\n" + _case(0, env, "A") + _case(0, env, "B") + "}\n")
        assert asserts and any("N-mode size" in a or "M-mode size" in a for a in asserts), (i, asserts)
    shown = sample["legal"] + sample["other"]
    envs = {i: spec.scope(i) for i in shown}
    out = cxx.run("int main() {\n" + "".join(_case(n, envs[i], op) for n, i in enumerate(shown) for op in "AB")
                  + "}\n")
    printed = {}
    for line in out.splitlines():
        n, op, text = line.split(" ", 2)
        printed[(shown[int(n)], op)] = strip(text)
    assert len(printed) == 2 * len(shown)
    for i in shown:
        mine = load_candidate(spec, i)
        d = spec.config(i, envs[i])
        for op in "AB":
            d["smem"][op]["layout"] = printed[(i, op)]
        cutes = loads_config(to_toml(d), f"{spec.path}#{i} (CuTe's buffers)")
        for op in "AB":
            a, b = mine.smem[op].layout, cutes.smem[op].layout
            assert (a.swizzle, a.bits) == (b.swizzle, b.bits), (i, op)
            assert _top_sizes(a.layout) == _top_sizes(b.layout), (i, op, str(a), str(b))
            assert index_table(a.layout).tolist() == index_table(b.layout).tolist(), (i, op, str(a), str(b))
        assert _report(mine) == _report(cutes), i
