"""The GPU run's report: outcome per configuration, side by side with the prover's verdicts (Markdown)."""
from __future__ import annotations

import json

from .wholepath import residue_summary


def _mark(x: dict | None) -> str:
    if not x:
        return "-"
    s = x.get("status", "?")
    n = x.get("slots_checked", x.get("checked", 0))
    if s == "pass":
        return f"pass ({n})"
    return f"**{s.upper()}** ({x.get('mismatches', '?')}/{n} differ)"


GATE_PROPERTIES = ("coverage", "alignment", "exactly_once", "slot_agreement")


def prover_verdicts(prover: dict | None) -> dict:
    """``{path: {property: status}}`` from ``symlayout prove --json`` (a property
    counts as refuted if any operand refutes it)."""
    out: dict = {}
    for c in (prover or {}).get("configs", []):
        v: dict = {}
        for r in c.get("results", []):
            k = r.get("property")
            if r.get("status") == "refuted" or k not in v:
                v[k] = r.get("status")
        out[c.get("path")] = v
    return out


def outcome(r: dict) -> str:
    """One phrase: what the GPU did with a configuration."""
    st = r.get("status", "?")
    if st == "skipped":
        return f"not run: {r.get('reason', '')}"
    err = r.get("error")
    if err:
        msg = err.get("message", "")
        name = next((w.rstrip(":") for w in msg.split() if w.startswith("cudaError")), msg[:80])
        return f"fault: {name} at {err.get('stage', '?')}" + (" (context poisoned)" if err.get("sticky") else "")
    bad = [f"marker {op}" for op, x in sorted(r.get("marker", {}).items()) if x.get("status") != "pass"]
    if r.get("compute") and r["compute"].get("status") != "pass":
        bad.append("compute")
    w = r.get("whole") or {}
    for mode in ("marker", "compute"):
        if w.get(mode) and w[mode].get("status") != "pass":
            bad.append(f"whole path ({mode})")
    for e in w.get("residue") or []:
        if e.get("status") != "pass":
            bad.append("whole path (partial tile " + ", ".join(f"{d} = {v}" for d, v in sorted(e["residue"].items())) + ")")
    if bad:
        masked = any((x.get("masked") or {}).get("explained_by_masked_address") for x in r.get("marker", {}).values())
        return "data differs from the model in " + ", ".join(bad) + (" (silently masked address)" if masked else "")
    return "as the model says" + ("" if r.get("compute") else " (marker only)")


def report_markdown(results: dict, prover: dict | None = None) -> str:
    """Markdown of a :func:`run_paths` result.  ``prover`` (``symlayout prove
    --json``) adds the model's verdicts and the gate: a configuration whose
    coverage, alignment, exactly_once and slot_agreement are proved must pass
    marker and compute mode."""
    meta = results.get("meta", {})
    dev = meta.get("device") or {}
    rs = results.get("results", [])
    verdict = prover_verdicts(prover)
    L = ["# Configurations on the GPU: the route model vs. the hardware", ""]
    L.append(f"- GPU: {dev.get('name', '?')} (compute capability {dev.get('compute_capability', '?')}, "
             f"{dev.get('multiprocessors', '?')} SMs); driver {dev.get('driver_version', '?')}, CUDA driver API "
             f"{dev.get('cuda_driver_api_version', '?')}, runtime {dev.get('cuda_runtime_version', '?')}, "
             f"NVRTC {dev.get('nvrtc_version', '?')}, CuPy {dev.get('cupy_version', '?')}, Python {meta.get('python', '?')}")
    ran = [r for r in rs if r.get("status") != "skipped"]
    L.append(f"- date: {meta.get('date', '?')}; {meta.get('files', '?')} configuration files, {len(ran)} runs "
             f"(parametric families at a few instances, `path@sym=value`), {len(rs) - len(ran)} not run; "
             f"whole run {meta.get('seconds', '?')} s wall with {meta.get('workers', '?')} worker processes at once, "
             f"then {len(meta.get('isolated', []))} refutation runs each in its own process")
    L.append("")
    L.append("| configuration | [expect] refuted | model: coverage/alignment/exactly_once/slot_agreement | marker | compute | GPU | s |")
    L.append("| --- | --- | --- | --- | --- | --- | --- |")
    gate_fail, n_must = [], 0
    for r in rs:
        v = verdict.get(r["path"]) or verdict.get(r["path"].split("@")[0], {})   # a family's proof covers its instances
        mv = "/".join(("**refuted**" if v.get(p) == "refuted" else (v.get(p) or "-")) for p in GATE_PROPERTIES) if v else "-"
        must = bool(v) and all(v.get(p) == "proved" for p in GATE_PROPERTIES) and r.get("status") != "skipped"
        n_must += must
        mk = "; ".join(f"{op}: {_mark(x)}" for op, x in sorted(r.get("marker", {}).items())) or "-"
        comp = _mark(r.get("compute")) if r.get("compute") else ("not run" if r.get("compute_skip") else "-")
        oc = outcome(r)
        if must and r.get("status") != "pass":
            gate_fail.append(r["path"])
            oc = f"**MODEL AND HARDWARE DISAGREE: {oc}**"
        L.append(f"| `{r['path']}` | {', '.join(r.get('expect_refuted') or []) or '-'} | {mv} | {mk} | {comp} | "
                 f"{oc} | {r.get('seconds', '-')} |")
    L.append("")
    if prover:
        L.append(f"**Gate**: {n_must} runs have coverage, alignment, exactly_once and slot_agreement proved by the "
                 f"prover; " + ("every one of them passed marker and compute mode." if not gate_fail else
                                f"{len(gate_fail)} did not: {', '.join(gate_fail)}."))
        L.append("")
    whole = [r for r in rs if r.get("whole")]
    if whole:
        L.append("## The whole data path as one kernel (G2S -> S2R -> mma.sync -> convert -> R2S -> S2G)")
        L.append("")
        L.append("| instance | stages | M x N x K per stage | route | marker | compute (exact vs numpy) | partial tiles "
                 "(residue predication) |")
        L.append("| --- | --- | --- | --- | --- | --- | --- |")
        for r in whole:
            w = r["whole"]

            def cell(x):
                if not x:
                    return (f"fault: {w['error']['message'][:80]}" if w.get("error") else w.get("reason", "-"))
                return f"{x['status']} ({x['mismatches']}/{x['elements']} differ)"
            L.append(f"| `{r['path']}` | {w.get('stages', '-')} | {w.get('M', '-')}x{w.get('N', '-')}x{w.get('K', '-')} | "
                     f"{w.get('route', '-')} | {cell(w.get('marker'))} | {cell(w.get('compute'))} | "
                     f"{residue_summary(w) or '-'} |")
        L.append("")
    L.append("## Details")
    L.append("")
    for r in rs:
        if r.get("status") == "skipped":
            continue
        L.append(f"### `{r['path']}`")
        if r.get("name"):
            L.append(r["name"])
        L.append("")
        L.append(f"- GPU: {outcome(r)}")
        if "@" in r["path"] and r.get("expect_refuted"):
            L.append(f"- an instance of a parametric family; the family's [expect] refuted = "
                     f"{', '.join(r['expect_refuted'])} holds for some values of the range, not necessarily this one")
        for op, c in sorted((r.get("copies") or {}).items()):
            L.append(f"- [copy.{op}] `{c['atom']}` {c['type']}, smem `{c['smem']}`, align {c['align']}: "
                     f"`{c['instruction']}`; tile at byte {r.get('smem_offsets', {}).get(op, '-')} of the dynamic shared buffer")
        if r.get("process"):
            L.append(f"- ran in: {r['process']}; {r.get('launches', '?')} launches, NVRTC compile "
                     f"{r.get('compile_seconds', '-')} s ({r.get('compile', '-')}), {r.get('seconds', '-')} s in all")
        for op, x in sorted(r.get("marker", {}).items()):
            extra = ""
            if "copy_writes" in x:
                extra = f"; copy writes per fragment slot {x['copy_writes']}"
            if "copy_reads" in x:
                extra = f"; copy reads per fragment slot {x['copy_reads']}, stray writes {x.get('stray_writes', 0)}"
            L.append(f"- marker {op}: {x.get('status')}: {x.get('mismatches', '?')} of {x.get('slots_checked', '?')} "
                     f"differ, {x.get('unwritten', 0)} unwritten, {x.get('passes', 1)} id pass(es){extra}")
            if x.get("note"):
                L.append(f"  - note: {x['note']}")
            for e in x.get("examples", [])[:4]:
                L.append(f"  - {json.dumps(e)}")
            if x.get("masked"):
                L.append(f"  - where the arrived elements lie (bytes from the model's): {json.dumps(x['masked'])}")
            if x.get("problem"):
                L.append(f"  - {x['problem']}")
        c = r.get("compute")
        if c:
            L.append(f"- compute: {c.get('status')}: {c.get('M')}x{c.get('N')}x{c.get('K')}, {c.get('issues_per_thread')} "
                     f"`{c.get('mma')}` per thread ({c.get('order')}), A and B in [-{c.get('value_range')}, "
                     f"{c.get('value_range')}], C in [-{c.get('c_range')}, {c.get('c_range')}]; D stored through "
                     f"{c.get('stored_through')}; {c.get('mismatches')} of {c.get('checked')} differ from numpy's "
                     f"A @ B^T + C, {c.get('unwritten')} unwritten; fragment writes {c.get('fragment_writes')}")
            for e in c.get("examples", [])[:4]:
                L.append(f"  - {json.dumps(e)}")
        elif r.get("compute_skip"):
            L.append(f"- compute: not run: {r['compute_skip']}")
        w = r.get("whole")
        if w:
            L.append(f"- whole data path (one kernel, {w.get('stages', 1)} stage(s), {w.get('M')}x{w.get('N')}x"
                     f"{w.get('K')} per stage): {w.get('status')}" + (f": {w.get('reason')}" if w.get("reason") else ""))
            if w.get("route"):
                L.append(f"  - route: {w['route']}")
            for mode in ("marker", "compute"):
                x = w.get(mode)
                if x:
                    L.append(f"  - {mode}: {x.get('status')}: {x.get('mismatches')} of {x.get('elements')} C elements "
                             f"differ ({x.get('output')}), stray writes {x.get('stray_writes', '-')}"
                             + "".join(f", {op}: {x.get('mismatches_' + op)} of {x.get('slots_' + op)} fragment slots differ"
                                       for op in "AB" if ('slots_' + op) in x))
                    for pb in x.get("problems", [])[:4]:
                        L.append(f"    - {pb}")
            for e in w.get("residue") or []:
                parts = [f"{k} {e[k]['status']} ({e[k]['mismatches']}/{e[k]['elements']} C elements differ"
                         + "".join(f", {op}: {e[k].get('mismatches_' + op)}/{e[k].get('slots_' + op)} slots"
                                   for op in "AB" if ('slots_' + op) in e[k])
                         + "".join(f", smem {op}: {e[k].get('mismatches_smem_' + op)}/{e[k].get('smem_' + op)}"
                                   for op in "AB" if ('smem_' + op) in e[k]) + ")"
                         for k in ("marker", "compute") if e.get(k)]
                L.append(f"  - partial tile {', '.join(f'{d} = {v}' for d, v in sorted(e['residue'].items()))} "
                         f"({e['label']}): {e.get('status')}; {e['oob_reads']} elements read / {e['oob_writes']} "
                         f"written outside the problem predicted; " + "; ".join(parts)
                         + (f"; compute not run: {e['compute_skip']}" if e.get("compute_skip") else ""))
                for k in ("marker", "compute"):
                    for pb in (e.get(k) or {}).get("problems", [])[:2]:
                        L.append(f"    - {k}: {pb}")
        for op, msg in (r.get("model_errors") or {}).items():
            L.append(f"- [copy.{op}]: the model could not be built: {msg}")
        if r.get("error"):
            e = r["error"]
            kind = "**harness error**" if e.get("where") else "**CUDA error**"
            L.append(f"- {kind} at {e.get('stage', '?')}: {str(e.get('message', ''))[:600]}"
                     + (f" (raised at {e['where']})" if e.get("where") else "")
                     + (" -- this error poisons the CUDA context, so nothing else ran in that process" if e.get("sticky") else ""))
        L.append("")
    skipped = [r for r in rs if r.get("status") == "skipped"]
    if skipped:
        L.append("## Not run")
        L.append("")
        for r in skipped:
            L.append(f"- `{r['path']}`: {r.get('reason', '')}")
        L.append("")
    return "\n".join(L) + "\n"
