"""fp4 / fp6 between shared memory and the registers of a kind::f8f6f4 MMA: the padded source format.

CUTLASS keeps fp4 / fp6 data a kind::f8f6f4 MMA reads in *containers* (``float_e2m1_unpacksmem_t``, ...):
TMA writes each 16-byte row of shared memory as 16 elements back to back and then padding (PTX
``.b4x16_p64`` / ``.b6x16_p32``), and CuTe addresses such a buffer over ``uint8_t``, one offset per
element.  The widening ``ldmatrix`` (CuTe's ``SM100_SU{4,6}_DU8x16_x*_LDSM_N``) reads those rows and puts
each element into a byte of the destination, which is the 8-bit container the MMA reads.  So, in CuTe's
``uint8_t`` view, the lanes move as ``SM75_U32x*_LDSM_N`` of bytes (:mod:`.model` builds that route), and
what remains is whether the bits agree (``type_agreement``):

* shared memory: element ``s`` of the buffer begins at bit ``kept(s)`` of its storage
  (:func:`symlayout.atoms.blockscaled.smem_bit`); the load reads the element it gives register byte ``s``
  from bit ``read(s)`` (widening: :func:`symlayout.atoms.narrow_matrix.source_bit`; a bit-moving copy:
  the whole byte ``s``); they must be equal for every ``s`` and of the same width;
* registers: the MMA reads the widened element's type in 8-bit slots.

The same bits decide a *packed* read of a container buffer (``Copy_Atom<SM75_U32x4_LDSM_N, uint4_t>``, SM120's
NVFP4 copy, over ``.b4x16_p64`` rows): it takes element ``s`` from bit ``4*s``.

>>> widening_problem("SM75_U32x4_LDSM_N", "float_e2m1_unpacksmem_t", "A", "float_e2m1_t", "uint8_t")[:72]
'the smem holds float_e2m1_unpacksmem_t (PTX .b4x16_p64: 16 4-bit element'
"""
from __future__ import annotations

from ...atoms import canonical_type, value_type_bits, value_type_info
from ...atoms.blockscaled import smem_bit, storage
from ...atoms.narrow_matrix import source_bit, source_bits, source_format
from .story import slot_story


def involved(atom: str, element: str) -> bool:
    """Whether a ``[copy.X]`` reads the padded source format: a widening atom, or container storage."""
    return source_bits(atom) is not None or storage(element) == "container"


def data_type(element: str) -> str:
    """The type a container holds (``float_e2m1_unpacksmem_t`` -> ``float_e2m1_t``), else ``element``."""
    return value_type_info(element).get("data", canonical_type(element))


def _held(element: str) -> str:
    bits = value_type_bits(element)
    how = storage(element)
    if how == "container":
        return f"{element} (PTX {source_format(bits)}: 16 {bits}-bit elements, then padding, in each 16-byte row)"
    if how == "packed":
        return f"{element} packed ({bits}-bit elements back to back)"
    return f"{element} ({bits}-bit elements, {bits // 8} byte{'s' if bits > 8 else ''} each)"


def _reads(atom: str, moved: int = 8) -> str:
    src = source_bits(atom)
    if src is None and moved < 8:
        return f"{atom} of {moved}-bit values reads the buffer packed ({moved}-bit elements back to back) unchanged"
    if src is None:
        return f"{atom} moves bytes unchanged"
    return (f"{atom} reads each 16-byte row as {source_format(src)} (16 {src}-bit elements, then padding) "
            "and widens each element into a byte")


def smem_slot(atom: str, element: str, search: int = 64, moved: int = 8) -> tuple[int, int, int, int, int] | None:
    """The first buffer offset ``s`` whose element the load does not take whole from where the buffer
    keeps it: ``(s, kept bit, element bits, read bit, bits read)``; None when every offset agrees.
    ``moved``: the width of the values a bit-moving atom carries (4: packed fp4 through ``ldmatrix``)."""
    src = source_bits(atom)
    bits = value_type_bits(element)
    width = src if src is not None else moved
    read = (lambda s: source_bit(src, s)) if src is not None else (lambda s: moved * s)
    bad = [s for s in range(search) if smem_bit(element, s) != read(s)]
    if bad:
        s = bad[0]
        return s, smem_bit(element, s), bits, read(s), width
    if bits != width:
        return 0, 0, bits, 0, width
    return None


def widening_problem(atom: str, element: str, operand: str, mma_type: str, frag_type: str,
                     moved: int = 8) -> str | None:
    """Why ``atom`` (moving ``moved``-bit values unless it widens) over a buffer of ``element`` does not give
    the MMA, which reads ``operand`` as ``mma_type`` from a ``frag_type`` fragment, its elements (None when
    it does)."""
    bad = smem_slot(atom, element, moved=moved)
    if bad is not None:
        s, kb, bits, rb, width = bad
        return (f"the smem holds {_held(element)}, but {_reads(atom, moved)}: the element at offset {s} of the "
                f"buffer lies at smem bits {kb}..{kb + bits - 1}, the load puts bits {rb}..{rb + width - 1} into the "
                f"register {_slot_name(width)} the MMA reads it from")
    got = data_type(element) if source_bits(atom) is not None else canonical_type(element)
    slot = 8 if source_bits(atom) is not None else moved
    if value_type_bits(frag_type) != slot:
        return (f"{atom} gives each {got} element {slot} bits, but the MMA reads {operand} as {mma_type} "
                f"from {value_type_bits(frag_type)}-bit {frag_type} slots")
    if canonical_type(mma_type) != canonical_type(got):
        return f"{atom} gives the MMA {got} elements, but it reads {operand} as {mma_type}"
    return None


def agreement_detail(atom: str, element: str, mma_type: str) -> str:
    """What a proved ``type_agreement`` of a widening copy rests on."""
    src = source_bits(atom)
    if src is None:
        return ""
    shift = (" (the 4-bit value lands in the low bits of its byte; kind::f8f6f4 reads bits 2..5, which "
             "CUTLASS's fp4_shift_A/B moves it to after the copy: not checked here)") if src == 4 else ""
    return (f"the smem rows are {source_format(src)} ({element}), which {atom} widens into the 8-bit "
            f"containers of {mma_type} the MMA reads{shift}")


def _slot_name(bits: int) -> str:
    return "nibble" if bits == 4 else "byte" if bits == 8 else f"{bits}-bit slot"


def _receiver(m, address: int):
    """``(thread, call, register-side value)`` the instruction delivers the smem value at ``address`` to (the
    hardware route: an ``ldmatrix`` row goes to other lanes than the one that addresses it), or None."""
    for t in sorted(m.calls):
        w, lane = divmod(t, 32)
        for c, call in enumerate(m.calls[t]):
            for a in range(len(call.reg)):
                p, e = m.hw.provider(lane, a, m.value_bits, m.reg_bits_frag)
                if m.delivered_address(32 * w + p, c, e) == address:
                    return t, c, a
    return None


def element_route(m, slot: int, element: str, atom: str) -> tuple[dict, list[str]]:
    """The route of the element at buffer offset ``slot`` in the route model ``m`` (CuTe's view of the
    buffer: one byte per element, or packed 4-bit values): its coordinate, the lane that addresses its
    row, the lane, register part and fragment slot the instruction delivers it to, what the MMA expects
    there."""
    i = m.index_of_address(slot)
    hit = None if i is None else _receiver(m, slot)
    if hit is None:
        return {}, []
    t, c, a = hit
    bits = value_type_bits(element)
    kept = smem_bit(element, slot)
    view = ("one byte per element in CuTe's uint8_t view of the buffer" if m.value_bits == 8 else
            f"{m.value_bits}-bit values packed in CuTe's {m.value_type} view of the buffer")
    return ({"thread": t, "slot": m.calls[t][c].reg[a], "element": m.coord(i)},
            [f"{m.name(i)} is element offset {slot} of the buffer: smem bits {kept}..{kept + bits - 1} "
             f"(byte {kept // 8}) as {element} keeps it; {atom} reads offset {slot} as {view}",
             *slot_story(m, t // 32, c, t % 32, a)])
