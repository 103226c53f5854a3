"""symlayout's verdicts on a stored oracle case, and how they differ from CuTe's (tests/oracle/cases.jsonl).

A case line: ``{"id", "family", "note", "config": {"mma", "operand", "copy"}, "toml", "cute": {...}}`` where
``cute`` is ``{"version": "4.2.0", "verdict": {property: "proved"|"refuted"}, "bank_degree": n,
"detail": {property: why}}`` or ``{"version": ..., "rejected": "<static_assert text>"}``.

Agreement:

* CuTe rejects the configuration (does not compile): symlayout must refute at least one property and
  prove nothing it cannot build (issue 12 item 9) -- an ``error`` or an all-PROVED report disagrees;
* otherwise each property's status must be equal (``vacuous``/``unknown``/``error`` never equal a CuTe
  verdict), and a refuted ``bank_conflicts`` must have CuTe's degree.
"""
from __future__ import annotations

import json
import re
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CASES = HERE / "cases.jsonl"
KNOWN = HERE / "known_disagreements.json"
PROPERTIES = ("coverage", "alignment", "exactly_once", "slot_agreement", "bank_conflicts", "in_bounds",
              "type_agreement")


def load_cases(path=CASES) -> list:
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def load_known(path=KNOWN) -> dict:
    if not Path(path).exists():
        return {}
    return json.loads(Path(path).read_text())["cases"]


def symlayout_verdict(toml_text: str, name: str = "<oracle case>") -> dict:
    """``{property: status}`` (+ ``"bank_degree"``) from ``symlayout prove``'s engine, or ``{"error": msg}``."""
    from symlayout.config import loads_config
    from symlayout.errors import SymlayoutError
    from symlayout.prove.engine import prove_config
    try:
        cfg = loads_config(toml_text, path=name)
        rep = prove_config(cfg)
    except SymlayoutError as e:                             # bad input (exit 2)
        return {"error": str(e)}
    except Exception as e:                                  # an internal error is a disagreement, never a pass
        return {"error": f"internal: {type(e).__name__}: {e}"}
    if rep.error:
        return {"error": rep.error}
    out = {}
    for r in rep.results:
        out[r.property] = r.status
        if r.property == "bank_conflicts" and r.counterexample is not None:
            out["bank_degree"] = (r.counterexample.extra or {}).get("degree")
    return out


def cute_record(v: dict, version: str) -> dict:
    """A case line's ``cute`` field from the C++ oracle's result ``v`` for it (not an ``error``)."""
    if "rejected" in v:
        return {"version": version, "rejected": v["rejected"]}
    return {"version": version, "verdict": {p: v[p] for p in PROPERTIES}, "bank_degree": v["bank_degree"],
            "detail": v.get("detail", {})}


def disagreements(cases: list) -> list:
    """``[(case, differences)]`` for every stored case (oracle errors left out) where symlayout's verdicts
    differ from CuTe's."""
    out = []
    for c in cases:
        if "error" not in c["cute"]:
            d = differences(c["cute"], symlayout_verdict(c["toml"], c["id"]))
            if d:
                out.append((c, d))
    return out


def differences(cute: dict, sym: dict) -> list:
    """``[(property, cute says, symlayout says)]``; empty when they agree."""
    if "rejected" in cute:
        if "error" in sym:
            return [("build", f"rejected: {cute['rejected']}", f"error: {sym['error']}")]
        if not any(sym.get(p) == "refuted" for p in PROPERTIES):
            return [("build", f"rejected: {cute['rejected']}", "nothing refuted")]
        return []
    v = cute["verdict"]
    if "error" in sym:
        return [(p, v[p], f"error: {sym['error']}") for p in PROPERTIES]
    out = []
    for p in PROPERTIES:
        s = sym.get(p, "absent")
        if s != v[p]:
            out.append((p, v[p], s))
        elif p == "bank_conflicts" and s == "refuted" and sym.get("bank_degree") != cute.get("bank_degree"):
            out.append((p, f"refuted (degree {cute.get('bank_degree')})", f"refuted (degree {sym.get('bank_degree')})"))
    return out


def _swizzle_offset_off_period(smem: str) -> bool:
    m = re.match(r"\s*Sw<(\d+),(\d+),(-?\d+)>\s*o\s*(-?\d+)\s*o", smem)
    if not m:
        return False
    b, mm, s, off = (int(x) for x in m.groups())
    return b > 0 and off % (1 << (b + mm + abs(s))) != 0


def classify(case: dict, diffs: list) -> list:
    """The issue-12 items a disagreement falls under (``"new"`` if none fits)."""
    items = []
    cp = case["config"]["copy"]
    props = {d[0] for d in diffs}
    if "rejected" in case["cute"]:
        return [9]
    if _swizzle_offset_off_period(cp["smem"]):
        items.append(10)
    if cp["atom"].startswith("AutoVectorizingCopy") or cp["atom"] == "DefaultCopy":
        items.append(7)
    if "type_agreement" in props or case["cute"]["verdict"]["type_agreement"] == "refuted":
        items.append(8)                     # (a wrong element type also changes what the copy moves)
    if any("vacuous" in str(d[2]) for d in diffs):
        items.append(6)
    if "coverage" in props and not items:
        items.append(11)
    return items or ["new"]


# ---------------------------------------------------------------- a fuzz campaign's comparison, told


def unexplained(bad: list, known: dict) -> list:
    """The disagreements ``known`` does not explain with exactly these differences."""
    return [b for b in bad if known.get(b["id"], {}).get("differences") != b["differences"]]


def report(bad: list, known: dict, args, configurations: str, t0: float) -> list:
    """Print each disagreement (``DISAGREE``, or ``known (kind)`` where ``known`` explains it) and a summary
    line (``configurations``: what was compared; ``t0``: when symlayout started); save them to
    ``args.save_disagreements`` if asked.  The unexplained ones."""
    new = unexplained(bad, known)
    for b in bad:
        tag = "DISAGREE" if b in new else f"known ({known[b['id']]['kind']})"
        print(f"{tag} {b['id']}: " + "; ".join(f"{p}: CuTe {x} / symlayout {y}" for p, x, y in b["differences"]))
    print(f"{configurations}; {len(bad)} disagree, {len(new)} of them not in {Path(args.known).name}; "
          f"symlayout {time.perf_counter() - t0:.1f} s")
    if args.save_disagreements:
        Path(args.save_disagreements).write_text(json.dumps(bad, indent=1) + "\n")
    return new
