"""The CLI as the tests call it: ``symlayout ARGV...`` run in-process, giving its exit code and what it
printed, and the files written for it to read."""
from __future__ import annotations

from pathlib import Path

from symlayout import cli


def run(capsys, *argv) -> tuple[int, str, str]:
    """``(exit code, stdout, stderr)`` of ``symlayout *argv`` (each argument as ``str``)."""
    rc = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def write(d: Path, name: str, text: str) -> Path:
    """``text`` written to ``d / name`` (its folders made)."""
    p = d / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p
