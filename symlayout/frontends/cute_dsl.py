"""The CuTe DSL front end: a configuration from the DSL's own TiledMma, TiledCopy and layout objects.

CuTe DSL kernels (``nvidia-cutlass-dsl``, ``pip install 'symlayout[dsl]'``) build
their tiling at trace time: ``cute.make_tiled_mma(op, atom_layout, permutation_mnk)``,
``cute.make_tiled_copy_A/B/C(atom, tiled_mma)``, ``cute.make_tiled_copy_tv(atom,
thr, val)``, shared-memory layouts from ``cute.tile_to_shape`` (swizzled through
``cute.make_composed_layout`` or through a swizzled pointer,
``get_tensor(layout, swizzle=...)``).  Inside a ``@cute.jit`` function -- the
kernel's own host function, or a pytest test in the kernel's repository -- hand
those objects to a :class:`DslConfig`; it writes the configuration
(``toml()``, ``to_dict()``) and proves it (``prove()``).

The DSL objects are read through their printed form and their public
attributes only (no DSL import here): ``str(tiled_mma.thr_layout_vmnk)``,
``tiled_copy.layout_tv_tiled``, ``tiled_copy.tiler_mn``, ``atom.op``,
``atom.value_type``, ``op.transpose``, ...  Static layouts are required (a
dynamic one prints ``?`` and is refused).

Operations map to CuTe's names:

====================================================  ==============================================
DSL                                                   CuTe
====================================================  ==============================================
``warp.MmaF16BF16Op(Float16, Float32, (16,8,16))``     ``SM80_16x8x16_F32F16F16F32_TN`` (and F16 / BF16)
``warp.MmaTF32Op((16,8,8))``                           ``SM80_16x8x8_F32TF32TF32F32_TN``
``warp.MmaFP8Op(Float8E4M3FN, Float32, (16,8,32))``    ``SM89_16x8x32_F32E4M3E4M3F32_TN``
``warp.LdMatrix8x8x16bOp(transpose, n)``               ``SM75_U32x{n}_LDSM_N`` / ``SM75_U16x{2n}_LDSM_T``
``warp.StMatrix8x8x16bOp(transpose, n)``               ``SM90_U32x{n}_STSM_N`` / ``SM90_U16x{2n}_STSM_T``
``warp.LdMatrix8x16x8bOp(False, n)``                   ``SM75_U32x{n}_LDSM_N`` (the DSL: "equivalent to 8x8x16b")
``warp.LdMatrix8x16x8bOp(False, n, unpack_bits=b)``    ``SM100_SU{b}_DU8x16_x{n}_LDSM_N``
``warp.LdMatrix16x16x8bOp(True, n)``                   ``SM100_U8x{8n}_LDSM_T``
``warp.StMatrix16x8x8bOp(True, n)``                    ``SM100_U8x{4n}_STSM_T``
``cpasync.CopyG2SOp(cache_mode)`` (B bits per copy)    ``SM80_CP_ASYNC_CACHE{ALWAYS|GLOBAL}<uintB_t>``
``CopyUniversalOp()`` (B bits per copy)                ``UniversalCopy<uintB_t>``
``"AutoVectorizingCopy"`` (``cute.autovec_copy``)      ``AutoVectorizingCopy``
====================================================  ==============================================

Anything else is ``DslError("not supported: <op>")``.  Every table of the written
configuration carries, as a comment, the DSL expression it came from (the
labels given to :class:`DslConfig`), and :meth:`DslConfig.prove` words each
counterexample with those names and the DSL operation.

The tables are built by the step both front ends share (:mod:`symlayout.frontends.tables`).
Users import this module as :mod:`symlayout.cute_dsl` (which re-exports its public names).
"""
from __future__ import annotations

import dataclasses
import os
import re
import site
import sys

from ..algebra import int_tuple as it
from ..algebra.layout import Layout, composition, function_table
from ..algebra.notation import parse, parse_layout
from ..atoms import value_type_bits
from ..atoms.tmem import tmem_copy_op
from ..atoms.umma import UmmaAtomError, parse_umma_name
from ..config import loads_config
from ..errors import ConfigError, SymlayoutError
from ..prove.engine import prove_config
from .assumptions import under_stronger
from .document import ConfigDoc, strip_static
from .recover import bytes_swizzle_to_elements, same_function, tiler_extents
from .tables import OPERAND_MODES, check_tiled_mma, gmem_side, in_catalog, record_stages, tiled_copy_keys, vector_mode

__all__ = ["DslError", "DslConfig", "DslReport", "mma_name", "copy_name", "dtype_name", "import_dsl", "trace"]


class DslError(SymlayoutError):
    """A DSL object symlayout cannot read or model ("not supported: <op>")."""


#: DSL numeric type -> CuTe value type
DTYPES = {
    "Float16": "half_t", "BFloat16": "bfloat16_t", "Float32": "float", "TFloat32": "tfloat32_t",
    "Float64": "double", "Int8": "int8_t", "Uint8": "uint8_t", "Int16": "int16_t", "Uint16": "uint16_t",
    "Int32": "int32_t", "Uint32": "uint32_t", "Int64": "int64_t", "Uint64": "uint64_t",
    "Float8E4M3FN": "float_e4m3_t", "Float8E5M2": "float_e5m2_t", "Int4": "int4_t", "Uint4": "uint4_t",
}
_FP8 = {"Float8E4M3FN": "E4M3", "Float8E5M2": "E5M2"}


def import_dsl():
    """``cutlass.cute`` (the CuTe DSL), also from a ``pip install --target`` directory named by
    ``$SYMLAYOUT_DSL_SITE`` (whose ``.pth`` file is honoured); :class:`DslError` if absent.

    The DSL is imported here, not at module level: it is optional, and importing it costs
    more than a second (1.4 s measured on the 2-core dev machine, this module 0.4 s), which
    ``symlayout.cute_dsl`` users pay only when they trace."""
    cute = _cute()
    if cute is None:   # on sys.path without its .pth file run (PYTHONPATH): the .pth adds dsl_packages
        _add_dsl_packages()
        cute = _cute()
    site_dir = os.environ.get("SYMLAYOUT_DSL_SITE")
    if cute is None and site_dir:
        site.addsitedir(site_dir)
        cute = _cute()
    if cute is None:
        raise DslError("the CuTe DSL is not installed: pip install 'symlayout[dsl]' (nvidia-cutlass-dsl)")
    return cute


def _cute():
    """``cutlass.cute``, or ``None`` where it does not import (see :func:`import_dsl`)."""
    try:
        import cutlass.cute as cute
        return cute
    except ImportError:
        return None


def _add_dsl_packages():
    """Put the ``dsl_packages`` directory of an importable ``nvidia_cutlass_dsl`` on ``sys.path``."""
    try:
        import nvidia_cutlass_dsl
    except ImportError:
        return
    pkgs = os.path.join(list(nvidia_cutlass_dsl.__path__)[0], "dsl_packages")
    if os.path.isdir(pkgs) and pkgs not in sys.path:
        sys.path.insert(0, pkgs)


def trace(fn):
    """``fn()`` called while a ``@cute.jit`` function is being traced (the only time the DSL
    builds layouts); its return value, e.g. :class:`DslConfig` objects.  ``fn`` may itself be
    a ``@cute.jit`` function.  This is how ``symlayout dsl FILE.py`` calls ``symlayout_configs()``."""
    cute = import_dsl()
    out = []

    @cute.jit
    def _symlayout_trace():
        out.append(fn())

    _symlayout_trace()
    return out[0]


def dtype_name(dtype) -> str:
    """CuTe's name of a DSL numeric type (``cutlass.Float16`` -> ``half_t``)."""
    n = getattr(dtype, "__name__", str(dtype))
    if n not in DTYPES:
        raise DslError(f"not supported: value type {n}")
    return DTYPES[n]


def _static(obj, what: str) -> str:
    s = str(obj)
    if "?" in s:
        raise DslError(f"{what} {s} is dynamic: symlayout needs its static shape and strides at trace time")
    return s


def _op_desc(op) -> str:
    """The DSL operation as its constructor call (for comments and counterexamples)."""
    n = type(op).__name__
    if n in ("LdMatrix8x8x16bOp", "StMatrix8x8x16bOp", "LdMatrix16x8x8bOp") or n in _NARROW:
        unpack = getattr(op, "unpack_bits", None)
        return (f"{n}(transpose={op.transpose}, num_matrices={op.num_matrices}"
                + (f", unpack_bits={unpack})" if unpack is not None else ")"))
    if n == "CopyG2SOp":
        return f"{n}(cache_mode={getattr(op.cache_mode, 'name', op.cache_mode)})"
    if is_warpgroup(op) or is_tcgen05(op):
        fields = ", ".join(f"{k}={getattr(v, '__name__', None) or getattr(v, 'name', None) or v}"
                           for k, v in sorted(vars(op).items()) if not k.startswith("_"))
        return f"{type(op).__module__.rsplit('.', 2)[-2]}.{n}({fields})"
    if n in ("MmaF16BF16Op", "MmaFP8Op"):
        return f"{n}({op.ab_dtype.__name__}, {op.acc_dtype.__name__}, {tuple(op.shape_mnk)})"
    if n == "MmaTF32Op":
        return f"{n}({tuple(op.shape_mnk)})"
    fields = []
    for k, v in sorted(vars(op).items()) if hasattr(op, "__dict__") else ():
        if not k.startswith("_") and v is not None:
            fields.append(f"{k}={getattr(v, '__name__', None) or getattr(v, 'name', None) or v}")
    return f"{n}({', '.join(fields)})"


#: DSL numeric type -> the type code of SM90 GMMA atom names
_GMMA_CODES = {"Float16": "F16", "BFloat16": "BF16", "Float32": "F32", "TFloat32": "TF32", "Float8E4M3FN": "E4M3",
               "Float8E5M2": "E5M2", "Int8": "S8", "Uint8": "U8", "Int32": "S32"}


def is_warpgroup(op) -> bool:
    """Whether ``op`` is an SM90 warpgroup MMA (``cute.nvgpu.warpgroup``)."""
    return ".warpgroup" in type(op).__module__


def is_tcgen05(op) -> bool:
    """Whether ``op`` is an SM100 tcgen05 MMA or copy (``cute.nvgpu.tcgen05``)."""
    return ".tcgen05" in type(op).__module__


def gmma_name(op) -> str:
    """CuTe's name of a DSL warpgroup MMA: ``MmaF16BF16Op(Float16, Float32, (64,128,16), SMEM, K, K)`` ->
    ``SM90_64x128x16_F32F16F16_SS<GMMA::Major::K,GMMA::Major::K>`` (8-bit and tf32 atoms: ``..._SS_TN``)."""
    m, n, k = (int(x) for x in tuple(op.shape_mnk)[:3])
    codes = [_GMMA_CODES.get(getattr(t, "__name__", "")) for t in (op.acc_dtype, op.a_dtype, op.b_dtype)]
    src = "RS" if "rmem" in str(op.a_src).lower() else "SS"
    name = None
    if all(codes) and codes[1] in ("F16", "BF16"):
        ma, mb = ("K" if _major(x) == "K" else "MN" for x in (op.a_major_mode, op.b_major_mode))
        name = f"SM90_{m}x{n}x{k}_{''.join(codes)}_{src}<GMMA::Major::{ma},GMMA::Major::{mb}>"
    elif all(codes) and {_major(op.a_major_mode), _major(op.b_major_mode)} == {"K"}:
        name = f"SM90_{m}x{n}x{k}_{''.join(codes)}_{src}_TN"
    if name is None or not in_catalog("mma", name):
        raise DslError(f"not supported: {_op_desc(op)}" + (f" (as {name})" if name else ""))
    return name


#: DSL tcgen05 MMA operation -> the family of CuTe's SM100_MMA_<family> atoms
_UMMA_FAMILIES = {"MmaF16BF16Op": "F16BF16", "MmaTF32Op": "TF32", "MmaI8Op": "S8", "MmaFP8Op": "F8F6F4",
                  "MmaF8Op": "F8F6F4", "MmaF8F6F4Op": "F8F6F4"}


def umma_name(op) -> str:
    """CuTe's name of a DSL tcgen05 MMA: ``MmaF16BF16Op(Float16, Float16, Float32, (128,256,16), ONE, SMEM, K,
    K)`` -> ``SM100_MMA_F16BF16_SS<half_t,half_t,float,128,256,UMMA::Major::K,UMMA::Major::K>`` (``_2x1SM`` for
    ``CtaGroup.TWO``, ``_TS`` for A in Tensor Memory); the name the config loader parses, else "not supported"."""
    family = _UMMA_FAMILIES.get(type(op).__name__)
    try:
        m, n = (int(x) for x in tuple(op.shape_mnk)[:2])
        types = [dtype_name(t) for t in (op.a_dtype, op.b_dtype, op.acc_dtype)]
        pair = "_2x1SM" if str(getattr(op.cta_group, "name", op.cta_group)).upper().endswith("TWO") else ""
        src = "TS" if "tmem" in str(op.a_src).lower() else "SS"
        ma, mb = (f"UMMA::Major::{_major(x)}" for x in (op.a_major_mode, op.b_major_mode))
    except (AttributeError, TypeError, ValueError, DslError):
        family = None
    if family is None:
        raise DslError(f"not supported: {_op_desc(op)}")
    name = f"SM100_MMA_{family}{pair}_{src}<{','.join(types)},{m},{n},{ma},{mb}>"
    try:
        parse_umma_name(name)
    except UmmaAtomError as e:
        raise DslError(f"not supported: {_op_desc(op)} (as {name}: {e})") from None
    return name


#: DSL tcgen05 copy operation -> the shape of CuTe's SM100_TMEM_{LOAD,STORE}_<shape><N>x atoms
_TMEM_SHAPES = {"32x32b": "32dp32b", "16x64b": "16dp64b", "16x128b": "16dp128b", "16x256b": "16dp256b",
                "16x32bx2": "16dp32b"}


def tmem_copy_name(op) -> str:
    """CuTe's name of a DSL tcgen05.ld/st: ``Ld32x32bOp(repeat=x16)`` -> ``SM100_TMEM_LOAD_32dp32b16x``
    (``_16b`` with ``Pack.PACK_16b_IN_32b`` / ``Unpack.UNPACK_32b_IN_16b``)."""
    m = re.fullmatch(r"(Ld|St)(\d+x\d+b(?:x2)?)Op", type(op).__name__)
    shape = _TMEM_SHAPES.get(m.group(2)) if m else None
    if shape is None:
        raise DslError(f"not supported: tcgen05.{type(op).__name__}")
    kind = "LOAD" if m.group(1) == "Ld" else "STORE"
    packed = "16b" in str(getattr(op, "pack", None) or getattr(op, "unpack", ""))
    name = f"SM100_TMEM_{kind}_{shape}{int(op.repeat.value)}x" + ("_16b" if packed else "")
    try:
        tmem_copy_op(name)
    except SymlayoutError as e:
        raise DslError(f"not supported: tcgen05.{type(op).__name__} ({e})") from None
    return name


def _major(mode) -> str:
    """``K`` or ``MN`` of an ``OperandMajorMode``."""
    return "K" if str(getattr(mode, "name", mode)).upper().endswith("K") else "MN"


def mma_name(op) -> str:
    """CuTe's name of a DSL MMA operation (warp-level SM80/SM89, an SM90 warpgroup one, an SM100 tcgen05 one).

    Raises :class:`DslError` ``"not supported: <op>"`` for operations without an equivalent
    in symlayout's atom catalog.
    """
    n = type(op).__name__
    if is_warpgroup(op):
        return gmma_name(op)
    if is_tcgen05(op):
        return umma_name(op)
    name = None
    shape = tuple(int(x) for x in getattr(op, "shape_mnk", ()) or ())
    if n == "MmaF16BF16Op" and len(shape) == 3:
        ab, acc = op.ab_dtype.__name__, op.acc_dtype.__name__
        t = {"Float16": "F16F16", "BFloat16": "BF16BF16"}.get(ab)
        d = {"Float16": "F16", "Float32": "F32"}.get(acc)
        if t and d:
            name = f"SM80_{shape[0]}x{shape[1]}x{shape[2]}_{d}{t}{d}_TN"
    elif n == "MmaTF32Op" and len(shape) == 3:
        name = f"SM80_{shape[0]}x{shape[1]}x{shape[2]}_F32TF32TF32F32_TN"
    elif n == "MmaFP8Op" and len(shape) == 3:
        ab, acc = _FP8.get(op.ab_dtype.__name__), {"Float16": "F16", "Float32": "F32"}.get(op.acc_dtype.__name__)
        if ab and acc:
            name = f"SM89_{shape[0]}x{shape[1]}x{shape[2]}_{acc}{ab}{ab}{acc}_TN"
    elif n == "MmaUniversalOp":      # CuTe's UniversalFMA<T> (sgemm): one thread, 1x1x1
        name = f"UniversalFMA<{dtype_name(op.abacc_dtype)}>"
    if name is None or not in_catalog("mma", name):
        raise DslError(f"not supported: {_op_desc(op) if n.startswith('Mma') else n}")
    return name


def _atom_bits(atom) -> int:
    """Bits one copy moves: the atom's source value count times the value type's width."""
    L = parse_layout(_static(atom.layout_src_tv, "copy atom layout"))
    vals = L[1].size() if L.rank() > 1 else 1
    return int(vals) * int(atom.value_type.width)


def _auto_vectorizing(atom) -> bool:
    """Whether a ``CopyUniversalOp`` atom was made without ``num_bits_per_copy`` (``universal_copy<f16>``,
    not ``universal_copy<f16, 128 b>``): the DSL then vectorises as far as the layouts and the pointers'
    alignment allow, CuTe's ``AutoVectorizingCopyWithAssumedAlignment<128>``."""
    m = re.search(r"universal_copy<([^<>]*)>", str(getattr(atom, "type", "")))
    return m is not None and not re.search(r",\s*\d+\s*b$", m.group(1).strip())


#: the narrow (8-bit) ldmatrix/stmatrix ops of ``cute.nvgpu.warp``: (matrices, unpack bits) -> CuTe's name
#: (None: no CuTe C++ counterpart).  LdMatrix8x16x8bOp without unpacking is the 16-bit x{n} load (its trait
#: uses the u16 pattern, the DSL's "equivalent to LdMatrix8x8x16b").
_NARROW = {
    "LdMatrix8x16x8bOp": lambda k, b: f"SM75_U32x{k}_LDSM_N" if b is None else f"SM100_SU{b}_DU8x16_x{k}_LDSM_N",
    "LdMatrix16x16x8bOp": lambda k, b: f"SM100_U8x{8 * k}_LDSM_T" if b is None else None,
    "StMatrix16x8x8bOp": lambda k, b: f"SM100_U8x{4 * k}_STSM_T" if b is None else None,
}


def copy_name(atom) -> str:
    """CuTe's name of a DSL copy atom's operation (``atom.op``, the bits it moves)."""
    op = atom.op
    n = type(op).__name__
    name = None
    if n == "LdMatrix8x8x16bOp" and getattr(op, "unpack_bits", None) is None:
        k = int(op.num_matrices)
        name = f"SM75_U16x{2 * k}_LDSM_T" if op.transpose else f"SM75_U32x{k}_LDSM_N"
    elif n == "StMatrix8x8x16bOp" and getattr(op, "unpack_bits", None) is None:
        k = int(op.num_matrices)
        name = f"SM90_U16x{2 * k}_STSM_T" if op.transpose else f"SM90_U32x{k}_STSM_N"
    elif n in _NARROW:
        name = _NARROW[n](int(op.num_matrices), getattr(op, "unpack_bits", None))
    elif n == "CopyG2SOp":
        mode = getattr(op.cache_mode, "name", str(op.cache_mode)).upper()
        which = "GLOBAL" if "GLOBAL" in mode else "ALWAYS" if "ALWAYS" in mode else None
        if which:
            name = f"SM80_CP_ASYNC_CACHE{which}<uint{_atom_bits(atom)}_t>"
    elif n == "CopyUniversalOp" and _auto_vectorizing(atom):
        name = "AutoVectorizingCopy"
    elif n == "CopyUniversalOp":
        name = f"UniversalCopy<uint{_atom_bits(atom)}_t>"
    if name is None or not in_catalog("copy", name):
        raise DslError(f"not supported: {_op_desc(op)}" + (f" (as {name})" if name else ""))
    return name


def _perm_entry(p, extent) -> str:
    if p is None:
        return str(int(extent))
    s = strip_static(_static(p, "permutation mode"))
    m = re.fullmatch(r"(\d+):1", s)
    return m.group(1) if m else s


def _swizzle_params(sw) -> tuple[int, int, int]:
    for attrs in (("num_bits", "num_base", "num_shift"),):
        if all(hasattr(sw, a) for a in attrs):
            return tuple(int(getattr(sw, a)) for a in attrs)
    m = re.fullmatch(r"Sw?<(\d+),(\d+),(\d+)>", str(sw).replace(" ", ""))
    if not m:
        raise DslError(f"not supported: swizzle {sw}")
    return tuple(int(x) for x in m.groups())


@dataclasses.dataclass
class _Names:
    """What the DSL called one operand's pieces (for comments and counterexamples)."""
    copy: str = ""
    op: str = ""
    atom: str = ""
    smem: str = ""


@dataclasses.dataclass
class DslReport:
    """The prover's results for a DSL configuration, worded with the DSL's names."""
    toml: str
    version: int
    results: list
    left_out: list
    error: str | None = None
    names: dict = dataclasses.field(default_factory=dict)
    depends: list = dataclasses.field(default_factory=list)   # results proved only under a stronger assumption

    @property
    def ok(self) -> bool:
        return self.error is None and all(r.as_expected for r in self.results)

    def refuted(self) -> list:
        return [r for r in self.results if r.status == "refuted"]

    def explain(self) -> str:
        lines = [f"symlayout: configuration version {self.version}: "
                 f"{sum(r.status == 'proved' for r in self.results)} proved, "
                 f"{sum(r.status == 'refuted' for r in self.results)} refuted, "
                 f"{sum(r.status not in ('proved', 'refuted') for r in self.results)} other"]
        if self.error:
            lines.append(f"error: {self.error}")
        for r in self.results:
            who = f"[{r.operand}] " if r.operand else ""
            line = f"  {r.property} {who}{r.status}"
            if r.counterexample is not None:
                line += f": {r.counterexample.message}"
            elif r.detail:
                line += f": {r.detail}"
            lines.append(line)
        lines.extend(f"  not proved here: {x}" for x in self.left_out)
        lines.extend(f"  depends on assumption: {x}" for x in self.depends)
        return "\n".join(lines)

    def assert_proved(self):
        """Raise ``AssertionError`` with :meth:`explain` unless every result is as expected."""
        if not self.ok:
            raise AssertionError(self.explain())


class DslConfig:
    """A symlayout configuration built from CuTe DSL objects (call inside ``@cute.jit``).

    ``DslConfig(tiled_mma)`` then, per operand, :meth:`copy` (shared memory <-> registers),
    :meth:`g2s` (global -> shared), :meth:`s2g` (shared -> global, C).  ``label``
    arguments are the kernel's own variable names; they go into the configuration's
    comments and into every counterexample :meth:`prove` words.
    """

    def __init__(self, tiled_mma, name: str | None = None, label: str = "tiled_mma"):
        self.doc = ConfigDoc(name=name or "")
        self.names: dict[str, _Names] = {}
        self._mma = tiled_mma
        self._mma_label = label
        self._mixed_stages = False            # operands with different PIPE sizes: no [stages] count
        self.assumed: dict[str, int] = {}     # [params] symbol -> element bits: multiple_of is the front end's default
        self.stated: list[str] = []           # what the kernel itself states of a [params] symbol, and where
        self.depends: list[str] = []          # results that hold only under a stronger assumption (after prove)
        self.unchecked: list[str] = []        # what the kernel does that no table states (listed as not proved here)
        if tiled_mma is not None:             # None: a copy-only kernel ([g2r.X], [r2g.X])
            self._read_mma(tiled_mma, label)

    # ---- the TiledMma
    def _read_mma(self, tm, label):
        op = tm.op
        atom = mma_name(op)
        if is_tcgen05(op):
            self._read_umma(tm, atom, label)
            return
        vmnk = parse_layout(strip_static(_static(tm.thr_layout_vmnk, "thr_layout_vmnk")))
        nthr = vmnk[0].size()
        modes = [vmnk[i] for i in (1, 2, 3)]
        strides = []
        for m in modes:
            if any(isinstance(d, int) and d % nthr for d in _flat(m.stride)):
                raise DslError(f"{label}: thr_layout_vmnk {vmnk} is not an atom layout times {nthr} threads")
            strides.append(_map(m.stride, lambda d: d // nthr))
        layout = "(" + ",".join(str(m.shape).replace(" ", "") for m in modes) + "):(" + \
            ",".join(str(s).replace(" ", "") for s in strides) + ")"
        perm = tm.permutation_mnk
        perm = [_perm_entry(perm[i] if perm is not None else None, tm.get_tile_size(i)) for i in range(3)]
        self.doc.mma = {"atom": atom, "layout": _compact(layout), "permutation": perm}
        self.doc.table_comments["mma"] = [f"{label} = make_tiled_mma({_op_desc(op)}, {_compact(layout)}, "
                                          f"permutation_mnk=({', '.join(perm)}))"]
        self.acc_type = dtype_name(op.acc_dtype) if hasattr(op, "acc_dtype") else "float"
        # symlayout's TiledMMA against the DSL's own TV layouts
        theirs = {x: (f"the DSL's tv_layout_{x}_tiled", parse_layout(strip_static(
            _static(getattr(tm, f"tv_layout_{x}_tiled"), f"tv_layout_{x}_tiled")))) for x in "ABC"}
        self._model, problem = check_tiled_mma(self.doc.mma, theirs)
        if problem:
            raise DslError(f"{label}: {problem}")

    def _read_umma(self, tm, atom, label):
        """An SM100 TiledMma: one atom issued by one thread for the CTA (pair), no AtomLayoutMNK (the
        DSL's ``make_trivial_tiled_mma``); its TV layouts are the prover's (``prove/blackwell``)."""
        vmnk = parse_layout(strip_static(_static(tm.thr_layout_vmnk, "thr_layout_vmnk")))
        if vmnk.size() != int(getattr(tm.op.cta_group, "value", 1) or 1) or \
                any(p is not None for p in (tm.permutation_mnk or ())):
            raise DslError(f"not supported: {label} = a TiledMma of {vmnk} over {_op_desc(tm.op)} "
                           "(an SM100 atom is tiled by the CTA cluster, not by an atom layout)")
        self.doc.mma = {"atom": atom}
        self.doc.table_comments["mma"] = [f"{label} = make_trivial_tiled_mma: {_op_desc(tm.op)}"]
        self.acc_type = dtype_name(tm.op.acc_dtype)
        self._model = None

    def cluster(self, shape, label: str = "cluster_layout_vmnk") -> "DslConfig":
        """``[mma] cluster = "(x,y,z)"``: the CTA cluster an SM100 MMA runs in."""
        if self.doc.mma is None or not self.doc.mma["atom"].startswith("SM100_"):
            raise DslError(f"{label}: a CTA cluster belongs to an SM100 MMA")
        x, y, z = (int(e) for e in shape)
        if (x, y, z) != (1, 1, 1) or "2x1SM" in self.doc.mma["atom"]:
            self.doc.mma["cluster"] = f"({x},{y},{z})"
            self.doc.table_comments["mma"].append(f"cluster ({x},{y},{z}) from {label}")
        return self

    def _tile(self, x):
        m = self._model
        i, j = {"A": (0, 2), "B": (1, 2), "C": (0, 1)}[x]
        return m.tile_size(i), m.tile_size(j)

    # ---- shared-memory layouts
    def _smem(self, layout, swizzle, dtype_bits, x, label):
        text = _static(layout, f"smem layout of {x}")
        if hasattr(layout, "inner") and hasattr(layout, "outer"):
            if swizzle is not None:
                raise DslError(f"{label}: a composed layout and a pointer swizzle together")
            b, m, s = _swizzle_params(layout.inner)
            off = strip_static(str(layout.offset))
            out = f"Sw<{b},{m},{s}> o {off} o {strip_static(_static(layout.outer, 'smem layout'))}"
            return out, f"{label} (swizzle {layout.inner} on element offsets)", None
        text = strip_static(text)
        if swizzle is None:
            return text, label, None
        b, m, s = _swizzle_params(swizzle)
        el = bytes_swizzle_to_elements(b, m, s, dtype_bits)
        if el is None:
            raise DslError(f"not supported: pointer swizzle {swizzle} on {dtype_bits}-bit elements")
        align = max(128, 1 << (b + m + s))
        return (f"Sw<{el[0]},{el[1]},{el[2]}> o 0 o {text}",
                f"{label} through a pointer swizzled by {swizzle} on byte addresses (= Sw<{el[0]},{el[1]},{el[2]}> on "
                f"element offsets when the base is {align}-byte aligned)", align)

    def _stages(self, smem):
        """``[stages] count`` from the PIPE mode of a rank-3 smem layout; absent where the operands'
        counts differ (flash attention's Q and K): each layout then carries its own PIPE mode (the contract
        allows either)."""
        if self._mixed_stages:
            return
        clash = record_stages(self.doc, smem)
        if clash is not None:
            self._mixed_stages = True
            self.doc.stages = None
            self.doc.notes.append(f"no [stages]: the smem layouts have {clash[0]} and "
                                  f"{clash[1]} stages, each its own PIPE mode")
            self.doc.table_comments.pop("stages", None)
        elif self.doc.stages is not None:
            self.doc.table_comments["stages"] = ["the PIPE mode of the smem layouts"]

    def copy(self, operand: str, copy, smem, *, swizzle=None, label: str | None = None, smem_label: str | None = None,
             dtype=None, convert: bool | None = None, align: int | None = None) -> "DslConfig":
        """The copy of ``operand`` between shared memory (``smem``) and the MMA's registers.

        ``copy`` is a TiledCopy (``make_tiled_copy_A/B/C(atom, tiled_mma)`` or hand-built), a
        copy atom (meaning ``make_tiled_copy_X(atom, tiled_mma)``), or ``"AutoVectorizingCopy"``
        with ``dtype`` (``cute.autovec_copy`` of the MMA fragment, as epilogues write it).
        ``swizzle``: the Swizzle of a swizzled pointer (``get_tensor(layout, swizzle=...)``).
        For C, ``convert`` defaults to "the stored type differs from the accumulator".
        """
        x = _operand(operand)
        label = label or f"copy {x}"
        if isinstance(copy, str):
            if copy not in ("AutoVectorizingCopy", "autovec_copy"):
                raise DslError(f"not supported: {copy}")
            if dtype is None:
                raise DslError(f"{label}: AutoVectorizingCopy needs dtype=")
            atom, typ, op_desc, tiled = "AutoVectorizingCopy", dtype_name(dtype), "cute.autovec_copy", None
        else:
            catom = copy
            atom, typ, op_desc = copy_name(catom), dtype_name(catom.value_type), _op_desc(catom.op)
            tiled = copy if hasattr(copy, "layout_tv_tiled") else None
        text, smem_desc, salign = self._smem(smem, swizzle, value_type_bits(typ), x, smem_label or f"smem {x}")
        t = {"atom": atom, "type": typ, "smem": text}
        if align or salign:
            t["align"] = int(align or salign)
        how = f"make_tiled_copy_{x}"
        if tiled is not None:
            tv_text = _static(tiled.layout_tv_tiled, f"{label}.layout_tv_tiled")
            tiler_text = _static(tiled.tiler_mn, f"{label}.tiler_mn")
            mine = getattr(self._model, f"get_layout{x}_TV")()
            if tiler_extents(tiler_text) != self._tile(x) or not same_function(parse_layout(strip_static(tv_text)), mine):
                keys, rec = tiled_copy_keys(tv_text, tiler_text)
                t.update(keys)
                how = ("make_tiled_copy_tv (thr/val recovered from its TV layout and checked)" if rec is not None
                       else "a hand-built TiledCopy (its TV layout and tiler)")
        if x == "C":
            conv = convert if convert is not None else (typ != self.acc_type)
            if conv:
                t["convert"] = True
        self.doc.copy[x] = t
        self.names[x] = _Names(copy=label, op=op_desc, atom=atom, smem=smem_desc)
        self.doc.table_comments[f"copy.{x}"] = [f"DSL: {label} = {how}({op_desc}, {typ}) on {smem_desc}"
                                                + ("; accumulators converted first" if t.get("convert") else "")]
        self._stages(text)
        return self

    def _global(self, kind, x, tiled_copy, smem, swizzle, gmem, label, smem_label, contiguous, ld, transposed=False,
                ld_multiple_of=None):
        label = label or f"{kind} {x}"
        atom, typ = copy_name(tiled_copy), dtype_name(tiled_copy.value_type)
        layout, rec = tiled_copy_keys(_static(tiled_copy.layout_tv_tiled, f"{label}.layout_tv_tiled"),
                                      _static(tiled_copy.tiler_mn, f"{label}.tiler_mn"), transposed)
        if layout is None:
            raise DslError(f"{label}: no (thr, val) form to transpose")
        keys = {"atom": atom, "type": typ, **layout}
        if smem is not None and transposed:
            text, _, _ = self._smem(smem, swizzle, value_type_bits(typ), x, smem_label or f"smem {x}")
            have = self.doc.copy.get(x, {}).get("smem")
            if have is None or not _is_transpose(text, have):
                raise DslError(f"{label}: [copy.{x}]'s smem layout {have} is not the transpose of {text}")
            text = have   # the copy is written in [copy.X]'s coordinates
        elif smem is not None:
            text, smem_desc, _ = self._smem(smem, swizzle, value_type_bits(typ), x, smem_label or f"smem {x}")
            have = self.doc.copy.get(x, {}).get("smem")
            if have is not None and have != text:
                raise DslError(f"{label}: its smem layout {text} is not the one of [copy.{x}] ({have})")
            if have is None:
                keys["smem"] = text   # no [copy.X] table to carry it (a key symlayout adds)
            self._stages(text)
        else:
            text = self.doc.copy.get(x, {}).get("smem")
            if text is None:
                raise DslError(f"{label}: give smem= (no [copy.{x}] table has the smem layout)")
        if isinstance(gmem, str):
            keys["gmem"] = gmem
            note = "gmem as given"
        else:
            cmode, why = self._contiguous(x, contiguous, rec, label)
            try:
                gkeys, note = gmem_side(self.doc, x, text, cmode, why, ld or f"ld{x}", atom, typ, ld_multiple_of)
            except ValueError as e:
                raise DslError(f"{label}: {e}") from None
            keys.update(gkeys)
            if ld_multiple_of is None:   # the front end's default, not the kernel's word
                self.assumed[ld or f"ld{x}"] = value_type_bits(typ)
        getattr(self.doc, kind)[x] = keys
        desc = _op_desc(tiled_copy.op)
        self.doc.table_comments[f"{kind}.{x}"] = [
            f"DSL: {label} = make_tiled_copy_tv({desc}, {typ}, thr, val)"
            + (f", writing {smem_label or 'the smem tile'} whose transpose [copy.{x}] reads" if transposed else ""),
            f"gmem: {note}"]
        smem_name = smem_label or (self.names[x].smem if x in self.names else "") or f"the smem tile of {x}"
        self.names.setdefault(f"{kind}.{x}", _Names(copy=label, op=desc, atom=atom, smem=smem_name))
        return self

    @staticmethod
    def _contiguous(x, contiguous, rec, label) -> tuple[int, str]:
        """The contiguous mode of the gmem tile and why: as given, else the mode the copy's vectors
        run along (``rec``: its ``(thr, val)`` in the operand's coordinates), else assumed the second."""
        if contiguous is not None:
            if contiguous not in OPERAND_MODES[x]:
                raise DslError(f"{label}: contiguous={contiguous!r}: expected one of {OPERAND_MODES[x]}")
            return OPERAND_MODES[x].index(contiguous), "as given"
        mode = vector_mode(rec[1]) if rec is not None else None
        return (1, "assumed") if mode is None else (mode, "the copy's vectors run along it")

    def g2s(self, operand: str, tiled_copy, smem=None, *, swizzle=None, gmem: str | None = None, label=None,
            smem_label=None, contiguous: str | None = None, ld: str | None = None,
            transposed: bool = False, ld_multiple_of: int | None = None) -> "DslConfig":
        """The global -> shared copy of A or B (``[g2s.X]``).  ``gmem``: the gmem tile in the
        contract's notation (default: the smem tile's shape, ``contiguous`` mode of stride 1 --
        by default the mode the copy's vectors run along -- and leading dimension ``ld``).
        ``transposed=True``: the copy fills ``smem``, the transpose of the tile ``[copy.X]`` reads
        (flash-attention's V, read as V^T); it is written in ``[copy.X]``'s coordinates.
        ``ld_multiple_of``: what the kernel assumes of the leading dimension, in elements (default: the
        copy's vector, its own alignment requirement; ``coalescing`` needs rows on the 32-byte sector grid)."""
        x = _operand(operand)
        if x == "C":
            raise DslError("g2s: C is stored (use s2g)")
        return self._global("g2s", x, tiled_copy, smem, swizzle, gmem, label, smem_label, contiguous, ld, transposed,
                            ld_multiple_of)

    def s2g(self, tiled_copy, smem=None, *, swizzle=None, gmem: str | None = None, label=None, smem_label=None,
            contiguous: str | None = None, ld: str | None = None, ld_multiple_of: int | None = None) -> "DslConfig":
        """The shared -> global copy of C (``[s2g.C]``); arguments as for :meth:`g2s`."""
        return self._global("s2g", "C", tiled_copy, smem, swizzle, gmem, label, smem_label, contiguous, ld,
                            ld_multiple_of=ld_multiple_of)

    # ---- Hopper: operands the GMMA reads from shared memory, and their TMA loads
    def smem(self, operand: str, layout, dtype, *, label: str | None = None, align: int = 1024) -> "DslConfig":
        """``[smem.X]``: the (staged) smem layout a warpgroup MMA reads operand A or B from.  The
        DSL's GMMA layout atoms (``make_smem_layout_a/b``) carry the swizzle of CuTe's
        ``smem_ptr`` form: it acts on byte addresses once the kernel moves it to the pointer
        (``get_tensor(layout.outer, swizzle=layout.inner)``), as wgmma needs.  ``align``: the
        buffer's base alignment in bytes (``1024``: what SW128 buffers are given)."""
        x = _operand(operand)
        if x == "C":
            raise DslError("smem: C is not read by the GMMA from shared memory")
        label = label or f"smem {x}"
        bits = value_type_bits(dtype_name(dtype))
        if hasattr(layout, "inner") and hasattr(layout, "outer"):
            b, m, sh = _swizzle_params(layout.inner)
            text = f"Sw<{b},{m},{sh}> o smem_ptr[{bits}b](unset) o {strip_static(_static(layout.outer, label))}"
        else:
            text = strip_static(_static(layout, label))
        self.doc.smem[x] = {"type": dtype_name(dtype), "layout": text, "align": int(align)}
        self.doc.table_comments[f"smem.{x}"] = [f"DSL: {label} (swizzle on byte addresses: CuTe's smem_ptr form); "
                                                f"align {align} B assumed (the kernel's SharedStorage is not read)"]
        self.names.setdefault(f"smem.{x}", _Names(copy=label, op=_op_desc(self._mma.op), atom=self.doc.mma["atom"],
                                                  smem=label))
        self._stages(text.replace(f"smem_ptr[{bits}b](unset)", "0"))
        return self

    def tma(self, operand: str, op, gmem: str, box, *, multicast: int = 1, label: str | None = None) -> "DslConfig":
        """``[tma.X]``: ``make_tiled_tma_atom(op, gmem tensor, smem layout, box, multicast)`` of A or B;
        ``gmem``: the global tensor in the contract's notation, ``box``: the CTA tiler."""
        x = _operand(operand)
        n = type(op).__name__
        atom = {"CopyBulkTensorTileG2SOp": "SM90_TMA_LOAD",
                "CopyBulkTensorTileG2SMulticastOp": "SM90_TMA_LOAD_MULTICAST"}.get(n)
        if atom and str(getattr(getattr(op, "cta_group", None), "name", "")).upper() == "TWO":
            atom = atom.replace("SM90_TMA_", "SM100_TMA_2SM_")     # the CTA pair's box, each peer its half
        if atom is None or x == "C":
            raise DslError(f"not supported: TMA {_op_desc(op)} of {x}")
        box = "(" + ",".join(str(int(e)) for e in _flat(tuple(box))) + ")"
        t = {"atom": atom, "gmem": gmem, "box": box}
        if int(multicast) != 1:
            t["multicast"] = int(multicast)
        self.doc.tma[x] = t
        label = label or f"tma {x}"
        self.doc.table_comments[f"tma.{x}"] = [f"DSL: {label} = make_tiled_tma_atom({n}(), gmem, smem, {box}"
                                               f"{', ' + str(multicast) if int(multicast) != 1 else ''})"]
        self.names.setdefault(f"tma.{x}", _Names(copy=label, op=f"{n}()", atom=atom, smem=f"the smem tile of {x}"))
        return self

    # ---- copy-only kernels: global memory -> shared memory (the staging of a tile, no MMA)
    def stage_copy(self, x: str, tiled_copy, gmem, smem_tensor, *, atom=None, label: str, gmem_label: str,
                   smem_label: str, gmem_align: int, smem_align: int, swizzle=None,
                   at: int | None = None) -> "DslConfig":
        """``[g2s.X]`` of a kernel without a TiledMma (docs/configs.md: ``X`` names the tensor): the copy
        ``cute.copy(atom, tiled_copy's partition of gmem, its partition of smem_tensor)`` -- ``atom`` the
        instruction the kernel gives ``cute.copy`` (QuACK: a ``cp.async`` atom on a TiledCopy's partitions),
        else the TiledCopy's own; ``gmem`` the tile's static layout; ``smem_tensor``'s layout (and pointer
        swizzle) the smem tile; the alignments as the DSL knows them (``gmem_align``, ``smem_align``)."""
        name, typ = copy_name(atom if atom is not None else tiled_copy), dtype_name(tiled_copy.value_type)
        tiler = _static(tiled_copy.tiler_mn, f"{label}.tiler_mn")
        g = strip_static(_static(gmem, f"{gmem_label} (the gmem tile {label} partitions)"))
        layout, _ = tiled_copy_keys(_static(tiled_copy.layout_tv_tiled, f"{label}.layout_tv_tiled"), tiler)
        text, smem_desc, salign = self._smem(smem_tensor.layout, swizzle, value_type_bits(typ), x, smem_label)
        self.doc.g2s[x] = {"atom": name, "type": typ, **layout, "gmem": g, "smem": text,
                           "align": int(max(smem_align, salign or 0)), "gmem_align": int(gmem_align)}
        op = _op_desc((atom if atom is not None else tiled_copy).op)
        self.doc.table_comments[f"g2s.{x}"] = [
            f"DSL: cute.copy({op}{' at line ' + str(at) if at else ''}) of {label}'s partitions, {typ}: gmem "
            f"{gmem_label} -> smem {smem_desc}",
            f"gmem_align {gmem_align} B, align {max(smem_align, salign or 0)} B: the pointers' alignment as the DSL "
            "knows it"]
        self.names.setdefault(f"g2s.{x}", _Names(copy=label, op=op, atom=name, smem=smem_label))
        return self

    # ---- copy-only kernels: global memory <-> registers
    def reg_copy(self, kind: str, x: str, tiled_copy, gmem, *, label: str, gmem_label: str,
                 gmem_align: int = 16, align_from: str = "the fake tensors' assumed_align", atom: str | None = None,
                 at: int | None = None) -> "DslConfig":
        """``[g2r.X]`` (``kind="g2r"``) or ``[r2g.X]``: ``tiled_copy`` between the registers and the gmem tile
        ``gmem`` (the tensor the kernel partitions, its layout static) of the tensor ``x`` (an identifier).
        ``gmem_align``: the tile's base alignment in bytes, ``align_from``: where it comes from.  ``atom``:
        the copy's operation when it is not the TiledCopy's own (``"AutoVectorizingCopy"``: the kernel copies
        slices of the TiledCopy's partition with ``cute.autovec_copy``, at line ``at``)."""
        by = f"cute.autovec_copy at line {at} of slices of the partition of " if atom else ""
        atom, typ = atom or copy_name(tiled_copy), dtype_name(tiled_copy.value_type)
        tiler = _static(tiled_copy.tiler_mn, f"{label}.tiler_mn")
        g = strip_static(_static(gmem, f"{gmem_label} (the gmem tile {label} partitions)"))
        row = _as_row(tiler, g)
        if row is not None:
            tiler, g = row
        layout, _ = tiled_copy_keys(_static(tiled_copy.layout_tv_tiled, f"{label}.layout_tv_tiled"), tiler)
        getattr(self.doc, kind)[x] = {"atom": atom, "type": typ, **layout, "gmem": g, "gmem_align": int(gmem_align)}
        desc = _op_desc(tiled_copy.op)
        self.doc.table_comments[f"{kind}.{x}"] = [
            f"DSL: {by}{label} = TiledCopy of {desc}, {typ}; gmem: {gmem_label}, the tile it partitions",
            f"gmem_align {gmem_align} B: {align_from}"]
        self.names.setdefault(f"{kind}.{x}", _Names(copy=label, op=desc, atom=atom, smem=gmem_label))
        return self

    # ---- Blackwell: the accumulator in Tensor Memory
    def tmem(self, columns: int, stages: int = 1, *, label: str = "tmem") -> "DslConfig":
        """``[tmem]``: the columns the CTA allocates (``tcgen05.alloc``) and the accumulator's stages."""
        self.doc.tmem = {"columns": int(columns), "accumulator_stages": int(stages)}
        self.doc.table_comments["tmem"] = [f"DSL: {label}"]
        return self

    def tmem_copy(self, op, tile, warps, *, label: str = "tiled_copy_t2r") -> "DslConfig":
        """``[tmem_copy.C]``: ``make_tmem_copy(op, accumulator subtile)`` run by the hardware warps ``warps``."""
        atom = tmem_copy_name(op)
        tile = "(" + ",".join(str(int(e)) for e in _flat(tuple(tile))) + ")"
        self.doc.tmem_copy["C"] = {"atom": atom, "tile": tile, "warps": [int(w) for w in warps]}
        self.doc.table_comments["tmem_copy.C"] = [f"DSL: {label} = make_tmem_copy({_op_desc(op)}, {tile} of the "
                                                  f"accumulator), warps {', '.join(str(int(w)) for w in warps)}"]
        self.names.setdefault("tmem_copy.C", _Names(copy=label, op=_op_desc(op), atom=atom, smem="the accumulator"))
        return self

    # ---- assumptions
    def assume(self, name: str, multiple_of: int) -> "DslConfig":
        """State ``name % multiple_of == 0`` (``--assume ldA%16==0``) of a ``[params]`` symbol."""
        if name not in self.doc.params:
            raise DslError(f"--assume {name}%{multiple_of}==0: no parameter {name} "
                           f"(the parameters: {', '.join(self.doc.params) or 'none'})")
        self.doc.params[name] = dict(self.doc.params[name], multiple_of=int(multiple_of))
        self.assumed.pop(name, None)
        return self

    def _under_assumption(self, r, cfg_text: str, properties, method, timeout_s):
        """The result ``r`` (refuted at a front-end default of a parameter) proved again under the
        weakest stronger ``multiple_of`` that makes it hold, ``None`` if none does
        (:func:`~symlayout.frontends.assumptions.under_stronger`)."""
        found = under_stronger(self._named_doc(), self.assumed, r, [r.property], method, timeout_s)
        if found is None:
            return None
        self.depends.append(found[1])
        return found[0]

    # ---- output
    def _named_doc(self) -> ConfigDoc:
        d = self.doc
        if not d.name:
            parts = [f"{x}: {n.copy}" for x, n in self.names.items() if len(x) == 1]
            d.name = f"CuTe DSL: {self._mma_label}" + (f" ({'; '.join(parts)})" if parts else "")
        if not d.comments:
            d.comments = ["built by symlayout.cute_dsl from CuTe DSL objects at trace time"]
        return d

    @property
    def name(self) -> str:
        """The configuration's ``name`` (given, or made of the DSL labels)."""
        return self._named_doc().name

    def toml(self) -> str:
        """The configuration (contract version 2 where the kernel needs it)."""
        return self._named_doc().to_toml()

    def to_dict(self) -> dict:
        return self._named_doc().to_dict()

    def prove(self, properties=None, version: str | int = "auto", expect_refuted=(), method: str = "auto",
              timeout_s: float | None = None, name_assumptions: bool = False) -> DslReport:
        """Prove the configuration.  ``version="auto"``: the whole file when the prover reads
        every table of it, else its version-1 part (the report lists what that leaves out).
        ``expect_refuted``: properties that must come out refuted (a regression of a known pitfall).
        ``method``, ``timeout_s``: as for :func:`symlayout.prove.engine.prove_config`.
        ``name_assumptions``: a result refuted only under the front end's default leading-dimension
        assumption (``g2s``/``s2g`` without ``ld_multiple_of``) is proved again under the weakest
        stronger ``multiple_of`` that makes it hold and reported as depending on it
        (:attr:`DslReport.depends`, ``--assume ldA%16==0`` states it); ``symlayout dsl`` does this."""
        doc = dataclasses.replace(self._named_doc())
        if expect_refuted:
            doc.expect = {"refuted": sorted(expect_refuted)}
        text, left, used = doc.to_toml(), list(self.unchecked), 2
        cfg = None
        if version in ("auto", 2):
            try:
                cfg = loads_config(text, path="<cute_dsl>")
            except ConfigError as e:
                if version == 2:
                    return DslReport(text, 2, [], [], error=str(e), names=dict(self.names))
                left.append(f"the whole file ({e})")
        if cfg is None:
            v1, left1 = doc.version1()
            text, used = v1.to_toml(), 1
            left.extend(left1)
            try:
                cfg = loads_config(text, path="<cute_dsl>")
            except ConfigError as e:
                return DslReport(text, 1, [], left, error=str(e), names=dict(self.names))
        rep = prove_config(cfg, properties=properties, method=method, timeout_s=timeout_s)
        results = [self._dsl_words(r) for r in rep.results]
        self.depends = []
        if name_assumptions and used == 2 and self.assumed:
            results = [(self._under_assumption(r, text, properties, method, timeout_s) or r)
                       if r.status == "refuted" and r.expected != "refuted" else r for r in results]
        return DslReport(text, used, results, left, error=rep.error, names=dict(self.names), depends=list(self.depends))

    def _dsl_words(self, r):
        """The result with its counterexample worded in the DSL's names."""
        n = self.names.get(r.operand or "")
        if n is None:
            return r
        def words(msg: str) -> str:
            if n.atom and n.atom in msg:
                msg = msg.replace(n.atom, f"{n.op} (CuTe {n.atom})")
            return f"{r.operand}: {n.copy} = {n.op} on {n.smem}: {msg}"
        r = dataclasses.replace(r)
        if r.counterexample is not None:
            cex = dataclasses.replace(r.counterexample, message=words(r.counterexample.message),
                                      extra=dict(r.counterexample.extra))
            cex.extra["dsl"] = {"copy": n.copy, "op": n.op, "smem": n.smem, "tiled_mma": self._mma_label}
            r.counterexample = cex
        if r.detail:
            r.detail = words(r.detail)
        return r


def _as_row(tiler: str, gmem: str) -> tuple[str, str] | None:
    """A 1-D TiledCopy over a 1-D gmem tile (CUTLASS's ``cta_norm``: one row of N elements) as the row
    ``(1, N)`` of the contract's (M, N) tile: ``(tiler, gmem)`` in that form, ``None`` if not 1-D.  The
    TV layout is unchanged: the column-major index of ``(0, n)`` in a ``(1, T)`` tile is ``n``.

    >>> _as_row("(1024:1,)", "4096:1"), _as_row("(1024:1)", "(4096):(1)")
    (('(1,1024)', '(1,4096):(4096,1)'), ('(1,1024)', '(1,4096):(4096,1)'))
    >>> _as_row("(16:1,256:1)", "(16,256):(4096,1)") is None
    True
    """
    try:
        lay = parse_layout(gmem)
        t = parse(strip_static(tiler).replace(",)", ")"))
    except Exception:  # noqa: BLE001 - a form the parser does not read: not a 1-D copy we can tell
        return None
    t = t if not isinstance(t, tuple) else t[0] if len(t) == 1 else None
    if lay.rank() != 1 or not isinstance(t, (int, Layout)):
        return None
    extent = t if isinstance(t, int) else t.size()
    if isinstance(t, Layout) and not same_function(t, Layout(extent)):
        return None
    strides = list(_flat(lay.stride))
    if len(strides) != 1 or not isinstance(strides[0], int):
        return None
    n, d = it.product(lay.shape), strides[0]
    return f"(1,{extent})", f"(1,{n}):({n * d},{d})"


def _is_transpose(a: str, b: str) -> bool:
    """``b(n, k) == a(k, n)`` everywhere (rank-2 layouts in the contract's notation), or
    ``b(n, k, p) == a(k, n, p)`` for staged (rank-3) ones: the transpose of every stage."""
    A, B = parse(a), parse(b)
    if A.rank() != B.rank() or A.rank() not in (2, 3):
        return False
    m, n, *pipe = it.product_each(A.shape)
    if tuple(it.product_each(B.shape)) != (n, m, *pipe):
        return False
    swap = Layout((n, m, *pipe), (m, 1, *([m * n] if pipe else [])))
    return function_table(composition(A, swap)) == function_table(B)


def _operand(x) -> str:
    x = str(x).upper()
    if x not in OPERAND_MODES:
        raise DslError(f"operand {x!r}: expected A, B or C")
    return x


def _flat(t):
    if isinstance(t, tuple):
        for e in t:
            yield from _flat(e)
    else:
        yield t


def _map(t, f):
    return tuple(_map(e, f) for e in t) if isinstance(t, tuple) else f(t)


def _compact(s: str) -> str:
    return s.replace(" ", "")
