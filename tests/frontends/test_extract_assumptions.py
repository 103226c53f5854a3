"""``symlayout extract`` names what holds only under a stronger assumption than its default leading
dimension (``DEPENDS ... --assume ldA%16==0``), and ``--assume`` states it in the written file.  On the
recorded probe output of CUTLASS's SM80 f16 configuration (no compiler needed)."""
from __future__ import annotations

from pathlib import Path

import pytest

from symlayout.cli.common import UsageError
from symlayout.cli.extract import _apply_assumptions, _name_dependencies
from symlayout.config import loads_config
from symlayout.frontends.assumptions import default_assumptions
from symlayout.frontends.cute_cpp import documents_from_output
from symlayout.prove.engine import prove_config

DATA = Path(__file__).with_name("data")
CUTLASS_TYPE = ("cutlass::gemm::device::DefaultGemmConfigurationToCutlass3Types<cutlass::arch::OpClassTensorOp, "
                "cutlass::arch::Sm80, cutlass::half_t, cutlass::layout::RowMajor, cutlass::half_t, "
                "cutlass::layout::ColumnMajor, float, cutlass::layout::RowMajor, float>")


def docs():
    return documents_from_output((DATA / "cutlass_sm80_f16_tn.probe.txt").read_text(),
                                 "default_gemm_configuration.hpp", CUTLASS_TYPE)


def not_proved(doc) -> list:
    rep = prove_config(loads_config(doc.to_toml(), path=doc.key))
    return sorted((r.property, r.operand) for r in rep.results if r.status != "proved")


def test_the_default_leading_dimensions_are_the_extractors():
    (d,) = docs()
    assert default_assumptions(d) == {"ldA": 16, "ldB": 16}


def test_results_depending_on_the_default_are_named(capsys):
    (d,) = docs()
    assert not_proved(d) == [("coalescing", "g2s.A"), ("coalescing", "g2s.B")]
    _name_dependencies([d], None)
    err = capsys.readouterr().err.splitlines()
    assert err == [f"symlayout extract: DEPENDS {d.key}: coalescing[g2s.{x}]: ld{x} % 16 == 0 (--assume ld{x}%16==0)"
                   for x in "AB"]
    assert "# coalescing[g2s.A] holds only if ldA % 16 == 0: state it (multiple_of = 16 here" in d.to_toml()


def test_assume_states_it_and_the_file_is_proved(capsys):
    (d,) = docs()
    _apply_assumptions([d], ["ldA%16==0", "ldB%16==0"])
    _name_dependencies([d], None)
    assert capsys.readouterr().err == ""
    assert not_proved(d) == []
    assert "# ldA % 16 == 0: stated (--assume ldA%16==0)" in d.to_toml()


@pytest.mark.parametrize("bad,words", [("ldA>3", "expected NAME%N==0"), ("ldZ%16==0", "no parameter ldZ")])
def test_bad_assume_is_a_usage_error(bad, words):
    with pytest.raises(UsageError, match=words):
        _apply_assumptions(docs(), [bad])


@pytest.mark.slow
def test_cli_names_it_and_assume_makes_the_file_prove(cute_headers, tmp_path, capsys):
    """Through the command line (a g++ compile of CUTLASS's SM80 collective): DEPENDS on stderr without
    --assume; with it, 'symlayout prove' of the written file exits 0."""
    from symlayout.cli import main
    from test_extract_cpp import COLLECTIVE
    h = tmp_path / "my_mainloop.h"
    h.write_text(COLLECTIVE)
    out = tmp_path / "m.toml"
    assert main(["extract", str(h), "--type", "mykernel::Mainloop<4>", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "DEPENDS" in err and "(--assume ldA%16==0)" in err and "(--assume ldB%16==0)" in err
    assert main(["prove", str(out), "-q"]) == 1
    capsys.readouterr()
    assert main(["extract", str(h), "--type", "mykernel::Mainloop<4>", "--assume", "ldA%16==0",
                 "--assume", "ldB%16==0", "-o", str(out)]) == 0
    assert "DEPENDS" not in capsys.readouterr().err
    assert main(["prove", str(out), "-q"]) == 0
