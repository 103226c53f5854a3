"""Random parametric families and their members, for the soundness campaign of the Z3 verdicts.

A *family* is a configuration with ``[params]``; its *members* are the concrete
configurations at each parameter value.  A family's verdict on a property must
be the conjunction of its members' verdicts (decided by the exhaustive prover):
PROVED iff every member is proved, REFUTED with a witness that is itself a
refuted member.  The smem layouts are built to stress the Z3 encoding:

* interior worst cases: ``A*((p+c)//d - p//d)`` is 0 at both ends of the range
  and 1 inside it (a bit-vector sized from the extremes wraps there);
* floor division and modulo of negative numbers: ``A*((p-c)//d)``, ``A*((p-c)%d)``;
* symbolic strides and shapes (rest tiles), negative strides, swizzles, two parameters;
* huge ranges (up to ``2**31 - 1``), whose members are sampled.

>>> fams = list(random_families(3, seed=1)); len(fams), all("p" in f.params for f in fams)
(3, True)
>>> fams[0].text.count("[params]")
1
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field

from ...atoms import value_type_bits
from ...config import MAX_SMEM_BYTES, loads_config
from ...errors import SymlayoutError
from ...tiled.mma import make_tiled_mma
from ..engine import prove_config
from ..copy.model import build_operand_model
from ..copy.obligations import CHECKS
from ..copy.z3backend import tile_model_for
from ..decide.z3problem import substitute

MMA_ATOMS = [("SM80_16x8x16_F16F16F16F16_TN", "half_t"), ("SM80_16x8x8_F16F16F16F16_TN", "half_t"),
             ("SM80_16x8x16_F32BF16BF16F32_TN", "bfloat16_t"), ("SM80_16x8x8_F32TF32TF32F32_TN", "tfloat32_t"),
             ("SM80_16x8x32_S32S8S8S32_TN", "int8_t"), ("SM80_8x8x16_S32S8S8S32_TN", "int8_t")]
LOADS = ["SM75_U32x1_LDSM_N", "SM75_U32x2_LDSM_N", "SM75_U32x4_LDSM_N", "SM75_U16x2_LDSM_T", "SM75_U16x4_LDSM_T",
         "SM75_U16x8_LDSM_T", "UniversalCopy<uint32_t>", "UniversalCopy<uint16_t>", "SM75_U32x1_LDSM_N"]
STORES = ["SM90_U32x1_STSM_N", "SM90_U32x2_STSM_N", "SM90_U32x4_STSM_N", "SM90_U16x2_STSM_T", "SM90_U16x8_STSM_T",
          "UniversalCopy<uint32_t>"]
#: the properties compared
PROPERTIES = ("coverage", "alignment", "exactly_once", "slot_agreement", "bank_conflicts", "in_bounds",
              "type_agreement")
#: ranges up to this many values are enumerated; larger ones are sampled
ENUMERATE_MAX = 64


@dataclass
class Family:
    """One parametric configuration: its TOML text and its parameter ranges."""
    text: str
    params: dict                      # name -> (min, max)
    operand: str
    smem: str
    kind: list = field(default_factory=list)

    @property
    def huge(self) -> bool:
        """True when the members are sampled rather than enumerated."""
        n = 1
        for lo, hi in self.params.values():
            n *= hi - lo + 1
        return n > ENUMERATE_MAX

    def members(self, rng: random.Random, samples: int = 12) -> list:
        """Every member (small ranges) or a sample: the ends, points near them, random points."""
        import itertools
        names = list(self.params)
        if not self.huge:
            ranges = [range(lo, hi + 1) for lo, hi in self.params.values()]
            return [dict(zip(names, v)) for v in itertools.product(*ranges)]
        out = []
        for _ in range(samples):
            vals = {}
            for n, (lo, hi) in self.params.items():
                r = rng.random()
                if r < 0.3:
                    vals[n] = lo + rng.randrange(min(40, hi - lo + 1))
                elif r < 0.45:
                    vals[n] = hi - rng.randrange(min(40, hi - lo + 1))
                else:
                    vals[n] = rng.randint(lo, hi)
            out.append(vals)
        return out


def _gadget(rng, huge: bool):
    """A stride term in ``p`` (and its kind)."""
    A = rng.choice([65536, 4096, 1024, 64, 8, 4, 2, 1, 1 << 20] if not huge else [1 << 20, 1 << 30, 65536, 8, 1])
    d = rng.choice([2, 3, 4, 7, 8, 16])
    c = rng.randint(1, 2 * d)
    kind = rng.choice(["bump", "bump", "negfloor", "negfloor", "negmod", "lin", "step", "mod", "neg", "max"])
    if kind == "bump":
        c = rng.randint(1, d - 1) if d > 1 else 1
        return f"{A}*((p+{c})//{d}-p//{d})", kind
    if kind == "negfloor":
        return f"{A}*((p-{c})//{d})", kind
    if kind == "negmod":
        return f"{A}*((p-{c})%{d})", kind
    if kind == "lin":
        return f"{rng.choice([1, 2, 8, 16])}*p", kind
    if kind == "step":
        return f"{A}*(p//{d})", kind
    if kind == "mod":
        return f"{A}*(p%{d})", kind
    if kind == "max":
        return f"{A}*max(p-{c},0)", kind
    return f"-{A}*((p+{c})//{d}-p//{d})", kind


def _pick_range(rng, huge: bool):
    if huge:
        hi = rng.choice([1 << 20, 1 << 24, (1 << 31) - 1, 100_000])
        return (1, hi)
    lo = rng.choice([1, 1, 1, 2, 3])
    return (lo, lo + rng.choice([3, 7, 11, 15, 23]))


def random_families(n: int, seed: int = 0, huge_share: float = 0.25):
    """Yield ``n`` random :class:`Family` objects (seeded; some with huge ranges)."""
    rng = random.Random(seed)
    mmas = {}
    made = tries = 0
    while made < n and tries < 50 * n:
        tries += 1
        atom, vt = rng.choice(MMA_ATOMS)
        lay = rng.choice(["(1,1,1)", "(1,1,1)", "(2,1,1)", "(1,2,1)"])
        op = rng.choice("AABBC")
        if op == "C":
            if "F16F16F16F16" not in atom:
                continue
            copy = rng.choice(STORES)
        else:
            copy = rng.choice(LOADS)
        key = (atom, lay)
        if key not in mmas:
            try:
                mmas[key] = make_tiled_mma(atom, lay)
            except SymlayoutError:
                continue
        try:
            tile_model_for(mmas[key], op, copy, vt, 128)        # CuTe builds this TiledCopy
        except SymlayoutError:
            continue
        R, C = mmas[key].operand_tile(op)
        huge = rng.random() < huge_share
        kinds = []
        params = {"p": _pick_range(rng, huge)}
        g, k = _gadget(rng, huge)
        kinds.append(k)
        pad = rng.choice([0, 0, 0, 8, 4, 16])
        shape_kind = rng.choice(["fixed", "fixed", "fixed", "rows", "cols", "q"]) if not huge else "fixed"
        rr, cc = R, C
        if shape_kind == "rows":
            rr = f"{R}*p"
        elif shape_kind == "cols":
            cc = f"{C}*p"
        elif shape_kind == "q":
            params["q"] = (1, rng.choice([2, 3, 4]))
            rr = f"{R}*q"
        kinds.append(shape_kind)
        major = rng.choice(["row", "row", "col"])
        if major == "row":
            inner = f"({rr},{cc}):({cc}+{pad}+{g},1)"
        else:
            inner = f"({rr},{cc}):(1,{rr}+{pad}+{g})"
        kinds.append(major)
        smem = inner
        if rng.random() < 0.3:
            b, m = rng.choice([1, 2, 3]), rng.choice([2, 3, 4])
            if rng.random() < 0.6:
                # CuTe slices a swizzled tensor only with static strides (its stride divisibility
                # asserts): a run-time row count instead, the rest tiles then carry the parameter
                rows = f"{R}*p"
                params["p"] = (params["p"][0], min(params["p"][1], params["p"][0] + 11))
                inner = (f"({rows},{C}):({C}+{pad},1)" if major == "row" else f"({rows},{C}):(1,{rows})")
                kinds[-2:] = ["rows", major]
            smem = f"Sw<{b},{m},3> o 0 o {inner}"
            kinds.append("swizzle")
        if shape_kind != "fixed" and params["p"][1] > 16:
            params["p"] = (params["p"][0], params["p"][0] + 11)
        ptxt = "\n".join(f"{nm} = {{ min = {lo}, max = {hi} }}" for nm, (lo, hi) in params.items())
        text = (f'name = "family {made}: {smem}"\n[params]\n{ptxt}\n[mma]\natom = "{atom}"\nlayout = "{lay}"\n'
                f'[copy.{op}]\natom = "{copy}"\ntype = "{vt}"\nsmem = "{smem}"\n[prove]\ntimeout_s = 60\n')
        try:
            loads_config(text, "family")
        except SymlayoutError:
            continue
        made += 1
        yield Family(text, params, op, smem, kinds)


# ---------------------------------------------------------------- checking


@dataclass
class FamilyCheck:
    """The outcome of comparing one family with its members.

    ``disagreements``: ``(property, why)`` where the family's verdict is not the
    conjunction of its members' (must stay empty); ``unknown``: properties the
    family left UNKNOWN; ``unbuildable``: members the concrete path rejects (CuTe's
    static_asserts on the static member: skipped, the family is a run-time program);
    ``rejected``: the family's refutation by CuTe's compile-time check.
    """
    family: Family
    verdicts: dict                   # property -> family status
    members: int = 0
    member_refuted: dict = field(default_factory=dict)    # property -> list of refuted member values
    disagreements: list = field(default_factory=list)      # (property, why)
    unknown: list = field(default_factory=list)
    unbuildable: list = field(default_factory=list)
    rejected: list = field(default_factory=list)          # properties refuted by CuTe's compile-time check
    seconds: float = 0.0


def member_verdicts(cfg, values: dict, props=PROPERTIES) -> dict | None:
    """Exhaustive verdicts of one member (None when its configuration cannot be built, or its smem
    exceeds the 4 GiB a concrete configuration may have)."""
    (op, cc), = cfg.copies.items()
    mma = make_tiled_mma(cfg.mma.atom, cfg.mma.layout, cfg.mma.permutation)
    S = substitute(cc.smem, values)
    if abs(int(S.cosize())) * value_type_bits(cc.element_type) // 8 > MAX_SMEM_BYTES:
        return None              # not a concrete configuration the loader accepts (beyond 4 GiB of smem)
    try:
        m = build_operand_model(mma, None, None, op, cc.atom, cc.element_type, S, cc.align)
    except SymlayoutError:
        return None
    return {p: CHECKS[p](m).status for p in props}


def check_family(fam: Family, rng: random.Random | None = None, props=PROPERTIES, samples: int = 12) -> FamilyCheck:
    """Prove the family (Z3) and compare each property with its members (exhaustive).

    Enumerated families: PROVED iff every member is proved, REFUTED iff some member
    is.  Sampled families: a PROVED family has no refuted sample.  Every REFUTED
    with a parameter witness: the witness member is refuted.
    """
    import time
    t0 = time.perf_counter()
    rng = rng or random.Random(0)
    cfg = loads_config(fam.text, "family")
    rep = prove_config(cfg, properties=list(props))
    out = FamilyCheck(fam, {})
    if rep.error:
        out.disagreements.append(("*", f"the family is an error: {rep.error}"))
        return out
    results = {r.property: r for r in rep.results}
    out.verdicts = {p: r.status for p, r in results.items()}
    members = fam.members(rng, samples)
    for r in results.values():
        w = r.counterexample.params if r.status == "refuted" and r.counterexample is not None else None
        if w and w not in members:
            members.append(dict(w))
    verdicts = {}
    for vals in members:
        v = member_verdicts(cfg, vals, props)
        verdicts[tuple(sorted(vals.items()))] = v
        out.members += 1
        if v is None:
            out.unbuildable.append(vals)
            continue
        for p, s in v.items():
            if s == "refuted":
                out.member_refuted.setdefault(p, []).append(vals)
    built = sum(v is not None for v in verdicts.values())
    for p in props:
        r = results.get(p)
        if r is None:
            continue
        bad = out.member_refuted.get(p, [])
        if r.status in ("proved", "vacuous"):
            if bad:
                out.disagreements.append((p, f"{r.status.upper()}, but member {bad[0]} is refuted"))
        elif r.status == "refuted" and r.method == "cute":
            # CuTe rejects the program with a run-time parameter (a static_assert on the dynamic
            # layout): that is not a statement about the members, which are other (static) programs
            out.rejected.append(p)
        elif r.status == "refuted":
            w = r.counterexample.params if r.counterexample is not None else None
            if w:
                wv = verdicts.get(tuple(sorted(w.items())))
                if wv is not None and wv[p] != "refuted":
                    out.disagreements.append((p, f"REFUTED at {w}, but that member is {wv[p]}"))
            elif built and not bad:
                out.disagreements.append((p, "REFUTED, but no member is refuted"))
        else:
            out.unknown.append((p, r.status, r.detail))
    out.seconds = time.perf_counter() - t0
    return out
