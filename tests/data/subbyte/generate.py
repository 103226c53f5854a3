"""Writes recast.jsonl: conformance cases over sub-byte types, each computed by CuTe C++ (host-only g++):
``recast_layout<Old,New>(L)`` and ``composition`` / ``logical_divide`` of a recast swizzled layout, with the
function table (python tests/data/subbyte/generate.py; needs $SYMLAYOUT_CUTE_SITE)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from cute_cpp import cpp_layout  # noqa: E402
from sm100_cpp import compiler  # noqa: E402

CPP_TYPES = {"float_e2m1_t": "float_e2m1_t", "float_e2m3_t": "float_e2m3_t", "float_e3m2_t": "float_e3m2_t",
             "float_ue8m0_t": "float_ue8m0_t", "float_ue4m3_t": "float_ue4m3_t", "uint8_t": "uint8_t",
             "half_t": "half_t", "uint32_t": "uint32_t", "uint128_t": "uint128_t",
             "float_e2m1_unpacksmem_t": "cute::detail::float_e2m1_unpacksmem_t"}
LAYOUTS = ["(8,64):(64,1)", "(64,8):(1,64)", "((8,2),(32,4)):((32,1024),(1,256))", "(16,(8,4)):(8,(1,128))",
           "Sw<3,4,3> o 0 o (8,128):(128,1)", "Sw<2,4,3> o 0 o ((8,2),(64,2)):((64,1024),(1,512))",
           "Sw<1,4,3> o 0 o (64,8):(1,64)", "Sw<3,4,3> o 0 o ((8,4),(64,2)):((64,512),(1,2048))"]
PAIRS = [("uint8_t", "float_e2m1_t"), ("float_e2m1_t", "uint8_t"), ("half_t", "float_e2m1_t"),
         ("float_e2m1_t", "uint32_t"), ("float_e2m1_t", "uint128_t"), ("float_e2m1_unpacksmem_t", "uint8_t"),
         ("float_ue8m0_t", "uint32_t"), ("uint32_t", "float_ue4m3_t")]
SIX = [("float_e2m3_t", "uint8_t", "(8,96):(96,1)"), ("float_e3m2_t", "uint8_t", "(96,4):(1,96)"),
       ("uint8_t", "float_e2m3_t", "(8,96):(96,1)"), ("float_e2m3_t", "uint32_t", "((16,8),4):((1,64),16)"),
       ("uint8_t", "float_e3m2_t", "(24,4):(1,24)"), ("float_e3m2_t", "uint128_t", "(64,(8,2)):(1,(64,512))")]
#: (recast pair, layout, tiler): composition and logical_divide of the recast result
COMPOSE = [(("uint8_t", "float_e2m1_t"), "Sw<3,4,3> o 0 o (8,128):(128,1)", "(8,64):(1,8)"),
           (("uint8_t", "float_e2m1_t"), "Sw<3,4,3> o 0 o (8,128):(128,1)", "(4,(2,64)):(2,(1,8))"),
           (("half_t", "float_e2m1_t"), "(16,(8,4)):(8,(1,128))", "(8,16):(16,1)")]


def cases():
    out = [(f"recast_layout", [lay, o, n]) for o, n in PAIRS for lay in LAYOUTS]
    out += [("recast_layout", [lay, o, n]) for o, n, lay in SIX]
    return out


def _print_fn(expr: str) -> str:
    return (f"  {{ auto L = {expr}; print(L); printf(\"|\");"
            " for (int i = 0; i < int(size(L)); ++i) printf(\"%d \", int(L(i))); printf(\"\\n\"); }")


def main():
    c = compiler()
    body = ["int main() {"]
    plain = cases()
    for _op, (lay, o, n) in plain:
        body.append(_print_fn(f"recast_layout<{CPP_TYPES[o]}, {CPP_TYPES[n]}>({cpp_layout(lay)})"))
    for (o, n), lay, tiler in COMPOSE:
        r = f"recast_layout<{CPP_TYPES[o]}, {CPP_TYPES[n]}>({cpp_layout(lay)})"
        for op in ("composition", "logical_divide"):
            body.append(f"  print({r}); printf(\"#\");")
            body.append(_print_fn(f"{op}({r}, {cpp_layout(tiler)})"))
    lines = c.run("\n".join(body) + "\n}\n").splitlines()
    rows = []
    ops = [(op, args) for op, args in plain]
    for (o, n), lay, tiler in COMPOSE:
        for op in ("composition", "logical_divide"):
            ops.append((op, [None, tiler]))          # the recast layout as CuTe prints it (below)
    for i, ((op, args), line) in enumerate(zip(ops, lines)):
        if args[0] is None:
            first, line = line.split("#")
            args = [first.replace("_", ""), args[1]]
        text, table = line.split("|")
        rows.append({"id": f"subbyte-{op}-{i:03d}", "op": op, "args": args,
                     "expect": {"layout": text.replace("_", ""), "table": [int(x) for x in table.split()]}})
    with open(HERE / "recast.jsonl", "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    print(len(rows), "cases")


if __name__ == "__main__":
    main()
