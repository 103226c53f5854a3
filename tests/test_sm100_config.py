"""Contract Version 3, the MMA side of a Blackwell configuration: the loader reads ``[mma]`` with an SM100
UMMA atom (either of CuTe's spellings) and ``cluster``, ``[smem.X]`` in ``UMMA::tile_to_mma_shape``'s form
(with an optional hand-encoded ``desc``) and the SM100 ``[tma.X]`` atoms; bad input is one line naming the key
and line (exit 2); an atom CuTe rejects is a refutation with CuTe's message (exit 1), never an input error."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from symlayout import cli
from symlayout.config import loads_config
from symlayout.errors import ConfigError

F16_1SM = """\
name = "sm100 f16 1SM"
[mma]
atom = "SM100_MMA_F16BF16_SS<half_t,half_t,float,128,256,UMMA::Major::K,UMMA::Major::K>"
cluster = "(2,1,1)"

[smem.A]
type = "half_t"
layout = "Sw<3,4,3> o smem_ptr[16b](unset) o ((_128,_16),_1,_4,(_1,_4)):((_64,_1),_0,_16,(_0,_8192))"
align = 1024

[smem.B]
type = "half_t"
layout = "Sw<3,4,3> o smem_ptr[16b](unset) o ((_256,_16),_1,_4,(_1,_4)):((_64,_1),_0,_16,(_0,_16384))"
align = 1024
"""

REPO = Path(__file__).resolve().parents[1]

TRAITS = ("MMA_Traits<SM100_MMA_F8F6F4_SS, float_e4m3_t, float_e4m3_t, float, cute::C<128>, cute::C<256>, "
          "cute::integral_constant<UMMA::Major, UMMA::Major::K>, cute::integral_constant<UMMA::Major, UMMA::Major::K>>")


def _load(text, path="t.toml"):
    return loads_config(text, path)


def test_loads_an_sm100_configuration():
    cfg = _load(F16_1SM)
    assert cfg.mma.is_sm100 and cfg.mma.cluster == (2, 1, 1) and cfg.mma.cute_rejections == ()
    assert set(cfg.smem) == {"A", "B"} and cfg.smem["A"].desc is None


FP8 = """\
[mma]
atom = "%s"

[smem.A]
type = "float_e4m3_t"
layout = "Sw<3,4,3> o smem_ptr[8b](unset) o ((_128,_32),_1,_4):((_128,_1),_0,_32)"

[smem.B]
type = "float_e4m3_t"
layout = "Sw<3,4,3> o smem_ptr[8b](unset) o ((_256,_32),_1,_4):((_128,_1),_0,_32)"
"""


def test_traits_spelling_is_the_template_id():
    cfg = _load(FP8 % TRAITS.replace('"', ''))
    assert cfg.mma.atom == "SM100_MMA_F8F6F4_SS<float_e4m3_t,float_e4m3_t,float,128,256,UMMA::Major::K,UMMA::Major::K>"


def test_hand_encoded_descriptor_is_read():
    cfg = _load(F16_1SM.replace("align = 1024\n\n[smem.B]", 'align = 1024\ndesc = "0x4000404000010000"\n\n[smem.B]'))
    assert cfg.smem["A"].desc == 0x4000404000010000 and cfg.smem["B"].desc is None


def test_an_atom_cute_rejects_is_kept_for_the_prover():
    cfg = _load(F16_1SM.replace("float,128,256", "float,256,256"))
    assert cfg.mma.cute_rejections == ("SM100_MMA_F16BF16 M-mode size should be 64 or 128 for 1 CTA cluster MMA.",)


BAD = [
    # (substitution, line, words of the message)
    (("SM100_MMA_F16BF16_SS<half_t,", "SM100_MMA_F16_SS<half_t,"), 3, "not an SM100 UMMA atom name"),
    (("UMMA::Major::K,UMMA::Major::K>", "UMMA::Major::K,UMMA::Major::Q>"), 3, "a major must be"),
    (('cluster = "(2,1,1)"', 'cluster = "(2,1)"'), 4, "cluster must be a cluster shape"),
    (('cluster = "(2,1,1)"', 'cluster = "(8,4,1)"'), 4, "at most 16"),
    (('cluster = "(2,1,1)"', 'cluster = "(0,1,1)"'), 4, "positive"),
    (("((_128,_16),_1,_4", "((_64,_16),_2,_4"), 8, "mode 0 must be one instruction's (MMA_M,MMA_K) = (128,16)"),
    (("((_128,_16),_1,_4,(_1,_4)):((_64,_1),_0,_16,(_0,_8192))", "((_128,_16),_1):((_64,_1),_0)"), 8, "rank 2"),
    (("align = 1024\n\n[smem.B]", 'align = 1024\ndesc = "0xZZ"\n\n[smem.B]'), 10, "desc"),
    (("[smem.B]", '[tma.A]\natom = "SM100_TMA_3SM_LOAD"\ngmem = "(128,64):(64,1)"\nbox = "(128,64)"\n\n[smem.B]'),
     12, "atom"),
]


@pytest.mark.parametrize("sub,line,words", BAD)
def test_bad_sm100_input_is_one_line_naming_key_and_line(sub, line, words, tmp_path, capsys):
    p = tmp_path / "bad.toml"
    p.write_text(F16_1SM.replace(*sub))
    with pytest.raises(ConfigError) as e:
        _load(p.read_text(), str(p))
    msg = str(e.value)
    assert "\n" not in msg and f"bad.toml:{line}" in msg and words in msg, msg
    assert cli.main(["prove", str(p)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and words in err


def test_cluster_needs_an_sm100_atom():
    text = '[mma]\natom = "SM80_16x8x16_F16F16F16F16_TN"\ncluster = "(2,1,1)"\n'
    with pytest.raises(ConfigError, match=r"t.toml:3: .*only an SM100"):
        _load(text)


def test_sm100_tma_atom_needs_an_sm100_mma():
    text = (REPO / "proofs/hopper/cutlass3_128x128x64_f16_kmajor_sw128.toml").read_text()
    assert 'atom = "SM90_TMA_LOAD"' in text
    with pytest.raises(ConfigError, match="SM100 TMA atom"):
        _load(text.replace('atom = "SM90_TMA_LOAD"', 'atom = "SM100_TMA_2SM_LOAD"', 1))


def test_rejected_atom_is_a_refutation_not_an_input_error(tmp_path, capsys):
    p = tmp_path / "rej.toml"
    p.write_text(F16_1SM.replace("float,128,256", "float,256,256"))
    assert cli.main(["prove", str(p), "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    (r,) = out["configs"][0]["results"]
    assert r["status"] == "refuted" and r["method"] == "cute"
    assert r["counterexample"]["cute_static_assert"] == \
        "SM100_MMA_F16BF16 M-mode size should be 64 or 128 for 1 CTA cluster MMA."


def test_parameters_in_an_sm100_buffer_are_not_supported():
    text = F16_1SM.replace("(_1,_4)):((_64,_1),_0,_16,(_0,_8192))", "(_1,S)):((_64,_1),_0,_16,(_0,_8192))", 1)
    text += "\n[params]\nS = { max = 8 }\n"
    with pytest.raises(ConfigError, match=r"t.toml:8: .*not supported: parameters in an SM100 operand buffer"):
        _load(text)


def test_an_atom_cute_rejects_needs_no_buffers(tmp_path, capsys):
    p = tmp_path / "rej.toml"
    p.write_text('[mma]\natom = "SM100_MMA_TF32_SS<tfloat32_t,tfloat32_t,float,128,12,UMMA::Major::K,UMMA::Major::K>"\n')
    assert cli.main(["prove", str(p)]) == 1
    assert "N-mode size should be a multiple of 8" in capsys.readouterr().out


def test_an_atom_layout_over_an_sm100_atom_is_not_supported():
    with pytest.raises(ConfigError, match=r"t.toml:4: .*not supported: an AtomLayoutMNK"):
        _load(F16_1SM.replace('cluster = "(2,1,1)"', 'layout = "(2,1,1)"'))
    assert _load(F16_1SM.replace('cluster = "(2,1,1)"', 'layout = "(1,1,1)"')).mma.is_sm100


def test_a_register_copy_of_c_over_an_sm100_atom_is_not_supported():
    text = F16_1SM + '\n[copy.C]\natom = "UniversalCopy<uint32_t>"\ntype = "float"\nsmem = "(128,256):(256,1)"\n'
    with pytest.raises(ConfigError, match=r"not supported: .*accumulates in Tensor Memory"):
        _load(text)


def test_global_copies_with_an_sm100_atom_are_not_supported():
    text = F16_1SM + ('\n[g2s.A]\natom = "UniversalCopy<uint128_t>"\ntype = "half_t"\nthr = "(16,8):(8,1)"\n'
                      'val = "(1,8)"\ngmem = "(128,64):(64,1)"\nsmem = "Sw<3,3,3> o (128,64):(64,1)"\n')
    with pytest.raises(ConfigError, match=r"not supported with an SM100"):
        _load(text)
