"""Ground truth for whole SM90 GMMA configurations from CuTe C++ (``configs.jsonl``).

For every configuration (the files of ``proofs/hopper`` and a seeded campaign of
generated ones) a host-only C++ program builds what the configuration describes
with CuTe (``make_tiled_mma`` of the GMMA atom, the smem tensor of each descriptor
operand at a base address aligned as the file says) and prints, per warpgroup:
the descriptor of every fragment element (``partition_fragment_A/B``: CuTe's
``make_gmma_desc`` and ``DescriptorIterator``), the partition's data offset, and
the swizzled byte address of every element of ``partition_A/B`` (CuTe's swizzle
pointer).  A configuration CuTe does not compile is compiled alone to confirm it.

The verdicts are then computed from CuTe's numbers and the PTX ISA's description of
``wgmma`` (:mod:`symlayout.arch.gmma`, checked on the H200), not from symlayout's
CuTe model: ``descriptor`` (compiles; start address on the 16-byte grid),
``slot_agreement`` (the byte wgmma reads through CuTe's descriptor is CuTe's
address of the element), ``coverage``, ``exactly_once`` and ``in_bounds`` of the
reads, for every base the alignment allows.  ``tests/test_hopper.py`` compares the
prover's verdicts with these.

Usage (a few minutes on two cores)::

    SYMLAYOUT_CUTE_SITE=/path/to/site python tests/data/sm90/configs_generate.py
"""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

from generate import CXXFLAGS, PRELUDE, include_flags  # noqa: E402

from symlayout.arch import gmma as arch  # noqa: E402
from symlayout.atoms import value_type_bits, value_type_info  # noqa: E402
from symlayout.atoms.gmma import GmmaSmemLayout, gmma_majors, layout_atom  # noqa: E402
from symlayout.config import loads_config  # noqa: E402
from symlayout.algebra.layout import Layout  # noqa: E402
from symlayout.tiled.mma import make_tiled_mma  # noqa: E402

PROPS = ("descriptor", "slot_agreement", "coverage", "exactly_once", "in_bounds")


# ---------------------------------------------------------------------------
# Configurations
# ---------------------------------------------------------------------------

def _toml(atom, al, ops: dict, name: str) -> str:
    s = f'name = "{name}"\n[mma]\natom = "{atom}"\nlayout = "{al}"\n'
    for op, (t, lay, align) in ops.items():
        s += f'[smem.{op}]\ntype = "{t}"\nlayout = "{lay}"\nalign = {align}\n'
    return s


_T16 = {"F16": "half_t", "BF16": "bfloat16_t"}


def campaign(n: int = 48, seed: int = 15) -> list[tuple[str, str]]:
    """(id, TOML) of ``n`` random GMMA configurations: atoms of every type, majors,
    warpgroup layouts, smem atoms, tile orders, stages, alignments; about one in six
    deliberately off the GMMA forms (major mismatch, an SW atom of another width,
    element-offset swizzles, an unswizzled row-major tile, small alignments)."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        fam = rng.choice(["f16", "f16", "bf16", "tf32", "e4m3", "s8"])
        if fam in ("f16", "bf16"):
            t = _T16[fam.upper()]
            k = 16
            code = "F32F16F16" if fam == "f16" else "F32BF16BF16"
            ma, mb = rng.choice("KM"), rng.choice("KM")
            maj = lambda c: "K" if c == "K" else "MN"  # noqa: E731
            rs = rng.random() < 0.25
            if rs:
                ma = "K"
            ntile = rng.choice([8, 16, 32, 64, 128])
            atom = f"SM90_64x{ntile}x{k}_{code}_{'RS' if rs else 'SS'}<GMMA::Major::{maj(ma)},GMMA::Major::{maj(mb)}>"
        else:
            t = {"tf32": "tfloat32_t", "e4m3": "float_e4m3_t", "s8": "int8_t"}[fam]
            k = {"tf32": 8, "e4m3": 32, "s8": 32}[fam]
            code = {"tf32": "F32TF32TF32", "e4m3": "F32E4M3E4M3", "s8": "S32S8S8"}[fam]
            ma = mb = "K"
            rs = rng.random() < 0.2
            ntile = rng.choice([8, 16, 32, 64, 128])
            atom = f"SM90_64x{ntile}x{k}_{code}_{'RS' if rs else 'SS'}_TN"
        al = rng.choice([(1, 1, 1), (2, 1, 1), (1, 2, 1)])
        bits = value_type_bits(t)
        ops = {}
        for op, mj in (("A", ma), ("B", mb)):
            if op == "A" and rs:
                continue
            mn = 64 * al[0] if op == "A" else ntile * al[1]
            mn *= rng.choice([1, 1, 2])
            sw = rng.choice(["INTER", "SW32", "SW64", "SW128"])
            kind = f"{'K' if mj == 'K' else 'MN'}_{sw}"
            a = layout_atom(kind, t)
            ar, ac = a.layout.shape
            ktile = max(ac if mj == "K" else 8, k) * rng.choice([1, 2])
            mnt = max(mn, ar if mj != "K" else 8)
            if mnt % ar or ktile % ac or ktile % k:
                mnt = (mnt // ar + 1) * ar if mnt % ar else mnt
                ktile = max(ktile, ac)
            stages = rng.choice([1, 1, 2, 3])
            order = (1, 2, 3) if mj == "K" else rng.choice([(1, 2, 3), (2, 1, 3)])
            shape = (mnt, ktile, stages)
            try:
                lay = a.tile_to_shape(shape, order)
            except Exception:
                lay = layout_atom(f"K_{sw}", t).tile_to_shape((max(mnt, 8), max(ktile, layout_atom(f'K_{sw}', t).layout.shape[1]), stages))
            align = rng.choice([1024, 1024, 128, 16])
            text = str(lay)
            r = rng.random()
            if r < 0.05:            # majors swapped: a K-major tile handed to the other descriptor (or vice versa)
                other = ("MN" if mj == "K" else "K") + "_" + sw
                b2 = layout_atom(other, t)
                try:
                    text = str(b2.tile_to_shape(shape, (1, 2, 3)))
                except Exception:
                    pass
            elif r < 0.09:          # a swizzle of another width on the same rows
                text = text.replace(f"Sw<{a.swizzle.b},", f"Sw<{(a.swizzle.b + 1) % 4},", 1)
            elif r < 0.12 and bits % 8 == 0:     # the element-offset (SM80) form of the same function
                pi = lay.position_independent()
                text = str(pi)
            elif r < 0.15:          # a plain row-major (K-contiguous) tile: INTERLEAVE needs 8x16-byte core matrices
                text = str(Layout((mnt, ktile, stages), (ktile, 1, mnt * ktile)))
            elif r < 0.19:
                align = rng.choice([2, 4, 8])
            ops[op] = (t, text, align)
        out.append((f"campaign-{i:03d}", _toml(atom, f"({al[0]},{al[1]},{al[2]})", ops, f"campaign {i}")))
    return out


def tma_campaign(n: int = 40, seed: int = 90) -> list[tuple[str, str]]:
    """(id, TOML) of ``n`` random configurations with ``[tma.A]``: types, K-/MN-major swizzle
    atoms, tile orders, stages, global tensors of either majorness (a mismatch is CuTe's run-time
    assert), multicast 1/2/4, and now and then a hand-encoded swizzle."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        t = rng.choice(["half_t", "bfloat16_t", "tfloat32_t", "float_e4m3_t"])
        code = {"half_t": ("F32F16F16", 16), "bfloat16_t": ("F32BF16BF16", 16), "tfloat32_t": ("F32TF32TF32", 8),
                "float_e4m3_t": ("F32E4M3E4M3", 32)}[t]
        mj = rng.choice(["K", "MN"]) if t in ("half_t", "bfloat16_t") else "K"
        atom = (f"SM90_64x64x{code[1]}_{code[0]}_SS<GMMA::Major::{mj},GMMA::Major::K>" if code[1] == 16
                else f"SM90_64x64x{code[1]}_{code[0]}_SS_TN")
        sw = rng.choice(["INTER", "SW32", "SW64", "SW128"])
        kind = f"{mj}_{sw}"
        a = layout_atom(kind, t)
        ar, ac = a.layout.shape
        mn = max(64, ar) * rng.choice([1, 2])
        k = max(ac, code[1]) * rng.choice([1, 2])
        st = rng.choice([1, 2])
        order = (1, 2, 3) if mj == "K" else rng.choice([(1, 2, 3), (2, 1, 3)])
        lay = a.tile_to_shape((mn, k, st), order)
        M, K = mn * rng.choice([2, 3]), k * rng.choice([2, 4])
        kmajor_g = (mj == "K") != (rng.random() < 0.15)
        gmem = f"({M},{K}):({K},1)" if kmajor_g else f"({M},{K}):(1,{M})"
        mc = rng.choice([1, 1, 2, 4])
        tma = f'[tma.A]\natom = "{"SM90_TMA_LOAD_MULTICAST" if mc > 1 else "SM90_TMA_LOAD"}"\n'
        tma += f'multicast = {mc}\ngmem = "{gmem}"\nbox = "({mn},{k})"\n'
        if rng.random() < 0.1:
            tma += f'swizzle = "Sw<{rng.choice([0, 1, 2, 3])},4,3>"\n'
        b = layout_atom("K_SW128", t).tile_to_shape((64, max(k, layout_atom("K_SW128", t).layout.shape[1])))
        text = (f'name = "tma campaign {i}"\n[mma]\natom = "{atom}"\n'
                f'[smem.A]\ntype = "{t}"\nlayout = "{lay}"\nalign = 1024\n'
                f'[smem.B]\ntype = "{t}"\nlayout = "{b}"\nalign = 1024\n' + tma)
        out.append((f"tma-campaign-{i:03d}", text))
    return out


def proof_files() -> list[tuple[str, str]]:
    out = []
    for p in sorted((ROOT / "proofs" / "hopper").rglob("*.toml")):
        out.append((str(p.relative_to(ROOT)), p.read_text()))
    return out


# ---------------------------------------------------------------------------
# C++
# ---------------------------------------------------------------------------

def _cpp_tuple(x) -> str:
    if isinstance(x, tuple):
        return "Shape<" + ",".join(_cpp_tuple(y) for y in x) + ">"
    return f"Int<{x}>"


def _cpp_layout(L) -> str:
    sh = L.shape if isinstance(L.shape, tuple) else (L.shape,)
    st = L.stride if isinstance(L.stride, tuple) else (L.stride,)
    return f"Layout<{_cpp_tuple(sh)},{_cpp_tuple(st).replace('Shape<', 'Stride<', 1)}>"


def _cpp_stride(x) -> str:
    if isinstance(x, tuple):
        return "Stride<" + ",".join(_cpp_stride(y) for y in x) + ">"
    return f"Int<{x}>"


def _cpp_layout2(L) -> str:
    sh = L.shape if isinstance(L.shape, tuple) else (L.shape,)
    st = L.stride if isinstance(L.stride, tuple) else (L.stride,)
    return f"Layout<{_cpp_tuple(sh)},{_cpp_stride(st)}>"


def cpp_smem_layout(lay) -> str:
    if isinstance(lay, GmmaSmemLayout):
        sw = lay.swizzle
        return (f"ComposedLayout<Swizzle<{sw.b},{sw.m},{sw.s}>,smem_ptr_flag_bits<{lay.bits}>,"
                f"{_cpp_layout2(lay.layout)}>{{}}")
    if getattr(lay, "is_composed", False):
        sw = lay.swizzle
        return f"composition(Swizzle<{sw.b},{sw.m},{sw.s}>{{}}, Int<{lay.offset}>{{}}, {_cpp_layout2(lay.inner)}{{}})"
    return f"{_cpp_layout2(lay)}{{}}"


def case_source(cfg, ops=None) -> str:
    mma = cfg.mma
    al = mma.layout if isinstance(mma.layout, tuple) else tuple(mma.layout.shape)
    body = [f"  auto mma = make_tiled_mma({mma.atom}{{}}, Layout<{_cpp_tuple(tuple(al))}>{{}});"]
    for op, sc in sorted(cfg.smem.items()):
        if ops is not None and op not in ops:
            continue
        body.append(f"""  {{ using T = {sc.type};
    auto sl = {cpp_smem_layout(sc.layout)};
    T* p = (T*)((char*)g_buf + {sc.align % 1024 if sc.align < 1024 else 0});
    Tensor s = make_tensor(make_smem_ptr(p), sl);
    for (int w = 0; w < int(size(mma)) / 128; ++w) {{
      auto thr = mma.get_slice(w * 128);
      Tensor pt = thr.partition_{op}(s);
      auto ishape = product_each(shape(sl));
      Tensor pc = thr.partition_{op}(make_identity_tensor(ishape));
      auto cg = group_modes<1, decltype(rank(pc))::value>(pc);
      Tensor fr = thr.partition_fragment_{op}(s);
      auto pg = group_modes<1, decltype(rank(pt))::value>(pt);
      auto fg = group_modes<1, decltype(rank(fr))::value>(fr);
      std::string d = "[";
      for (int e = 0; e < int(size<1>(fg)); ++e) {{ if (e) d += ","; d += H(uint64_t(fg(0, e))); }}
      std::string a = "[";
      for (int e = 0; e < int(size<1>(pg)); ++e) for (int v = 0; v < int(size<0>(pg)); ++v) {{
        if (e || v) a += ",";
        a += std::to_string((long long)((char*)&pg(v, e) - (char*)g_buf)); }}
      a += "]";
      std::string c = "[";
      for (int e = 0; e < int(size<1>(cg)); ++e) for (int v = 0; v < int(size<0>(cg)); ++v) {{
        if (e || v) c += ",";
        c += std::to_string((long long)crd2idx(cg(v, e), ishape)); }}
      c += "]";
      printf("@@{{\\"op\\":\\"{op}\\",\\"w\\":%d,\\"off\\":%lld,\\"vals\\":%d,\\"descs\\":%s],\\"addr\\":%s,\\"elem\\":%s}}\\n", w,
             (long long)((char*)raw_pointer_cast(pt.data()) - (char*)g_buf), int(size<0>(pg)), d.c_str(), a.c_str(), c.c_str());
    }}
  }}""")
    return "\n".join(body)


PRELUDE_CASES = PRELUDE + "alignas(1024) static char g_buf[1 << 22];\n"


def program(cases) -> str:
    parts = [PRELUDE_CASES, "int main(int argc, char** argv) {\n  int which = argc > 1 ? atoi(argv[1]) : -1;"]
    for i, src in cases:
        parts.append(f"  if (which == {i}) {{\n{src}\n  }}")
    parts.append("}\n")
    return "\n".join(parts)


# ---------------------------------------------------------------------------
# Verdicts from CuTe's numbers and the PTX ISA
# ---------------------------------------------------------------------------

def truth(cfg, rows) -> dict:
    """Per operand: the verdict of each property, from CuTe's descriptors and
    addresses (``rows``: what the program printed) and the PTX ISA's wgmma reads."""
    atom = make_tiled_mma(cfg.mma.atom, cfg.mma.layout).atom
    majors = gmma_majors(atom.name)
    out = {}
    for op, sc in sorted(cfg.smem.items()):
        mine = [r for r in rows if r["op"] == op]
        bits = value_type_bits(sc.type)
        e = bits // 8
        vt = atom.val_type_a if op == "A" else atom.val_type_b
        atype = value_type_info(vt)["ptx"]
        rows_n = atom.shape_mnk[0] if op == "A" else atom.shape_mnk[1]
        kin = atom.shape_mnk[2]
        major = majors[0] if op == "A" else majors[1]
        base = sc.align % 1024 if sc.align < 1024 else 0
        v = {}
        lay = sc.layout
        L = lay.layout if isinstance(lay, GmmaSmemLayout) else lay
        cos = int(L.cosize()) * e
        desc_ok, slot_ok, inb_ok = True, True, True
        read, holder = set(), {}
        eo_ok = True
        for r in mine:
            start0 = r["off"]                       # the partition's data (bytes from the 1024-aligned buffer)
            vals = r["vals"]
            nd = len(r["descs"])
            for j in range(nd):
                d = arch.MatrixDescriptor.decode(int(r["descs"][j], 16))
                # on the device CuTe writes (address of the data >> 4) + the iterator's advance
                adv = d.start_address >> 4
                start = (((start0 >> 4) + adv) & 0x3FFF) << 4
                if (start0 + 16 * adv) % 16:
                    desc_ok = False
                dd = arch.MatrixDescriptor(start, d.leading_byte_offset, d.stride_byte_offset, d.base_offset,
                                           d.swizzle)
                for val in range(vals):
                    cute = r["addr"][j * vals + val]
                    row, k = val % rows_n, val // rows_n
                    ptx = arch.element_address(dd, major, atype, row, k)
                    if ptx != cute:
                        slot_ok = False
                    if not (base <= ptx and ptx + e <= base + cos):
                        inb_ok = False
                    read.add(ptx)
                    el = r["elem"][j * vals + val]
                    if holder.setdefault(ptx, el) != el:      # one byte read as two tile elements
                        eo_ok = False
        cute_all = set(a for r in mine for a in r["addr"])
        v["descriptor"] = "proved" if desc_ok else "refuted"
        v["slot_agreement"] = "proved" if slot_ok else "refuted"
        v["coverage"] = "proved" if cute_all <= read else "refuted"
        v["in_bounds"] = "proved" if inb_ok else "refuted"
        v["exactly_once"] = "proved" if eo_ok else "refuted"
        out[op] = v
    return out


def _build(srcs, tmp: Path, flags, name: str) -> bool:
    """Compile the cases ``srcs`` into one program (the precompiled prelude included)."""
    cpp = tmp / f"{name}.cpp"
    cpp.write_text('#include "prelude.hpp"\n' + program(srcs).replace(PRELUDE_CASES, ""))
    r = subprocess.run(["g++", *CXXFLAGS, *flags, "-I", str(tmp), str(cpp), "-o", str(tmp / name)],
                       capture_output=True, text=True)
    return r.returncode == 0


def _compiling(srcs, tmp, flags, name):
    """(program name, cases in it, cases CuTe refuses): bisect a batch that does not compile."""
    if not srcs:
        return []
    if _build(srcs, tmp, flags, name):
        return [(name, [i for i, _ in srcs])]
    if len(srcs) == 1:
        return [(None, [srcs[0][0]])]
    h = len(srcs) // 2
    return _compiling(srcs[:h], tmp, flags, name + "a") + _compiling(srcs[h:], tmp, flags, name + "b")


# ---------------------------------------------------------------------------
# TMA: what make_tma_copy encodes for each [tma.X] (configs_tma.jsonl)
# ---------------------------------------------------------------------------

def _cpp_gmem(gmem) -> tuple[str, str]:
    """(shape, stride) expressions: stride 1 static, everything else a run-time int."""
    sh = ", ".join(f"int({int(x)})" for x in gmem.shape)
    st = ", ".join("Int<1>{}" if int(x) == 1 else f"int({int(x)})" for x in gmem.stride)
    return f"make_shape({sh})", f"make_stride({st})"


def tma_case_source(cfg, op) -> str:
    from symlayout.harness.hopper_run import _concrete
    from symlayout.tiled.tma import _stage0
    sc, tc = cfg.smem[op], cfg.tma[op]
    lay = sc.layout
    L0, _offs = _stage0(lay.layout if isinstance(lay, GmmaSmemLayout) else lay)
    stage = GmmaSmemLayout(lay.swizzle, lay.bits, L0) if isinstance(lay, GmmaSmemLayout) else L0
    g = _concrete(tc.gmem, cfg)
    gs, gd = _cpp_gmem(g)
    tiler = "make_shape(" + ",".join(f"Int<{b}>{{}}" for b in tc.box) + ")"
    atom = tc.atom + "{}"
    return f"""  {{ using T = {sc.type};
    auto sl = {cpp_smem_layout(stage)};
    Tensor g = make_tensor(make_gmem_ptr((T*)g_buf), {gs}, {gd});
    g_tma.clear();
    auto tma = make_tma_copy({atom}, g, sl, {tiler}, Int<{tc.multicast}>{{}});
    printf("@@{{%s}}\\n", g_tma.c_str());
  }}"""


def tma_main(cases, flags, tmp) -> list:
    """Each [tma.X] in its own process (CuTe asserts at run time): the encode arguments or the assertion."""
    out = []
    srcs = []
    texts = {}
    for cid, text, cfg in cases:
        texts[cid] = text
        for op in sorted(cfg.tma):
            srcs.append((len(srcs), (cid, op, tma_case_source(cfg, op))))
    prog = [(i, src) for i, (_c, _o, src) in srcs]
    built = _compiling(prog, tmp, flags, "tma")
    exe = {i: name for name, ids in built for i in ids}
    for i, (cid, op, _src) in srcs:
        if exe.get(i) is None:
            out.append({"id": cid, "operand": op, "toml": texts[cid], "compiles": False})
            continue
        r = subprocess.run([str(tmp / exe[i]), str(i)], capture_output=True, text=True, timeout=600)
        got = [json.loads(x[2:]) for x in r.stdout.splitlines() if x.startswith("@@")]
        if r.returncode == 0 and got:
            out.append({"id": cid, "operand": op, "toml": texts[cid], "compiles": True, "encode": got[0]})
        else:
            import re
            m = re.search(r"Assertion `(.+)' failed\.", r.stdout + r.stderr)
            out.append({"id": cid, "operand": op, "toml": texts[cid], "compiles": True, "aborts": True,
                        "assertion": m.group(1) if m else (r.stdout + r.stderr)[-300:]})
    return out


def _write_tma(tma_rows) -> None:
    with open(HERE / "configs_tma.jsonl", "w") as f:
        for r in tma_rows:
            f.write(json.dumps(r, separators=(",", ":")) + "\n")
    print(f"configs_tma.jsonl: {len(tma_rows)} TMA copies, {sum(bool(r.get('aborts')) for r in tma_rows)} abort")


def main() -> int:
    from symlayout.tiled.gmma import gmma_operand_model
    flags = include_flags()
    cases = []
    only = os.environ.get("SYMLAYOUT_ORACLE_ONLY")
    extra = tma_campaign() if os.environ.get("SYMLAYOUT_ORACLE_TMA_ONLY") else []
    for cid, text in proof_files() + campaign() + extra:
        if only and only not in cid:
            continue
        try:
            cfg = loads_config(text, cid)
        except Exception as e:                 # the loader refuses it: not a ground-truth case
            print(f"skip {cid}: {e}", file=sys.stderr)
            continue
        if not cfg.smem:
            continue
        if any(not isinstance(x, int) for sc in cfg.smem.values()
               for x in __import__("symlayout.prove.hopper.obligations", fromlist=["_leaves"])._leaves(
                   (sc.layout.layout if isinstance(sc.layout, GmmaSmemLayout) else
                    getattr(sc.layout, "inner", sc.layout)).shape)):
            continue                           # a family: its members are what CuTe compiles
        cases.append((cid, text, cfg))
    rows_out = []
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        (tmp / "prelude.hpp").write_text(PRELUDE_CASES)
        subprocess.run(["g++", *CXXFLAGS, *flags, "-x", "c++-header", str(tmp / "prelude.hpp"), "-o",
                        str(tmp / "prelude.hpp.gch")], check=True)
        if os.environ.get("SYMLAYOUT_ORACLE_TMA_ONLY"):      # regenerate configs_tma.jsonl alone
            tma_rows = tma_main([c for c in cases if c[2].tma], flags, tmp)
            _write_tma(tma_rows)
            return 0
        # symlayout's prediction only decides which cases are tried together first
        predicted_bad = set()
        for i, (_cid, _t, cfg) in enumerate(cases):
            mma = make_tiled_mma(cfg.mma.atom, cfg.mma.layout)
            if any(gmma_operand_model(mma, op, sc.type, sc.layout).error for op, sc in cfg.smem.items()):
                predicted_bad.add(i)
        srcs = [(i, case_source(cfg)) for i, (_cid, _t, cfg) in enumerate(cases)]
        progs = _compiling([x for x in srcs if x[0] not in predicted_bad], tmp, flags, "ok")
        for i, src in srcs:
            if i in predicted_bad:
                progs.append((f"one{i}" if _build([(i, src)], tmp, flags, f"one{i}") else None, [i]))
        exe = {i: name for name, ids in progs for i in ids}
        # a configuration CuTe refuses: which operand (each compiled alone, numbered 1000*i + k)
        per_op = {}
        for i, (_cid, _t, cfg) in enumerate(cases):
            if exe[i] is not None:
                continue
            for k, op in enumerate(sorted(cfg.smem)):
                j = 1000 * i + k
                per_op[i, op] = (f"op{j}" if _build([(j, case_source(cfg, {op}))], tmp, flags, f"op{j}") else None, j)
        for i, (cid, text, cfg) in enumerate(cases):
            rows, compiles = [], {}
            if exe[i] is not None:
                r = subprocess.run([str(tmp / exe[i]), str(i)], capture_output=True, text=True, timeout=600)
                rows = [json.loads(x[2:]) for x in r.stdout.splitlines() if x.startswith("@@")]
                compiles = {op: True for op in cfg.smem}
            else:
                for op in sorted(cfg.smem):
                    name, j = per_op[i, op]
                    compiles[op] = name is not None
                    if name is not None:
                        r = subprocess.run([str(tmp / name), str(j)], capture_output=True, text=True, timeout=600)
                        rows += [json.loads(x[2:]) for x in r.stdout.splitlines() if x.startswith("@@")]
            tr = truth(cfg, rows)
            for op, ok in compiles.items():
                if not ok:
                    tr[op] = {"descriptor": "refuted"}
            rows_out.append({"id": cid, "toml": text, "compiles": compiles, "truth": tr,
                             "descs": {op: [x["descs"][:4] for x in rows if x["op"] == op] for op in cfg.smem}})
        tma_rows = tma_main([c for c in cases if c[2].tma], flags, tmp)
    _write_tma(tma_rows)
    with open(HERE / "configs.jsonl", "w") as f:
        for r in rows_out:
            f.write(json.dumps(r, separators=(",", ":")) + "\n")
    n_ref = sum(1 for r in rows_out for v in r["truth"].values() for s in v.values() if s == "refuted")
    n_rej = sum(not ok for r in rows_out for ok in r["compiles"].values())
    print(f"configs.jsonl: {len(rows_out)} configurations, {n_rej} operands rejected by CuTe, {n_ref} refuted verdicts")
    return 0


if __name__ == "__main__":
    sys.exit(main())
