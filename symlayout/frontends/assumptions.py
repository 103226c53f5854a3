"""Results that depend on an assumption a front end made, not one the kernel states.

The gmem side of a front end's ``[g2s.X]`` / ``[s2g.C]`` is a tile of a tensor whose leading
dimension ``ldX`` is a ``[params]`` symbol; the front end assumes of it only what the copy itself
needs, a multiple of the copy's vector (8 halves for 16-byte ``cp.async``).  A property refuted
only at that default (``coalescing``: at ``ldA = 40`` a warp's 512 bytes touch 20 sectors, not 16)
is proved again under the weakest stronger ``multiple_of`` (doubling, up to 128 bytes); if that
proves it, the result is reported as holding under that assumption, with the option that states
it (``--assume ldA%16==0``).  Used by ``symlayout dsl`` and ``symlayout extract``.
"""
from __future__ import annotations

import dataclasses
import re

from ..atoms import value_type_bits
from ..config import loads_config
from ..prove.engine import prove_config

__all__ = ["default_assumptions", "under_stronger", "parse_assume", "MAX_BYTES"]

#: the strongest leading-dimension assumption tried, in bytes (a 128-byte line)
MAX_BYTES = 128


def default_assumptions(doc) -> dict:
    """``{ld symbol: element bits}`` of the ``[params]`` leading dimensions of ``doc``'s global copies
    whose ``multiple_of`` is the front end's default (all of them, in an extracted file)."""
    out = {}
    for kind in ("g2s", "s2g"):
        for table in getattr(doc, kind).values():
            for name in re.findall(r"[A-Za-z_]\w*", table.get("gmem", "").partition(":")[2]):
                if name in doc.params:
                    out.setdefault(name, value_type_bits(table.get("type", "half_t")))
    return out


def under_stronger(doc, assumed: dict, r, properties=None, method: str = "auto", timeout_s=None):
    """``(result, depends line)``: the refuted result ``r`` of ``doc`` proved again under the weakest
    stronger ``multiple_of`` of a parameter its counterexample names, or ``None`` if none proves it."""
    msg = r.counterexample.message if r.counterexample is not None else ""
    for p, bits in assumed.items():
        if p not in doc.params or not re.search(rf"\b{re.escape(p)} = ", msg):
            continue
        base = int(doc.params[p].get("multiple_of", 1))
        m = base * 2
        while m * bits <= MAX_BYTES * 8:
            stronger = dataclasses.replace(doc, params={**doc.params, p: dict(doc.params[p], multiple_of=m)})
            rep = prove_config(loads_config(stronger.to_toml(), path="<assumption>"), properties=[r.property],
                               method=method, timeout_s=timeout_s)
            again = [q for q in rep.results if q.operand == r.operand and q.via == r.via]
            if again and again[0].status == "proved":
                note = (f"depends on an assumption: holds only if {p} % {m} == 0 (state it: --assume {p}%{m}==0); "
                        f"under the front end's default {p} % {base} == 0 it is refuted: {msg}")
                return (dataclasses.replace(again[0], detail=note),
                        f"{r.property}[{r.operand}]: {p} % {m} == 0 (--assume {p}%{m}==0)")
            m *= 2
    return None


def parse_assume(text: str) -> tuple[str, int] | None:
    """``"ldA%16==0"`` -> ``("ldA", 16)``; ``None`` if it is not of that form.

    >>> parse_assume("ldA%16==0"), parse_assume(" ldQ % 8 == 0 "), parse_assume("ldA>3")
    (('ldA', 16), ('ldQ', 8), None)
    """
    m = re.fullmatch(r"\s*([A-Za-z_]\w*)\s*%\s*(\d+)\s*==\s*0\s*", text)
    return (m.group(1), int(m.group(2))) if m and int(m.group(2)) >= 1 else None
