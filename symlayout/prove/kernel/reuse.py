"""Register-sourced operands: one TiledMMA's accumulator re-viewed as the next one's A operand.

Flash-attention computes ``S = Q K^T`` into ``tSrS = partition_fragment_C(mma, (M,N))``, converts it
(``rP = convert_type<half_t>(tSrS)``) and hands the same registers to ``O = P V`` as its A fragment:
``tOrP = make_tensor(rP.data(), convert_layout_acc_Aregs(rP.layout()))``.  No data moves, so the
re-view is right exactly when every register holds the element the second MMA reads there:

    for every thread t and A fragment coordinate (v, i, k) of the second TiledMMA:
        r      = view(v, i, k)                       the register the fragment names
        (m, n) = C_t(r)                              S's element in register r (partition_C of [mma])
        (m', k') = A_t(v, i, k)                      what the second MMA reads there (partition_A)
        m = m' and n = k'                            P(m, k) = S(m, n) with k = n

``slot_agreement`` proves that for every slot (one obligation each), ``type_agreement`` that the
converted type is the one the second MMA reads.  ``view = "acc_Aregs"`` is flash-attention's
conversion: on SM80, for a K = 16 atom, ``((2,2),MMA_M,MMA_N) -> ((2,2,2),MMA_M,MMA_N/2)`` (a K = 8
atom keeps the layout); on SM90, ``((2,2,N/8),MMA_M,MMA_N) -> ((2,2,2),MMA_M,(N/16,MMA_N))`` for a
16-bit A.

>>> from symlayout.config import loads_config
>>> cfg = loads_config('''[mma]
... atom = "SM80_16x8x16_F32F16F16F32_TN"
... layout = "(4,1,1)"
... [reuse.P]
... from = "C"
... tile = "(64,64)"
... convert = "half_t"
... ''')
>>> [(r.property, r.status, r.checked) for r in prove_reuse(cfg, cfg.reuse["P"])]
[('slot_agreement', 'proved', 4096), ('type_agreement', 'proved', 1)]
"""
from __future__ import annotations

import time

from ...algebra.int_tuple import _, product
from ...algebra.layout import Layout, coalesce, logical_divide, make_layout
from ...atoms.types import canonical_type, value_type_bits
from ...errors import SymlayoutError
from ...tiled.mma import make_tiled_mma
from ..verdict.result import PROVED, REFUTED, Counterexample, Result, verdict

#: the properties of a ``[reuse.X]``
REUSE_PROPERTIES = ("slot_agreement", "type_agreement")


class Rejected(Exception):
    """What CuTe (or flash-attention's static_asserts) does not compile, in words."""


def acc_aregs(frag: Layout, mma2) -> Layout:
    """flash-attention's ``convert_layout_acc_Aregs<mma2>`` of the accumulator fragment layout ``frag``."""
    if frag.rank() != 3:
        raise Rejected(f"the accumulator fragment {frag} is not of rank 3 ((V),MMA_M,MMA_N)")
    v = frag[0]
    if v.rank() == 3:                                    # SM90: ((2,2,N/8),MMA_M,MMA_N)
        if value_type_bits(mma2.atom.val_type_a) != 16:
            raise SymlayoutError("not supported: view = \"acc_Aregs\" of an 8-bit A operand (flash-attention "
                                 "permutes the bytes of an fp8 P); write the view as a layout")
        if product(v.shape[2]) % 2:
            raise Rejected(f"the accumulator's value mode {v} has an odd N/8 mode: no (2, N/16) split")
        l = logical_divide(v[2], 2)
        return make_layout(make_layout(v[0], v[1], l[0]), frag[1], coalesce(make_layout(l[1], frag[2])))
    if product(v.shape) != 4:
        raise Rejected(f"static_assert size<0>(acc_layout) == 4 fails: the value mode is {v}")
    k = mma2.atom.shape_mnk[2]
    if k == 8:
        return frag
    if k != 16:
        raise Rejected(f"static_assert mma_shape_K == 8 || mma_shape_K == 16 fails: K = {k}")
    if product(frag.shape[2]) % 2:
        raise Rejected(f"MMA_N = {product(frag.shape[2])} is odd: the accumulator's N mode has no (2, MMA_N/2) split")
    l = logical_divide(frag, (_, _, 2))
    return make_layout(make_layout(l[0], l[2][0]), l[1], l[2][1])


def second_mma(cfg, rc):
    return make_tiled_mma(rc.mma, rc.layout, list(rc.permutation) if rc.permutation is not None else None)


def register_view(rc, frag: Layout, mma2) -> Layout:
    """The layout ``tOrP`` has: A fragment coordinate -> register of the accumulator."""
    if rc.view == "none":
        return frag
    if rc.view == "acc_Aregs":
        return acc_aregs(frag, mma2)
    return rc.view


def _mode_sizes(L) -> tuple:
    return tuple(int(product(L.shape[i])) for i in range(L.rank()))


class ReuseModel:
    """Per thread: the S element in each register, and what the second MMA reads at each A slot."""

    def __init__(self, cfg, rc):
        self.rc = rc
        self.mma1 = make_tiled_mma(cfg.mma.atom, cfg.mma.layout, cfg.mma.permutation)
        self.mma2 = second_mma(cfg, rc)
        self.M, self.N = rc.tile
        for mma, what, modes in ((self.mma1, "[mma]", (0, 1)), (self.mma2, f"[{rc.table}] mma", (0, 2))):
            t = mma.tile_shape()
            need = (t[modes[0]], t[modes[1]])
            if self.M % need[0] or self.N % need[1]:
                raise SymlayoutError(f"[{rc.table}] tile {rc.tile}: not supported: not a multiple of the {what} "
                                     f"tile {need[0]}x{need[1]} ({'MxN' if modes[1] == 1 else 'MxK'})")
        self.threads = int(self.mma1.size())
        self.frag = self.mma1.get_slice(0).partition_fragment_C(Layout((self.M, self.N)))
        self.view = register_view(rc, self.frag, self.mma2)

    def acc_element(self, t: int, r: int) -> tuple:
        """``(m, n)`` of S held in register ``r`` of thread ``t``."""
        p, off = self.mma1.get_slice(t).partition_C(Layout((self.M, self.N)))
        e = int(p(r)) + int(off)
        return e % self.M, e // self.M

    def a_partition(self, t: int):
        return self.mma2.get_slice(t).partition_A(Layout((self.M, self.N)))


def check_shapes(m: ReuseModel):
    """CuTe's gemm on the re-viewed fragment: the same threads, and the A fragment's modes."""
    if int(m.mma2.size()) != m.threads:
        raise Rejected(f"[mma] has {m.threads} threads, [{m.rc.table}] mma {int(m.mma2.size())}: the registers of "
                       "one thread are read by another thread's MMA")
    pa, _off = m.a_partition(0)
    want, have = _mode_sizes(pa), _mode_sizes(m.view)
    if want != have:
        raise Rejected(f"the re-viewed fragment has mode sizes {have} (view {m.view}), the second MMA's A fragment "
                       f"{want} ({pa.shape}): cute::gemm's static_asserts on the fragments fail")


def slots(m: ReuseModel, t: int):
    """Every A slot of thread ``t`` in the fragment's order: ``(v, i, k, register, held (m, n) or None when the
    register is outside the fragment, wanted (m, k))``."""
    pa, off = m.a_partition(t)
    V, I, K = _mode_sizes(pa)
    p1, off1 = m.mma1.get_slice(t).partition_C(Layout((m.M, m.N)))
    nregs = int(m.frag.size())
    for k in range(K):
        for i in range(I):
            for v in range(V):
                r = int(m.view(v, i, k))
                e = int(pa(v, i, k)) + int(off)
                held = None
                if 0 <= r < nregs:
                    s = int(p1(r)) + int(off1)
                    held = (s % m.M, s // m.M)
                yield v, i, k, r, held, (e % m.M, e // m.M)


def slot_mismatch(m: ReuseModel, t: int):
    """The first A slot of thread ``t`` whose register does not hold what the second MMA reads, or None;
    and the slots checked."""
    n = 0
    for hit in slots(m, t):
        n += 1
        if hit[4] != hit[5]:
            return hit, n
    return None, n


def _message(m: ReuseModel, t, hit) -> Counterexample:
    v, i, k, r, held, want = hit
    name = m.rc.name
    if held is None:
        msg = (f"thread {t}: {name} slot (v={v}, m={i}, k={k}) names register {r}, outside the accumulator "
               f"fragment of {int(m.frag.size())} registers")
    else:
        msg = (f"thread {t}, register {r} ({name} slot (v={v}, m={i}, k={k})): holds S(m={held[0]}, n={held[1]}), "
               f"but the second MMA reads {name}(m={want[0]}, k={want[1]}) there, i.e. S(m={want[0]}, n={want[1]})")
    return Counterexample(msg, thread=t, slot=r, element=held if held is not None else None,
                          extra={"expected_element": list(want), "fragment_slot": [v, i, k]})


def revalidate(m: ReuseModel, t: int, hit) -> bool:
    """The refutation recomputed from the two partitions alone, for its one slot."""
    v, i, k, r, held, want = hit
    pa, off = m.a_partition(t)
    e = int(pa(v, i, k)) + int(off)
    if (e % m.M, e // m.M) != tuple(want):
        return False
    if held is None:
        return not 0 <= int(m.view(v, i, k)) < int(m.frag.size())
    return m.acc_element(t, int(m.view(v, i, k))) == tuple(held) != tuple(want)


def slot_agreement(m: ReuseModel) -> Result:
    t0 = time.perf_counter()
    checked = 0
    for t in range(m.threads):
        hit, n = slot_mismatch(m, t)
        checked += n
        if hit is not None:
            if not revalidate(m, t, hit):
                raise SymlayoutError(f"[{m.rc.table}]: internal: a slot_agreement refutation did not re-validate")
            return Result("slot_agreement", REFUTED, operand=m.rc.table, checked=checked, method="exhaustive",
                          counterexample=_message(m, t, hit), seconds=time.perf_counter() - t0,
                          detail=f"view {m.view}")
    return Result("slot_agreement", verdict(None, checked), operand=m.rc.table, checked=checked,
                  method="exhaustive", seconds=time.perf_counter() - t0, detail=f"view {m.view}")


def type_agreement(m: ReuseModel) -> Result:
    held = m.rc.convert or m.mma1.atom.val_type_c
    reads = m.mma2.atom.val_type_a
    ok = canonical_type(held) == canonical_type(reads)
    cex = None if ok else Counterexample(
        f"the registers hold {canonical_type(held)} ({'convert' if m.rc.convert else 'the accumulator'}), "
        f"the second MMA {m.mma2.atom.name} reads A as {canonical_type(reads)}",
        extra={"held_type": canonical_type(held), "mma_type": canonical_type(reads)})
    return Result("type_agreement", verdict(cex, 1), operand=m.rc.table, checked=1, method="exhaustive",
                  counterexample=cex)


def rejected(rc, why: str, props) -> list:
    cex = Counterexample(f"CuTe does not compile this re-view: {why}")
    return [Result("slot_agreement", REFUTED, operand=rc.table, checked=1, method="cute", counterexample=cex,
                   detail="the other properties of this re-view are not checked")] if "slot_agreement" in props \
        else []


def prove_reuse(cfg, rc, properties=None) -> list:
    """The results of one ``[reuse.X]``."""
    props = [p for p in (properties or REUSE_PROPERTIES) if p in REUSE_PROPERTIES]
    try:
        m = ReuseModel(cfg, rc)
        check_shapes(m)
    except Rejected as e:
        return rejected(rc, str(e), props)
    out = []
    for p in props:
        out.append(slot_agreement(m) if p == "slot_agreement" else type_agreement(m))
    return out
