"""The atom catalog (symlayout.atoms) against CuTe's printed values and its own rules."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from symlayout.atoms import (Registers, canonical_type, catalog_json, catalog_text, value_type_bits,
                             value_type_names)
from symlayout.atoms.copy import CopyAtom, copy_op_names, get_copy_op, make_copy_atom
from symlayout.atoms.mma import get_mma_atom, mma_atom_names
from symlayout.conformance.atoms import OPS
from symlayout.errors import AtomError, SymlayoutError
from symlayout.algebra.layout import Layout, function_table
from symlayout.algebra.notation import parse_layout


def _shared() -> Path:
    env = os.environ.get("SYMLAYOUT_SHARED")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "shared"


_REF = _shared() / "reference" / "atoms.json"
_REF_ATOMS = json.loads(_REF.read_text())["atoms"] if _REF.is_file() else []
needs_ref = pytest.mark.skipif(not _REF_ATOMS, reason=f"{_REF} not found (set SYMLAYOUT_SHARED)")


def _u(s: str) -> str:
    """CuTe's print form without the static-int underscores."""
    return s.replace("_", "")


def _s(v):
    return _u(v["str"]) if isinstance(v, dict) else v


def _ref_id(a):
    return a["name"] + ("" if a["kind"] == "mma" else f"/{a['ValType']}")


# --------------------------------------------------------------------------- CuTe's printed values


@needs_ref
@pytest.mark.parametrize("ref", [a for a in _REF_ATOMS if a["kind"] == "mma"], ids=_ref_id)
def test_mma_atom_matches_cute(ref):
    a = get_mma_atom(ref["name"])
    assert "(" + ",".join(map(str, a.shape_mnk)) + ")" == _s(ref["Shape_MNK"])
    assert list(a.shape_mnk) == ref["Shape_MNK"]["list"]
    assert str(a.thr_id) == _s(ref["ThrID"])
    assert str(a.a_layout) == _s(ref["ALayout"])
    assert str(a.b_layout) == _s(ref["BLayout"])
    assert str(a.c_layout) == _s(ref["CLayout"])
    for op, vt in zip("DABC", (a.val_type_d, a.val_type_a, a.val_type_b, a.val_type_c)):
        assert vt == ref[f"ValType{op}"]
    for op, r in zip("DABC", (a.d_regs, a.a_regs, a.b_regs, a.c_regs)):
        want = ref[f"{op}Registers"]
        got = None if r is None else {"type": r.type, "count": r.count}
        assert got == want, op


@needs_ref
@pytest.mark.parametrize("ref", [a for a in _REF_ATOMS if a["kind"] == "copy"], ids=_ref_id)
def test_copy_atom_matches_cute(ref):
    c = make_copy_atom(ref["name"], ref["ValType"])
    op = c.op
    assert c.value_bits == ref["ValTypeBits"]
    assert str(op.thr_id) == _s(ref["ThrID"]) == str(c.thr_id)
    assert str(op.src_layout) == _s(ref["SrcLayout_bits"])
    assert str(op.dst_layout) == _s(ref["DstLayout_bits"])
    assert str(op.ref_layout) == _s(ref["RefLayout_bits"])
    assert str(c.val_layout_src) == _s(ref["ValLayoutSrc"])
    assert str(c.val_layout_dst) == _s(ref["ValLayoutDst"])
    assert str(c.val_layout_ref) == _s(ref["ValLayoutRef"])
    assert (c.num_val_src, c.num_val_dst) == (ref["NumValSrc"], ref["NumValDst"])
    for r, want in ((op.s_regs, ref["SRegisters"]), (op.d_regs, ref["DRegisters"])):
        assert (r.type, r.count, r.bits) == (want["type"], want["count"], want["bits"])


@needs_ref
def test_reference_covers_catalog_families():
    names = {a["name"] for a in _REF_ATOMS}
    assert "SM61_DP4A" in names and "SM75_U32x4_LDSM_N" in names and "DefaultCopy" in names


def test_reference_notes_sm70_nn_tt():
    # cute-semantics.md 4.2: NN has A=Col, B=Row; TT has A=Row, B=Col.
    col, row = "((4,2),4):((8,4),1)", "(8,4):(1,8)"
    for acc in ("F16F16F16F16", "F32F16F16F32"):
        nn, tt = get_mma_atom(f"SM70_8x8x4_{acc}_NN"), get_mma_atom(f"SM70_8x8x4_{acc}_TT")
        assert (str(nn.a_layout), str(nn.b_layout)) == (col, row)
        assert (str(tt.a_layout), str(tt.b_layout)) == (row, col)
    assert get_mma_atom("SM70_8x8x4_F16F16F16F16_NN").ptx == "mma.sync.aligned.m8n8k4.col.col.f16.f16.f16.f16"
    assert get_mma_atom("SM70_8x8x4_F32F16F16F32_TT").ptx == "mma.sync.aligned.m8n8k4.row.row.f32.f16.f16.f32"


def test_reference_notes_other_value_types():
    # cute-semantics.md 5.2 "Other value types"
    rows = [
        ("SM75_U32x4_LDSM_N", "float", "(32,4):(4,1)", "(32,(1,4)):(1,(1,32))"),
        ("SM75_U32x1_LDSM_N", "float", "((8,4),4):((4,0),1)", "(32,1):(1,1)"),
        ("SM75_U32x4_LDSM_N", "uint8_t", "(32,16):(16,1)", "(32,(4,4)):(4,(1,128))"),
        ("UniversalCopy<uint128_t>", "float", "(1,4):(0,1)", "(1,4):(0,1)"),
        ("SM80_CP_ASYNC_CACHEALWAYS<uint128_t>", "uint8_t", "(1,16):(0,1)", "(1,16):(0,1)"),
        ("UniversalCopy<float>", "float", "(1,1):(0,1)", "(1,1):(0,1)"),
    ]
    for name, vt, src, dst in rows:
        c = make_copy_atom(name, vt)
        assert (str(c.val_layout_src), str(c.val_layout_dst)) == (src, dst), (name, vt)


# --------------------------------------------------------------------------- GMMA generator

_GMMA_V = {
    "F16F16F16": ("half_t", "half_t", "uint32_t", 4, "f16.f16.f16"),
    "F32F16F16": ("float", "half_t", "float", 2, "f32.f16.f16"),
    "F32BF16BF16": ("float", "bfloat16_t", "float", 2, "f32.bf16.bf16"),
}


@pytest.mark.parametrize("n", range(8, 257, 8))
@pytest.mark.parametrize("v", sorted(_GMMA_V))
@pytest.mark.parametrize("s", ["SS", "RS"])
def test_gmma_generator(n, v, s):
    d, ab, creg, cdiv, pt = _GMMA_V[v]
    name = f"SM90_64x{n}x16_{v}_{s}"
    a = get_mma_atom(name)
    assert a.name == name and name in mma_atom_names()
    assert a.shape_mnk == (64, n, 16)
    assert str(a.thr_id) == "128:1"
    if s == "SS":
        assert str(a.a_layout) == "(128,(64,16)):(0,(1,64))"
        assert a.a_regs == Registers("uint64_t", 1) and a.frg_type_a == "GMMA::smem_desc<GMMA::Major::K>"
    else:
        assert str(a.a_layout) == "((4,8,4),(2,2,2)):((128,1,16),(64,8,512))"
        assert a.a_regs == Registers("uint32_t", 4) and a.frg_type_a == ab
    assert str(a.b_layout) == f"(128,({n},16)):(0,(1,{n}))"
    assert str(a.c_layout) == f"((4,8,4),(2,2,{n // 8})):((128,1,16),(64,8,512))"
    assert a.b_regs == Registers("uint64_t", 1) and a.d_regs is None
    assert a.c_regs == Registers(creg, n // cdiv)
    assert (a.val_type_d, a.val_type_a, a.val_type_b, a.val_type_c) == (d, ab, ab, d)
    assert a.ptx == f"wgmma.mma_async.sync.aligned.m64n{n}k16.{pt}"
    assert a.arch == "sm_90a" and a.min_sm == 90
    # C values per thread fill exactly the accumulator registers
    assert a.c_layout[1].size() * value_type_bits(d) == a.c_regs.total_bits
    # the optional majors suffix changes nothing but the name
    b = get_mma_atom(f"{name}<GMMA::Major::K,GMMA::Major::K>")
    assert b.name == f"{name}<GMMA::Major::K,GMMA::Major::K>"
    assert (b.a_layout, b.b_layout, b.c_layout, b.shape_mnk) == (a.a_layout, a.b_layout, a.c_layout, a.shape_mnk)


def test_gmma_majors_and_spelling():
    k = get_mma_atom("SM90_64x64x16_F16F16F16_SS<GMMA::Major::K,GMMA::Major::K>")
    mn = get_mma_atom("SM90_64x64x16_F16F16F16_SS<GMMA::Major::MN,GMMA::Major::MN>")
    assert (k.a_layout, k.b_layout, k.c_layout) == (mn.a_layout, mn.b_layout, mn.c_layout)
    assert mn.frg_type_a == "GMMA::smem_desc<GMMA::Major::MN>"
    sp = get_mma_atom("cute::SM90_64x64x16_F16F16F16_SS< GMMA::Major::K , GMMA::Major::MN >")
    assert sp.name == "SM90_64x64x16_F16F16F16_SS<GMMA::Major::K,GMMA::Major::MN>"
    assert sp.frg_type_b == "GMMA::smem_desc<GMMA::Major::MN>"
    rs = get_mma_atom("SM90_64x32x16_F32F16F16_RS<GMMA::Major::K,GMMA::Major::MN>")
    assert rs.a_regs == Registers("uint32_t", 4)
    with pytest.raises(AtomError, match="K-major"):
        get_mma_atom("SM90_64x32x16_F32F16F16_RS<GMMA::Major::MN,GMMA::Major::K>")
    with pytest.raises(AtomError, match="did you mean 'GMMA::Major::K'"):
        get_mma_atom("SM90_64x32x16_F32F16F16_SS<GMMA::Major::KK,GMMA::Major::K>")
    with pytest.raises(AtomError, match="at most 4"):
        get_mma_atom("SM90_64x32x16_F32F16F16_SS<K,K,One,One,One>")


@pytest.mark.parametrize("bad", ["SM90_64x12x16_F16F16F16_SS", "SM90_64x264x16_F16F16F16_SS",
                                 "SM90_64x0x16_F16F16F16_RS"])
def test_gmma_bad_n(bad):
    with pytest.raises(AtomError, match=r"unknown MMA atom .*did you mean 'SM90_64x"):
        get_mma_atom(bad)


# --------------------------------------------------------------------------- families


@pytest.mark.parametrize("shape,ptxshape", [("8x8x16", "m8n8k16"), ("16x8x16", "m16n8k16"),
                                            ("16x8x32", "m16n8k32")])
@pytest.mark.parametrize("ta", ["S8", "U8"])
@pytest.mark.parametrize("tb", ["S8", "U8"])
def test_integer_family(shape, ptxshape, ta, tb):
    t = {"S8": ("int8_t", "s8"), "U8": ("uint8_t", "u8")}
    base = get_mma_atom(f"SM80_{shape}_S32S8S8S32_TN")
    a = get_mma_atom(f"SM80_{shape}_S32{ta}{tb}S32_TN")
    sat = get_mma_atom(f"SM80_{shape}_S32{ta}{tb}S32_TN_SATURATE")
    assert (a.a_layout, a.b_layout, a.c_layout) == (base.a_layout, base.b_layout, base.c_layout)
    assert (a.val_type_a, a.val_type_b, a.val_type_d) == (t[ta][0], t[tb][0], "int32_t")
    assert a.ptx == f"mma.sync.aligned.{ptxshape}.row.col.s32.{t[ta][1]}.{t[tb][1]}.s32"
    assert sat.ptx == a.ptx + ".satfinite" and sat.c_layout == a.c_layout


@pytest.mark.parametrize("acc", ["F32", "F16"])
@pytest.mark.parametrize("ta", ["E4M3", "E5M2"])
@pytest.mark.parametrize("tb", ["E4M3", "E5M2"])
def test_fp8_family(acc, ta, tb):
    a = get_mma_atom(f"SM89_16x8x32_{acc}{ta}{tb}{acc}_TN")
    s8 = get_mma_atom("SM80_16x8x32_S32S8S8S32_TN")
    assert (a.a_layout, a.b_layout, a.c_layout, a.shape_mnk) == (s8.a_layout, s8.b_layout, s8.c_layout, s8.shape_mnk)
    assert a.val_type_a == f"float_{ta.lower()}_t" and a.val_type_b == f"float_{tb.lower()}_t"
    assert a.c_regs == (Registers("float", 4) if acc == "F32" else Registers("uint32_t", 2))
    assert a.arch == "sm_89"
    with pytest.raises(AtomError):
        get_mma_atom(f"SM89_16x8x32_F32{ta}{tb}F16_TN")  # accumulator types must agree


def test_universal_fma():
    a = get_mma_atom("UniversalFMA<float>")
    assert a.name == "UniversalFMA<float,float,float,float>"
    b = get_mma_atom("UniversalFMA<double,half_t>")
    assert (b.val_type_d, b.val_type_a, b.val_type_b, b.val_type_c) == ("double", "half_t", "half_t", "double")
    assert b.a_regs == Registers("half_t", 1) and b.d_regs == Registers("double", 1)
    assert str(b.c_layout) == "(1,1):(0,0)" and b.arch is None and b.min_sm == 0
    with pytest.raises(AtomError, match="missing template argument D"):
        get_mma_atom("UniversalFMA")
    with pytest.raises(AtomError, match="unknown value type 'flaot'.*'float'"):
        get_mma_atom("UniversalFMA<flaot>")


# --------------------------------------------------------------------------- catalog-wide invariants


@pytest.mark.parametrize("name", mma_atom_names())
def test_mma_atom_invariants(name):
    a = get_mma_atom(name)
    assert get_mma_atom(name) is a                         # cached
    assert a.name == name
    M, N, K = a.shape_mnk
    nthr = a.thr_id.size()
    for L, extent, regs, vt, frg in ((a.a_layout, M * K, a.a_regs, a.val_type_a, a.frg_type_a),
                                     (a.b_layout, N * K, a.b_regs, a.val_type_b, a.frg_type_b),
                                     (a.c_layout, M * N, a.c_regs, a.val_type_c, a.val_type_c)):
        assert L.rank() == 2 and L[0].size() == nthr
        img = function_table(L)
        assert set(img) == set(range(extent))              # covers the whole atom tile
        if len(img) == extent:
            assert sorted(img) == list(range(extent))      # and, when it can, exactly once
        if frg == vt:                                      # mma_unpack's recast to the registers
            assert L[1].size() * value_type_bits(vt) == regs.total_bits
    if a.d_regs is not None:
        assert a.d_regs == a.c_regs
    assert a.ptx is None or a.ptx.split(".")[0] in ("mma", "wgmma", "dp4a", "dp2a")


@pytest.mark.parametrize("name", copy_op_names())
def test_copy_op_invariants(name):
    op = get_copy_op(name)
    assert get_copy_op(name) is op and op.name == name
    assert op.kind in ("ldsm", "stsm", "universal", "cp_async", "default")
    assert op.ref_layout == (op.src_layout if op.ref == "src" else op.dst_layout)
    for L in (op.src_layout, op.dst_layout):
        assert L.rank() == 2 and L[0].size() == op.thr_id.size()
    if op.kind != "default":
        # per thread, the bits of one call fill the register arrays exactly
        assert op.src_layout[1].size() == op.s_regs.total_bits
        assert op.dst_layout[1].size() == op.d_regs.total_bits
        # src and dst describe the same set of data bits
        assert set(function_table(op.src_layout)) == set(function_table(op.dst_layout))
    assert op.vector_bits == max(op.s_regs.bits, op.d_regs.bits)
    assert (op.src_reg_bits, op.src_reg_count, op.dst_reg_bits, op.dst_reg_count) == \
        (op.s_regs.bits, op.s_regs.count, op.d_regs.bits, op.d_regs.count)


def test_catalog_contents():
    names = set(mma_atom_names())
    for n in ["SM61_DP4A", "SM61_DP2A", "SM70_8x8x4_F16F16F16F16_TN", "SM70_8x8x4_F32F16F16F32_TT",
              "SM75_16x8x8_F32F16F16F32_TN", "SM75_8x8x16_S32S8S8S32_TN", "SM80_16x8x8_F16F16F16F16_TN",
              "SM80_16x8x16_F32F16F16F32_TN", "SM80_16x8x16_F32BF16BF16F32_TN", "SM80_16x8x4_F32TF32TF32F32_TN",
              "SM80_16x8x8_F32TF32TF32F32_TN", "SM80_8x8x16_S32U8S8S32_TN", "SM80_16x8x32_S32U8U8S32_TN",
              "SM80_8x8x4_F64F64F64F64_TN", "SM89_16x8x32_F32E4M3E5M2F32_TN", "SM90_64x256x16_F32BF16BF16_RS",
              "UniversalFMA<float,float,float,float>"]:
        assert n in names, n
    ops = set(copy_op_names())
    for n in ["SM75_U32x1_LDSM_N", "SM75_U16x8_LDSM_T", "SM90_U32x4_STSM_N", "SM90_U16x2_STSM_T",
              "UniversalCopy<uint8_t>", "UniversalCopy<uint128_t>", "SM80_CP_ASYNC_CACHEALWAYS<uint32_t>",
              "SM80_CP_ASYNC_CACHEALWAYS<uint64_t>", "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", "DefaultCopy",
              "AutoVectorizingCopy"]:
        assert n in ops, n


def test_catalog_json():
    cat = catalog_json()
    json.dumps(cat)
    atoms = cat["atoms"]
    names = [a["name"] for a in atoms]
    assert len(names) == len(set(names)) == len(mma_atom_names()) + len(copy_op_names())
    for a in atoms:
        assert a["kind"] in ("mma", "copy")
        keys = (["shape_mnk", "thr_id", "a_layout", "b_layout", "c_layout"] if a["kind"] == "mma"
                else ["thr_id", "src_layout", "dst_layout", "ref_layout"])
        for k in keys[1 if a["kind"] == "mma" else 0:]:
            assert str(parse_layout(a[k])) == a[k]           # CuTe notation, round-trips
        if a["kind"] == "mma":
            assert len(a["shape_mnk"]) == 3 and all(isinstance(x, int) for x in a["shape_mnk"])
    ldsm = next(a for a in atoms if a["name"] == "SM75_U32x2_LDSM_N")
    assert ldsm["dst_layout"] == ldsm["ref_layout"] == "(32,(32,2)):(32,(1,1024))"


def test_catalog_text():
    text = catalog_text()
    assert "SM80_16x8x16_F16F16F16F16_TN" in text and "SM75_U32x4_LDSM_N" in text
    assert len(text.splitlines()) == len(mma_atom_names()) + len(copy_op_names()) + 3


# --------------------------------------------------------------------------- value types / copy atoms


def test_value_types():
    bits = {"half_t": 16, "bfloat16_t": 16, "tfloat32_t": 32, "float": 32, "double": 64, "int8_t": 8,
            "uint8_t": 8, "int32_t": 32, "uint32_t": 32, "uint16_t": 16, "uint64_t": 64, "uint128_t": 128,
            "float_e4m3_t": 8, "float_e5m2_t": 8, "int4_t": 4, "uint1_t": 1}
    for t, b in bits.items():
        assert value_type_bits(t) == b
    assert canonical_type("cutlass::bfloat16_t") == "bfloat16_t"
    assert value_type_names()[0] == "uint1_t" and value_type_names()[-1] == "uint128_t"
    with pytest.raises(AtomError, match=r"unknown value type 'halft'; did you mean 'half_t'\?"):
        value_type_bits("halft")


@pytest.mark.parametrize("op,vt,msg", [
    ("SM75_U32x4_LDSM_N", "double", "64-bit values cannot feed the atom"),
    ("SM75_U32x1_LDSM_N", "uint128_t", "128-bit values cannot feed the atom"),
    ("SM75_U16x8_LDSM_T", "uint64_t", "64-bit values cannot feed the atom"),
    ("SM90_U32x2_STSM_N", "double", "64-bit values cannot feed the atom"),
    ("UniversalCopy<uint8_t>", "half_t", "do not fill the SRegisters uint8_t"),
    ("UniversalCopy<uint32_t>", "double", "do not fill"),
    ("SM80_CP_ASYNC_CACHEALWAYS<uint32_t>", "uint128_t", "do not fill"),
])
def test_copy_value_type_cannot_feed(op, vt, msg):
    with pytest.raises(AtomError, match=msg) as e:
        make_copy_atom(op, vt)
    text = str(e.value)
    assert "\n" not in text and op in text and canonical_type(vt) in text


def test_copy_value_types_that_feed():
    for op in ["SM75_U32x1_LDSM_N", "SM75_U32x4_LDSM_N", "SM90_U32x4_STSM_N"]:
        for vt in ["int4_t", "int8_t", "half_t", "float", "tfloat32_t"]:
            c = make_copy_atom(op, vt)
            assert c.num_val_dst * c.value_bits == c.op.d_regs.total_bits
    d = make_copy_atom("DefaultCopy", "double")                      # no register rule for DefaultCopy
    assert str(d.val_layout_src) == "(1,1):(0,0)" and (d.num_val_src, d.num_val_dst) == (1, 1)
    assert CopyAtom("UniversalCopy<uint32_t>", "half_t").name == "Copy_Atom<UniversalCopy<uint32_t>,half_t>"
    assert CopyAtom(get_copy_op("SM75_U32x2_LDSM_N"), "cutlass::half_t").value_type == "half_t"


def test_copy_templates():
    assert get_copy_op("UniversalCopy<half_t>").s_regs == Registers("half_t", 1)
    u = get_copy_op("UniversalCopy<uint32_t,uint64_t>")
    assert str(u.dst_layout) == "(1,64):(0,1)" and u.d_regs == Registers("uint64_t", 1)
    for nbytes, t in ((4, "uint32_t"), (8, "uint64_t"), (16, "uint128_t")):
        ca = get_copy_op(f"SM80_CP_ASYNC_CACHEALWAYS<{t}>")
        assert ca.ptx == "cp.async.ca.shared.global.L2::128B" and ca.ptx_model["cp_size"] == nbytes
        assert str(ca.src_layout) == f"(1,{8 * nbytes}):(0,1)" and ca.arch == "sm_80"
    assert get_copy_op("SM80_CP_ASYNC_CACHEALWAYS<float>").src_layout == Layout((1, 32), (0, 1))
    assert get_copy_op("SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>").ptx == "cp.async.cg.shared.global.L2::128B"
    for bad in ["SM80_CP_ASYNC_CACHEGLOBAL<uint32_t>", "SM80_CP_ASYNC_CACHEGLOBAL<uint64_t>"]:
        with pytest.raises(AtomError, match="only 16 bytes"):
            get_copy_op(bad)
    with pytest.raises(AtomError, match="4, 8 or 16 bytes"):
        get_copy_op("SM80_CP_ASYNC_CACHEALWAYS<half_t>")
    with pytest.raises(AtomError, match="sizeof"):
        get_copy_op("SM80_CP_ASYNC_CACHEALWAYS<uint32_t,uint64_t>")
    with pytest.raises(AtomError, match="at least 8 bits"):
        get_copy_op("UniversalCopy<int4_t>")
    av = get_copy_op("AutoVectorizingCopyWithAssumedAlignment<32>")
    assert av.name == "AutoVectorizingCopyWithAssumedAlignment<32>" and av.vector_bits == 32
    assert get_copy_op("AutoVectorizingCopyWithAssumedAlignment").vector_bits == 128
    assert get_copy_op("DefaultCopy").vector_bits == 8 and get_copy_op("AutoVectorizingCopy").vector_bits == 128
    with pytest.raises(AtomError, match="did you mean '32'"):
        get_copy_op("AutoVectorizingCopyWithAssumedAlignment<33>")


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize("bad,closest", [
    ("SM80_16x8x16_F16F16F16F16_NT", "SM80_16x8x16_F16F16F16F16_TN"),
    ("SM80_16x8x16_F32F16F16F16_TN", "SM80_16x8x16_F32F16F16F32_TN"),
    ("SM80_16x8x8_F32TF32TF32F32", "SM80_16x8x8_F32TF32TF32F32_TN"),
    ("SM61_DP4", "SM61_DP4A"),
])
def test_unknown_mma_suggests(bad, closest):
    with pytest.raises(AtomError) as e:
        get_mma_atom(bad)
    msg = str(e.value)
    assert msg.startswith(f"unknown MMA atom {bad!r}") and f"did you mean {closest!r}?" in msg
    assert "\n" not in msg and isinstance(e.value, SymlayoutError)


@pytest.mark.parametrize("bad,closest", [
    ("SM75_U32x4_LDSM", "SM75_U32x4_LDSM_N"),
    ("SM75_U32x8_LDSM_N", "SM75_U32x4_LDSM_N"),
    ("UniversalCopy<uint256_t>", None),
    ("SM90_U32x4_STSM_T", "SM90_U32x4_STSM_N"),
    ("DefaultCopy<uint32_t>", None),
])
def test_unknown_copy_suggests(bad, closest):
    with pytest.raises(AtomError) as e:
        get_copy_op(bad)
    msg = str(e.value)
    assert "\n" not in msg
    if closest:
        assert f"did you mean {closest!r}?" in msg


@pytest.mark.parametrize("bad", ["", "UniversalCopy<uint32_t", "UniversalCopy<>", "X<a>>", "A>"])
def test_malformed_names(bad):
    with pytest.raises(AtomError):
        get_copy_op(bad)


def test_copy_atom_unknown_type():
    with pytest.raises(AtomError, match=r"did you mean 'bfloat16_t'\?"):
        make_copy_atom("SM75_U32x4_LDSM_N", "bfloat_16")


# --------------------------------------------------------------------------- conformance handlers


def test_conformance_ops_direct():
    r = OPS["mma_atom"](["SM70_8x8x4_F16F16F16F16_TN"])
    assert set(r) == {"ThrID", "LayoutA_TV", "LayoutB_TV", "LayoutC_TV", "Shape_MNK"}
    assert str(r["ThrID"]) == "(4,2):(1,16)" and r["Shape_MNK"] == (8, 8, 4)
    r = OPS["copy_atom"](["SM75_U32x4_LDSM_N", "int8_t"])
    assert set(r) == {"ThrID", "ValLayoutSrc", "ValLayoutDst", "ValLayoutRef", "NumValSrc", "NumValDst"}
    assert (r["NumValSrc"], r["NumValDst"]) == (16, 16)


def _conformance_cases():
    d = _shared() / "conformance" / "public"
    out = []
    for f in ("tiled_mma.jsonl", "tiled_copy.jsonl"):
        p = d / f
        if p.is_file():
            for line in p.read_text().splitlines():
                if "mma_atom" in line or "copy_atom" in line:
                    case = json.loads(line)
                    if case["op"] in OPS:
                        out.append(case)
    return out


_CASES = _conformance_cases()


@pytest.mark.skipif(not _CASES, reason="shared conformance cases not found")
@pytest.mark.parametrize("case", _CASES, ids=lambda c: c["id"])
def test_conformance_case(case):
    from symlayout.conformance.runner import _compare
    assert _compare(OPS[case["op"]](case["args"]), case["expect"]) == ""
