"""Model-free observation of ldmatrix, stmatrix, mma.sync and cp.async on the GPU,
compared with :mod:`symlayout.arch.ptx`.

What "model-free" means here: the kernels move *labels* and compute products of
*one-hot* inputs, and the decoding below recovers what the hardware did using
only the addresses and register slots the probe itself chose; the PTX model is
consulted only afterwards, to compare.

* ldmatrix: a shared table of 16-bit ids (``id = 8*table_row + col``); lane ``L``
  passes the address of table row ``ROW_OF_LANE[L]`` (a scattered permutation).
  Every received half-register is decoded to (providing lane, column) and
  compared with :func:`~symlayout.arch.ptx.ldmatrix_dest`.  The output buffer is
  poisoned (0xFFFF) first; every slot must be overwritten, and no id may come
  from a lane whose address ldmatrix should not read.
* stmatrix: each register half holds ``1 + 8*lane + 2*reg + half``; the shared
  table is poisoned (0xFFFF); afterwards every cell of the rows addressed by
  lanes ``< 8*num`` must hold the id :func:`~symlayout.arch.ptx.stmatrix_source`
  predicts, and every other cell must still be poison.
* mma.sync: the fragment coordinates are only defined up to renaming of the m,
  n and k indices (D = A B + C is invariant under that), so the probe measures
  the invariant itself: which (A slot, B slot, D slot) triples multiply into
  each other.  For every A slot ``a`` it runs ``A = one-hot(a)`` against B whose
  slot ``b`` holds ``1 + bit_j(b)`` (j over the bits of the B slot index): the
  D slots that light up are the row of ``a``, and their values spell the B slot
  that shares ``a``'s k and the D slot's column.  The same with the roles of A
  and B swapped, and one run ``A = B = 0, C = slot ids`` (C and D share one
  layout).  Values are 0, 1, 2, exact in every type (e4m3 included).  The
  observed triple set must equal the PTX model's.
* cp.async 4/8/16 (``.ca``; ``.cg`` for 16) copies permuted chunks of ids; the
  zero-fill form (``src-size < cp-size``) is checked against
  :func:`~symlayout.arch.ptx.cp_async_fill`.

Run on a GPU::

    python -m symlayout.harness.atoms_probe --out atoms.json --md atoms.md

>>> ROW_OF_LANE[:4], len(set(ROW_OF_LANE))
([5, 42, 15, 52], 32)
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import sys
import time
from typing import Any, Callable, Iterable, Sequence

from symlayout.arch import ptx
from . import cuda, have_gpu

WARP = 32
POISON16 = 0xFFFF
POISON32 = 0xFFFFFFFF
TABLE_ROWS = 64                      # shared table rows (32 addressed + 32 never addressed)
#: Table row whose address lane L passes (an injective scatter of 32 lanes into 64 rows).
ROW_OF_LANE = [(37 * lane + 5) % TABLE_ROWS for lane in range(WARP)]
MAX_LISTED = 24                      # mismatches kept per instruction in the result

# ---------------------------------------------------------------------------
# Result records
# ---------------------------------------------------------------------------


def _record(atom: str, kind: str, ptx_text: str, checked: int, mismatches: list,
            note: str = "", status: str | None = None, extra: dict | None = None) -> dict:
    rec = {
        "atom": atom, "kind": kind, "ptx": ptx_text, "slots_checked": checked,
        "status": status or ("agree" if not mismatches else "disagree"),
        "n_mismatches": len(mismatches), "mismatches": mismatches[:MAX_LISTED], "note": note,
    }
    if extra:
        rec.update(extra)
    return rec


# ---------------------------------------------------------------------------
# ldmatrix / stmatrix: labels and decoding (pure Python)
# ---------------------------------------------------------------------------


def ld_table() -> list[int]:
    """The shared table ldmatrix reads: ``id = 8*row + col`` for 64 rows x 8 b16.

    >>> t = ld_table(); t[8 * 3 + 5], len(t)
    (29, 512)
    """
    return [8 * r + c for r in range(TABLE_ROWS) for c in range(8)]


def ldmatrix_ptx(num: int, trans: bool) -> str:
    """The instruction text probed.

    >>> ldmatrix_ptx(4, True)
    'ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16'
    """
    return f"ldmatrix.sync.aligned.m8n8.x{num}{'.trans' if trans else ''}.shared.b16"


def stmatrix_ptx(num: int, trans: bool) -> str:
    """The instruction text probed.

    >>> stmatrix_ptx(1, False)
    'stmatrix.sync.aligned.m8n8.x1.shared.b16'
    """
    return f"stmatrix.sync.aligned.m8n8.x{num}{'.trans' if trans else ''}.shared.b16"


def decode_ldmatrix(num: int, trans: bool, words: Sequence[int],
                    row_of_lane: Sequence[int] = ROW_OF_LANE) -> dict:
    """Compare ldmatrix's observed destination registers with the PTX model.

    ``words[lane*num + reg]`` is the 32-bit register ``reg`` of ``lane`` after the
    load (the buffer having been poisoned with 0xFFFFFFFF).  Each 16-bit half is
    decoded to the table row/col it came from, hence to the lane that supplied the
    row's address (model-free); the model says that lane is ``8*matrix + row``.

    >>> w = simulate_ldmatrix(2, False)
    >>> decode_ldmatrix(2, False, w)["status"]
    'agree'
    """
    lane_of_row = {r: l for l, r in enumerate(row_of_lane)}
    mism: list[dict] = []
    seen: dict[tuple[int, int], tuple[int, int, int]] = {}
    for lane in range(WARP):
        for reg in range(num):
            w = words[lane * num + reg]
            for half in (0, 1):
                v = (w >> (16 * half)) & 0xFFFF
                exp_m, exp_r, exp_c = ptx.ldmatrix_dest(num, trans, lane, reg, half)
                exp_provider = ptx.ldmatrix_row_provider(num, exp_m, exp_r)
                slot = {"lane": lane, "reg": reg, "half": half,
                        "model": {"provider_lane": exp_provider, "col": exp_c}}
                if v == POISON16:
                    mism.append({**slot, "observed": "unwritten (poison)"})
                    continue
                trow, col = divmod(v, 8)
                provider = lane_of_row.get(trow)
                if provider is None:
                    mism.append({**slot, "observed": f"table row {trow} (no lane addressed it)"})
                    continue
                if provider >= 8 * num:
                    mism.append({**slot, "observed": {"provider_lane": provider, "col": col,
                                                      "why": "address of a lane ldmatrix must not read"}})
                    continue
                key = (provider, col)
                if key in seen:
                    mism.append({**slot, "observed": {"provider_lane": provider, "col": col,
                                                      "why": f"duplicate of {seen[key]}"}})
                    continue
                seen[key] = (lane, reg, half)
                if (provider, col) != (exp_provider, exp_c):
                    mism.append({**slot, "observed": {"provider_lane": provider, "col": col}})
    return _record(f"ldmatrix.x{num}{'.trans' if trans else ''}", "ldmatrix", ldmatrix_ptx(num, trans),
                   WARP * num * 2, mism, extra={"observed_raw": [int(w) for w in words]})


def simulate_ldmatrix(num: int, trans: bool, row_of_lane: Sequence[int] = ROW_OF_LANE) -> list[int]:
    """What the PTX model says the probe's output words are (for tests of the decoder).

    >>> simulate_ldmatrix(1, False)[0] == (8 * ROW_OF_LANE[0] + 1) << 16 | 8 * ROW_OF_LANE[0]
    True
    """
    table = ld_table()
    words = []
    for lane in range(WARP):
        for reg in range(num):
            w = 0
            for half in (0, 1):
                m, r, c = ptx.ldmatrix_dest(num, trans, lane, reg, half)
                trow = row_of_lane[ptx.ldmatrix_row_provider(num, m, r)]
                w |= table[8 * trow + c] << (16 * half)
            words.append(w)
    return words


def st_reg_id(lane: int, reg: int, half: int) -> int:
    """Label stored in register ``reg``, ``half`` of ``lane`` for the stmatrix probe.

    >>> st_reg_id(0, 0, 0), st_reg_id(31, 3, 1)
    (1, 256)
    """
    return 1 + 8 * lane + 2 * reg + half


def st_reg_words(num: int) -> list[int]:
    """The register words the stmatrix probe stores: ``words[lane*num + reg]``.

    >>> hex(st_reg_words(1)[0])
    '0x20001'
    """
    return [st_reg_id(l, r, 0) | (st_reg_id(l, r, 1) << 16) for l in range(WARP) for r in range(num)]


def decode_stmatrix(num: int, trans: bool, table: Sequence[int],
                    row_of_lane: Sequence[int] = ROW_OF_LANE) -> dict:
    """Compare the shared table after stmatrix (poisoned with 0xFFFF before) with the model.

    >>> decode_stmatrix(4, True, simulate_stmatrix(4, True))["status"]
    'agree'
    """
    lane_of_row = {r: l for l, r in enumerate(row_of_lane)}
    mism: list[dict] = []
    for trow in range(TABLE_ROWS):
        provider = lane_of_row.get(trow)
        for col in range(8):
            v = table[8 * trow + col]
            if provider is None or provider >= 8 * num:
                if v != POISON16:
                    mism.append({"table_row": trow, "col": col, "provider_lane": provider,
                                 "model": "untouched", "observed": _st_label(v)})
                continue
            m, r = divmod(provider, 8)
            exp = ptx.stmatrix_source(num, trans, m, r, col)
            if v == POISON16:
                mism.append({"matrix": m, "row": r, "col": col, "model": exp, "observed": "unwritten (poison)"})
            elif _st_label(v) != exp:
                mism.append({"matrix": m, "row": r, "col": col, "model": exp, "observed": _st_label(v)})
    return _record(f"stmatrix.x{num}{'.trans' if trans else ''}", "stmatrix", stmatrix_ptx(num, trans),
                   TABLE_ROWS * 8, mism, extra={"observed_raw": [int(v) for v in table]})


def _st_label(v: int):
    if v == POISON16:
        return "poison"
    if not 1 <= v <= 256:
        return f"garbage 0x{v:04x}"
    lane, rest = divmod(v - 1, 8)
    reg, half = divmod(rest, 2)
    return (lane, reg, half)


def simulate_stmatrix(num: int, trans: bool, row_of_lane: Sequence[int] = ROW_OF_LANE) -> list[int]:
    """The table the PTX model predicts after the stmatrix probe (for decoder tests).

    >>> t = simulate_stmatrix(1, False); t[8 * ROW_OF_LANE[0]] == st_reg_id(0, 0, 0)
    True
    """
    table = [POISON16] * (TABLE_ROWS * 8)
    for lane in range(WARP):
        for reg in range(num):
            for half in (0, 1):
                m, r, c = ptx.stmatrix_dest(num, trans, lane, reg, half)
                trow = row_of_lane[8 * m + r]
                table[8 * trow + c] = st_reg_id(lane, reg, half)
    return table


# ---------------------------------------------------------------------------
# cp.async
# ---------------------------------------------------------------------------

CP_PERM = [(13 * t + 7) % WARP for t in range(WARP)]  # thread t copies source chunk CP_PERM[t]


def cp_src_size(t: int, cp_size: int) -> int:
    """``src-size`` thread ``t`` uses in the zero-fill probe (0, 4, ..., cp_size).

    >>> [cp_src_size(t, 16) for t in range(6)]
    [0, 4, 8, 12, 16, 0]
    """
    return 4 * (t % (cp_size // 4 + 1))


def decode_cp_async(cp_size: int, cache: str, zfill: bool, dst_words: Sequence[int]) -> dict:
    """Check the shared buffer after the cp.async probe.  Source word ``w`` holds
    ``0x10000 + w``; thread ``t`` copies chunk ``CP_PERM[t]`` into chunk ``t``; the
    buffer was poisoned with 0xFFFFFFFF.

    >>> decode_cp_async(8, "ca", False, simulate_cp_async(8, False))["status"]
    'agree'
    """
    wpc = cp_size // 4
    mism = []
    for t in range(WARP):
        copied = wpc
        if zfill:
            copied_bytes, _zero = ptx.cp_async_fill(cp_size, cp_src_size(t, cp_size))
            copied = copied_bytes // 4
        for w in range(wpc):
            got = dst_words[t * wpc + w]
            exp = 0x10000 + CP_PERM[t] * wpc + w if w < copied else 0
            if got != exp:
                mism.append({"thread": t, "word": w, "model": exp, "observed": got})
    name = f"cp.async.{cache}.{cp_size}{'.zfill' if zfill else ''}"
    text = f"cp.async.{cache}.shared.global [dst], [src], {cp_size}{', src-size' if zfill else ''}"
    return _record(name, "cp.async", text, WARP * wpc, mism,
                   extra={"observed_raw": [int(w) for w in dst_words]})


def simulate_cp_async(cp_size: int, zfill: bool) -> list[int]:
    """Model prediction of the cp.async probe's shared buffer (for decoder tests).

    >>> simulate_cp_async(4, False)[:2] == [0x10000 + CP_PERM[0], 0x10000 + CP_PERM[1]]
    True
    """
    wpc = cp_size // 4
    out = []
    for t in range(WARP):
        copied = wpc if not zfill else cp_src_size(t, cp_size) // 4
        out += [0x10000 + CP_PERM[t] * wpc + w if w < copied else 0 for w in range(wpc)]
    return out


# ---------------------------------------------------------------------------
# mma.sync: experiments, model triples, decoding (pure Python)
# ---------------------------------------------------------------------------

#: (shape, atype, ctype, alayout, blayout) probed, in order (sm_70 m8n8k4 last).
MMA_PROBES: tuple[tuple[str, str, str, str, str], ...] = (
    ("m16n8k16", "f16", "f32", "row", "col"),
    ("m16n8k16", "f16", "f16", "row", "col"),
    ("m16n8k16", "bf16", "f32", "row", "col"),
    ("m16n8k8", "f16", "f32", "row", "col"),
    ("m16n8k8", "bf16", "f32", "row", "col"),
    ("m16n8k8", "tf32", "f32", "row", "col"),
    ("m16n8k4", "tf32", "f32", "row", "col"),
    ("m16n8k16", "s8", "s32", "row", "col"),
    ("m16n8k32", "s8", "s32", "row", "col"),
    ("m16n8k32", "u8", "s32", "row", "col"),
    ("m8n8k16", "s8", "s32", "row", "col"),
    ("m8n8k4", "f64", "f64", "row", "col"),
    ("m16n8k32", "e4m3", "f32", "row", "col"),
    ("m16n8k32", "e5m2", "f32", "row", "col"),
    ("m8n8k4", "f16", "f32", "row", "col"),
    ("m8n8k4", "f16", "f16", "row", "col"),
    ("m8n8k4", "f16", "f32", "col", "col"),
    ("m8n8k4", "f16", "f32", "row", "row"),
    ("m8n8k4", "f16", "f32", "col", "row"),
)


def mma_ptx(shape: str, atype: str, ctype: str, alayout: str = "row", blayout: str = "col") -> str:
    """The instruction text probed.

    >>> mma_ptx("m16n8k32", "e4m3", "f32")
    'mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32'
    """
    return f"mma.sync.aligned.{shape}.{alayout}.{blayout}.{ctype}.{atype}.{atype}.{ctype}"


def mma_name(shape: str, atype: str, ctype: str, alayout: str = "row", blayout: str = "col") -> str:
    """Short atom name used in the report.

    >>> mma_name("m16n8k8", "tf32", "f32")
    'mma.m16n8k8.tf32->f32'
    """
    lay = "" if (alayout, blayout) == ("row", "col") else f".{alayout}.{blayout}"
    return f"mma.{shape}{lay}.{atype}->{ctype}"


def mma_model(shape: str, atype: str, ctype: str, alayout: str = "row", blayout: str = "col"):
    """Slot-indexed model coordinates ``(A, B, C)``: ``A[lane*a_elems + i] =
    (batch, m, k)``, ``B[...] = (batch, k, n)``, ``C[...] = (batch, m, n)``.

    >>> A, B, C = mma_model("m16n8k8", "f16", "f32"); A[1], B[1], C[3]
    ((0, 0, 1), (0, 1, 0), (0, 8, 1))
    """
    s = ptx.mma_spec(shape, atype, ctype)
    A = [None] * (WARP * s.a_elems)
    B = [None] * (WARP * s.b_elems)
    C = [None] * (WARP * s.c_elems)
    for lane in range(WARP):
        bat = ptx.mma_batch(shape, atype, lane)
        for i in range(s.a_elems):
            A[lane * s.a_elems + i] = (bat, *ptx.mma_a_elem(shape, atype, lane, i, alayout=alayout))
        for i in range(s.b_elems):
            B[lane * s.b_elems + i] = (bat, *ptx.mma_b_elem(shape, atype, lane, i, blayout=blayout))
        for i in range(s.c_elems):
            C[lane * s.c_elems + i] = (bat, *ptx.mma_c_elem(shape, atype, lane, i, ctype=ctype))
    return A, B, C


def triples_of(A: Sequence[tuple], B: Sequence[tuple], C: Sequence[tuple]) -> set[tuple[int, int, int]]:
    """All ``(a_slot, b_slot, d_slot)`` with ``A[a]`` times ``B[b]`` accumulated into
    ``D[d]``, for slot->coordinate tables as from :func:`mma_model`.

    >>> len(triples_of(*mma_model("m16n8k8", "f16", "f32")))
    1024
    """
    b_at = {coord: b for b, coord in enumerate(B)}
    d_at = {coord: d for d, coord in enumerate(C)}
    ns = sorted({n for (_, _, n) in C})
    out = set()
    for a, (bat, m, k) in enumerate(A):
        for n in ns:
            b = b_at.get((bat, k, n))
            d = d_at.get((bat, m, n))
            if b is not None and d is not None:
                out.add((a, b, d))
    return out


def _nbits(count: int) -> int:
    return max(1, (count - 1).bit_length())


def mma_experiments(n_a: int, n_b: int) -> list[tuple[str, int, int]]:
    """The experiments for ``n_a`` A slots and ``n_b`` B slots: ``("C", -1, 0)``,
    then ``("A", a, j)`` for every A slot and bit of the B slot index, then
    ``("B", b, j)`` likewise.

    >>> e = mma_experiments(4, 2); len(e), e[:3]
    (9, [('C', -1, 0), ('A', 0, 0), ('A', 1, 0)])
    """
    exps = [("C", -1, 0)]
    exps += [("A", a, j) for a in range(n_a) for j in range(_nbits(n_b))]
    exps += [("B", b, j) for b in range(n_b) for j in range(_nbits(n_a))]
    return exps


def mma_values(exp: tuple[str, int, int], n_a: int, n_b: int, n_c: int) -> tuple[list[int], list[int], list[int]]:
    """Input element values ``(A, B, C)`` (slot-indexed) of one experiment.

    >>> mma_values(("A", 1, 0), 2, 3, 2)
    ([0, 1], [1, 2, 1], [0, 0])
    """
    kind, t, j = exp
    if kind == "C":
        return [0] * n_a, [0] * n_b, [d + 1 for d in range(n_c)]
    if kind == "A":
        return ([1 if a == t else 0 for a in range(n_a)],
                [1 + ((b >> j) & 1) for b in range(n_b)], [0] * n_c)
    return ([1 + ((a >> j) & 1) for a in range(n_a)],
            [1 if b == t else 0 for b in range(n_b)], [0] * n_c)


def simulate_mma(exps: Sequence[tuple], A: Sequence[tuple], B: Sequence[tuple],
                 C: Sequence[tuple]) -> list[list[int]]:
    """D slot values of each experiment for a layout given as slot->coordinate
    tables (the hardware's behaviour if that layout were the truth).

    >>> A, B, C = mma_model("m8n8k4", "f64", "f64")
    >>> simulate_mma([("C", -1, 0)], A, B, C)[0][:3]
    [1, 2, 3]
    """
    n_a, n_b, n_c = len(A), len(B), len(C)
    d_at = {coord: d for d, coord in enumerate(C)}
    b_by_k: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for b, (bat, k, n) in enumerate(B):
        b_by_k.setdefault((bat, k), []).append((b, n))
    out = []
    for exp in exps:
        av, bv, cv = mma_values(exp, n_a, n_b, n_c)
        d = list(cv)
        for a in range(n_a):
            if av[a] == 0:
                continue
            bat, m, k = A[a]
            for b, n in b_by_k.get((bat, k), ()):
                if bv[b]:
                    d[d_at[(bat, m, n)]] += av[a] * bv[b]
        out.append(d)
    return out


def observe_mma_triples(n_a: int, n_b: int, n_c: int, exps: Sequence[tuple],
                        observed: Sequence[Sequence[int]]) -> tuple[set, set, list[dict]]:
    """Model-free part of the mma decoding: from the observed D values of
    :func:`mma_experiments`, the ``(a, b, d)`` triples seen by the A-probes and
    by the B-probes, and a list of anomalies (C->D not the identity, values
    other than 0/1/2, inconsistent lit sets).

    >>> A, B, C = mma_model("m8n8k4", "f64", "f64")
    >>> ex = mma_experiments(len(A), len(B))
    >>> ta, tb, an = observe_mma_triples(len(A), len(B), len(C), ex, simulate_mma(ex, A, B, C))
    >>> len(ta), ta == tb, an
    (256, True, [])
    """
    anomalies: list[dict] = []
    by_target: dict[tuple[str, int], dict[int, Sequence[int]]] = {}
    for exp, vals in zip(exps, observed):
        kind, t, j = exp
        if kind == "C":
            for d in range(n_c):
                if vals[d] != d + 1:
                    anomalies.append({"what": "C->D identity", "d_slot": _slot(d, n_c),
                                      "model": d + 1, "observed": vals[d]})
            continue
        by_target.setdefault((kind, t), {})[j] = vals
    obs: dict[str, set] = {"A": set(), "B": set()}
    for (kind, t), bitvals in sorted(by_target.items()):
        n_other = n_b if kind == "A" else n_a
        lits = {j: frozenset(d for d in range(n_c) if v[d] != 0) for j, v in bitvals.items()}
        lit = lits[0]
        if any(l != lit for l in lits.values()):
            anomalies.append({"what": f"{kind}-slot {t}: lit D slots differ between runs"})
        for d in sorted(lit):
            idx = 0
            ok = True
            for j, v in bitvals.items():
                if v[d] not in (1, 2):
                    ok = False
                    break
                idx |= (v[d] - 1) << j
            if not ok or idx >= n_other:
                anomalies.append({"what": f"{kind}-slot {_slot(t, n_a if kind == 'A' else n_b)} "
                                          f"D slot {_slot(d, n_c)}: values {[v[d] for v in bitvals.values()]}"})
                continue
            obs[kind].add((t, idx, d) if kind == "A" else (idx, t, d))
    return obs["A"], obs["B"], anomalies


def compare_mma_triples(A: Sequence[tuple], B: Sequence[tuple], C: Sequence[tuple],
                        tri_a: set, tri_b: set, anomalies: Sequence[dict] = ()) -> list[dict]:
    """Mismatches between observed triples and the layout ``(A, B, C)``
    (slot->coordinate tables); empty iff they agree.

    >>> A, B, C = mma_model("m8n8k4", "f64", "f64")
    >>> t = triples_of(A, B, C)
    >>> compare_mma_triples(A, B, C, t, t)
    []
    >>> len(compare_mma_triples(A, B, C[::-1], t, t)) > 0
    True
    """
    model = triples_of(A, B, C)
    mism = list(anomalies)
    if tri_a != tri_b:
        mism.append({"what": "A-probe and B-probe triples differ",
                     "only_A_probe": len(tri_a - tri_b), "only_B_probe": len(tri_b - tri_a)})
    observed = set(tri_a) | set(tri_b)
    if observed != model:
        mism += _triple_diff(A, B, C, model, observed)
    return mism


def decode_mma(shape: str, atype: str, ctype: str, alayout: str, blayout: str,
               exps: Sequence[tuple], observed: Sequence[Sequence[int]]) -> dict:
    """Recover the (A, B, D) slot triples from observed D values and compare them
    with the PTX model.

    ``observed[e][d]`` is the value of D slot ``d`` (``lane*c_elems + i``) in
    experiment ``exps[e]`` (None for a value that was not an exact integer).  The
    record keeps the observed triples (``observed_triples``) for re-decoding.

    >>> A, B, C = mma_model("m16n8k8", "tf32", "f32")
    >>> ex = mma_experiments(len(A), len(B))
    >>> decode_mma("m16n8k8", "tf32", "f32", "row", "col", ex, simulate_mma(ex, A, B, C))["status"]
    'agree'
    """
    A, B, C = mma_model(shape, atype, ctype, alayout, blayout)
    n_a, n_b, n_c = len(A), len(B), len(C)
    tri_a, tri_b, anomalies = observe_mma_triples(n_a, n_b, n_c, exps, observed)
    mism = compare_mma_triples(A, B, C, tri_a, tri_b, anomalies)
    s = ptx.mma_spec(shape, atype, ctype)
    observed_triples = tri_a | tri_b
    return _record(mma_name(shape, atype, ctype, alayout, blayout), "mma", mma_ptx(shape, atype, ctype, alayout, blayout),
                   n_a + n_b + n_c, mism,
                   extra={"experiments": len(exps), "triples_model": len(triples_of(A, B, C)),
                          "triples_observed": len(observed_triples),
                          "observed_triples": sorted(observed_triples),
                          "probe_triples_agree": tri_a == tri_b,
                          "anomalies": len(anomalies),
                          "variant": [shape, atype, ctype, alayout, blayout],
                          "regs_per_lane": {"a": s.a_regs, "b": s.b_regs, "c": s.c_regs}})


# ---------------------------------------------------------------------------
# Negative controls: the observed data decoded against deliberately wrong models
# ---------------------------------------------------------------------------


def _swap_within_lanes(table: Sequence[tuple], elems: int, i: int, j: int) -> list[tuple]:
    out = list(table)
    for lane in range(WARP):
        a, b = lane * elems + i, lane * elems + j
        out[a], out[b] = out[b], out[a]
    return out


def negative_controls(result: dict) -> list[dict]:
    """Re-decode the observed data of ``result`` (from :func:`run_atom_probe`, or
    its JSON) against deliberately wrong models; each control must *disagree*
    (``n_mismatches > 0``), which shows the probe can tell such models apart.

    Controls: ldmatrix/stmatrix against the opposite ``.trans``; every mma
    against the model with A elements 0 and 1 swapped in every lane (for one-element
    A: B's, else C's 0 and 1); m16n8k8 tf32 against the f16 register order.

    >>> A, B, C = mma_model("m16n8k8", "tf32", "f32")
    >>> ex = mma_experiments(len(A), len(B))
    >>> rec = decode_mma("m16n8k8", "tf32", "f32", "row", "col", ex, simulate_mma(ex, A, B, C))
    >>> all(c["n_mismatches"] > 0 for c in negative_controls({"results": [rec]}))
    True
    """
    out = []
    for r in result.get("results", []):
        if r.get("status") != "agree":
            continue
        if r["kind"] in ("ldmatrix", "stmatrix") and "observed_raw" in r:
            num = int(r["atom"].split(".x")[1][0])
            trans = r["atom"].endswith(".trans")
            dec = decode_ldmatrix if r["kind"] == "ldmatrix" else decode_stmatrix
            rec = dec(num, not trans, r["observed_raw"])
            out.append({"atom": r["atom"], "control": f"decoded with the {'non-' if trans else ''}.trans model",
                        "n_mismatches": rec["n_mismatches"], "of": r["slots_checked"]})
        elif r["kind"] == "mma" and "observed_triples" in r:
            shape, atype, ctype, al, bl = r["variant"]
            s = ptx.mma_spec(shape, atype, ctype)
            A, B, C = mma_model(shape, atype, ctype, al, bl)
            tri = {tuple(t) for t in r["observed_triples"]}
            if s.a_elems >= 2:
                alt, what = (_swap_within_lanes(A, s.a_elems, 0, 1), B, C), "A elements a0<->a1 swapped"
            elif s.b_elems >= 2:
                alt, what = (A, _swap_within_lanes(B, s.b_elems, 0, 1), C), "B elements b0<->b1 swapped"
            else:
                alt, what = (A, B, _swap_within_lanes(C, s.c_elems, 0, 1)), "C elements c0<->c1 swapped"
            n = len(compare_mma_triples(*alt, tri, tri))
            out.append({"atom": r["atom"], "control": what, "n_mismatches": n, "of": r["slots_checked"]})
            if (shape, atype) == ("m16n8k8", "tf32"):
                f16_order = [(0,) + _f16_order_tf32_a(slot) for slot in range(len(A))]
                n = len(compare_mma_triples(f16_order, B, C, tri, tri))
                out.append({"atom": r["atom"], "control": "tf32 A read in the f16 register order",
                            "n_mismatches": n, "of": r["slots_checked"]})
    return out


def _f16_order_tf32_a(slot: int) -> tuple[int, int]:
    """m16n8k8 tf32 A coordinates if its registers followed f16's order (a1 in the
    same row, a2/a3 in row + 8), a plausible mistake the tf32 probe must catch."""
    lane, i = divmod(slot, 4)
    g, t = lane >> 2, lane % 4
    return g + 8 * (i >> 1), t + 4 * (i & 1)


def _slot(s: int, n: int) -> tuple[int, int]:
    per = n // WARP
    return divmod(s, per)  # (lane, i)


def _triple_diff(A, B, C, model: set, observed: set) -> list[dict]:
    """Describe which slots' observed relations differ, naming each observed slot by the
    model coordinate whose relation set it has (or '?')."""
    out = []
    for name, coords, slot_pos in (("A", A, 0), ("B", B, 1), ("D", C, 2)):
        n = len(coords)
        # relation of a slot: the set of (other1, other2) pairs it takes part in
        rel_m: dict[int, set] = {}
        rel_o: dict[int, set] = {}
        for t in model:
            rel_m.setdefault(t[slot_pos], set()).add(tuple(x for i, x in enumerate(t) if i != slot_pos))
        for t in observed:
            rel_o.setdefault(t[slot_pos], set()).add(tuple(x for i, x in enumerate(t) if i != slot_pos))
        coord_of_rel = {frozenset(v): coords[s] for s, v in rel_m.items()}
        for s in range(n):
            if rel_m.get(s, set()) != rel_o.get(s, set()):
                got = coord_of_rel.get(frozenset(rel_o.get(s, set())), "?")
                out.append({"operand": name, "lane": _slot(s, n)[0], "i": _slot(s, n)[1],
                            "model": coords[s], "observed": got})
    return out


# ---------------------------------------------------------------------------
# CUDA sources (strings; compiled on the GPU machine)
# ---------------------------------------------------------------------------

_PRELUDE = "typedef unsigned int u32;\ntypedef unsigned short u16;\n"


def ldmatrix_source(num: int, trans: bool) -> str:
    """CUDA C++ of the ldmatrix probe kernel ``probe(table, row_of_lane, out)``.

    >>> "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16" in ldmatrix_source(2, True)
    True
    """
    regs = ", ".join(f"%{j}" for j in range(num))
    outs = ", ".join(f'"=r"(r[{j}])' for j in range(num))
    return _PRELUDE + f"""
extern "C" __global__ void probe(const u16* __restrict__ table, const int* __restrict__ row_of_lane,
                                 u32* __restrict__ out) {{
  __shared__ __align__(16) u16 s[{TABLE_ROWS * 8}];
  const int lane = threadIdx.x;
  for (int i = lane; i < {TABLE_ROWS * 8}; i += 32) s[i] = table[i];
  __syncthreads();
  u32 addr = (u32)__cvta_generic_to_shared(&s[row_of_lane[lane] * 8]);
  u32 r[{num}];
  asm volatile("{ldmatrix_ptx(num, trans)} {{{regs}}}, [%{num}];\\n" : {outs} : "r"(addr) : "memory");
  for (int j = 0; j < {num}; ++j) out[lane * {num} + j] = r[j];
}}
"""


def stmatrix_source(num: int, trans: bool) -> str:
    """CUDA C++ of the stmatrix probe kernel ``probe(regs, row_of_lane, out)``.

    >>> "stmatrix.sync.aligned.m8n8.x4.shared.b16" in stmatrix_source(4, False)
    True
    """
    regs = ", ".join(f"%{j + 1}" for j in range(num))
    ins = ", ".join(f'"r"(r[{j}])' for j in range(num))
    return _PRELUDE + f"""
extern "C" __global__ void probe(const u32* __restrict__ regs, const int* __restrict__ row_of_lane,
                                 u16* __restrict__ out) {{
  __shared__ __align__(16) u16 s[{TABLE_ROWS * 8}];
  const int lane = threadIdx.x;
  for (int i = lane; i < {TABLE_ROWS * 8}; i += 32) s[i] = 0xFFFF;
  __syncthreads();
  u32 r[{num}];
  for (int j = 0; j < {num}; ++j) r[j] = regs[lane * {num} + j];
  u32 addr = (u32)__cvta_generic_to_shared(&s[row_of_lane[lane] * 8]);
  asm volatile("{stmatrix_ptx(num, trans)} [%0], {{{regs}}};\\n" :: "r"(addr), {ins} : "memory");
  __syncthreads();
  for (int i = lane; i < {TABLE_ROWS * 8}; i += 32) out[i] = s[i];
}}
"""


def cp_async_source(cp_size: int, cache: str, zfill: bool) -> str:
    """CUDA C++ of the cp.async probe kernel ``probe(src, perm, out)``.

    >>> "cp.async.cg.shared.global" in cp_async_source(16, "cg", False)
    True
    """
    wpc = cp_size // 4
    if zfill:
        copy = (f'asm volatile("cp.async.{cache}.shared.global [%0], [%1], {cp_size}, %2;\\n" '
                f':: "r"(dst), "l"(g), "r"(4 * (t % {wpc + 1})) : "memory");')
    else:
        copy = f'asm volatile("cp.async.{cache}.shared.global [%0], [%1], {cp_size};\\n" :: "r"(dst), "l"(g) : "memory");'
    return _PRELUDE + f"""
extern "C" __global__ void probe(const u32* __restrict__ src, const int* __restrict__ perm, u32* __restrict__ out) {{
  __shared__ __align__(16) u32 s[{WARP * wpc}];
  const int t = threadIdx.x;
  for (int i = t; i < {WARP * wpc}; i += 32) s[i] = 0xFFFFFFFFu;
  __syncthreads();
  u32 dst = (u32)__cvta_generic_to_shared(&s[t * {wpc}]);
  size_t g = __cvta_generic_to_global(src + perm[t] * {wpc});
  {copy}
  asm volatile("cp.async.commit_group;\\n" ::: "memory");
  asm volatile("cp.async.wait_group 0;\\n" ::: "memory");
  __syncthreads();
  for (int i = t; i < {WARP * wpc}; i += 32) out[i] = s[i];
}}
"""


def _words_per_reg(typ: str) -> int:
    return 2 if typ == "f64" else 1


def mma_source(shape: str, atype: str, ctype: str, alayout: str = "row", blayout: str = "col") -> str:
    """CUDA C++ of the mma probe kernel ``probe(A, B, C, D, E)``: warp ``e`` loads its
    32-bit input words, runs one mma and stores D's words.

    >>> src = mma_source("m8n8k4", "f64", "f64")
    >>> "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64" in src
    True
    """
    s = ptx.mma_spec(shape, atype, ctype)
    aw, bw, cw = s.a_regs * _words_per_reg(atype), s.b_regs * _words_per_reg(atype), s.c_regs * _words_per_reg(ctype)
    lines = []
    operands_out, operands_in = [], []
    idx = 0

    def group(n):
        nonlocal idx
        g = "{" + ", ".join(f"%{idx + q}" for q in range(n)) + "}"
        idx += n
        return g

    dgrp = group(s.c_regs)
    agrp = group(s.a_regs)
    bgrp = group(s.b_regs)
    cgrp = group(s.c_regs)
    # declarations
    if atype == "f64":
        lines.append(f"double a[{s.a_regs}], b[{s.b_regs}];")
        lines.append(f"for (int q = 0; q < {s.a_regs}; ++q) a[q] = __hiloint2double((int)ai[2*q+1], (int)ai[2*q]);")
        lines.append(f"for (int q = 0; q < {s.b_regs}; ++q) b[q] = __hiloint2double((int)bi[2*q+1], (int)bi[2*q]);")
        ain = [f'"d"(a[{q}])' for q in range(s.a_regs)]
        bin_ = [f'"d"(b[{q}])' for q in range(s.b_regs)]
    else:
        lines.append(f"u32 a[{s.a_regs}], b[{s.b_regs}];")
        lines.append(f"for (int q = 0; q < {s.a_regs}; ++q) a[q] = ai[q];")
        lines.append(f"for (int q = 0; q < {s.b_regs}; ++q) b[q] = bi[q];")
        ain = [f'"r"(a[{q}])' for q in range(s.a_regs)]
        bin_ = [f'"r"(b[{q}])' for q in range(s.b_regs)]
    if ctype == "f32":
        lines.append(f"float c[{s.c_regs}], d[{s.c_regs}];")
        lines.append(f"for (int q = 0; q < {s.c_regs}; ++q) c[q] = __uint_as_float(ci[q]);")
        dout = [f'"=f"(d[{q}])' for q in range(s.c_regs)]
        cin = [f'"f"(c[{q}])' for q in range(s.c_regs)]
        store = f"for (int q = 0; q < {s.c_regs}; ++q) do_[q] = __float_as_uint(d[q]);"
    elif ctype == "f64":
        lines.append(f"double c[{s.c_regs}], d[{s.c_regs}];")
        lines.append(f"for (int q = 0; q < {s.c_regs}; ++q) c[q] = __hiloint2double((int)ci[2*q+1], (int)ci[2*q]);")
        dout = [f'"=d"(d[{q}])' for q in range(s.c_regs)]
        cin = [f'"d"(c[{q}])' for q in range(s.c_regs)]
        store = (f"for (int q = 0; q < {s.c_regs}; ++q) {{ do_[2*q] = (u32)__double2loint(d[q]); "
                 f"do_[2*q+1] = (u32)__double2hiint(d[q]); }}")
    else:  # f16x2 or s32 in 32-bit registers
        lines.append(f"u32 c[{s.c_regs}], d[{s.c_regs}];")
        lines.append(f"for (int q = 0; q < {s.c_regs}; ++q) c[q] = ci[q];")
        dout = [f'"=r"(d[{q}])' for q in range(s.c_regs)]
        cin = [f'"r"(c[{q}])' for q in range(s.c_regs)]
        store = f"for (int q = 0; q < {s.c_regs}; ++q) do_[q] = d[q];"
    operands_out = dout
    operands_in = ain + bin_ + cin
    asm = (f'asm volatile("{mma_ptx(shape, atype, ctype, alayout, blayout)} {dgrp}, {agrp}, {bgrp}, {cgrp};\\n"\n'
           f'    : {", ".join(operands_out)}\n    : {", ".join(operands_in)});')
    body = "\n  ".join(lines)
    return _PRELUDE + f"""
extern "C" __global__ void probe(const u32* __restrict__ A, const u32* __restrict__ B, const u32* __restrict__ C,
                                 u32* __restrict__ D, int E) {{
  const int lane = threadIdx.x & 31;
  const long long e = (long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (e >= E) return;
  const u32* ai = A + (e * 32 + lane) * {aw};
  const u32* bi = B + (e * 32 + lane) * {bw};
  const u32* ci = C + (e * 32 + lane) * {cw};
  u32* do_ = D + (e * 32 + lane) * {cw};
  {body}
  {asm}
  {store}
}}
"""


def all_probe_sources() -> dict[str, str]:
    """``{atom name: CUDA source}`` for every probe (compile-checkable off the GPU).

    >>> len(all_probe_sources()) == 12 + 4 + 2 + len(MMA_PROBES)
    True
    """
    out = {}
    for num in ptx.LDMATRIX_NUMS:
        for trans in (False, True):
            out[f"ldmatrix.x{num}{'.trans' if trans else ''}"] = ldmatrix_source(num, trans)
            out[f"stmatrix.x{num}{'.trans' if trans else ''}"] = stmatrix_source(num, trans)
    for size, cache, zfill in _CP_PROBES:
        out[f"cp.async.{cache}.{size}{'.zfill' if zfill else ''}"] = cp_async_source(size, cache, zfill)
    for v in MMA_PROBES:
        out[mma_name(*v)] = mma_source(*v)
    return out


_CP_PROBES = ((4, "ca", False), (8, "ca", False), (16, "ca", False), (16, "cg", False),
              (16, "ca", True), (8, "ca", True))


# ---------------------------------------------------------------------------
# Element encoding (numpy; GPU side)
# ---------------------------------------------------------------------------

_F8 = {"e4m3": {0: 0x00, 1: 0x38, 2: 0x40}, "e5m2": {0: 0x00, 1: 0x3C, 2: 0x40}}


def encode_elements(vals, typ: str):
    """Bit patterns (numpy uint32, uint64 for f64) of small non-negative integer
    values ``vals`` in PTX type ``typ``.

    >>> import numpy as np  # doctest: +SKIP
    >>> [hex(x) for x in encode_elements(np.array([1, 2]), "f16")]  # doctest: +SKIP
    ['0x3c00', '0x4000']
    """
    import numpy as np
    v = np.asarray(vals)
    if typ == "f16":
        return v.astype(np.float16).view(np.uint16).astype(np.uint32)
    if typ == "bf16":
        return v.astype(np.float32).view(np.uint32) >> np.uint32(16)
    if typ in ("tf32", "f32"):
        return v.astype(np.float32).view(np.uint32)
    if typ == "f64":
        return v.astype(np.float64).view(np.uint64)
    if typ in ("s8", "u8"):
        return (v.astype(np.int64) & 0xFF).astype(np.uint32)
    if typ == "s32":
        return (v.astype(np.int64) & 0xFFFFFFFF).astype(np.uint32)
    if typ in _F8:
        if v.size and (v.min() < 0 or v.max() > 2):
            raise ValueError(f"{typ} encoding supports only 0, 1, 2")
        lut = np.array([_F8[typ][q] for q in range(3)], dtype=np.uint32)
        return lut[v.astype(np.int64)]
    raise ValueError(f"unknown type {typ!r}")


def pack_registers(vals, typ: str, elems: int):
    """Pack slot values ``vals[..., lane*elems + i]`` into 32-bit words
    ``[..., lane, word]`` (low bits first; an f64 register is two words, low first).

    >>> import numpy as np  # doctest: +SKIP
    >>> pack_registers(np.ones((1, 64), int), "f16", 2)[0, 0].tolist()  # doctest: +SKIP
    [1006648320]
    """
    import numpy as np
    v = np.asarray(vals)
    lead = v.shape[:-1]
    bits = encode_elements(v, typ).reshape(*lead, WARP, elems)
    if typ == "f64":
        lo = (bits & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        hi = (bits >> np.uint64(32)).astype(np.uint32)
        return np.stack([lo, hi], axis=-1).reshape(*lead, WARP, 2 * elems)
    per = ptx.mma_elems_per_reg(typ)
    if per == 1:
        return bits.astype(np.uint32)
    width = 32 // per
    bits = bits.reshape(*lead, WARP, elems // per, per).astype(np.uint64)
    words = np.zeros(bits.shape[:-1], dtype=np.uint64)
    for p in range(per):
        words |= bits[..., p] << np.uint64(width * p)
    return words.astype(np.uint32)


def unpack_registers(words, typ: str, elems: int):
    """Inverse of :func:`pack_registers` for C/D types: numeric element values
    ``[..., lane*elems + i]`` (float64 or int64 numpy array).

    >>> unpack_registers(pack_registers(np.arange(128).reshape(1, 128), "f16", 4), "f16", 4)[0, :3].tolist()  # doctest: +SKIP
    [0.0, 1.0, 2.0]
    """
    import numpy as np
    w = np.ascontiguousarray(np.asarray(words, dtype=np.uint32))
    lead = w.shape[:-2]
    if typ == "f32":
        vals = w.view(np.float32).astype(np.float64)
    elif typ == "f16":
        vals = w.view(np.uint16).view(np.float16).astype(np.float64)
    elif typ == "s32":
        vals = w.view(np.int32).astype(np.int64)
    elif typ == "f64":
        vals = w.view(np.float64)
    else:
        raise ValueError(f"unpack supports C/D types only, got {typ!r}")
    return vals.reshape(*lead, WARP * elems)


# ---------------------------------------------------------------------------
# GPU driver
# ---------------------------------------------------------------------------


def _probe_ldst(cuda, cp, num: int, trans: bool, store: bool) -> dict:
    import numpy as np
    src = stmatrix_source(num, trans) if store else ldmatrix_source(num, trans)
    mod = cuda.compile_module(src)
    rows = cp.asarray(np.array(ROW_OF_LANE, dtype=np.int32))
    if store:
        regs = cp.asarray(np.array(st_reg_words(num), dtype=np.uint32))
        out = cp.full(TABLE_ROWS * 8, 0x1234, dtype=cp.uint16)  # overwritten by the kernel's copy-out
        cuda.launch(mod, "probe", 1, WARP, (regs, rows, out))
        return decode_stmatrix(num, trans, cp.asnumpy(out).astype(int).tolist())
    table = cp.asarray(np.array(ld_table(), dtype=np.uint16))
    out = cp.full(WARP * num, POISON32, dtype=cp.uint32)
    cuda.launch(mod, "probe", 1, WARP, (table, rows, out))
    return decode_ldmatrix(num, trans, cp.asnumpy(out).astype(int).tolist())


def _probe_cp_async(cuda, cp, size: int, cache: str, zfill: bool) -> dict:
    import numpy as np
    mod = cuda.compile_module(cp_async_source(size, cache, zfill))
    wpc = size // 4
    src = cp.asarray((0x10000 + np.arange(WARP * wpc)).astype(np.uint32))
    perm = cp.asarray(np.array(CP_PERM, dtype=np.int32))
    out = cp.full(WARP * wpc, POISON32, dtype=cp.uint32)
    cuda.launch(mod, "probe", 1, WARP, (src, perm, out))
    return decode_cp_async(size, cache, zfill, cp.asnumpy(out).astype(int).tolist())


def _probe_mma(cuda, cp, shape: str, atype: str, ctype: str, alayout: str, blayout: str) -> dict:
    import numpy as np
    s = ptx.mma_spec(shape, atype, ctype)
    mod = cuda.compile_module(mma_source(shape, atype, ctype, alayout, blayout))
    n_a, n_b, n_c = WARP * s.a_elems, WARP * s.b_elems, WARP * s.c_elems
    exps = mma_experiments(n_a, n_b)
    E = len(exps)
    Av = np.zeros((E, n_a), np.int64)
    Bv = np.zeros((E, n_b), np.int64)
    Cv = np.zeros((E, n_c), np.int64)
    ar, br = np.arange(n_a), np.arange(n_b)
    for e, (kind, t, j) in enumerate(exps):
        if kind == "C":
            Cv[e] = np.arange(n_c) + 1
        elif kind == "A":
            Av[e, t] = 1
            Bv[e] = 1 + ((br >> j) & 1)
        else:
            Bv[e, t] = 1
            Av[e] = 1 + ((ar >> j) & 1)
    Aw = pack_registers(Av, atype, s.a_elems)
    Bw = pack_registers(Bv, atype, s.b_elems)
    Cw = pack_registers(Cv, ctype, s.c_elems)
    d_words = Cw.shape[-1]
    dA, dB, dC = (cp.asarray(np.ascontiguousarray(x)) for x in (Aw, Bw, Cw))
    dD = cp.full((E, WARP, d_words), POISON32, dtype=cp.uint32)
    warps_per_block = 4
    grid = (E + warps_per_block - 1) // warps_per_block
    cuda.launch(mod, "probe", grid, 32 * warps_per_block, (dA, dB, dC, dD, np.int32(E)))
    vals = unpack_registers(cp.asnumpy(dD), ctype, s.c_elems)
    exact = np.isfinite(vals) & (np.rint(vals) == vals) if vals.dtype.kind == "f" else np.ones(vals.shape, bool)
    ints = np.where(exact, np.rint(np.nan_to_num(vals)), -10**9).astype(np.int64).tolist()
    observed = [[(x if x != -10**9 else None) for x in row] for row in ints]
    rec = decode_mma(shape, atype, ctype, alayout, blayout, exps, observed)
    rec["compile"] = mod.how
    return rec


def run_atom_probe(*, only: Iterable[str] | None = None, log=None) -> dict:
    """Run every probe on the current GPU; returns ``{"meta": ..., "results": [...]}``.

    Each result has ``atom``, ``kind``, ``ptx``, ``status`` ("agree",
    "disagree", "error"), ``slots_checked``, ``n_mismatches`` and the first
    mismatches.  ``only`` restricts to atom names starting with one of its strings.

    >>> res = run_atom_probe(only=["ldmatrix.x1"])  # doctest: +SKIP
    >>> res["results"][0]["status"]  # doctest: +SKIP
    'agree'
    """
    cp = cuda.load_cupy()
    t0 = time.time()
    info = cuda.device_info()
    cc = cuda.compute_capability()
    results: list[dict] = []
    only = tuple(only) if only else None

    def want(name):
        return only is None or name.startswith(only)

    def run(name, kind, text, fn, *args):
        if not want(name):
            return
        t = time.time()
        try:
            rec = fn(cuda, cp, *args)
        except Exception as e:  # compile errors, launch errors: recorded, run continues
            rec = _record(name, kind, text, 0, [], status="error", note=f"{type(e).__name__}: {str(e)[:1500]}")
        rec["seconds"] = round(time.time() - t, 3)
        results.append(rec)
        if log:
            print(f"{rec['atom']:<34} {rec['status']:<9} mismatches={rec['n_mismatches']} "
                  f"{rec['seconds']}s {rec.get('note', '')[:200]}", file=log, flush=True)

    for num in ptx.LDMATRIX_NUMS:
        for trans in (False, True):
            run(f"ldmatrix.x{num}{'.trans' if trans else ''}", "ldmatrix", ldmatrix_ptx(num, trans),
                _probe_ldst, num, trans, False)
    for num in ptx.LDMATRIX_NUMS:
        for trans in (False, True):
            run(f"stmatrix.x{num}{'.trans' if trans else ''}", "stmatrix", stmatrix_ptx(num, trans),
                _probe_ldst, num, trans, True)
    for size, cache, zfill in _CP_PROBES:
        run(f"cp.async.{cache}.{size}{'.zfill' if zfill else ''}", "cp.async", f"cp.async.{cache} {size}",
            _probe_cp_async, size, cache, zfill)
    for v in MMA_PROBES:
        run(mma_name(*v), "mma", mma_ptx(*v), _probe_mma, *v)
    controls = negative_controls({"results": results})
    meta = dict(info)
    meta.update({
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"),
        "arch": f"sm_{cc[0]}{cc[1]}",
        "seconds": round(time.time() - t0, 2),
        "python": sys.version.split()[0],
    })
    return {"meta": meta, "results": results, "negative_controls": controls}


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------


def summarize(result: dict) -> dict[str, int]:
    """Counts of results per status.

    >>> summarize({"results": [{"status": "agree"}, {"status": "agree"}, {"status": "error"}]})
    {'agree': 2, 'error': 1}
    """
    out: dict[str, int] = {}
    for r in result["results"]:
        out[r["status"]] = out.get(r["status"], 0) + 1
    return out


def report_markdown(result: dict) -> str:
    """A Markdown report: device, versions, date, duration, and a table
    instruction x agrees/disagrees with the differing slots listed.

    >>> md = report_markdown({"meta": {"name": "GPU"}, "results": [_record("x", "mma", "mma.x", 4, [])]})
    >>> "| x | `mma.x` | 4 | agrees |" in md
    True
    """
    meta = result.get("meta", {})
    lines = ["# Atom probe: PTX model vs. observed hardware", ""]
    for key, label in (("name", "GPU"), ("compute_capability", "Compute capability"), ("arch", "Compiled for"),
                       ("driver_version", "Driver"), ("cuda_driver_api_version", "CUDA (driver API)"),
                       ("cuda_runtime_version", "CUDA runtime"), ("nvrtc_version", "NVRTC"),
                       ("cupy_version", "CuPy"), ("date", "Date"), ("seconds", "Probe wall time (s)")):
        if key in meta:
            lines.append(f"- {label}: {meta[key]}")
    counts = summarize(result)
    lines += ["", "Summary: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())), "",
              "| Atom | PTX instruction | Slots checked | Result | Differences |",
              "| --- | --- | --- | --- | --- |"]
    word = {"agree": "agrees", "disagree": "**disagrees**", "error": "error"}
    for r in result["results"]:
        diff = ""
        if r["status"] == "disagree":
            shown = "; ".join(_fmt_mismatch(m) for m in r["mismatches"][:6])
            more = f" (+{r['n_mismatches'] - 6} more)" if r["n_mismatches"] > 6 else ""
            diff = f"{r['n_mismatches']} slots: {shown}{more}"
        elif r["status"] == "error":
            diff = r.get("note", "").splitlines()[0][:300] if r.get("note") else ""
        lines.append(f"| {r['atom']} | `{r['ptx']}` | {r['slots_checked']} | {word.get(r['status'], r['status'])} | "
                     f"{diff.replace('|', '/')} |")
    controls = result.get("negative_controls")
    if controls:
        ok = sum(1 for c in controls if c["n_mismatches"] > 0)
        lines += ["", "## Negative controls", "",
                  "The same observed data decoded against deliberately wrong models; each must disagree "
                  f"(mismatching slots > 0).  {ok} of {len(controls)} did.", "",
                  "| Atom | Wrong model | Mismatching slots |", "| --- | --- | --- |"]
        for c in controls:
            flag = "" if c["n_mismatches"] > 0 else " **(not detected)**"
            lines.append(f"| {c['atom']} | {c['control']} | {c['n_mismatches']} of {c['of']}{flag} |")
    return "\n".join(lines) + "\n"


def _fmt_mismatch(m: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in m.items())


def main(argv: Sequence[str] | None = None) -> int:
    """CLI: ``python -m symlayout.harness.atoms_probe [--out JSON] [--md MD] [--only PREFIX ...]``.

    Exit status 0 iff every probe agreed; 2 when there is no GPU.

    >>> main(["--help"])  # doctest: +SKIP
    """
    ap = argparse.ArgumentParser(prog="symlayout.harness.atoms_probe", description=__doc__.split("\n")[0])
    ap.add_argument("--out", help="write the result JSON here")
    ap.add_argument("--md", help="write the Markdown report here")
    ap.add_argument("--only", nargs="*", help="atom-name prefixes to run")
    args = ap.parse_args(argv)
    res = run_and_report(lambda log: run_atom_probe(only=args.only, log=log), report_markdown, args.out, args.md)
    if res is None:
        return 2
    return 0 if all(r["status"] == "agree" for r in res["results"]) else 1


def run_and_report(run: Callable[..., dict], report: Callable[[dict], str], out: str | None,
                   md_path: str | None) -> dict | None:
    """What the probe commands share: None without a GPU (or CuPy), else ``run(log=stdout)``, written as
    JSON to ``out`` and its Markdown ``report`` to ``md_path`` and stdout."""
    if not have_gpu():
        print("no GPU (or CuPy missing): nothing probed", file=sys.stderr)
        return None
    res = run(log=sys.stdout)
    if out:
        with open(out, "w") as f:
            json.dump(res, f, separators=(",", ":"), default=str)
    md = report(res)
    if md_path:
        with open(md_path, "w") as f:
            f.write(md)
    print(md)
    return res


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
