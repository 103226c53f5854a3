"""Conformance runner: check symlayout against cases generated from CuTe C++.

Usage::

    python -m symlayout.conformance ../shared/conformance/public/*.jsonl

Each line of a ``.jsonl`` file is a case ``{"id", "op", "args", "expect"}``
(format: ``shared/conformance/README.md``).  The runner dispatches on ``op``
through :data:`OPS`; an op without a handler counts as *failed*, never as
skipped.  It prints per-op pass/fail counts and, last, ``N passed, M failed``;
the exit status is 0 iff nothing failed.

>>> from symlayout.conformance.runner import run_case
>>> run_case({"id": "x", "op": "product", "args": ["(2,(3,4))"], "expect": "24"})
(True, '')
"""
from __future__ import annotations

import json
import sys
import time
from collections import Counter, defaultdict
from typing import Any, Callable

from ..algebra.int_tuple import format_int_tuple
from ..algebra.layout import function_table
from ..errors import SymlayoutError
from . import algebra, atoms, threadmap, tiled

#: The ops every public case of which must pass (this set only grows).
REQUIRED_OPS = frozenset({
    "product", "product_each", "prefix_product", "shape_div", "ceil_div", "idx2crd", "crd2idx", "flatten",
    "congruent", "weakly_congruent", "compatible", "layout", "size", "cosize", "coalesce", "filter",
    "composition", "complement", "left_inverse", "right_inverse", "logical_divide", "zipped_divide",
    "tiled_divide", "flat_divide", "logical_product", "zipped_product", "tiled_product", "blocked_product",
    "raked_product", "tile_to_shape", "upcast", "downcast", "max_common_vector", "max_common_layout",
    "make_layout_tv", "swizzle", "swizzle_layout", "mma_atom", "copy_atom", "tiled_mma", "tiled_mma_partition",
    "tiled_copy", "tiled_copy_partition", "pitch_linear_stripmined", "pitch_linear_warp_raked",
    "pitch_linear_warp_striped",
})


def _load_ops() -> dict[str, Callable[[list], Any]]:
    ops: dict[str, Callable[[list], Any]] = {}
    for m in (algebra, atoms, tiled, threadmap):
        ops.update(m.OPS)
    return ops


_OPS: dict | None = None


def ops() -> dict[str, Callable[[list], Any]]:
    """The op name -> handler table (handlers take the case's ``args``).

    >>> 'composition' in ops()
    True
    """
    global _OPS
    if _OPS is None:
        _OPS = _load_ops()
    return _OPS


def _render(value: Any) -> Any:
    """Turn a handler's Python result into the contract's JSON form."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, tuple)):
        return format_int_tuple(value)
    return value


def _compare(got: Any, expect: Any, path: str = "") -> str:
    """'' if ``got`` matches ``expect``, else a one-line description."""
    if isinstance(expect, dict) and "layout" in expect and set(expect) <= {"layout", "table"}:
        s = str(got)
        if s != expect["layout"]:
            return f"{path}layout: got {s}, expected {expect['layout']}"
        if "table" in expect:
            t = function_table(got)
            if t != expect["table"]:
                bad = next((i for i, (a, b) in enumerate(zip(t, expect["table"])) if a != b), min(len(t), len(expect["table"])))
                return f"{path}table differs at index {bad} (len {len(t)} vs {len(expect['table'])})"
        return ""
    if isinstance(expect, str) and hasattr(got, "shape"):
        return "" if str(got) == expect else f"{path}layout: got {got}, expected {expect}"
    if isinstance(expect, dict):
        if not isinstance(got, dict):
            return f"{path}: expected an object, got {type(got).__name__}"
        for k, v in expect.items():
            if k not in got:
                return f"{path}{k}: missing"
            msg = _compare(got[k], v, f"{path}{k}.")
            if msg:
                return msg
        return ""
    if isinstance(expect, list):
        g = [list(x) if isinstance(x, tuple) else x for x in got] if isinstance(got, (list, tuple)) else got
        return "" if g == expect else f"{path}: got {str(g)[:120]}, expected {str(expect)[:120]}"
    if isinstance(expect, int) and not isinstance(expect, bool):
        return "" if (isinstance(got, int) and int(got) == expect) else f"{path}: got {got!r}, expected {expect!r}"
    r = _render(got)
    return "" if r == expect else f"{path}: got {r!r}, expected {expect!r}"


def run_case(case: dict) -> tuple[bool, str]:
    """Run one case; returns ``(passed, message)``."""
    handler = ops().get(case["op"])
    if handler is None:
        return False, f"op {case['op']!r} not implemented"
    try:
        got = handler(case["args"])
    except SymlayoutError as e:
        return False, f"raised {type(e).__name__}: {e}"
    except Exception as e:  # a crash is a failure of the case, reported, never hidden
        return False, f"crashed {type(e).__name__}: {e}"
    msg = _compare(got, case["expect"])
    return (msg == ""), msg


def run_files(paths: list[str], verbose: int = 0, out=sys.stdout) -> tuple[int, int, dict]:
    """Run every case of every file; returns ``(passed, failed, per_op)``.

    ``per_op`` maps op -> Counter(passed=, failed=) and collects the failing ids.
    """
    per_op: dict[str, Counter] = defaultdict(Counter)
    failures: dict[str, list] = defaultdict(list)
    for p in paths:
        with open(p) as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                case = json.loads(line)
                ok, msg = run_case(case)
                per_op[case["op"]]["passed" if ok else "failed"] += 1
                if not ok:
                    failures[case["op"]].append((case["id"], msg))
    passed = sum(c["passed"] for c in per_op.values())
    failed = sum(c["failed"] for c in per_op.values())
    return passed, failed, {"counts": per_op, "failures": failures}


def main(argv: list[str] | None = None) -> int:
    import argparse
    ap = argparse.ArgumentParser(prog="python -m symlayout.conformance", description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("-v", "--verbose", action="count", default=0, help="list failing case ids (-vv: all)")
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    passed, failed, info = run_files(a.files)
    for op in sorted(info["counts"]):
        c = info["counts"][op]
        print(f"{op:28s} {c['passed']:6d} passed {c['failed']:6d} failed")
        if a.verbose:
            for cid, msg in info["failures"].get(op, [])[: (None if a.verbose > 1 else 5)]:
                print(f"    {cid}: {msg}")
    print(f"# {time.perf_counter() - t0:.2f} s")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
