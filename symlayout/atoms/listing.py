"""The whole atom catalog listed: as JSON-ready data and as the table ``symlayout atoms`` prints."""
from __future__ import annotations

from .copy import copy_op_names, get_copy_op
from .mma import get_mma_atom, mma_atom_names


def catalog_json() -> dict:
    """The whole atom catalog as JSON-ready data: ``{"atoms": [...]}``.

    MMA atoms carry ``shape_mnk``, ``thr_id``, ``a_layout``, ``b_layout``,
    ``c_layout``; copy operations ``thr_id``, ``src_layout``, ``dst_layout``,
    ``ref_layout`` in bits.  Every layout is a CuTe-notation string.

    >>> atoms = catalog_json()["atoms"]
    >>> a = next(x for x in atoms if x["name"] == "SM80_16x8x8_F16F16F16F16_TN")
    >>> a["kind"], a["shape_mnk"], a["b_layout"]
    ('mma', [16, 8, 8], '((4,8),2):((16,1),8)')
    >>> c = next(x for x in atoms if x["name"] == "SM75_U32x1_LDSM_N")
    >>> c["kind"], c["src_layout"]
    ('copy', '((8,4),128):((128,0),1)')
    """
    atoms = [get_mma_atom(n).to_json() for n in mma_atom_names()]
    atoms += [get_copy_op(n).to_json() for n in copy_op_names()]
    return {"atoms": atoms}


def catalog_text() -> str:
    """A readable table of the catalog (the non-JSON ``symlayout atoms`` output).

    >>> print(catalog_text().splitlines()[0])
    MMA atoms (Shape_MNK; ThrID; ALayout | BLayout | CLayout; registers D/A/B/C; arch)
    """
    lines = ["MMA atoms (Shape_MNK; ThrID; ALayout | BLayout | CLayout; registers D/A/B/C; arch)"]
    mmas = [get_mma_atom(n) for n in mma_atom_names()]
    w = max(len(a.name) for a in mmas)
    for a in mmas:
        regs = "/".join(str(r) if r else "-" for r in (a.d_regs, a.a_regs, a.b_regs, a.c_regs))
        shp = "(" + ",".join(map(str, a.shape_mnk)) + ")"
        lines.append(f"  {a.name:<{w}}  {shp:<13} {str(a.thr_id):<12} {a.a_layout} | {a.b_layout} | "
                     f"{a.c_layout}  {regs}  {a.arch or 'any'}")
    lines.append("")
    lines.append("Copy operations (kind; ThrID; Src | Dst bit layouts, Ref = src/dst; registers S/D; arch)")
    ops = [get_copy_op(n) for n in copy_op_names()]
    w = max(len(o.name) for o in ops)
    for o in ops:
        lines.append(f"  {o.name:<{w}}  {o.kind:<9} {str(o.thr_id):<6} {o.src_layout} | {o.dst_layout}  "
                     f"ref={o.ref}  {o.s_regs}/{o.d_regs}  {o.arch or 'any'}")
    return "\n".join(lines)
