"""The contract with CuTe C++: every public conformance case of every implemented op passes."""
import json
from collections import Counter

import pytest

from symlayout.conformance import runner as conformance



FILES = ["int_tuple", "layout", "swizzle", "tiled_mma", "tiled_copy", "threadmap"]

def readme_ops(shared) -> set:
    """Every op named in the first column of the conformance README's op tables (the contract)."""
    import re
    ops = set()
    for line in (shared / "conformance" / "README.md").read_text().splitlines():
        if line.startswith("| `"):
            ops |= set(re.findall(r"`(\w+)`", line.split("|")[1]))
    return ops


def test_every_readme_op_is_implemented(shared):
    ops = readme_ops(shared)
    assert len(ops) >= 46
    assert ops <= set(conformance.ops()), sorted(ops - set(conformance.ops()))
    assert ops <= conformance.REQUIRED_OPS      # the required list covers the whole contract
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
