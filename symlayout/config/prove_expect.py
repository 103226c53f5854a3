"""``[prove]`` (which properties, the timeout) and ``[expect]`` (the results that must be REFUTED)."""

from __future__ import annotations

import math
import re

from .messages import _short, _suggest, _type_name
from .keys import EXPECT, MAX_TIMEOUT_S, OPERANDS, PROPERTIES, PROVE
from .model import ExpectConfig, ProveConfig


class ProveExpectSection:
    """``[prove]`` and ``[expect]``."""

    def load_prove(self, data) -> ProveConfig:
        if "prove" not in data:
            return ProveConfig()
        keys = ("prove",)
        t = self.table(data["prove"], keys)
        self.check_keys(t, keys, PROVE.names)
        props = None
        if "properties" in t:
            props = tuple(self.property_list(t["properties"], keys + ("properties",)))
            if not props:
                self.fail(keys + ("properties",), "[prove] properties is empty (leave it out to prove every property)")
        timeout = 10.0
        if "timeout_s" in t:
            v = t["timeout_s"]
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                self.fail(keys + ("timeout_s",), f"[prove] timeout_s must be a number of seconds, not "
                                                 f"{_type_name(v)} {_short(v)}")
            if not math.isfinite(v) or v <= 0:
                self.fail(keys + ("timeout_s",), f"[prove] timeout_s must be positive and finite, got {v}")
            if v > MAX_TIMEOUT_S:
                self.fail(keys + ("timeout_s",), f"[prove] timeout_s = {v} is too large (limit {int(MAX_TIMEOUT_S)})")
            timeout = float(v)
        return ProveConfig(props, timeout)

    def property_list(self, v, keys):
        if not isinstance(v, list):
            self.fail(keys, f"{self.where(keys)} must be an array of property names, not {_type_name(v)} {_short(v)}")
        seen = []
        for p in v:
            if not isinstance(p, str):
                self.fail(keys, f"{self.where(keys)}: entries must be property names (strings), not "
                                f"{_type_name(p)} {_short(p)}")
            if p not in PROPERTIES:
                self.fail(keys, f"{self.where(keys)}: unknown property {p!r}{_suggest(p, PROPERTIES)}")
            if p in seen:
                self.fail(keys, f"{self.where(keys)}: {p!r} is listed twice")
            seen.append(p)
        return seen

    def load_expect(self, data, prove: ProveConfig) -> ExpectConfig:
        if "expect" not in data:
            return ExpectConfig()
        keys = ("expect",)
        t = self.table(data["expect"], keys)
        self.check_keys(t, keys, EXPECT.names)
        plain, per_op = self.expect_list(t.get("refuted", []), keys + ("refuted",))
        if prove.properties is not None:
            for p in plain + [p for p, _ in per_op]:
                if p not in prove.properties:
                    self.fail(keys + ("refuted",), f"[expect] refuted names {p!r}, which [prove] properties does not check")
        degree = None
        if "max_bank_degree" in t:
            degree = self.value(t, keys, EXPECT["max_bank_degree"])
            if "bank_conflicts" in plain or any(p == "bank_conflicts" for p, _ in per_op):
                self.fail(keys + ("max_bank_degree",), "[expect] max_bank_degree lets bank_conflicts count as proved "
                                                       "up to a degree; it contradicts refuted = [\"bank_conflicts...\"]")
        return ExpectConfig(frozenset(plain), frozenset(per_op), degree)

    def expect_list(self, v, keys):
        """``refuted = ["alignment", "bank_conflicts[A]"]``: plain names and (property, operand) pairs."""
        w = self.where(keys)
        if not isinstance(v, list):
            self.fail(keys, f"{w} must be an array of property names, not {_type_name(v)} {_short(v)}")
        plain, per_op, seen = [], [], set()
        for e in v:
            if not isinstance(e, str):
                self.fail(keys, f"{w}: entries must be property names (strings), not {_type_name(e)} {_short(e)}")
            m = re.fullmatch(r"\s*([A-Za-z_]+)\s*(?:\[\s*([A-Za-z0-9_.]+)\s*\])?\s*", e)
            if not m:
                self.fail(keys, f"{w}: {e!r} is not a property name or 'property[operand]' (e.g. \"bank_conflicts[A]\")")
            p, op = m.group(1), m.group(2)
            if p not in PROPERTIES:
                self.fail(keys, f"{w}: unknown property {p!r}{_suggest(p, PROPERTIES)}")
            if op is not None and op.upper() in OPERANDS:
                op = op.upper()
            if (p, op) in seen:
                self.fail(keys, f"{w}: {e!r} is listed twice")
            seen.add((p, op))
            if op is None:
                plain.append(p)
            else:
                per_op.append((p, op))
        for p, op in per_op:
            if (p, None) in seen:
                self.fail(keys, f"{w}: {p!r} already means every operand; {p}[{op}] is redundant")
        return plain, per_op
