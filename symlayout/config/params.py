"""``[params]``: integer symbols with ranges (``m = { min = 1, max = 64, multiple_of = 2 }``)."""

from __future__ import annotations

import re

from .messages import _short, _type_name
from .keys import PARAM
from .model import Param

# names a [params] symbol may not take (they mean something else in CuTe notation)
_RESERVED_SYMBOLS = {"o", "Sw"}
_IDENT = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")


class ParamsSection:
    """``[params]``."""

    def load_params(self, data) -> dict:
        if "params" not in data:
            return {}
        t = self.table(data["params"], ("params",))
        out = {}
        for name, spec in t.items():
            keys = ("params", name)
            if not _IDENT.match(name) or name in _RESERVED_SYMBOLS:
                self.fail(keys, f"[params]: {name!r} is not a valid symbol name (a letter, then letters, digits "
                                "or '_'; not 'o' or 'Sw')")
            if not isinstance(spec, dict):
                self.fail(keys, f"[params] {name} must be a table like {{ min = 1, max = 64 }}, not "
                                f"{_type_name(spec)} {_short(spec)}")
            self.check_keys(spec, keys, PARAM.names, what=f"[params] {name}")
            lo = self.value(spec, keys, PARAM["min"])
            hi = self.value(spec, keys, PARAM["max"])
            mult = self.value(spec, keys, PARAM["multiple_of"])
            if lo > hi:
                self.fail(keys, f"[params] {name}: min = {lo} is greater than max = {hi}")
            p = Param(name, lo, hi, mult, self.lines.line(*keys))
            if p.count() == 0:
                self.fail(keys, f"[params] {name}: no multiple of {mult} lies in [{lo}, {hi}]")
            out[name] = p
        return out
