"""The step both front ends share (recovered objects -> configuration tables), and the public names.

Each function of :mod:`symlayout.frontends.tables` is shown giving its table and refusing
what it must refuse: a TiledMMA whose TV layouts disagree with symlayout's model, a
transposed copy with no ``(thr, val)`` form, contradicting stage counts, a leading
dimension assumed off the copy's vector.  ``symlayout.cute_dsl`` and ``symlayout.extract``
(the names users import, and ``python -m symlayout.extract``) are the front ends' own objects.
"""
from __future__ import annotations

import subprocess
import sys

import pytest

import symlayout.cute_dsl
import symlayout.extract
from symlayout.algebra.layout import Layout
from symlayout.frontends import cute_cpp, cute_dsl, tables
from symlayout.frontends.cute_cpp import conventions, probe
from symlayout.frontends.document import ConfigDoc
from symlayout.tiled.mma import make_tiled_mma

MMA = {"atom": "SM80_16x8x16_F32F16F16F32_TN", "layout": "(2,2,1)", "permutation": ["32", "32", "16"]}
#: a TiledCopy of make_tiled_copy(atom, Layout<Shape<_16,_8>, Stride<_8,_1>>, Layout<Shape<_1,_8>>), as CuTe prints it
TV, TILER = "((_8,_16),_8):((_128,_1),_16)", "(_16,_64)"


def own_tv_layouts():
    model = make_tiled_mma(MMA["atom"], MMA["layout"], MMA["permutation"])
    return {x: (f"X's {x}", getattr(model, f"get_layout{x}_TV")()) for x in "ABC"}


def test_tiled_mma_checked_against_the_front_ends_tv_layouts():
    theirs = own_tv_layouts()
    model, problem = tables.check_tiled_mma(MMA, theirs)
    assert problem is None and model.tile_size(0) == 32
    theirs["B"] = ("X's B", Layout(((4, 8, 4), (2, 2)), ((64, 1, 16), (8, 256))))
    _, problem = tables.check_tiled_mma(MMA, theirs)
    assert problem.startswith("symlayout's TiledMMA model disagrees with X's B: ")


def test_tiled_copy_keys():
    keys, rec = tables.tiled_copy_keys(TV, TILER)
    assert keys == {"thr": "(16,8):(8,1)", "val": "(1,8)"} and tables.vector_mode(rec[1]) == 1
    keys, rec = tables.tiled_copy_keys(TV, TILER, transposed=True)
    assert keys == {"thr": "(8,16):(1,8)", "val": "(8,1)"} and tables.vector_mode(rec[1]) == 0
    # thread 0 holds rows 0 and 2: no (thr, val) form, the layout as printed (without spaces and underscores)
    odd = "((_2,_2),_2):((_1,_4),_2)"
    assert tables.tiled_copy_keys(odd, "(_8, _1)") == ({"tv": "((2,2),2):((1,4),2)", "tiler": "(8,1)"}, None)
    assert tables.tiled_copy_keys(odd, "(_8,_1)", transposed=True) == (None, None)
    assert tables.tiled_copy_keys(odd, "(_4:_2,_2:_1)")[0]["tiler"] == "(4:2,2:1)"


def test_gmem_side_and_its_leading_dimension():
    doc = ConfigDoc()
    keys, note = tables.gmem_side(doc, "A", "Sw<3,3,3> o 0 o (128,64):(64,1)", 1, "as given", "ldA",
                                  "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", "half_t")
    assert keys == {"gmem": "(128,64):(ldA,1)", "gmem_align": 16}
    assert doc.params == {"ldA": {"min": 64, "max": 1 << 20, "multiple_of": 8}}
    assert note.startswith("the A tile, K-contiguous (as given); ldA = the leading dimension")
    tables.gmem_side(doc, "B", "(64,128):(1,64)", 0, "why", "ldB", "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", "half_t", 16)
    assert doc.params["ldB"] == {"min": 64, "max": 1 << 20, "multiple_of": 16}
    with pytest.raises(ValueError, match=r"ld_multiple_of=12 is not a multiple of the copy's vector \(8 elements\)"):
        tables.gmem_side(doc, "C", "(64,64):(64,1)", 1, "why", "ldC", "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>",
                         "half_t", 12)
    assert "ldC" not in doc.params


def test_stages_recorded_and_a_contradiction_reported():
    doc = ConfigDoc()
    assert tables.record_stages(doc, "(64,32):(32,1)") is None and doc.stages is None
    assert tables.record_stages(doc, "((8,8),32,3):((32,256),1,2048)") is None and doc.stages == 3
    assert tables.record_stages(doc, "((8,8),32,(1,3)):((32,256),1,(0,2048))") is None and doc.stages == 3
    assert tables.record_stages(doc, "((8,8),32,4):((32,256),1,2048)") == (3, 4) and doc.stages == 3


def test_catalog_lookup():
    assert tables.in_catalog("mma", MMA["atom"]) and tables.in_catalog("copy", "SM75_U32x4_LDSM_N")
    assert not tables.in_catalog("mma", "SM75_U32x4_LDSM_N") and not tables.in_catalog("copy", "NoSuchCopy<uint8_t>")


def test_an_empty_member_name_drops_the_role():
    """``--member A.g2s=`` (docs: an empty NAME drops the role) reached the probe program as a
    member named '' and failed ("member name ''"); the probe asks for no such member now."""
    paths = conventions.probe_paths({"A.g2s": "", "pv:B.copy": "MyAtomT^T"})
    assert "" not in paths and "MyAtomT" in paths
    assert "MyAtomT" in probe.probe_program(__file__, "T", paths)


def test_public_names_are_the_front_ends():
    assert symlayout.cute_dsl.DslConfig is cute_dsl.DslConfig and symlayout.cute_dsl.trace is cute_dsl.trace
    assert set(symlayout.cute_dsl.__all__) == set(cute_dsl.__all__)
    assert symlayout.extract.extract is cute_cpp.extract and symlayout.extract.ExtractError is probe.ExtractError
    assert set(symlayout.extract.__all__) == set(cute_cpp.__all__)


@pytest.mark.parametrize("module", ["symlayout.extract", "symlayout.frontends.cute_cpp"])
def test_python_m_entries_are_symlayout_extract(module):
    r = subprocess.run([sys.executable, "-m", module, "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "--type" in r.stdout and "--member" in r.stdout
