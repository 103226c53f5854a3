"""The contract with CuTe C++: every public conformance case of every implemented op passes."""
import json
from collections import Counter

import pytest

from symlayout import conformance



FILES = ["int_tuple", "layout", "swizzle", "tiled_mma", "tiled_copy", "threadmap"]

#: every op the conformance README lists (this list only grows; all must be implemented)
README_OPS = {
    "product", "product_each", "prefix_product", "shape_div", "ceil_div", "idx2crd", "crd2idx", "flatten",
    "congruent", "weakly_congruent", "compatible", "layout", "size", "cosize", "coalesce", "filter",
    "composition", "complement", "left_inverse", "right_inverse", "logical_divide", "zipped_divide",
    "tiled_divide", "flat_divide", "logical_product", "zipped_product", "tiled_product", "blocked_product",
    "raked_product", "tile_to_shape", "upcast", "downcast", "max_common_vector", "max_common_layout",
    "make_layout_tv", "swizzle", "swizzle_layout", "mma_atom", "copy_atom", "tiled_mma", "tiled_mma_partition",
    "tiled_copy", "tiled_copy_partition", "pitch_linear_stripmined", "pitch_linear_warp_raked",
    "pitch_linear_warp_striped",
}


def test_every_readme_op_is_implemented():
    assert README_OPS <= set(conformance.ops()), sorted(README_OPS - set(conformance.ops()))
    assert conformance.REQUIRED_OPS <= set(conformance.ops())


@pytest.mark.parametrize("name", FILES)
def test_public_cases_pass(shared, name):
    path = shared / "conformance" / "public" / f"{name}.jsonl"
    passed, failed, info = conformance.run_files([str(path)])
    bad = {op: fl[:3] for op, fl in info["failures"].items()}
    assert failed == 0, f"{failed} failing cases: {bad}"
    assert passed > 0


def test_unknown_op_counts_as_failed():
    ok, msg = conformance.run_case({"id": "x", "op": "no_such_op", "args": [], "expect": "1"})
    assert not ok and "not implemented" in msg


def test_wrong_expectation_fails():
    ok, msg = conformance.run_case({"id": "x", "op": "composition", "args": ["(6,2):(8,2)", "(4,3):(3,1)"],
                                    "expect": {"layout": "((2,2),3):((24,2),9)"}})
    assert not ok and "layout" in msg


def test_runner_cli_last_line(shared, capsys):
    rc = conformance.main([str(shared / "conformance" / "public" / "int_tuple.jsonl")])
    out = capsys.readouterr().out.strip().splitlines()
    assert rc == 0 and out[-1].endswith("passed, 0 failed")
