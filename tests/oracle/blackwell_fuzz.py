"""Random Blackwell (SM100 UMMA) configurations against CuTe C++: the MMA side of contract Version 3 proved
end to end (configuration text -> ``symlayout prove``) on cases nobody chose.

    python tests/oracle/blackwell_fuzz.py truth --n 120 --seed 1 --out b1.jsonl.gz   # g++ + CuTe headers
    python tests/oracle/blackwell_fuzz.py compare b1.jsonl.gz

A draw (:func:`random_case`): an ``SM100_MMA_*`` SS atom of any family modelled (F16BF16 in half/bf16, TF32,
S8 in int8/uint8, F8F6F4 in e4m3/e5m2 -- spelled through its traits as CuTe does), one CTA or a pair, M and N
drawn over the legal range and now and then outside it (CuTe's static_asserts), either major per operand;
per operand a ``UMMA::Layout_{K,MN}_*_Atom`` (now and then the other major's, or the 32-byte-atomic
``MN_SW128_32B`` on a K-major operand: CuTe refuses them) tiled by ``UMMA::tile_to_mma_shape`` to 1-2
instructions along MN, 1-4 along K and 1-3 stages, K- or MN-first.

The truth comes from CuTe C++ (CUTLASS 4.2 headers, host-only g++, every compiling case in ONE program):
``tile_to_mma_shape``'s print of each buffer, every descriptor ``make_fragment_A/B`` builds (``make_umma_desc``
and the ``DescriptorIterator`` advance), and a 64-bit digest of ``(m, k, stage, byte address)`` of every
element of ``partition_A/B`` (peer 0 of a pair) in fragment order, the byte address that of CuTe's swizzled
smem tensor over a 1024-byte aligned buffer; a case symlayout says CuTe refuses is compiled alone and must
fail with the same ``static_assert``.  symlayout's side is the whole prover on the configuration text; its
verdicts must be what the truth implies: CuTe's descriptors read through the PTX ISA's addressing
(:mod:`symlayout.arch.tcgen05`; no Blackwell GPU checked it) land on CuTe's addresses, so every property
holds, and a refusal is a ``descriptor`` (or atom) refutation with CuTe's message.
"""
from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
for p in (str(ROOT), str(ROOT / "tests")):
    if p not in sys.path:
        sys.path.insert(0, p)

import numpy as np  # noqa: E402

from symlayout.atoms import umma  # noqa: E402
from symlayout.config import loads_config  # noqa: E402
from symlayout.prove.engine import prove_config  # noqa: E402
from symlayout.tiled.mma import make_tiled_mma  # noqa: E402
from symlayout.tiled.umma import umma_read_arrays  # noqa: E402

TRUTH = HERE / "blackwell_truth.jsonl.gz"
PROPS = ("descriptor", "slot_agreement", "coverage", "exactly_once", "in_bounds")
K_ATOMS = ["K_INTER", "K_SW32", "K_SW64", "K_SW128"]
MN_ATOMS = ["MN_INTER", "MN_SW32", "MN_SW64", "MN_SW128", "MN_SW128_32B"]
TYPES = {"F16BF16": [("half_t", "half_t", "float"), ("bfloat16_t", "bfloat16_t", "float"),
                     ("half_t", "half_t", "half_t")],
         "TF32": [("tfloat32_t", "tfloat32_t", "float")],
         "S8": [("int8_t", "int8_t", "int32_t"), ("uint8_t", "int8_t", "int32_t")],
         "F8F6F4": [("float_e4m3_t", "float_e4m3_t", "float"), ("float_e5m2_t", "float_e4m3_t", "float")]}
#: weights of the digest: element i of the fragment order contributes ``(m + 2^12 k + 2^20 s + 2^28 addr) * W(i)``
MUL = 0x9E3779B97F4A7C15


# ---------------------------------------------------------------------------
# Draws
# ---------------------------------------------------------------------------


def random_case(rng: random.Random, i: int) -> dict:
    fam = rng.choice(["F16BF16", "F16BF16", "TF32", "S8", "F8F6F4"])
    a, b, c = rng.choice(TYPES[fam])
    pair = rng.random() < 0.35
    legal = rng.random() < 0.9
    m = rng.choice([128, 256] if pair else [64, 128]) if legal else rng.choice([32, 64, 128, 256])
    n = rng.choice([16, 32, 64, 96, 128, 192, 256] if pair or fam == "F8F6F4" else [8, 16, 24, 32, 64, 128, 256])
    if not legal:
        n = rng.choice([8, 24, 40, 48, 264])
    ma, mb = rng.choice(["K", "MN"]), rng.choice(["K", "MN"])
    name = (f"SM100_MMA_{fam}{'_2x1SM' if pair else ''}_SS<{a},{b},{c},{m},{n},UMMA::Major::{ma},"
            f"UMMA::Major::{mb}>")
    ops = {}
    for op, major, t in (("A", ma, a), ("B", mb, b)):
        kinds = K_ATOMS if major == "K" else MN_ATOMS
        kind = rng.choice(kinds)
        r = rng.random()
        if r < 0.06:
            kind = rng.choice(MN_ATOMS if major == "K" else K_ATOMS)       # the other major's atom
        elif r < 0.1 and major == "K":
            kind = "MN_SW128_32B"
        ops[op] = {"kind": kind, "type": t, "mmas_mn": rng.choice([1, 1, 2]), "mmas_k": rng.choice([1, 2, 4]),
                   "mn_first": rng.random() < 0.5}
    stages = rng.choice([1, 2, 3])
    return {"id": f"bw{i:04d}", "atom": name, "ops": ops, "stages": stages}


def op_of(case):
    return umma.parse_umma_name(case["atom"])


def mma_shape(case, operand) -> tuple:
    """``partition_shape_A/B(mma, (MN*mmas_mn, K*mmas_k))`` + stages, one CTA: ``((mn, k), mmas_mn, mmas_k, st)``."""
    o = op_of(case)
    d = case["ops"][operand]
    mn = (o.m if operand == "A" else o.n) // o.cta_group
    return ((mn, o.k), d["mmas_mn"], d["mmas_k"], case["stages"])


def smem_layout(case, operand):
    """symlayout's ``tile_to_mma_shape`` of the operand's buffer (raises where the atom does not tile it)."""
    d = case["ops"][operand]
    atom = umma.layout_atom(d["kind"], d["type"])
    order = (1, 0, 2) if d["mn_first"] else None
    return umma.tile_to_mma_shape(atom, mma_shape(case, operand), order)


def drawable(case) -> bool:
    """The atom tiles both buffers (else CuTe's tile_to_shape does not compile either: not a case)."""
    if umma.cute_rejections(op_of(case)):
        return True
    try:
        for op in ("A", "B"):
            lay = smem_layout(case, op)
            if lay.layout.size() != _size(mma_shape(case, op)):
                return False
    except Exception:                                   # noqa: BLE001 - (does not tile: redrawn)
        return False
    return True


def _size(shape) -> int:
    (mn, k), a, b, s = shape
    return mn * k * a * b * s


def draw_desc_refusals(n: int, seed: int) -> list:
    """``n`` cases of legal atoms whose buffers ``make_umma_desc`` refuses (the other major's layout atom, the
    32-byte-atomic swizzle on a K-major operand, ...): each is one compile, so they are drawn apart."""
    rng = random.Random(seed)
    out, i = [], 0
    while len(out) < n:
        c = random_case(rng, seed * 100000 + i)
        i += 1
        if drawable(c) and not umma.cute_rejections(op_of(c)) and cute_rejects(c) is not None:
            out.append(c)
    return out


def draw(n: int, seed: int) -> list:
    rng = random.Random(seed)
    out = []
    i = refused = 0
    while len(out) < n:
        c = random_case(rng, seed * 100000 + i)
        i += 1
        if not drawable(c):
            continue
        if cute_rejects(c) is not None:
            if refused >= max(1, n // 10):              # (each refusal is one compile: a tenth of the cases)
                continue
            refused += 1
        out.append(c)
    return out


def config_text(case) -> str:
    o = op_of(case)
    lines = [f'name = "{case["id"]}"', "[mma]", f'atom = "{case["atom"]}"',
             f'cluster = "({2 if o.cta_group == 2 else 1},1,1)"']
    for op in ("A", "B"):
        if not umma.cute_rejections(o):
            lines += ["", f"[smem.{op}]", f'type = "{case["ops"][op]["type"]}"',
                      f'layout = "{smem_layout(case, op)}"', "align = 1024"]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------
# CuTe C++
# ---------------------------------------------------------------------------


def cpp_atom(o) -> str:
    from sm100_cpp import cpp_atom as atom
    return atom(o)


def _cpp_case(i, case) -> list:
    o = op_of(case)
    body = [f"void case_{i}() {{", f"  auto mma = make_tiled_mma({cpp_atom(o)});", "  auto thr = mma.get_slice(0);"]
    for op in ("A", "B"):
        d = case["ops"][op]
        (mn, k), a, b, st = mma_shape(case, op)
        tot_mn, tot_k = mn * o.cta_group * a, k * b
        order = "Step<_2,_1,_3>{}" if d["mn_first"] else "Step<_1,_2,_3>{}"
        t = d["type"]
        body += [
            "  {",
            f"    auto shp = partition_shape_{op}(mma, make_shape(Int<{tot_mn}>{{}}, Int<{tot_k}>{{}}, Int<{st}>{{}}));",
            f"    auto sL = UMMA::tile_to_mma_shape(UMMA::Layout_{d['kind']}_Atom<{t}>{{}}, shp, {order});",
            f'    printf("{case["id"]} {op} layout "); print(sL); printf("\\n");',
            f"    alignas(1024) static {t} buf[cosize_v<decltype(sL)>];",
            "    auto s = make_tensor(make_smem_ptr(buf), sL);",
            f"    auto frag = mma.make_fragment_{op}(s);",
            f'    printf("{case["id"]} {op} desc");',
            '    for (int j = 0; j < int(size(frag)); ++j) printf(" %llx", (unsigned long long)uint64_t(frag(j)));',
            '    printf("\\n");',
            f"    static int idx[{tot_mn} * {tot_k} * {st}];",
            f"    for (int q = 0; q < {tot_mn} * {tot_k} * {st}; ++q) idx[q] = q;",
            f"    auto part = thr.partition_{op}(make_tensor(&idx[0], make_layout(make_shape(Int<{tot_mn}>{{}}, "
            f"Int<{tot_k}>{{}}, Int<{st}>{{}}))));",
            "    uint64_t h = 0;",
            "    for (int q = 0; q < int(size(s)); ++q) {",
            f"      uint64_t e = uint64_t(part(q)), m = e % {tot_mn}, kk = (e / {tot_mn}) % {tot_k}, "
            f"ss = e / ({tot_mn} * {tot_k});",
            "      uint64_t addr = uint64_t((char const*)&s(q) - (char const*)&buf[0]);",
            f"      h += (m + (kk << 12) + (ss << 20) + (addr << 28)) * (uint64_t(q) * {MUL}ull + 1);",
            "    }",
            f'    printf("{case["id"]} {op} digest %llx\\n", (unsigned long long)h);',
            "  }"]
    return body + ["}"]


def cpp_program(cases) -> str:
    body = []
    for i, c in enumerate(cases):
        body += _cpp_case(i, c)
    body += ["int main() {"] + [f"  case_{i}();" for i in range(len(cases))] + ["}"]
    return "\n".join(body) + "\n"


def cute_rejects(case) -> str | None:
    """symlayout's prediction: CuTe's first static_assert message for this case, or None."""
    o = op_of(case)
    bad = umma.cute_rejections(o)
    if bad:
        return bad[0]
    for op in ("A", "B"):
        major = o.a_major if op == "A" else o.b_major
        try:
            umma.make_umma_desc(major, smem_layout(case, op))
        except umma.UmmaDescriptorError as e:
            return str(e)
    return None


def truth(cases, cxx) -> list:
    """One row per case: CuTe C++'s layouts, descriptors and digests (compiling cases, one program) or its
    static_assert messages (the cases symlayout says it refuses, one compile each)."""
    ok = [c for c in cases if cute_rejects(c) is None]
    rows = {c["id"]: {"id": c["id"], "case": c} for c in cases}
    out = cxx.run(cpp_program(ok)) if ok else ""
    for line in out.splitlines():
        parts = line.split(" ", 3)
        if len(parts) < 4 or parts[0] not in rows:
            continue                                    # (CuTe's host-side notes, e.g. on cast_smem_ptr_to_uint)
        cid, op, what, rest = parts
        rows[cid].setdefault("cute", {}).setdefault(op, {})[what] = rest.strip()
    for c in cases:
        if cute_rejects(c) is None:
            continue
        body = "\n".join(_cpp_case(0, c)) + "\nint main() { case_0(); }\n"
        rows[c["id"]]["static_asserts"] = cxx.static_asserts(body)
    return list(rows.values())


# ---------------------------------------------------------------------------
# symlayout's side and the comparison
# ---------------------------------------------------------------------------


def digest(case, operand) -> int:
    """The digest of :func:`_cpp_case` from symlayout's model of the operand (CuTe's side: the partition's
    logical elements and the swizzled byte addresses, base 0)."""
    o = op_of(case)
    mma = make_tiled_mma(case["atom"])
    lay = smem_layout(case, operand)
    (mn, k), a, b, st = mma_shape(case, operand)
    m = umma_read_arrays(mma, operand, lay, (mn * o.cta_group * a, k * b, st), 0)
    e = m.elements.ravel().astype(np.uint64)
    tot, kk = np.uint64(mn * o.cta_group * a), np.uint64(k * b)     # (the pair's tile, as CuTe's partition)
    mm, kq, ss = e % tot, (e // tot) % kk, e // (tot * kk)
    addr = m.cute.ravel().astype(np.uint64)
    q = np.arange(e.size, dtype=np.uint64)
    with np.errstate(over="ignore"):
        w = q * np.uint64(MUL) + np.uint64(1)
        h = ((mm + (kq << np.uint64(12)) + (ss << np.uint64(20)) + (addr << np.uint64(28))) * w).sum(dtype=np.uint64)
    return int(h)


def _strip(text: str) -> str:
    return re.sub(r"_(\d)", r"\1", text.strip())


def disagreements(rows) -> list:
    """Every difference between symlayout (the prover on the configuration text) and the stored truth."""
    out = []
    for r in rows:
        diff = _compare(r)
        if diff:
            out.append({"id": r["id"], "differences": diff})
    return out


def _compare(r) -> list:
    case = r["case"]
    diff = []
    rep = prove_config(loads_config(config_text(case), f"{case['id']}.toml"))
    if rep.error:
        return [f"symlayout error: {rep.error}"]
    got = {(x.property, x.operand): x for x in rep.results}
    predicted = cute_rejects(case)
    if "static_asserts" in r:                           # CuTe refuses the case
        theirs = r["static_asserts"]
        if predicted is None or not theirs or not any(t.rstrip(".") in predicted for t in theirs):
            diff.append(f"CuTe's static_asserts {theirs} vs symlayout's {predicted!r}")
        if not any(x.status == "refuted" and x.method == "cute" and predicted and predicted in x.counterexample.message
                   for x in rep.results):
            diff.append("symlayout does not refute it with CuTe's reason")
        return diff
    if predicted is not None:
        return [f"symlayout says CuTe refuses ({predicted}) but CuTe compiles it"]
    o = op_of(case)
    for op in ("A", "B"):
        cute = r.get("cute", {}).get(op)
        if cute is None:
            diff.append(f"{op}: no CuTe output")
            continue
        lay = smem_layout(case, op)
        if _strip(cute["layout"]) != str(lay):
            diff.append(f"{op}: layout {_strip(cute['layout'])} vs {lay}")
        major = o.a_major if op == "A" else o.b_major
        d, frag = umma.descriptor_fragment(lay, major)
        ours = [d.arch().advanced(int(frag(j))).encode() for j in range(frag.size())]
        if [int(v, 16) for v in cute["desc"].split()] != ours:
            diff.append(f"{op}: descriptors differ")
        if int(cute["digest"], 16) != digest(case, op):
            diff.append(f"{op}: the partition's elements or CuTe's addresses differ (digest)")
        for p in PROPS:
            x = got.get((p, op))
            if x is None or x.status != "proved":
                diff.append(f"{p}[{op}]: {x.status if x else 'missing'} (CuTe's descriptors read CuTe's bytes)")
    return diff


def load_truth(path=TRUTH) -> list:
    with gzip.open(path, "rt") as f:
        return [json.loads(line) for line in f if line.strip()]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("truth")
    t.add_argument("--n", type=int, default=120)
    t.add_argument("--seed", type=int, default=1)
    t.add_argument("--out", default=str(TRUTH))
    t.add_argument("--desc-refusals", type=int, default=0, help="draw only N cases make_umma_desc refuses")
    c = sub.add_parser("compare")
    c.add_argument("path", nargs="?", default=str(TRUTH))
    args = ap.parse_args(argv)
    if args.cmd == "truth":
        from sm100_cpp import Sm100Compiler
        cxx = Sm100Compiler(Path(tempfile.mkdtemp(prefix="symlayout-bwfuzz-")))
        cases = draw_desc_refusals(args.desc_refusals, args.seed) if args.desc_refusals else draw(args.n, args.seed)
        rows = truth(cases, cxx)
        with gzip.open(args.out, "wt") as f:
            for r in rows:
                f.write(json.dumps(r, sort_keys=True) + "\n")
        print(f"{len(rows)} cases ({sum('static_asserts' in r for r in rows)} refused by CuTe) -> {args.out}")
        return 0
    rows = load_truth(args.path)
    bad = disagreements(rows)
    for b in bad:
        print(b["id"], b["differences"])
    print(f"{len(rows)} cases, {len(bad)} disagreements")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
