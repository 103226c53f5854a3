"""SM100 TMA (``SM100_TMA_2SM_LOAD``, ``SM100_TMA_2SM_LOAD_MULTICAST``, the SM90 atoms on SM100) against CuTe
C++: what the model of ``prove/blackwell/obligations.py`` claims that CuTe computes on the host.

g++ without nvcc builds ``make_tma_atom_A_sm100`` / ``make_tma_atom_B_sm100``: ``cuTensorMapEncodeTiled`` sits
behind ``__CUDACC_VER_MAJOR__ >= 12`` in ``make_tma_copy_desc`` and is skipped, so the box shape CuTe computes
for the descriptor is never stored (it is a local of that function) and cannot be printed. What the atom keeps,
and is compared here for every ``[tma.X]`` of ``proofs/blackwell/``: its ``ThrID`` (2: the pair loads together,
one box per peer; 1 otherwise), its bits per TMA per CTA (``NumBitsPerTMA``: the model's per-peer box, the
pair's box halved along MN for the 2SM atoms, cut into CuTe's hardware boxes by the model's
``make_tma_copy``), and ``size<2>`` / ``size<1>`` of ``cluster_layout_vmnk =
tiled_divide(cluster, AtomThrID)``, the multicast count the model requires of ``SM100_TMA_2SM_LOAD_MULTICAST``
(``multicast_mode``)."""
from __future__ import annotations

from math import prod
from pathlib import Path

import pytest

from cute_cpp import cpp_layout
from sm100_cpp import compiler, cpp_atom
from symlayout.atoms import umma
from symlayout.atoms.types import value_type_bits
from symlayout.config import load_config
from symlayout.prove.blackwell.obligations import cta_tile, mn_k_view, multicast_mode
from symlayout.tiled.tma import tma_model

BW = Path(__file__).resolve().parents[1] / "proofs" / "blackwell"


def _cases():
    out = []
    for path in sorted(BW.glob("*.toml")):
        cfg = load_config(str(path))
        for o, tc in sorted(cfg.tma.items()):
            if o in ("A", "B") and o in cfg.smem:
                out.append((path.name, cfg, o, tc))
    return out


def _rank(text: str) -> int:
    from symlayout.algebra.notation import parse
    L = parse(text)
    inner = L.inner if getattr(L, "is_composed", False) else L
    return len(inner.shape)


def test_sm100_tma_atoms_match_cute():
    cxx = compiler()
    if cxx is None:
        pytest.skip("CuTe C++ headers (SYMLAYOUT_CUTE_SITE) or g++ not available")
    cases = _cases()
    assert sum(tc.atom.startswith("SM100_TMA_2SM") for _n, _c, _o, tc in cases) >= 4
    body = ["int main() {"]
    for i, (name, cfg, o, tc) in enumerate(cases):
        op = umma.parse_umma_name(cfg.mma.atom)
        sc = cfg.smem[o]
        mn, k, _st = cta_tile(sc)
        peers = op.cta_group
        tiler = (mn * peers, 8, k) if o == "A" else (8, mn * peers, k)
        cl = cfg.mma.cluster
        major = "LayoutRight" if tc.raw_gmem.replace(" ", "").endswith(":(K,1)") else "LayoutLeft"
        g = f"make_layout(make_shape(Int<{mn * peers * 4}>{{}}, Int<{k * 2}>{{}}), {major}{{}})"
        lay = sc.raw_layout.split(" o ", 1)[-1].split(" o ")[-1]
        sw = sc.raw_layout.split(" o ")[0] if sc.raw_layout.startswith("Sw<") else None
        inner = cpp_layout(lay)
        if _rank(lay) > 3:
            inner = f"take<0,3>({inner})"
        s = (f"composition(Swizzle<{sw[3:-1]}>{{}}, {inner})" if sw else inner)
        body += [f"  {{ auto mma = make_tiled_mma({cpp_atom(op)});",
                 f"    auto vmnk = tiled_divide(make_layout(make_shape(Int<{cl[0]}>{{}}, Int<{cl[1]}>{{}}, "
                 f"Int<{cl[2]}>{{}})), make_tile(typename decltype(mma)::AtomThrID{{}}));",
                 f"    auto g = make_tensor(make_gmem_ptr(({sc.element_type}*)nullptr), {g});",
                 f"    auto tma = make_tma_atom_{o}_sm100({tc.atom}{{}}, g, {s}, make_shape(Int<{tiler[0]}>{{}}, "
                 f"Int<{tiler[1]}>{{}}, Int<{tiler[2]}>{{}}), mma, vmnk);",
                 f'    printf("{i} %d %d %d %d\\n", int(size(typename decltype(tma)::ThrID{{}})), '
                 "int(size<1>(typename decltype(tma)::BitLayoutSrc{})), int(size<1>(vmnk)), int(size<2>(vmnk))); }"]
    body.append("}")
    lines = cxx.run("\n".join(body) + "\n").splitlines()
    assert len(lines) == len(cases)
    for line in lines:
        i, thr, bits, m_mode, n_mode = (int(x) for x in line.split())
        name, cfg, o, tc = cases[i]
        op = umma.parse_umma_name(cfg.mma.atom)
        pair = tc.atom.startswith("SM100_TMA_2SM")
        box = (tc.box[0] // 2,) + tuple(tc.box[1:]) if pair else tuple(tc.box)
        assert thr == (2 if pair else 1), (name, o)
        sc = cfg.smem[o]
        model = tma_model(sc.element_type, tc.gmem, mn_k_view(sc.layout), box, 1, "SM90_TMA_LOAD")
        assert model.error is None, (name, o)
        assert box[0] == cta_tile(sc)[0], (name, o)      # (each peer's share is its own buffer)
        assert bits == prod(model.copy.box_dim) * value_type_bits(sc.element_type), (name, o, model.copy.box_dim)
        mode = multicast_mode(cfg.mma.cluster, op.cta_group, o)
        assert mode == (n_mode if o == "A" else m_mode), (name, o)
        if tc.atom == "SM100_TMA_2SM_LOAD_MULTICAST":
            assert tc.multicast == mode, (name, o)
