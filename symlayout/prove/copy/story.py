"""Tell a route in the user's terms, step by step (the seed-000 style):

``lane 8 provides &A(8,0) -> ldmatrix.x2 -> lane 0 d1 low half -> tCrA slot 2; MMA expects A(8,0)``
"""
from __future__ import annotations


def _el(m, i):
    return m.name(i)


def _instr(m):
    if m.hw.kind in ("ldsm", "stsm"):
        base = "ldmatrix" if m.hw.kind == "ldsm" else "stmatrix"
        return f"{base}.x{m.hw.num}{'.trans' if m.hw.trans else ''}"
    return m.atom.op.name if hasattr(m.atom.op, "name") else m.atom.name


def _part(m, pos, value_bits):
    per = 32 // value_bits if value_bits <= 32 else 1
    if per == 2:
        return "low half" if pos == 0 else "high half"
    if per == 1:
        return "whole register"
    if value_bits < 8:
        return f"bits {value_bits * pos}..{value_bits * pos + value_bits - 1}"
    return f"byte {pos}"


def slot_story(m, w, c, l, a) -> list:
    """The steps moving register-side value ``a`` of lane ``l`` in call ``c`` of warp ``w``."""
    t = 32 * w + l
    call = m.calls[t][c]
    s = call.reg[a]
    p, e = m.hw.provider(l, a, m.value_bits, m.reg_bits_frag)
    prov = m.calls[32 * w + p][c]
    k_smem = max(1, m.reg_bits_smem // m.value_bits)
    row0 = prov.smem[e - e % k_smem]
    moved_addr = m.delivered_address(32 * w + p, c, e)
    moved = m.index_of_address(moved_addr)
    k = max(1, m.reg_bits_frag // m.value_bits)
    reg, pos = divmod(a, k)
    frag = f"tCr{m.operand}" if m.operand != "C" else "tCrC"
    want = m.expected[t][s]
    addr = int(moved_addr * m.elem_bytes)
    got = _el(m, moved) if moved is not None else f"offset {moved_addr}"
    if m.direction == "load":
        return [f"lane {p} provides &{_el(m, row0)}",
                f"{_instr(m)} (call {c} of warp {w})",
                f"lane {l} d{reg} {_part(m, pos, m.value_bits)} = {got} (smem byte {addr})",
                f"{frag} slot {s}",
                f"MMA expects {_el(m, want)}"]
    return [f"lane {l} {frag} slot {s} (r{reg} {_part(m, pos, m.value_bits)})",
            f"{_instr(m)} (call {c} of warp {w})",
            f"lane {p} provides &{_el(m, row0)}",
            f"stored to {got} (smem byte {addr})",
            f"MMA computed {_el(m, want)} in that slot"]


def vector_story(m, w, c, l, r) -> list:
    """The steps of smem vector ``r`` dereferenced by lane ``l``."""
    t = 32 * w + l
    k = max(1, m.reg_bits_smem // m.value_bits)
    i0 = m.calls[t][c].smem[r * k]
    return [f"lane {l} (thread {t}) provides &{_el(m, i0)} = smem byte {int(m.addr_table[i0] * m.elem_bytes)}",
            f"{_instr(m)} (call {c} of warp {w}) reads {max(m.reg_bits_smem, m.value_bits) // 8} bytes there"]


def format_route(steps) -> str:
    """Join steps with arrows."""
    return " -> ".join(steps)
