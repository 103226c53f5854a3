"""Version 2.1: each operand's ``element`` type, stated on any of its tables and the same everywhere."""

from __future__ import annotations

from dataclasses import replace

from ..atoms.types import canonical_type, value_type_bits
from .keys import COPY, OPERANDS

#: version 2.1: the tables of one operand that may state its element type (``element``)
_ELEMENT_TABLES = ("copy", "g2s", "s2g", "smem", "tma")


class ElementsSection:
    """``element`` of ``[copy.X]``, ``[g2s.X]``, ``[s2g.X]``, ``[smem.X]``, ``[tma.X]``."""

    def apply_elements(self, data, copies, g2s, s2g, smem):
        """Version 2.1: each operand's ``element`` (the type its tensors hold), stated on any of its
        tables (``[copy.X]``, ``[g2s.X]``, ``[s2g.X]``, ``[smem.X]``, ``[tma.X]``) and the same
        wherever it is stated, given to every table of the operand."""
        stated = {}
        for kind in _ELEMENT_TABLES:
            for op, spec in (data.get(kind) or {}).items():
                if not isinstance(spec, dict) or "element" not in spec:
                    continue
                keys = (kind, op, "element")
                if op not in OPERANDS:
                    continue                   # (the table's own loader names the unknown operand)
                el = self.value(spec, keys[:-1], COPY["element"])
                bits = self.check_type(el, keys)
                if op in stated:
                    el0, keys0 = stated[op]
                    if canonical_type(el0) != canonical_type(el):
                        self.fail(keys, f"[{kind}.{op}] element = {el!r} disagrees with [{keys0[0]}.{op}] element = "
                                        f"{el0!r} "
                                        f"(line {self.lines.line(*keys0)}): operand {op}'s tensors hold one "
                                        "element type")
                    continue
                if op in smem and bits != value_type_bits(smem[op].type):
                    self.fail(keys, f"[{kind}.{op}] element = {el!r} has {bits} bits, but [smem.{op}] type = "
                                    f"{smem[op].type!r} has {value_type_bits(smem[op].type)}: the smem layout "
                                    "counts elements of that width")
                stated[op] = (el, keys)

        def given(tables):
            return {op: replace(t, element=stated[op][0]) if op in stated else t for op, t in tables.items()}
        return given(copies), given(g2s), given(s2g), given(smem)
