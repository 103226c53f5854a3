"""Expectations: what each result of a configuration should be (``[expect]`` of configs.md).

``refuted = ["alignment"]`` expects every operand's ``alignment`` REFUTED (version 1);
``refuted = ["bank_conflicts[A]"]`` only A's (version 2), so a new conflict on B
is unmet.  ``max_bank_degree = N`` decides the weaker property "no phase needs
more than N times its minimum wavefronts": an exhaustive refutation whose worst
degree (the maximum over every phase) is at most N becomes PROVED of that
property, its degree kept in ``stats``; a Z3 witness, which carries no degree,
stays REFUTED (the detail says why).

>>> from symlayout.config import ExpectConfig
>>> from symlayout.prove.verdict.result import Counterexample, Result
>>> r = Result("bank_conflicts", "refuted", operand="A", checked=16, method="exhaustive",
...            counterexample=Counterexample("2-way bank conflict", extra={"degree": 2}))
>>> apply_expectations([r], ExpectConfig(max_bank_degree=2))
>>> r.status, r.expected, r.stats["bank_degree"], r.counterexample
('proved', 'proved', 2, None)
"""
from __future__ import annotations

from .result import ERROR, PROVED, REFUTED, Result


def expected_status(expect, prop: str, operand) -> str:
    """REFUTED when ``[expect] refuted`` names the property alone or with this operand."""
    return REFUTED if expect.refutes(prop, operand) else PROVED


def _bank_degree(r: Result, limit: int) -> None:
    cex = r.counterexample
    deg = (cex.extra or {}).get("degree") if cex is not None else None
    if deg is None:
        r.detail = (r.detail + "; " if r.detail else "") + \
            f"max_bank_degree = {limit} not applied: this refutation carries no degree (prove it exhaustively)"
        return
    if deg <= limit:
        r.status = PROVED
        r.stats = dict(r.stats or {}, bank_degree=int(deg))
        r.detail = (r.detail + "; " if r.detail else "") + \
            f"worst phase {deg}-way, within max_bank_degree = {limit} ({cex.message})"
        r.counterexample = None


def apply_expectations(results: list, expect, rejected=frozenset()) -> None:
    """Set ``expected`` of every result from ``expect``; apply ``max_bank_degree``; add an
    ERROR result for a ``property[operand]`` expectation that matches no result (unless CuTe
    rejected the configuration, when the rest is not checked)."""
    for r in results:
        if r.status == ERROR and r.detail.startswith("[expect]"):
            continue
        r.expected = expected_status(expect, r.property, r.operand)
        if expect.max_bank_degree is not None and r.property == "bank_conflicts" and r.status == REFUTED:
            _bank_degree(r, expect.max_bank_degree)
    if rejected:
        return
    for p, op in sorted(expect.refuted_operands):
        if not any(r.property == p and r.operand == op for r in results):
            results.append(Result(p, ERROR, operand=op, expected=REFUTED,
                                  detail=f"[expect] names '{p}[{op}]', which does not apply here"))
