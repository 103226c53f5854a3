"""Which member of a traits type plays which role: conventions, and configurations built from them.

Kernel libraries name their tiling members by convention.  A *profile* maps
roles to member paths for one or more configuration documents (a TiledMMA and
its operands; a kernel with two GEMMs sharing one TiledMMA, as flash-attention's
forward pass, gives two documents):

* ``fa2_fwd`` -- flash-attention 2's ``Flash_fwd_kernel_traits``: ``qk`` (S = Q K^T:
  A = ``SmemLayoutQ`` through ``SmemCopyAtom``, B = ``SmemLayoutKV`` through
  ``SmemCopyAtom``, both loaded by ``GmemTiledCopyQKV``) and ``pv`` (O = P V:
  B = ``SmemLayoutVtransposed`` through ``SmemCopyAtomTransposed``, loaded by
  ``GmemTiledCopyQKV`` into the untransposed tile; C = ``SmemLayoutO`` through
  ``SmemCopyAtomO``, converted from ``ElementAccum``, stored by ``GmemTiledCopyO``).
* ``cutlass_sm80`` -- CUTLASS's SM80 ``CollectiveMma`` (``TiledMma``, ``SmemLayoutA/B``
  with their PIPE mode, ``SmemCopyAtomA/B``, ``GmemTiledCopyA/B``, ``StrideA/B``,
  ``DispatchPolicy::Stages``), directly or as the ``CollectiveMainloop`` member of a
  configuration type such as ``DefaultGemmConfigurationToCutlass3Types``.
* ``generic`` -- ``TiledMma`` and, per operand X in A, B, C: ``SmemLayoutX``,
  ``SmemCopyAtomX`` (or a hand-built ``SmemTiledCopyX``), ``GmemTiledCopyX``, ``StrideX``.

Roles are ``X.smem``, ``X.copy``, ``X.g2s`` (for C the shared -> global copy),
``X.stride``, ``mma``, ``stages``, ``accum`` (the accumulator's stored type
source), each optionally prefixed by a document key (``pv:B.copy``).  A role's
value may end in ``^T``: the member acts on the transposed tile of the operand
(flash-attention loads V with the Q/K copy, then reads it as V^T).

:func:`build_documents` turns a :class:`~symlayout.frontends.cute_cpp.probe.Probe` into
:class:`~symlayout.frontends.document.ConfigDoc`\\ s through the step every front end
shares (:mod:`symlayout.frontends.tables`): each TiledMMA's ``get_layoutA/B/C_TV`` checked
against symlayout's own model, ``make_tiled_copy(atom, thr, val)`` arguments recovered
(checked to rebuild the same copy).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...algebra.notation import parse_layout
from ...atoms import canonical_type
from ..document import LD_MAX, ConfigDoc, strip_static
from ..tables import (OPERAND_MODES, check_tiled_mma, gmem_side, in_catalog, record_stages, smem_tile_shape,
                      tiled_copy_keys, vector_mode)
from .probe import ExtractError, Probe, op_name, split_args, value_type_name

__all__ = ["DocRoles", "PROFILES", "profile_docs", "probe_paths", "detect_profile", "apply_overrides",
           "build_documents", "LD_MAX"]

@dataclass
class DocRoles:
    """The member path of each role of one configuration document."""
    key: str
    title: str
    roles: dict = field(default_factory=dict)     # "mma", "A.smem", "A.copy", "A.g2s", "A.stride", "stages", ...
    ld: dict = field(default_factory=dict)        # operand -> leading-dimension symbol
    notes: list = field(default_factory=list)

    def get(self, role):
        return self.roles.get(role)


def _fa2_fwd() -> list[DocRoles]:
    return [
        DocRoles("qk", "S = Q K^T", {
            "mma": "TiledMma",
            "A.smem": "SmemLayoutQ", "A.copy": "SmemCopyAtom", "A.g2s": "GmemTiledCopyQKV",
            "B.smem": "SmemLayoutKV", "B.copy": "SmemCopyAtom", "B.g2s": "GmemTiledCopyQKV",
        }, {"A": "ldQ", "B": "ldK"}, ["the S accumulators stay in registers (softmax, then P = A of the second GEMM)"]),
        DocRoles("pv", "O = P V, and the O epilogue", {
            "mma": "TiledMma",
            "B.smem": "SmemLayoutVtransposed", "B.copy": "SmemCopyAtomTransposed", "B.g2s": "GmemTiledCopyQKV^T",
            "C.smem": "SmemLayoutO", "C.copy": "SmemCopyAtomO", "C.g2s": "GmemTiledCopyO", "accum": "ElementAccum",
        }, {"B": "ldV", "C": "ldO"}, ["A = P comes from the S accumulators in registers (convert_type), not through a copy"]),
    ]


def _cutlass_sm80(prefix: str) -> list[DocRoles]:
    r = {"mma": f"{prefix}TiledMma", "stages": f"{prefix}DispatchPolicy::Stages"}
    for x in "AB":
        r.update({f"{x}.smem": f"{prefix}SmemLayout{x}", f"{x}.copy": f"{prefix}SmemCopyAtom{x}",
                  f"{x}.g2s": f"{prefix}GmemTiledCopy{x}", f"{x}.stride": f"{prefix}Stride{x}"})
    return [DocRoles("mainloop", "the SM80 multistage mainloop", r, {"A": "ldA", "B": "ldB"})]


def _cutlass_sm90(prefix: str) -> list[DocRoles]:
    r = {"mma": f"{prefix}TiledMma", "stages": f"{prefix}DispatchPolicy::Stages"}
    for x in "AB":
        r.update({f"{x}.smem": f"{prefix}SmemLayout{x}", f"{x}.tma": f"{prefix}GmemTiledCopy{x}",
                  f"{x}.stride": f"{prefix}Stride{x}"})
    return [DocRoles("mainloop", "the SM90 TMA + GMMA mainloop", r, {"A": "ldA", "B": "ldB"})]


def _generic() -> list[DocRoles]:
    r = {"mma": "TiledMma", "stages": "kStages"}
    for x in "ABC":
        r.update({f"{x}.smem": f"SmemLayout{x}", f"{x}.copy": f"SmemCopyAtom{x}", f"{x}.g2s": f"GmemTiledCopy{x}",
                  f"{x}.stride": f"Stride{x}"})
    return [DocRoles("main", "TiledMMA and its copies", r, {"A": "ldA", "B": "ldB", "C": "ldC"})]


#: profile name -> its documents
PROFILES = {
    "fa2_fwd": _fa2_fwd,
    "cutlass_sm80": lambda: _cutlass_sm80("CollectiveMainloop::"),
    "cutlass_sm80_collective": lambda: _cutlass_sm80(""),
    "cutlass_sm90": lambda: _cutlass_sm90("CollectiveMainloop::"),
    "cutlass_sm90_collective": lambda: _cutlass_sm90(""),
    "generic": _generic,
}

#: members that tell a profile, in the order profiles are tried
_DETECT = (
    ("fa2_fwd", ("SmemLayoutQ", "SmemLayoutKV", "TiledMma")),
    ("cutlass_sm90", ("CollectiveMainloop::SmemLayoutA", "CollectiveMainloop::TiledMma",
                      "CollectiveMainloop::TmaTransactionBytes")),
    ("cutlass_sm90_collective", ("SmemLayoutA", "TiledMma", "DispatchPolicy::Stages", "TmaTransactionBytes")),
    ("cutlass_sm80", ("CollectiveMainloop::SmemLayoutA", "CollectiveMainloop::TiledMma")),
    ("cutlass_sm80_collective", ("SmemLayoutA", "TiledMma", "DispatchPolicy::Stages")),
    ("generic", ("TiledMma",)),
)

# members printed besides the roles (cross-checks and comments)
_EXTRA = ("TmaTransactionBytes", "CollectiveMainloop::TmaTransactionBytes", "kNWarps", "kNThreads", "kBlockM", "kBlockN", "kHeadDim", "Element", "ElementAccum", "TileShape",
          "CollectiveMainloop::TileShape", "ElementAccumulator")


def profile_docs(name: str) -> list[DocRoles]:
    if name not in PROFILES:
        raise ExtractError(f"unknown profile {name!r} (known: {', '.join(PROFILES)})")
    return PROFILES[name]()


def _bare(path: str) -> str:
    return path[:-2] if path.endswith("^T") else path


def probe_paths(overrides: dict | None = None) -> list[str]:
    """Every member path any profile (or an override) may need: printed by one probe program."""
    paths = []
    for name in PROFILES:
        for d in profile_docs(name):
            paths.extend(_bare(p) for p in d.roles.values())
    paths.extend(_EXTRA)
    paths.extend(_bare(v) for v in (overrides or {}).values() if v)   # an empty name drops a role
    return list(dict.fromkeys(paths))


def detect_profile(probe: Probe) -> str:
    for name, needed in _DETECT:
        if all(probe.has(p) for p in needed):
            return name
    raise ExtractError(f"{probe.traits or 'the traits type'}: no TiledMma member found by convention "
                       "(pass --member mma=NAME and the operand roles)")


_ROLE_FIELDS = ("smem", "copy", "g2s", "stride", "tma")


def apply_overrides(docs: list[DocRoles], overrides: dict) -> list[DocRoles]:
    """Set roles from ``{"[doc:]role": "Member"}``; a role without a document prefix applies to
    every document (and the empty member name ``""`` removes the role).

    >>> docs = apply_overrides(profile_docs("fa2_fwd"), {"pv:B.copy": "MyAtomT", "A.g2s": ""})
    >>> [(d.key, d.get("B.copy"), d.get("A.g2s")) for d in docs]
    [('qk', 'SmemCopyAtom', None), ('pv', 'MyAtomT', None)]
    """
    keys = {d.key for d in docs}
    for role, member in overrides.items():
        doc, _, r = role.rpartition(":")
        base = r.split(".")
        ok = r in ("mma", "stages", "accum") or (len(base) == 2 and base[0] in OPERAND_MODES and base[1] in _ROLE_FIELDS)
        if not ok:
            raise ExtractError(f"--member {role}={member}: unknown role {r!r} (mma, stages, accum, or X.FIELD with X in "
                               f"A, B, C and FIELD in {', '.join(_ROLE_FIELDS)})")
        if doc and doc not in keys:
            raise ExtractError(f"--member {role}={member}: no document {doc!r} (this profile has {', '.join(sorted(keys))})")
        for d in docs:
            if not doc or d.key == doc:
                if member:
                    d.roles[r] = member
                else:
                    d.roles.pop(r, None)
    return docs


# ---------------------------------------------------------------- building documents


def _canon(t: str) -> str:
    try:
        return canonical_type(t)
    except Exception:  # noqa: BLE001 - unknown type names are kept as written
        return t


class _Builder:
    def __init__(self, probe: Probe, header: str, type_expr: str, verify: bool):
        self.p, self.header, self.type_expr, self.verify = probe, header, type_expr, verify

    def member(self, path, kinds, role):
        if not path:
            return None
        m = self.p.members.get(_bare(path))
        if m is None or m.kind == "missing":
            return None
        if m.kind not in kinds:
            raise ExtractError(f"{self.p.traits}: member {_bare(path)} ({role}) is a {m.kind}, expected "
                               f"{' or '.join(kinds)}")
        return m

    # ---- [mma]
    def mma(self, doc: ConfigDoc, roles: DocRoles):
        m = self.member(roles.get("mma"), ("tiled_mma",), "mma")
        if m is None:
            raise ExtractError(f"{self.p.traits}: no TiledMMA member {roles.get('mma')!r} for {roles.title}")
        atom = op_name(m["tiled_mma"])
        perm = [strip_static(m[f"perm{i}"]) for i in range(3)]
        doc.mma = {"atom": atom, "layout": strip_static(m["atom_layout"]), "permutation": perm}
        doc.table_comments["mma"] = [f"{m.path}: TiledMMA<MMA_Atom<{atom}>, {strip_static(m['atom_layout'])}, "
                                     f"Tile<{','.join(perm)}>>"]
        if not in_catalog("mma", atom):
            doc.notes.append(f"not supported: MMA operation {atom} (not in symlayout's atom catalog)")
        elif self.verify:
            self.check_mma(doc, m)
        return m

    def check_mma(self, doc, m):
        """symlayout's TiledMMA model against CuTe's own get_layoutX_TV."""
        theirs = {x: (f"CuTe's get_layout{x}_TV", parse_layout(strip_static(m[f"layout{x}_TV"]))) for x in "ABC"}
        _, problem = check_tiled_mma(doc.mma, theirs)
        if problem:
            raise ExtractError(f"{self.p.traits}: {problem}")

    # ---- copies
    def tiled_copy_keys(self, m, transposed: bool, what: str):
        """atom/type and thr/val (or tv/tiler) of a TiledCopy member (of the transposed tile when
        ``transposed``); comment text; the recovered ``(thr, val)`` or ``None``."""
        atom, typ = op_name(m["tiled_copy"]), _canon(value_type_name(m["value_type"]))
        layout, rec = tiled_copy_keys(m["tv"], m["tiler"], transposed)
        if layout is None:
            raise ExtractError(f"{self.p.traits}: {m.path} ({what}) has no (thr, val) form to transpose")
        how = ("make_tiled_copy(atom, thr, val): thr/val recovered from its TV layout and checked to rebuild it"
               if rec is not None else "a TiledCopy with no (thr, val) form: its TV layout and tiler")
        return {"atom": atom, "type": typ, **layout}, how, rec

    def smem(self, roles, x):
        m = self.member(roles.get(f"{x}.smem"), ("layout", "composed"), f"{x}.smem")
        return (strip_static(m["layout"] if m.kind == "layout" else m["composed"]), m.path) if m else (None, None)

    def operand(self, doc: ConfigDoc, roles: DocRoles, x: str, mma_member):
        smem, smem_path = self.smem(roles, x)
        cm = self.member(roles.get(f"{x}.copy"), ("copy_atom", "tiled_copy"), f"{x}.copy")
        if cm is not None and smem is None:
            raise ExtractError(f"{self.p.traits}: {cm.path} ({x}.copy) has no smem layout (role {x}.smem)")
        if cm is not None:
            if cm.kind == "copy_atom":
                atom, typ = op_name(cm["copy_atom"]), _canon(value_type_name(cm["value_type"]))
                t = {"atom": atom, "type": typ, "smem": smem}
                how = f"make_tiled_copy_{x}({cm.path}, {mma_member.path}) on {smem_path}"
            else:
                keys, how, _ = self.tiled_copy_keys(cm, False, f"{x}.copy")
                t = {"atom": keys.pop("atom"), "type": keys.pop("type"), "smem": smem, **keys}
                how = f"{cm.path} = {how}, on {smem_path}"
            if x == "C":
                stored, accum = t["type"], _canon(value_type_name(mma_member["val_c"]))
                if _canon(stored) != accum:
                    t["convert"] = True
                    how += f"; the {accum} accumulators converted to {stored} first"
            doc.copy[x] = t
            doc.table_comments[f"copy.{x}"] = [how]
            if not in_catalog("copy", t["atom"]):
                doc.notes.append(f"not supported: copy operation {t['atom']} ([copy.{x}])")
            clash = record_stages(doc, smem)
            if clash is not None:
                raise ExtractError(f"{self.p.traits}: {smem_path} has {clash[1]} stages, another smem layout {clash[0]}")
        if cm is None and smem is not None and x in "AB" and doc.mma["atom"].startswith("SM90_"):
            self.gmma_operand(doc, roles, x, smem, smem_path, mma_member)
        g = roles.get(f"{x}.g2s")
        gm = self.member(g, ("tiled_copy",), f"{x}.g2s") if g else None
        if gm is not None:
            self.global_copy(doc, roles, x, gm, g.endswith("^T"), smem)

    def gmma_operand(self, doc, roles, x, smem, smem_path, mma_member):
        """``[smem.X]`` (the GMMA reads the operand from ``smem`` through descriptors), ``[tma.X]`` when
        the role ``X.tma`` names a TMA copy operation type (``GmemTiledCopyX = SM90_TMA_LOAD``)."""
        typ = _canon(value_type_name(mma_member[f"val_{x.lower()}"]))
        doc.smem[x] = {"type": typ, "layout": smem, "align": 1024}
        doc.table_comments[f"smem.{x}"] = [f"{smem_path}; align 1024 B assumed (the SharedStorage's "
                                           "alignas is not read)"]
        clash = record_stages(doc, smem)
        if clash is not None:
            raise ExtractError(f"{self.p.traits}: {smem_path} has {clash[1]} stages, another smem layout {clash[0]}")
        tm = self.member(roles.get(f"{x}.tma"), ("type",), f"{x}.tma") if roles.get(f"{x}.tma") else None
        if tm is None:
            return
        op = op_name(value_type_name(tm["type"]))
        if op not in ("SM90_TMA_LOAD", "SM90_TMA_LOAD_MULTICAST"):
            doc.notes.append(f"not supported: {tm.path} = {op} ([tma.{x}] needs SM90_TMA_LOAD or _MULTICAST)")
            return
        box = smem_tile_shape(re.sub(r"smem_ptr\[\d+b\]\(unset\)", "0", smem))   # the shape, swizzle aside
        mode, why = self.contiguous_mode(roles, x, None)
        rows, cols = OPERAND_MODES[x]
        extent = {rows: box[0], cols: box[1]}
        stride = ("1", rows) if mode == 0 else (cols, "1")
        doc.tma[x] = {"atom": op, "gmem": f"({rows},{cols}):({stride[0]},{stride[1]})", "box": f"({box[0]},{box[1]})"}
        for p, e in extent.items():
            doc.params.setdefault(p, {"min": e, "max": 65536, "multiple_of": e})
        doc.table_comments[f"tma.{x}"] = [
            f"{tm.path} = {op}: make_tma_copy(op, gmem, one stage of {smem_path}, box {box[0]}x{box[1]})",
            f"gmem: {OPERAND_MODES[x][mode]}-contiguous ({why}); {rows}, {cols} assumed multiples of the tile "
            "(a partial tile is TMA's out-of-bounds fill, not modelled here)"]
        if op == "SM90_TMA_LOAD_MULTICAST":
            doc.notes.append(f"[tma.{x}]: multicast count not read from the cluster shape (written as 1)")

    def global_copy(self, doc, roles, x, gm, transposed, smem):
        kind = "s2g" if x == "C" else "g2s"
        keys, how, rec = self.tiled_copy_keys(gm, transposed, f"{x}.g2s")
        if smem is None:
            raise ExtractError(f"{self.p.traits}: {gm.path} ({kind}.{x}) has no smem layout (role {x}.smem)")
        contiguous, why = self.contiguous_mode(roles, x, rec)
        gkeys, note = gmem_side(doc, x, smem, contiguous, why, roles.ld.get(x, f"ld{x}"), keys["atom"], keys["type"])
        keys.update(gkeys)
        getattr(doc, kind)[x] = keys
        doc.table_comments[f"{kind}.{x}"] = [
            f"{gm.path}{' (on the transposed tile)' if transposed else ''} = {how}", f"gmem: {note}"]
        if not in_catalog("copy", keys["atom"]):
            doc.notes.append(f"not supported: copy operation {keys['atom']} ([{kind}.{x}])")

    def contiguous_mode(self, roles, x, rec):
        """Which mode of the gmem tile is contiguous: from the CUTLASS stride type (the mode
        whose stride is the static 1), else from the copy's value layout (its vector runs along
        the contiguous mode; ``rec``: the copy's ``(thr, val)`` in the operand's coordinates)."""
        sm = self.member(roles.get(f"{x}.stride"), ("type",), f"{x}.stride") if roles.get(f"{x}.stride") else None
        if sm is not None:
            t = value_type_name(sm["type"])
            if t.startswith("tuple<"):
                args = split_args(t[len("tuple<"):-1])
                ones = [i for i, a in enumerate(args[:2]) if a in ("C<1>", "_1", "Int<1>")]
                if len(ones) == 1:
                    return ones[0], f"{sm.path} = {t}"
        mode = vector_mode(rec[1]) if rec is not None else None
        if mode is not None:
            return mode, "the copy's vectors run along it"
        return 1, "assumed: no stride type, and the copy's vectors do not tell"


def build_documents(probe: Probe, header: str, type_expr: str, profile: str | None = None,
                    overrides: dict | None = None, verify: bool = True) -> list[ConfigDoc]:
    """The configuration documents of one probed traits type (see the module doc)."""
    name = profile or detect_profile(probe)
    docs = apply_overrides(profile_docs(name), overrides or {})
    b = _Builder(probe, header, type_expr, verify)
    out = []
    for roles in docs:
        doc = ConfigDoc(name=f"{type_expr}: {roles.title}")
        doc.comments = [f"extracted by symlayout from {header}",
                        f"type: {type_expr}", f"profile {name}, document {roles.key!r}: {roles.title}"]
        mm = b.mma(doc, roles)
        for x in "ABC":
            b.operand(doc, roles, x, mm)
        st = roles.get("stages")
        sv = probe.members.get(st) if st else None
        if sv is not None and sv.kind == "value":
            if doc.stages is not None and doc.stages != sv["value"]:
                raise ExtractError(f"{probe.traits}: {st} = {sv['value']} but the smem layouts have {doc.stages} stages")
            doc.table_comments["stages"] = [f"{st} = {sv['value']}, the PIPE mode of the smem layouts"]
        elif doc.stages is not None:
            doc.table_comments["stages"] = ["the PIPE mode of the smem layouts"]
        if not doc.copy and not doc.g2s and not doc.s2g and not doc.smem:
            doc.notes.append("no operand copies found by convention: the file is about the TiledMMA alone")
        doc.notes.extend(roles.notes)
        out.append(doc)
    return out
