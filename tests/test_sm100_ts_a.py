"""A of a TS tcgen05.mma (SM100_MMA_*_TS: A read from Tensor Memory, FMHA's P): slot_agreement[A] via
tcgen05.mma, coverage[A], exactly_once[A], and A's cells in the [tmem] plan (``a_region``), each proved
and refuted; what tcgen05.mma reads against CuTe C++ (make_fragment_A, random TS atoms x M/N x 1/2 CTAs,
one program)."""
from __future__ import annotations

import random
from types import SimpleNamespace

import pytest

from sm100_cpp import compiler, cpp_atom
from symlayout.algebra.layout import Layout, function_table
from symlayout.arch import tcgen05 as arch
from symlayout.atoms import umma
from symlayout.atoms.types import value_type_bits
from symlayout.config import loads_config
from symlayout.config.tmem import TmemConfig
from symlayout.errors import ConfigError
from symlayout.prove.blackwell.tmem import (TMEM_PROPERTIES, a_agreement, a_coverage, prove_tmem, tmem_alloc)
from symlayout.prove.blackwell.tmem_model import a_operand_plan, accumulator_plan
from symlayout.tiled.mma import make_tiled_mma
from symlayout.tiled.tmem import tmem_frg_layout

FAM = {"half_t": "F16BF16", "bfloat16_t": "F16BF16", "tfloat32_t": "TF32", "int8_t": "S8"}
ACC = {"half_t": "float", "bfloat16_t": "float", "tfloat32_t": "float", "int8_t": "int32_t"}


def _name(m, n, pair=False, ab="half_t"):
    return (f"SM100_MMA_{FAM[ab]}{'_2x1SM' if pair else ''}_TS<{ab},{ab},{ACC[ab]},{m},{n},"
            "UMMA::Major::K,UMMA::Major::K>")


def _mma(m, n, pair=False, ab="half_t"):
    return make_tiled_mma(umma.umma_mma_atom(_name(m, n, pair, ab)))


FMHA = {"S0": (0, 128), "S1": (128, 128), "O0": (256, 128), "O1": (384, 128), "P0": (32, 64), "P1": (160, 64)}


def _tm(**kw):
    return TmemConfig(512, 2, 256, FMHA, ("O0", "O1"), {"P0": "S0", "P1": "S1"}, **kw)


# --- the PTX rule: the lanes of row m of A -----------------------------------------------------------

def test_a_lanes_are_the_lanes_of_d():
    """Row m of A is read on every lane that holds a cell of row m of D (each data-path layout)."""
    for letter, rows in arch.DATAPATH_ROWS.items():
        copies = arch.A_ROW_COPIES[letter]
        for m in range(rows):
            d = {arch.datapath_cell(letter, 64, m, n)[0] for n in range(64)}
            assert d == {arch.a_lanes(letter, m, h) for h in range(copies)}, (letter, m)


# --- slot_agreement[A], coverage[A], exactly_once[A] ----------------------------------------------------

@pytest.mark.parametrize("m,n,pair,ab,k", [(128, 128, False, "half_t", 128), (64, 64, False, "half_t", 64),
                                           (64, 64, False, "int8_t", 128), (128, 64, False, "tfloat32_t", 32),
                                           (256, 128, True, "half_t", 64), (128, 64, True, "bfloat16_t", 64)])
def test_a_proved(m, n, pair, ab, k):
    ap = a_operand_plan(_mma(m, n, pair, ab), k, 32)
    rows = m // (2 if pair else 1)
    copies = arch.A_ROW_COPIES[ap.layout]
    r = a_agreement(ap)
    assert r.status == "proved" and r.checked == rows * k * copies and r.via == "tcgen05.mma"
    cov, once = a_coverage(ap)
    assert cov.status == "proved" and cov.checked == rows * k
    assert once.status == "proved" and once.checked == rows * k * copies


def test_pair_m128_reads_both_lane_halves():
    """2x1SM M = 128 (layout B): A's 64 rows are read from lanes m and m + 64, where CuTe's Duplicated
    fragment keeps the row and its copy."""
    ap = a_operand_plan(_mma(128, 64, True), 64)
    assert ap.layout == "B" and sorted(set(ap.r_lane[ap.r_m == 5].tolist())) == [5, 69]


def test_a_refuted_uint32_storage():
    """P allocated as tmem_frg_1sm<half_t> (uint32 storage: one element per 32-bit column) where the TS
    atom reads two per column: element k is read from the cell CuTe keeps k/2 in."""
    mma = _mma(128, 128)
    u32 = tmem_frg_layout(16, 32, 1, "NonInterleaved", ((128, 16), 1, 4))     # (lane + 128 * uint32 cell)
    ap = a_operand_plan(mma, 64, 32, frg=Layout(u32.shape, ((1, 256), 0, 2 * u32.stride[2])))
    r = a_agreement(ap)
    assert r.status == "refuted" and r.counterexample.element == (0, 1)
    msg = r.counterexample.message
    assert "A(m=0, k=1): tcgen05.mma reads it from TMEM lane 0, column 32 bits 16..31" in msg
    assert "keeps no element of A" in msg and "CuTe keeps A(m=0, k=1) at TMEM lane 0, column 33 bits 0..15" in msg
    assert "data-path layout D" in r.counterexample.route[0]
    cov, once = a_coverage(ap)
    assert cov.status == "refuted" and cov.counterexample.element == (0, 8)
    assert once.status == "proved"


def test_a_refuted_k_stride_0():
    """A fragment that keeps every k of a block in one cell: exactly_once names the two elements."""
    ap = a_operand_plan(_mma(128, 128), 64, frg=Layout(((128, 16), 1, 4), ((1, 0), 0, 2048)))
    cov, once = a_coverage(ap)
    assert once.status == "refuted" and "A(m=0, k=0) and A(m=0, k=15) in one cell, TMEM lane 0, column 0" in once.counterexample.message
    assert a_agreement(ap).status == "refuted"


def test_a_refuted_rows_not_on_the_datapath():
    """An M = 64 A placed one row per lane (CuTe's M = 128 atom) where tcgen05.mma reads 16 rows per
    32-lane chunk: A(m=16, k) is read from lane 32."""
    ap = a_operand_plan(_mma(64, 64), 64, frg=Layout(((64, 16), 1, 4), ((1, 128), 0, 2048)))
    r = a_agreement(ap)
    assert r.status == "refuted" and r.counterexample.element == (16, 0)
    assert "TMEM lane 32, column 0" in r.counterexample.message


# --- A in the [tmem] plan: a_region ----------------------------------------------------------------------

def _alloc(p0, a_region="P0"):
    mma = _mma(128, 128)
    tm = _tm(a_region=a_region)
    tm.regions["P0"] = p0
    return tmem_alloc(tm, accumulator_plan(mma, 2, 256), aplan=a_operand_plan(mma, 128, p0[0]))


def test_a_region_proved():
    r = _alloc((32, 64))
    assert r.status == "proved"


def test_a_region_too_small_refuted():
    r = _alloc((32, 32))
    assert r.status == "refuted" and "operand A (element A(m=0, k=64)) is at TMEM lane 0, column 64, outside its " \
                                   "region P0 (columns 32..63)" in r.counterexample.message


def test_a_over_o_refuted():
    r = _alloc((288, 64))
    msg = r.counterexample.message
    assert r.status == "refuted" and "operand A (element A(m=0, k=0)) and to accumulator stage 0 (element (m=0, " \
                                     "n=32))" in msg and "TMEM lane 0, column 288" in msg


def test_prove_tmem_runs_a_for_ts_only():
    tm = _tm(a_region="P0")
    cfg = SimpleNamespace(tmem=tm, tmem_copies={}, smem={})
    got = {(r.property, r.operand) for r in prove_tmem(cfg, _mma(128, 128), TMEM_PROPERTIES)}
    assert {("slot_agreement", "A"), ("coverage", "A"), ("exactly_once", "A"), ("tmem_alloc", "tmem")} <= got
    ss = make_tiled_mma(umma.umma_mma_atom(_name(128, 128).replace("_TS<", "_SS<")))
    got = {(r.property, r.operand) for r in prove_tmem(SimpleNamespace(tmem=_tm(), tmem_copies={}, smem={}), ss,
                                                       TMEM_PROPERTIES)}
    assert ("slot_agreement", "A") not in got


SMEM = ('[smem.{op}]\ntype = "half_t"\nlayout = "Sw<3,4,3> o smem_ptr[16b](unset) o ((_128,_16),_1,_4):((_64,_1),_0,_16)"'
        '\nalign = 1024\n')
BASE = '[mma]\natom = "{atom}"\n[tmem]\ncolumns = 512\nregions = {{ S0 = [0, 128], P0 = [32, 64] }}\n'


def _text(atom, extra):
    ops = "B" if "_TS<" in atom else "AB"
    return BASE.format(atom=atom) + extra + "".join(SMEM.format(op=o) for o in ops)


@pytest.mark.parametrize("atom,extra,line,says", [
    (_name(128, 128), 'a_region = "Q0"\n', 6, "[tmem] a_region: 'Q0' is not one of the regions"),
    (_name(128, 128), "a_region = 3\n", 6, "is not one of the regions"),
    (_name(128, 128).replace("_TS<", "_SS<"), 'a_region = "P0"\n', 6, "reads A from shared memory"),
])
def test_a_region_bad_input(atom, extra, line, says):
    with pytest.raises(ConfigError) as e:
        loads_config(_text(atom, extra), "f.toml")
    msg = str(e.value)
    assert msg.startswith(f"f.toml:{line}: ") and says in msg and "\n" not in msg


def test_a_region_read():
    cfg = loads_config(_text(_name(128, 128), 'a_region = "P0"\n'), "f.toml")
    assert cfg.tmem.a_region == "P0"


# --- CuTe C++: make_fragment_A and the A address of each MMA block, random TS atoms --------------------

def _random_ts_cases(n, seed=31):
    """``(name, M, K)``: TS atoms of every family with A from Tensor Memory, 1 and 2 CTAs, M = 64/128 (one CTA)
    or 128/256 (a pair), legal N, one or two MMA tiles along M, one to four along K."""
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        pair = rng.random() < 0.4
        m = rng.choice((128, 256) if pair else (64, 128))
        ab = rng.choice(("half_t", "bfloat16_t", "tfloat32_t", "int8_t"))
        step = 32 if pair else (16 if m == 128 or ab == "int8_t" else 8)
        nn = rng.choice(range(step, 257, step))
        name = _name(m, nn, pair, ab)
        if umma.cute_rejections(umma.parse_umma_name(name)):
            continue
        kk = 256 // value_type_bits(ab)
        out.append((name, m * rng.choice((1, 2)), kk * rng.choice((1, 2, 3, 4))))
    return out


def _rotr32(x: int, s: int) -> int:
    """``raw_pointer_cast`` of a ``tmem_ptr<T>`` at offset ``x`` (T units): rotated right to 32-bit words."""
    return ((x >> s) | (x << (32 - s))) & 0xFFFFFFFF if s else x


def test_a_in_tmem_matches_cute_random():
    """For 24 random TS TiledMMAs (16-, 32-, 8-bit A; 1 and 2 CTAs; 1-2 MMA tiles along M, 1-4 along K): every
    element's TMEM address of make_fragment_A, the A address CuTe issues each MMA block's tcgen05.mma with
    (``raw_pointer_cast(tCrA(_,m,k).data())``, mma_unpack's ``tmem_a``) and partition_A's element of each
    index equal ours; and the PTX read model over those addresses agrees with CuTe's fragment
    (slot_agreement/coverage/exactly_once[A] proved) -- 0 disagreements."""
    cxx = compiler()
    if cxx is None:
        pytest.skip("CuTe C++ headers (SYMLAYOUT_CUTE_SITE) or g++ not available")
    cases = _random_ts_cases(24)
    body = ["int main() {"]
    for i, (name, m, k) in enumerate(cases):
        op = umma.parse_umma_name(name)
        body += [f"  {{ auto mma = make_tiled_mma({cpp_atom(op)});",
                 f"    static {op.a_type} buf[{m * k}];",
                 f"    auto gA = make_tensor(make_gmem_ptr(buf), make_layout(make_shape(Int<{m}>{{}}, Int<{k}>{{}})));",
                 "    auto g = mma.get_slice(0).partition_A(gA);",
                 f"    auto a = make_tensor<typename decltype(mma)::FrgTypeA>(partition_shape_A(mma, "
                 f"make_shape(Int<{m}>{{}}, Int<{k}>{{}})));",
                 f'    printf("{i} F"); for (int j = 0; j < int(size(a)); ++j) printf(" %d", int(a.layout()(j)));',
                 f'    printf("\\n{i} B"); for (int y = 0; y < int(size<2>(a)); ++y) for (int x = 0; x < int(size<1>(a));'
                 " ++x) printf(\" %u\", uint32_t(raw_pointer_cast(a(_,x,y).data())));",
                 f'    printf("\\n{i} G"); for (int j = 0; j < int(size(g)); ++j) printf(" %d", int(&g(j) - buf));',
                 '    printf("\\n"); }']
    body.append("}")
    lines = cxx.run("\n".join(body) + "\n").splitlines()
    assert len(lines) == 3 * len(cases)
    checked = 0
    for line in lines:
        i, kind, *vals = line.split()
        name, m, k = cases[int(i)]
        mma = _mma_named(name)
        ap = a_operand_plan(mma, k, m_total=m)
        bits = ap.value_bits
        dp = (1 << 16) * (32 // bits)
        got = [int(v) for v in vals]
        if kind == "F":
            ours = (ap.lane * dp + ap.cell).tolist()
        elif kind == "B":
            blocks = int(ap.r_block.max()) + 1
            per = ap.lane.size // blocks
            ours = [_rotr32(int(ap.lane[b * per]) * dp + int(ap.cell[b * per]), {32: 0, 16: 1, 8: 2}[bits])
                    for b in range(blocks)]
            assert sorted(set(ap.r_block.tolist())) == list(range(blocks))
        else:
            pl, off = mma.get_slice(0).partition("A", Layout((m, k)))
            ours = [int(off) + int(v) for v in function_table(pl)]
        assert ours == got, (name, m, k, kind)
        checked += len(ours)
        if kind == "F":
            assert a_agreement(ap).status == "proved", name
            assert [r.status for r in a_coverage(ap)] == ["proved", "proved"], name
    assert checked > 100000


def _mma_named(name):
    return make_tiled_mma(umma.umma_mma_atom(name))
