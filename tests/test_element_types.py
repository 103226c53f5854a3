"""Contract 2.1: the atom's value type is not the data's type (issue 26, item 1).

``[copy.X] type`` is ``Copy_Atom<Op, T>``'s ``T`` as the kernel writes it; ``element`` (on any table of
the operand, default ``type``) is the element type of the operand's tensors.  A bit-moving atom's type is a
width; an auto-vectorizing copy's tensors decide.  CuTe C++ is the ground truth for what compiles
(``symlayout cute`` programs built with g++ when the headers are there).
"""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from cli_run import run
from cute_cpp import cute_site
from symlayout.config import loads_config
from symlayout.errors import ConfigError
from symlayout.prove.engine import prove_config

REPO = Path(__file__).resolve().parents[1]
INT8 = REPO / "proofs" / "sm80_datapath" / "int8" / "cutlass_sm80_int8_tn_3stage.toml"
HALF16 = REPO / "proofs" / "sm80_datapath" / "f16_tn_uint16_atoms.toml"

S8 = ('[mma]\natom = "SM80_16x8x32_S32S8S8S32_TN"\nlayout = "(2,2,1)"\npermutation = ["32", "32", "32"]\n')
SMEM8 = 'smem = "Sw<2,4,3> o 0 o (128,64):(64,1)"\n'


def verdicts(text, path="t.toml"):
    rep = prove_config(loads_config(text, path))
    assert rep.error is None, rep.error
    return {(r.property, r.operand): r for r in rep.results}


def without_element(text):
    return "".join(line for line in text.splitlines(keepends=True) if not line.startswith("element"))


# ---------------------------------------------------------------- CUTLASS's SM80 int8 GEMM as shipped


def test_cutlass_int8_gemm_as_shipped_is_proved(capsys):
    rc, out, _ = run(capsys, "prove", INT8, "--json")
    doc = json.loads(out)
    res = doc["configs"][0]["results"]
    assert rc == 0 and doc["summary"]["refuted"] == 0 and doc["summary"]["unmet"] == 0
    ta = {r["operand"]: r["status"] for r in res if r["property"] == "type_agreement"}
    assert ta == {"A": "proved", "B": "proved", "g2s.A": "proved", "g2s.B": "proved"}


def test_cutlass_int8_gemm_without_element_is_refuted_with_the_hint():
    rs = verdicts(without_element(INT8.read_text()))
    for op in ("A", "B", "g2s.A", "g2s.B"):
        r = rs[("type_agreement", op)]
        assert r.status == "refuted", op
        assert 'say element = "int8_t"' in r.counterexample.message, r.counterexample.message
    assert "if the smem holds int8_t" in rs[("type_agreement", "A")].counterexample.message
    # the rest of the copy is decided as before: only the element type was missing
    assert all(r.status == "proved" for (p, _), r in rs.items() if p != "type_agreement")


def test_half_data_through_uint16_atoms_is_proved_with_element_on_any_table():
    rs = verdicts(HALF16.read_text(), str(HALF16))
    assert rs and all(r.status == "proved" for r in rs.values())
    cfg = loads_config(HALF16.read_text())
    # [copy.B] gets the element stated on [g2s.B]; [g2s.A] the one on [copy.A]
    assert cfg.copies["B"].element_type == "half_t" and cfg.copies["B"].type == "uint16_t"
    assert cfg.g2s["A"].element_type == "half_t"
    rs = verdicts(without_element(HALF16.read_text()))
    msg = rs[("type_agreement", "A")].counterexample.message
    assert rs[("type_agreement", "A")].status == "refuted" and 'say element = "half_t"' in msg


# ---------------------------------------------------------------- genuinely wrong types stay refuted


def test_f16_data_read_by_a_bf16_mma_is_refuted_without_a_hint():
    text = HALF16.read_text().replace("SM80_16x8x16_F32F16F16F32_TN", "SM80_16x8x16_F32BF16BF16F32_TN")
    rs = verdicts(text)
    for op in ("A", "B"):
        r = rs[("type_agreement", op)]
        assert r.status == "refuted"
        assert "half_t" in r.counterexample.message and "bfloat16_t" in r.counterexample.message
        assert "say element" not in r.counterexample.message          # element was given: it is no fix
        assert "Copy_Atom<SM75_U32x4_LDSM_N,uint16_t>" in r.counterexample.message     # the atom as written


def test_uint8_data_read_by_an_int8_mma_is_refuted():
    rs = verdicts(S8 + '[copy.A]\natom = "SM75_U32x4_LDSM_N"\ntype = "uint8_t"\nelement = "uint8_t"\n' + SMEM8)
    r = rs[("type_agreement", "A")]
    assert r.status == "refuted" and "say element" not in r.counterexample.message


@pytest.mark.parametrize("atom_type", ["uint16_t", "uint32_t"])
def test_a_bit_moving_atom_of_another_width_is_refuted(atom_type):
    rs = verdicts(S8 + f'[copy.A]\natom = "SM75_U32x4_LDSM_N"\ntype = "{atom_type}"\nelement = "int8_t"\n' + SMEM8)
    assert list(rs) == [("type_agreement", "A")]                     # the other properties are not checked
    msg = rs[("type_agreement", "A")].counterexample.message
    assert rs[("type_agreement", "A")].status == "refuted" and "8-bit int8_t" in msg and atom_type in msg


def test_a_cp_async_of_another_width_is_refuted():
    text = INT8.read_text().replace('type = "int8_t"', 'type = "half_t"', 1)
    rs = verdicts(text)
    r = rs[("type_agreement", "g2s.A")]
    assert r.status == "refuted" and "16-bit values" in r.counterexample.message
    assert [p for (p, o) in rs if o == "g2s.A"] == ["type_agreement"]
    assert rs[("type_agreement", "g2s.B")].status == "proved"


def test_auto_vectorizing_copy_the_tensors_types_decide():
    avc = S8 + '[copy.A]\natom = "AutoVectorizingCopy"\ntype = "uint8_t"\nelement = "int8_t"\n' + SMEM8
    assert verdicts(avc)[("type_agreement", "A")].status == "proved"          # int8 smem, int8 MMA: bits moved
    r = verdicts(without_element(avc))[("type_agreement", "A")]             # uint8 -> int8 converted: refuted
    assert r.status == "refuted" and "element by element" in r.counterexample.message
    assert 'say element = "int8_t"' in r.counterexample.message
    # the atom's type is dropped: a float atom over half data is the half copy
    half = ('[mma]\natom = "SM80_16x8x16_F32F16F16F32_TN"\nlayout = "(2,2,1)"\n[copy.A]\n'
            'atom = "AutoVectorizingCopy"\ntype = "float"\nelement = "half_t"\nsmem = "(32,64):(64,1)"\n')
    assert verdicts(half)[("type_agreement", "A")].status == "proved"


# ---------------------------------------------------------------- bad input


def test_element_given_twice_with_two_types_is_an_input_error(tmp_path, capsys):
    text = INT8.read_text().replace('type = "int8_t"\n', 'type = "int8_t"\nelement = "uint8_t"\n', 1)
    p = tmp_path / "t.toml"
    p.write_text(text)
    rc, out, err = run(capsys, "prove", p)
    line = text.splitlines().index('element = "uint8_t"') + 1
    first = text.splitlines().index('element = "int8_t"') + 1
    assert rc == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert f"t.toml:{line}:" in err and "[g2s.A] element = 'uint8_t'" in err
    assert f"[copy.A] element = 'int8_t' (line {first})" in err
    # the same type twice, spelled two ways, is fine
    loads_config(INT8.read_text().replace('type = "int8_t"\n', 'type = "int8_t"\nelement = "int8_t"\n', 1))


@pytest.mark.parametrize("bad, want", [('element = "int9_t"', "int9_t"), ("element = 8", "must be a string")])
def test_a_bad_element_is_an_input_error(bad, want):
    with pytest.raises(ConfigError, match=re.escape(want)):
        loads_config(S8 + f'[copy.A]\natom = "SM75_U32x4_LDSM_N"\ntype = "uint8_t"\n{bad}\n' + SMEM8, "t.toml")


def test_element_on_smem_must_have_the_layout_width():
    text = (REPO / "proofs" / "hopper" / "cutlass3_128x128x64_f16_kmajor_sw128.toml").read_text()
    assert "[smem.A]" in text
    same = text.replace("[smem.A]\n", '[smem.A]\nelement = "half_t"\n', 1)
    assert loads_config(same).smem["A"].element_type == "half_t"
    with pytest.raises(ConfigError, match="has 32 bits"):
        loads_config(text.replace("[smem.A]\n", '[smem.A]\nelement = "float"\n', 1), "t.toml")


# ---------------------------------------------------------------- symlayout cute and CuTe C++


def _static(path):
    """The copies of a proofs file alone, with no [params] (so `symlayout cute` instantiates each copy)."""
    text = path.read_text()
    text = re.sub(r"\[params\].*?(?=\[mma\])", "", text, flags=re.S)
    return text[:text.index("[g2s.A]")] if "[g2s.A]" in text else text


def test_cute_writes_type_in_the_atom_and_element_for_the_tensors(tmp_path, capsys):
    p = tmp_path / "int8.toml"
    p.write_text(_static(INT8))
    rc, out, _ = run(capsys, "cute", p)
    assert rc == 0 and "using SmemCopyAtomA = Copy_Atom<SM75_U32x4_LDSM_N, uint8_t>;" in out
    assert "copy_A(0, (int8_t*)nullptr)" in out and "(uint8_t*)" not in out


def _compile(tmp_path, capsys, text):
    inc = cute_site()
    if inc is None:
        pytest.skip("CuTe headers (SYMLAYOUT_CUTE_SITE or cutlass_library) or g++ not available")
    p = tmp_path / "c.toml"
    p.write_text(text)
    rc, out, _ = run(capsys, "cute", p)
    assert rc == 0
    src = tmp_path / "p.cpp"
    src.write_text(out)
    return subprocess.run(["g++", "-std=c++17", "-fsyntax-only", *[f"-I{d}" for d in inc], str(src)],
                          capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("path", [INT8, pytest.param(HALF16, marks=pytest.mark.slow)], ids=["int8", "half_uint16"])
def test_the_proved_configurations_compile_in_cute(path, tmp_path, capsys):
    p = _compile(tmp_path, capsys, _static(path))
    assert p.returncode == 0, p.stderr[:3000]


@pytest.mark.slow
def test_cute_rejects_a_bit_moving_atom_of_another_width(tmp_path, capsys):
    p = _compile(tmp_path, capsys, _static(INT8).replace('type = "uint8_t"', 'type = "uint16_t"'))
    assert p.returncode != 0 and "failed to vectorize into registers" in p.stderr


# ---------------------------------------------------------------- the solver


def test_solve_keeps_element_and_refutes_another_width(tmp_path, capsys):
    solve = S8 + '[copy.A]\natom = "SM75_U32x4_LDSM_N"\ntype = "uint8_t"\nelement = "int8_t"\n' \
                 'smem = "Sw<?,4,3> o (128,64):(64,1)"\n[prove]\nproperties = ["type_agreement", "bank_conflicts"]\n'
    p = tmp_path / "s.toml"
    p.write_text(solve)
    rc, out, _ = run(capsys, "solve", p)
    assert rc == 0 and "FOUND" in out and 'element = "int8_t"' in out
    p.write_text(solve.replace('type = "uint8_t"', 'type = "uint16_t"'))
    rc, out, _ = run(capsys, "solve", p)
    assert rc != 0 and "NO SOLUTION" in out and "16-bit values" in out
