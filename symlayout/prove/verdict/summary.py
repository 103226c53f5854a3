"""Counting verdicts: the summary line, the unmet expectations and the exit code of ``prove``.

Exit codes (``shared/spec/configs.md``): 0 every result as expected, 1 some
expectation unmet (a property refuted unexpectedly, an expected refutation proved,
or ``vacuous`` where ``proved`` was expected), 2 bad input, 3 some result unknown
and none unmet, 4 an internal error in some file (the other files still reported).

>>> from symlayout.prove.engine import ConfigReport
>>> from symlayout.prove.verdict.result import Result
>>> rep = ConfigReport("x.toml", "x", results=[Result("alignment", "proved", operand="A", checked=4),
...                                          Result("bank_conflicts", "refuted", operand="B", checked=4)])
>>> exit_code([rep]), summary([rep])["unmet"], unmet([rep])
(1, 1, [('x.toml', 'bank_conflicts[B]', 'refuted', 'proved')])
"""
from __future__ import annotations

from .result import ERROR, PROVED, REFUTED, UNKNOWN, VACUOUS


def exit_code(reports) -> int:
    """0 as expected, 1 unmet (wrong or vacuous), 2 input error, 3 unknown (and none unmet); 4 when a file
    hit an internal error (a bug), whatever the others say."""
    if any(r.internal for r in reports):
        return 4
    if any(r.error for r in reports):
        return 2
    wrong = unknown = False
    for rep in reports:
        for r in rep.results:
            if r.status == ERROR:
                return 2
            if r.status == UNKNOWN:
                unknown = True
            elif r.status != r.expected:
                wrong = True
    return 1 if wrong else 3 if unknown else 0


def summary(reports) -> dict:
    """Results counted by status (``vacuous`` apart from ``proved``), plus ``unmet``:
    decided results (proved, refuted, vacuous) that are not what was expected."""
    s = {"proved": 0, "refuted": 0, "vacuous": 0, "unknown": 0, "errors": 0, "unmet": 0}
    for rep in reports:
        if rep.error:
            s["errors"] += 1
        for r in rep.results:
            key = {PROVED: "proved", REFUTED: "refuted", VACUOUS: "vacuous", UNKNOWN: "unknown"}.get(r.status, "errors")
            s[key] += 1
            if key in ("proved", "refuted", "vacuous") and not r.as_expected:
                s["unmet"] += 1
    return s


def unmet(reports) -> list:
    """``(path, "property[operand]", status, expected)`` of every unmet expectation."""
    out = []
    for rep in reports:
        for r in rep.results:
            if r.status in (PROVED, REFUTED, VACUOUS) and not r.as_expected:
                out.append((rep.path, r.property + (f"[{r.operand}]" if r.operand else ""), r.status, r.expected))
    return out
