"""The JSON Schema (draft 2020-12) of a configuration file, made from the :mod:`.keys` description.

A TOML file read as JSON (tables are objects) validates against it when every key is known, of its
type and within its range; what one key cannot say alone (a layout's notation, an atom's name, how
two tables agree) only the loader checks.  ``python -m symlayout.config.schema`` prints it; the
published copy is ``docs/config.schema.json`` (editors with a TOML language server read it, see
``docs/configs.md``).

>>> s = schema()
>>> s["properties"]["copy"]["properties"]["A"]["required"]
['atom', 'type', 'smem']
>>> s["properties"]["mma"]["properties"]["layout"]["default"]
'(1,1,1)'
"""
from __future__ import annotations

import json
import sys

from .keys import (MAX_ALIGN, OPERAND_MODES, TABLES, THREADMAP, TM_KIND_KEYS, TOP, Key, Table)

DIALECT = "https://json-schema.org/draft/2020-12/schema"
#: symbol names of ``[params]`` (``o`` and ``Sw`` mean something else in CuTe notation)
PARAM_NAME = r"^(?!(o|Sw)$)[A-Za-z][A-Za-z0-9_]*$"


def key_schema(key: Key, operand: str | None = None) -> dict:
    """The schema of one key's value (``operand``: the sub-table it is in, for ``residue``)."""
    out = {"description": key.doc, **_form(key, operand)}
    if key.default is not None:
        out["default"] = key.default
    return out


def _form(key: Key, operand: str | None) -> dict:
    f = key.form
    if f == "string":
        return _string(key)
    if f == "integer":
        return _integer(key)
    if f == "number":
        return {"type": "number", "exclusiveMinimum": 0, "maximum": key.maximum}
    if f == "boolean":
        return {"type": "boolean"}
    if f == "align":
        return {"type": "integer", "enum": [1 << i for i in range(MAX_ALIGN.bit_length())]}
    if f == "pair":
        return _pair(key)
    if f == "strings":
        enum = OPERAND_MODES[operand] if key.name == "residue" and operand else key.enum
        return _array({"type": "string", **({"enum": list(enum)} if enum else {}),
                       **({"pattern": key.pattern} if key.pattern else {})}, key, unique=True)
    if f == "extents":
        return _array({"type": ["string", "integer"]}, key)
    if f == "count":
        return {"anyOf": [_integer(key), {"type": "string", "pattern": key.pattern}]}
    if f == "iterations":
        return {"anyOf": [_integer(key), _pair(key)]}
    if f == "table":
        return section_schema("threadmap" if key.name == "base" else key.name)
    if f in TMEM_FORMS:                       # Version 3: [tmem] regions, accumulator_regions, aliases; warps
        return TMEM_FORMS[f]
    raise ValueError(f"{key.name}: no schema for the form {f!r}")


#: Version 3 (TMEM): the forms of [tmem] regions / accumulator_regions / aliases and [tmem_copy.C] warps
TMEM_FORMS = {
    "regions": {"type": "object", "propertyNames": {"pattern": r"^[A-Za-z_][A-Za-z0-9_]*$"},
                "additionalProperties": {"type": "array", "items": {"type": "integer", "minimum": 0},
                                         "minItems": 2, "maxItems": 2}},
    "names": {"type": "array", "items": {"type": "string"}, "minItems": 1, "uniqueItems": True},
    "aliases": {"type": "object", "additionalProperties": {"type": "string"}},
    "warps": {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 31}, "minItems": 4,
              "maxItems": 4, "uniqueItems": True},
}


def _string(key: Key) -> dict:
    out = {"type": "string", "maxLength": key.max_length}
    if key.enum:
        out["enum"] = list(key.enum)
    if key.pattern:
        out["pattern"] = key.pattern
    return out


def _integer(key: Key) -> dict:
    out = {"type": "integer"}
    if key.minimum is not None:
        out["minimum"] = key.minimum
    if key.maximum is not None:
        out["maximum"] = key.maximum
    return out


def _pair(key: Key) -> dict:
    return {"type": "array", "items": {"type": "integer", "minimum": 1, "maximum": key.maximum},
            "minItems": 2, "maxItems": 2}


def _array(items: dict, key: Key, unique: bool = False) -> dict:
    out = {"type": "array", "items": items}
    if key.min_items is not None:
        out["minItems"] = key.min_items
    if key.max_items is not None:
        out["maxItems"] = key.max_items
    if unique:
        out["uniqueItems"] = True
    return out


def table_schema(table: Table, operand: str | None = None) -> dict:
    """An object with exactly the table's keys, the required ones required."""
    out = {"type": "object", "description": table.doc,
           "properties": {k.name: key_schema(k, operand) for k in table.keys}, "additionalProperties": False}
    required = [k.name for k in table.keys if k.required]
    if required:
        out["required"] = required
    return out


def operand_tables(table: Table) -> dict:
    """``[name.X]``: one sub-table per operand the table comes in."""
    return {"type": "object", "description": table.doc,
            "properties": {op: table_schema(table, op) for op in table.operands}, "additionalProperties": False}


def threadmap_schema() -> dict:
    """``[threadmap]``: the keys, and per ``kind`` the keys it needs and the only ones it takes."""
    out = table_schema(THREADMAP)
    out["allOf"] = [{"if": {"properties": {"kind": {"const": kind}}, "required": ["kind"]},
                     "then": {"required": list(req),
                              "propertyNames": {"enum": ["kind", *req, *opt, "type", "align"]}}}
                    for kind, (req, opt) in TM_KIND_KEYS.items()]
    return out


def section_schema(name: str) -> dict:
    """The schema of a top-level table."""
    if name == "threadmap":
        return {"$ref": "#/$defs/threadmap"}
    table = TABLES[name]
    if name == "params":
        return {"type": "object", "description": "integer symbols with ranges, used in layouts",
                "propertyNames": {"pattern": PARAM_NAME}, "additionalProperties": table_schema(table)}
    if name in ("g2s", "s2g"):                # issue 31: a copy-only kernel names its tensors (any identifier)
        out = operand_tables(table)
        out["additionalProperties"] = table_schema(table)
        out["propertyNames"] = {"pattern": "^[A-Za-z][A-Za-z0-9_]*$"}
        return out
    if name in ("reuse", "g2r", "r2g"):                     # issue 31: [reuse.NAME], any name (the kernel's tensor, e.g. P)
        return {"type": "object", "description": table.doc, "additionalProperties": table_schema(table)}
    return operand_tables(table) if table.operands else table_schema(table)


def schema() -> dict:
    """The JSON Schema of a configuration file."""
    props = {k.name: key_schema(k) for k in TOP.keys}
    return {"$schema": DIALECT, "title": "symlayout configuration", "description": TOP.doc + " (docs/configs.md)",
            "type": "object", "properties": props, "additionalProperties": False,
            "$defs": {"threadmap": threadmap_schema()}}


def schema_text() -> str:
    """The schema as published in ``docs/config.schema.json``."""
    return json.dumps(schema(), indent=2) + "\n"


if __name__ == "__main__":
    sys.stdout.write(schema_text())
