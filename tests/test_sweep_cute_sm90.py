"""The legal sets of the bundled SM90 sweep spaces (examples/sweep/sm90_gemm.toml, attention_sm90.toml)
against CuTe C++ (issue 32): a seeded sample of each space's survivors and of its rejects, all cases of a space
in one program compiled host-only with g++ against the CuTe headers (``tests/data/sm90/generate.py``'s prelude:
the CUDA driver's ``cuTensorMapEncodeTiled`` recorded, not called; skipped without the headers).

Every candidate of both spaces is proved first, to know the kinds of rejects they produce. Neither space has an
illegal candidate (every GMMA atom, warpgroup layout, swizzle atom, stage count and alignment of theirs is one
CuTe compiles and symlayout proves); their only rejects are *pruned* ones, over the 232448 bytes of shared
memory an SM90 block may use. The sample: :data:`SURVIVORS` survivors and :data:`PER_KIND` pruned candidates
per space, every value of every axis among them, the largest survivor and the smallest pruned one included.
For each the program checks:

* survivors -- the TiledMMA (``make_tiled_mma`` of the GMMA atom and the warpgroup layout: its thread count
  and its M/N/K tile) is symlayout's; each operand's smem layout is CuTe's ``tile_to_shape`` of the
  ``GMMA::Layout_K_SW{32,64,128}_Atom`` its swizzle names over the candidate's own (M or N, K, stages) shape:
  the same swizzle, mode sizes and element offsets, and the same byte offsets of :data:`OFFSETS` coordinates
  through CuTe's swizzle pointer; CuTe compiles ``partition_fragment_A/B`` (``make_gmma_desc`` and its
  ``DescriptorIterator``) for every warpgroup, and the verdicts computed from CuTe's descriptors and addresses
  with the PTX ISA (``tests/data/sm90/configs_generate.py``'s ``truth``) are the prover's; for each
  ``[tma.X]``, ``make_tma_copy`` over a fake gmem tensor encodes the map symlayout derives (rank, dims, strides,
  box, element strides, swizzle, data type);
* capacity rejects (pruned) and survivors -- the byte count of CuTe's buffers, ``cosize`` of the
  ``tile_to_shape`` layouts times the element size (for attention the V buffer is K's shape, as in
  flash-attention 3), is the space's ``smem_bytes``: over 232448 for every pruned candidate, within it for
  every survivor.

Not a CuTe fact (nothing of them is asserted here): the 232448-byte budget itself (the device's opt-in limit),
the attention space's register limit (ptxas allocates registers), and the wgmma and TMA accesses at a base
that is 128- but not 1024-byte aligned (the partitions are built at the base the candidate's ``align`` names,
and the PTX ISA's reads are computed from them, but that the hardware swizzles the absolute address is the
H100 measurement of docs/hopper.md, not CuTe's).

Slow (``-m slow``): a few minutes on the shared 2-core machine, most of it g++.
"""
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from cute_cpp import cute_site
from symlayout.algebra import int_tuple as it
from symlayout.arch import tma as arch_tma
from symlayout.atoms.gmma import parse_smem_layout
from symlayout.harness.hopper_run import _concrete
from symlayout.prove.decide.tables import index_table
from symlayout.prove.engine import prove_config
from symlayout.sweep import load_spec
from symlayout.sweep.prover import load_candidate, prove_candidate
from symlayout.tiled.mma import make_tiled_mma
from symlayout.tiled.tma import tma_model

sys.path.insert(0, str(Path(__file__).resolve().parent / "data" / "sm90"))
from configs_generate import PRELUDE_CASES, PROPS, case_source, tma_case_source, truth  # noqa: E402
from generate import CXXFLAGS, include_flags  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SPACES = ["sm90_gemm.toml", "attention_sm90.toml"]
#: survivors and pruned (capacity) rejects sampled per space
SURVIVORS = 16
PER_KIND = 8
#: coordinates (1-D, of the whole staged tile) whose byte offsets are compared per operand
OFFSETS = 24
SMEM_BUDGET = 232448                                     # bytes of shared memory an SM90 block may opt in to
ATOMS = {1: "K_SW32", 2: "K_SW64", 3: "K_SW128"}          # Sw<B,4,3>: the K-major GMMA layout atom

pytestmark = [pytest.mark.skipif(cute_site() is None, reason="needs the CuTe C++ headers (SYMLAYOUT_CUTE_SITE)"),
              pytest.mark.slow]


def _rows(spec) -> list:
    return [prove_candidate(spec, i) for i in range(len(spec))]


def _sample(spec, rows, seed=32) -> dict:
    """For each status, :data:`PER_KIND` candidate ids (``legal``: :data:`SURVIVORS`): the two next to the
    shared-memory budget (the largest survivor, the smallest pruned one), then in a seeded order of the space
    those that bring a value of an axis not yet sampled first (every value of every axis appears where the
    status has it)."""
    ids = [r["id"] for r in rows]
    random.Random(seed).shuffle(ids)
    edge = [max((r for r in rows if r["status"] == "legal"), key=lambda r: r["smem_bytes"])["id"],
            min((r for r in rows if r["status"] == "pruned"), key=lambda r: r["smem_bytes"])["id"]]
    ids = edge + [i for i in ids if i not in edge]
    out, seen = {}, set()
    for fill in (False, True):
        for i in ids:
            status = rows[i]["status"]
            kind = out.setdefault(status, [])
            new = {(status, n, str(rows[i][n])) for n in spec.names} - seen
            if len(kind) < (SURVIVORS if status == "legal" else PER_KIND) and i not in kind and (new or fill):
                kind.append(i)
                seen |= new
    return out


def _shape(sc) -> list:
    """The candidate's (MN, K[, stages]) extents: its smem layout's top-mode sizes."""
    return [it.product(s) for s in sc.layout.layout.shape]


def _coords(sc, seed) -> list:
    n = sc.layout.layout.size()
    return sorted({0, n - 1, *random.Random(seed).sample(range(n), OFFSETS - 2)})


def _buffers(n, cfg, seed) -> str:
    """CuTe's buffers of candidate ``n``: each operand's ``tile_to_shape``, printed with its cosize in bytes and
    the byte offsets of :func:`_coords` through the swizzle pointer (a 1024-byte aligned base)."""
    body = ""
    for op, sc in sorted(cfg.smem.items()):
        shape = ", ".join(f"Int<{s}>{{}}" for s in _shape(sc))
        coords = "{" + ", ".join(map(str, _coords(sc, seed))) + "}"
        body += (f"  {{ using T = {sc.type};\n"
                 f"    auto sL = tile_to_shape(GMMA::Layout_{ATOMS[sc.layout.swizzle.b]}_Atom<T>{{}}, "
                 f"make_shape({shape}));\n"
                 f"    Tensor s = make_tensor(make_smem_ptr((T*)g_buf), sL);\n"
                 f'    printf("## {n} {op} layout %s\\n", S(sL).c_str());\n'
                 f'    printf("## {n} {op} cosize %d\\n", int(cosize(sL) * sizeof(T)));\n'
                 f'    printf("## {n} {op} offsets");\n'
                 f"    for (int i : {coords}) printf(\" %d\", int((char*)&s(i) - g_buf));\n"
                 f'    printf("\\n");\n  }}\n')
    return body


def _case(n, cfg, survivor: bool, seed) -> str:
    """``void case_n()``: the buffers; for a survivor also its TiledMMA, partitions (descriptors, addresses)
    and TMA maps."""
    body = f"void case_{n}() {{\n" + _buffers(n, cfg, seed)
    if survivor:
        al = "".join(f"Int<{x}>," for x in cfg.mma.layout)[:-1]
        body += (f"  {{ auto mma = make_tiled_mma({cfg.mma.atom}{{}}, Layout<Shape<{al}>>{{}});\n"
                 f'    printf("## {n} - mma %d %d %d %d\\n", int(size(mma)), int(tile_size<0>(mma)), '
                 f"int(tile_size<1>(mma)), int(tile_size<2>(mma))); }}\n")
        body += f'  printf("## {n} - partitions\\n");\n  {{\n{case_source(cfg)}\n  }}\n'
        for op in sorted(cfg.tma):
            body += f'  printf("## {n} {op} tma\\n");\n{tma_case_source(cfg, op)}\n'
    return body + "}\n"


def _run(cases, tmp: Path) -> dict:
    """Compile and run one program of ``cases`` [(cfg, survivor, seed)]: {(n, op, key): printed}; partition
    rows under (n, "-", "partitions"), TMA encodes under (n, op, "tma")."""
    text = PRELUDE_CASES + "".join(_case(n, *c) for n, c in enumerate(cases))
    text += "int main() {\n" + "".join(f"  case_{n}();\n" for n in range(len(cases))) + "}\n"
    (tmp / "p.cpp").write_text(text)
    subprocess.run(["g++", *CXXFLAGS, *include_flags(), str(tmp / "p.cpp"), "-o", str(tmp / "p")], check=True,
                   capture_output=True, text=True)
    out, key = {}, None
    for line in subprocess.run([str(tmp / "p")], check=True, capture_output=True, text=True).stdout.splitlines():
        if line.startswith("## "):
            n, op, name, *rest = line[3:].split(" ", 3)
            key = (int(n), op, name)
            out[key] = rest[0] if rest else []
        elif line.startswith("@@"):
            out[key].append(json.loads(line[2:]))
    return out


def _same_buffer(sc, text, cosize, offsets, seed) -> list:
    """What differs between symlayout's smem layout and CuTe's printed one (``[]``: nothing)."""
    cute = parse_smem_layout(text)
    mine = sc.layout
    diffs = []
    if (cute.swizzle, cute.bits) != (mine.swizzle, mine.bits):
        diffs.append(("swizzle", str(cute), str(mine)))
    if [it.product(s) for s in cute.layout.shape] != _shape(sc):
        diffs.append(("modes", str(cute), str(mine)))
    elif index_table(cute.layout).tolist() != index_table(mine.layout).tolist():
        diffs.append(("offsets", str(cute), str(mine)))
    if int(cosize) != mine.cosize_bytes():
        diffs.append(("cosize", cosize, mine.cosize_bytes()))
    got = [mine.byte_address(i) for i in _coords(sc, seed)]
    if list(map(int, offsets.split())) != got:
        diffs.append(("byte offsets", offsets, got))
    return diffs


def _tma_diffs(cfg, op, enc) -> list:
    sc, tc = cfg.smem[op], cfg.tma[op]
    m = tma_model(sc.type, _concrete(tc.gmem, cfg), sc.layout, tc.box, tc.multicast, tc.atom)
    if m.error is not None:
        return [("tma", m.error)]
    c = m.copy
    mine = {"data_type": arch_tma.DATA_TYPES[c.data_type][0], "rank": c.rank, "global_dim": list(c.global_dim),
            "global_strides": list(c.global_strides), "box_dim": list(c.box_dim),
            "element_strides": list(c.element_strides), "swizzle": arch_tma.SWIZZLE_ENUM[c.swizzle]}
    return [(k, enc[k], v) for k, v in mine.items() if enc[k] != v]


def _verdicts(rep) -> dict:
    out = {}
    for r in rep.results:
        if r.via == "wgmma" and r.property in PROPS:
            out.setdefault(r.operand, {})[r.property] = r.status
    return out


def _check_survivor(n, cfg, out, seed) -> list:
    diffs = []
    mma = make_tiled_mma(cfg.mma.atom, cfg.mma.layout)
    want = [mma.size(), *(mma.tile_size(i) for i in range(3))]
    if list(map(int, out[(n, "-", "mma")].split())) != want:
        diffs.append(("tiled mma", out[(n, "-", "mma")], want))
    rows = out[(n, "-", "partitions")]
    if sorted({r["op"] for r in rows}) != sorted(cfg.smem):
        diffs.append(("partitions", sorted({r["op"] for r in rows})))
    if truth(cfg, rows) != _verdicts(prove_config(cfg)):
        diffs.append(("verdicts", truth(cfg, rows), _verdicts(prove_config(cfg))))
    for op in sorted(cfg.tma):
        diffs += _tma_diffs(cfg, op, out[(n, op, "tma")][0])
    return diffs


@pytest.mark.parametrize("name", SPACES)
def test_the_sm90_legal_set_agrees_with_cute_cpp(name, tmp_path):
    spec = load_spec(ROOT / "examples" / "sweep" / name)
    rows = _rows(spec)
    kinds = {s: sum(r["status"] == s for r in rows) for s in ("legal", "pruned", "illegal", "unknown", "invalid")}
    # rejects of another kind (a CuTe static_assert, a bank or alignment refutation) would need their own checks
    assert kinds["illegal"] == kinds["unknown"] == kinds["invalid"] == 0, kinds
    sample = _sample(spec, rows)
    assert (len(sample["legal"]), len(sample["pruned"])) == (SURVIVORS, PER_KIND), {k: len(v) for k, v in
                                                                                    sample.items()}
    ids = sample["legal"] + sample["pruned"]
    cfgs = {i: load_candidate(spec, i) for i in ids}
    out = _run([(cfgs[i], rows[i]["status"] == "legal", i) for i in ids], tmp_path)
    disagree, checked = [], {"survivors": 0, "pruned": 0, "tma maps": 0, "offsets": 0}
    for n, i in enumerate(ids):
        cfg, legal = cfgs[i], rows[i]["status"] == "legal"
        total = 0
        for op, sc in sorted(cfg.smem.items()):
            d = _same_buffer(sc, out[(n, op, "layout")], out[(n, op, "cosize")], out[(n, op, "offsets")], i)
            disagree += [(i, op, *x) for x in d]
            checked["offsets"] += OFFSETS
            total += int(out[(n, op, "cosize")]) * (2 if op == "B" and "attention" in name else 1)
        if total != rows[i]["smem_bytes"] or (total <= SMEM_BUDGET) != legal:
            disagree.append((i, "smem bytes", total, rows[i]["smem_bytes"], rows[i]["status"]))
        if legal:
            disagree += [(i, *x) for x in _check_survivor(n, cfg, out, i)]
            checked["tma maps"] += len(cfg.tma)
        checked["survivors" if legal else "pruned"] += 1
    print(f"{name}: {kinds}; sampled and compiled: {checked}; {len(disagree)} disagreements")
    assert disagree == []
