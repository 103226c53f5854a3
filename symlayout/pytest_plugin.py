"""pytest plugin: every configuration ``*.toml`` under a directory named ``proofs`` is a set of test items.

Registered through the ``pytest11`` entry point, so a kernel project that
installs symlayout only needs a ``proofs/`` folder of configuration files::

    pip install /path/to/symlayout        # or git+https://.../symlayout.git
    mkdir proofs && cp my_tiling.toml proofs/
    pytest proofs/ --junitxml=proofs.xml

One item per (configuration, property, operand), named ``file.toml::bank_conflicts[A]``,
so ``-k bank_conflicts`` selects and the short summary names the failing
properties.  An item passes when its result is what the configuration expects
(``[expect]``, ``refuted = ["bank_conflicts[A]"]``, ``max_bank_degree``); it
fails with the counterexample otherwise; an UNKNOWN (solver timeout) fails too
(nothing unproved passes); a property that does not apply to the configuration
(or is not checked because CuTe rejects it at compile time) is skipped with the
reason.  A file that cannot be read (malformed TOML, a bad key) is one ERROR
item (``file.toml::config``, an error in setup), not a failure, and the other
files still run.  Each item records its result as JSON in the JUnit XML
(``<property name="symlayout" value="{...}"/>``).

The configuration is proved once per process (cached), so items distribute under
``pytest-xdist`` (``-n auto``) with identical results; ``--dist loadfile`` keeps a
file's items in one worker, so each file is proved once (``-n auto --dist loadfile``
is the way to spread a large ``proofs/`` over the cores; a CI matrix splits it with
``symlayout prove DIR --shard I/N``).

Options: ``--symlayout-no-proofs`` turns collection off; the ini option
``symlayout_proof_dirs`` (default ``proofs``) names the directory names that mark
proof files.  TOML files there that are not configurations (a solve input, a
``pyproject.toml``) are not collected.
"""
from __future__ import annotations

import json

import pytest

_REPORTS: dict = {}          # (path, mtime) -> ConfigReport, per process


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
    from .config import not_a_configuration
    if not_a_configuration(file_path) is not None:
        return None
    return ProofFile.from_parent(parent, path=file_path)


def expected_items(cfg) -> list:
    """``(property, operand)`` pairs a configuration's proof can report, in the prover's order.

    A superset: a pair the prover does not report (a property that does not apply, or
    is not checked because CuTe rejects the configuration) is skipped with the reason.

    >>> from symlayout.config import loads_config
    >>> cfg = loads_config('[mma]\\natom = "SM80_16x8x16_F16F16F16F16_TN"\\n[copy.A]\\natom = "SM75_U32x2_LDSM_N"\\n'
    ...                    'type = "half_t"\\nsmem = "(16,16):(16,1)"\\n[prove]\\nproperties = ["alignment"]\\n')
    >>> expected_items(cfg)
    [('alignment', 'A')]
    """
    from .config import PROPERTIES
    props = list(cfg.prove.properties or PROPERTIES)
    if cfg.params and cfg.threadmap is None:          # parametric copies: the properties Z3 decides
        from .prove.parametric import PARAMETRIC_PROPERTIES
        props = [p for p in props if p in PARAMETRIC_PROPERTIES]
    if cfg.threadmap is not None:
        from .prove.threadmaps import THREADMAP_PROPERTIES
        pairs = [(p, None) for p in props if p in THREADMAP_PROPERTIES]
    elif cfg.copies:                      # (coalescing is a thread-map property)
        pairs = [(p, op) for op in sorted(cfg.copies) for p in props if p != "coalescing"]
    else:
        pairs = [("coverage", op) for op in ("A", "B", "C")] if "coverage" in props else []
    for p in sorted(cfg.expect.refuted):
        if not any(q == p for q, _ in pairs):
            pairs.append((p, None))
    for p, op in sorted(cfg.expect.refuted_operands):
        if (p, op) not in pairs:
            pairs.append((p, op))
    return pairs


def _item_name(prop, op) -> str:
    return prop + (f"[{op}]" if op else "")


class ProofError(Exception):
    """A configuration file that cannot be read (reported as a collection ERROR)."""


class ProofFile(pytest.File):
    def collect(self):
        from .config import load_config
        from .errors import SymlayoutError
        try:
            cfg = load_config(self.path)
        except SymlayoutError as e:
            yield UnreadableItem.from_parent(self, name="config", message=str(e))
            return
        pairs = expected_items(cfg)
        for i, (prop, op) in enumerate(pairs):
            yield ProofItem.from_parent(self, name=_item_name(prop, op), prop=prop, operand=op, cfg=cfg,
                                        claims=pairs if i == len(pairs) - 1 else None)



class UnreadableItem(pytest.Item):
    """A configuration that cannot be read: an ERROR (in setup), never a FAILED; the other files still run."""

    def __init__(self, *, message, **kw):
        super().__init__(**kw)
        self.message = message

    def setup(self):
        pytest.fail(f"symlayout: cannot read this configuration: {self.message}", pytrace=False)

    def runtest(self):  # pragma: no cover (setup raises)
        raise ProofError(self.message)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, ProofError):
            return f"symlayout: cannot read this configuration: {excinfo.value}"
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, 0, f"symlayout configuration {self.path.name}"


class ProofFailure(Exception):
    pass


def _report(cfg):
    import os
    from .prove.engine import prove_config
    key = (str(cfg.path), os.path.getmtime(cfg.path) if os.path.exists(cfg.path) else 0.0)
    rep = _REPORTS.get(key)
    if rep is None:
        rep = _REPORTS[key] = prove_config(cfg)
    return rep


class ProofItem(pytest.Item):
    """One property of one operand of a configuration file."""

    def __init__(self, *, prop, operand, cfg, claims=None, **kw):
        super().__init__(**kw)
        self.prop, self.operand, self.cfg = prop, operand, cfg
        self.claims = claims        # the file's last item: also judges results no item names
        self.add_marker(pytest.mark.symlayout)

    def runtest(self):
        from .cli.prove import format_text
        rep = _report(self.cfg)
        if rep.error:
            raise ProofFailure(rep.error)
        mine = [r for r in rep.results if r.property == self.prop and r.operand == self.operand]
        if self.claims is not None:
            mine += [r for r in rep.results if (r.property, r.operand) not in self.claims]
        if not mine:
            if self.operand in rep.rejected:
                why = next((f"{r.property}[{r.operand}]" for r in rep.results if r.operand == self.operand), "")
                pytest.skip(f"not checked: CuTe rejects this configuration at compile time (see {why})")
            pytest.skip(f"{_item_name(self.prop, self.operand)} does not apply to this configuration")
        for r in mine:
            self.user_properties.append(("symlayout", json.dumps(r.to_json(), sort_keys=True)))
        bad = [r for r in mine if not r.as_expected]
        if bad:
            from .prove.engine import ConfigReport
            sub = ConfigReport(rep.path, rep.name, results=bad)
            raise ProofFailure(format_text([sub]))

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, ProofFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, 0, f"symlayout proof {self.path.name}::{self.name}"


def pytest_configure(config):
    config.addinivalue_line("markers", "symlayout: a symlayout proof item (a configuration's property)")
