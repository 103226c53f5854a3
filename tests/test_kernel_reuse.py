"""``[reuse.X]`` (issue 31): an accumulator re-viewed as the next MMA's A operand, against CuTe C++.

Ground truth: a host program built with g++ against the CuTe headers partitions an identity tensor of the
(M,N) tile with ``partition_C`` of the first TiledMMA, stores each register's coordinate ``m + M*n`` in a
fragment of the accumulator's shape, re-views the same storage (``make_tensor(acc.data(), view)``,
``view`` written here as flash-attention's ``convert_layout_acc_Aregs`` does it) and prints, per thread and
A slot of the second TiledMMA, what the register holds and what ``partition_A`` says the MMA reads there;
"SHAPE" when the fragments' modes differ (cute::gemm does not compile).  The digests are stored, so the
default run needs no compiler; ``pytest -m slow`` with the headers recompiles every case.
"""
import hashlib
import pathlib

import pytest

from config_checks import one_line_error, results
from cute_cpp import Compiler, needs_cute
from symlayout.config import load_config, loads_config
from symlayout.errors import ConfigError
from symlayout.prove.engine import prove_config
from symlayout.prove.kernel.reuse import ReuseModel, Rejected, check_shapes, prove_reuse, slots

ROOT = pathlib.Path(__file__).resolve().parents[1]
CASES = ["proofs/kernel/fa2_fwd_hd64_p_reuse.toml", "proofs/kernel/fa2_fwd_hd128_p_reuse.toml",
         "proofs/kernel/fa2_fwd_hd256_p_reuse.toml",
         "proofs/kernel/fa3_fwd_hd64_p_reuse.toml", "proofs/kernel/fa3_fwd_hd128_p_reuse.toml",
         "proofs/kernel/fa3_fwd_hd256_p_reuse.toml", "proofs/kernel/pitfalls/fa2_p_permuted_n.toml",
         "proofs/kernel/pitfalls/fa2_p_without_acc_Aregs.toml", "proofs/kernel/pitfalls/fa2_p_other_warp_layout.toml",
         "proofs/kernel/pitfalls/fa3_p_view_swapped.toml", "proofs/kernel/pitfalls/p_reuse_tf32_atom.toml"]

# sha1[:16] of canonical(): computed by test_truth_is_cute from CuTe C++
TRUTH = {
    "proofs/kernel/fa2_fwd_hd64_p_reuse.toml": "292d17e95c3b27fc",
    "proofs/kernel/fa2_fwd_hd128_p_reuse.toml": "e4f6c64e7b00e29d",
    "proofs/kernel/fa2_fwd_hd256_p_reuse.toml": "e8820678dcc850e1",
    "proofs/kernel/fa3_fwd_hd64_p_reuse.toml": "3b4aea7f164e420c",
    "proofs/kernel/fa3_fwd_hd128_p_reuse.toml": "8df983960fc08933",
    "proofs/kernel/fa3_fwd_hd256_p_reuse.toml": "bef99671d8fd3eae",
    "proofs/kernel/pitfalls/fa2_p_permuted_n.toml": "b4085d9ff7402b21",
    "proofs/kernel/pitfalls/fa2_p_without_acc_Aregs.toml": "44571c5167c33502",
    "proofs/kernel/pitfalls/fa2_p_other_warp_layout.toml": "44571c5167c33502",
    "proofs/kernel/pitfalls/fa3_p_view_swapped.toml": "8b09f8fa34ffbcfe",
    "proofs/kernel/pitfalls/p_reuse_tf32_atom.toml": "cd9766a087089f80",
}


def model_text(path) -> str:
    """What the model says, in the C++ program's format."""
    cfg = load_config(ROOT / path)
    m = ReuseModel(cfg, cfg.reuse["P"])
    try:
        check_shapes(m)
    except Rejected:
        return "SHAPE\n"
    lines = []
    for t in range(m.threads):
        vals = []
        for _v, _i, _k, _r, held, want in slots(m, t):
            vals.append(f"{held[0] + m.M * held[1] if held else -1}:{want[0] + m.M * want[1]}")
        lines.append(f"T {t} " + " ".join(vals))
    return "\n".join(lines) + "\n"


def digest(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:16]


@pytest.mark.parametrize("path", CASES)
def test_model_matches_cute(path):
    assert path in TRUTH, "no stored ground truth: run pytest -m slow with the CuTe headers"
    assert digest(model_text(path)) == TRUTH[path]


# ---------------------------------------------------------------- the C++ side

def _perm_cpp(p):
    """A permutation entry of a configuration as C++ (an extent or a layout)."""
    from symlayout.algebra.notation import parse
    from cute_cpp import cpp_layout
    if isinstance(p, int) or str(p).isdigit():
        return f"Int<{p}>"
    return f"decltype({cpp_layout(str(p))})"


VIEW_CPP = '''
template <int K, class L>
auto acc_aregs(L acc) {   // flash-attention's conversion, as the kernel applies it
  if constexpr (rank(get<0>(acc)) == 3) {               // SM90: ((2,2,N/8),MMA_M,MMA_N)
    auto l = logical_divide(get<0, 2>(acc), Tile<_2>{});
    return make_layout(make_layout(get<0, 0>(acc), get<0, 1>(acc), get<0, 0>(l)), get<1>(acc),
                       coalesce(make_layout(get<0, 1>(l), get<2>(acc))));
  } else if constexpr (K == 8) {
    return acc;
  } else {                                               // SM80 K = 16: ((2,2),MMA_M,MMA_N)
    auto l = logical_divide(acc, Shape<Underscore, Underscore, _2>{});
    return make_layout(make_layout(get<0>(l), get<2, 0>(l)), get<1>(l), get<2, 1>(l));
  }
}
'''


def program(path) -> str:
    cfg = load_config(ROOT / path)
    rc = cfg.reuse["P"]
    raw = cfg.data
    m1 = raw["mma"]
    r = raw["reuse"]["P"]
    from symlayout.algebra.notation import parse
    lay1 = parse(m1.get("layout", "(1,1,1)"))
    lay1 = lay1.shape if hasattr(lay1, "shape") else lay1
    lay2 = parse(r["layout"]) if "layout" in r else lay1
    lay2 = lay2.shape if hasattr(lay2, "shape") else lay2
    p1 = [_perm_cpp(p) for p in m1.get("permutation", [])]
    p2 = [_perm_cpp(p) for p in r.get("permutation", m1.get("permutation", []))]
    a1, a2 = m1["atom"], r.get("mma", m1["atom"])
    k2 = ReuseModel(cfg, rc).mma2.atom.shape_mnk[2]
    M, N = rc.tile
    if rc.view == "acc_Aregs":
        view = f"acc_aregs<{k2}>(acc.layout())"
    elif rc.view == "none":
        view = "acc.layout()"
    else:
        from cute_cpp import cpp_layout
        view = cpp_layout(str(r["view"]))

    def mk(atom, lay, perm):
        tile = (", Tile<" + ", ".join(perm) + ">{}") if perm else ""
        return f"make_tiled_mma({atom}{{}}, Layout<Shape<{', '.join(f'_{x}' for x in lay)}>>{{}}{tile})"
    return f'''#include "cute_all.hpp"
#include <cute/atom/mma_traits_sm90_gmma.hpp>
#include <cute/arch/mma_sm90_gmma_ext.hpp>
#include <cute/atom/mma_traits_sm90_gmma_ext.hpp>
#include <cstdio>
using namespace cute;
{VIEW_CPP}
int main() {{
  auto mma1 = {mk(a1, lay1, p1)};
  auto mma2 = {mk(a2, lay2, p2)};
  auto cS = make_identity_tensor(make_shape(Int<{M}>{{}}, Int<{N}>{{}}));
  for (int t = 0; t < int(size(mma1)); ++t) {{
    auto tSc = mma1.get_slice(t).partition_C(cS);
    auto acc = make_tensor<int>(shape(tSc));
    for (int r = 0; r < int(size(acc)); ++r) acc(r) = get<0>(tSc(r)) + {M} * get<1>(tSc(r));
    auto P = make_tensor(acc.data(), {view});
    auto tOc = mma2.get_slice(t).partition_A(cS);
    if constexpr (rank(P) != 3 || size<0>(P) != size<0>(tOc) || size<1>(P) != size<1>(tOc) ||
                  size<2>(P) != size<2>(tOc)) {{
      printf("SHAPE\\n");
      return 0;
    }} else {{
      printf("T %d", t);
      for (int k = 0; k < int(size<2>(tOc)); ++k)
        for (int i = 0; i < int(size<1>(tOc)); ++i)
          for (int v = 0; v < int(size<0>(tOc)); ++v)
            printf(" %d:%d", P(v, i, k), get<0>(tOc(v, i, k)) + {M} * get<1>(tOc(v, i, k)));
      printf("\\n");
    }}
  }}
}}
'''


@pytest.fixture(scope="module")
def gxx(tmp_path_factory):
    return Compiler(tmp_path_factory.mktemp("cute_reuse"))


@pytest.mark.slow
@needs_cute
@pytest.mark.parametrize("path", CASES)
def test_truth_is_cute(gxx, path):
    out, asserts = gxx.run(program(path))
    assert not asserts, asserts
    assert out == model_text(path)
    assert TRUTH.get(path) == digest(out)


# ---------------------------------------------------------------- the verdicts

@pytest.mark.parametrize("path", CASES[:6])
def test_flash_attention_p_reuse_proved(path):
    rs, rep = results(ROOT / path)
    r = rs[("slot_agreement", "reuse.P")]
    assert r.status == "proved" and r.checked > 0
    assert rs[("type_agreement", "reuse.P")].status == "proved"
    assert rep.ok


def test_permuted_n_refuted_with_thread_register_and_elements():
    rs, rep = results(ROOT / "proofs/kernel/pitfalls/fa2_p_permuted_n.toml")
    cex = rs[("slot_agreement", "reuse.P")].counterexample
    assert rs[("slot_agreement", "reuse.P")].status == "refuted"
    assert (cex.thread, cex.slot, tuple(cex.element), cex.extra["expected_element"]) == (0, 1, (0, 2), [0, 1])
    assert "holds S(m=0, n=2)" in cex.message and rep.ok


def test_another_atom_is_refuted_with_the_element():
    rs, rep = results(ROOT / "proofs/kernel/pitfalls/p_reuse_tf32_atom.toml")
    cex = rs[("slot_agreement", "reuse.P")].counterexample
    assert (cex.thread, cex.slot, tuple(cex.element), cex.extra["expected_element"]) == (0, 1, (0, 1), [8, 0])
    assert rep.ok


def test_missing_view_is_a_compile_refutation():
    rs, rep = results(ROOT / "proofs/kernel/pitfalls/fa2_p_without_acc_Aregs.toml")
    r = rs[("slot_agreement", "reuse.P")]
    assert r.status == "refuted" and r.method == "cute" and "(4, 2, 8)" in r.counterexample.message
    assert rep.ok


def test_unconverted_accumulator_refutes_type_agreement():
    rs, _rep = results(ROOT / "proofs/kernel/pitfalls/fa2_p_not_converted.toml")
    r = rs[("type_agreement", "reuse.P")]
    assert r.status == "refuted" and r.counterexample.extra == {"held_type": "float", "mma_type": "half_t"}


BASE = '[mma]\natom = "SM80_16x8x16_F32F16F16F32_TN"\nlayout = "(4,1,1)"\n'


@pytest.mark.parametrize("table, msg", [
    ('[reuse.P]\nfrom = "A"\ntile = "(64,64)"\n', "only the accumulator"),
    ('[reuse.P]\nfrom = "C"\ntile = "(64,64,2)"\n', "tile must be the accumulator's (M,N)"),
    ('[reuse.P]\nfrom = "C"\ntile = "(64,64)"\nview = "sideways"\n', "view"),
    ('[reuse.P]\nfrom = "C"\ntile = "(64,64)"\nmma = "SM90_64x64x16_F32F16F16_SS"\n', "needs an RS atom"),
    ('[reuse.P]\nfrom = "C"\ntile = "(64,64)"\nlayout = "(4,4,4)"\n', "[reuse.P] layout"),
    ('[reuse.P]\nfrom = "C"\ntile = "(64,64)"\ncolour = 1\n', "unknown key 'colour'"),
])
def test_bad_reuse_tables_are_one_line_errors(table, msg):
    one_line_error(BASE + table, msg, "x.toml")


def test_reuse_needs_an_mma():
    with pytest.raises(ConfigError, match="needs an \\[mma\\]"):
        loads_config('[threadmap]\nkind = "offset"\nthreads = 4\noffset = "t"\nextent = 4\n'
                     '[reuse.P]\nfrom = "C"\ntile = "(64,64)"\n', "x.toml")


def test_tile_not_a_multiple_is_an_error_result():
    cfg = loads_config(BASE + '[reuse.P]\nfrom = "C"\ntile = "(64,24)"\n', "x.toml")
    rep = prove_config(cfg)
    assert rep.error and "not a multiple" in rep.error
