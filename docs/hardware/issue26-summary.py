"""Counts of the issue-26 GPU run (docs/hardware/issue26-2026-12-07.md) from the files it wrote.

    python docs/hardware/issue26-summary.py RESULTS_DIR PROVE_JSON [PROVE_JSON...]

RESULTS_DIR holds the ``--out`` folders of ``python -m symlayout.cli.gpu`` (``configs.json``,
``hopper_configs.json``).  A configuration run is a *false alarm* when the prover proves coverage,
alignment, exactly_once and slot_agreement (the report's gate) and the GPU run did not pass, or when
the harness could not run it for a reason of its own (an error that is not a CUDA fault); a Hopper
experiment is one when it errs, disagrees with the PTX model, or differs from CuTe's layout while the
prover proves every property of the configuration.
"""
import collections
import glob
import json
import os
import sys

from symlayout.harness.report import GATE_PROPERTIES, prover_verdicts


def main(res_dir, *prove_files):
    verdict = {}
    for f in prove_files:
        verdict.update(prover_verdicts(json.load(open(f))))
    out = collections.Counter()
    alarms = []
    for f in sorted(glob.glob(os.path.join(res_dir, "**", "configs.json"), recursive=True)):
        for r in json.load(open(f))["results"]:
            v = verdict.get(r["path"]) or verdict.get(r["path"].split("@")[0], {})
            gate = bool(v) and all(v.get(p) == "proved" for p in GATE_PROPERTIES)
            st = r.get("status")
            if st == "skipped":
                out["not run"] += 1
                out["not run: " + r.get("reason", "")[:60]] += 1
                continue
            out["runs"] += 1
            out[f"gate {'proved' if gate else 'refuted'}: {st}"] += 1
            err = (r.get("error") or {}).get("message", "")
            if st == "error" and "cudaError" not in err:
                alarms.append(("harness error", r["path"], err[:200] + "  at " + (r.get("error") or {}).get("where", "?")))
            elif gate and st not in ("pass", "pass (marker only)"):
                alarms.append(("false disagreement", r["path"], st + " " + err[:200]))
    for f in sorted(glob.glob(os.path.join(res_dir, "**", "hopper_configs.json"), recursive=True)):
        for r in json.load(open(f))["results"]:
            v = verdict.get(r["path"], {})
            proved = bool(v) and all(s == "proved" for s in v.values())
            for x in r["experiments"]:
                out["hopper experiments"] += 1
                out[f"hopper {x['kind']} {x['status']} model={x.get('model')}"] += 1
                if x["status"] == "error":
                    alarms.append(("hopper harness error", x["name"], x.get("note", "")[:200]))
                elif x.get("model") == "disagree":
                    alarms.append(("hopper PTX model disagrees", x["name"], ""))
                elif x["status"] == "fail" and proved:
                    alarms.append(("hopper false disagreement", x["name"], ""))
            out["hopper not run"] += len(r["skipped"])
    for k, n in sorted(out.items()):
        print(f"{n:6d}  {k}")
    print(f"{len(alarms)} false alarms")
    for a in alarms:
        print("  ", *a)


if __name__ == "__main__":
    main(*sys.argv[1:])
