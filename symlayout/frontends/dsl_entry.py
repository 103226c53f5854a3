"""A CuTe DSL kernel read as written: its host code traced with fake tensors, its objects named by its own variables.

``symlayout dsl KERNEL.py --entry TensorOpGemm.__call__ --shape M=4096,N=4096,K=4096 --dtype f16``
constructs the class (``--init k=v``), compiles the entry with ``cute.compile`` on fake static
tensors (``cute.runtime.make_fake_compact_tensor``: no GPU, no torch, no data) and stops at the
kernel launch: ``KernelLauncher.launch`` is intercepted, the kernel body is traced (no code is
generated for the device), and then the trace is abandoned.  Meanwhile the DSL calls that build a
kernel's tiling are watched:

* the kernel's launch arguments (the ``@cute.kernel``'s own parameter names), the locals of every
  frame of the kernel's file, and the instance's attributes give each object its name;
* ``make_tiled_copy_A/B/C`` tell which operand a copy feeds, ``make_tiled_tma_atom`` records a TMA
  atom's op, gmem tensor, smem layout and box, ``autovec_copy`` an epilogue's vectorised store
  (recorded, not emitted); for SM100, ``make_tiled_tma_atom_A/B`` (with the TiledMma and the cluster
  shape), ``TmemAllocator.allocate`` and ``tcgen05.make_tmem_copy``.

One configuration per TiledMma (:class:`~symlayout.frontends.cute_dsl.DslConfig`): ``[mma]``, per
operand the smem->register copy (``[copy.X]``), the global->shared copy (``[g2s.X]``), the C store
(``[s2g.C]``), for an SM90 warpgroup MMA ``[smem.X]`` and ``[tma.X]``, for an SM100 tcgen05 MMA
``[mma] cluster``, ``[smem.X]``, ``[tma.X]``, ``[tmem]`` and ``[tmem_copy.C]``; ``[stages]`` from the
PIPE mode.  Which operand an object belongs to: the operand it was built for (``make_tiled_copy_A``,
the fake tensor a TMA atom reads), else the letter in its name (``sA_layout``, ``a_smem_layout_staged``,
``tiled_copy_B``).  An object the prover does not model is ``not supported: <object> at FILE:LINE``.

Kernels that import torch at module level load without it: :mod:`~symlayout.frontends.stubs`.
"""
from __future__ import annotations

import dataclasses
import importlib.util
import inspect
import os
import re
import sys

from ..algebra.notation import parse_layout
from .cute_dsl import DslConfig, DslError, _flat, import_dsl, is_tcgen05, is_warpgroup
from .document import strip_static

__all__ = ["EntrySpec", "trace_entry", "parse_assignments", "ARCHS", "guess_arch", "entry_arch", "DTYPE_ALIASES"]

#: --arch -> CUTE_DSL_ARCH
ARCHS = {"sm_80": "sm_80", "sm_86": "sm_86", "sm_89": "sm_89", "sm_90a": "sm_90a", "sm_100a": "sm_100a"}

#: --dtype short names -> DSL numeric type names
DTYPE_ALIASES = {"f16": "Float16", "fp16": "Float16", "half": "Float16", "bf16": "BFloat16", "f32": "Float32",
                 "fp32": "Float32", "tf32": "TFloat32", "f64": "Float64", "e4m3": "Float8E4M3FN",
                 "f8e4m3": "Float8E4M3FN", "fp8": "Float8E4M3FN", "e5m2": "Float8E5M2", "f8e5m2": "Float8E5M2",
                 "i8": "Int8", "s8": "Int8", "u8": "Uint8", "i32": "Int32"}

#: the modes of each operand's global tensor (CuTe DSL examples: (M,K,L), (N,K,L), (M,N,L))
ROLE_MODES = {"A": ("M", "K", "L"), "B": ("N", "K", "L"), "C": ("M", "N", "L")}
#: the contiguous mode of each operand by default (A, B K-major; C N-major, "row-major")
DEFAULT_MAJOR = {"A": "K", "B": "K", "C": "N"}


class _Stop(Exception):
    """Raised at the kernel launch, carrying what was read: the trace is not finished."""

    def __init__(self, configs):
        super().__init__("symlayout: stopped at the kernel launch")
        self.configs = configs


@dataclasses.dataclass
class EntrySpec:
    """What ``symlayout dsl --entry`` was told: the entry, the problem and the fake tensors."""
    entry: str
    shape: dict = dataclasses.field(default_factory=dict)          # M, N, K, L -> int
    dtypes: dict = dataclasses.field(default_factory=dict)         # A, B, C (or "*") -> DSL type name
    majors: dict = dataclasses.field(default_factory=dict)         # A, B, C -> "K" / "M" / "N"
    tensors: dict = dataclasses.field(default_factory=dict)        # parameter -> its modes ("B,S,H,D"), row-major
    init: dict = dataclasses.field(default_factory=dict)           # constructor keyword arguments (text)
    args: dict = dataclasses.field(default_factory=dict)           # entry keyword arguments (text)
    align: int = 16                                                # assumed_align of the fake tensors (bytes)
    dynamic_strides: bool = False      # fake tensors with dynamic strides (to read the kernel's cute.assume)


def guess_arch(text: str) -> str:
    """The architecture a kernel's source needs: ``sm_100a`` for tcgen05, ``sm_90a`` for warpgroup
    MMAs or TMA, else ``sm_80``.

    >>> guess_arch("from cutlass.cute.nvgpu import warpgroup"), guess_arch("warp.MmaF16BF16Op")
    ('sm_90a', 'sm_80')
    """
    if "tcgen05" in text:
        return "sm_100a"
    if "warpgroup" in text or "hopper_helpers" in text or "make_tiled_tma_atom" in text:
        return "sm_90a"
    return "sm_80"


def entry_arch(entry: str | None) -> str | None:
    """The architecture an entry's name says (``GemmDefaultSm90.__call__`` -> ``sm_90a``), or ``None``.

    >>> entry_arch("GemmDefaultSm90.__call__"), entry_arch("FlashAttentionForwardSm80.__call__"), entry_arch("f")
    ('sm_90a', 'sm_80', None)
    """
    m = re.search(r"[Ss]m_?(\d{2,3})", (entry or "").partition(".")[0])
    if m is None:
        return None
    return {"80": "sm_80", "86": "sm_86", "89": "sm_89", "90": "sm_90a", "100": "sm_100a"}.get(m.group(1))


def set_arch(arch: str | None) -> str | None:
    """Select the DSL's target (``CUTE_DSL_ARCH``), also when the DSL is already imported; returns the
    previous value of the variable (``set_arch(previous)`` restores it; ``None`` unsets it)."""
    before = os.environ.get("CUTE_DSL_ARCH")
    if arch is None:
        os.environ.pop("CUTE_DSL_ARCH", None)
    else:
        os.environ["CUTE_DSL_ARCH"] = arch
    if "cutlass.cutlass_dsl" in sys.modules:
        try:
            from cutlass.cutlass_dsl import CuTeDSL
            envar = CuTeDSL._get_dsl().envar
            if arch is None:
                del envar.arch
            else:
                envar.arch = arch
        except Exception:  # noqa: BLE001 - an older DSL without the setter: the variable is read at import
            pass
    return before


def parse_assignments(text: str | None, what: str) -> dict:
    """``"M=4096,N=128"`` -> ``{"M": "4096", "N": "128"}`` (commas inside brackets kept).

    >>> parse_assignments("atom_layout_mnk=(2,2,1),swizzle=False", "--init")
    {'atom_layout_mnk': '(2,2,1)', 'swizzle': 'False'}
    """
    out, depth, cur = {}, 0, ""
    for ch in (text or "") + ",":
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            if cur.strip():
                k, sep, v = cur.partition("=")
                if not sep or not k.strip():
                    raise DslError(f"{what} {cur.strip()!r}: expected NAME=VALUE")
                out[k.strip()] = v.strip()
            cur = ""
        else:
            cur += ch
    return out


class _Namespace(dict):
    """The kernel module's names, and any other module by its name (``quack.tile_scheduler.X(132)``)."""

    def __missing__(self, name: str):
        try:
            return importlib.import_module(name)
        except ImportError:
            raise KeyError(name) from None


def _value(text: str, mod, cutlass):
    """A ``--init`` / ``--arg`` value: a Python literal, a DSL type (``Float16``, ``f16``), a name of the
    kernel's module, or an expression evaluated in the module's namespace (``EpilogueArguments()``)."""
    import ast
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        pass
    name = DTYPE_ALIASES.get(text.lower(), text)
    for root in (cutlass, mod):
        obj = root
        for part in name.removeprefix("cutlass.").split("."):
            obj = getattr(obj, part, None)
        if obj is not None:
            return obj
    try:   # an expression of the kernel's module, e.g. TileSchedulerOptions(132) (the user's own command line)
        return eval(text, {"cutlass": cutlass}, _Namespace(vars(mod)))   # noqa: S307
    except Exception as e:  # noqa: BLE001 - reported as the value's error
        raise DslError(f"value {text!r}: not a Python literal, a DSL type or an expression of the kernel's module "
                       f"({type(e).__name__}: {e})") from None


# ---------------------------------------------------------------- what the trace sees


@dataclasses.dataclass
class _Seen:
    """Objects the watched DSL calls returned, with the operand they were built for and where."""
    path: str
    operand_of: dict = dataclasses.field(default_factory=dict)      # id(obj) -> "A"/"B"/"C"
    mma_of: dict = dataclasses.field(default_factory=dict)          # id(obj) -> the TiledMma it was built for
    where: dict = dataclasses.field(default_factory=dict)           # id(obj) -> line
    tma: list = dataclasses.field(default_factory=list)     # (op, gmem tensor, smem, box, multicast, atom, line)
    tma_mma: list = dataclasses.field(default_factory=list)  # SM100: (X, op, gmem, mma tiler, cluster vmnk, atom, line)
    tmem_alloc: list = dataclasses.field(default_factory=list)  # (TmemAllocator.allocate's columns, line)
    tmem_copy: list = dataclasses.field(default_factory=list)   # (copy atom, TMEM tensor, TiledCopy, line)
    part_of: dict = dataclasses.field(default_factory=dict)     # id(partition_S/D result) -> (TiledCopy, tensor)
    copies: list = dataclasses.field(default_factory=list)      # cute.copy(atom, src, dst): (src, dst, line)
    copy_atom: dict = dataclasses.field(default_factory=dict)   # index in copies -> the atom cute.copy was given
    autovec: list = dataclasses.field(default_factory=list)         # (source element type, line)
    autovec_parts: list = dataclasses.field(default_factory=list)   # autovec_copy of partitions: (src, dst, line)
    slice_of: dict = dataclasses.field(default_factory=dict)        # id(partition[None, i]) -> the partition
    frames: list = dataclasses.field(default_factory=list)
    keep: list = dataclasses.field(default_factory=list)            # the objects, alive while ids are used
    tensors: dict = dataclasses.field(default_factory=dict)         # id(fake tensor) -> role
    trait_tiled: dict = dataclasses.field(default_factory=dict)     # id(TiledCopy trait) -> the TiledCopy
    parts: list = dataclasses.field(default_factory=list)           # (TiledCopy, "S"/"D", tensor partitioned)
    derived: dict = dataclasses.field(default_factory=dict)         # id(composition(tensor, L)) -> tensor
    mma_parts: list = dataclasses.field(default_factory=list)       # (TiledMma key, "A"/"B", smem tensor)
    body_error: str | None = None

    def smem_tensors(self, tiled, side: str) -> list:
        """The shared-memory tensors ``tiled`` partitions as source (``"S"``) or destination (``"D"``)."""
        return [t for c, s, t in self.parts if c is tiled and s == side and "smem" in _memspace(t)]

    def line(self) -> int | None:
        """The line of the kernel's file the current DSL call came from (and remember its frame)."""
        f, line = sys._getframe(2), None
        while f is not None:
            if os.path.abspath(f.f_code.co_filename) == self.path:
                if line is None:
                    line = f.f_lineno
                if all(f is not g for g in self.frames):
                    self.frames.append(f)
            f = f.f_back
        return line


def _memspace(t) -> str:
    """A tensor's memory space (``"smem"``, ``"gmem"``, ...), ``""`` for a coordinate tensor or a layout
    (the DSL raises ValueError, not AttributeError, for a tensor without one)."""
    try:
        return str(t.memspace).lower()
    except (AttributeError, ValueError):
        return ""


def _patch(obj, name, make):
    """Replace ``obj.name`` with ``make(original)``; returns the undo."""
    orig = getattr(obj, name)
    setattr(obj, name, make(orig))
    return lambda: setattr(obj, name, orig)


def _recorded(seen: _Seen, record):
    """A maker for :func:`_patch` of a DSL call whose result is recorded: the original call, then
    ``record(result, *args, **kwargs)``; the result is kept (so that its ``id`` stays its own)."""
    def make(orig):
        def wrapper(*a, **k):
            r = orig(*a, **k)
            record(r, *a, **k)
            seen.keep.append(r)
            return r
        return wrapper
    return make


def _watch(seen: _Seen, cute, cpasync, launcher, build, nvgpu=None, tmem_allocator=None):
    """Install the interceptors; returns the undo functions."""
    from cutlass.cute.atom import ThrCopy, ThrMma, TiledCopy
    try:
        from cutlass.cute.tensor import _Tensor      # the DSL's tensor class (slices of partitions)
    except ImportError:                              # another DSL layout: slices are not followed
        _Tensor = None
    undo = []

    def tiled_copy_for(x):
        def record(r, *a, **k):
            seen.operand_of[id(r)], seen.where[id(r)] = x, seen.line()
            mma = a[1] if len(a) > 1 else k.get("tiled_mma")
            if mma is not None:
                seen.mma_of[id(r)] = _mma_key(mma)
        return _recorded(seen, record)
    for x in "ABC":
        undo.append(_patch(cute, f"make_tiled_copy_{x}", tiled_copy_for(x)))

    def tiled_mma(r, *a, **k):
        seen.where[id(r)] = seen.line()
    undo.append(_patch(cute, "make_tiled_mma", _recorded(seen, tiled_mma)))

    def tma(r, op, gmem_tensor, smem_layout_, cta_tiler, num_multicast=1, *a, **k):     # (the DSL's names)
        seen.tma.append((op, gmem_tensor, smem_layout_, cta_tiler, num_multicast, r[0], seen.line()))
    undo.append(_patch(cpasync, "make_tiled_tma_atom", _recorded(seen, tma)))

    def tma_mma(x):      # SM100: make_tiled_tma_atom_A/B(op, gmem, smem layout, mma tiler, tiled mma, cluster vmnk)
        def record(r, op, gmem_tensor, smem_layout, mma_tiler_mnk, tiled_mma, cluster_shape_vmnk=None, *a, **k):
            seen.tma_mma.append((x, op, gmem_tensor, mma_tiler_mnk, cluster_shape_vmnk, r[0], seen.line(),
                                 _mma_key(tiled_mma), smem_layout))
        return _recorded(seen, record)
    for x in "AB":
        undo.append(_patch(nvgpu, f"make_tiled_tma_atom_{x}", tma_mma(x)))

    def tmem_alloc(orig):
        def wrapper(self, num_columns, *a, **k):
            seen.tmem_alloc.append((num_columns, seen.line()))
            return orig(self, num_columns, *a, **k)
        return wrapper
    if tmem_allocator is not None:
        undo.append(_patch(tmem_allocator, "allocate", tmem_alloc))

    def tmem_copy(r, atom, tmem_tensor, *a, **k):
        seen.tmem_copy.append((atom, tmem_tensor, r, seen.line()))
    if nvgpu is not None:
        undo.append(_patch(nvgpu.tcgen05, "make_tmem_copy", _recorded(seen, tmem_copy)))

    def get_slice(orig):
        def wrapper(self, *a, **k):
            seen.trait_tiled[id(self._trait)] = self
            seen.keep.append(self)
            return orig(self, *a, **k)
        return wrapper
    undo.append(_patch(TiledCopy, "get_slice", get_slice))

    def partition(side):
        def make(orig):
            def wrapper(self, tensor, *a, **k):
                tiled = seen.trait_tiled.get(id(self._trait))
                r = orig(self, tensor, *a, **k)
                if tiled is not None:
                    seen.parts.append((tiled, side, tensor))
                    seen.part_of[id(r)] = (tiled, tensor)
                    seen.keep.extend((tensor, r))
                    seen.line()
                return r
            return wrapper
        return make
    def mma_partition(x):
        def make(orig):
            def wrapper(self, tensor, *a, **k):
                if "smem" in _memspace(tensor):
                    seen.mma_parts.append((_mma_key(self), x, tensor))
                    seen.keep.append(tensor)
                    seen.line()
                return orig(self, tensor, *a, **k)
            return wrapper
        return make
    undo.append(_patch(ThrMma, "partition_A", mma_partition("A")))
    undo.append(_patch(ThrMma, "partition_B", mma_partition("B")))
    undo.append(_patch(ThrCopy, "partition_S", partition("S")))
    undo.append(_patch(ThrCopy, "partition_D", partition("D")))

    def composition(orig):
        def wrapper(a, b, *rest, **k):
            r = orig(a, b, *rest, **k)
            if _memspace(a):
                seen.derived[id(r)] = a
                seen.keep.extend((a, r))
            return r
        return wrapper
    undo.append(_patch(cute, "composition", composition))

    def copy(orig):
        def wrapper(atom, src, dst, *a, **k):
            seen.copies.append((src, dst, seen.line()))
            seen.copy_atom[len(seen.copies) - 1] = atom
            seen.keep.extend((src, dst, atom))
            return orig(atom, src, dst, *a, **k)
        return wrapper
    undo.append(_patch(cute, "copy", copy))

    def autovec(orig):
        def wrapper(src, dst, *a, **k):   # recorded, not emitted: no code is generated for the device
            seen.autovec.append((src.element_type, seen.line()))
            src, dst = seen.slice_of.get(id(src), src), seen.slice_of.get(id(dst), dst)
            if id(src) in seen.part_of or id(dst) in seen.part_of:
                seen.autovec_parts.append((src, dst, seen.autovec[-1][1]))
        return wrapper
    undo.append(_patch(cute, "autovec_copy", autovec))

    def getitem(orig):       # a slice of a TiledCopy's partition (tXgX[None, i]) remembers the partition
        def wrapper(self, *a, **k):
            r = orig(self, *a, **k)
            if id(self) in seen.part_of or id(self) in seen.slice_of:
                seen.slice_of[id(r)] = seen.slice_of.get(id(self), self)
                seen.keep.append(r)
            return r
        return wrapper
    if _Tensor is not None:
        undo.append(_patch(_Tensor, "__getitem__", getitem))

    def launch(orig):
        def wrapper(self, *a, **k):
            seen.line()
            args = _bound_args(self)
            try:
                orig(self, *a, **k)     # traces the kernel body: the objects it builds are seen
            except _Stop:
                raise
            except Exception as e:  # noqa: BLE001 - the body is read as far as it traces
                text = re.sub(r"\x1b\[[0-9;]*m", "", str(e)).strip()
                seen.body_error = f"{type(e).__name__}: {text.splitlines()[0][:200] if text else ''}"
            raise _Stop(build(args))
        return wrapper
    undo.append(_patch(launcher, "launch", launch))
    return undo


def _bound_args(launcher) -> dict:
    """The kernel's launch arguments by the ``@cute.kernel``'s own parameter names."""
    try:
        sig = inspect.signature(launcher.funcBody)
        b = sig.bind(*launcher.func_args, **launcher.func_kwargs)
        return {k: v for k, v in b.arguments.items() if k != "self"}
    except Exception:  # noqa: BLE001 - no signature: positional names
        return {f"arg{i}": v for i, v in enumerate(launcher.func_args)}


# ---------------------------------------------------------------- names and operands


_TOKEN = re.compile(r"[A-Z]?[a-z0-9]*|[A-Z]+(?![a-z])")


def operand_letter(name: str) -> str | None:
    """The operand a variable's name says: ``sA_layout`` -> A, ``a_smem_layout_staged`` -> A,
    ``tiled_copy_s2r_B`` -> B, ``sC`` -> C, ``tiled_mma`` -> None.

    >>> [operand_letter(n) for n in ("sA_layout", "a_smem_layout_staged", "tiled_copy_B", "sD", "tiled_mma")]
    ['A', 'A', 'B', 'C', None]
    """
    tokens = set()
    for part in name.split("_"):
        for t in _TOKEN.findall(part):
            if t:
                tokens.add(t.lower())
        if part[:1].islower() and part[1:2].isupper() and len(part) == 2:   # sA, mB, tC
            tokens.add(part[1].lower())
    found = {{"d": "c"}.get(t, t).upper() for t in tokens if t in ("a", "b", "c", "d")}
    return found.pop() if len(found) == 1 else None


def _names(seen: _Seen, args: dict, instance) -> dict:
    """``id(obj) -> name``: the kernel's parameter names first, then the locals of its file's frames,
    then the instance's attributes (``self.x``)."""
    out = {}
    for k, v in args.items():
        out.setdefault(id(v), k)
    for f in reversed(seen.frames):
        for k, v in list(f.f_locals.items()):
            if not k.startswith("_") and k != "self":
                out.setdefault(id(v), k)
    for k, v in (vars(instance).items() if instance is not None and hasattr(instance, "__dict__") else ()):
        out.setdefault(id(v), f"self.{k}")
    return out


def _kind(obj) -> str:
    n = type(obj).__name__
    if n == "TiledMma":
        return "mma"
    if n == "TiledCopy":
        return "tiled_copy"
    if n in ("_ComposedLayout", "ComposedLayout") or (n in ("_Layout", "Layout") and hasattr(obj, "shape")):
        return "layout"
    return ""


def _all_objects(seen: _Seen, args: dict, instance) -> list:
    """Every TiledMma, TiledCopy and layout the kernel's code held, once each."""
    pool, ids = [], set()
    sources = [list(args.values()), seen.keep]
    sources += [list(f.f_locals.values()) for f in seen.frames]
    sources.append(list(vars(instance).values()) if instance is not None and hasattr(instance, "__dict__") else [])
    for src in sources:
        for v in src:
            if id(v) not in ids and _kind(v):
                ids.add(id(v))
                pool.append(v)
    return pool


# ---------------------------------------------------------------- the configuration


def _build(seen: _Seen, spec: EntrySpec, instance, fakes: dict, args: dict) -> list:
    """``[(key, DslConfig)]`` of everything the trace saw (inside the trace: DSL objects print only there)."""
    names = _names(seen, args, instance)
    pool = _all_objects(seen, args, instance)
    name = lambda o: names.get(id(o), type(o).__name__)   # noqa: E731
    base = os.path.basename(seen.path)
    at = lambda o: f"{base}:{seen.where[id(o)]}" if seen.where.get(id(o)) else seen.path  # noqa: E731
    mmas = _distinct([o for o in pool if _kind(o) == "mma"])
    if not mmas and (seen.copies or seen.autovec_parts):
        cfg = _copy_only(seen, names, spec.align)
        if cfg is not None:
            if seen.body_error:
                cfg.doc.notes.append(f"the kernel body was traced up to an error: {seen.body_error}")
            cfg.unchecked.extend(_unchecked(None, seen, pool, names, {n.copy for n in cfg.names.values()}))
            return [("", cfg)]
    if not mmas:
        raise DslError(f"{seen.path}: the entry launched a kernel without a TiledMma symlayout could see"
                       + (f" (the kernel body stopped: {seen.body_error})" if seen.body_error else ""))
    out = []
    for tm in mmas:
        try:
            cfg = DslConfig(tm, label=name(tm))
        except DslError as e:
            raise DslError(f"{e} ({name(tm)} at {at(tm)})") from None
        layouts = {x: [o for o in pool if _kind(o) == "layout" and operand_letter(name(o)) == x] for x in "ABC"}
        if is_warpgroup(tm.op):
            _hopper(cfg, tm, seen, layouts, names, spec, fakes, pool)
            cfgs = [cfg]
        elif is_tcgen05(tm.op):
            _blackwell(cfg, tm, seen, layouts, names, spec, pool)
            if len(mmas) == 1:
                _tensor_memory(cfg, seen, names, instance)
            else:
                cfg.unchecked.extend(_tmem_unread(seen, names, len(mmas)))
            cfgs = [cfg]
        else:
            groups = _gemms(seen, tm)
            cfgs = [cfg] + [DslConfig(tm, label=name(tm)) for _ in groups[1:]]
            for c, group in zip(cfgs, groups or [{}]):
                _ampere(c, seen, pool, layouts, names, group, single=len(groups) <= 1)
        read = {n.copy for c in cfgs for n in c.names.values()} | {name(tm)}
        for i, c in enumerate(cfgs):
            if seen.body_error:
                c.doc.notes.append(f"the kernel body was traced up to an error: {seen.body_error}")
            c.unchecked.extend(_unchecked(tm, seen, pool, names, read))
            for x in ("A", "B"):
                if x not in c.doc.copy and x not in c.doc.smem and any(x in o.doc.copy for o in cfgs):
                    c.unchecked.insert(0, f"operand {x} of this GEMM is not copied from shared memory (e.g. P "
                                          "from the accumulators in registers): its producer is not checked")
            parts = ([name(tm)] if len(mmas) > 1 else []) + ([f"gemm{i + 1}"] if len(cfgs) > 1 else [])
            key = "_".join(parts)
            out.append((key, c))
    return out


def _copy_only(seen: _Seen, names: dict, fake_align: int = 16):
    """A kernel without a TiledMma: ``[g2r.X]`` for every ``cute.copy`` from a partitioned gmem tile to
    registers, ``[r2g.X]`` for every copy back (``X``: the gmem tile's variable name), ``[g2s.X]`` for one into a
    partitioned smem tensor (:func:`_staged`); ``cute.autovec_copy`` of slices of a partition counts as the
    partition's copy with ``AutoVectorizingCopy``; ``None`` if none.  ``gmem_align``: the tile's pointer
    alignment as the DSL knows it (:func:`_tile_alignment`)."""
    cfg, skipped = DslConfig(None, label="copies"), []
    copies = [(s, d, ln, None) for s, d, ln in seen.copies]
    copies += [(s, d, ln, "AutoVectorizingCopy") for s, d, ln in seen.autovec_parts]
    for i, (src, dst, line, atom) in enumerate(copies):
        if atom is None and _staged(cfg, seen, names, src, dst, seen.copy_atom.get(i), line, fake_align):
            continue
        read = False
        for kind, part, other in (("g2r", src, dst), ("r2g", dst, src)):
            tiled, tile = seen.part_of.get(id(part), (None, None))
            if tiled is None or "gmem" not in _memspace(tile) or "rmem" not in _memspace(other):
                continue
            read = True
            x = re.sub(r"\W", "_", names.get(id(tile)) or names.get(id(part))     # the tile, else its partition
                       or f"tensor{len(cfg.doc.g2r) + len(cfg.doc.r2g)}")
            if x in getattr(cfg.doc, kind):
                continue
            if _broadcast(tile.layout):
                skipped.append(f"cute.copy at line {line}: {x} {tile.layout} is broadcast (a stride-0 mode: each "
                               f"element is read by several threads on purpose): [{kind}.{x}] not written")
                continue
            align, said = _tile_alignment(tile, fake_align)
            try:
                cfg.reg_copy(kind, x, tiled, tile.layout, label=names.get(id(tiled), "a TiledCopy"), gmem_label=x,
                             gmem_align=align, align_from=said, atom=atom, at=line)
            except DslError as e:
                raise DslError(f"{e} (cute.copy at {os.path.basename(seen.path)}:{line})") from None
        if not read and any(id(t) in seen.part_of for t in (src, dst)):
            skipped.append(f"cute.copy at line {line}: {_memspace(src) or '?'} -> {_memspace(dst) or '?'} "
                           f"({names.get(id(src), 'a tensor')} -> {names.get(id(dst), 'a tensor')}): not read "
                           "(only gmem <-> register copies are, in a kernel without a TiledMma)")
    cfg.unchecked.extend(dict.fromkeys(skipped))
    return cfg if cfg.doc.g2r or cfg.doc.r2g or cfg.doc.g2s else None


def _staged(cfg: DslConfig, seen: _Seen, names: dict, src, dst, atom, line, fake_align: int) -> bool:
    """``[g2s.X]`` for ``cute.copy(atom, src, dst)`` from a TiledCopy's partition of a gmem tile to its partition
    of an smem tensor (QuACK's ``cp.async`` staging of X); whether it was one."""
    (tiled, tile), (tiled_d, stile) = seen.part_of.get(id(src), (None, None)), seen.part_of.get(id(dst), (None, None))
    if tiled is None or tiled_d is not tiled or "gmem" not in _memspace(tile) or "smem" not in _memspace(stile):
        return False
    x = re.sub(r"\W", "_", names.get(id(tile)) or names.get(id(src)) or f"tensor{len(cfg.doc.g2s)}")
    if x in cfg.doc.g2s:
        return True
    align, _ = _tile_alignment(tile, fake_align)
    salign, _ = _tile_alignment(stile, 16)
    one = atom if atom is not None and type(atom).__name__ != "TiledCopy" else None
    try:
        cfg.stage_copy(x, tiled, tile.layout, stile, atom=one, label=names.get(id(tiled), "a TiledCopy"),
                       gmem_label=x, smem_label=names.get(id(stile), "the smem tile"), gmem_align=align,
                       smem_align=salign, swizzle=_ptr_swizzle(stile), at=line)
    except DslError as e:
        raise DslError(f"{e} (cute.copy at {os.path.basename(seen.path)}:{line})") from None
    return True


def _tile_alignment(tile, fake_align: int) -> tuple[int, str]:
    """``(bytes, where from)``: the alignment of a gmem tile's pointer (``ptr<f16, gmem, align<32>>``): what
    the kernel states (``cute.make_ptr(..., assumed_align=32)``) where it differs from the fake tensors'
    ``assumed_align``, else theirs."""
    try:
        align = int(tile.iterator.alignment)
    except (AttributeError, TypeError, ValueError):
        return fake_align, "the fake tensors' assumed_align"
    if align == fake_align:
        return align, "the fake tensors' assumed_align (the kernel states no other)"
    return align, f"stated by the kernel: the tile's pointer is {tile.iterator} (as the kernel builds it)"


def _broadcast(layout) -> bool:
    """Whether a static gmem tile has a stride-0 mode of extent > 1 (a broadcast operand)."""
    try:
        lay = parse_layout(strip_static(str(layout)))
    except Exception:  # noqa: BLE001 - a form the parser does not read: not a broadcast we can tell
        return False
    return any(d == 0 and n > 1 for d, n in zip(_flat(lay.stride), _flat(lay.shape)))


def _mma_key(tm) -> tuple:
    """What tells TiledMmas apart (a launch argument reappears as the kernel's parameter, another object)."""
    return str(tm.op), str(tm.thr_layout_vmnk), str(tm.permutation_mnk)


def _gemms(seen: _Seen, tm) -> list:
    """The GEMMs of the TiledMma ``tm``: the smem->register copies built for it (``make_tiled_copy_A/B/C``)
    in the order the kernel built them, a new GEMM where an operand comes again (flash-attention: Q, K | V, O)."""
    groups, cur = [], {}
    key = _mma_key(tm)
    for obj in seen.keep:
        x = seen.operand_of.get(id(obj))
        if x is None or seen.mma_of.get(id(obj), key) != key or any(obj is c for g in groups + [cur]
                                                                     for c in g.values()):
            continue
        if x in cur:
            groups.append(cur)
            cur = {}
        cur[x] = obj
    return groups + ([cur] if cur else [])


#: what a traced kernel does that no configuration table states
ALWAYS_UNCHECKED = ("the order of copies and MMAs: pipelines, barriers and fences are not checked",
                    "partial tiles: the tables are proved for whole tiles (tail predication is not checked)")


def _unchecked(tm, seen: _Seen, pool: list, names: dict, read: set) -> list:
    """What the trace saw that no configuration of ``tm`` states (``read``: the names their tables
    read): copies and TMA atoms, a register-sourced A, and what is never checked (:data:`ALWAYS_UNCHECKED`)."""
    out, listed = [], set()
    where = lambda o: f" at line {seen.where[id(o)]}" if seen.where.get(id(o)) else ""   # noqa: E731
    for o in pool:
        n = names.get(id(o))
        if _kind(o) == "tiled_copy" and n and n not in read and n not in listed:
            listed.add(n)
            out.append(f"{n} = TiledCopy of {type(o.op).__name__}{where(o)}: no table reads it")
    for top, gmem, _, box, _, atom, line in seen.tma:
        n = names.get(id(atom), "a TMA atom")
        if n not in read:
            out.append(f"{n} = make_tiled_tma_atom({type(top).__name__}) at line {line}: not modelled "
                       f"(e.g. an epilogue TMA store)")
    if tm is not None and is_warpgroup(tm.op) and "rmem" in str(tm.op.a_src).lower():
        out.append("A from registers (RS GMMA): the register fragment's producer is not checked")
    return out + list(ALWAYS_UNCHECKED)


def _distinct(mmas: list) -> list:
    """One TiledMma per distinct tiling (a launch argument reappears as the kernel's parameter)."""
    out, keys = [], set()
    for tm in mmas:
        key = _mma_key(tm)
        if key not in keys:
            keys.add(key)
            out.append(tm)
    return out


def _pick(layouts: list, names: dict, x: str):
    """The smem layout of operand ``x``: the staged one if several."""
    if not layouts:
        return None
    staged = [o for o in layouts if "staged" in names.get(id(o), "")]
    return (staged or layouts)[0]


def _ptr_swizzle(t) -> str | None:
    """The swizzle of a tensor's pointer (``ptr<f16, smem, align<128>, S<3,4,3>>``), or ``None``."""
    m = re.search(r"S<\d+,\d+,\d+>", str(t.iterator).replace(" ", ""))
    return m.group(0) if m else None


def _ampere(cfg: DslConfig, seen: _Seen, pool: list, layouts: dict, names: dict, group: dict, single: bool) -> None:
    """The copies of one GEMM (``group``: operand -> its smem->register copy).  Each copy's smem tile
    is the tensor the kernel partitions with it; without that, the layout named for the operand."""
    name = lambda o: names.get(id(o), type(o).__name__)   # noqa: E731
    copies = [o for o in pool if _kind(o) == "tiled_copy"]
    smem = {}
    for x in "ABC":
        c = group.get(x)
        ts = seen.smem_tensors(c, "D" if x == "C" else "S") if c is not None else []
        if ts:
            smem[x] = ts[0]
            cfg.copy(x, c, ts[0].layout, swizzle=_ptr_swizzle(ts[0]), label=name(c),
                     smem_label=_smem_label(ts[0], pool, name))
            continue
        sm = _pick(layouts[x], names, x) if single else None
        if c is not None and sm is not None:
            cfg.copy(x, c, sm, label=name(c), smem_label=name(sm))
        elif x == "C" and c is None and single and seen.autovec and sm is not None:
            dt, line = seen.autovec[0]
            cfg.copy("C", "AutoVectorizingCopy", sm, dtype=dt, label=f"autovec_copy at line {line}",
                     smem_label=name(sm))
    for c in copies:
        if id(c) in seen.operand_of:
            continue
        op = type(c.op).__name__
        if op == "CopyG2SOp":
            _g2s_by_tensor(cfg, c, seen, smem, name) or _g2s_by_name(cfg, c, layouts, names, name, single)
        elif op == "CopyUniversalOp" and "C" in cfg.doc.copy and "C" not in cfg.doc.s2g:
            if "C" in smem and any(t is smem["C"] for t in seen.smem_tensors(c, "S")):
                cfg.s2g(c, label=name(c), ld=_ld_name(name(smem["C"]), "C"))
            elif "C" not in smem and single and operand_letter(name(c)) == "C":
                cfg.s2g(c, label=name(c))


def _ld_name(smem_name: str, x: str) -> str:
    """The leading-dimension symbol of the tensor an smem tile ``sQ`` copies: ``ldQ`` (else ``ld<X>``).

    >>> _ld_name("sQ", "A"), _ld_name("sKV", "B"), _ld_name("smem_tile", "B")
    ('ldQ', 'ldKV', 'ldB')
    """
    m = re.fullmatch(r"s([A-Z][A-Za-z0-9]*)", smem_name)
    return f"ld{m.group(1)}" if m else f"ld{x}"


def _smem_label(t, pool: list, name) -> str:
    """An smem tensor's name, with the name of the layout it was made with (``sA (sA_layout)``)."""
    text = str(t.layout)
    made = [o for o in pool if _kind(o) == "layout" and str(o) == text and name(o) != type(o).__name__]
    return f"{name(t)} ({name(made[0])})" if made else name(t)


def _g2s_by_tensor(cfg: DslConfig, c, seen: _Seen, smem: dict, name) -> bool:
    """``[g2s.X]`` for the operands whose smem tensor ``c`` fills (or whose transposed view it fills:
    ``composition(sV, ...)`` read as V^T); whether any."""
    found = False
    for t in seen.smem_tensors(c, "D"):
        for x, s in smem.items():
            if x == "C" or x in cfg.doc.g2s:
                continue
            if t is s:
                cfg.g2s(x, c, label=name(c), ld=_ld_name(name(t), x))
                found = True
            elif seen.derived.get(id(s)) is t:
                cfg.g2s(x, c, t.layout, swizzle=_ptr_swizzle(t), label=name(c), smem_label=name(t),
                        transposed=True, ld=_ld_name(name(t), x))
                found = True
    return found


def _g2s_by_name(cfg: DslConfig, c, layouts: dict, names: dict, name, single: bool) -> bool:
    """``[g2s.X]`` by the operand letter of the copy's name (one GEMM only)."""
    x = operand_letter(name(c))
    if not single or x not in ("A", "B") or x in cfg.doc.g2s:
        return False
    cfg.g2s(x, c, smem=None if x in cfg.doc.copy else _pick(layouts[x], names, x), label=name(c))
    return True


def _partitioned_layout(tm, x: str, seen: _Seen, pool: list, names: dict):
    """The staged smem layout (a swizzled ComposedLayout the kernel built) of the smem tensor the
    kernel partitions as operand ``x`` of ``tm`` (``thr_mma.partition_A(sQ)``), or ``None``.  The
    tensor carries the swizzle on its pointer, so its layout is matched to the layouts' outer part."""
    key = _mma_key(tm)
    for k, y, t in seen.mma_parts:
        if k != key or y != x:
            continue
        base = seen.derived.get(id(t))        # a transposed view: composition(sV, ordered layout)
        text = str((base if base is not None else t).layout)
        made = [o for o in pool if _kind(o) == "layout" and hasattr(o, "outer") and str(o.outer) == text]
        named = _prefer_stem([o for o in made if "staged" in names.get(id(o), "")] or made, names,
                             _stem(names.get(id(base if base is not None else t), "")))
        if named and base is None:
            return named[0]
        if named:   # the view in the operand's coordinates, with the layout's swizzle
            return import_dsl().make_composed_layout(named[0].inner, 0, t.layout)
    return None


def _hopper(cfg: DslConfig, tm, seen: _Seen, layouts: dict, names: dict, spec: EntrySpec, fakes: dict,
            pool: list = ()) -> None:
    name = lambda o: names.get(id(o), type(o).__name__)   # noqa: E731
    op, chosen = tm.op, {}
    for x, dt in (("A", op.a_dtype), ("B", op.b_dtype)):
        if x == "A" and "rmem" in str(op.a_src).lower():
            continue
        sm = _partitioned_layout(tm, x, seen, pool, names) or _pick(layouts[x], names, x)
        if sm is not None:
            cfg.smem(x, sm, dt, label=name(sm))
            chosen[x] = sm
    for top, gmem, smem_layout, box, mc, atom, line in seen.tma:
        role = seen.tensors.get(id(gmem)) or operand_letter(names.get(id(atom), "")) or \
            (_tma_operand(smem_layout, chosen, _stem(names.get(id(gmem), "")), _operand_stems(tm, seen, names))
             if "G2S" in type(top).__name__ else None)
        if role not in ("A", "B"):
            continue
        if is_tcgen05(top):
            raise DslError(f"not supported: {type(top).__name__} at {os.path.basename(seen.path)}:{line}")
        cfg.tma(role, top, _tma_gmem(gmem, box) or _gmem_text(role, spec), box, multicast=int(mc),
                label=names.get(id(atom), f"tma_atom_{role.lower()}"))


def _blackwell(cfg: DslConfig, tm, seen: _Seen, layouts: dict, names: dict, spec: EntrySpec, pool: list) -> None:
    """An SM100 TiledMma's ``[smem.X]`` (the staged UMMA layouts), ``[tma.X]`` from
    ``make_tiled_tma_atom_A/B`` (box: the MMA tiler's (M|N, K); multicast over the cluster's N (A) or M
    (B) mode) and the cluster, from their ``cluster_shape_vmnk``."""
    name = lambda o: names.get(id(o), type(o).__name__)   # noqa: E731
    op, chosen = tm.op, {}
    for x, dt in (("A", op.a_dtype), ("B", op.b_dtype)):
        if x == "A" and "tmem" in str(op.a_src).lower():
            continue
        sm = _partitioned_layout(tm, x, seen, pool, names) or _tma_staged(tm, x, seen, pool, names) or \
            _pick(layouts[x], names, x)
        if sm is not None:
            cfg.smem(x, sm, dt, label=name(sm))
            chosen[x] = sm
    for x, top, gmem, tiler, vmnk, atom, line, key, _ in seen.tma_mma:
        if x in cfg.doc.tma or key != _mma_key(tm) or x not in chosen:
            continue
        tiler = [int(e) for e in _flat(tuple(tiler))]
        box = (tiler[0] if x == "A" else tiler[1], tiler[2])
        modes = [_size(m) for m in tuple(vmnk)] if vmnk is not None else [1, 1, 1, 1]
        mc = (modes[2] if x == "A" else modes[1]) if "Multicast" in type(top).__name__ else 1
        label = names.get(id(atom), f"tma_atom_{x.lower()}")
        gtext = _tma_gmem(gmem, box) or (_gmem_text(x, spec) if seen.tensors.get(id(gmem)) == x else None)
        if gtext is None:
            cfg.unchecked.append(f"{label} = make_tiled_tma_atom_{x} at line {line}: its global tensor "
                                 f"{getattr(gmem, 'layout', gmem)} is not static: [tma.{x}] not written")
            continue
        try:
            cfg.tma(x, top, gtext, box, multicast=mc, label=label)
        except DslError as e:
            raise DslError(f"{e} at {os.path.basename(seen.path)}:{line}") from None
        if vmnk is not None and "cluster" not in cfg.doc.mma:
            cfg.cluster((modes[0] * modes[1], modes[2], modes[3]), label=f"cluster_shape_vmnk {vmnk}")


def _tensor_memory(cfg: DslConfig, seen: _Seen, names: dict, instance) -> None:
    """``[tmem]`` from the kernel's ``TmemAllocator.allocate(columns)`` (accumulator stages: its
    ``num_acc_stage``, else 1) and ``[tmem_copy.C]`` from its first ``tcgen05.make_tmem_copy`` of a load
    (tile: the TMEM tensor it was made for; warps: its ``epilogue_warp_id`` / ``epilog_warp_id``, else
    warps 0-3 of a 128-thread CTA; else not written)."""
    base = os.path.basename(seen.path)
    for cols, line in seen.tmem_alloc[:1]:
        try:
            cols = int(cols)
        except (TypeError, ValueError):
            cfg.unchecked.append(f"TmemAllocator.allocate({cols}) at line {line}: a dynamic column count is not read")
            break
        stages = getattr(instance, "num_acc_stage", 1)
        cfg.tmem(cols, int(stages), label=f"tmem.allocate({cols}) at {base}:{line}, accumulator stages: "
                 + ("num_acc_stage" if hasattr(instance, "num_acc_stage") else "1 (the kernel has no num_acc_stage)"))
    warps = next((getattr(instance, a) for a in ("epilogue_warp_id", "epilog_warp_id") if hasattr(instance, a)), None)
    if warps is None and getattr(instance, "threads_per_cta", None) == 128:
        warps = (0, 1, 2, 3)
    for atom, tensor, tiled, line in seen.tmem_copy:
        if not type(atom.op).__name__.startswith("Ld"):
            continue
        if isinstance(warps, int):
            warps = (warps,)
        if warps is None:
            cfg.unchecked.append(f"{names.get(id(tiled), 'make_tmem_copy')} at line {line}: the epilogue warps "
                                 "are not known (no epilogue_warp_id): [tmem_copy.C] not written")
            break
        try:
            cfg.tmem_copy(atom.op, tuple(tensor.shape), list(_flat(tuple(warps))),
                          label=names.get(id(tiled), "tiled_copy_t2r"))
        except DslError as e:
            raise DslError(f"{e} at {base}:{line}") from None
        break


def _tma_staged(tm, x: str, seen: _Seen, pool: list, names: dict):
    """The staged smem layout of operand ``x`` whose first stage is the layout the kernel gave
    ``make_tiled_tma_atom_A/B`` for ``tm`` (FMHA's ``q_smem_layout_staged``), or ``None``."""
    key = _mma_key(tm)
    for y, _, _, _, _, atom, _, k, stage in seen.tma_mma:
        if y != x or k != key:
            continue
        made = [o for o in pool if _kind(o) == "layout" and hasattr(o, "outer")
                and len(tuple(o.outer.shape)) == 4 and str(_first_stage(o)) == str(stage)]
        named = [o for o in made if "staged" in names.get(id(o), "")] or made
        m = re.fullmatch(r"tma_atom_([A-Za-z0-9]+)", names.get(id(atom), ""))    # tma_atom_k -> k_smem_layout_staged
        named = _prefer_stem(named, names, m.group(1) if m else None)
        if named:
            return named[0]
    return None


def _prefer_stem(layouts: list, names: dict, stem: str | None) -> list:
    """``layouts`` with those named after the tensor ``stem`` first: ``K`` -> ``k_smem_layout_staged``,
    ``sK_layout`` (several layouts may print the same: the label should be the operand's own)."""
    if not stem:
        return layouts
    own = {stem.lower(), "s" + stem.lower()}
    same = [o for o in layouts if own & set(names.get(id(o), "").lower().split("_"))]
    return same + [o for o in layouts if all(o is not x for x in same)]


def _first_stage(layout):
    try:
        return import_dsl().slice_(layout, (None, None, None, 0))
    except Exception:  # noqa: BLE001 - a layout the DSL does not slice so: not matched
        return None


def _tmem_unread(seen: _Seen, names: dict, n_mma: int) -> list:
    """The TMEM allocation and copies of a kernel with several TiledMmas (FMHA): which accumulator a
    copy reads is not known, so no [tmem]/[tmem_copy.C] is written."""
    out = [f"TmemAllocator.allocate({cols}) at line {line}: {n_mma} TiledMmas share the Tensor Memory "
           "(a plan with regions is not read): [tmem] not written" for cols, line in seen.tmem_alloc[:1]]
    out += [f"{names.get(id(tiled), 'make_tmem_copy')} = make_tmem_copy({type(atom.op).__name__}) at line {line}: "
            "which accumulator it reads is not known: [tmem_copy.C] not written"
            for atom, _, tiled, line in seen.tmem_copy]
    return list(dict.fromkeys(out))


def _size(mode) -> int:
    """The number of elements of a static (nested) shape mode."""
    n = 1
    for e in _flat(mode if isinstance(mode, tuple) else (mode,)):
        n *= int(e)
    return n


def _stem(name: str) -> str | None:
    """The tensor a variable names: ``mQ`` (gmem), ``sQ`` (smem), ``gQ`` -> ``Q``; else ``None``.

    >>> _stem("mQ"), _stem("sKV"), _stem("tiled_mma")
    ('Q', 'KV', None)
    """
    m = re.fullmatch(r"[msg]([A-Z][A-Za-z0-9]*)", name or "")
    return m.group(1) if m else None


def _operand_stems(tm, seen: _Seen, names: dict) -> dict:
    """Operand -> the stem of the smem tensor the kernel partitions as that operand of ``tm`` (untransposed)."""
    key = _mma_key(tm)
    return {x: _stem(names.get(id(t), "")) for k, x, t in seen.mma_parts if k == key and id(t) not in seen.derived}


def _tma_operand(smem_layout, chosen: dict, gmem_stem: str | None, stems: dict) -> str | None:
    """The operand a TMA load fills: its gmem tensor is named as the operand's smem tensor (``mQ`` and
    ``sQ``) and its smem layout is one stage of the operand's, in the operand's own coordinates (a
    V^T operand, whose V is filled untransposed, is not matched); ``None`` if none."""
    text = str(smem_layout)
    for x, sm in chosen.items():
        if gmem_stem is None or stems.get(x) != gmem_stem:
            continue
        try:
            stage = import_dsl().slice_(sm, (None, None, 0)) if len(tuple(sm.outer.shape)) == 3 else sm
        except Exception:  # noqa: BLE001 - a layout the DSL does not slice so: not matched
            continue
        if str(stage) == text or str(sm) == text:
            return x
    return None


def _tma_gmem(gmem, box) -> str | None:
    """The global tensor a TMA atom was made with, its modes the box covers (``(4096,4096):(4096,1)``),
    as the kernel passed it (a kernel may permute its parameter first); ``None`` if not static."""
    text = strip_static(str(getattr(gmem, "layout", "")))
    if not text or "?" in text:
        return None
    try:
        lay = parse_layout(text)
    except Exception:  # noqa: BLE001 - a form the parser does not read: the fake tensor's own text
        return None
    r = len(tuple(box)) if isinstance(box, tuple) else 2
    shape, stride = tuple(lay.shape)[:r], tuple(lay.stride)[:r]
    fmt = lambda t: "(" + ",".join(str(e) for e in t) + ")"   # noqa: E731
    return f"{fmt(shape)}:{fmt(stride)}"


def _gmem_text(role: str, spec: EntrySpec) -> str:
    """The global tensor of ``role`` without its batch mode, as the fake tensor was made: ``(4096,4096):(4096,1)``."""
    modes = ROLE_MODES[role][:2]
    ext = [int(spec.shape[m]) for m in modes]
    major = spec.majors.get(role, DEFAULT_MAJOR[role])
    first_contiguous = major == modes[0]
    stride = (1, ext[0]) if first_contiguous else (ext[1], 1)
    return f"({ext[0]},{ext[1]}):({stride[0]},{stride[1]})"


# ---------------------------------------------------------------- the entry


def _entry(mod, spec: EntrySpec, cutlass, shown: str):
    """``(callable, instance)`` of ``spec.entry``: ``Class.method`` (the class built with ``--init``) or ``fn``."""
    cls_name, _, meth = spec.entry.partition(".")
    obj = getattr(mod, cls_name, None)
    if obj is None:
        raise DslError(f"{shown}: no {cls_name} in the file (--entry {spec.entry})")
    if not meth:
        return obj, None
    if not inspect.isclass(obj):
        raise DslError(f"{shown}: {cls_name} is not a class (--entry {spec.entry})")
    init = {**_dtype_defaults(obj, spec, cutlass), **{k: _value(v, mod, cutlass) for k, v in spec.init.items()}}
    try:
        inst = obj(**init)
    except TypeError as e:
        raise DslError(f"{shown}: {cls_name}({', '.join(init)}): {e} "
                       "(give constructor arguments with --init k=v,...)") from None
    fn = getattr(inst, meth, None)
    if fn is None:
        raise DslError(f"{shown}: {cls_name} has no {meth} (--entry {spec.entry})")
    return (inst if meth == "__call__" else fn), inst


#: constructor parameters a kernel class takes its element types by, and the operand each follows
_DTYPE_PARAMS = {"ab_dtype": "A", "a_dtype": "A", "b_dtype": "B", "c_dtype": "C", "d_dtype": "C", "out_dtype": "C",
                 "dtype": "A"}


def _dtype_defaults(cls, spec: EntrySpec, cutlass) -> dict:
    """Required constructor parameters named for element types (``ab_dtype``, ``c_dtype``, ``acc_dtype``)
    filled from ``--dtype`` (``acc_dtype``: Float32), so ``--init`` is needed only for the rest."""
    try:
        params = inspect.signature(cls).parameters.values()
    except (TypeError, ValueError):
        return {}
    out = {}
    for p in params:
        if p.default is not p.empty or p.name in spec.init:
            continue
        if p.name in ("acc_dtype", "accumulator_dtype"):
            out[p.name] = cutlass.Float32
        elif p.name in _DTYPE_PARAMS:
            out[p.name] = _dtype(spec, _DTYPE_PARAMS[p.name], cutlass)
    return out


def _fake_args(fn, spec: EntrySpec, mod, cutlass, seen: _Seen, shown: str) -> tuple[list, dict]:
    """Positional arguments of the entry: a fake tensor per tensor parameter (its role from its
    name: A (M,K,L), B (N,K,L), C/D (M,N,L)), a fake stream per stream, ``--arg`` values, defaults."""
    from cutlass.cute.runtime import make_fake_compact_tensor
    from cutlass.runtime import make_fake_stream
    target = getattr(fn, "__call__", fn) if not inspect.isfunction(fn) and not inspect.ismethod(fn) else fn
    sig = inspect.signature(target)
    out, fakes = [], {}
    for p in sig.parameters.values():
        if p.name == "self":
            continue
        ann = str(p.annotation)
        if p.name in spec.args:
            out.append(_value(spec.args[p.name], mod, cutlass))
        elif p.name in spec.tensors:
            t = _named_tensor(make_fake_compact_tensor, p.name, spec, cutlass)
            seen.keep.append(t)
            out.append(t)
        elif _optional(p.annotation):      # an optional tensor (mLSE, mCuSeqlensQ): absent
            out.append(None if p.default is p.empty else p.default)
        elif "Tensor" in ann or (p.default is p.empty and operand_letter(p.name)):
            role = operand_letter(p.name)
            if role is None:
                raise DslError(f"{shown}: entry parameter {p.name}: which operand (A, B or C) is it? "
                               f"Give its modes with --tensor {p.name}=DIM,DIM,... (names of --shape)")
            t = _fake_tensor(make_fake_compact_tensor, role, spec, cutlass)
            seen.tensors[id(t)] = role
            seen.keep.append(t)
            fakes[role] = t
            out.append(t)
        elif "stream" in p.name.lower() or "CUstream" in ann:
            out.append(make_fake_stream())
        elif p.default is not p.empty:
            out.append(p.default)
        elif _scalar(ann) is not None:
            out.append(_scalar(ann))
        else:
            raise DslError(f"{shown}: entry parameter {p.name} ({ann}): give it with --arg {p.name}=VALUE")
    return out, fakes


def _optional(annotation) -> bool:
    """Whether a parameter's annotation admits ``None`` (``Optional[cute.Tensor]``, ``Int32 | None``)."""
    return "Optional" in str(annotation) or "None" in str(annotation) or annotation is None


def _scalar(ann: str):
    """A value for a scalar parameter the tiling does not depend on (``softmax_scale: Float32`` -> 1.0,
    ``Int32`` -> 1), or ``None`` for any other annotation.

    >>> _scalar("<class 'cutlass.base_dsl.typing.Float32'>"), _scalar("Int32"), _scalar("cute.Tensor")
    (1.0, 1, None)
    """
    name = re.sub(r"^.*[.']", "", ann.strip("<>' ").removeprefix("class "))
    if re.fullmatch(r"(Float|BFloat|TFloat)\d*|float", name):
        return 1.0
    if re.fullmatch(r"U?[Ii]nt\d*|int", name):
        return 1
    if name in ("Boolean", "bool"):
        return False
    return None


def _dtype(spec: EntrySpec, key: str, cutlass):
    tname = spec.dtypes.get(key) or spec.dtypes.get("*") or "Float16"
    dtype = getattr(cutlass, DTYPE_ALIASES.get(tname.lower(), tname), None)
    if dtype is None:
        raise DslError(f"--dtype {tname}: not a CuTe DSL type")
    return dtype


def _named_tensor(make, pname: str, spec: EntrySpec, cutlass):
    """``--tensor mQ=B,S,H,D[:TYPE][@ORDER]``: a compact fake tensor of those extents, of element type TYPE
    (default: ``--dtype``), row-major (the last mode contiguous) or in CuTe's ``stride_order`` ORDER
    (``q=S,D,HR,HK,B@3,0,1,2,4``: D contiguous, then HR, HK, S, B; a permuted torch tensor)."""
    text, _, order_text = spec.tensors[pname].partition("@")
    text, _, tname = text.partition(":")
    if ":" in order_text:
        order_text, _, tname = order_text.partition(":")
    modes = [m.strip() for m in text.split(",") if m.strip()]
    shape = []
    for m in modes:
        if m.isdigit():
            shape.append(int(m))
        elif m.upper() in spec.shape:
            shape.append(int(spec.shape[m.upper()]))
        else:
            raise DslError(f"--tensor {pname}={spec.tensors[pname]}: {m} is neither a number nor a --shape name")
    order = tuple(reversed(range(len(shape))))
    if order_text.strip():
        try:
            order = tuple(int(o) for o in order_text.split(","))
        except ValueError:
            order = ()
        if sorted(order) != list(range(len(shape))):
            raise DslError(f"--tensor {pname}={spec.tensors[pname]}: @{order_text} is not a stride order of "
                           f"{len(shape)} modes (a permutation of 0..{len(shape) - 1}, 0 = the contiguous mode)")
    dtype = _dtype(EntrySpec("", dtypes={"*": tname.strip()}), "*", cutlass) if tname.strip() else \
        _dtype(spec, pname.upper(), cutlass)
    return _compact(make, dtype, tuple(shape), order, spec)


def _compact(make, dtype, shape: tuple, order: tuple, spec: EntrySpec):
    """A compact fake tensor; with ``spec.dynamic_strides`` its strides other than 0 and 1 are dynamic,
    each known a multiple of 16 bytes (what the fakes' ``assumed_align`` says of the base, and what
    CUTLASS's runners state with ``mark_compact_shape_dynamic(divisibility=128 // width)``), as a
    tensor from ``from_dlpack(...).mark_layout_dynamic()`` is."""
    t = make(dtype, shape, stride_order=order, assumed_align=spec.align)
    if not spec.dynamic_strides:
        return t
    from cutlass.cute.runtime import make_fake_tensor
    from cutlass.cute.typing import sym_int64
    div = max(1, 128 // dtype.width)
    stride = tuple(s if s in (0, 1) else sym_int64(divisibility=div) for s in t.stride)
    return make_fake_tensor(dtype, shape, stride, assumed_align=spec.align)


def _fake_tensor(make, role: str, spec: EntrySpec, cutlass):
    modes = ROLE_MODES[role]
    missing = [m for m in modes[:2] if m not in spec.shape]
    if missing:
        raise DslError(f"--shape: no {', '.join(missing)} (operand {role} is {'x'.join(modes)})")
    shape = tuple(int(spec.shape.get(m, 1)) for m in modes)
    dtype = _dtype(spec, role, cutlass)
    major = spec.majors.get(role, DEFAULT_MAJOR[role])
    if major not in modes[:2]:
        raise DslError(f"--major {role}={major}: expected {modes[0]} or {modes[1]}")
    order = (0, 1, 2) if major == modes[0] else (1, 0, 2)
    return _compact(make, dtype, shape, order, spec)


_IMPORT = re.compile(r"^\s*(?:from\s+([A-Za-z_][\w.]*)\s+import|import\s+([A-Za-z_][\w.]*))", re.M)


def package_roots(path: str, text: str) -> list:
    """The directories the kernel's own absolute imports of its package need on ``sys.path``: a file
    ``ROOT/flash_attn/cute/flash_fwd.py`` that says ``from flash_attn.cute import utils`` needs ``ROOT``
    (the parent of the nearest ancestor directory named as the imported top-level package).
    Only for a file inside a package (its directory has ``__init__.py``).
    """
    here = os.path.dirname(os.path.abspath(path))
    if not os.path.isfile(os.path.join(here, "__init__.py")):
        return []                      # not in a package (a script such as CUTLASS's examples)
    parts = here.split(os.sep)
    roots = []
    for m in _IMPORT.finditer(text):
        top = (m.group(1) or m.group(2)).split(".")[0]
        if top in sys.modules and top not in parts[-1:]:
            continue                   # imported already from elsewhere (cutlass under a checkout named cutlass)
        hits = [i for i in range(1, len(parts)) if parts[i] == top]   # the package is an ancestor directory
        if hits:
            root = os.sep.join(parts[:hits[-1]]) or os.sep
            if root not in roots:
                roots.append(root)
    return roots


def _module_name(path: str, roots: list) -> str | None:
    """The dotted name of ``path`` under one of ``roots`` (``flash_attn.cute.flash_fwd``), if it is in a package."""
    for root in roots:
        rel = os.path.relpath(os.path.abspath(path), root)
        if not rel.startswith(".."):
            return os.path.splitext(rel)[0].replace(os.sep, ".")
    return None


def _missing_hint(name: str) -> str:
    return (f" (install it, put the directory that holds {name!r} on the path with --path DIR, or answer its "
            f"import with a stub: --stub-module {name})")


def load_module(path: str, shown: str, paths: list | tuple = ()):
    """The kernel's module: its directory, ``paths`` (``--path``) and the roots of the packages it
    imports itself from (:func:`package_roots`) put first on ``sys.path``; a file inside such a
    package is imported by its dotted name (so its package's ``__init__`` and siblings load as the
    package's own code expects).  The directories stay on ``sys.path``: kernels import lazily while
    they trace."""
    with open(path, encoding="utf-8", errors="replace") as f:
        roots = package_roots(path, f.read())
    for d in [os.path.dirname(os.path.abspath(path)), *roots, *reversed([os.path.abspath(p) for p in paths])]:
        if d not in sys.path:
            sys.path.insert(0, d)
    dotted = _module_name(path, roots)
    if dotted is not None:
        try:
            return importlib.import_module(dotted)
        except ModuleNotFoundError as e:
            raise DslError(f"{shown}: {e}{_missing_hint(e.name)}") from None
    name = "symlayout_dsl_" + re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise DslError(f"{shown}: not a Python file")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    try:
        spec.loader.exec_module(mod)
    except ModuleNotFoundError as e:
        raise DslError(f"{shown}: {e}{_missing_hint(e.name)}") from None
    return mod


def _tmem_allocator():
    """The DSL's ``TmemAllocator`` class (``tcgen05.alloc``), ``None`` in a DSL without it."""
    try:
        from cutlass.memory.tmem import TmemAllocator
    except ImportError:
        return None
    return TmemAllocator


def trace_entry(mod, path: str, spec: EntrySpec, shown: str) -> list:
    """``[(key, DslConfig)]`` of the kernel ``spec.entry`` of the loaded module ``mod`` builds."""
    cute = import_dsl()
    import cutlass
    from cutlass.cute import nvgpu
    from cutlass.cute.nvgpu import cpasync
    from cutlass.cutlass_dsl import cutlass as cutlass_dsl
    fn, inst = _entry(mod, spec, cutlass, shown)
    seen = _Seen(os.path.abspath(path))
    args, fakes = _fake_args(fn, spec, mod, cutlass, seen, shown)
    undo = _watch(seen, cute, cpasync, cutlass_dsl.KernelLauncher,
                  lambda launch_args: _build(seen, spec, inst, fakes, launch_args), nvgpu, _tmem_allocator())
    try:
        cute.compile(fn, *args)
    except _Stop as stop:
        configs = stop.configs
    else:
        raise DslError(f"{shown}: {spec.entry} returned without launching a kernel (nothing to read)")
    finally:
        for u in reversed(undo):
            u()
    if any(cfg.assumed for _, cfg in configs) and _may_state_alignment(mod):
        _use_stated(configs, mod, path, spec, shown)
    return configs


# ---------------------------------------------------------------- alignment the kernel states


_DIV = re.compile(r"\?(?:\{[^}]*?div=(\d+)[^}]*\})?")


def stride_divisibility(layout_text: str) -> int | None:
    """The largest number every dynamic stride of a printed layout is known a multiple of (``?{i64 div=16}``:
    16, a bare ``?``: 1), ``None`` if no stride is dynamic.

    >>> stride_divisibility("(128,32,128):(?{i64 div=16},1,32)"), stride_divisibility("(8,4):(?,1)")
    (16, 1)
    >>> stride_divisibility("(8,4):(4,1)") is None
    True
    """
    _, _, strides = layout_text.rpartition(":")
    divs = [int(m.group(1) or 1) for m in _DIV.finditer(strides) if m.group(0)]
    return min(divs) if divs else None


def stated_alignment(mod, path: str, spec: EntrySpec, shown: str) -> dict:
    """``{TiledCopy name: (multiple, where)}``: what the kernel itself states of the strides of the gmem
    tensors its TiledCopies partition.  The entry is traced again on fake tensors whose strides are
    dynamic (:func:`_compact`): a kernel that states more (``cute.assume(stride, divby=16)``, the
    tensor rebuilt with it, as flash-attention 4's ``assume_tensor_aligned``) gives its gmem tiles
    strides of that divisibility; ``where`` is the line of its ``cute.assume`` call in the kernel file.
    A divisibility no ``cute.assume`` of the kernel gave (the fakes' own 16 bytes) is not a statement; a
    kernel body that did not trace to its end states nothing (a copy's other partitions are unseen)."""
    cute = import_dsl()
    import cutlass
    from cutlass.cute import nvgpu
    from cutlass.cute.nvgpu import cpasync
    from cutlass.cutlass_dsl import cutlass as cutlass_dsl
    spec = dataclasses.replace(spec, dynamic_strides=True)
    fn, inst = _entry(mod, spec, cutlass, shown)
    seen = _Seen(os.path.abspath(path))
    args, _ = _fake_args(fn, spec, mod, cutlass, seen, shown)
    assumed = []     # (divby, line) of the kernel's cute.assume calls

    def assume(orig):
        def wrapper(src, divby=None, *a, **k):
            if divby is not None:
                assumed.append((int(divby), seen.line()))
            return orig(src, divby, *a, **k)
        return wrapper

    def read(launch_args) -> dict:
        if seen.body_error:      # a partition the body did not reach could state less: read nothing
            return {}
        names, divs = _names(seen, launch_args, inst), {}
        for tiled, _, tensor in seen.parts:
            div = stride_divisibility(str(tensor.layout)) if "gmem" in _memspace(tensor) else None
            if div is not None and id(tiled) in names:
                divs[names[id(tiled)]] = min(div, divs.get(names[id(tiled)], div))
        base = os.path.basename(seen.path)
        where = {d: f"cute.assume(..., divby={d}) at {base}:{ln}" for d, ln in reversed(assumed) if ln}
        return {k: (d, where[d]) for k, d in divs.items() if d in where}   # else the fakes' own divisibility

    undo = [_patch(cute, "assume", assume)]
    undo += _watch(seen, cute, cpasync, cutlass_dsl.KernelLauncher, read, nvgpu, _tmem_allocator())
    try:
        cute.compile(fn, *args)
    except _Stop as stop:
        return stop.configs
    finally:
        for u in reversed(undo):
            u()
    return {}


def _may_state_alignment(mod) -> bool:
    """Whether the kernel's own code -- its module and the modules of its package (flash-attention 4's
    ``cute_dsl_utils``) -- says ``divby`` anywhere; if not, :func:`stated_alignment` would read nothing and
    its second trace is skipped (a statement made elsewhere is then missed: the front end's default stays,
    which only costs a ``DEPENDS`` line)."""
    top = mod.__name__.partition(".")[0]
    files = {getattr(m, "__file__", None) for n, m in list(sys.modules.items()) if n.partition(".")[0] == top}
    for f in sorted(x for x in files | {getattr(mod, "__file__", None)} if x and x.endswith(".py")):
        try:
            with open(f, encoding="utf-8", errors="replace") as fh:
                if "divby" in fh.read():
                    return True
        except OSError:
            continue
    return False


def _use_stated(configs: list, mod, path: str, spec: EntrySpec, shown: str) -> None:
    """Replace the front end's default leading-dimension assumption of each global copy by what the
    kernel states, where it states more (:func:`stated_alignment`), naming where it came from."""
    try:
        stated = stated_alignment(mod, path, spec, shown)
    except Exception as e:  # noqa: BLE001 - the kernel's statements are read where its code allows
        text = re.sub(r"\x1b\[[0-9;]*m", "", str(e)).strip().splitlines()
        for _, cfg in configs:
            cfg.doc.notes.append(f"the kernel's own alignment statements were not read (traced with dynamic "
                                 f"strides: {type(e).__name__}: {text[0][:200] if text else ''})")
        return
    for _, cfg in configs:
        for kind in ("g2s", "s2g"):
            for x in getattr(cfg.doc, kind):
                names = cfg.names.get(f"{kind}.{x}")
                ld = _ld_symbol(getattr(cfg.doc, kind)[x].get("gmem", ""), cfg.assumed)
                if names is None or ld is None or names.copy not in stated:
                    continue
                div, where = stated[names.copy]
                default = int(cfg.doc.params[ld].get("multiple_of", 1))
                if div < default:
                    continue
                if div > default:
                    cfg.assume(ld, div)
                cfg.stated.append(f"{ld} % {div} == 0: stated by the kernel for {names.copy} ({where})"
                                  + (", what the front end assumes by default" if div == default else ""))
                cfg.doc.notes.append(cfg.stated[-1])


def _ld_symbol(gmem: str, assumed: dict) -> str | None:
    """The leading-dimension symbol of a gmem layout whose ``multiple_of`` is still the front end's default."""
    found = [n for n in re.findall(r"[A-Za-z_]\w*", gmem.partition(":")[2]) if n in assumed]
    return found[0] if found else None
