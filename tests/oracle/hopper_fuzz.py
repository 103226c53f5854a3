"""Random Hopper (SM90 GMMA / TMA) configurations against CuTe C++: the SM80 campaign's comparison
(``fuzz.py``) for wgmma descriptor reads and TMA loads.

    python tests/oracle/hopper_fuzz.py truth --n 300 --seed 1 --out h1.jsonl   # g++ + CuTe headers
    python tests/oracle/hopper_fuzz.py compare h1.jsonl [--save-disagreements F]

A draw (:func:`random_case`): any GMMA atom family (f16/bf16 with either major, tf32, e4m3/e5m2 in all four
pairings, int8/uint8, F16 or F32 accumulators), N of the instruction from 8 to 256, SS or RS, a warpgroup
layout of 1-4 warpgroups; per smem operand a ``GMMA::Layout_{K,MN}_{INTER,SW32,SW64,SW128}_Atom`` tiled to
one or two TiledMMA tiles by one or two K tiles (``tile_to_shape``, either order for MN-major) with 1-4
stages and a base alignment; and now and then a mutant: the other major's atom, a swizzle of another width,
the element-offset (SM80) form of the swizzle, a plain row-major tile, a tile that does not divide the
TiledMMA's, a misaligned base. A ``[tma.X]`` load of the tile (``SM90_TMA_LOAD`` or ``_MULTICAST`` over 2/4
CTAs) from a K- or MN-major global tensor, its pitch padded now and then.

The truth comes from CuTe C++ (``tests/data/sm90/configs_generate.py``'s programs, host-only g++):
``make_tiled_mma``, ``partition_A/B`` of the smem tensor, ``partition_fragment_A/B`` (``make_gmma_desc``,
``DescriptorIterator``), the swizzled address of every element, or CuTe's compile-time refusal; the five
wgmma verdicts are computed from those numbers and the PTX ISA's wgmma reads (``configs_generate.truth``).
For each ``[tma.X]``: ``make_tma_copy`` on the host, the arguments it hands ``cuTensorMapEncodeTiled``
(recorded), or CuTe's refusal (compile error or run-time assert); the ``tma`` verdict is then the CUDA
driver's documented limits on those arguments (:func:`driver_problems`) and the 128-byte smem destination.
The box landing is not part of the truth (``tma_partition`` is device-only; the H200 run checks it).
symlayout's code draws the layouts (``tile_to_shape`` of its GMMA atoms, themselves checked against CuTe in
``tests/data/sm90/gmma_atoms.jsonl``) and gives the PTX ISA's wgmma addressing (``symlayout.arch.gmma``,
checked on the H200); never CuTe's side.  Where symlayout differs by a definition, :data:`WHY` says why and
:func:`explain` decides it from the stored truth (``hopper_known.json``).
"""
from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SM90 = ROOT / "tests" / "data" / "sm90"
TRUTH = HERE / "hopper_truth.jsonl.gz"     # the stored ground truth
KNOWN = HERE / "hopper_known.json"         # the differences explained by a definition, each with its reason
for p in (str(HERE), str(SM90)):
    if p not in sys.path:
        sys.path.insert(0, p)

import oracle_compare  # noqa: E402

GMMA_PROPS = ("descriptor", "slot_agreement", "coverage", "exactly_once", "in_bounds")
BYTES = {"half_t": 2, "bfloat16_t": 2, "tfloat32_t": 4, "float_e4m3_t": 1, "float_e5m2_t": 1, "int8_t": 1,
         "uint8_t": 1}
_F8 = {"E4M3": "float_e4m3_t", "E5M2": "float_e5m2_t"}
_I8 = {"S8": "int8_t", "U8": "uint8_t"}
NS = [8, 16, 24, 32, 48, 64, 80, 96, 128, 192, 256]


# ---------------------------------------------------------------------------
# Draws
# ---------------------------------------------------------------------------

def _atom(rng):
    """(atom name, A type, B type, K, majors (A, B), RS)."""
    fam = rng.choice(["f16", "f16", "bf16", "bf16", "tf32", "f8", "f8", "i8"])
    n = rng.choice(NS)
    rs = rng.random() < 0.25
    ab = "RS" if rs else "SS"
    if fam in ("f16", "bf16"):
        t = "half_t" if fam == "f16" else "bfloat16_t"
        code = rng.choice(["F32F16F16", "F16F16F16"]) if fam == "f16" else "F32BF16BF16"
        ma = "K" if rs else rng.choice(["K", "MN"])
        mb = rng.choice(["K", "MN"])
        return (f"SM90_64x{n}x16_{code}_{ab}<GMMA::Major::{ma},GMMA::Major::{mb}>", t, t, 16, (ma, mb), rs)
    if fam == "tf32":
        return f"SM90_64x{n}x8_F32TF32TF32_{ab}_TN", "tfloat32_t", "tfloat32_t", 8, ("K", "K"), rs
    if fam == "f8":
        a, b = rng.choice(list(_F8)), rng.choice(list(_F8))
        acc = rng.choice(["F32", "F16"])
        return f"SM90_64x{n}x32_{acc}{a}{b}_{ab}_TN", _F8[a], _F8[b], 32, ("K", "K"), rs
    a, b = rng.choice(list(_I8)), rng.choice(list(_I8))
    n = rng.choice([8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256])
    return f"SM90_64x{n}x32_S32{a}{b}_{ab}_TN", _I8[a], _I8[b], 32, ("K", "K"), rs


def _smem(rng, t: str, major: str, mn: int, k: int):
    """(layout text, align, mutant name or None) of one operand's smem tile (``mn`` x ``k``: the TiledMMA's)."""
    from symlayout.algebra.layout import Layout
    from symlayout.atoms.gmma import layout_atom
    mj = "K" if major == "K" else "MN"
    sw = rng.choice(["INTER", "SW32", "SW64", "SW128", "SW128"])
    a = layout_atom(f"{mj}_{sw}", t)
    ar, ac = a.layout.shape
    mnt = mn * rng.choice([1, 1, 2])
    kt = k * rng.choice([1, 2, 4])
    mnt = -(-mnt // ar) * ar
    kt = -(-kt // ac) * ac
    stages = rng.choice([1, 1, 2, 3, 4])
    mutant = None
    r = rng.random()
    if r < 0.06:                                    # a tile that does not divide the TiledMMA's tile
        mutant = "non-dividing tile"
        if rng.random() < 0.5 and mnt > ar:
            mnt -= ar
        elif kt > ac:
            kt -= ac
        else:
            mnt += ar
    order = (1, 2, 3) if mj == "K" else rng.choice([(1, 2, 3), (2, 1, 3)])
    shape = (mnt, kt, stages) if stages > 1 or rng.random() < 0.5 else (mnt, kt)
    lay = a.tile_to_shape(shape, order[:len(shape)])
    text = str(lay)
    align = rng.choice([1024, 1024, 1024, 128, 256, 512])
    r = rng.random()
    if r < 0.07:                                    # the other major's atom
        mutant = "wrong major"
        other = layout_atom(("MN" if mj == "K" else "K") + "_" + sw, t)
        try:
            text = str(other.tile_to_shape(shape, order[:len(shape)]))
        except Exception:
            text = str(other.tile_to_shape(tuple(-(-x // y) * y for x, y in zip(shape, other.layout.shape))
                                           + shape[2:]))
    elif r < 0.14:                                  # a swizzle of another width on the same rows
        mutant = "wrong swizzle"
        b = lay.swizzle.b
        text = text.replace(f"Sw<{b},", f"Sw<{rng.choice([x for x in range(4) if x != b])},", 1)
    elif r < 0.18 and BYTES[t] >= 1:                # the element-offset (SM80) form of the same function
        mutant = "element-offset swizzle"
        text = str(lay.position_independent())
    elif r < 0.21:                                  # plain row-major (K contiguous)
        mutant = "row-major"
        st = shape[2] if len(shape) > 2 else 1
        text = str(Layout((mnt, kt, st), (kt, 1, mnt * kt))) if st > 1 else str(Layout((mnt, kt), (kt, 1)))
    elif r < 0.29:                                  # a misaligned base
        mutant = "misaligned base"
        align = rng.choice([16, 32, 64, 2, 4, 8])
    return text, align, mutant, shape


def _tma(rng, op: str, t: str, major: str, shape) -> str:
    mnt, kt = shape[0], shape[1]
    kmajor = (major == "K") != (rng.random() < 0.15)        # now and then the other majorness (CuTe asserts)
    rows, cols = mnt * rng.choice([1, 2, 3]), kt * rng.choice([1, 2, 4])
    e = BYTES[t]
    pad = 0 if rng.random() < 0.85 else rng.choice([1, 2, 4, 8, 16 // e or 1])
    gmem = (f"({rows},{cols}):({cols + pad},1)" if kmajor else f"({rows},{cols}):(1,{rows + pad})")
    mc = rng.choice([1, 1, 1, 2, 4])
    box = (mnt, kt)
    if rng.random() < 0.1:
        box = (mnt // 2 or 1, kt)
    s = f'[tma.{op}]\natom = "{"SM90_TMA_LOAD_MULTICAST" if mc > 1 else "SM90_TMA_LOAD"}"\n'
    if mc > 1:
        s += f"multicast = {mc}\n"
    return s + f'gmem = "{gmem}"\nbox = "({box[0]},{box[1]})"\n'


def random_case(rng) -> tuple[str, dict]:
    """(TOML, what was drawn) of one random Hopper configuration."""
    atom, ta, tb, k, (ma, mb), rs = _atom(rng)
    n = int(atom.split("x")[1])
    al = rng.choice([(1, 1, 1), (1, 1, 1), (2, 1, 1), (1, 2, 1), (2, 2, 1), (4, 1, 1), (1, 4, 1)])
    s = f'name = "random hopper"\n[mma]\natom = "{atom}"\nlayout = "({al[0]},{al[1]},{al[2]})"\n'
    drawn = {"atom": atom, "layout": list(al), "mutants": {}}
    tmas = ""
    for op, t, mj, mn in (("A", ta, ma, 64 * al[0]), ("B", tb, mb, n * al[1])):
        if op == "A" and rs:
            continue
        text, align, mutant, shape = _smem(rng, t, mj, mn, k)
        s += f'[smem.{op}]\ntype = "{t}"\nlayout = "{text}"\nalign = {align}\n'
        if mutant:
            drawn["mutants"][op] = mutant
        if rng.random() < 0.4:
            tmas += _tma(rng, op, t, mj, shape)
    return s + tmas, drawn


def random_cases(n: int, seed: int) -> list:
    """``n`` distinct (id, TOML, drawn), deterministic in ``seed``; only what symlayout's loader reads
    (a TOML it refuses is not a configuration; those are counted, not kept)."""
    from symlayout.config import loads_config
    rng = random.Random(seed)
    out, seen, tries = [], set(), 0
    while len(out) < n and tries < 20 * n:
        tries += 1
        text, drawn = random_case(rng)
        if text in seen:
            continue
        seen.add(text)
        cid = f"h{seed}-{len(out):04d}"
        try:
            cfg = loads_config(text, cid)
        except Exception as e:                      # noqa: BLE001  (a draw the loader refuses)
            print(f"skip draw: {str(e)[:160]}", file=sys.stderr)
            continue
        out.append((cid, text, drawn, cfg))
    return out


# ---------------------------------------------------------------------------
# The CUDA driver's documented limits on cuTensorMapEncodeTiled's arguments
# ---------------------------------------------------------------------------

_ELEM = {0: 1, 1: 2, 2: 4, 3: 4, 4: 8, 5: 8, 6: 2, 7: 4, 8: 8, 9: 2, 10: 4, 11: 4, 12: 4}
_SPAN = {0: None, 1: 32, 2: 64, 3: 128}


def driver_problems(enc: dict) -> list[str]:
    """What ``cuTensorMapEncodeTiled`` refuses (CUDA driver API reference): rank 1-5, every global
    dimension in [1, 2^32], global strides multiples of 16 below 2^40, box dimensions in [1, 256], the
    inner box a multiple of 16 bytes, element strides in [1, 8], and with a swizzle the inner box at most
    the swizzle's span."""
    e = _ELEM[enc["data_type"]]
    out = []
    if not 1 <= enc["rank"] <= 5:
        out.append("rank")
    if any(not 1 <= d <= 1 << 32 for d in enc["global_dim"]):
        out.append("global_dim")
    if any(s % 16 or s >= 1 << 40 for s in enc["global_strides"]):
        out.append("global_strides")
    if any(not 1 <= b <= 256 for b in enc["box_dim"]):
        out.append("box_dim")
    if enc["interleave"] == 0 and (enc["box_dim"][0] * e) % 16:
        out.append("inner box bytes")
    if any(not 1 <= s <= 8 for s in enc["element_strides"]):
        out.append("element_strides")
    span = _SPAN[enc["swizzle"]]
    if span is not None and enc["box_dim"][0] * e > span:
        out.append("inner box > swizzle span")
    return out


def tma_truth(rec: dict, align: int, elems: int) -> str:
    """``tma`` from CuTe's record of one ``[tma.X]``: refuted where CuTe does not build the copy or the driver
    refuses its tensor map, or where a TMA destination is not 128-byte aligned (``cp.async.bulk.tensor``'s
    rule): each instruction fills ``prod(box_dim)`` contiguous elements of the ``elems`` of the buffer (all
    stages; CuTe's ``tma_partition``), from a base aligned to ``align`` bytes."""
    if not rec["compiles"] or rec.get("aborts") or driver_problems(rec["encode"]):
        return "refuted"
    enc = rec["encode"]
    box = 1
    for b in enc["box_dim"]:
        box *= b
    if align % 128 or (elems > box and box * _ELEM[enc["data_type"]] % 128):
        return "refuted"
    return "proved"


def smem_elems(cfg, op: str) -> int:
    """The elements of ``[smem.op]``'s buffer (every stage)."""
    lay = cfg.smem[op].layout
    return int(getattr(lay, "layout", getattr(lay, "inner", lay)).size())


# ---------------------------------------------------------------------------
# Truth: CuTe C++ through configs_generate's programs
# ---------------------------------------------------------------------------

def _gmma_entries(i, cfg):
    """(program entries, per-operand entry numbers): the whole case as entry ``10*i``; each operand alone
    as ``10*i + 1 + k`` (used when the whole case does not compile)."""
    import configs_generate as cg
    return (10 * i, cg.case_source(cfg)), {op: (10 * i + 1 + k, cg.case_source(cfg, {op}))
                                              for k, op in enumerate(sorted(cfg.smem))}


def _run(exe: Path, entry: int) -> tuple[int, str]:
    r = subprocess.run([str(exe), str(entry)], capture_output=True, text=True, timeout=600)
    return r.returncode, r.stdout + r.stderr


def _rows(out: str) -> list:
    return [json.loads(x[2:]) for x in out.splitlines() if x.startswith("@@")]


def _predicted_bad(cfg) -> set:
    """The operands symlayout guesses CuTe refuses (the guess only decides how the programs are grouped:
    a refused operand is compiled alone, syntax only, and built when it does compile)."""
    from symlayout.tiled.gmma import gmma_operand_model
    from symlayout.tiled.mma import make_tiled_mma
    out = set()
    for op, sc in cfg.smem.items():
        try:
            if gmma_operand_model(make_tiled_mma(cfg.mma.atom, cfg.mma.layout), op, sc.type, sc.layout).error:
                out.add(op)
        except Exception:                                   # noqa: BLE001
            out.add(op)
    return out


def _alone(e: int, src: str, tmp: Path, flags, name: str):
    """The program of entry ``e`` alone (its name), or None where it does not compile (checked syntax only
    first: most of these are CuTe's refusals)."""
    import configs_generate as cg
    cpp = tmp / f"{name}s.cpp"
    cpp.write_text('#include "prelude.hpp"\n' + cg.program([(e, src)]).replace(cg.PRELUDE_CASES, ""))
    r = subprocess.run(["g++", *cg.CXXFLAGS, *flags, "-I", str(tmp), "-fsyntax-only", str(cpp)], capture_output=True)
    if r.returncode != 0:
        return None
    return name if cg._build([(e, src)], tmp, flags, name) else None


def _tma_predicted_bad(cfg, op) -> bool:
    from symlayout.harness.hopper_run import _concrete
    from symlayout.tiled.tma import tma_model
    sc, tc = cfg.smem[op], cfg.tma[op]
    try:
        return tma_model(sc.type, _concrete(tc.gmem, cfg), sc.layout, tc.box, tc.multicast, tc.atom).error is not None
    except Exception:                                       # noqa: BLE001
        return True


def batch_truth(batch, tmp: Path, flags, name: str) -> list:
    """CuTe's truth for a batch of (id, toml, drawn, cfg): the lines to store."""
    import re

    import configs_generate as cg
    together, alone = [], []            # (entry, source): compiled in one program (bisected) / one by one
    per_op = {}
    for i, (cid, _t, _d, cfg) in enumerate(batch):
        w, ops = _gmma_entries(i, cfg)
        per_op[i] = ops
        bad = _predicted_bad(cfg)
        if not bad:
            together.append(w)
        for op, e in ops.items():
            if bad:
                (alone if op in bad else together).append(e)
        for k, op in enumerate(sorted(cfg.tma)):
            e = (100000 + 10 * i + k, cg.tma_case_source(cfg, op))
            (alone if _tma_predicted_bad(cfg, op) else together).append(e)
    built = cg._compiling(together, tmp, flags, name)
    exe = {e: n for n, es in built for e in es}
    for e, src in alone:
        exe[e] = _alone(e, src, tmp, flags, f"{name}a{e}")
    for i, ops in per_op.items():                  # a whole case that did not compile: each operand alone
        if 10 * i in exe and exe[10 * i] is None:
            for e, src in ops.values():
                if e not in exe:
                    exe[e] = _alone(e, src, tmp, flags, f"{name}o{e}")
    out = []
    for i, (cid, text, drawn, cfg) in enumerate(batch):
        rows, compiles = [], {}
        if exe.get(10 * i) is not None:     # (entries of the whole case: 10*i; of one operand: 10*i + 1 + k)
            rc, o = _run(tmp / exe[10 * i], 10 * i)
            rows = _rows(o)
            compiles = {op: True for op in cfg.smem}
        else:
            for op, (e, _s) in per_op[i].items():
                compiles[op] = exe.get(e) is not None
                if compiles[op]:
                    rows += _rows(_run(tmp / exe[e], e)[1])
        tr = cg.truth(cfg, rows)
        for op, ok in compiles.items():
            if not ok:
                tr[op] = {"descriptor": "refuted"}
        tma = {}
        for k, op in enumerate(sorted(cfg.tma)):
            e = 100000 + 10 * i + k
            if exe.get(e) is None:
                rec = {"compiles": False}
            else:
                rc, o = _run(tmp / exe[e], e)
                got = _rows(o)
                if rc == 0 and got:
                    rec = {"compiles": True, "encode": got[0]}
                else:
                    m = re.search(r"Assertion `(.+)' failed\.", o)
                    rec = {"compiles": True, "aborts": True, "assertion": m.group(1) if m else o[-300:]}
            rec["tma"] = tma_truth(rec, cfg.smem[op].align, smem_elems(cfg, op))
            tma[op] = rec
        out.append({"id": cid, "toml": text, "drawn": drawn, "compiles": compiles, "truth": tr, "tma": tma})
    return out


def truth(args) -> int:
    import configs_generate as cg
    flags = cg.include_flags()
    cases = random_cases(args.n, args.seed)
    done = {r["id"] for r in load_truth(args.out)} if args.resume and Path(args.out).exists() else set()
    cases = [c for c in cases if c[0] not in done]
    t0 = time.perf_counter()
    batches = [cases[i:i + args.batch] for i in range(0, len(cases), args.batch)]
    n_done = 0
    with tempfile.TemporaryDirectory() as d, open(args.out, "a" if args.resume else "w") as f:
        tmp = Path(d)
        (tmp / "prelude.hpp").write_text(cg.PRELUDE_CASES)
        subprocess.run(["g++", *cg.CXXFLAGS, *flags, "-x", "c++-header", str(tmp / "prelude.hpp"), "-o",
                        str(tmp / "prelude.hpp.gch")], check=True)
        with ThreadPoolExecutor(args.jobs) as ex:
            futs = [ex.submit(batch_truth, b, tmp, flags, f"b{j}") for j, b in enumerate(batches)]
            for fu in as_completed(futs):            # a run cut short keeps what it has
                if fu.exception() is not None:
                    print(f"batch failed: {fu.exception()!r}", file=sys.stderr, flush=True)
                    continue
                for line in fu.result():
                    line["seed"] = args.seed
                    f.write(json.dumps(line, sort_keys=True, separators=(",", ":")) + "\n")
                    n_done += 1
                f.flush()
                print(f"{n_done}/{len(cases)} {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    print(f"{len(cases)} configurations (seed {args.seed}) through CuTe: {time.perf_counter() - t0:.0f} s -> {args.out}")
    return 0


# ---------------------------------------------------------------------------
# Comparison with symlayout
# ---------------------------------------------------------------------------

def load_truth(path) -> list:
    import gzip
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as f:
        return [json.loads(x) for x in f if x.strip()]


def load_known(path=KNOWN) -> dict:
    return json.loads(Path(path).read_text())["cases"] if Path(path).exists() else {}


def symlayout_verdicts(text: str, cid: str) -> dict:
    """``{(operand, via, property): status}`` of ``prove_config``, ``{"error": msg}`` on a refused input or
    an internal error, and ``(operand, "tma-encode")``: the tensor map symlayout derives (or its refusal)."""
    from symlayout.config import loads_config
    from symlayout.prove.engine import prove_config
    try:
        cfg = loads_config(text, cid)
        rep = prove_config(cfg, properties=list(GMMA_PROPS) + ["tma"])
    except Exception as e:                                  # noqa: BLE001  (a difference, never a pass)
        return {"error": f"{type(e).__name__}: {e}"}
    if rep.error:
        return {"error": rep.error}
    out = {(r.operand, r.via, r.property): r.status for r in rep.results}
    out.update({("method", r.operand, r.via): r.method for r in rep.results if r.property == "descriptor"})
    for op in cfg.tma:
        out[(op, "tma-encode")] = _encode(cfg, op)
    return out


def _encode(cfg, op):
    from symlayout.arch import tma as arch_tma
    from symlayout.harness.hopper_run import _concrete
    from symlayout.tiled.tma import tma_model
    sc, tc = cfg.smem[op], cfg.tma[op]
    m = tma_model(sc.type, _concrete(tc.gmem, cfg), sc.layout, tc.box, tc.multicast, tc.atom)
    if m.error is not None:
        return None
    c = m.copy
    return {"data_type": arch_tma.DATA_TYPES[c.data_type][0], "rank": c.rank, "global_dim": list(c.global_dim),
            "global_strides": list(c.global_strides), "box_dim": list(c.box_dim),
            "element_strides": list(c.element_strides), "swizzle": arch_tma.SWIZZLE_ENUM[c.swizzle]}


_ENC_KEYS = ("data_type", "rank", "global_dim", "global_strides", "box_dim", "element_strides", "swizzle")


def differences(row: dict, sym: dict) -> list:
    """``[[what, CuTe says, symlayout says]]``; empty when they agree."""
    from symlayout.config import loads_config
    if "error" in sym:
        return [["prove", "verdicts", f"error: {sym['error'][:200]}"]]
    out = []
    for op, tr in sorted(row["truth"].items()):
        if not row["compiles"][op]:
            got = sym.get((op, "wgmma", "descriptor"))
            if got != "refuted" or sym.get(("method", op, "wgmma")) != "cute":
                out.append([f"descriptor[{op}]", "rejected", f"{got} ({sym.get(('method', op, 'wgmma'))})"])
            continue
        for p in GMMA_PROPS:
            got = sym.get((op, "wgmma", p), "absent")
            if got != tr[p]:
                out.append([f"{p}[{op}]", tr[p], got])
    cfg = loads_config(row["toml"], row["id"])
    for op, rec in sorted(row["tma"].items()):
        got = sym.get((op, "tma", "tma"), "absent")
        want = tma_truth(rec, cfg.smem[op].align, smem_elems(cfg, op))
        if got != want:
            out.append([f"tma[{op}]", want, got])
        enc = sym.get((op, "tma-encode"))
        if rec["compiles"] and not rec.get("aborts"):
            want = {k: rec["encode"][k] for k in _ENC_KEYS}
            if enc != want:
                out.append([f"tensor map[{op}]", json.dumps(want, sort_keys=True), json.dumps(enc, sort_keys=True)])
        elif enc is not None:
            out.append([f"tensor map[{op}]", "refused" if not rec["compiles"] else f"asserts: {rec['assertion']}",
                        "encoded"])
    return out


def disagreements(rows: list) -> list:
    out = []
    for r in rows:
        d = differences(r, symlayout_verdicts(r["toml"], r["id"]))
        if d:
            out.append({"id": r["id"], "toml": r["toml"], "drawn": r["drawn"], "differences": d})
    return out


#: the differences explained by a definition: kind -> why (``explain`` decides the kind from the stored truth)
WHY = {
    "descriptor range": "the tile reaches past 256 KiB: symlayout refutes descriptor (the 14-bit start field cannot "
                        "address it; wgmma reads the wrapped address, so slot_agreement/coverage/exactly_once are "
                        "refuted by both); the oracle's descriptor is 'CuTe compiles it and the start is on the "
                        "16-byte grid', which holds",
    "tma landing": "the box's inner extent is narrower than the TMA swizzle span: the hardware lays each box row out "
                   "at the span (measured on the H200, docs/hardware/sm90-probe-2026-12-01.md; arch/tma.py), so the "
                   "load does not land where the smem layout keeps the elements and symlayout refutes tma; the "
                   "host-side oracle has no landing (tma_partition is device-only) and proves it",
}


def why(kind: str) -> str:
    return " / ".join(WHY[k] for k in kind.split(" + "))


def explain(row: dict, diffs: list):
    """The kinds of :data:`WHY` that explain every difference of ``diffs`` of ``row`` (``" + "``-joined), or
    None."""
    from symlayout.config import loads_config
    cfg = loads_config(row["toml"], row["id"])
    kinds = set()
    for what, cute, sym in diffs:
        op = what[what.index("[") + 1]
        if what.startswith("descriptor[") and (cute, sym) == ("proved", "refuted"):
            if smem_elems(cfg, op) * BYTES[cfg.smem[op].type] > 1 << 18:
                kinds.add("descriptor range")
                continue
        if what.startswith("tma[") and (cute, sym) == ("proved", "refuted"):
            enc = row["tma"][op]["encode"]
            span = _SPAN[enc["swizzle"]]
            if span and enc["box_dim"][0] * _ELEM[enc["data_type"]] < span:
                kinds.add("tma landing")
                continue
        return None
    return " + ".join(sorted(kinds)) or None


def known_file(bad: list) -> dict:
    """``hopper_known.json``'s content for the disagreements ``bad`` that :func:`explain` explains."""
    rows = {r["id"]: r for r in load_truth(TRUTH)}
    cases = {}
    for b in bad:
        kind = explain(rows[b["id"]], b["differences"])
        if kind:
            cases[b["id"]] = {"kind": kind, "differences": b["differences"], "why": why(kind)}
    return {"_doc": "Configurations of hopper_truth.jsonl.gz where symlayout differs from CuTe C++'s oracle by a "
                    "definition (hopper_fuzz.WHY, decided by hopper_fuzz.explain); test_hopper_fuzz fails on any "
                    "other difference.", "cases": cases}


def compare(args) -> int:
    rows = load_truth(args.truth)
    known = load_known(args.known)
    t0 = time.perf_counter()
    bad = disagreements(rows)
    new = oracle_compare.report(bad, known, args, f"{len(rows)} configurations", t0)
    if args.write_known:
        Path(args.known).write_text(json.dumps(known_file(bad), indent=1, sort_keys=True) + "\n")
    return 1 if new else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("truth")
    t.add_argument("--n", type=int, default=200)
    t.add_argument("--seed", type=int, default=1)
    t.add_argument("--jobs", type=int, default=2)
    t.add_argument("--batch", type=int, default=12)
    t.add_argument("--out", required=True)
    t.add_argument("--resume", action="store_true", help="append to --out, skipping the configurations it holds")
    c = sub.add_parser("compare")
    c.add_argument("truth")
    c.add_argument("--save-disagreements")
    c.add_argument("--known", default=str(KNOWN))
    c.add_argument("--write-known", action="store_true", help="write --known: the disagreements explain() explains")
    args = ap.parse_args(argv)
    return truth(args) if args.cmd == "truth" else compare(args)


if __name__ == "__main__":
    sys.exit(main())
