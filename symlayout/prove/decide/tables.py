"""Whole index tables of an operand model: the obligations' loops as array operations.

The exhaustive obligations (:mod:`symlayout.prove.copy.obligations`) walk every thread, call, register
and value of a route model point by point, which is the readable statement of each property and
the place counterexamples are told.  Here the same quantities are numpy arrays over the whole tile
(``T`` threads x ``C`` calls x ``S`` values), and each ``*_holds`` function decides whether *every*
obligation of a property holds -- the same quantifier, the same cases, evaluated at once:

* ``smem[t, c, j]``: smem-side element index of value ``j`` of thread ``t``'s call ``c``;
* ``reg[t, c, a]``: fragment slot of register-side value ``a``;
* ``expected[t, s]``: the element the MMA expects in slot ``s`` of thread ``t``;
* ``addr[i]``: the element offset of index ``i`` (the model's ``addr_table``, with the placeholder
  indices of :attr:`OperandModel.stray` after the tile).

A ``*_holds`` function answers True only when the property holds on every case; False means "some
case fails, or this model is outside what the tables express" and the obligation then runs its
point-by-point check, which finds and tells the counterexample.  So a PROVED comes from either
path and a REFUTED (with its witness) always from the reference path.  :func:`of` gives ``None``
(reference path only) for models the tables do not cover: stand-in tile models (Z3's), ragged
call plans, indices outside the table, or with ``SYMLAYOUT_NO_TABLES=1`` (used by the tests that
compare both paths).

>>> import numpy                       # (once numpy is loaded every model gets its tables)
>>> from symlayout.prove.copy.model import build_operand_model
>>> m = build_operand_model("SM80_16x8x16_F16F16F16F16_TN", "(2,2,1)", None, "A",
...                         "SM75_U32x2_LDSM_N", "half_t", "(32,16):(16,1)")
>>> tb = of(m)
>>> tb.smem.shape, alignment_holds(m, tb), slot_agreement_holds(m, tb)
((128, 2, 8), True, True)
"""
from __future__ import annotations

import os
import sys
from collections.abc import MutableMapping

from ...errors import AlgebraError
from ...tiled.arrays import index_array

#: numpy, imported when first needed (its import costs about as much as proving a few small
#: configurations point by point, so a process proving one small file never pays it)
np = None
_small_models = 0
#: route entries (threads x calls x values) from which a model always uses the tables
LARGE = 8192
#: small models proved point by point before the tables (and numpy) are used for every model
SMALL_FIRST = 4


class _LazyNumpy:
    """``numpy`` imported at the first attribute asked for (modules whose whole-array checks run only
    for some configurations import it this way, so a process proving one small file never pays it)."""

    def __getattr__(self, name):
        import numpy
        return getattr(numpy, name)


lazy_np = _LazyNumpy()


class Tables:
    """The arrays of one model (see the module docstring), built once and cached on the model."""

    def __init__(self, smem, reg, expected, addr, n, k, vec_threads):
        self.smem, self.reg, self.expected, self.addr = smem, reg, expected, addr
        self.n = n                       # elements of the smem tile
        self.k = k                       # values per smem-side register (one dereferenced vector)
        self.vec_threads = vec_threads   # threads whose lanes give addresses (``access_vectors`` order)

    @classmethod
    def of_model(cls, m, smem, reg, expected):
        """The tables of ``m`` from its route arrays, or None (see :func:`of`)."""
        n = m.smem.size()
        if not isinstance(n, int):
            return None
        if m.stray and set(m.stray) != set(range(n, n + len(m.stray))):
            return None
        addr = addresses(m.smem)
        if addr is None or len(addr) != n:
            return None
        if m.stray:
            addr = np.concatenate([addr, np.array([m.stray[i] for i in range(n, n + len(m.stray))], dtype=np.int64)])
        top = len(addr)
        for a in (smem, expected):
            if a.size and (a.min() < 0 or a.max() >= top):
                return None          # an index outside the tile: the reference path evaluates it as CuTe does
        T = smem.shape[0]
        lanes = m.hw.address_lanes()
        vec_threads = np.array([32 * w + l for w in range((T + 31) // 32) for l in lanes if 32 * w + l < T],
                               dtype=np.int64)
        return cls(smem, reg, expected, addr, n, max(1, m.reg_bits_smem // m.value_bits), vec_threads)

    # -- the dereferenced vectors: (threads giving addresses, calls, registers, k values)
    def vectors(self):
        v = self.__dict__.get("_vec")
        if v is None:
            T, C, S = self.smem.shape
            nr = S // self.k
            v = self._vec = self.smem[self.vec_threads][:, :, :nr * self.k].reshape(len(self.vec_threads), C, nr,
                                                                                    self.k)
        return v

    def vector_starts(self):
        """Element offset of the first value of every dereferenced vector."""
        a = self.__dict__.get("_a0")
        if a is None:
            a = self._a0 = self.addr[self.vectors()[..., 0]]
        return a

    def hardware(self):
        """Element offsets the hardware touches: ``k`` contiguous elements from each vector start."""
        h = self.__dict__.get("_hw")
        if h is None:
            h = self._hw = (self.vector_starts()[..., None] + np.arange(self.k)).ravel()
        return h


def addresses(L):
    """``function_table(L)`` as an int64 array (:func:`index_table`, a swizzle applied to the inner
    table at once); None for symbolic layouts."""
    try:
        return index_table(L)
    except (AlgebraError, TypeError, ValueError, OverflowError):
        return None


def index_table(L):
    """``function_table(L)`` of a concrete layout as an int64 numpy array, built mode by mode
    (:func:`symlayout.tiled.arrays.index_array`).  (Whole-array code that has no point-by-point twin, e.g.
    the Hopper and data path checks, uses it whatever ``SYMLAYOUT_NO_TABLES`` says.)"""
    global np
    if np is None:
        import numpy
        np = numpy
    return index_array(L)


def route(base, offsets, expected_at, frag_table, part_table, threads):
    """The route arrays of a model whose threads run one thread-independent call plan ``base``
    (``[(smem indices, fragment slots)]`` per call) shifted by ``offsets[t]``: ``smem[t, c, j] =
    base smem[c][j] + offsets[t]``, ``reg[t, c, a] = base slots[c][a]``, and the MMA's expectation
    ``expected[t, frag_table[k]] = expected_at[t] + part_table[k]``.  None when the plan is ragged or the
    fragment table is not a permutation (the model's loop handles those)."""
    if not base:
        return None
    S, R = len(base[0][0]), len(base[0][1])
    if not _enabled(threads * len(base) * S, count=True):
        return None
    if any(len(sm) != S or len(rg) != R for sm, rg in base):
        return None
    fs = len(frag_table)
    if sorted(frag_table) != list(range(fs)) or len(part_table) != fs:
        return None
    try:
        bs = np.array([sm for sm, _ in base], dtype=np.int64).reshape(len(base), S)
        br = np.array([rg for _, rg in base], dtype=np.int64).reshape(len(base), R)
        off = np.array(offsets[:threads], dtype=np.int64)
        at = np.array(expected_at, dtype=np.int64)
        pt = np.array(part_table, dtype=np.int64)
    except (TypeError, ValueError, OverflowError):
        return None
    smem = bs[None, :, :] + off[:, None, None]
    reg = np.broadcast_to(br, (threads,) + br.shape)
    exp = np.empty((threads, fs), dtype=np.int64)
    exp[:, np.array(frag_table, dtype=np.int64)] = at[:, None] + pt[None, :]
    return smem, reg, exp


class LazyRows(MutableMapping):
    """thread -> its row (a model's ``calls`` or ``expected``), each row made from the route arrays
    the first time it is asked for: the tables decide a property without Python lists, and a
    counterexample or a picture reads only the threads it tells.  Replacing or deleting a row is
    counted in ``version`` (the tables' fingerprint, :func:`forget`)."""

    def __init__(self, n, make):
        self._n, self._make, self._rows, self._gone, self._extra, self.version = n, make, {}, set(), {}, 0

    def _inside(self, t) -> bool:
        return type(t) is int and 0 <= t < self._n

    def __getitem__(self, t):
        row = self._rows.get(t)
        if row is None:
            if not self._inside(t) or t in self._gone:
                return self._extra[t]
            row = self._rows[t] = self._make(t)
        return row

    def __setitem__(self, t, row):
        if self._inside(t):
            self._rows[t] = row
            self._gone.discard(t)
        else:
            self._extra[t] = row
        self.version += 1

    def __delitem__(self, t):
        if self._inside(t) and t not in self._gone:
            self._rows.pop(t, None)
            self._gone.add(t)
        else:
            del self._extra[t]
        self.version += 1

    def __iter__(self):
        yield from (t for t in range(self._n) if t not in self._gone)
        yield from list(self._extra)

    def __len__(self):
        return self._n - len(self._gone) + len(self._extra)

    def __repr__(self):
        return repr(dict(self))


def forget(m) -> None:
    """Drop ``m``'s tables after its calls or expectations were changed in place (tests that break a
    route on purpose); they are rebuilt from the lists when next asked for.  A model is otherwise not
    changed after it is built (replacing a thread's list of calls is noticed without this)."""
    m.__dict__.pop("_tables", None)
    m.__dict__.pop("_tables_of", None)


def attach(m, smem, reg, expected):
    """Give model ``m`` the tables of the route arrays it was built from."""
    if m.stand_in or not _enabled():
        return
    m.__dict__["_tables"] = Tables.of_model(m, smem, reg, expected)
    m.__dict__["_tables_of"] = _fingerprint(m)


def _enabled(entries: int | None = None, count: bool = False) -> bool:
    """Whether to use the tables (for a model of ``entries`` route entries): not when
    ``SYMLAYOUT_NO_TABLES=1``; otherwise once numpy is loaded, for a large model, or after the
    process proved :data:`SMALL_FIRST` small models point by point."""
    global np, _small_models
    if os.environ.get("SYMLAYOUT_NO_TABLES", "") not in ("", "0"):
        return False
    if np is None:
        if "numpy" not in sys.modules and entries is not None and entries < LARGE and _small_models < SMALL_FIRST:
            _small_models += count          # (a model built: one more of the first small ones)
            return False
        try:
            import numpy
        except ImportError:            # pragma: no cover - numpy is a dependency; the reference path remains
            return False
        np = numpy
    return True


def enabled() -> bool:
    """Whether whole-array fast paths that have a point-by-point twin run (not with
    ``SYMLAYOUT_NO_TABLES=1``; imports numpy)."""
    return _enabled()


def _fingerprint(m):
    """Which call and expectation lists the tables were built from (a test that replaces a thread's
    calls after a property ran gets new tables)."""
    def rows(d):
        return (id(d), d.version) if isinstance(d, LazyRows) else (id(d), tuple(map(id, d.values())))
    return rows(m.calls) + rows(m.expected) + (id(m.smem), len(m.stray))


def _entries(m) -> int:
    calls = m.calls.get(0) if hasattr(m.calls, "get") else None
    return m.threads * len(calls) * len(calls[0].smem) if calls else 0


def of(m) -> Tables | None:
    """The tables of model ``m`` (cached on it), or None where only the reference path applies."""
    d = m.__dict__
    hit = d.get("_tables", False)
    if hit is None:
        return None
    fp = _fingerprint(m)
    if hit is not False and d.get("_tables_of") == fp:
        return hit
    tb = d["_tables"] = _build(m) if _enabled(_entries(m)) else None
    d["_tables_of"] = fp
    return tb


def _build(m):
    if m.stand_in:
        return None
    T = m.threads
    if T == 0 or set(m.calls) != set(range(T)) or set(m.expected) != set(range(T)):
        return None
    calls0 = m.calls[0]
    C = len(calls0)
    if C == 0:
        return None
    S, R = len(calls0[0].smem), len(calls0[0].reg)
    if any(len(cs) != C or any(len(c.smem) != S or len(c.reg) != R for c in cs) for cs in m.calls.values()):
        return None
    fs = m.frag_size
    if any(len(m.expected[t]) != fs for t in range(T)):
        return None
    try:
        smem = np.array([[c.smem for c in m.calls[t]] for t in range(T)], dtype=np.int64).reshape(T, C, S)
        reg = np.array([[c.reg for c in m.calls[t]] for t in range(T)], dtype=np.int64).reshape(T, C, R)
        expected = np.array([m.expected[t] for t in range(T)], dtype=np.int64).reshape(T, fs)
    except (TypeError, ValueError, OverflowError):   # symbolic entries
        return None
    return Tables.of_model(m, smem, reg, expected)


def _trunc_bytes(a, bits):
    """``int(a * bits / 8)`` elementwise (Python's ``int`` truncates toward zero)."""
    q = a * bits
    return np.where(q >= 0, q // 8, -((-q) // 8))


# ---------------------------------------------------------------- the properties


def alignment_holds(m, tb) -> bool:
    """Every dereferenced vector starts ``vb``-byte aligned and its ``k`` elements are contiguous."""
    vb = max(m.reg_bits_smem, m.value_bits) // 8
    if m.align % vb and vb > 1:
        return False
    a0 = tb.vector_starts()
    if vb and np.any((a0 * m.value_bits) % (8 * vb)):
        return False
    return bool(np.all(tb.addr[tb.vectors()] == a0[..., None] + np.arange(tb.k)))


def in_bounds_holds(m, tb) -> bool:
    """Every dereferenced vector's bytes lie in ``[0, cosize * sizeof(T))``."""
    vb = max(m.reg_bits_smem, m.value_bits) // 8
    limit = int(m.smem.cosize() * m.elem_bytes)
    b0 = _trunc_bytes(tb.vector_starts(), m.value_bits)
    return bool(np.all(b0 >= 0) and np.all(b0 + vb <= limit))


def coverage_holds(m, tb) -> bool:
    """Every element of the smem tile is among the elements the hardware touches (the TV part is
    decided by :func:`~symlayout.prove.copy.obligations.tv_coverage` itself)."""
    return bool(np.all(np.isin(tb.addr[:tb.n], tb.hardware())))


def exactly_once_holds(m, tb) -> bool:
    """Loads: every fragment slot of every thread is written by exactly one value of its calls.
    Stores: every smem element's address is written exactly once by the hardware."""
    if m.direction == "load":
        fs = m.frag_size
        reg = tb.reg
        if reg.size and (reg.min() < 0 or reg.max() >= fs):
            return False
        T = reg.shape[0]
        flat = (np.arange(T, dtype=np.int64)[:, None, None] * fs + reg).ravel()
        return bool(np.all(np.bincount(flat, minlength=T * fs) == 1))
    uniq, cnt = np.unique(tb.hardware(), return_counts=True)
    a = tb.addr[:tb.n]
    pos = np.searchsorted(uniq, a)
    if np.any(pos >= len(uniq)):
        return False
    return bool(np.all(uniq[pos] == a) and np.all(cnt[pos] == 1))


def slot_agreement_holds(m, tb) -> bool:
    """For every thread, call and register-side value: the address the hardware route delivers
    (providing lane and value from the PTX model) is the address of the element the MMA expects in
    that slot; and every register binds ``k`` consecutive slots from a register boundary."""
    T, C, S = tb.smem.shape
    R = tb.reg.shape[2]
    fs = m.frag_size
    if T % 32 or (tb.reg.size and (tb.reg.min() < 0 or tb.reg.max() >= fs)):
        return False
    k = tb.k
    P, E0, OFF = _providers(m.hw, R, m.value_bits, m.reg_bits_frag, k)
    if R and (P.min() < 0 or P.max() >= 32 or E0.min() < 0 or E0.max() >= S):
        return False
    t = np.arange(T, dtype=np.int64)
    lane = t % 32
    src_t = (t - lane)[:, None] + P[lane]                                  # (T, R): providing thread
    moved = tb.smem[src_t[:, None, :], np.arange(C)[None, :, None], E0[lane][:, None, :]]   # (T, C, R)
    moved_addr = tb.addr[moved] + OFF[lane][:, None, :]
    want = tb.addr[tb.expected[t[:, None, None], tb.reg]]
    if not np.array_equal(moved_addr, want):
        return False
    k2 = max(1, m.reg_bits_frag // m.value_bits)
    J = R // k2
    if J:
        g = tb.reg[:, :, :J * k2].reshape(T, C, J, k2)
        if np.any(g[..., 0] % k2) or not np.all(g == g[..., :1] + np.arange(k2)):
            return False
    return True


_PROVIDERS: dict = {}


def _providers(hw, R, vb, rb, k):
    """``(providing lane, row-start value, offset in the row)`` of register-side value ``a`` of every
    lane ``(32, R)`` (the PTX model's :meth:`~symlayout.prove.copy.model.Hardware.provider`), once per
    instruction and widths."""
    key = (hw.kind, hw.num, hw.trans, hw.ptx, R, vb, rb, k)
    hit = _PROVIDERS.get(key)
    if hit is None:
        P = np.empty((32, R), dtype=np.int64)
        E0 = np.empty((32, R), dtype=np.int64)
        OFF = np.empty((32, R), dtype=np.int64)
        for l in range(32):
            for a in range(R):
                p, e = hw.provider(l, a, vb, rb)
                P[l, a], E0[l, a], OFF[l, a] = p, e - e % k, e % k
        for x in (P, E0, OFF):
            x.flags.writeable = False
        hit = _PROVIDERS[key] = (P, E0, OFF)
    return hit


def one_owner(keys, owners) -> bool:
    """True when no value of ``keys`` comes with two different ``owners`` (arrays of one shape): the
    last owner written for each key is every owner of it.  False also when ``keys`` is not a small
    range of non-negative ints (the caller then looks for the first violation its own way).

    >>> import numpy
    >>> one_owner(numpy.array([3, 5, 3]), numpy.array([1, 2, 1])), one_owner(numpy.array([3, 3]), numpy.array([1, 2]))
    (True, False)
    """
    import numpy
    if not keys.size:
        return True
    lo, hi = int(keys.min()), int(keys.max())
    if lo < 0 or hi >= 1 << 26:
        return False
    last = numpy.empty(hi + 1, dtype=numpy.int64)
    last[keys] = owners
    return bool((last[keys] == owners).all())


def distinct(keys, top: int):
    """The distinct values of non-negative ``keys`` (all below ``top``), sorted: a presence table
    when it is small, else a sort (numpy imported here: other modules call it too)."""
    import numpy
    if top <= (1 << 22):
        seen = numpy.zeros(top, dtype=bool)
        seen[keys] = True
        return numpy.flatnonzero(seen)
    return numpy.unique(keys)


def phase_wavefronts(gid, b0, vb: int):
    """Per phase id (``gid``: one per vector of ``vb`` bytes starting at byte ``b0``): the wavefronts it needs
    (the most distinct 4-byte words on one bank), its vectors, and the minimum (one wavefront per 128 bytes)."""
    lo, hi = b0 // 4, (b0 + vb + 3) // 4
    words = lo[..., None] + lazy_np.arange(int((hi - lo).max()))
    valid = words < hi[..., None]
    g = lazy_np.broadcast_to(gid[..., None], words.shape)[valid]
    wd = words[valid]
    wmin = int(wd.min())
    span = int(wd.max()) - wmin + 1
    ngid = int(gid.max()) + 1
    pairs = distinct(g * span + (wd - wmin), ngid * span)                  # distinct (phase, word)
    per_bank = lazy_np.bincount((pairs // span) * 32 + (pairs % span + wmin) % 32, minlength=ngid * 32)
    vectors = lazy_np.bincount(gid.ravel(), minlength=ngid)
    return per_bank.reshape(ngid, 32).max(axis=1), vectors, lazy_np.maximum(1, -(-(vectors * vb) // 128))


def bank_conflicts_holds(m, tb) -> bool:
    """Per instruction phase (warp, call, register, lane group as :func:`~symlayout.prove.copy.obligations.bank_phases`
    forms them), the most distinct 4-byte words one bank serves is at most the phase's minimum
    wavefronts ``max(1, ceil(vectors * vb / 128))``."""
    if tb.vector_starts().size == 0:
        return True
    _gid, need, minimum, _vectors = _phase_needs(m, tb)
    return bool(np.all(need <= minimum))


def _phase_needs(m, tb):
    """``(phase id of every vector, wavefronts each phase needs, its minimum, its vectors)`` (cached on
    the tables): per phase, the most distinct 4-byte words one bank serves."""
    hit = tb.__dict__.get("_needs")
    if hit is not None:
        return hit
    vb = max(m.reg_bits_smem, m.value_bits) // 8
    gid = _phase_ids(m, tb)[0]                                             # (NT, C, nr)
    b0 = _trunc_bytes(tb.vector_starts(), m.value_bits)
    need, vectors, minimum = phase_wavefronts(gid, b0, vb)
    hit = tb.__dict__["_needs"] = (gid, need, minimum, vectors)
    return hit


def _phase_ids(m, tb):
    """Phase id of every dereferenced vector (NT, C, nr), the number of lane groups, and each vector's
    position in issue order (:func:`~symlayout.prove.copy.obligations.access_vectors`: warp, call, lane, register)."""
    vb = max(m.reg_bits_smem, m.value_bits) // 8
    th = tb.vec_threads
    NT = len(th)
    _, C, nr = tb.vector_starts().shape
    w, lane = th // 32, th % 32
    if m.hw.kind in ("ldsm", "stsm"):
        ph = lane // 8
    elif vb > 4:
        ph = lane // max(1, 128 // max(vb, 4))
    else:
        ph = np.zeros_like(lane)
    nph = int(ph.max()) + 1 if NT else 1
    gid = (((w[:, None, None] * C + np.arange(C)[None, :, None]) * nr + np.arange(nr)[None, None, :]) * nph
           + ph[:, None, None])
    first = np.searchsorted(w, w)                           # index of each warp's first address lane
    lidx = np.arange(NT) - first
    L = int(lidx.max()) + 1 if NT else 1
    order = ((w[:, None, None] * C + np.arange(C)[None, :, None]) * L + lidx[:, None, None]) * nr \
        + np.arange(nr)[None, None, :]
    return gid, nph, order


def worst_phase(m, tb):
    """The phase :func:`~symlayout.prove.copy.obligations.bank_conflicts` reports: the largest ratio of needed
    to minimum wavefronts, the first such phase in issue order.  Returns ``(key, items)`` as
    :func:`~symlayout.prove.copy.obligations.bank_phases` groups them (``key = (warp, call, register, lane group)``,
    ``items = [(lane, thread, value indices)]`` in issue order), or ``(None, None)``."""
    if tb.vector_starts().size == 0:
        return None, None
    gid, nph, order = _phase_ids(m, tb)
    _g, need, minimum, vectors = _phase_needs(m, tb)
    ngid = len(need)
    b0 = tb.vector_starts()
    first = np.full(ngid, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first, gid.ravel(), order.ravel())
    cand = np.nonzero((vectors > 0) & (need > minimum))[0]
    if len(cand) == 0:
        return None, None
    ratio = need[cand] / minimum[cand]                        # (the same float division as the check's)
    best = cand[ratio == ratio.max()]
    g0 = int(best[np.argmin(first[best])])
    _, C, nr = b0.shape
    ph = g0 % nph
    r = (g0 // nph) % nr
    c = (g0 // nph // nr) % C
    w = g0 // nph // nr // C
    sel = np.nonzero(gid == g0)
    items = sorted(zip(order[sel].tolist(), tb.vec_threads[sel[0]].tolist()))
    k = tb.k
    idx = list(range(r * k, (r + 1) * k))
    return (w, c, r, ph), [(t % 32, t, idx) for _, t in items]


def phase_count(m, tb) -> int:
    """Number of distinct phases (the count :func:`bank_conflicts` reports)."""
    if tb.vector_starts().size == 0:
        return 0
    return int(np.count_nonzero(_phase_needs(m, tb)[3]))
