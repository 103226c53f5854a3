"""The Tensor Memory properties (prove/blackwell/tmem.py): each proved and refuted, the refutations naming
the cell / warp / register, and the copy routes against CuTe C++ (make_tmem_copy over a subtile of the
accumulator, flat_divide'd as CUTLASS's epilogue does, over random atoms x M/N x stages)."""
from __future__ import annotations

import dataclasses
import random
from pathlib import Path
from xml.etree import ElementTree
from types import SimpleNamespace

import pytest

from sm100_cpp import compiler, cpp_atom
from symlayout import cli
from symlayout.algebra.layout import Layout
from symlayout.arch import tcgen05 as arch
from symlayout.atoms import umma
from symlayout.atoms.tmem import SHAPES
from symlayout.config import loads_config
from symlayout.config.tmem import TmemConfig, TmemCopyConfig
from symlayout.errors import ConfigError
from symlayout.prove.blackwell.tmem import (TMEM_PROPERTIES, copy_coverage, ld_agreement, mma_agreement,
                                            prove_tmem, tmem_access, tmem_alloc)
from symlayout.prove.blackwell.tmem_model import accumulator_plan, copy_routes
from symlayout.tiled.mma import make_tiled_mma
from symlayout.tiled.tmem import tmem_frg_layout


def _mma(m, n, pair=False, ab="half_t", c="float", ts=False):
    fam = {"half_t": "F16BF16", "tfloat32_t": "TF32", "int8_t": "S8"}[ab]
    name = f"SM100_MMA_{fam}{'_2x1SM' if pair else ''}_{'TS' if ts else 'SS'}<{ab},{ab},{c},{m},{n}," \
           "UMMA::Major::K,UMMA::Major::K>"
    return make_tiled_mma(umma.umma_mma_atom(name))


def _prove(mma, tm=None, cc=None):
    cfg = SimpleNamespace(tmem=tm, tmem_copies={"C": cc} if cc else {})
    return {(r.property, r.operand, r.via): r for r in prove_tmem(cfg, mma, TMEM_PROPERTIES)}


FMHA = {"S0": (0, 128), "S1": (128, 128), "O0": (256, 128), "O1": (384, 128), "P0": (32, 32), "P1": (160, 32)}


# --- the data path of tcgen05.mma ----------------------------------------------

def test_datapath_layouts():
    """Layouts D/A (a row per lane), F (16 rows per warp chunk), B (column halves on the lane halves)."""
    assert [arch.datapath_cell("D", 8, m, 3) for m in (0, 127)] == [(0, 3), (127, 3)]
    assert [arch.datapath_cell("F", 8, m, 3) for m in (15, 16, 63)] == [(15, 3), (32, 3), (111, 3)]
    assert arch.datapath_cell("B", 64, 63, 32) == (127, 0) and arch.datapath_cell("G", 64, 1, 50) == (97, 2)
    with pytest.raises(ValueError):
        arch.datapath(64, 2)


@pytest.mark.parametrize("m,n,pair", [(128, 256, False), (64, 128, False), (256, 128, True), (128, 64, True)])
def test_mma_agreement_proved(m, n, pair):
    r = mma_agreement(accumulator_plan(_mma(m, n, pair), stages=2))
    assert r.status == "proved" and r.checked == m * n * 2


def test_mma_agreement_refuted():
    """A layout that is not CuTe's (one row per lane for an M = 64 MMA, whose D the PTX puts 16 rows per
    warp chunk) is refuted with the element and both cells."""
    mma = _mma(64, 64)
    wrong = tmem_frg_layout(32, 32, 1, "Interleaved", ((128, 32), 1, 1, 1))
    plan = accumulator_plan(mma, 1, frg=Layout(((64, 64), 1, 1, 1), ((1, 128), 0, 0, 0)))
    r = mma_agreement(plan)
    assert r.status == "refuted" and "C(m=16, n=0)" in r.counterexample.message
    assert "lane 32, column 0" in r.counterexample.message and "lane 16, column 0" in r.counterexample.message
    assert wrong.size() == 128 * 32


# --- tmem_alloc --------------------------------------------------------------------

def test_alloc_proved_and_384_refuted():
    mma = _mma(128, 192)
    plan = accumulator_plan(mma, 2)
    assert tmem_alloc(TmemConfig(512, 2), plan).status == "proved"
    r = tmem_alloc(TmemConfig(384, 2), plan)
    assert r.status == "refuted" and "not a power of two" in r.counterexample.message


def test_alloc_stage_outside():
    plan = accumulator_plan(_mma(128, 256), 2)
    r = tmem_alloc(TmemConfig(256, 2), plan)
    assert r.status == "refuted"
    assert "accumulator stage 1 (element (m=0, n=0)) is at TMEM lane 0, column 256" in r.counterexample.message


def test_alloc_too_many_stages_is_cutes_assert():
    r = _prove(_mma(128, 256), TmemConfig(512, 3))[("tmem_alloc", "tmem", "")]
    assert r.status == "refuted" and r.method == "cute"
    assert "Requesting more TMEM than is available." in r.counterexample.message


def test_fmha_plan_with_aliases_proved():
    plan = accumulator_plan(_mma(128, 128), 2)
    tm = TmemConfig(512, 2, 0, FMHA, ("S0", "S1"), {"P0": "S0", "P1": "S1"})
    r = tmem_alloc(tm, plan)
    assert r.status == "proved" and r.checked > 128 * 512


def test_fmha_plan_overlaps_refuted():
    """P1 placed over O0 instead of S1; P1 over S1 without the alias; a stage outside its region."""
    plan = accumulator_plan(_mma(128, 128), 2)
    tm = TmemConfig(512, 2, 0, dict(FMHA, P1=(288, 32)), ("S0", "S1"), {"P0": "S0", "P1": "S1"})
    msg = tmem_alloc(tm, plan).counterexample.message
    assert "lane 0, column 288" in msg and "region O0" in msg and "region P1" in msg
    msg = tmem_alloc(dataclasses.replace(tm, regions=FMHA, aliases={"P0": "S0"}), plan).counterexample.message
    assert "accumulator stage 1 (element (m=0, n=32))" in msg and "region P1" in msg
    swapped = dataclasses.replace(tm, regions=FMHA, accumulator_regions=("S1", "S0"))
    assert "outside its region S1" in tmem_alloc(swapped, plan).counterexample.message


# --- the tcgen05.ld copy -------------------------------------------------------------

EPILOGUE = TmemCopyConfig("C", "SM100_TMEM_LOAD_32dp32b16x", (128, 16), (4, 5, 6, 7))


def test_epilogue_copy_proved():
    rs = _prove(_mma(128, 128), TmemConfig(512, 2), EPILOGUE)
    assert {k: r.status for k, r in rs.items()} == {
        ("slot_agreement", "C", "tcgen05.mma"): "proved", ("tmem_alloc", "tmem", ""): "proved",
        ("slot_agreement", "tmem_copy.C", "tcgen05.ld"): "proved", ("coverage", "tmem_copy.C", ""): "proved",
        ("exactly_once", "tmem_copy.C", ""): "proved", ("tmem_access", "tmem_copy.C", ""): "proved"}
    assert rs[("slot_agreement", "tmem_copy.C", "tcgen05.ld")].checked == 128 * 128 * 2


def test_access_refuted_warps_not_from_a_multiple_of_4():
    r = _prove(_mma(128, 128), TmemConfig(512, 2), dataclasses.replace(EPILOGUE, warps=(1, 2, 3, 4)))
    cex = r[("tmem_access", "tmem_copy.C", "")].counterexample
    assert cex.extra == {"warp": 1, "lane": 0, "column": 0} and cex.thread == 0 and cex.slot == 0
    assert "warp 1" in cex.message and "lanes 32..63 only" in cex.message and cex.route


@pytest.mark.parametrize("atom", ["SM100_TMEM_LOAD_16dp256b2x", "SM100_TMEM_LOAD_16dp32b8x",
                                  "SM100_TMEM_LOAD_16dp64b4x", "SM100_TMEM_LOAD_16dp128b2x"])
def test_m64_half_lane_loads_proved(atom):
    rs = _prove(_mma(64, 64), TmemConfig(128, 2), TmemCopyConfig("C", atom, None, (0, 1, 2, 3)))
    assert all(r.status == "proved" for r in rs.values()), {k: r.status for k, r in rs.items()}


def test_32_lane_load_of_m64_is_cutes_assert():
    rs = _prove(_mma(64, 64), TmemConfig(64, 1), TmemCopyConfig("C", "SM100_TMEM_LOAD_32dp32b8x", None, (0, 1, 2, 3)))
    r = rs[("slot_agreement", "tmem_copy.C", "tcgen05.ld")]
    assert r.status == "refuted" and r.method == "cute"
    assert "does not exist in the DataLayout" in r.counterexample.message
    assert ("tmem_access", "tmem_copy.C", "") not in rs


def test_ld_agreement_coverage_once_refuted_on_broken_routes():
    """The checks catch a register that holds another element, an element no register gets, and one two get."""
    plan = accumulator_plan(_mma(128, 64), 1)
    cr = copy_routes(plan, "SM100_TMEM_LOAD_32dp32b16x", (128, 16))
    assert ld_agreement(plan, cr).status == "proved"
    r0 = cr.route(5)
    cr.replace(5, n=r0.element[1] + 1)
    r = ld_agreement(plan, cr)
    assert r.status == "refuted" and f"thread {r0.thread}, register {r0.register}" in r.counterexample.message
    assert r.counterexample.route == [
        f"C(m={r0.element[0]}, n={r0.element[1] + 1}) of stage 0 -> thread {r0.thread}, register {r0.register} of "
        f"call {r0.call} -> tcgen05.ld.sync.aligned.32x32b.x16.b32 moves TMEM lane {r0.cell[0]}, column {r0.cell[1]}"]
    r6 = cr.route(6)
    cr.replace(5, n=r0.element[1], lane=r6.cell[0], col=r6.cell[1])
    cov, once = copy_coverage(plan, cr)
    assert cov.status == "refuted" and f"TMEM lane {r0.cell[0]}, column {r0.cell[1]}" in cov.counterexample.message
    assert once.status == "refuted" and "moved twice" in once.counterexample.message


def test_store_atom():
    rs = _prove(_mma(128, 64), TmemConfig(128, 1), TmemCopyConfig("C", "SM100_TMEM_STORE_32dp32b8x", (128, 32),
                                                                  (8, 9, 10, 11)))
    assert all(r.status == "proved" for r in rs.values())


def test_access_of_routes_directly():
    plan = accumulator_plan(_mma(128, 64), 1)
    cr = copy_routes(plan, "SM100_TMEM_LOAD_32dp32b16x", None)
    assert tmem_access(cr, (0, 1, 2, 3)).status == "proved"
    assert tmem_access(cr, (0, 1, 3, 2)).counterexample.extra["warp"] == 3


# --- the configuration tables --------------------------------------------------------

BASE = '[mma]\natom = "SM100_MMA_F16BF16_TS<half_t,half_t,float,128,64,UMMA::Major::K,UMMA::Major::K>"\n'
SMEM_B = ('[smem.B]\ntype = "half_t"\n'
          'layout = "Sw<3,4,3> o smem_ptr[16b](unset) o ((_64,_16),_1,_4):((_64,_1),_0,_16)"\n')


@pytest.mark.parametrize("text,line,says", [
    ('[tmem]\ncolumns = 512\nregions = { S0 = [0, -1] }\n', 5, "regions.S0"),
    ('[tmem]\ncolumns = 512\naccumulator_stages = 2\nregions = { S0 = [0, 1] }\naccumulator_regions = ["S0"]\n', 7,
     "one per stage"),
    ('[tmem]\ncolumns = 512\naliases = { P = "S" }\n', 5, "not one of the regions"),
    ('[tmem]\ncolums = 512\n', 4, "did you mean 'columns'"),
    ('[tmem_copy.C]\natom = "SM100_TMEM_LOAD_16dp256b64x"\n', 4, "CuTe defines no such atom"),
    ('[tmem_copy.C]\natom = "SM100_TMEM_LOAD_32dp32b4x"\nwarps = [4, 5, 6]\n', 5, "four warp indices"),
    ('[tmem_copy.C]\natom = "SM100_TMEM_LOAD_32dp32b4x"\ntile = "(128,16,2)"\n', 5, "two positive integers"),
    ('[tmem_copy.B]\natom = "SM100_TMEM_LOAD_32dp32b4x"\n', 3, "[tmem_copy.C]"),
])
def test_bad_tables(text, line, says):
    with pytest.raises(ConfigError) as e:
        loads_config(BASE + text + SMEM_B, "f.toml")
    msg = str(e.value)
    assert msg.startswith(f"f.toml:{line}: ") and says in msg and "\n" not in msg


def test_tmem_needs_an_sm100_atom():
    with pytest.raises(ConfigError, match=r"^f.toml:3: \[tmem\]: \[mma\] atom 'SM80_16x8x16_F16F16F16F16_TN' is not"):
        loads_config('[mma]\natom = "SM80_16x8x16_F16F16F16F16_TN"\n[tmem]\ncolumns = 128\n', "f.toml")


def test_tables_read():
    cfg = loads_config(BASE + '[tmem]\ncolumns = 512\naccumulator_stages = 2\nregions = { S0 = [0, 128], S1 = '
                              '[128, 128], P0 = [32, 32] }\naccumulator_regions = ["S0", "S1"]\n'
                              'aliases = { P0 = "S0" }\n'
                              '[tmem_copy.C]\natom = "SM100_TMEM_LOAD_32dp32b16x"\ntile = "(128,16)"\n'
                              'warps = [4, 5, 6, 7]\n' + SMEM_B)
    assert cfg.tmem == TmemConfig(512, 2, 0, {"S0": (0, 128), "S1": (128, 128), "P0": (32, 32)}, ("S0", "S1"),
                                  {"P0": "S0"}, "sm_100", 3)
    assert cfg.tmem_copies["C"] == TmemCopyConfig("C", "SM100_TMEM_LOAD_32dp32b16x", (128, 16), (4, 5, 6, 7), 9)


# --- CuTe C++: make_tmem_copy over a flat_divide'd accumulator, random cases ---------------

def _random_cases(n, seed=28):
    """``(m, n, pair, ab, c, ts, stages, atom, tile)``: F16BF16 (f32 or f16 accumulator), TF32 and S8 atoms,
    SS and TS, 1 and 2 CTAs; 32dp32b over 128-lane accumulators, the four 16dp shapes over 64-lane ones,
    loads and stores, packed (_16b) or not, whole tiles and subtiles."""
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        pair = rng.random() < 0.35
        m = rng.choice((128, 256) if pair else (64, 128))
        ab = rng.choice(("half_t", "half_t", "tfloat32_t", "int8_t"))
        c = {"half_t": rng.choice(("float", "half_t")), "tfloat32_t": "float", "int8_t": "int32_t"}[ab]
        ts = rng.random() < 0.3
        nn = rng.choice(range(32, 257, 32))
        mm = m // 2 if pair else m
        stages = rng.choice((1, 2))
        if mm * nn * stages > 128 * 512:
            continue
        if mm == 128:
            shape = "32dp32b"
            num = rng.choice([x for x in (1, 2, 4, 8, 16, 32) if nn % x == 0])
            tile = (128, num * rng.choice((1, 2)) if nn % (2 * num) == 0 else num)
        else:
            shape = rng.choice(("16dp256b", "16dp32b", "16dp64b", "16dp128b"))
            num = rng.choice([x for x in (1, 2, 4, 8) if arch.LD_SHAPES[SHAPES[shape]][1] * x <= 128])
            tile = None
        pack = "_16b" if rng.random() < (0.7 if c == "half_t" else 0.15) else ""
        atom = f"SM100_TMEM_{rng.choice(('LOAD', 'STORE'))}_{shape}{num}x{pack}"
        out.append((m, nn, pair, ab, c, ts, stages, atom, tile))
    return out


def _rotr32(x: int, s: int) -> int:
    """CuTe's ``rotr`` of a 32-bit TMEM pointer offset (``tmem_ptr<T>::operator+``: T units to 32-bit words,
    a sub-word index kept in the high bits)."""
    return ((x >> s) | (x << (32 - s))) & 0xFFFFFFFF if s else x


def test_copy_routes_match_cute_random():
    """For each case: every thread's instruction addresses (one per atom call, CuTe's TMEM pointer) and the C
    offsets of its register values, of make_tmem_copy(atom, tAcc_epi(_,_,0,0)) partitioned over
    flat_divide(tAcc, tile), and the address of each accumulator stage, equal CuTe C++'s; cases our model
    rejects are rejected by CuTe with the same assertion (checked on one compile each, at most six)."""
    cxx = compiler()
    if cxx is None:
        pytest.skip("CuTe C++ headers (SYMLAYOUT_CUTE_SITE) or g++ not available")
    cases, rejected = [], []
    for m, n, pair, ab, c, ts, stages, atom, tile in _random_cases(32):
        mma = _mma(m, n, pair, ab, c, ts)
        plan = accumulator_plan(mma, stages)
        cr = copy_routes(plan, atom, tile)
        (rejected if cr.error else cases).append((mma, plan, cr, m, n, stages, atom))
    assert len(cases) >= 12
    plan64 = accumulator_plan(_mma(64, 64), 1)                  # a 32-lane load of an M = 64 accumulator
    rejected.append((_mma(64, 64), plan64, copy_routes(plan64, "SM100_TMEM_LOAD_32dp32b8x", None), 64, 64, 1,
                     "SM100_TMEM_LOAD_32dp32b8x"))
    body = ["int main() {"]
    for i, (mma, plan, cr, m, n, stages, atom) in enumerate(cases):
        op = umma.parse_umma_name(mma.atom.name)
        tm, tn = cr.tile
        body += [f"  {{ auto mma = make_tiled_mma({cpp_atom(op)});",
                 f"    static {op.c_type} buf[{m * n}];",
                 f"    auto gC = make_tensor(make_gmem_ptr(buf), make_layout(make_shape(Int<{m}>{{}}, Int<{n}>{{}})));",
                 "    auto tCgC = mma.get_slice(0).partition_C(gC);",
                 f"    auto acc = make_tensor<typename decltype(mma)::FrgTypeC>(partition_shape_C(mma, "
                 f"make_shape(Int<{m}>{{}}, Int<{n}>{{}}, Int<{stages}>{{}})));",
                 f'    printf("{i} A"); for (int s = 0; s < {stages}; ++s) printf(" %u", '
                 "uint32_t(raw_pointer_cast(acc(make_coord(_,_),0,0,s).data())));",
                 '    printf("\\n");',
                 "    auto tAcc = acc(make_coord(_,_),0,0,0);",
                 f"    auto epi = make_tile(Int<{tm}>{{}}, Int<{tn}>{{}});",
                 "    auto tAcc_epi = flat_divide(tAcc, epi);",
                 "    auto gC_epi = flat_divide(tCgC(make_coord(_,_),0,0), epi);",
                 f"    auto tc = make_tmem_copy({atom}{{}}, tAcc_epi(_,_,0,0));",
                 "    for (int t = 0; t < 128; ++t) { auto thr = tc.get_slice(t);",
                 f"      auto tm = thr.partition_{'S' if '_LOAD_' in atom else 'D'}(tAcc_epi);",
                 f"      auto g = thr.partition_{'D' if '_LOAD_' in atom else 'S'}(gC_epi);",
                 f'      printf("{i} %d T", t); for (int j = 0; j < int(size(tm)); j += int(size<0>(tm)))'
                 " printf(\" %u\", uint32_t(raw_pointer_cast(tm.data() + tm.layout()(j))));",
                 '      printf(" G"); for (int j = 0; j < int(size(g)); ++j) printf(" %d", int(&g(j) - buf));',
                 '      printf("\\n"); } }']
    body.append("}")
    lines = cxx.run("\n".join(body) + "\n").splitlines()
    assert len(lines) == 129 * len(cases)
    checked = 0
    for line in lines:
        i, kind, rest = line.split(" ", 2)
        mma, plan, cr, m, n, stages, atom = cases[int(i)]
        if kind == "A":
            lane_col = [(int(x) >> 16, int(x) & 0xFFFF) for x in rest.split()]
            assert lane_col == [plan.cells[0][plan.elements[0].index((0, 0, s))] for s in range(stages)], atom
            continue
        t = int(kind)
        tm_txt, g_txt = rest[2:].split(" G")
        mm = plan.mma_mn[0]
        shift = {32: 0, 16: 1, 8: 2}[plan.value_bits]        # tmem_ptr<T>: offsets in T units, rotated right
        assert [_rotr32(b, shift) for b in cr.bases[t]] == [int(x) for x in tm_txt.split()], (atom, t)
        ours = [o % mm + m * (o // mm) for o in cr.offsets[t]]
        assert ours == [int(x) for x in g_txt.split()], (atom, t)
        checked += len(ours)
    assert checked > 50000
    for mma, plan, cr, m, n, stages, atom in rejected[:6]:
        op = umma.parse_umma_name(mma.atom.name)
        body = (f"int main() {{ auto mma = make_tiled_mma({cpp_atom(op)});\n"
                f"  auto acc = make_tensor<typename decltype(mma)::FrgTypeC>(partition_shape_C(mma, "
                f"make_shape(Int<{m}>{{}}, Int<{n}>{{}}, Int<{stages}>{{}})));\n"
                f"  auto tAcc_epi = flat_divide(acc(make_coord(_,_),0,0,0), make_tile(Int<{cr.tile[0]}>{{}}, "
                f"Int<{cr.tile[1]}>{{}}));\n"
                f"  auto tc = make_tmem_copy({atom}{{}}, tAcc_epi(_,_,0,0)); print(tc); }}\n")
        assert cr.assertion is not None and cr.assertion in cxx.static_asserts(body), atom


# --- show --view tmem, explain, the HTML report ------------------------------------------

PROOFS = Path(__file__).resolve().parents[1] / "proofs" / "blackwell" / "tmem"


def _cli(capsys, *argv):
    rc = cli.main([str(a) for a in argv])
    return rc, capsys.readouterr().out


def test_show_view_tmem_text_and_svg(capsys, tmp_path):
    """The FMHA plan: stages in S0/S1, P drawn over S (aliases allowed: no '#'), O regions, warps 0-3."""
    svg = tmp_path / "t.svg"
    rc, out = _cli(capsys, "show", "--view", "tmem", PROOFS / "fmha_qk_tmem_plan.toml", "--svg", svg)
    assert rc == 0 and "128 lanes x 512 allocated columns" in out and "A = region P0" in out
    row = next(line for line in out.splitlines() if line.startswith("  0-  7"))
    assert row.split()[2].startswith("0000AAAA") and "#" not in row and row.endswith("warp 0")
    text = svg.read_text()
    assert ElementTree.fromstring(text).tag.endswith("svg") and "region O1" in text and "#d62728" not in text


def test_show_view_tmem_marks_the_conflicts(capsys):
    _, out = _cli(capsys, "show", "--view", "tmem", PROOFS / "pitfalls" / "fmha_p_over_o.toml")
    assert "EEEE########EEEE" in out and "E = region O0" in out
    _, out = _cli(capsys, "show", "--view", "tmem", PROOFS / "pitfalls" / "epilogue_warps_not_multiple_of_4.toml")
    assert "warp 1  (warp 1 reaches lanes 32..63 only)" in out


def test_show_view_tmem_needs_sm100(capsys):
    seed = sorted((PROOFS.parents[1] / "seeds").glob("*.toml"))[0]
    assert cli.main(["show", "--view", "tmem", str(seed)]) == 2


def test_explain_and_html(capsys, tmp_path):
    rc, out = _cli(capsys, "explain", PROOFS / "pitfalls" / "epilogue_warps_not_multiple_of_4.toml")
    assert rc == 1 and "tmem_access[tmem_copy.C] is refuted" in out
    assert "C(m=0, n=0) of stage 0 -> thread 0 (warp 1), register 0 of call 0 -> tcgen05.ld" in out
    html = tmp_path / "r.html"
    rc, _ = _cli(capsys, "prove", PROOFS / "pitfalls", "-q", "--html", html)
    assert rc == 0 and html.read_text().count("tmem view") == 5      # (7 pitfalls; CuTe rejects 2 at compile time)
