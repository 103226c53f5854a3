"""``symlayout atoms [PATTERN] [--arch sm80] [--kind mma|copy] [--json]``: the atom catalog.

``PATTERN`` is a shell pattern (``*LDSM*``) or a substring of the name, case
insensitive; ``--arch sm80`` keeps the atoms an sm_80 GPU runs (those of its
architecture and older ones; ``sm90a`` includes ``sm_90``).
"""
from __future__ import annotations

import fnmatch
import json
import re

from .common import EXIT_OK, EXIT_REFUTED, UsageError

HELP = "list the MMA and copy atom catalog (filters: PATTERN, --arch, --kind)"
EXIT_CODES = {EXIT_OK: "listed", EXIT_REFUTED: "no atom matches the filters"}


def add_arguments(sp) -> None:
    sp.add_argument("pattern", nargs="?", default=None, metavar="PATTERN",
                    help="name pattern (shell wildcards or a substring, case insensitive)")
    sp.add_argument("--arch", default=None, metavar="SM", help="atoms available on this GPU: sm80, sm_90a, 90, ...")
    sp.add_argument("--kind", choices=("mma", "copy"), default=None, help="only MMA atoms or only copy operations")
    sp.add_argument("--json", action="store_true", help='print {"atoms": [...]} as JSON')


def _arch_key(s: str):
    """``"sm_90a"`` -> ``(90, True)``; a malformed architecture is a usage error.

    >>> _arch_key("sm80"), _arch_key("sm_90a"), _arch_key("90")
    ((80, False), (90, True), (90, False))
    """
    m = re.fullmatch(r"(?:sm_?)?(\d+)(a?)", s.strip().lower())
    if not m:
        raise UsageError(f"--arch {s!r}: expected an architecture such as sm80, sm_90a or 90")
    return int(m.group(1)), bool(m.group(2))


def runs_on(atom_arch, gpu) -> bool:
    """Whether an atom of ``atom_arch`` (None: any) runs on ``gpu`` (an :func:`_arch_key`).

    >>> runs_on("sm_75", (80, False)), runs_on("sm_90a", (90, False)), runs_on(None, (61, False))
    (True, False, True)
    """
    if not atom_arch:
        return True
    n, a = _arch_key(atom_arch)
    return n <= gpu[0] and (not a or (gpu[1] and n == gpu[0]))


def matches(name: str, pattern: str | None) -> bool:
    """Shell pattern when it has wildcards, else a substring; case insensitive.

    >>> matches("SM75_U32x4_LDSM_N", "ldsm"), matches("SM75_U32x4_LDSM_N", "SM75_*_T")
    (True, False)
    """
    if not pattern:
        return True
    n, p = name.lower(), pattern.lower()
    return fnmatch.fnmatchcase(n, p) if any(c in p for c in "*?[") else p in n


def _text(atoms: list) -> str:
    lines = []
    mmas = [a for a in atoms if a["kind"] == "mma"]
    copies = [a for a in atoms if a["kind"] != "mma"]
    if mmas:
        lines.append("MMA atoms (Shape_MNK; ThrID; ALayout | BLayout | CLayout; arch)")
        w = max(len(a["name"]) for a in mmas)
        for a in mmas:
            shp = "(" + ",".join(map(str, a["shape_mnk"])) + ")"
            lines.append(f"  {a['name']:<{w}}  {shp:<13} {a['thr_id']:<12} {a['a_layout']} | {a['b_layout']} | "
                         f"{a['c_layout']}  {a.get('arch') or 'any'}")
    if copies:
        if lines:
            lines.append("")
        lines.append("Copy operations (kind; ThrID; Src | Dst bit layouts; arch)")
        w = max(len(a["name"]) for a in copies)
        for a in copies:
            lines.append(f"  {a['name']:<{w}}  {a.get('op_kind', ''):<9} {a['thr_id']:<6} {a['src_layout']} | "
                         f"{a['dst_layout']}  {a.get('arch') or 'any'}")
    return "\n".join(lines)


def run(args) -> int:
    try:
        # lazy: the atom classes and their catalog (~0.1 s) only for 'symlayout atoms'
        from ..atoms import catalog_json, catalog_text
    except ModuleNotFoundError as e:
        raise UsageError(f"'atoms' is not available in this installation ({e.name} is missing)") from None
    filtered = args.pattern or args.arch or args.kind
    if not filtered:
        print(json.dumps(catalog_json(), indent=1) if args.json else catalog_text().rstrip("\n"))
        return EXIT_OK
    gpu = _arch_key(args.arch) if args.arch else None
    atoms = [a for a in catalog_json()["atoms"]
             if matches(a["name"], args.pattern) and (args.kind is None or a["kind"] == args.kind)
             and (gpu is None or runs_on(a.get("arch"), gpu))]
    if args.json:
        print(json.dumps({"atoms": atoms}, indent=1))
    elif atoms:
        print(_text(atoms))
    return EXIT_OK if atoms else EXIT_REFUTED
