"""A configuration document: the contract's tables (``shared/spec/configs.md``) built by a front end.

Both front ends (CuTe C++ headers, the CuTe DSL) find the same things in a
kernel: one TiledMMA, the copies that feed or drain its operands (``[copy.X]``),
the copies between global and shared memory (``[g2s.X]``, ``[s2g.C]``), pipeline
stages (``[stages]``), parameters (``[params]``).  A :class:`ConfigDoc` holds
them as plain values in the contract's key names and writes them as TOML
(:meth:`ConfigDoc.to_toml`) or as the dict ``tomllib`` would read from that TOML
(:meth:`ConfigDoc.to_dict`), with comments that name where each table came from.

:meth:`ConfigDoc.version1` is the part the version-1 prover reads: the TiledMMA
and the MMA-derived ``[copy.X]`` tables, stage 0 of a staged smem layout; what it
leaves out is listed, so nothing disappears silently.

>>> d = ConfigDoc(name="demo", comments=["from a test"])
>>> d.mma = {"atom": "SM80_16x8x16_F16F16F16F16_TN", "layout": "(2,2,1)"}
>>> d.copy["A"] = {"atom": "SM75_U32x4_LDSM_N", "type": "half_t", "smem": "Sw<3,3,3> o 0 o (32,64):(64,1)"}
>>> d.g2s["A"] = {"atom": "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", "type": "half_t", "thr": "(16,8):(8,1)",
...               "val": "(1,8)", "gmem": "(32,64):(ldA,1)", "gmem_align": 16}
>>> d.params["ldA"] = {"min": 64, "max": 65536, "multiple_of": 8}
>>> print(d.to_toml())  # doctest: +NORMALIZE_WHITESPACE
# from a test
name = "demo"
<BLANKLINE>
[params]
ldA = { min = 64, max = 65536, multiple_of = 8 }
<BLANKLINE>
[mma]
atom = "SM80_16x8x16_F16F16F16F16_TN"
layout = "(2,2,1)"
<BLANKLINE>
[copy.A]
atom = "SM75_U32x4_LDSM_N"
type = "half_t"
smem = "Sw<3,3,3> o 0 o (32,64):(64,1)"
<BLANKLINE>
[g2s.A]
atom = "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>"
type = "half_t"
thr = "(16,8):(8,1)"
val = "(1,8)"
gmem = "(32,64):(ldA,1)"
gmem_align = 16
>>> v1, left_out = d.version1()
>>> sorted(v1.to_dict()), left_out
(['copy', 'mma', 'name'], ['[g2s.A] (version 2: global -> shared copy)', '[params] ldA (used only by version-2 tables)'])
"""
from __future__ import annotations

import copy as _copy
import json
import re
from dataclasses import dataclass, field

from ..algebra.notation import parse_int_tuple
from ..atoms import get_copy_op, value_type_bits

__all__ = ["ConfigDoc", "toml_value", "strip_static", "stage_slice", "gmem_tile", "LD_MAX"]

#: the largest leading dimension a parametric gmem tile is proved for (elements)
LD_MAX = 1 << 20

# key order of each table, as the contract lists them
_ORDER = {
    "mma": ("atom", "layout", "permutation"),
    "copy": ("atom", "type", "smem", "align", "thr", "val", "tv", "tiler", "convert"),
    "g2s": ("atom", "type", "smem", "align", "thr", "val", "tv", "tiler", "gmem", "gmem_align", "residue"),
    "s2g": ("atom", "type", "smem", "thr", "val", "tv", "tiler", "gmem", "gmem_align", "residue"),
    "smem": ("type", "layout", "align"),
    "tma": ("atom", "multicast", "gmem", "box"),
    "g2r": ("atom", "type", "thr", "val", "tv", "tiler", "gmem", "gmem_align", "residue"),
    "r2g": ("atom", "type", "thr", "val", "tv", "tiler", "gmem", "gmem_align", "residue"),
    "tmem": ("columns", "accumulator_stages"),
    "tmem_copy": ("atom", "tile", "warps"),
}
_V2_COPY_KEYS = ("thr", "val", "tv", "tiler", "convert")


def toml_value(v) -> str:
    """A TOML literal for a string, integer, boolean, list or (inline) dict.

    >>> toml_value("Sw<3,3,3> o (8,64):(64,1)"), toml_value(True), toml_value(["32", "32", "16"])
    ('"Sw<3,3,3> o (8,64):(64,1)"', 'true', '["32", "32", "16"]')
    >>> toml_value({"min": 1, "max": 8})
    '{ min = 1, max = 8 }'
    """
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(f"no TOML literal for {v!r}")


def strip_static(text: str) -> str:
    """CuTe's print notation without the static underscores (``_64`` -> ``64``).

    >>> strip_static("Sw<3,3,3> o _0 o ((_8,_16),(_64,_1)):((_64,_512),(_1,_0))")
    'Sw<3,3,3> o 0 o ((8,16),(64,1)):((64,512),(1,0))'
    """
    return re.sub(r"(?<![A-Za-z0-9_])_(\d)", r"\1", text)


def _split_top(s: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in s:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return out


def stage_slice(smem: str) -> tuple[str, int] | None:
    """``(layout of stage 0, number of stages)`` of a rank-3 smem layout ``(M,K,PIPE)``
    (swizzle and offset kept), or ``None`` when the layout is not rank 3.

    >>> stage_slice("Sw<2,3,3> o 0 o ((8,16),(32,1),(1,3)):((32,256),(1,0),(0,4096))")
    ('Sw<2,3,3> o 0 o ((8,16),(32,1)):((32,256),(1,0))', 3)
    >>> stage_slice("(64,32):(32,1)") is None
    True
    """
    head, _, body = smem.rpartition(" o ")
    shape, sep, stride = body.strip().partition("):(")
    if not sep or not shape.startswith("(") or not stride.endswith(")"):
        return None
    modes, strides = _split_top(shape[1:]), _split_top(stride[:-1])
    if len(modes) != 3 or len(strides) != 3:
        return None
    try:
        pipe = parse_int_tuple(modes[2])
    except Exception:  # noqa: BLE001 - not a static shape: no slice
        return None
    n = 1
    for x in (pipe if isinstance(pipe, tuple) else (pipe,)):
        if not isinstance(x, int):
            return None
        n *= x
    one = f"({modes[0]},{modes[1]}):({strides[0]},{strides[1]})"
    return (f"{head} o {one}" if head else one), n


def gmem_tile(shape, contiguous: int, ld: str, atom: str, value_type: str) -> tuple[dict, dict, str]:
    """The default gmem side of a global-memory copy whose tile has ``shape`` (rank 2):
    ``(keys, param_range, comment)``.  The tile is a window of a larger tensor whose
    ``contiguous`` mode has stride 1 and the other the leading dimension ``ld`` (a
    ``[params]`` symbol, at least the tile's extent along the contiguous mode); the
    leading dimension is assumed a multiple of the copy's vector (the copy's own
    alignment requirement), the tile's first element aligned to the vector.

    >>> keys, rng, _ = gmem_tile((128, 64), 1, "ldQ", "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", "half_t")
    >>> keys, rng
    ({'gmem': '(128,64):(ldQ,1)', 'gmem_align': 16}, {'min': 64, 'max': 1048576, 'multiple_of': 8})
    """
    stride = ("1", ld) if contiguous == 0 else (ld, "1")
    keys = {"gmem": f"({shape[0]},{shape[1]}):({stride[0]},{stride[1]})"}
    vec = bits = None
    try:
        vec = get_copy_op(atom).vector_bits // 8
        bits = value_type_bits(value_type)
    except Exception:  # noqa: BLE001 - an atom or type the catalog lacks: no alignment assumption
        pass
    per = 1
    if vec and bits and vec * 8 >= bits:
        keys["gmem_align"] = vec
        per = vec * 8 // bits
    rng = {"min": shape[contiguous], "max": LD_MAX, "multiple_of": per}
    why = f"; {ld} assumed a multiple of {per} elements ({vec} B, the {atom} vector)" if per > 1 else ""
    return keys, rng, f"{ld} = the leading dimension{why}"


@dataclass
class ConfigDoc:
    """One configuration file's content; tables are dicts in the contract's key names."""
    name: str = ""
    comments: list = field(default_factory=list)
    params: dict = field(default_factory=dict)
    mma: dict | None = None
    copy: dict = field(default_factory=dict)
    g2s: dict = field(default_factory=dict)
    s2g: dict = field(default_factory=dict)
    smem: dict = field(default_factory=dict)              # [smem.X]: an operand a GMMA atom reads from smem
    tma: dict = field(default_factory=dict)               # [tma.X]: its TMA load
    stages: int | None = None
    g2r: dict = field(default_factory=dict)               # [g2r.X]: copy-only kernels, gmem -> registers of X
    r2g: dict = field(default_factory=dict)               # [r2g.X]: registers -> gmem of X
    tmem: dict | None = None                              # [tmem]: the Tensor Memory allocation (SM100)
    tmem_copy: dict = field(default_factory=dict)         # [tmem_copy.C]: tcgen05.ld of the accumulator
    prove: dict | None = None                             # [prove] (properties, timeout_s)
    expect: dict | None = None                            # [expect] (refuted, ...)
    table_comments: dict = field(default_factory=dict)   # "copy.A" -> [comment lines]
    notes: list = field(default_factory=list)             # what the front end could not express

    def tables(self):
        """``(header, dict)`` pairs in file order."""
        if self.params:
            yield "params", dict(self.params)
        if self.mma is not None:
            yield "mma", self.mma
        for kind in ("copy", "g2s", "s2g", "smem", "tma"):
            named = [x for x in getattr(self, kind) if x not in ("A", "B", "C")]   # a copy-only kernel's tensors
            for op in ("A", "B", "C", *named):
                t = getattr(self, kind).get(op)
                if t is not None:
                    yield f"{kind}.{op}", t
        for kind in ("g2r", "r2g"):
            for x, t in getattr(self, kind).items():
                yield f"{kind}.{x}", t
        if self.stages is not None:
            yield "stages", {"count": self.stages}
        if self.tmem is not None:
            yield "tmem", self.tmem
        if "C" in self.tmem_copy:
            yield "tmem_copy.C", self.tmem_copy["C"]
        if self.prove:
            yield "prove", self.prove
        if self.expect:
            yield "expect", self.expect

    def to_dict(self) -> dict:
        """The dict ``tomllib.loads(self.to_toml())`` returns."""
        out: dict = {}
        if self.name:
            out["name"] = self.name
        for header, t in self.tables():
            parts = header.split(".")
            d = out
            for p in parts[:-1]:
                d = d.setdefault(p, {})
            d[parts[-1]] = _copy.deepcopy(dict(t))
        return out

    def to_toml(self) -> str:
        lines = [f"# {c}" for c in self.comments]
        if self.name:
            lines.append(f"name = {toml_value(self.name)}")
        for header, t in self.tables():
            lines.append("")
            lines.extend(f"# {c}" for c in self.table_comments.get(header, []))
            lines.append(f"[{header}]")
            order = _ORDER.get(header.split(".")[0], ())
            for k in sorted(t, key=lambda k: (order.index(k) if k in order else len(order), k if k not in order else "")):
                lines.append(f"{k} = {toml_value(t[k])}")
        if self.notes:
            lines.append("")
            lines.extend(f"# note: {n}" for n in self.notes)
        return "\n".join(lines) + "\n"

    def version1(self) -> tuple["ConfigDoc", list]:
        """The version-1 part (what today's prover reads) and the list of what it leaves out.

        Kept: ``[mma]``, ``[copy.X]`` tables built by ``make_tiled_copy_A/B/C`` (no
        ``thr``/``val``/``tv``/``tiler``) without ``convert``; a staged smem layout
        becomes its stage 0.  Left out (each named in the returned list): hand-built
        and converting copies, ``[g2s.X]``, ``[s2g.C]``, ``[stages]``, parameters only
        version-2 tables use.
        """
        v1 = ConfigDoc(name=self.name, comments=list(self.comments), mma=_copy.deepcopy(self.mma),
                       prove=_copy.deepcopy(self.prove), expect=_copy.deepcopy(self.expect),
                       table_comments={"mma": list(self.table_comments.get("mma", []))}, notes=list(self.notes))
        left: list = []
        for op, t in sorted(self.copy.items()):
            v2 = [k for k in _V2_COPY_KEYS if k in t and t[k] is not False]
            if v2:
                why = "converts the accumulator" if v2 == ["convert"] else "hand-built copy"
                left.append(f"[copy.{op}] (version 2: {why}: {', '.join(v2)})")
                continue
            t = dict(t)
            sl = stage_slice(t["smem"])
            if sl is not None:
                t["smem"] = sl[0]
                left.append(f"[copy.{op}] stages 1..{sl[1] - 1} (version 1 proves stage 0 of the staged smem layout)")
            v1.copy[op] = t
            v1.table_comments[f"copy.{op}"] = list(self.table_comments.get(f"copy.{op}", []))
        for kind, what in (("g2s", "global -> shared copy"), ("s2g", "shared -> global copy"),
                           ("smem", "GMMA smem operand"), ("tma", "TMA load")):
            for op in sorted(getattr(self, kind)):
                left.append(f"[{kind}.{op}] (version 2: {what})")
        if self.stages is not None:
            left.append(f"[stages] count = {self.stages} (version 2)")
        used = " ".join(str(v) for _, t in v1.tables() for v in t.values())
        for p, rng in self.params.items():
            if re.search(rf"\b{re.escape(p)}\b", used):
                v1.params[p] = dict(rng)
            else:
                left.append(f"[params] {p} (used only by version-2 tables)")
        return v1, left
