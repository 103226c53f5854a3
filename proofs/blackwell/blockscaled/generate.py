"""Writes the block-scaled configurations of this directory (python proofs/blackwell/blockscaled/generate.py).

The [smem.X] buffers are ``UMMA::tile_to_mma_shape`` of the SW128 K-major atom, the [sf.X] buffers
``Sm1xxBlockScaledConfig<vec>::deduce_smem_layoutSFA/SFB`` with the collective's stage mode, and the
gmem factor layouts ``tile_atom_to_shape_SFA/SFB``: all computed by symlayout here and checked against
CuTe C++ by tests/test_sm100_blockscaled_config.py (test_proof_layouts_are_cutes)."""
from __future__ import annotations

from pathlib import Path

from symlayout.algebra.layout import Layout, tile_to_shape
from symlayout.atoms.blockscaled import (deduce_smem_layout_sf, linear_sf_layout, parse_blockscaled_name,
                                         staged_smem_layout_sf, tile_atom_to_shape_sf)
from symlayout.atoms.umma import layout_atom, tile_to_mma_shape

HERE = Path(__file__).resolve().parent
K = "UMMA::Major::K"


def _cute(layout) -> str:
    """CuTe's print with static underscores (as the collective prints it)."""
    import re
    return re.sub(r"(?<![\w<])(\d+)", r"_\1", str(layout))


def smem(op, x, tile, stages, slot_type, atom="K_SW128"):
    peers = op.cta_group
    mn = (tile[0] if x == "A" else tile[1]) // peers
    mma_mn = (op.m if x == "A" else op.n) // peers
    k = op.k
    lay = tile_to_mma_shape(layout_atom(atom, slot_type), ((mma_mn, k), mn // mma_mn, tile[2] // k, stages))
    return str(lay).replace("smem_ptr", "smem_ptr")


def sf_smem(op, x, tile, stages, vec=None, mn_tile=None):
    t = list(tile)
    if mn_tile is not None:
        t[1] = mn_tile
    return _cute(staged_smem_layout_sf(deduce_smem_layout_sf(x, vec or op.vec, op.k, tuple(t), op.cta_group), stages))


def builder_stages(n, over, fmt) -> str:
    return (f"CollectiveBuilder<Sm100, OpClassBlockScaledTensorOp, {fmt}, ..., StageCountAuto, KernelScheduleAuto> of\n"
            f"this tile picks {n} stages (nvcc, CUTLASS 4.2); {over} are over SM100's 232448 bytes of shared memory\n"
            f"(pitfalls/*_{over}_stages_over_227k.toml).")


def over_capacity(proof, n, auto, stage, total) -> str:
    return (f"{proof}.toml with the stage count forced to {n}: CuTe and CUTLASS's builder compile it (StageCount<{n}>\n"
            f"is not checked against the capacity), but a block may use at most sm100_smem_capacity_bytes = 232448\n"
            f"bytes and {n} x ({stage} + {PIPELINE_BYTES} barrier bytes) = {total}: the launch is refused.\n"
            f"StageCountAuto gives {auto} (the proof's count).")


def write(name, title, atom, tile, stages, types, comment="", cluster=None, sf=None, expect=None, sub="",
          tmem=None, tma=False, atoms=None, barriers=False):
    op = parse_blockscaled_name(atom)
    lines = [f'name = "{title}"']
    lines += [f"# {c}" for c in comment.splitlines()] if comment else []
    if barriers:                              # sizeof(PipelineTmaUmmaAsync<1>::SharedStorage) a stage
        lines += ["", "[stages]", f"count = {stages}", f"barrier_bytes = {PIPELINE_BYTES}"]
    lines += ["", "[mma]", f'atom = "{atom}"'] + ([f'cluster = "{cluster}"'] if cluster else [])
    for x in ("A", "B"):
        t, slot = types[x]
        lay = smem(op, x, tile, stages, slot, (atoms or {}).get(x, "K_SW128"))
        lines += ["", f"[smem.{x}]", f'type = "{t}"', f'layout = "{lay}"', "align = 1024"]
    for x in ("A", "B"):
        s = dict(type=op.sf_type, vec=op.vec, smem=sf_smem(op, x, tile, stages))
        s.update((sf or {}).get(x, {}))
        lines += ["", f"[sf.{x}]", f'type = "{s["type"]}"', f"vec = {s['vec']}", f'smem = "{s["smem"]}"']
        if "gmem" in s:
            lines.append(f'gmem = "{s["gmem"]}"')
        if "tmem_column" in s:
            lines.append(f"tmem_column = {s['tmem_column']}")
    if tmem:
        lines += ["", "[tmem]"] + [f"{k} = {v}" for k, v in tmem.items()]
    if tma:                                   # the collective's TMA loads of A and B (a 1x1 cluster): K-major
        m, n, k = tile
        lines += ["", "[params]", f"M = {{ min = {m}, max = 65536, multiple_of = {m} }}",
                  f"N = {{ min = {n}, max = 65536, multiple_of = {n} }}",
                  f"K = {{ min = {k}, max = 65536, multiple_of = {k} }}"]
        for x, mn in (("A", "M"), ("B", "N")):
            lines += ["", f"[tma.{x}]", 'atom = "SM90_TMA_LOAD"', f'gmem = "({mn},K):(K,1)"',
                      f'box = "({m if x == "A" else n},{k})"']
    if expect:
        lines += ["", "[expect]", "refuted = [" + ", ".join(f'"{e}"' for e in expect) + "]"]
    (HERE / sub / f"{name}.toml").write_text("\n".join(lines) + "\n")


#: the mainloop pipeline's barriers a stage: sizeof(cutlass::PipelineTmaUmmaAsync<1>::SharedStorage) (nvcc)
PIPELINE_BYTES = 16
E2, E2C, E4 = "float_e2m1_t", "float_e2m1_unpacksmem_t", "float_e4m3_t"
FP4 = (E2, "float_e2m1_t")
FP4C = (E2C, "uint8_t")
FP8 = (E4, "uint8_t")


def nvfp4(m, n, vs=16, sf="float_ue4m3_t", pair=False):
    p = "_2x1SM" if pair else ""
    return f"SM100_MMA_MXF4{p}_SS<{E2},{E2},float,{sf},{m},{n},{vs},{K},{K}>"


def mxf8(a, b, m, n, pair=False):
    p = "_2x1SM" if pair else ""
    return f"SM100_MMA_MXF8F6F4{p}_SS<{a},{b},float,float_ue8m0_t,{m},{n},{K},{K}>"


def main():
    write("nvfp4_1sm_128x256x256", "NVFP4 GEMM (kind::mxf4nvf4, ue4m3/16), 1SM, 128x256x256, 4 stages",
          nvfp4(128, 256), (128, 256, 256), 4, {"A": FP4, "B": FP4}, comment=builder_stages(4, 5, "nv_float4_t<float_e2m1_t>"),
          sf={"A": {"gmem": _cute(tile_atom_to_shape_sf(16, 1024, 2048))},
              "B": {"gmem": _cute(tile_atom_to_shape_sf(16, 512, 2048))}}, barriers=True)
    write("nvfp4_2sm_256x256x256", "NVFP4 GEMM, 2SM (CTA pair), 256x256x256, 4 stages",
          nvfp4(256, 256, pair=True), (256, 256, 256), 4, {"A": FP4, "B": FP4}, cluster="(2,1,1)")
    write("mxfp4_1sm_128x128x256", "MXFP4 GEMM (kind::mxf4, ue8m0/32), 1SM, 128x128x256, 4 stages",
          nvfp4(128, 128, 32, "float_ue8m0_t"), (128, 128, 256), 4, {"A": FP4, "B": FP4})
    write("mxfp8_1sm_128x256x128", "MXFP8 GEMM (kind::mxf8f6f4, ue8m0/32), 1SM, 128x256x128, 4 stages",
          mxf8(E4, E4, 128, 256), (128, 256, 128), 4, {"A": FP8, "B": FP8}, comment=builder_stages(4, 6, "mx_float8_t<float_e4m3_t>"),
          barriers=True)
    write("mxfp8_2sm_256x192x128", "MXFP8 GEMM, 2SM, N = 192: SFB padded to 256 columns", mxf8(E4, E4, 256, 192, True),
          (256, 192, 128), 4, {"A": FP8, "B": FP8}, cluster="(2,1,1)")
    write("mxf8xmxf4_1sm_128x128x128", "mixed MXF8 x MXF4 (A e4m3, B fp4 in 8-bit containers), 1SM, 128x128x128",
          mxf8(E4, E2C, 128, 128), (128, 128, 128), 4, {"A": FP8, "B": FP4C})
    write("nvfp4_1sm_128x128x256_tmem", "NVFP4 GEMM, 1SM, 128x128x256, 4 stages: its TMEM (2 accumulator stages, "
          "SFA and SFB after them)", nvfp4(128, 128), (128, 128, 256), 4, {"A": FP4, "B": FP4},
          comment="tcgen05.alloc(512): accumulator stages at columns 0 and 128, then SFA and SFB where the\n"
                  "collective puts them (find_tmem_tensor_col_offset: SFA after the accumulators, SFB after SFA).",
          tmem={"columns": 512, "accumulator_stages": 2})
    write("mxfp8_2sm_256x192x128_tmem", "MXFP8 GEMM, 2SM, N = 192: its TMEM (SF columns given by hand)",
          mxf8(E4, E4, 256, 192, True), (256, 192, 128), 4, {"A": FP8, "B": FP8}, cluster="(2,1,1)",
          sf={"A": {"tmem_column": 384}, "B": {"tmem_column": 448}},
          tmem={"columns": 512, "accumulator_stages": 2})
    write("nvfp4_1sm_128x128x256_tma", "NVFP4 GEMM, 1SM, 128x128x256, 4 stages: A and B by TMA (16U4_ALIGN8B)",
          nvfp4(128, 128), (128, 128, 256), 4, {"A": FP4, "B": FP4}, tma=True,
          comment="The collective's TMA loads of packed fp4 (to_CUtensorMapDataType<float_e2m1_t>: 16U4_ALIGN8B, two\n"
                  "elements a byte): box (256, 128), 256 fp4 = one 128-byte SW128 row.")
    write("mxf8xmxf4_1sm_128x128x128_tma", "mixed MXF8 x MXF4, 1SM, 128x128x128: A (UINT8) and B (fp4 containers, "
          "16U4_ALIGN16B) by TMA", mxf8(E4, E2C, 128, 128), (128, 128, 128), 4, {"A": FP8, "B": FP4C}, tma=True,
          comment="B's containers (float_e2m1_unpacksmem_t: 16U4_ALIGN16B, 16 fp4 then 8 bytes of padding in each\n"
                  "16-byte chunk): box dimension 0 is 128 elements, one 128-byte SW128 row of slots; K a multiple of 128.")
    P = "pitfalls"
    write("nvfp4_128x256x256_5_stages_over_227k", "pitfall: NVFP4 1SM 128x256x256 with 5 stages (StageCount<5>): "
          "A, B, their factors and the pipeline's barriers take 276560 bytes, over SM100's 232448",
          nvfp4(128, 256), (128, 256, 256), 5, {"A": FP4, "B": FP4}, barriers=True, sub=P,
          comment=over_capacity("nvfp4_1sm_128x256x256", 5, 4, "16384 A + 32768 B + 2048 SFA + 4096 SFB", 276560),
          expect=["in_bounds[stages.A]", "in_bounds[stages.B]"])
    write("mxfp8_128x256x128_6_stages_over_227k", "pitfall: MXFP8 1SM 128x256x128 with 6 stages (StageCount<6>): "
          "A, B, their factors and the pipeline's barriers take 304224 bytes, over SM100's 232448",
          mxf8(E4, E4, 128, 256), (128, 256, 128), 6, {"A": FP8, "B": FP8}, barriers=True, sub=P,
          comment=over_capacity("mxfp8_1sm_128x256x128", 6, 4, "16384 A + 32768 B + 512 SFA + 1024 SFB", 304224),
          expect=["in_bounds[stages.A]", "in_bounds[stages.B]"])
    write("fp4_containers_tma_sw64", "pitfall: fp4 containers TMA-loaded into a SW64 K-major buffer",
          mxf8(E4, E2C, 128, 128), (128, 128, 128), 4, {"A": FP8, "B": FP4C}, tma=True, atoms={"B": "K_SW64"},
          comment="16U4_ALIGN16B needs box dimension 0 = 128 and a NONE / 128B swizzle (cuTensorMapEncodeTiled): the\n"
                  "SW64 atom over 8-bit slots makes CuTe's box 64 wide with the 64B swizzle; the driver rejects the map.",
          expect=["tma[B]"], sub=P)
    write("sf_over_accumulator", "pitfall: SFA copied to TMEM column 128, inside the second accumulator stage",
          nvfp4(128, 128), (128, 128, 256), 4, {"A": FP4, "B": FP4},
          comment="The kernel's tcgen05.cp puts SFA at column 128 (one accumulator stage's width) while the\n"
                  "accumulator has two stages (columns 0..255): the factors overwrite stage 1.",
          sf={"A": {"tmem_column": 128}}, tmem={"columns": 512, "accumulator_stages": 2},
          expect=["tmem_alloc[tmem]"], sub=P)
    write("sf_outside_allocation", "pitfall: two accumulator stages of N = 256 fill the 512 columns; no room for SFA/SFB",
          nvfp4(128, 256), (128, 256, 256), 4, {"A": FP4, "B": FP4},
          comment="2 x 256 accumulator columns take all of tcgen05.alloc(512): SFA, placed after them, starts at\n"
                  "column 512.", tmem={"columns": 512, "accumulator_stages": 2}, expect=["tmem_alloc[tmem]"], sub=P)
    write("nvfp4_vec32_factors", "pitfall: NVFP4 MMA fed MX factors (ue8m0, one per 32 elements)", nvfp4(128, 256),
          (128, 256, 256), 4, {"A": FP4, "B": FP4},
          comment="kind::mxf4nvf4 .block16 reads one ue4m3 factor per 16 elements: with ue8m0/32 buffers every\n"
                  "second K-block of 16 has no factor, and the bytes are read as ue4m3.",
          sf={x: {"type": "float_ue8m0_t", "vec": 32, "smem": sf_smem(parse_blockscaled_name(nvfp4(128, 256)), x,
                                                                          (128, 256, 256), 4, vec=32)}
              for x in "AB"},
          expect=["sf_kind[sf.A]", "sf_kind[sf.B]", "sf[sf.A]", "sf[sf.B]"], sub=P)
    write("linear_sf_read_as_swizzled", "pitfall: a row-major (linear) SFA buffer fed to the 128x4 block layout",
          nvfp4(128, 256), (128, 256, 256), 4, {"A": FP4, "B": FP4},
          comment="The quantizer wrote SFA as a plain M x K/16 row-major array; the kernel's TMA reads it through\n"
                  "tile_atom_to_shape_SFA (128x4 blocks): row 1's first factor is at byte 32, the kernel reads byte 16.",
          sf={"A": {"gmem": _cute(linear_sf_layout(16, 1024, 512))}}, expect=["sf[sf.A]"], sub=P)
    write("sfb_sized_with_m_tile", "pitfall: SFB's smem buffer sized with the M tile (128) of a 128x256 tile",
          nvfp4(128, 256), (128, 256, 256), 4, {"A": FP4, "B": FP4},
          comment="deduce_smem_layoutSFB called with the M tile: the buffer has 128 columns of factors, B has 256.",
          sf={"B": {"smem": sf_smem(parse_blockscaled_name(nvfp4(128, 256)), "B", (128, 256, 256), 4, mn_tile=128)}},
          expect=["sf[sf.B]"], sub=P)
    mn_major = tile_to_shape(Layout(((16, 4), (32, 4)), ((0, 1), (16, 4))), (512, 1024, 1), (1, 2, 3))
    write("sfb_follows_sfa_major", "pitfall: SFB's global layout built with the MN-major chunk (branching on A's major)",
          nvfp4(128, 256), (128, 256, 256), 4, {"A": FP4, "B": FP4},
          comment="Sm1xxBlockScaledBasicChunk<16, UMMA::Major::MN>::SfAtom tiled over (N, K): 16 consecutive columns\n"
                  "share a factor while the 16 K elements of one block get different ones.",
          sf={"B": {"gmem": _cute(mn_major)}}, expect=["sf[sf.B]"], sub=P)
    write("fp4_packed_where_containers_are_read", "pitfall: fp4 packed in smem for kind::mxf8f6f4 (8-bit containers)",
          mxf8(E4, E2C, 128, 128), (128, 128, 256), 4, {"A": FP8, "B": FP4},
          comment="B is TMA-loaded as packed float_e2m1_t (two per byte) but kind::mxf8f6f4 reads fp4 16 to a\n"
                  "16-byte chunk (PTX .b4x16_p64): element 16 is at byte 8, the MMA reads byte 16.",
          expect=["type_agreement[B]"], sub=P)
    write("mxf8f6f4_packed_fp4_type", "pitfall: SM100_MMA_MXF8F6F4 with float_e2m1_t (not the unpacksmem container)",
          mxf8(E4, E2, 128, 128), (128, 128, 256), 3, {"A": FP8, "B": FP4C},
          comment="CuTe compiles it, but to_UMMAFormat<float_e2m1_t> is MXF4Format::E2M1 = 1, which a kind::mxf8f6f4\n"
                  "instruction descriptor reads as E5M2.  (3 stages: the builder's StageCountAuto for 128x128x256 of\n"
                  "8-bit slots; 4 are over SM100's 232448 bytes.)",
          expect=["type_agreement[B]"], sub=P)


if __name__ == "__main__":
    main()
