"""The legal set of the bundled SM120 block-scaled sweep space (examples/sweep/sm120_blockscaled.toml) against
CUTLASS / CuTe C++ (issue 32): a seeded sample of its survivors, of its rejects (none is a CuTe compile-time
rejection: CuTe compiles both known-bad formats) and of its pruned candidates.

* A candidate that is a builder choice (a format CUTLASS's SM120 block-scaled builder takes, its SW128 atom;
  cooperative (4,2,1) or ping-pong (2,2,1) warps by the schedule) is compiled through
  ``CollectiveBuilder<Sm120, OpClassBlockScaledTensorOp, ...>`` itself (nvcc, host side): its smem copy atoms are
  the space's ``[copy.X] atom`` / ``type``, its TiledMMA has the space's threads and permutation, and its
  ``SmemLayoutA/B`` and ``SmemLayoutSFA/SFB``, put in the candidate's place, give the same offsets and the same
  proof; a candidate is within SM120's 99 KiB exactly when its stage count is at most the one the builder
  computes (``StageCountAutoCarveout<0>``).
* Any other candidate of the sample (SW64 / SW32 atoms, the two known-bad formats) is compiled with host-only
  g++: the TiledMMA, the buffers as ``tile_to_shape(UMMA::Layout_K_SW*_Atom<slot type>{}, (MN, K, stages))``
  (printed: the same offsets and the same proof in the candidate's place) and the ldmatrix copy
  (``make_tiled_copy_A/B``, ``partition_S``, ``retile_D`` of ``partition_fragment_A/B``, the copy instantiated).

Slow (``-m slow``): a few minutes here, most of it nvcc and g++.
"""
import random
import re

import pytest

from sm100_cpp import builder_run, compiler, strip
from symlayout.algebra import int_tuple as it
from symlayout.config import loads_config
from symlayout.prove.decide.tables import index_table
from symlayout.prove.engine import prove_config
from symlayout.sweep import load_spec
from symlayout.sweep.prover import load_candidate, prove_candidate
from symlayout.sweep.toml import to_toml

from test_sweep_cute import ROOT

PER_KIND = {"legal": 12, "other": 8, "pruned": 8}
SMEM_BUDGET = 101376
ATOMS = {128: "K_SW128", 64: "K_SW64", 32: "K_SW32"}
#: format -> (A's element pair, its alignment, B's, the schedule's kind): the builder's spelling of a format
BUILDER_FORMATS = {"nvfp4": ("nv_float4_t<cutlass::float_e2m1_t>", 32, "nv_float4_t<cutlass::float_e2m1_t>", 32, "Nvf4"),
                   "mxfp4": ("mx_float4_t<cutlass::float_e2m1_t>", 32, "mx_float4_t<cutlass::float_e2m1_t>", 32, "Mxf4"),
                   "mxfp8": ("mx_float8_t<cutlass::float_e4m3_t>", 16, "mx_float8_t<cutlass::float_e4m3_t>", 16,
                             "Mxf8f6f4"),
                   "mxfp6": ("mx_float6_t<cutlass::float_e3m2_t>", 128, "mx_float6_t<cutlass::float_e3m2_t>", 128,
                             "Mxf8f6f4"),
                   "mxfp4f8": ("mx_float4_t<cutlass::float_e2m1_t>", 128, "mx_float4_t<cutlass::float_e2m1_t>", 128,
                               "Mxf8f6f4"),
                   "mxf8xf4": ("mx_float8_t<cutlass::float_e4m3_t>", 16, "mx_float4_t<cutlass::float_e2m1_t>", 128,
                               "Mxf8f6f4")}

pytestmark = [pytest.mark.skipif(compiler() is None, reason="needs the CuTe C++ headers (SYMLAYOUT_CUTE_SITE)"),
              pytest.mark.slow]


def _sample(spec, seed=32):
    """Up to :data:`PER_KIND` candidate ids of each kind in a seeded order of the space."""
    ids = list(range(len(spec)))
    random.Random(seed).shuffle(ids)
    out = {k: [] for k in PER_KIND}
    for i in ids:
        row = prove_candidate(spec, i)
        kind = {"legal": "legal", "illegal": "other", "pruned": "pruned"}.get(row["status"])
        assert "CuTe does not compile" not in row["reason"], row
        if kind is not None and len(out[kind]) < PER_KIND[kind]:
            out[kind].append(i)
        if all(len(out[k]) >= n for k, n in PER_KIND.items()):
            break
    return out


#: the known-bad formats' twins: the builder's format of the same tile bytes (for its stage count)
TWINS = {"mxfp4f8-u8": "mxfp4f8", "nvfp4-ue8m0": "nvfp4"}


def _is_builders(env) -> bool:
    return env["format"] in BUILDER_FORMATS and env["sw_bytes"] == 128


def _builder_env(spec, env) -> dict:
    """``env`` as the builder spells it: a known-bad format replaced by its twin (its atom, copies, factors)."""
    if env["format"] in BUILDER_FORMATS:
        return env
    twin = next(spec.values(i) for i in range(len(spec)) if spec.values(i)["format"] == TWINS[env["format"]])
    keys = ("format", "atom", "mma_k", "ldsm_a", "reg_a", "ea", "ldsm_b", "reg_b", "eb", "ptr", "slot", "sf", "vec")
    return dict(env, **{k: twin[k] for k in keys})


def _schedule(env) -> str:
    kind = BUILDER_FORMATS[env["format"]][4]
    return f"cutlass::gemm::KernelTmaWarpSpecialized{'' if env['wm'] == 4 else 'Pingpong'}{kind}Sm120"


BUILDER = """namespace gc = cutlass::gemm::collective;
template <class A, class L, class P> void perm(TiledMMA<A, L, P>) { print(P{}); }
template <class EA, int AA, class EB, int AB, class TS, class St, class Sch>
using Builder = gc::CollectiveBuilder<cutlass::arch::Sm120, cutlass::arch::OpClassBlockScaledTensorOp, EA,
    cutlass::layout::RowMajor, AA, EB, cutlass::layout::ColumnMajor, AB, float, TS, Shape<_1,_1,_1>, St, Sch>;
template <int Id, class EA, int AA, class EB, int AB, class TS, int S, class Sch, class CpA, class CpB> void show() {
  using C = typename Builder<EA, AA, EB, AB, TS, gc::StageCount<S>, Sch>::CollectiveOp;
  using Auto = Builder<EA, AA, EB, AB, TS, gc::StageCountAutoCarveout<0>, Sch>;   // (its count, not its collective:
                                                                                  // fewer than 2 stages do not build)
  static_assert(is_same_v<typename C::SmemCopyAtomA, CpA> && is_same_v<typename C::SmemCopyAtomB, CpB>);
  printf("%d A ", Id); print(typename C::SmemLayoutA{}); printf("\\n%d B ", Id); print(typename C::SmemLayoutB{});
  printf("\\n%d SFA ", Id); print(typename C::SmemLayoutSFA{}); printf("\\n%d SFB ", Id); print(typename C::SmemLayoutSFB{});
  printf("\\n%d mma %d ", Id, int(size(typename C::TiledMma{}))); perm(typename C::TiledMma{});
  printf("\\n%d stages %d\\n", Id, int(Auto::PipelineStages));
}
"""


def _builder_case(n, env) -> str:
    ea, aa, eb, ab, _k = BUILDER_FORMATS[env["format"]]
    cp = [f"Copy_Atom<{env['ldsm_' + x]}, {env['reg_' + x]}>" for x in "ab"]
    return (f"  show<{n}, cutlass::{ea}, {aa}, cutlass::{eb}, {ab}, Shape<Int<{env['tile_m']}>,Int<{env['tile_n']}>,"
            f"Int<{env['tile_k']}>>, {env['stages']}, {_schedule(env)}, {cp[0]}, {cp[1]}>();\n")


def _cute_type(t: str) -> str:
    return ("cutlass::detail::" if "unpacksmem" in t else "cutlass::") + t if t.startswith("float_") else t


def _mma(env) -> str:
    atom = re.sub(r"\bfloat_\w+_t", lambda m: _cute_type(m[0]), env["atom"])
    return (f"make_tiled_mma(SM120::BLOCKSCALED::{atom}{{}}, Layout<Shape<Int<{env['wm']}>,Int<{env['wn']}>,_1>>{{}}, "
            f"Tile<_128, Layout<Shape<_8,_2,_2>,Stride<_1,_16,_8>>, Int<{env['mma_k']}>>{{}})")


def _gxx_case(n, env) -> str:
    """``void case_n()`` (g++): the TiledMMA, both buffers (printed) and both ldmatrix copies instantiated."""
    slot = "uint4_t" if env["slot"] == 4 else "uint8_t"
    atom = f"UMMA::Layout_{ATOMS[env['sw_bytes']]}_Atom<{slot}>{{}}"
    body = [f"void case_{n}() {{", f"  auto mma = {_mma(env)};"]
    for x, mn in (("A", "tile_m"), ("B", "tile_n")):
        lo = x.lower()
        body += [f"  {{ auto sL = tile_to_shape({atom}, make_shape(Int<{env[mn]}>{{}}, Int<{env['tile_k']}>{{}}, "
                 f"Int<{env['stages']}>{{}}));",
                 f'    printf("{n} {x} "); print(sL); printf("\\n");',
                 f"    static array_subbyte<{slot}, cosize_v<decltype(sL)>> buf;",
                 "    auto sX = make_tensor(make_smem_ptr(buf.begin()), sL)(_, _, 0);",
                 f"    auto cp = make_tiled_copy_{x}(Copy_Atom<{env['ldsm_' + lo]}, {env['reg_' + lo]}>{{}}, mma);",
                 "    auto thr = cp.get_slice(0); auto src = thr.partition_S(sX);",
                 f"    auto dst = thr.retile_D(mma.get_slice(0).partition_fragment_{x}(sX));",
                 "    if (size(sX) < 0) copy(cp, src, dst); }"]
    body.append(f'  printf("{n} mma %d\\n", int(size(mma)));\n}}\n')
    return "\n".join(body)


def _printed(out, ids) -> dict:
    got = {}
    for line in out.splitlines():
        n, what, text = line.split(" ", 2)
        got[(ids[int(n)], what)] = strip(text)
    return got


def _report(cfg):
    rep = prove_config(cfg)
    return rep.error, [(r.property, r.operand, r.status, r.checked, r.method) for r in rep.results]


def _same_layout(a, b) -> bool:
    return ([it.product(s) for s in a.shape] == [it.product(s) for s in b.shape]
            and index_table(a).tolist() == index_table(b).tolist())


def _staged(copy) -> tuple:
    """A ``[copy.X]``'s buffer as the prover reads it: the stage count and every (element, stage)'s offset through
    its swizzle (a packed fp4 pointer's byte swizzle is an element swizzle here)."""
    return copy.stages, index_table(copy.smem_staged).tolist()


def _cutes_config(spec, i, got, sf: bool):
    """Candidate ``i`` with CuTe's buffers (and factor buffers) in place of the space's."""
    d = spec.config(i)
    for x in "AB":
        d["copy"][x]["smem"] = got[(i, x)]
        if sf:
            d["sf"][x]["smem"] = got[(i, "SF" + x)]
    return loads_config(to_toml(d), f"{spec.path}#{i} (CuTe's buffers)")


def _check_buffers(spec, i, got, sf: bool):
    mine, cutes = load_candidate(spec, i), _cutes_config(spec, i, got, sf)
    for x in "AB":
        assert _staged(mine.copies[x]) == _staged(cutes.copies[x]), (i, x, got[(i, x)])
        if sf:
            assert _same_layout(mine.sf[x].smem, cutes.sf[x].smem), (i, x, got[(i, "SF" + x)])
    assert _report(mine) == _report(cutes), i


def test_the_sm120_blockscaled_legal_set_agrees_with_cutlass_and_cute_cpp():
    spec = load_spec(ROOT / "examples" / "sweep" / "sm120_blockscaled.toml")
    sample = _sample(spec)
    assert {k: len(v) for k, v in sample.items()} == PER_KIND
    ids = [i for v in sample.values() for i in v]
    envs = {i: spec.scope(i) for i in ids}
    built = [i for i in ids if _is_builders(envs[i]) and i not in sample["pruned"]]
    other = [i for i in ids if not _is_builders(envs[i]) and i not in sample["pruned"]]
    assert built and other
    out = builder_run(BUILDER + "int main() {\n" + "".join(_builder_case(n, _builder_env(spec, envs[i]))
                                                           for n, i in enumerate(ids)) + "}\n", arch="sm_120a")
    if out is None:
        pytest.skip("needs nvcc for CUTLASS's SM120 collective builder")
    got = _printed(out, ids)
    for i in ids:                             # every candidate: the budget is the builder's stage count
        env, amounts = envs[i], spec.over_budget(envs[i])[1]
        threads, perm = got[(i, "mma")].split(" ", 1)
        assert int(threads) == 32 * env["wm"] * env["wn"], (i, threads)
        assert perm == f"(128,(8,2,2):(1,16,8),{env['mma_k']})", (i, perm)
        assert (amounts["smem_bytes"] <= SMEM_BUDGET) == (env["stages"] <= int(got[(i, "stages")])), (i, amounts)
    for i in built:                           # a builder choice: its buffers and factor buffers are the builder's
        _check_buffers(spec, i, got, sf=True)
    got = _printed(compiler().run("".join(_gxx_case(n, envs[i]) for n, i in enumerate(other)) + "int main() {\n"
                                  + "".join(f"  case_{n}();\n" for n in range(len(other))) + "}\n"), other)
    for i in other:
        assert int(got[(i, "mma")]) == 32 * envs[i]["wm"] * envs[i]["wn"], i
        _check_buffers(spec, i, got, sf=False)
