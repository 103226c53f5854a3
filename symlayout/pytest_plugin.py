"""pytest plugin: every ``*.toml`` under a directory named ``proofs`` is a test item.

Registered through the ``pytest11`` entry point, so a kernel project that
installs symlayout only needs a ``proofs/`` folder of configuration files::

    pip install symlayout
    mkdir proofs && cp my_tiling.toml proofs/
    pytest proofs/

An item passes when every result is what the configuration expects
(``[expect] refuted`` names the properties that must be refuted); it fails
with the counterexamples otherwise, and an UNKNOWN (solver timeout) fails too
(nothing unproved passes).  ``--symlayout-no-proofs`` turns collection off;
the ini option ``symlayout_proof_dirs`` (default ``proofs``) names the
directory names that mark proof files.
"""
from __future__ import annotations

import pytest


def pytest_addoption(parser):
    group = parser.getgroup("symlayout")
    group.addoption("--symlayout-no-proofs", action="store_true", default=False,
                    help="do not collect proofs/**/*.toml as symlayout proofs")
    parser.addini("symlayout_proof_dirs", "directory names whose *.toml files are symlayout proofs",
                  type="linelist", default=["proofs"])


def pytest_collect_file(file_path, parent):
    if file_path.suffix != ".toml" or parent.config.getoption("--symlayout-no-proofs"):
        return None
    dirs = set(parent.config.getini("symlayout_proof_dirs") or ["proofs"])
    if not any(p.name in dirs for p in file_path.parents):
        return None
    return ProofFile.from_parent(parent, path=file_path)


class ProofFile(pytest.File):
    def collect(self):
        yield ProofItem.from_parent(self, name=self.path.stem)


class ProofFailure(Exception):
    pass


class ProofItem(pytest.Item):
    """One configuration file, proved as a whole."""

    def runtest(self):
        from .config import load_config
        from .errors import SymlayoutError
        from .cli.prove import format_text
        from .prove.engine import prove_config
        try:
            cfg = load_config(self.path)
        except SymlayoutError as e:
            raise ProofFailure(str(e))
        rep = prove_config(cfg)
        self.user_properties.append(("symlayout", rep.to_json()))
        if not rep.ok:
            raise ProofFailure(format_text([rep]))

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, ProofFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, 0, f"symlayout proof {self.name}"
