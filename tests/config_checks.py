"""Checks the configuration tests share: the verdicts by ``(property, operand)`` of a configuration (or of a
file, with its report); a proof that holds whole (its scale-factor properties decided on something); a pitfall
refuted exactly where its ``[expect]`` says; and bad input as one line -- one
:class:`~symlayout.errors.ConfigError` whose message is a single line that starts with the file's name
(``t.toml:LINE: [table] key: ...``) and says what is wrong."""
from __future__ import annotations

import re

import pytest

from symlayout.config import load_config, loads_config
from symlayout.errors import ConfigError
from symlayout.prove.engine import prove_config
from symlayout.prove.verdict.result import PROVED, REFUTED


def verdicts(cfg, via: bool = False) -> dict:
    """``{(property, operand): Result}`` of proving ``cfg`` (keyed ``(property, operand, via)`` with ``via``)."""
    return _keyed(prove_config(cfg).results, via)


def results(path, via: bool = False) -> tuple[dict, object]:
    """``(verdicts, report)`` of proving the configuration file at ``path`` (the verdicts as :func:`verdicts`)."""
    rep = prove_config(load_config(path))
    return _keyed(rep.results, via), rep


def _keyed(results, via: bool) -> dict:
    return {(r.property, r.operand, r.via) if via else (r.property, r.operand): r for r in results}


def check_block_scaled_proof(path) -> None:
    """Every property of the configuration at ``path`` is PROVED, ``sf`` and ``sf_kind`` of both operands on
    one obligation or more."""
    res = verdicts(load_config(str(path)))
    sf = [r for (p, _o), r in res.items() if p in ("sf", "sf_kind")]
    assert len(sf) == 4 and all(r.status == PROVED and r.checked > 0 for r in sf)
    assert all(r.status == PROVED for r in res.values()), [str(r.counterexample) for r in res.values()
                                                              if r.status != PROVED]


def check_pitfall(path) -> None:
    """The pitfall at ``path`` is refuted at the ``(property, operand)`` its ``[expect]`` names and nowhere
    else, each refutation with a counterexample that says something."""
    cfg = load_config(str(path))
    res = verdicts(cfg)
    refuted = {(p, o) for (p, o), r in res.items() if r.status == REFUTED}
    assert refuted and refuted == set(cfg.expect.refuted_operands)
    assert all(res[k].counterexample.message for k in refuted)


def one_line_error(text: str, words: str, path: str = "t.toml") -> str:
    """The message ``loads_config(text, path)`` refuses ``text`` with, checked: it holds ``words``, is one
    line, and starts with ``path``."""
    with pytest.raises(ConfigError, match=re.escape(words)) as e:
        loads_config(text, path)
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith(f"{path}:")
    return msg


def partition_lines(m, offset=lambda i: i) -> list:
    """A copy model's calls as the compiled CuTe partition programs print them: per thread, ``S t`` and the
    smem element (``offset(i)`` of each element index) of every value, then ``D t`` and its fragment slot."""
    out = []
    for t in range(m.threads):
        out.append(f"S {t} " + " ".join(str(offset(i)) for c in m.calls[t] for i in c.smem))
        out.append(f"D {t} " + " ".join(str(s) for c in m.calls[t] for s in c.reg))
    return out
