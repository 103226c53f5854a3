"""Configuration files for the issue-26 GPU run (docs/hardware/issue26-2026-12-07.md): the CuTe C++
campaigns' configurations as TOML files, plus the cases of issue 26 items 12-15.

    python docs/hardware/issue26-configs.py gpu_in/campaign     # writes DIR/<family>/<n>.toml

* ``oracle/``: every configuration of tests/oracle/cases.jsonl that CuTe compiles;
* ``fuzz/``: 200 of tests/oracle/fuzz_truth.jsonl.gz's that CuTe compiles (the first by id hash);
* ``datapath/``: every tests/oracle/datapath_cases.jsonl case CuTe compiles, at its smallest leading
  dimension (one instance: the whole data path runs as one kernel);
* ``sm90/``: tests/data/sm90's generated Hopper configurations (wgmma and TMA campaigns), and every
  proofs/hopper file with a ``[tma.X]`` whose symbols are the global extents, at 2048 x 2048 (item 12);
* ``issue26/``: a (2,1,2) TiledMMA (K split over atoms, item 14), stride-0 aliased rows (item 15), a
  3-stage int8 data path (24,576 marker ids, item 13).
Configurations are written without ``[expect]``: the gate is the prover's verdicts
(``symlayout prove --json DIR``).
"""
from __future__ import annotations

import glob
import gzip
import hashlib
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "oracle"))

import datapath_oracle  # noqa: E402  (tests/oracle, the campaign's own writer)

from symlayout.config import load_config, loads_config  # noqa: E402
from symlayout.harness.plan import instance_text, instance_values  # noqa: E402

FUZZ = 200

ISSUE26 = {
    "k_split_212": ("SM80_16x8x16_F32F16F16F32_TN", "(2,1,2)",
                    [("A", "SM75_U32x4_LDSM_N", "half_t", "(32,64):(64,1)"),
                     ("B", "SM75_U32x2_LDSM_N", "half_t", "(16,64):(64,1)")]),
    "k_split_212_C": ("SM80_16x8x16_F32F16F16F32_TN", "(2,1,2)",
                      [("A", "SM75_U32x4_LDSM_N", "half_t", "(32,64):(64,1)"),
                       ("C", "UniversalCopy<uint32_t>", "float", "(32,8):(8,1)")]),
    "k_split_114_int8": ("SM80_16x8x32_S32S8S8S32_TN", "(1,1,4)",
                         [("A", "SM75_U32x4_LDSM_N", "int8_t", "(16,128):(128,1)")]),
    "aliased_rows_A": ("SM80_16x8x16_F32F16F16F32_TN", "(2,2,1)",
                       [("A", "SM75_U32x4_LDSM_N", "half_t", "((16,2),32):((32,0),1)")]),
    "aliased_rows_C": ("SM80_16x8x16_F32F16F16F32_TN", "(2,2,1)",
                       [("C", "UniversalCopy<uint32_t>", "float", "((16,2),32):((32,0),1)")]),
    "aliased_rows_B_int8": ("SM80_16x8x32_S32S8S8S32_TN", "(2,2,1)",
                            [("B", "SM75_U32x4_LDSM_N", "int8_t", "((8,2),64):((64,0),1)")]),
}


def _mma_toml(name, atom, layout, copies) -> str:
    t = f'name = "{name}"\n[mma]\natom = "{atom}"\nlayout = "{layout}"\n'
    for op, a, ty, smem in copies:
        t += f'[copy.{op}]\natom = "{a}"\ntype = "{ty}"\nsmem = "{smem}"\n'
    return t


INT8_DATAPATH = open(os.path.join(ROOT, "tests", "test_wholepath.py")).read().split('INT8_3STAGE = """')[1].split('"""')[0]


def _write(d, name, text, out) -> None:
    os.makedirs(os.path.join(out, d), exist_ok=True)
    with open(os.path.join(out, d, name + ".toml"), "w") as f:
        f.write(text)


def _strip_expect(text: str) -> str:
    """The text without its ``[expect]`` table (up to the next table header)."""
    out, skip = [], False
    for line in text.splitlines():
        if re.match(r"\s*\[[A-Za-z0-9_.]+\]\s*$", line):
            skip = line.strip() == "[expect]"
        if not skip:
            out.append(line)
    return "\n".join(out) + "\n"


def _concrete(text: str, path: str) -> str | None:
    """A parametric file at its first instance (``[params]`` removed), or None."""
    cfg = loads_config(text, path)
    if not cfg.params:
        return text
    vals = instance_values(cfg)
    return instance_text(cfg, vals[0]) if vals else None


def hopper_2048(path: str) -> str | None:
    """A proofs/hopper file whose ``[params]`` symbols appear only in ``[tma.X] gmem``, every symbol 2048."""
    text = open(path).read()
    if "[tma." not in text or "[params]" not in text:
        return None
    cfg = load_config(path)
    syms = set(cfg.params)
    body = re.sub(r"\[params\][^\[]*", "", text)
    smem_part = "".join(re.findall(r"^layout = .*$", body, flags=re.M))
    if any(re.search(rf"\b{s}\b", smem_part) for s in syms):
        return None
    def subst(m):
        line = m.group(0)
        for s in syms:
            line = re.sub(rf"\b{s}\b", "2048", line)
        return line
    body = re.sub(r"^gmem = .*$", subst, body, flags=re.M)
    body = re.sub(r'^name = "(.*)"', r'name = "\1 (gmem 2048)"', body, count=1, flags=re.M)
    return _strip_expect(body)


def main(out: str) -> None:
    n = {}
    for i, line in enumerate(open(os.path.join(ROOT, "tests/oracle/cases.jsonl"))):
        r = json.loads(line)
        if "rejected" not in r["cute"]:
            _write("oracle", f"{i:04d}", r["toml"], out)
            n["oracle"] = n.get("oracle", 0) + 1
    rows = [json.loads(x) for x in gzip.open(os.path.join(ROOT, "tests/oracle/fuzz_truth.jsonl.gz"), "rt")]
    rows = sorted((r for r in rows if "rejected" not in r["cute"]), key=lambda r: hashlib.sha1(r["id"].encode()).hexdigest())
    for i, r in enumerate(rows[:FUZZ]):
        _write("fuzz", f"{i:04d}", r["toml"], out)
    n["fuzz"] = min(FUZZ, len(rows))
    for i, line in enumerate(open(os.path.join(ROOT, "tests/oracle/datapath_cases.jsonl"))):
        r = json.loads(line)
        if "rejected" in r["cute"]:
            continue
        t = _concrete(datapath_oracle.case_toml(r["case"]), r["case"]["id"])
        if t:
            _write("datapath", f"{i:04d}", t, out)
            n["datapath"] = n.get("datapath", 0) + 1
    for f in ("configs.jsonl", "configs_tma.jsonl"):
        seen = set()
        for r in map(json.loads, open(os.path.join(ROOT, "tests/data/sm90", f))):
            if r["id"].startswith("proofs/") or r["id"] in seen:
                continue
            seen.add(r["id"])
            _write("sm90", re.sub(r"[^A-Za-z0-9_.-]", "_", r["id"])[:80], _strip_expect(r["toml"]), out)
            n["sm90"] = n.get("sm90", 0) + 1
    for p in sorted(glob.glob(os.path.join(ROOT, "proofs/hopper/**/*.toml"), recursive=True)):
        t = hopper_2048(p)
        if t:
            _write("sm90_2048", os.path.basename(p)[:-5], t, out)
            n["sm90_2048"] = n.get("sm90_2048", 0) + 1
    for name, (atom, layout, copies) in ISSUE26.items():
        _write("issue26", name, _mma_toml(name, atom, layout, copies), out)
    _write("issue26", "int8_3stage_datapath", INT8_DATAPATH, out)
    n["issue26"] = len(ISSUE26) + 1
    print(json.dumps(n))


if __name__ == "__main__":
    main(sys.argv[1])
