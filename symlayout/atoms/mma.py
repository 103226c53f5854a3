"""MMA atoms: CuTe's ``MMA_Atom<Op>`` (MMA_Traits + the operation's registers and PTX).

Data: ``symlayout/atoms/data/mma.json``.  Layout conventions (CuTe's): ALayout maps
``(tid, vid) -> m + M*k``, BLayout ``(tid, vid) -> n + N*k``, CLayout
``(tid, vid) -> m + M*n`` (column-major flat indices into the atom's tiles).

>>> a = get_mma_atom("SM80_16x8x16_F16F16F16F16_TN")
>>> str(a.a_layout), a.a_regs, a.ptx
('((4,8),(2,2,2)):((32,1),(16,8,128))', Registers(type='uint32_t', count=4), 'mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16')
"""
from __future__ import annotations

import functools
import importlib
import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping

from ..errors import AtomError
from ..algebra.layout import Layout
from ..algebra.notation import parse_layout
from .catalog import Catalog
from .types import Registers, canonical_type, value_type_bits, value_type_info


@functools.lru_cache(maxsize=None)
def _catalog() -> Catalog:
    return Catalog("mma", "atoms", "MMA atom")


def _arch_sm(arch: str | None) -> int:
    if not arch:
        return 0
    return int("".join(ch for ch in arch.split("_", 1)[1] if ch.isdigit()))


@dataclass(frozen=True)
class MMAAtom:
    """One MMA atom as CuTe's ``MMA_Atom<Op>`` sees it.

    ``*_layout`` are :class:`~symlayout.algebra.layout.Layout` objects (TV layouts), the
    value types are canonical names from ``types.json``; ``frg_type_a/b`` differ
    from the value types only for GMMA's shared-memory descriptors;
    ``d_regs`` .. ``c_regs`` are the operation's register arrays (``d_regs`` is
    ``None`` for GMMA, which accumulates in C).  ``arch`` is the minimum
    architecture (``"sm_80"``, ``"sm_90a"``; ``None`` for UniversalFMA).

    >>> a = get_mma_atom("SM70_8x8x4_F32F16F16F32_NT")
    >>> str(a.thr_id), a.val_type_c, a.c_regs.count, a.arch
    ('(4,2):(1,16)', 'float', 8, 'sm_70')
    """
    name: str
    shape_mnk: tuple
    thr_id: Layout
    a_layout: Layout
    b_layout: Layout
    c_layout: Layout
    val_type_d: str
    val_type_a: str
    val_type_b: str
    val_type_c: str
    frg_type_a: str
    frg_type_b: str
    d_regs: Registers | None
    a_regs: Registers | None
    b_regs: Registers | None
    c_regs: Registers | None
    ptx: str | None
    arch: str | None
    ptx_model: Mapping[str, Any] | None = field(default=None, compare=False)

    kind = "mma"

    @property
    def min_sm(self) -> int:
        """Minimum SM version as an int (``0`` = any).

        >>> get_mma_atom("SM90_64x8x16_F16F16F16_SS").min_sm
        90
        """
        return _arch_sm(self.arch)

    @property
    def num_threads(self) -> int:
        """``size(ThrID)``.

        >>> get_mma_atom("SM90_64x8x16_F16F16F16_RS").num_threads
        128
        """
        return self.thr_id.size()

    def layout(self, operand: str) -> Layout:
        """The TV layout of operand ``"A"``, ``"B"`` or ``"C"``.

        >>> print(get_mma_atom("SM61_DP4A").layout("A"))
        (1,4):(0,1)
        """
        try:
            return {"A": self.a_layout, "B": self.b_layout, "C": self.c_layout, "D": self.c_layout}[operand.upper()]
        except (KeyError, AttributeError):
            raise AtomError(f"{self.name}: operand must be 'A', 'B' or 'C', got {operand!r}") from None

    def to_json(self) -> dict:
        """Catalog record: name, kind, shape_mnk, thr_id, a/b/c layouts (strings), types, registers, ptx.

        >>> get_mma_atom("UniversalFMA<float>").to_json()["c_layout"]
        '(1,1):(0,0)'
        """
        def regs(r):
            return None if r is None else {"type": r.type, "count": r.count}
        return {
            "name": self.name, "kind": "mma", "shape_mnk": list(self.shape_mnk),
            "thr_id": str(self.thr_id), "a_layout": str(self.a_layout),
            "b_layout": str(self.b_layout), "c_layout": str(self.c_layout),
            "value_types": {"D": self.val_type_d, "A": self.val_type_a, "B": self.val_type_b, "C": self.val_type_c},
            "registers": {"D": regs(self.d_regs), "A": regs(self.a_regs), "B": regs(self.b_regs),
                          "C": regs(self.c_regs)},
            "ptx": self.ptx, "arch": self.arch,
            "ptx_model": None if self.ptx_model is None else dict(self.ptx_model),
        }


def _regs(x) -> Registers | None:
    if x is None:
        return None
    return Registers(canonical_type(x[0]), int(x[1]))


def _build(entry: dict) -> MMAAtom:
    cat = _catalog()

    def lay(key):
        return parse_layout(cat.resolve_layout(entry[key]))
    types = entry["types"]
    frg = entry.get("frg_types", {})
    regs = entry["regs"]
    pm = entry.get("ptx_model")
    return MMAAtom(
        name=entry["name"], shape_mnk=tuple(int(x) for x in entry["shape_mnk"]),
        thr_id=lay("thr_id"), a_layout=lay("a_layout"), b_layout=lay("b_layout"), c_layout=lay("c_layout"),
        val_type_d=canonical_type(types["D"]), val_type_a=canonical_type(types["A"]),
        val_type_b=canonical_type(types["B"]), val_type_c=canonical_type(types["C"]),
        frg_type_a=frg.get("A", canonical_type(types["A"])), frg_type_b=frg.get("B", canonical_type(types["B"])),
        d_regs=_regs(regs.get("D")), a_regs=_regs(regs.get("A")), b_regs=_regs(regs.get("B")),
        c_regs=_regs(regs.get("C")), ptx=entry.get("ptx"), arch=entry.get("arch"),
        ptx_model=None if pm is None else MappingProxyType(dict(pm)),
    )


#: atom families built from their name outside the catalog, ``(is_member(name), build(name))``: the SM100
#: UMMA atoms and the SM120 mma.sync atoms (their modules register themselves; they import this module, so
#: it imports them only when a name is looked up: :func:`_named_families`)
NAMED_FAMILIES: list = []
FAMILY_MODULES = ("umma", "sm120")


@functools.cache
def _import_families() -> None:
    for mod in FAMILY_MODULES:
        importlib.import_module(f"{__package__}.{mod}")


def _named_families() -> list:
    """:data:`NAMED_FAMILIES`, every family module imported once (a name is found whichever modules the caller
    happened to import before)."""
    _import_families()
    return NAMED_FAMILIES


def register_family(is_member, build) -> None:
    """Let :func:`get_mma_atom` build the atoms whose names ``is_member`` accepts with ``build``."""
    if (is_member, build) not in NAMED_FAMILIES:
        NAMED_FAMILIES.append((is_member, build))


@functools.lru_cache(maxsize=None)
def get_mma_atom(name: str) -> MMAAtom:
    """The :class:`MMAAtom` called ``name`` (CuTe's spelling; cached).

    GMMA names take an optional ``<GMMA::Major::K,GMMA::Major::K>`` suffix (the
    majors do not change any layout; register-sourced A must be K-major);
    ``UniversalFMA<D[,A,B,C]>`` takes CuTe's defaults.  Unknown names raise
    :class:`~symlayout.errors.AtomError` naming the closest known atom.

    >>> print(get_mma_atom("SM90_64x24x16_F32BF16BF16_SS<GMMA::Major::K,GMMA::Major::MN>").c_layout)
    ((4,8,4),(2,2,3)):((128,1,16),(64,8,512))
    >>> get_mma_atom("UniversalFMA<half_t>").name
    'UniversalFMA<half_t,half_t,half_t,half_t>'
    """
    for is_member, build in _named_families():
        if is_member(name):
            return build(name)
    try:
        return _build(_catalog().lookup(name, hint=False))   # (the hint only when the name is really unknown)
    except AtomError:
        if not name.strip().replace("cute::", "").replace("SM90::GMMA::", "").startswith("SM90_64x"):
            raise _catalog_error(name) from None
        try:
            a = gmma_mma_atom(name)
        except AtomError:
            raise _catalog_error(name) from None
        if a.val_type_a in ("half_t", "bfloat16_t"):
            raise _catalog_error(name) from None  # the catalog holds every 16-bit GMMA atom: its message stands
        if "_TN" not in a.name:                # CuTe names every non-16-bit GMMA operation ..._TN (K-major only)
            raise AtomError(f"unknown MMA atom {name!r}: CuTe's {a.val_type_a} GMMA operations are K-major only, "
                            f"named ..._{'SS' if '_SS' in a.name else 'RS'}_TN") from None
        return _with_wgmma_model(a)


def _catalog_error(name: str) -> AtomError:
    """The catalog's own error for an unknown ``name``, with its "did you mean" hint."""
    try:
        _catalog().lookup(name)
    except AtomError as e:
        return e
    raise AssertionError(f"{name!r} resolves in the catalog")  # pragma: no cover  (called after it did not)


def _with_wgmma_model(a: MMAAtom) -> MMAAtom:
    """A GMMA atom built by :func:`~symlayout.atoms.gmma.gmma_mma_atom` with the catalog's ``ptx_model`` keys."""
    from dataclasses import replace
    n = a.shape_mnk
    ptx = a.ptx.split(".")
    ma, mb = gmma_majors(a.name)
    pm = {"instr": "wgmma", "shape": f"m{n[0]}n{n[1]}k{n[2]}", "atype": ptx[-2], "btype": ptx[-1], "ctype": ptx[-3],
          "a_source": "smem" if a.frg_type_a.startswith("GMMA::smem_desc") else "reg",
          "tnspA": f"GMMA::Major::{ma}", "tnspB": f"GMMA::Major::{mb}"}
    return replace(a, ptx_model=MappingProxyType(pm))


def mma_atom_names() -> list[str]:
    """Names of every catalogued MMA atom (GMMA without the optional majors suffix).

    >>> names = mma_atom_names()
    >>> "SM61_DP4A" in names, "SM90_64x256x16_F32F16F16_RS" in names, len(names)
    (True, True, 249)
    """
    return _catalog().names()


# ---------------------------------------------------------------------------
# GMMA MMA atoms of every type, from the trait definitions (mma_traits_sm90_gmma.hpp)
# ---------------------------------------------------------------------------

_NAME_RE = re.compile(r"^(?:cute::)?(?:SM90::GMMA::)?SM90_64x(\d+)x(\d+)_([A-Z0-9]+?)_(SS|RS)(_TN)?(_SATURATE)?"
                      r"\s*(?:<(.*)>)?\s*$")
_TYPE_CODES = {"F16": "half_t", "BF16": "bfloat16_t", "F32": "float", "TF32": "tfloat32_t", "E4M3": "float_e4m3_t",
               "E5M2": "float_e5m2_t", "S32": "int32_t", "S8": "int8_t", "U8": "uint8_t"}


def _split_types(code: str) -> list[str]:
    out = []
    while code:
        for c in sorted(_TYPE_CODES, key=len, reverse=True):
            if code.startswith(c):
                out.append(c)
                code = code[len(c):]
                break
        else:
            raise AtomError(f"GMMA atom: cannot read the type code {code!r}")
    return out


def _a_rs_layout(k: int) -> str:
    return {16: "((4,8,4),(2,2,2)):((128,1,16),(64,8,512))", 8: "((4,8,4),(2,2)):((64,1,16),(8,256))",
            32: "((4,8,4),(4,2,2)):((256,1,16),(64,8,1024))"}[k]


def _ab_layout(mn: int, k: int) -> str:
    return f"(128,({mn},{k})):(0,(1,{mn}))"


def _c_layout(n: int) -> str:
    return f"((4,8,4),(2,2,{n // 8})):((128,1,16),(64,8,512))"


@functools.lru_cache(maxsize=None)
def gmma_mma_atom(name: str):
    """The :class:`~symlayout.atoms.mma.MMAAtom` of any SM90 GMMA atom (16-bit,
    tf32, fp8 and 8-bit integer; SS and RS), from the trait definitions
    (``ABLayout``, ``ALayout_64xK``, ``CLayout_64xN``).

    >>> a = gmma_mma_atom("SM90_64x128x32_F32E4M3E5M2_SS_TN")
    >>> a.shape_mnk, str(a.b_layout), a.val_type_b, a.c_regs
    ((64, 128, 32), '(128,(128,32)):(0,(1,128))', 'float_e5m2_t', Registers(type='float', count=64))
    >>> str(gmma_mma_atom("SM90_64x16x8_F32TF32TF32_RS_TN").a_layout)
    '((4,8,4),(2,2)):((64,1,16),(8,256))'
    """
    m = _NAME_RE.match(name)
    if not m:
        raise AtomError(f"not an SM90 GMMA atom name: {name!r}")
    n, k = int(m.group(1)), int(m.group(2))
    codes = _split_types(m.group(3))
    if len(codes) != 3:
        raise AtomError(f"GMMA atom {name!r}: expected three type codes (D, A, B)")
    td, ta, tb = (_TYPE_CODES[c] for c in codes)
    ss = m.group(4) == "SS"
    tn = bool(m.group(5))
    args = [a.strip() for a in (m.group(7) or "").split(",") if a.strip()]
    majors = ["GMMA::Major::K", "GMMA::Major::K"]
    if not tn:
        for i, a in enumerate(args[:2]):
            majors[i] = "GMMA::Major::" + a.split("::")[-1]
    if not ss and majors[0] != "GMMA::Major::K":
        raise AtomError(f"{name}: register-sourced A must be K-major")
    bits = value_type_bits(ta)
    if 32 * 8 // bits != k or not 8 <= n <= 256 or n % 8:
        raise AtomError(f"{name}: shape 64x{n}x{k} does not fit {ta}")
    f16acc = td == "half_t"
    creg = Registers("uint32_t", n // 4) if f16acc else Registers("uint32_t" if td == "int32_t" else "float", n // 2)
    base = f"SM90_64x{n}x{k}_{m.group(3)}_{m.group(4)}{m.group(5) or ''}{m.group(6) or ''}"
    shown = base if tn or not args else f"{base}<{majors[0]},{majors[1]}>"
    ptx = (f"wgmma.mma_async.sync.aligned.m64n{n}k{k}.{value_type_info(td)['ptx']}."
           f"{value_type_info(ta)['ptx']}.{value_type_info(tb)['ptx']}")
    return MMAAtom(
        name=shown, shape_mnk=(64, n, k), thr_id=parse_layout("128:1"),
        a_layout=parse_layout(_ab_layout(64, k) if ss else _a_rs_layout(k)),
        b_layout=parse_layout(_ab_layout(n, k)), c_layout=parse_layout(_c_layout(n)),
        val_type_d=canonical_type(td), val_type_a=canonical_type(ta), val_type_b=canonical_type(tb),
        val_type_c=canonical_type(td),
        frg_type_a=f"GMMA::smem_desc<{majors[0]}>" if ss else canonical_type(ta),
        frg_type_b=f"GMMA::smem_desc<{majors[1]}>",
        d_regs=None, a_regs=Registers("uint64_t", 1) if ss else Registers("uint32_t", 4),
        b_regs=Registers("uint64_t", 1), c_regs=creg, ptx=ptx, arch="sm_90a")


def gmma_majors(name: str) -> tuple[str, str]:
    """``(major A, major B)`` ("K"/"MN") of a GMMA atom name (``_TN`` atoms are K, K).

    >>> gmma_majors("SM90_64x64x16_F16F16F16_SS<GMMA::Major::MN,GMMA::Major::K>"), gmma_majors("SM90_64x8x8_F32TF32TF32_SS_TN")
    (('MN', 'K'), ('K', 'K'))
    """
    a = gmma_mma_atom(name)
    return tuple("MN" if f.endswith("MN>") else "K" for f in (a.frg_type_a if a.frg_type_a.startswith("GMMA") else
                                                               "GMMA::smem_desc<GMMA::Major::K>", a.frg_type_b))
