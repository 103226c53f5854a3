"""Global <-> shared memory copies (``[g2s.X]``, ``[s2g.C]``) against CuTe C++ (issue 14).

Ground truth: for each case, a host program built with g++ against the CuTe headers makes the real
``make_tiled_copy(Copy_Atom<atom, T>{}, thr, val)`` (or ``make_tiled_copy_impl``), partitions a gmem
tensor with a run-time leading dimension and the smem tensor with ``partition_S``/``partition_D``,
instantiates ``copy(tiled_copy, src, dst)`` (its static_asserts) and prints, per thread, the
(gmem offset, smem offset) of every value, grouped by instruction (the atom's values, or the width
CuTe's auto-vectorizing copy picks).  The digests are stored here, so the default run needs no
compiler; ``pytest -m slow`` with the headers (``SYMLAYOUT_CUTE_SITE`` or an installed
``cutlass_library``) recompiles every case and checks the stored truth.
"""
import hashlib

import pytest

from cute_cpp import Compiler, _int_tuple, cpp_layout, needs_cute, vec_elems_cpp
from symlayout.config import loads_config
from symlayout.errors import CuteStaticAssert
from symlayout.prove.datapath.g2s import build_global_model

FA2_Q = "Sw<3,3,3> o ((8,16),(64,1)):((64,512),(1,0))"
# (name, kind, operand, atom, type, thr/val or tv/tiler, smem, gmem ("k": ld along mode 1 or "m"), ld)
CASES = [
    ("fa2_q", "g2s", "A", "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", "half_t", ("(16,8):(8,1)", "(1,8)"), FA2_Q,
     "k", 72),
    ("fa2_q_tv", "g2s", "A", "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", "half_t", ("tv", "((8,16),8):((128,1),16)", "(16,64)"),
     FA2_Q, "k", 64),
    ("fa2_vt", "g2s", "B", "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", "half_t", ("(8,16):(1,8)", "(8,1)"),
     "Sw<3,3,3> o (64,128):(1,64)", "m", 136),
    ("cutlass_f16", "g2s", "A", "SM80_CP_ASYNC_CACHEALWAYS<uint128_t>", "half_t", ("(32,4):(4,1)", "(1,8)"),
     "Sw<2,3,3> o ((8,16),(32,1)):((32,256),(1,0))", "k", 40),
    ("cutlass_tf32", "g2s", "B", "SM80_CP_ASYNC_CACHEALWAYS<uint128_t>", "tfloat32_t", ("(16,8):(8,1)", "(1,4)"),
     "Sw<3,2,3> o ((8,16),(32,1)):((32,256),(1,0))", "k", 36),
    ("universal_u128_half", "s2g", "C", "UniversalCopy<uint128_t>", "half_t", ("(16,16):(16,1)", "(1,8)"),
     "Sw<3,3,3> o ((8,16),(64,2)):((64,512),(1,8192))", "k", 136),
    ("avc_fa2_o", "s2g", "C", "AutoVectorizingCopy", "half_t", ("(16,8):(8,1)", "(1,8)"), FA2_Q, "k", 64),
    ("u32_half", "g2s", "A", "UniversalCopy<uint32_t>", "half_t", ("(32,4):(4,1)", "(1,8)"),
     "(128,32):(32,1)", "k", 32),
    ("sw_splits_vector", "g2s", "A", "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", "half_t", ("(16,8):(8,1)", "(1,8)"),
     "Sw<3,2,3> o (64,64):(64,1)", "k", 64),
    ("m_contiguous_gmem", "g2s", "A", "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", "half_t", ("(16,8):(8,1)", "(1,8)"),
     "(64,64):(64,1)", "m", 64),
    ("dynamic_unit_stride", "g2s", "A", "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", "half_t", ("(16,8):(8,1)", "(1,8)"),
     FA2_Q, "dyn1", 64),
    ("sw_splits_vector_per_call", "g2s", "A", "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", "half_t",
     ("(32,4):(4,1)", "(1,8)"), "Sw<3,2,3> o (128,64):(64,1)", "k", 128),
    ("tiler_does_not_divide", "g2s", "A", "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", "half_t", ("(16,8):(8,1)", "(1,8)"),
     "(40,64):(64,1)", "k", 64),
    ("tiler_reaches_next_column", "g2s", "A", "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", "half_t", ("(8,16):(1,8)", "(8,1)"),
     "(40,128):(1,40)", "m", 40),
]

# sha1[:16] of the canonical text (see canonical()); "REJECT" where CuTe does not compile the copy; a TiledCopy
# tile that does not divide the tile is compiled, and its partitions reach past the tile
TRUTH = {
    "fa2_q": "abfdd6d9ed97bdd9",
    "fa2_q_tv": "4e584d606987495f",
    "fa2_vt": "20b910c16f2931d6",
    "cutlass_f16": "1287326532067975",
    "cutlass_tf32": "fbecda59fe009ea3",
    "universal_u128_half": "cbad24cb7f49fc79",
    "avc_fa2_o": "4e584d606987495f",
    "u32_half": "8ecf7933f5cd7a48",
    "sw_splits_vector": "REJECT",
    "m_contiguous_gmem": "REJECT",
    "dynamic_unit_stride": "REJECT",
    "sw_splits_vector_per_call": "REJECT",        # copy() slices at a run-time index: (4,2):(1,4), 4 run-time
    "tiler_does_not_divide": "591edff3f1632123",       # rows 40..47 past the tile, written (issue 26.4)
    "tiler_reaches_next_column": "0227af8b5a0696ff",   # rows 40..63 land on the next column's rows 0..23
}


def _toml(case):
    name, kind, op, atom, ty, tiled, smem, major, ld = case
    from symlayout.algebra.notation import parse
    L = parse(smem)
    inner = getattr(L, "inner", L)
    from symlayout.algebra import int_tuple as it
    M, N = (it.product(inner.shape[0]), it.product(inner.shape[1]))
    gmem = {"k": f"({M},{N}):(ld,1)", "m": f"({M},{N}):(1,ld)", "dyn1": f"({M},{N}):(ld,s)"}[major]
    t = tiled[1:] if tiled[0] == "tv" else tiled
    keys = f'tv = "{t[0]}"\ntiler = "{t[1]}"\n' if tiled[0] == "tv" else f'thr = "{t[0]}"\nval = "{t[1]}"\n'
    extra = "s = { min = 1, max = 1 }\n" if major == "dyn1" else ""
    return (f'[params]\nld = {{ min = {ld}, max = {ld} }}\n{extra}[mma]\natom = "SM80_16x8x16_F32F16F16F32_TN"\n'
            f'[{kind}.{op}]\natom = "{atom}"\ntype = "{ty}"\nsmem = "{smem}"\n{keys}gmem = "{gmem}"\n'
            f"gmem_align = 128\n")


def canonical(w, threads) -> str:
    """``W k`` then per thread its instructions, each ``g:s,g:s,...`` (gmem and smem element offsets
    of its values), sorted."""
    lines = [f"W {w}"]
    for t, groups in threads:
        lines.append(f"T {t} " + " ".join(sorted(",".join(f"{g}:{s}" for g, s in grp) for grp in groups)))
    return "\n".join(lines) + "\n"


def model_text(case) -> str:
    cfg = loads_config(_toml(case))
    gc = (cfg.g2s or cfg.s2g)[case[2]]
    try:
        m = build_global_model(gc, cfg.params)
    except CuteStaticAssert:
        return "REJECT"
    (asg, G), = m.gmem_tables()
    S = m.smem_addr
    return canonical(m.k, [(t, [[(G[i], S[i]) for i in a] for a in accs]) for t, accs in sorted(m.accesses.items())])


def _lay(text):
    """A layout, or a shape alone (``Layout<Shape<...>>``: compact column-major)."""
    if ":" in text:
        return cpp_layout(text)
    from symlayout.algebra.notation import parse
    return f"make_layout({_int_tuple(parse(text), 'shape')})"


def _ctype(ty):
    return {"half_t": "half_t", "tfloat32_t": "tfloat32_t", "float": "float"}[ty]


def program(case) -> str:
    name, kind, op, atom, ty, tiled, smem, major, ld = case
    from symlayout.algebra.notation import parse
    inner = getattr(parse(smem), "inner", parse(smem))
    from symlayout.algebra import int_tuple as it
    M, N = (it.product(inner.shape[0]), it.product(inner.shape[1]))
    stride = {"k": "make_stride(ld, Int<1>{})", "m": "make_stride(Int<1>{}, ld)", "dyn1": "make_stride(ld, s)"}[major]
    atom_cpp = atom.replace("AutoVectorizingCopy", "AutoVectorizingCopyWithAssumedAlignment<128>")
    if tiled[0] == "tv":
        tl = parse(tiled[2])
        tc = (f"make_tiled_copy_impl(Copy_Atom<{atom_cpp}, T>{{}}, {cpp_layout(tiled[1])}, "
              f"Shape<Int<{tl[0]}>, Int<{tl[1]}>>{{}})")
    else:
        tc = f"make_tiled_copy(Copy_Atom<{atom_cpp}, T>{{}}, {_lay(tiled[0])}, {_lay(tiled[1])})"
    src, dst = ("gX", "sX") if kind == "g2s" else ("sX", "gX")
    avc = atom.startswith("AutoVectorizing")
    return f'''#include "cute_all.hpp"
#include <cstdio>
#include <cstdlib>
#include <vector>
using namespace cute;
{vec_elems_cpp(128)}
int main(int argc, char** argv) {{
  int ld = {ld}, s = argc;              // s: a run-time stride of value 1
  using T = {_ctype(ty)};
  auto sL = {cpp_layout(smem)};
  auto gL = make_layout(make_shape(Int<{M}>{{}}, Int<{N}>{{}}), {stride});
  static T sbuf[cosize_v<decltype(sL)>];
  std::vector<T> gbuf(size_t(cosize(gL)));
  auto gX = make_tensor(make_gmem_ptr(gbuf.data()), gL);
  auto sX = make_tensor(make_smem_ptr(sbuf), sL);
  auto tc = {tc};
  for (int t = 0; t < int(size(tc)); ++t) {{
    auto thr = tc.get_slice(t);
    auto src = thr.partition_S({src});
    auto dst = thr.partition_D({dst});
    int w = {"vec_elems(src, dst)" if avc else "int(size<1>(typename decltype(tc)::AtomLayoutRef{}))"};
    if (t == 0) printf("W %d\\n", w);
    if (argc > 5) copy(tc, src, dst);          // never run: instantiates copy()'s static_asserts
    printf("T %d", t);
    for (int i = 0; i < int(size(src)); ++i) {{
      auto g = &{"src" if kind == "g2s" else "dst"}(i) - gbuf.data();
      auto s = &{"dst" if kind == "g2s" else "src"}(i) - sbuf;
      printf("%s%d:%d", i % w == 0 ? " " : ",", int(g), int(s));
    }}
    printf("\\n");
  }}
}}
'''


def cpp_text(out: str) -> str:
    """The program's output in :func:`canonical` form."""
    lines = out.strip().splitlines()
    w = int(lines[0].split()[1])
    threads = []
    for ln in lines[1:]:
        parts = ln.split()
        groups = [[tuple(int(x) for x in p.split(":")) for p in grp.split(",")] for grp in parts[2:]]
        threads.append((int(parts[1]), groups))
    return canonical(w, threads)


def digest(text):
    return text if text == "REJECT" else hashlib.sha1(text.encode()).hexdigest()[:16]


def overruns(case, out) -> bool:
    """CuTe's partitions touch more elements than the tile has (zipped_divide rounds the rest
    modes up when the tiler does not divide the tile)."""
    from symlayout.algebra.notation import parse
    inner = getattr(parse(case[6]), "inner", parse(case[6]))
    return sum(ln.count(":") for ln in out.splitlines()[1:]) > inner.size()


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_model_matches_cute(case):
    assert case[0] in TRUTH, "no stored ground truth: run pytest -m slow with the CuTe headers"
    assert digest(model_text(case)) == TRUTH[case[0]]


@pytest.fixture(scope="module")
def gxx(tmp_path_factory):
    return Compiler(tmp_path_factory.mktemp("cute_g2s"))


@pytest.mark.slow
@needs_cute
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_truth_is_cute(gxx, case):
    out, asserts = gxx.run(program(case))
    truth = "REJECT" if asserts else digest(cpp_text(out))
    assert truth == TRUTH.get(case[0]), (case[0], truth, asserts[:1])
    assert overruns(case, out) == case[0].startswith("tiler_")      # the partitions reach past the tile


# ---------------------------------------------------------------- hand-built [copy.X] (thr/val, tv/tiler)

F32ACC = "SM80_16x8x16_F32F16F16F32_TN"
F16 = "SM80_16x8x16_F16F16F16F16_TN"
# (configuration as tests/cute_cpp.py, hand-built TiledCopy): MMA-derived TVs written by hand (A through
# ldmatrix, C through UniversalCopy<uint32_t>, whose movement runs on the host), and three CuTe rejects
HANDBUILT = [
    ((F32ACC, "(4,1,1):(1,0,0)", (64, 16, 16), "A", "SM75_U32x4_LDSM_N", "half_t", FA2_Q),
     ("tv", "((4,8,4),((2,2,2),(1,1))):((128,1,16),((64,8,512),(0,0)))", "(64,16)")),
    ((F32ACC, "(4,1,1):(1,0,0)", (64, 16, 16), "A", "SM75_U32x4_LDSM_N", "half_t", FA2_Q),
     ("thr", "(32,4):(1,32)", "(1,8)")),
    ((F16, "(2,2,1)", None, "C", "UniversalCopy<uint32_t>", "half_t", "(32,32):(32,1)"),
     ("tv", "((4,8,2,2),((2,2),(1,1))):((64,1,16,256),((32,8),(0,0)))", "(32,16)")),
    ((F16, "(2,2,1)", None, "C", "UniversalCopy<uint32_t>", "half_t", "(32,32):(32,1)"),
     ("tv", "((4,8,2,2),((2,2),(1,1))):((64,1,16,1024),((32,8),(0,0)))", "(32,32)")),
    ((F16, "(2,2,1)", None, "B", "SM75_U32x2_LDSM_N", "half_t", "Sw<2,3,3> o (32,32):(32,1)"),
     ("thr", "(32,4):(4,1)", "(1,4)")),
]

# (first static_assert or None, digest of the movement when it compiles and runs on the host)
HANDBUILT_TRUTH = [
    (None, None),
    ('Copy_Traits: src failed to vectorize into registers. Layout is incompatible with this CopyOp.', None),
    (None, '04b315f727eadc16'),
    ('', None),
    ('', None),
]


def _tiled_spec(tiled):
    from symlayout.config import TiledCopySpec
    from symlayout.algebra.layout import Layout
    from symlayout.algebra.notation import parse
    if tiled[0] == "tv":
        t = parse(tiled[2])
        return TiledCopySpec(tv=parse(tiled[1]), tiler=tuple(t))
    v = parse(tiled[2])
    return TiledCopySpec(thr=parse(tiled[1]), val=v if hasattr(v, "shape") else Layout(v))


def handbuilt_model_truth(cfg, tiled):
    from cute_cpp import model_movement
    from symlayout.prove.copy.model import CuteRejects, build_operand_model, cute_build_check
    from symlayout.tiled.mma import make_tiled_mma
    from symlayout.algebra.notation import parse
    mma = make_tiled_mma(cfg[0], parse(cfg[1]), list(cfg[2]) if cfg[2] else None)
    spec = _tiled_spec(tiled)
    try:
        cute_build_check(mma, cfg[3], cfg[4], cfg[5], cfg[6], tiled=spec)
        m = build_operand_model(mma, None, None, cfg[3], cfg[4], cfg[5], cfg[6], tiled=spec)
    except CuteRejects as e:
        return e.assertion, None
    if not _on_host(cfg[4]):
        return None, None
    return None, _movement_digest(model_movement(m))


def _movement_digest(text):
    """Digest of what moved (the ``W`` line, CuTe's auto-vectorizing width, does not apply to these atoms)."""
    return hashlib.sha1(text.split("\n", 1)[1].encode()).hexdigest()[:16]


def _on_host(atom):
    """Atoms whose copy runs on the host (ldmatrix/stmatrix/cp.async only compile there)."""
    return atom.startswith(("UniversalCopy", "AutoVectorizing", "DefaultCopy"))


def same_verdict(ours, cute) -> bool:
    """CuTe's CUTE_STATIC_ASSERT_V has no message (g++ prints none): any rejection matches it."""
    if cute[0] == "":
        return ours[0] is not None and ours[1] is None
    return ours == cute


@pytest.mark.parametrize("i", range(len(HANDBUILT)))
def test_handbuilt_copy_matches_cute(i):
    assert len(HANDBUILT_TRUTH) == len(HANDBUILT), "no stored ground truth: run pytest -m slow with the headers"
    assert same_verdict(handbuilt_model_truth(*HANDBUILT[i]), HANDBUILT_TRUTH[i])


@pytest.mark.slow
@needs_cute
@pytest.mark.parametrize("i", range(len(HANDBUILT)))
def test_handbuilt_truth_is_cute(gxx, i):
    cfg, tiled = HANDBUILT[i]
    cpp = cfg
    asserts = gxx.static_asserts(cpp, tiled)
    if asserts:
        truth = (asserts[0], None)
    elif not _on_host(cfg[4]):
        truth = (None, None)
    else:
        truth = (None, _movement_digest(gxx.movement(cpp, 128, tiled)))
    assert truth == HANDBUILT_TRUTH[i]
