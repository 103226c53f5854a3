"""The legal set of the bundled SM100 block-scaled sweep space (examples/sweep/sm100_blockscaled.toml) against CuTe
C++ (issue 32): a seeded sample of its survivors and rejects compiled host-only with g++ against the CuTe and
CUTLASS headers (``tests/sm100_cpp.py``; skipped without them).

* Every candidate the sweep refutes because CuTe does not compile its UMMA atom (the reason names CuTe's
  static_assert) does not compile: ``make_tiled_mma(MMA_Traits<atom>{})`` fails with that static_assert. Every other
  candidate of the sample -- a survivor, a reject for another reason (a 2SM atom in a cluster of one CTA:
  ``cta_pair``), a candidate pruned over a budget (one whose atom compiles: a pruned candidate is not proved) --
  compiles.
* For those, what the collective builds (``sm100_blockscaled_umma_builder.inl``,
  ``sm100_blockscaled_mma_warpspecialized.hpp``), printed by the compiled program, is what the space writes:
  the A and B buffers (``UMMA::tile_to_mma_shape(UMMA::Layout_K_SW*_Atom<slot type>{}, partition_shape_A/B(mma,
  (MN, K, stages)))``, the slot type ``uint8_t`` for kind::mxf8f6f4 as the builder's
  ``ElementAMma_SmemAllocType``) and the factor buffers (``Sm1xxBlockScaledConfig<vec>::deduce_smem_layoutSFA/SFB``
  with the collective's stage mode): put in the candidate's place they give the same modes, the same offsets and
  the same proof (every result's property, operand, status, count, method);
* and the budgets' amounts are CuTe's and CUTLASS's: the bytes of the four buffers (``cosize`` times the slot
  width) and of the mainloop pipeline's barriers (``sizeof(PipelineTmaUmmaAsync<1>::SharedStorage)`` per stage,
  nvcc) are the space's ``smem_bytes``, and a candidate is within 227 KiB exactly when its stage count is at most
  the one the builder computes for its tile (``sm100_compute_stage_count_or_override_blockscaled`` with
  ``StageCountAutoCarveout<0>``); the TMEM columns of the accumulator stages
  (``make_fragment_C(append(partition_shape_C(mma, (M, N)), stages))``) and of ``tCtSFA`` / ``tCtSFB``
  (``find_tmem_tensor_col_offset``, as ``set_tmem_offsets`` places them) add up to its ``tmem_columns``; the
  pruned candidates are over 232448 bytes or 512 columns by that count too (the budgets themselves are not CuTe
  facts and are not asserted here).

Slow (``-m slow``): a few minutes here, most of it g++.
"""
import random
import re

import pytest

from sm100_cpp import builder_run, compiler, strip
from symlayout.algebra import int_tuple as it
from symlayout.atoms.blockscaled import cute_rejections, parse_blockscaled_name
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
SMEM_BUDGET, TMEM_COLUMNS = 232448, 512
INCLUDES = ("#include <cutlass/detail/sm100_blockscaled_layout.hpp>\n#include <cutlass/detail/sm100_tmem_helper.hpp>\n"
            "using namespace cutlass::detail;\n")

pytestmark = [pytest.mark.skipif(compiler() is None, reason="needs the CuTe C++ headers (SYMLAYOUT_CUTE_SITE)"),
              pytest.mark.slow]


def _kind(spec, i, row) -> str | None:
    """The sample's kind of candidate ``i``: a pruned candidate is not proved, so one whose atom CuTe rejects
    (symlayout's ``cute_rejections``; the compile-time sample checks that) is left out."""
    if row["status"] == "illegal":
        return "compile-time" if COMPILE_TIME in row["reason"] else "other"
    if row["status"] == "pruned":
        return None if cute_rejections(parse_blockscaled_name(_atom(spec.scope(i)))) else "pruned"
    return {"legal": "legal"}.get(row["status"])


def _sample(spec, seed=32):
    """Up to :data:`PER_KIND` candidate ids of each kind -- legal, illegal at CuTe's compile time, illegal for
    another reason, pruned -- in a seeded order of the space."""
    ids = list(range(len(spec)))
    random.Random(seed).shuffle(ids)
    out = {"legal": [], "compile-time": [], "other": [], "pruned": []}
    for i in ids:
        kind = _kind(spec, i, prove_candidate(spec, i))
        if kind is not None and len(out[kind]) < PER_KIND:
            out[kind].append(i)
        if all(len(v) >= PER_KIND for v in out.values()):
            break
    return out


def _atom(env) -> str:
    return (f"SM100_MMA_{env['family']}{env['pair']}_SS<{env['ta']},{env['tb']},float,{env['sf']},{env['mma_m']},"
            f"{env['tile_n']}{env['vs']},UMMA::Major::K,UMMA::Major::K>")


def _mma(env) -> str:
    return f"auto mma = make_tiled_mma(MMA_Traits<{_atom(env)}>{{}});"


def _case(n, env) -> str:
    """A block of ``main``: candidate ``env``'s A, B, SFA and SFB buffers as the collective builds them, their
    bytes, and the TMEM columns of its accumulator stages and factors, printed one per line."""
    slot = "uint8_t" if env["family"] == "MXF8F6F4" else env["ta"]
    m, nn, k, s = (f"Int<{env[x]}>{{}}" for x in ("mma_m", "tile_n", "tile_k", "stages"))
    atom = f"UMMA::Layout_{ATOMS[env['sw_bytes']]}_Atom<{slot}>{{}}"
    cfg = f"Sm1xxBlockScaledConfig<{env['vec']}>"
    staged = "make_layout(append(shape({0}), {1}), append(stride({0}), size(filter_zeros({0}))))"
    return (f"  {{ {_mma(env)} using TM = decltype(mma);\n"
            f"    auto sA = UMMA::tile_to_mma_shape({atom}, partition_shape_A(mma, make_shape({m}, {k}, {s})));\n"
            f"    auto sB = UMMA::tile_to_mma_shape({atom}, partition_shape_B(mma, make_shape({nn}, {k}, {s})));\n"
            f"    auto t = make_shape({m}, {nn}, {k});\n"
            f"    auto a = {cfg}::deduce_smem_layoutSFA(mma, t); auto b = {cfg}::deduce_smem_layoutSFB(mma, t);\n"
            f"    auto sfa = {staged.format('a', s)}; auto sfb = {staged.format('b', s)};\n"
            f"    auto acc = TM::make_fragment_C(append(partition_shape_C(mma, make_shape({m}, {nn})), "
            f"Int<{env['acc_stages']}>{{}}));\n"
            f"    auto ta = make_tensor<typename TM::FrgTypeSFA>(shape(a));\n"
            f"    auto tb = make_tensor<typename TM::FrgTypeSFB>(shape(b));\n"
            f'    printf("{n} A "); print(sA); printf("\\n{n} B "); print(sB);\n'
            f'    printf("\\n{n} SFA "); print(sfa); printf("\\n{n} SFB "); print(sfb);\n'
            f'    printf("\\n{n} smem %d\\n", int((cosize(sA) + cosize(sB)) * {env["slot"]} / 8 + cosize(sfa) + cosize(sfb)));\n'
            f'    printf("{n} tmem %d\\n", int(find_tmem_tensor_col_offset(acc) + find_tmem_tensor_col_offset(ta)'
            f' + find_tmem_tensor_col_offset(tb))); }}\n')


def _builder_case(n, env) -> str:
    """A line of ``main`` (nvcc): the stage count CUTLASS's SM100 block-scaled builder fits in its capacity for
    candidate ``env``'s tile (no carveout), with the mainloop pipeline's bytes per stage."""
    slot = "uint8_t" if env["family"] == "MXF8F6F4" else "cutlass::" + env["ta"]
    atom = re.sub(r"\bfloat_\w+_t", lambda t: ("cutlass::detail::" if "unpacksmem" in t[0] else "cutlass::") + t[0],
                  _atom(env))
    return (f"  count<{n}, MMA_Traits<{atom}>, {slot}, {env['mma_m']}, {env['tile_n']}, {env['tile_k']}, "
            f"{env['vec']}>();\n")


BUILDER = """namespace gc = cutlass::gemm::collective;
template <int Id, class Tr, class Slot, int M, int N, int K, int VS> void count() {
  auto mma = make_tiled_mma(Tr{}); using TM = decltype(mma);
  auto a = partition_shape_A(mma, make_shape(Int<M>{}, Int<K>{}));
  auto b = partition_shape_B(mma, make_shape(Int<N>{}, Int<K>{}));
  using Tile = decltype(make_shape(size<0,0>(a) * size<1>(a), size<0,0>(b) * size<1>(b), size<0,1>(a) * size<2>(a)));
  using Cfg = cutlass::detail::Sm1xxBlockScaledConfig<VS>;
  using SFA = decltype(Cfg::deduce_smem_layoutSFA(TM{}, Shape<Int<M>,Int<N>,Int<K>>{}));
  using SFB = decltype(Cfg::deduce_smem_layoutSFB(TM{}, Shape<Int<M>,Int<N>,Int<K>>{}));
  printf("%d %d %d\\n", Id, gc::detail::sm100_compute_stage_count_or_override_blockscaled<
      cutlass::arch::sm100_smem_capacity_bytes, Slot, Slot, Tile, SFA, SFB>(gc::StageCountAutoCarveout<0>{}),
      int(sizeof(typename cutlass::PipelineTmaUmmaAsync<1>::SharedStorage)));
}
"""


def _builder_counts(envs: dict) -> dict | None:
    """{id: (CUTLASS's stage count, pipeline bytes per stage)}, or None without nvcc."""
    ids = list(envs)
    out = builder_run(BUILDER + "int main() {\n" + "".join(_builder_case(n, envs[i]) for n, i in enumerate(ids))
                      + "}\n")
    if out is None:
        return None
    return {ids[int(n)]: (int(c), int(b)) for n, c, b in (line.split() for line in out.splitlines())}


def _report(cfg):
    rep = prove_config(cfg)
    return rep.error, [(r.property, r.operand, r.status, r.checked, r.method) for r in rep.results]


def _top_sizes(layout):
    return [it.product(s) for s in layout.shape]


def _same_layout(a, b):
    return _top_sizes(a) == _top_sizes(b) and index_table(a).tolist() == index_table(b).tolist()


def _printed(out, shown):
    got = {}
    for line in out.splitlines():
        n, what, text = line.split(" ", 2)
        got[(shown[int(n)], what)] = strip(text)
    assert len(got) == 6 * len(shown)
    return got


def _cutes_config(spec, i, env, got):
    """Candidate ``i`` with CuTe's four buffers in place of the space's."""
    d = spec.config(i, env)
    for op in "AB":
        d["smem"][op]["layout"] = got[(i, op)]
        d["sf"][op]["smem"] = got[(i, "SF" + op)]
    return loads_config(to_toml(d), f"{spec.path}#{i} (CuTe's buffers)")


def test_the_sm100_blockscaled_legal_set_agrees_with_cute_cpp():
    spec = load_spec(ROOT / "examples" / "sweep" / "sm100_blockscaled.toml")
    sample = _sample(spec)
    assert all(len(v) == PER_KIND for v in sample.values()), {k: len(v) for k, v in sample.items()}
    cxx = compiler()
    for i in sample["compile-time"]:               # each alone: its static_assert is CuTe's refusal
        env = spec.scope(i)
        asserts = cxx.static_asserts(INCLUDES + "int main() {\n  { " + _mma(env) + " }\n}\n")
        assert asserts and any("N-mode size" in a or "M-mode size" in a for a in asserts), (i, asserts)
        assert any(a.strip('"') in prove_candidate(spec, i)["reason"] for a in asserts), (i, asserts)
    shown = sample["legal"] + sample["other"] + sample["pruned"]
    envs = {i: spec.scope(i) for i in shown}
    got = _printed(cxx.run(INCLUDES + "int main() {\n" + "".join(_case(n, envs[i]) for n, i in enumerate(shown))
                           + "}\n"), shown)
    counts = _builder_counts(envs)
    for i in shown:
        env, amounts = envs[i], spec.over_budget(envs[i])[1]
        if counts is not None:
            stages, barriers = counts[i]
            assert int(got[(i, "smem")]) + barriers * env["stages"] == amounts["smem_bytes"], (i, got[(i, "smem")])
            assert (amounts["smem_bytes"] <= SMEM_BUDGET) == (env["stages"] <= stages), (i, amounts, stages)
        assert int(got[(i, "tmem")]) == amounts["tmem_columns"], (i, got[(i, "tmem")], amounts)
        if i in sample["pruned"]:
            assert amounts["smem_bytes"] > SMEM_BUDGET or amounts["tmem_columns"] > TMEM_COLUMNS, i
            continue
        mine, cutes = load_candidate(spec, i), _cutes_config(spec, i, env, got)
        for op in "AB":
            a, b = mine.smem[op].layout, cutes.smem[op].layout
            assert (a.swizzle, a.bits) == (b.swizzle, b.bits), (i, op)
            assert _same_layout(a.layout, b.layout), (i, op, str(a), str(b))
            assert _same_layout(mine.sf[op].smem, cutes.sf[op].smem), (i, op)
        assert _report(mine) == _report(cutes), i
