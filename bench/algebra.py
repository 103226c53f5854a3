"""Algebra benchmark: the public algebra corpus (int_tuple, layout, swizzle) through symlayout, pycute and
tensor-layouts, same cases, same process.  Run by hand (never in CI):

    python bench/algebra.py [--install] [--repeat 5] [--no-append]

``--install`` pip-installs tensor-layouts into the benchmark cache (bench/common.py: CACHE/site) when the
environment lacks it.  pycute comes from the ``nvidia-cutlass`` wheel.

What is measured, per library, on the cases that library supports (see ``SUPPORT`` below):

* **op only**: the inputs are built as the library's own objects outside the timer (fresh objects every
  repeat, so no library can reuse a cache from the previous repeat); the timer covers the one algebra call.
* **from strings**: the contract's argument strings -> the library's objects -> the call.  symlayout parses
  with its own parser (``symlayout.conformance.runner.ops()`` handlers); pycute and tensor-layouts have no parser
  of CuTe's print notation, so they use this file's small parser (``parse``) plus a builder.
* Rendering the result and comparing it is never timed.

Cases are interleaved (for each case: symlayout, pycute, tensor-layouts, in turn) and each case's time is
the median over the repeats, so machine noise hits all three alike; rates are cases / sum of medians.
Ratios are computed on the cases both libraries support.

**Cold and warm.**  symlayout can remember concrete results by value: its parse cache (always on) and
the memo of composition / complement / logical_divide / logical_product (``layout.MEMO``, off by
default); ``layout.clear_caches`` empties both.  pycute and tensor-layouts keep nothing.  Each mode
is timed twice: *cold* is the default configuration with symlayout's caches emptied before every
timed call (untimed; in op-only mode before the inputs are parsed, so they are fresh objects); *warm*
turns the memo on and keeps both caches, so repeats 2..N of a case hit them and the per-case median
is a cache hit.  The goals are judged cold.

Correctness ("right"): each library's result is converted to the contract's form by an adapter
(``render``).  A layout-valued case is right when the print form equals the expected string **or** the
function table equals the expected table (CuTe prints differently from pycute / tensor-layouts, so a
result that is the same function with another (shape, stride) still counts); IntTuple / integer / bool
results must print the same.  symlayout is also counted strictly (print **and** table), as its
conformance runner does.

Adapter limits (documented; they decide what "supported" means):

* pycute has no product_each, ceil_div, congruent/weakly_congruent/compatible, flat_divide,
  blocked_product, raked_product, tile_to_shape, upcast/downcast, max_common_vector/layout,
  make_layout_tv; its layout functions do not take ComposedLayout arguments, so swizzled algebra cases
  (tag ``note: swizzled``, or a composed first argument) are unsupported except ``swizzle`` (the
  Swizzle functor) and ``swizzle_layout`` (pycute's ``ComposedLayout(Swizzle, offset, Layout)``
  constructor).  ``complement(L)`` without a cotarget is called as ``complement(L, cosize(L))`` (CuTe's
  default; pycute's default is 1), and an IntTuple cotarget is passed as its product (pycute takes an
  integer bound).  ``product`` of an integer is the integer.
* tensor-layouts has no ceil_div or make_layout_tv; ``idx2crd`` has no stride argument (3-argument cases
  unsupported); ``filter`` is ``coalesce(L.filter())`` (its ``Layout.filter`` drops stride-0 modes
  only); ``product`` is ``size`` of the IntTuple; ``composition`` is ``compose``; ``tile_to_shape`` comes
  from ``tensor_layouts.layout_utils``.
* ``swizzle`` (the function table of ``Sw<B,M,S>`` over its domain): symlayout builds it with
  ``Swizzle.table()`` (as its conformance handler does); pycute and tensor-layouts have no table method and
  call the functor once per element.
* Printing: shapes/strides are printed from the library's (shape, stride) in CuTe's notation by
  ``fmt`` (rank-1 tuple ``(4)``); a composed result prints as ``Sw<B,M,S> o OFFSET o LAYOUT`` when its
  outer function is a swizzle and its inner one a plain layout; any other composed structure has no
  print form here and can only be right through its table.  Tables evaluate the library's result at
  0..size-1.
"""
from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "conformance" / "public"
FILES = ("int_tuple.jsonl", "layout.jsonl", "swizzle.jsonl")


# ---------------------------------------------------------------- neutral parser of the contract notation

class NL:
    """A neutral layout (shape, stride)."""
    __slots__ = ("shape", "stride")

    def __init__(self, shape, stride):
        self.shape, self.stride = shape, stride


class NSw:
    __slots__ = ("b", "m", "s")

    def __init__(self, b, m, s):
        self.b, self.m, self.s = b, m, s


class NComposed:
    __slots__ = ("sw", "offset", "inner")

    def __init__(self, sw, offset, inner):
        self.sw, self.offset, self.inner = sw, offset, inner


UNDERSCORE = "_"


def parse(text: str):
    """Parse CuTe's print notation into ints, tuples, NL, NSw, NComposed or ``_`` (no validation)."""
    s = text.replace(" ", "")
    pos = 0

    def num():
        nonlocal pos
        st = pos
        if s[pos] == "-":
            pos += 1
        while pos < len(s) and s[pos].isdigit():
            pos += 1
        return int(s[st:pos])

    def primary():
        nonlocal pos
        c = s[pos]
        if c == "(":
            pos += 1
            items = []
            if s[pos] == ")":
                pos += 1
                return ()
            while True:
                items.append(element())
                if s[pos] == ",":
                    pos += 1
                    continue
                pos += 1  # ')'
                return tuple(items)
        if c == "_":
            pos += 1
            if pos < len(s) and s[pos].isdigit():
                return num()
            return UNDERSCORE
        if s.startswith("Sw<", pos):
            pos += 3
            b = num(); pos += 1
            m = num(); pos += 1
            sh = num(); pos += 1
            return NSw(b, m, sh)
        return num()

    def element():
        nonlocal pos
        x = primary()
        if pos < len(s) and s[pos] == ":":
            pos += 1
            return NL(x, primary())
        return x

    first = element()
    if isinstance(first, NSw) and s.startswith("o", pos):
        pos += 1
        off = 0
        second = element()
        if s.startswith("o", pos):
            pos += 1
            off, second = second, element()
        return NComposed(first, off, second)
    return first


def is_composed_arg(x) -> bool:
    return isinstance(x, NComposed)


# ---------------------------------------------------------------- printing in the contract's form

def fmt(t) -> str:
    if isinstance(t, bool):
        return str(t).lower()
    if isinstance(t, int):
        return str(t)
    if isinstance(t, tuple):
        return "(" + ",".join(fmt(e) for e in t) + ")"
    raise TypeError(type(t).__name__)


# ---------------------------------------------------------------- libraries

class Lib:
    name = ""
    version = ""

    def build(self, x):
        raise NotImplementedError

    def fn(self, case):
        """The callable for this case (taking built args), or None when unsupported."""
        raise NotImplementedError

    def render(self, obj):
        """-> (print form or None, size or None, evaluator or None)."""
        raise NotImplementedError


def _int_args(case):
    """Indices of args that are JSON integers (kept as ints, never parsed)."""
    return [i for i, a in enumerate(case["args"]) if not isinstance(a, str)]


class Symlayout(Lib):
    name = "symlayout"

    def __init__(self):
        import symlayout  # noqa: F401
        from symlayout.algebra import int_tuple as it, layout as L
        from symlayout.algebra.notation import parse as sparse
        from symlayout.algebra.composed import compose_left
        from symlayout.conformance.runner import ops
        self.parse, self.ops = sparse, ops()
        self.clear_caches = L.clear_caches
        self.it, self.L = it, L
        from symlayout.algebra.layout import function_table
        self.table = function_table

        def swz_layout(C):
            if getattr(C, "is_composed", False):
                return compose_left(C.swizzle, C.inner) if C.offset == 0 else C
            return C

        def swizzle(sw):
            return {"table": sw.table()}

        def mltv(a, b):
            tiler, tv = L.make_layout_tv(a, b)
            return {"tiler": tiler, "layout_tv": tv}

        # op -> function of the already parsed args (mirrors symlayout/conformance/algebra.py)
        self.table_ops = {
            "product": it.product, "product_each": it.product_each,
            "prefix_product": lambda t, init=1: it.prefix_product(t, init),
            "shape_div": it.shape_div, "ceil_div": it.ceil_div,
            "idx2crd": lambda n, s, d=None: it.idx2crd(n, s, d),
            "crd2idx": lambda c, s, d=None: it.crd2idx(c, s, d),
            "flatten": it.flatten, "congruent": it.congruent, "weakly_congruent": it.weakly_congruent,
            "compatible": it.compatible,
            "layout": lambda x: x, "size": lambda x: x.size(), "cosize": lambda x: x.cosize(),
            "coalesce": lambda x, p=None: L.coalesce(x, p), "filter": L.filter,
            "composition": L.composition, "complement": lambda x, c=None: L.complement(x, c),
            "left_inverse": L.left_inverse, "right_inverse": L.right_inverse,
            "logical_divide": L.logical_divide, "zipped_divide": L.zipped_divide,
            "tiled_divide": L.tiled_divide, "flat_divide": L.flat_divide,
            "logical_product": L.logical_product, "zipped_product": L.zipped_product,
            "tiled_product": L.tiled_product, "blocked_product": L.blocked_product,
            "raked_product": L.raked_product,
            "tile_to_shape": lambda b, s, o=None: L.tile_to_shape(b, s, o),
            "upcast": L.upcast, "downcast": L.downcast,
            "max_common_vector": L.max_common_vector, "max_common_layout": L.max_common_layout,
            "make_layout_tv": mltv, "swizzle": swizzle, "swizzle_layout": swz_layout,
        }

    def build_args(self, case, neutral):
        return [self.parse(a) if isinstance(a, str) else a for a in case["args"]]

    def fn(self, case):
        return self.table_ops.get(case["op"])

    def from_strings(self, case):
        h = self.ops[case["op"]]
        args = case["args"]
        return lambda: h(args)

    def render(self, obj):
        if isinstance(obj, bool):
            return obj, None, None
        if isinstance(obj, (int, tuple)):
            return fmt(obj), None, None
        if hasattr(obj, "shape"):
            return str(obj), obj.size(), (lambda o=obj: self.table(o))
        if isinstance(obj, dict):
            return obj, None, None
        return None, None, None


class Pycute(Lib):
    name = "pycute"

    OPS = {"product", "prefix_product", "shape_div", "idx2crd", "crd2idx", "flatten", "layout", "size",
           "cosize", "coalesce", "filter", "composition", "complement", "left_inverse", "right_inverse",
           "logical_divide", "zipped_divide", "tiled_divide", "logical_product", "zipped_product",
           "tiled_product", "swizzle", "swizzle_layout"}

    def __init__(self):
        import pycute as pc
        self.pc = pc

        def complement(L, c=None):
            if c is None:
                c = pc.cosize(L)
            elif isinstance(c, tuple):
                c = pc.product(c)
            return pc.complement(L, c)

        def swizzle(sw):
            return {"table": [sw(i) for i in range(sw.size())]}

        self.table_ops = {
            "product": pc.product, "prefix_product": lambda t, init=1: pc.prefix_product(t, init),
            "shape_div": pc.shape_div, "idx2crd": lambda n, s, d=None: pc.idx2crd(n, s, d),
            "crd2idx": lambda c, s, d=None: pc.crd2idx(c, s, d), "flatten": pc.flatten,
            "layout": lambda x: x, "size": pc.size, "cosize": pc.cosize,
            "coalesce": lambda x, p=None: pc.coalesce(x, p), "filter": pc.filter,
            "composition": pc.composition, "complement": complement,
            "left_inverse": pc.left_inverse, "right_inverse": pc.right_inverse,
            "logical_divide": pc.logical_divide, "zipped_divide": pc.zipped_divide,
            "tiled_divide": pc.tiled_divide, "logical_product": pc.logical_product,
            "zipped_product": pc.zipped_product, "tiled_product": pc.tiled_product,
            "swizzle": swizzle, "swizzle_layout": lambda x: x,
        }

    def build(self, x):
        pc = self.pc
        if isinstance(x, NL):
            return pc.Layout(self.build(x.shape), self.build(x.stride))
        if isinstance(x, tuple):
            return tuple(self.build(e) for e in x)
        if isinstance(x, NSw):
            return pc.Swizzle(x.b, x.m, x.s)
        if isinstance(x, NComposed):
            return pc.ComposedLayout(self.build(x.sw), x.offset, self.build(x.inner))
        if x is UNDERSCORE:
            return None
        return x

    def build_args(self, case, neutral):
        return [self.build(n) for n in neutral]

    def fn(self, case):
        op = case["op"]
        if op not in self.OPS:
            return None
        if op != "swizzle_layout" and case.get("tags", {}).get("note") == "swizzled":
            return None
        return self.table_ops[op]

    def render(self, obj):
        pc = self.pc
        if isinstance(obj, bool):
            return obj, None, None
        if isinstance(obj, (int, tuple)):
            try:
                return fmt(obj), None, None
            except TypeError:
                return None, None, None
        if isinstance(obj, pc.Layout):
            try:
                p = f"{fmt(obj.shape)}:{fmt(obj.stride)}"
            except TypeError:
                p = None
            return p, pc.size(obj), (lambda o=obj: [o(i) for i in range(pc.size(o))])
        if isinstance(obj, pc.ComposedLayout):
            p = None
            if isinstance(obj.layoutB, pc.Swizzle) and isinstance(obj.layoutA, pc.Layout):
                sw = obj.layoutB
                p = f"Sw<{sw.bits},{sw.base},{sw.shift}> o {obj.offset} o {fmt(obj.layoutA.shape)}:{fmt(obj.layoutA.stride)}"
            return p, pc.size(obj.layoutA), (lambda o=obj: [o(i) for i in range(pc.size(o.layoutA))])
        if isinstance(obj, dict):
            return obj, None, None
        return None, None, None


class TensorLayouts(Lib):
    name = "tensor-layouts"

    OPS = {"product", "product_each", "prefix_product", "shape_div", "idx2crd", "crd2idx", "flatten",
           "congruent", "weakly_congruent", "compatible", "layout", "size", "cosize", "coalesce", "filter",
           "composition", "complement", "left_inverse", "right_inverse", "logical_divide", "zipped_divide",
           "tiled_divide", "flat_divide", "logical_product", "zipped_product", "tiled_product",
           "blocked_product", "raked_product", "tile_to_shape", "upcast", "downcast", "max_common_vector",
           "max_common_layout", "swizzle", "swizzle_layout"}

    def __init__(self):
        import tensor_layouts as tl
        from tensor_layouts.layout_utils import tile_to_shape
        self.tl = tl

        def swizzle(sw):
            return {"table": [sw(i) for i in range(1 << (sw.bits + sw.base + abs(sw.shift)))]}

        self.table_ops = {
            "product": tl.size, "product_each": tl.product_each,
            "prefix_product": lambda t, init=1: tl.prefix_product(t, init),
            "shape_div": tl.shape_div, "idx2crd": tl.idx2crd,
            "crd2idx": lambda c, s, d=None: tl.crd2idx(c, s, d), "flatten": tl.flatten,
            "congruent": tl.congruent, "weakly_congruent": tl.weakly_congruent, "compatible": tl.compatible,
            "layout": lambda x: x, "size": tl.size, "cosize": tl.cosize,
            "coalesce": lambda x, p=None: tl.coalesce(x, p), "filter": lambda x: tl.coalesce(x.filter()),
            "composition": tl.compose, "complement": lambda x, c=None: tl.complement(x, c),
            "left_inverse": tl.left_inverse, "right_inverse": tl.right_inverse,
            "logical_divide": tl.logical_divide, "zipped_divide": tl.zipped_divide,
            "tiled_divide": tl.tiled_divide, "flat_divide": tl.flat_divide,
            "logical_product": tl.logical_product, "zipped_product": tl.zipped_product,
            "tiled_product": tl.tiled_product, "blocked_product": tl.blocked_product,
            "raked_product": tl.raked_product,
            "tile_to_shape": lambda b, s, o=None: tile_to_shape(b, s, o),
            "upcast": tl.upcast, "downcast": tl.downcast,
            "max_common_vector": tl.max_common_vector, "max_common_layout": tl.max_common_layout,
            "swizzle": swizzle, "swizzle_layout": lambda x: x,
        }

    def build(self, x):
        tl = self.tl
        if isinstance(x, NL):
            return tl.Layout(self.build(x.shape), self.build(x.stride))
        if isinstance(x, tuple):
            return tuple(self.build(e) for e in x)
        if isinstance(x, NSw):
            return tl.Swizzle(x.b, x.m, x.s)
        if isinstance(x, NComposed):
            return tl.ComposedLayout(self.build(x.sw), self.build(x.inner), offset=x.offset)
        if x is UNDERSCORE:
            return None
        return x

    def build_args(self, case, neutral):
        return [self.build(n) for n in neutral]

    def fn(self, case):
        op = case["op"]
        if op not in self.OPS:
            return None
        if op == "idx2crd" and len(case["args"]) > 2:
            return None
        if op == "filter" and is_composed_arg(parse(case["args"][0])):
            return None
        return self.table_ops[op]

    def render(self, obj):
        tl = self.tl
        if isinstance(obj, bool):
            return obj, None, None
        if isinstance(obj, (int, tuple)):
            try:
                return fmt(obj), None, None
            except TypeError:
                return None, None, None
        if isinstance(obj, tl.Layout):
            try:
                p = f"{fmt(obj.shape)}:{fmt(obj.stride)}"
            except TypeError:
                p = None
            return p, tl.size(obj), (lambda o=obj: [o(i) for i in range(tl.size(o))])
        if isinstance(obj, tl.ComposedLayout):
            p = None
            if isinstance(obj.outer, tl.Swizzle) and isinstance(obj.inner, tl.Layout):
                sw, inner = obj.outer, obj.inner
                p = f"Sw<{sw.bits},{sw.base},{sw.shift}> o {obj.offset} o {fmt(inner.shape)}:{fmt(inner.stride)}"
            return p, tl.size(obj), (lambda o=obj: [o(i) for i in range(tl.size(o))])
        if isinstance(obj, dict):
            return obj, None, None
        return None, None, None


def judge(lib: Lib, obj, expect) -> tuple[bool, bool]:
    """(right by print form or table, right strictly by print form and table)."""
    printed, size, table_fn = lib.render(obj)
    if isinstance(expect, bool):
        ok = printed is expect or printed == expect
        return ok, ok
    if isinstance(expect, str):
        ok = printed == expect
        return ok, ok
    if isinstance(expect, dict) and set(expect) == {"table"}:
        ok = isinstance(printed, dict) and printed.get("table") == expect["table"]
        return ok, ok
    if isinstance(expect, dict) and "layout" in expect and set(expect) <= {"layout", "table"}:
        p_ok = printed == expect["layout"]
        t_ok = None
        if "table" in expect and table_fn is not None:
            try:
                t_ok = table_fn() == expect["table"]
            except Exception:
                t_ok = False
        return bool(p_ok or t_ok), bool(p_ok and (t_ok is None or t_ok))
    if isinstance(expect, dict) and isinstance(obj, dict):  # multi-result (make_layout_tv)
        loose = strict = True
        for k, v in expect.items():
            if k not in obj:
                return False, False
            a, b = judge(lib, obj[k], v)
            loose, strict = loose and a, strict and b
        return loose, strict
    return False, False


# ---------------------------------------------------------------- the benchmark

def load_cases():
    cases = []
    for f in FILES:
        with open(CORPUS / f) as fh:
            for line in fh:
                if line.strip():
                    cases.append(json.loads(line))
    return cases


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--install", action="store_true", help="pip-install tensor-layouts into the bench cache")
    ap.add_argument("--repeat", type=int, default=5, help="repeats per case (median per case)")
    ap.add_argument("--no-append", action="store_true", help="do not append to bench/RESULTS.md")
    ap.add_argument("--per-op", action="store_true",
                    help="also print symlayout vs pycute per op (cold, us/case, common cases)")
    ap.add_argument("--only", default="", help="comma-separated ops to run (a quick look; implies --no-append)")
    a = ap.parse_args(argv)
    if a.only:
        a.no_append = True

    common.use_cache_site()
    if a.install:
        try:
            import tensor_layouts  # noqa: F401
        except ImportError:
            common.pip_install_cache(["tensor-layouts"])

    info = common.machine_info()
    print(common.machine_line(info))
    cases = load_cases()
    if a.only:
        keep = set(a.only.split(","))
        cases = [c for c in cases if c["op"] in keep]
    neutral = [[parse(x) if isinstance(x, str) else x for x in c["args"]] for c in cases]
    print(f"{len(cases)} cases from {', '.join(FILES)}")

    libs: list[Lib] = [Symlayout()]
    missing = []
    for cls in (Pycute, TensorLayouts):
        try:
            libs.append(cls())
        except ImportError as e:
            missing.append(f"{cls.name}: not importable ({e}); run with --install")
            print("SKIPPED", missing[-1])
    names = [l.name for l in libs]
    fns = {l.name: [l.fn(c) for c in cases] for l in libs}

    # ---- correctness (one untimed pass) + support
    right, strict, errors = Counter(), Counter(), Counter()
    ok_cases = {n: set() for n in names}          # cases that ran without raising
    per_op = defaultdict(Counter)
    for i, c in enumerate(cases):
        for l in libs:
            f = fns[l.name][i]
            if f is None:
                continue
            per_op[c["op"]][l.name + ":supported"] += 1
            try:
                obj = f(*l.build_args(c, neutral[i]))
            except Exception:
                errors[l.name] += 1
                continue
            ok_cases[l.name].add(i)
            r, s = judge(l, obj, c["expect"])
            right[l.name] += r
            strict[l.name] += s
            per_op[c["op"]][l.name + ":right"] += r

    # ---- timing: op only, interleaved per case, median over repeats
    def time_mode(mode: str, cold: bool) -> dict[str, list[float]]:
        t = {n: [[] for _ in cases] for n in names}
        for _ in range(a.repeat):
            gc.collect()
            gc.disable()
            try:
                for i, c in enumerate(cases):
                    for l in libs:
                        if i not in ok_cases[l.name]:
                            continue
                        f = fns[l.name][i]
                        clear = getattr(l, "clear_caches", None)
                        if cold and clear is not None:
                            clear()
                        if mode == "op":
                            args = l.build_args(c, neutral[i])
                            t0 = time.perf_counter()
                            f(*args)
                            t[l.name][i].append(time.perf_counter() - t0)
                        else:
                            if isinstance(l, Symlayout):
                                call = l.from_strings(c)
                                t0 = time.perf_counter()
                                call()
                                t[l.name][i].append(time.perf_counter() - t0)
                            else:
                                args_s = c["args"]
                                t0 = time.perf_counter()
                                f(*[l.build(parse(x)) if isinstance(x, str) else x for x in args_s])
                                t[l.name][i].append(time.perf_counter() - t0)
            finally:
                gc.enable()
        return {n: [common.median(v) if v else None for v in t[n]] for n in names}

    for l in libs:
        if getattr(l, "clear_caches", None):
            l.clear_caches()
    t_op = time_mode("op", cold=True)
    t_str = time_mode("strings", cold=True)
    from symlayout.algebra import layout as _sl
    _sl.MEMO = True
    try:
        t_op_w = time_mode("op", cold=False)
        t_str_w = time_mode("strings", cold=False)
    finally:
        _sl.MEMO = False

    def rate(tt, name, subset):
        tot = sum(tt[name][i] for i in subset)
        return (len(subset) / tot) if tot > 0 else float("nan"), tot

    # ---- peak memory per library (a separate, untimed pass under tracemalloc)
    mem = {}
    for l in libs:
        d = {}
        with common.traced(d):
            for i, c in enumerate(cases):
                if i in ok_cases[l.name]:
                    fns[l.name][i](*l.build_args(c, neutral[i]))
        mem[l.name] = d["tracemalloc_peak_mib"]

    # ---- tables
    rows = []
    sl = "symlayout"
    for l in libs:
        n = l.name
        sup = sum(1 for f in fns[n] if f is not None)
        ok = sorted(ok_cases[n])
        r_op, tot_op = rate(t_op, n, ok)
        r_s, _ = rate(t_str, n, ok)
        r_op_w, _ = rate(t_op_w, n, ok)
        r_s_w, _ = rate(t_str_w, n, ok)
        rows.append([n, f"{sup}/{len(cases)}", errors[n], f"{right[n]}/{sup}",
                     f"{strict[n]}/{sup}", f"{r_op:,.0f}", f"{r_s:,.0f}", f"{r_op_w:,.0f}", f"{r_s_w:,.0f}",
                     f"{mem[n]:.2f}"])
    table1 = common.md_table(["library", "supported", "raised", "right (print or table)", "right (print and table)",
                              "cases/s op only (cold)", "cases/s from strings (cold)", "op only (warm)",
                              "from strings (warm)", "tracemalloc peak MiB"], rows)
    rows2 = []
    for l in libs[1:]:
        n = l.name
        both = sorted(ok_cases[sl] & ok_cases[n])
        rs_op, _ = rate(t_op, sl, both)
        ro_op, _ = rate(t_op, n, both)
        rs_s, _ = rate(t_str, sl, both)
        ro_s, _ = rate(t_str, n, both)
        rs_op_w, _ = rate(t_op_w, sl, both)
        ro_op_w, _ = rate(t_op_w, n, both)
        rs_s_w, _ = rate(t_str_w, sl, both)
        ro_s_w, _ = rate(t_str_w, n, both)
        goal_op, goal_s = (3.0, 1.5) if n == "pycute" else (1.0, 1.0)
        met = rs_op / ro_op >= goal_op and rs_s / ro_s >= goal_s
        rows2.append([f"symlayout vs {n}", len(both), f"{rs_op:,.0f} / {ro_op:,.0f}", f"{rs_op / ro_op:.2f}x",
                      f"{rs_s:,.0f} / {ro_s:,.0f}", f"{rs_s / ro_s:.2f}x",
                      f"{rs_op_w / ro_op_w:.2f}x", f"{rs_s_w / ro_s_w:.2f}x",
                      f">= {goal_op:g}x / >= {goal_s:g}x", "met" if met else "NOT met"])
    table2 = common.md_table(["comparison (common cases)", "cases", "op only cold: cases/s", "ratio",
                              "from strings cold: cases/s", "ratio", "op only warm: ratio",
                              "from strings warm: ratio", "goal (op / strings)", "goal (cold)"], rows2)
    ops_rows = []
    for op in sorted(per_op):
        c = per_op[op]
        ops_rows.append([op] + [f"{c[n + ':right']}/{c[n + ':supported']}" if c[n + ":supported"] else "—"
                                for n in names])
    table3 = common.md_table(["op"] + [f"{n} right/supported" for n in names], ops_rows)
    per_op_out = ""
    if a.per_op and "pycute" in names:
        both = ok_cases[sl] & ok_cases["pycute"]
        rows4 = []
        by_op = defaultdict(list)
        for i in sorted(both):
            by_op[cases[i]["op"]].append(i)
        for op in sorted(by_op):
            ii = by_op[op]
            for label, tt in (("op", t_op), ("strings", t_str)):
                ts = sum(tt[sl][i] for i in ii) / len(ii) * 1e6
                tp = sum(tt["pycute"][i] for i in ii) / len(ii) * 1e6
                if label == "op":
                    row = [op, len(ii), f"{ts:.2f}", f"{tp:.2f}", f"{tp / ts:.2f}x"]
                else:
                    row += [f"{ts:.2f}", f"{tp:.2f}", f"{tp / ts:.2f}x"]
            rows4.append(row)
        per_op_out = "\n\nPer op, symlayout vs pycute (cold, mean of per-case medians, us/case):\n\n" + common.md_table(
            ["op", "cases", "op only: symlayout", "pycute", "ratio", "from strings: symlayout", "pycute", "ratio"],
            rows4) + "\n"
    rss = common.peak_rss_mib()
    notes = (f"{len(cases)} public algebra cases; {a.repeat} repeats, per-case median, interleaved; cold = "
             f"symlayout's caches emptied before every timed call, warm = kept (repeats hit them). "
             f"Process peak RSS (ru_maxrss): {rss:.0f} MiB." + (" " + "; ".join(missing) if missing else ""))
    out = f"{notes}\n\nPer op:\n\n{table3}\n\n{table1}\n\n{table2}\n{per_op_out}"
    if not a.no_append:
        common.append_results("bench/algebra.py — layout algebra: symlayout vs pycute vs tensor-layouts",
                               out, info)
    print()
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
