"""Random configurations against CuTe C++: the oracle campaign's comparison on configurations nobody chose.

    python tests/oracle/fuzz.py truth --n 1500 --seed 1 --jobs 16 --out truth.jsonl   # needs g++ + CuTe headers
    python tests/oracle/fuzz.py compare truth.jsonl [--save-disagreements F]           # needs symlayout (+ z3)

``truth`` draws ``n`` random configurations (:func:`random_cases`, deterministic in ``seed``) and writes
each with CuTe's verdicts, in ``cases.jsonl``'s format; it imports nothing of symlayout (it runs where only
a compiler and the headers are, e.g. the GPU host). ``compare`` proves each stored configuration with
symlayout and prints every disagreement (``oracle_compare.differences``): exit 1 when there is one.

A draw: any MMA atom of the campaign's table, a warp layout of 1-8 warps (sometimes K-strided 0), a
permutation that widens N or M now and then; an operand; any ldmatrix/stmatrix/vector copy for it; the
operand's value type or a wrong one of the same or another width; a K- or M/N-major tile of 1-2 MMA tiles
by 1-4 K tiles, padded or not, swizzled (``Sw<B,M,S>``, random) or not, with an offset now and then; a
base alignment of 128 bytes or less. Many draws do not compile: CuTe's rejection is the expected answer.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TRUTH = HERE / "fuzz_truth.jsonl.gz"      # seeds 1-4 through CuTe 4.2.0 (the stored ground truth)
KNOWN = HERE / "fuzz_known.json"          # the differences explained by a definition, each with its reason
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import oracle_campaign as oc  # noqa: E402
import oracle_compare  # noqa: E402  (symlayout is imported only when a verdict is asked for)

SIZES = {"half_t": 2, "bfloat16_t": 2, "int16_t": 2, "uint16_t": 2, "tfloat32_t": 4, "float": 4, "int32_t": 4,
         "uint32_t": 4, "int8_t": 1, "uint8_t": 1, "float_e4m3_t": 1, "float_e5m2_t": 1}


def _pick_type(rng, right: str) -> str:
    if rng.random() < 0.8:
        return "float" if right == "tfloat32_t" and rng.random() < 0.5 else right
    same = [t for t, s in SIZES.items() if s == SIZES[right] and t != right]
    return rng.choice(same if same and rng.random() < 0.7 else list(SIZES))


def _smem(rng, rows: int, cols: int, kmajor: bool, vsize: int) -> str:
    """A rows x cols tile (row = M or N, column = K; for C row = M, column = N), ``kmajor``: columns contiguous."""
    inner, outer = (cols, rows) if kmajor else (rows, cols)
    pad = rng.choice([0, 0, 0, 0, 8, 16 // vsize or 1, 4, 32 // vsize or 1])
    pitch = inner + pad
    lay = f"({rows},{cols}):({pitch},1)" if kmajor else f"({rows},{cols}):(1,{pitch})"
    if pad == 0 and rng.random() < 0.45:
        # a swizzle over 16-byte units (M = log2(16 / size)) mostly, B and S around the usual 3,3
        m = max(0, (16 // vsize).bit_length() - 1) if rng.random() < 0.8 else rng.choice([1, 2, 3, 4])
        b = rng.choice([1, 2, 3, 3, 3])
        s = rng.choice([3, 3, 3, 2, 4]) if rng.random() < 0.9 else b
        s = max(s, b)
        off = 0
        if rng.random() < 0.25:
            period = 1 << (b + m + s)
            off = rng.choice([period, 2 * period, 8, 16, period // 2 or 1])
        return f"Sw<{b},{m},{s}> o {off} o {lay}" if off else f"Sw<{b},{m},{s}> o {lay}"
    return lay


def random_case(rng, c: "oc._Cases") -> None:
    atom = rng.choice(list(oc.ATOMS) + [oc.F16, oc.F16, oc.F16F32, oc.BF16])
    lm, ln = rng.choice([(1, 1), (1, 2), (2, 1), (2, 2), (2, 2), (1, 4), (4, 1), (2, 4), (4, 2), (1, 8), (8, 1)])
    layout = f"({lm},{ln},1)" if rng.random() < 0.85 else f"({lm},{ln},1):({ln},1,0)"
    M, N, K = oc.ATOMS[atom][:3]
    perm = None
    r = rng.random()
    if r < 0.15:                                    # N widened (B / C through the x4 atoms compiles)
        perm = (str(M * lm), str(N * ln * 2), str(K))
    elif r < 0.2:                                   # M and K widened
        perm = (str(M * lm * 2), str(N * ln), str(K * 2))
    tm, tn, tk = oc.tile(atom, layout.split(":")[0], perm)
    operand = rng.choice("AABBC")
    right = oc._op_type(atom, operand)
    vt = _pick_type(rng, right)
    vsize = SIZES[vt]
    if operand == "C":
        copy_atom = rng.choice(oc.STSM_N + oc.STSM_T + oc.VEC + ["AutoVectorizingCopyWithAssumedAlignment<64>"])
        rows, cols = tm * rng.choice([1, 1, 2]), tn * rng.choice([1, 1, 2])
        kmajor = rng.random() < 0.7
    else:
        copy_atom = rng.choice(oc.LDSM_N + oc.LDSM_T + oc.VEC + ["AutoVectorizingCopyWithAssumedAlignment<32>"])
        rows = (tm if operand == "A" else tn) * rng.choice([1, 1, 2])
        cols = tk * rng.choice([1, 2, 2, 4])
        kmajor = rng.random() < 0.65
    smem = _smem(rng, rows, cols, kmajor, vsize)
    align = 128 if rng.random() < 0.85 else rng.choice([4, 8, 16, 32, 64])
    c.add("random", atom, layout, perm, operand, copy_atom, vt, smem, align=align)


def random_cases(n: int, seed: int) -> list:
    """``n`` distinct random configurations (ids as the campaign's), deterministic in ``seed``."""
    rng = random.Random(seed)
    c = oc._Cases()
    tries = 0
    while len(c.out) < n and tries < 50 * n:
        random_case(rng, c)
        tries += 1
    return c.out


def truth(args) -> int:
    import cute_oracle
    incs = cute_oracle.include_dirs()
    if incs is None:
        print("CuTe headers or g++ not found (set SYMLAYOUT_CUTE_SITE)", file=sys.stderr)
        return 2
    version = cute_oracle.cute_version(incs)
    cases = random_cases(args.n, args.seed)
    t0 = time.perf_counter()
    by_id = {c["id"]: c for c in cases}
    got: dict = {}
    with open(args.out, "w") as f:

        def write(res):                   # after every batch: a run cut short keeps what it has
            got.update(res)
            for cid, v in res.items():
                c = by_id[cid]
                cute = ({"version": version, "error": v["error"]} if "error" in v
                        else oracle_compare.cute_record(v, version))
                f.write(json.dumps({"id": cid, "family": c["family"], "seed": args.seed,
                                    "config": {"mma": c["mma"], "operand": c["operand"], "copy": c["copy"]},
                                    "toml": cute_oracle.case_toml(c), "cute": cute}, sort_keys=True) + "\n")
            f.flush()

        cute_oracle.run_cases(cases, incs, jobs=args.jobs, batch=args.batch, log=lambda *a: None, on_batch=write)
    errs = sum("error" in got.get(c["id"], {"error": 1}) for c in cases)
    rej = sum("rejected" in got.get(c["id"], {}) for c in cases)
    print(f"{len(cases)} configurations (seed {args.seed}) through CuTe {version}: {rej} rejected, {errs} oracle "
          f"errors, {time.perf_counter() - t0:.0f} s -> {args.out}")
    return 1 if errs else 0



def load_truth(path) -> list:
    """The lines of a truth file (``.jsonl`` or ``.jsonl.gz``), one per configuration (the first kept).

    A campaign id names the MMA atom by its shape only, so two seeds can draw different configurations under
    one id: the second is kept as ``id#2`` (and so on)."""
    import gzip
    opener = gzip.open if str(path).endswith(".gz") else open
    rows, seen = [], {}
    with opener(path, "rt") as f:
        for line in f:
            if line.strip():
                c = json.loads(line)
                base, n = c["id"].split("#")[0], 1
                cid = base
                while cid in seen and seen[cid] != c["toml"]:
                    n += 1
                    cid = f"{base}#{n}"
                if cid not in seen:
                    seen[cid] = c["toml"]
                    rows.append(dict(c, id=cid))
    return rows


def load_known(path=KNOWN) -> dict:
    return json.loads(Path(path).read_text())["cases"]


def disagreements(rows: list) -> tuple:
    """``([{id, toml, cute, differences, items}], Counter)``: every configuration where symlayout's verdicts
    differ from CuTe's (``oracle_compare.disagreements``), and how many were built / rejected / oracle errors."""
    import collections
    counts = collections.Counter("oracle error" if "error" in c["cute"] else "rejected" if "rejected" in c["cute"]
                                 else "built" for c in rows)
    bad = [{"id": c["id"], "toml": c["toml"], "cute": c["cute"], "differences": [list(x) for x in d],
            "items": oracle_compare.classify(c, d)} for c, d in oracle_compare.disagreements(rows)]
    return bad, counts


def compare(args) -> int:
    rows = load_truth(args.truth)
    known = load_known(args.known)
    t0 = time.perf_counter()
    bad, counts = disagreements(rows)
    new = oracle_compare.report(bad, known, args, f"{len(rows)} configurations ({dict(counts)})", t0)
    return 1 if new else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("truth")
    t.add_argument("--n", type=int, default=500)
    t.add_argument("--seed", type=int, default=1)
    t.add_argument("--jobs", type=int, default=2)
    t.add_argument("--batch", type=int, default=24)
    t.add_argument("--out", required=True)
    c = sub.add_parser("compare")
    c.add_argument("truth")
    c.add_argument("--save-disagreements")
    c.add_argument("--known", default=str(KNOWN), help="the explained differences (default: fuzz_known.json)")
    args = ap.parse_args(argv)
    return truth(args) if args.cmd == "truth" else compare(args)


if __name__ == "__main__":
    sys.exit(main())
