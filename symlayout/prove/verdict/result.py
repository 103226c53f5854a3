"""Verdicts of the prover: PROVED, REFUTED (with a counterexample), VACUOUS or UNKNOWN.

A property that had nothing to check (0 obligations) is ``vacuous``, never
``proved`` (:func:`verdict`); a vacuous result does not meet an expected
``proved`` (it is *unmet*, and ``prove`` exits 1).

>>> r = Result("alignment", "proved", operand="A", checked=32, method="exhaustive")
>>> r.status, r.to_json()["checked"]
('proved', 32)
"""
from __future__ import annotations

from dataclasses import dataclass, field

PROVED, REFUTED, UNKNOWN, ERROR, VACUOUS = "proved", "refuted", "unknown", "error", "vacuous"


def verdict(cex, checked) -> str:
    """REFUTED with a counterexample; otherwise PROVED only when obligations were
    counted and there was at least one (0 obligations: VACUOUS).

    >>> verdict(None, 12), verdict(None, 0), verdict(Counterexample("x"), 0)
    ('proved', 'vacuous', 'refuted')
    """
    if cex is not None:
        return REFUTED
    return VACUOUS if checked == 0 else PROVED


@dataclass
class Counterexample:
    """A violation told in the user's terms (re-validated before it is printed)."""
    message: str
    thread: int | None = None
    slot: int | None = None
    value: int | None = None
    element: tuple | None = None
    address_bytes: int | None = None
    params: dict | None = None
    route: list = field(default_factory=list)     # step-by-step story (seed-000 style)
    extra: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        d = {"message": self.message}
        for k in ("thread", "slot", "value", "address_bytes"):
            v = getattr(self, k)
            if v is not None:
                d[k] = int(v)
        if self.element is not None:
            d["element"] = list(self.element)
        if self.params:
            d["params"] = dict(self.params)
        if self.route:
            d["route"] = list(self.route)
        d.update(self.extra)
        return d


@dataclass
class Result:
    """The outcome of one property on one operand (or thread map)."""
    property: str
    status: str
    operand: str | None = None
    seconds: float = 0.0
    checked: int | None = None
    method: str = ""
    counterexample: Counterexample | None = None
    detail: str = ""
    expected: str = "proved"
    stats: dict = field(default_factory=dict)
    via: str = ""            # Hopper: "wgmma" (descriptor reads) or "tma" (TMA writes) of the same operand

    @property
    def as_expected(self) -> bool:
        return self.status == self.expected

    def to_json(self) -> dict:
        d = {"property": self.property, "status": self.status, "seconds": round(self.seconds, 6)}
        if self.operand:
            d["operand"] = self.operand
        if self.via:
            d["via"] = self.via
        if self.checked is not None:
            d["checked"] = self.checked
        if self.method:
            d["method"] = self.method
        if self.expected != "proved" or self.status != "proved":
            d["expected"] = self.expected
        if self.detail:
            d["detail"] = self.detail
        if self.stats:
            d["stats"] = self.stats
        if self.counterexample is not None:
            d["counterexample"] = self.counterexample.to_json()
        return d
