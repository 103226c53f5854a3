"""Block-scaled SM100 atoms and scale-factor layouts against CuTe C++ (host-only g++, one program
for all accepted cases): the ``SM100_MMA_MXF8F6F4*`` / ``SM100_MMA_MXF4*`` traits (Shape_MNK,
SFVecSize, TV layouts), ``make_instr_desc_block_scaled``, CuTe's rejections, and
``Sm1xxBlockScaledConfig``'s ``tile_atom_to_shape_SFA/SFB`` and ``deduce_smem_layoutSFA/SFB``."""
from __future__ import annotations

import pytest

from sm100_cpp import compiler
from symlayout.algebra.layout import function_table
from symlayout.atoms.blockscaled import (blockscaled_mma_atom, cute_rejections, deduce_smem_layout_sf,
                                         instr_desc_block_scaled, kind_type_problems, parse_blockscaled_name,
                                         smem_bit, staged_smem_layout_sf, tile_atom_to_shape_sf)
from symlayout.errors import CuteStaticAssert

K, MN = "UMMA::Major::K", "UMMA::Major::MN"
E2, E2C, E4, E5, E23C, E32C = ("float_e2m1_t", "cute::detail::float_e2m1_unpacksmem_t", "float_e4m3_t",
                               "float_e5m2_t", "cute::detail::float_e2m3_unpacksmem_t",
                               "cute::detail::float_e3m2_unpacksmem_t")
U8, U4 = "float_ue8m0_t", "float_ue4m3_t"

#: (atom, CTA tile (M, N, K)) compiled by CuTe
ATOMS = [
    (f"SM100_MMA_MXF4_SS<{E2},{E2},float,{U4},128,256,16,{K},{K}>", (128, 256, 256)),
    (f"SM100_MMA_MXF4_SS<{E2},{E2},float,{U8},128,128,32,{K},{K}>", (128, 128, 256)),
    (f"SM100_MMA_MXF4_SS<{E2},{E2},float,{U8},128,192,16,{K},{K}>", (128, 192, 512)),
    (f"SM100_MMA_MXF4_2x1SM_SS<{E2},{E2},float,{U4},256,192,16,{K},{K}>", (256, 192, 256)),
    (f"SM100_MMA_MXF4_2x1SM_SS<{E2},{E2},float,{U8},128,64,32,{K},{K}>", (128, 64, 128)),
    (f"SM100_MMA_MXF8F6F4_SS<{E4},{E4},float,{U8},128,128,{K},{K}>", (128, 128, 128)),
    (f"SM100_MMA_MXF8F6F4_SS<{E4},{E2C},float,{U8},128,64,{MN},{K}>", (128, 64, 256)),
    (f"SM100_MMA_MXF8F6F4_SS<{E23C},{E32C},half_t,{U8},128,8,{K},{K}>", (128, 8, 128)),
    (f"SM100_MMA_MXF8F6F4_2x1SM_SS<{E5},{E4},float,{U8},256,256,{K},{MN}>", (256, 256, 128)),
    (f"SM100_MMA_MXF8F6F4_2x1SM_SS<{E2C},{E2C},float,{U8},256,48,{K},{K}>", (256, 48, 256)),
    (f"SM100_MMA_MXF8F6F4_SS<{E2},{E4},float,{U8},128,128,{K},{K}>", (128, 128, 128)),   # compiles; mis-read
]

#: atoms CuTe rejects
REJECTED = [
    f"SM100_MMA_MXF4_SS<{E2},{E2},float,{U4},128,256,32,{K},{K}>",
    f"SM100_MMA_MXF4_SS<{E2},{E2},float,{U8},64,256,16,{K},{K}>",
    f"SM100_MMA_MXF4_SS<{E4},{E4},float,{U8},128,256,16,{K},{K}>",
    f"SM100_MMA_MXF4_2x1SM_SS<{E2},{E2},float,{U8},256,200,16,{K},{K}>",
    f"SM100_MMA_MXF4_SS<{E2},{E2},float,{U8},128,128,64,{K},{K}>",
    f"SM100_MMA_MXF8F6F4_SS<{E4},{E4},float,{U8},64,128,{K},{K}>",
    f"SM100_MMA_MXF8F6F4_2x1SM_SS<{E4},{E4},float,{U8},128,128,{K},{K}>",
    f"SM100_MMA_MXF8F6F4_SS<half_t,{E4},float,{U8},128,128,{K},{K}>",
    f"SM100_MMA_MXF8F6F4_SS<{E4},{E4},float,{E4},128,128,{K},{K}>",
]

#: (vec, mn, k, batches) of tile_atom_to_shape_SF
GMEM = [(16, 256, 512, 1), (32, 128, 256, 2), (16, 384, 1024, 1), (32, 640, 128, 3), (16, 128, 64, 1)]


def _traits_cpp(name: str) -> str:
    return name.replace("SM100_MMA_", "MMA_Traits<SM100_MMA_") + ">"


def _program():
    out = ["using namespace cutlass::detail;", "int main() {"]
    for name, (m, n, k) in ATOMS:
        op = parse_blockscaled_name(name)
        tr = _traits_cpp(name)
        cfg = f"Sm1xxBlockScaledConfig<{op.vec}>"
        out += ["  {", f"    using Tr = {tr};", "    auto mma = make_tiled_mma(Tr{});",
                "    print(typename Tr::Shape_MNK{}); printf(\" %d\\n\", int(Tr::SFVecSize));",
                "    print(typename Tr::ALayout{}); printf(\" \"); print(typename Tr::BLayout{}); printf(\" \");"
                " print(typename Tr::CLayout{}); printf(\"\\n\");",
                "    printf(\"%u\\n\", uint32_t(Tr{}.idesc_));",
                f"    auto t = Shape<Int<{m}>,Int<{n}>,Int<{k}>>{{}};",
                f"    print({cfg}::deduce_smem_layoutSFA(mma, t)); printf(\"\\n\");",
                f"    print({cfg}::deduce_smem_layoutSFB(mma, t)); printf(\"\\n\");", "  }"]
    for vec, mn, k, b in GMEM:
        out.append(f"  print(Sm1xxBlockScaledConfig<{vec}>::tile_atom_to_shape_SFA(make_shape(Int<{mn}>{{}}, Int<8>{{}}, "
                   f"Int<{k}>{{}}, Int<{b}>{{}}))); printf(\"\\n\");")
    return "#include <cutlass/detail/sm100_blockscaled_layout.hpp>\n" + "\n".join(out) + "\n}\n"


def _norm(s: str) -> str:
    return s.replace("_", "").replace(" ", "")


@pytest.fixture(scope="module")
def cute_out():
    c = compiler()
    if c is None:
        pytest.skip("CuTe headers / g++ not available")
    return c.run(_program()).splitlines()


def test_atoms_and_smem_sf_layouts_equal_cute(cute_out):
    for i, (name, tile) in enumerate(ATOMS):
        shape_vs, tv, desc, sfa, sfb = cute_out[5 * i: 5 * i + 5]
        op = parse_blockscaled_name(name.replace("cute::detail::", ""))
        a = blockscaled_mma_atom(op)
        m, n, k = op.shape_mnk
        assert _norm(shape_vs) == f"({m},{n},{k}){op.vec}", name
        assert _norm(tv) == _norm(f"{a.a_layout}{a.b_layout}{a.c_layout}"), name
        assert int(desc) == instr_desc_block_scaled(op), name
        assert _norm(sfa) == _norm(str(deduce_smem_layout_sf("A", op.vec, k, tile, op.cta_group))), name
        assert _norm(sfb) == _norm(str(deduce_smem_layout_sf("B", op.vec, k, tile, op.cta_group))), name


def test_gmem_sf_layouts_equal_cute(cute_out):
    rest = cute_out[5 * len(ATOMS):]
    for line, (vec, mn, k, b) in zip(rest, GMEM):
        assert _norm(line) == _norm(str(tile_atom_to_shape_sf(vec, mn, k, b)))


@pytest.mark.parametrize("name", REJECTED)
def test_rejections_are_cutes(name):
    c = compiler()
    if c is None:
        pytest.skip("CuTe headers / g++ not available")
    msgs = c.static_asserts(f"void f() {{ auto m = make_tiled_mma({_traits_cpp(name)}{{}}); }}\nint main() {{}}\n")
    ours = cute_rejections(parse_blockscaled_name(name.replace("cute::detail::", "")))
    assert ours and set(ours) <= set(msgs) | {""}, (ours, msgs)
    assert set(msgs) <= set(ours), (ours, msgs)
    with pytest.raises(CuteStaticAssert):
        blockscaled_mma_atom(name)


def test_kind_type_problems():
    ok = [parse_blockscaled_name(n.replace("cute::detail::", "")) for n, _ in ATOMS[:-1]]
    assert all(kind_type_problems(op) == [] for op in ok)
    bad = parse_blockscaled_name(ATOMS[-1][0])        # packed fp4 where kind::mxf8f6f4 reads containers
    assert "reads as e5m2" in kind_type_problems(bad)[0]
    nv = parse_blockscaled_name(f"SM100_MMA_MXF4_SS<{E2},{E2},float,{U4},128,128,16,{K},{K}>")
    assert kind_type_problems(nv) == []
    mn = parse_blockscaled_name(f"SM100_MMA_MXF4_SS<{E2},{E2},float,{U4},128,128,16,{MN},{K}>")   # CuTe compiles it
    assert cute_rejections(mn) == [] and kind_type_problems(mn)[0].startswith("A: float_e2m1_t is MN-major")


def test_packed_vs_container_bytes():
    # element 17 of a K-major row: packed byte 8 (high nibble), container chunk 1 byte 0 (high nibble)
    assert (smem_bit("float_e2m1_t", 17) // 8, smem_bit("float_e2m1_unpacksmem_t", 17) // 8) == (8, 16)
    assert [smem_bit("float_e2m1_unpacksmem_t", s) for s in (0, 15, 16)] == [0, 60, 128]


def test_staged_layout():
    tile = deduce_smem_layout_sf("A", 16, 64, (128, 256, 256))
    st = staged_smem_layout_sf(tile, 5)
    assert str(st) == "((((32,4),1),(16,4)),1,(1,4),5):((((16,4),512),(0,1)),0,(4,512),2048)"
    assert max(function_table(st)) + 1 == 5 * 2048
