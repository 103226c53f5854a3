"""pytest plugin: every configuration ``*.toml`` under a directory named ``proofs`` is a set of test items.

Registered through the ``pytest11`` entry point, so a kernel project that
installs symlayout only needs a ``proofs/`` folder of configuration files::

    pip install /path/to/symlayout        # or git+https://.../symlayout.git
    mkdir proofs && cp my_tiling.toml proofs/
    pytest proofs/ --junitxml=proofs.xml

One item per result of the configuration, named as ``symlayout prove`` names the
result: ``file.toml::bank_conflicts[A]``, ``file.toml::tma[A]``,
``file.toml::exactly_once[stages.A]`` (results sharing a name, such as ``coverage[A]`` of
the copy and ``coverage[A]`` via TMA, are one item), so ``-k bank_conflicts`` or ``-k tma``
selects and the short summary names the failing results.  The file is proved while it
is collected (its items are its results) and the items judge the results: an item
passes when its result is what the configuration expects (``[expect]``,
``refuted = ["bank_conflicts[A]"]``, ``max_bank_degree``); it fails with the
counterexample otherwise; an UNKNOWN (solver timeout) fails too (nothing unproved
passes).  A file that cannot be read or proved (malformed TOML, a bad key, or any
other exception, a bug in symlayout included) is one ERROR item (``file.toml::config``,
an error in setup), not a failure, and the other files still run.  Each item records
its result as JSON in the JUnit XML (``<property name="symlayout" value="{...}"/>``).

Each file is proved once per process.  Under ``pytest-xdist`` (``-n N``), where every
worker collects every file, the controller proves the files once, ahead, in N processes
(:func:`prove_ahead`), and the workers collect from those answers: the same items and
results as one process, each file proved once (a CI matrix: ``symlayout prove DIR
--shard I/N``).

Options: ``--symlayout-no-proofs`` turns collection off; the ini option
``symlayout_proof_dirs`` (default ``proofs``) names the directory names that mark
proof files.  TOML files there that are not configurations (a solve input, a
``pyproject.toml``) are not collected.
"""
from __future__ import annotations

import json
import os
import pickle
import tempfile
from pathlib import Path

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
    # lazy: pytest loads this plugin in every run; the prover only once a symlayout file is collected
    from .config import not_a_configuration
    try:
        if not_a_configuration(file_path) is not None:
            return None
    except Exception:  # noqa: BLE001 (the file's own ERROR item says what went wrong)
        pass
    return ProofFile.from_parent(parent, path=file_path)


def result_name(r) -> str:
    """A result's name, as ``symlayout prove`` prints it: ``property[operand]`` (``tma[A]``,
    ``exactly_once[stages.A]``, ``coverage`` for a thread map)."""
    return r.property + (f"[{r.operand}]" if r.operand else "")


def result_items(results) -> dict:
    """``{name: [results]}`` in the prover's order: one item per result name (results that share a name,
    ``coverage[A]`` of the copy and ``coverage[A]`` via TMA, are judged together by one item).

    >>> from symlayout.prove.verdict.result import Result
    >>> list(result_items([Result("tma", "refuted", operand="A", via="tma"), Result("coverage", "proved", operand="C"),
    ...                    Result("coverage", "proved", operand="A", via="tma"), Result("coverage", "proved", operand="A")]))
    ['tma[A]', 'coverage[C]', 'coverage[A]']
    """
    out: dict = {}
    for r in results:
        out.setdefault(result_name(r), []).append(r)
    return out


_REPORTS: dict = {}          # file_key -> ("report", ConfigReport) or ("error", message), per process
_AHEAD = "SYMLAYOUT_PYTEST_PROVED"      # (env) the answers the xdist controller proved, for its workers


def file_key(path) -> tuple:
    """A file as of now: its real path, modification time and size."""
    path = os.path.realpath(path)
    try:
        st = os.stat(path)
        return path, st.st_mtime_ns, st.st_size
    except OSError:
        return path, 0, 0


def proved(path) -> tuple:
    """``("report", ConfigReport)`` or ``("error", message)`` for a configuration file, proved once per
    process (:func:`symlayout.prove.schedule.prove_file`: any error is the answer, never an exception), or
    once in all, ahead, for the workers of ``pytest -n`` (:func:`prove_ahead`)."""
    # lazy: pytest loads this plugin in every run; the prover only once a symlayout file is collected
    from .prove.schedule import prove_file
    if not _REPORTS and os.environ.get(_AHEAD):
        try:
            with open(os.environ[_AHEAD], "rb") as f:
                _REPORTS.update(pickle.load(f))
        except (OSError, pickle.UnpicklingError, EOFError):
            pass
    key = file_key(path)
    if key not in _REPORTS:
        _REPORTS[key] = prove_file(str(path), True, None, "auto", None)
    return _REPORTS[key]


def proof_files(config) -> list:
    """The configuration files ``pytest_collect_file`` would collect below the paths of the command line."""
    # lazy: pytest loads this plugin in every run; the prover only once a symlayout file is collected
    from .config import not_a_configuration
    # lazy: pytest loads this plugin in every run; the prover only once a symlayout file is collected
    from .prove.schedule import path_entries
    dirs = set(config.getini("symlayout_proof_dirs") or ["proofs"])
    out = []
    for arg in config.args:
        for path, why in path_entries(str(arg).split("::", 1)[0]):
            p = Path(path)
            if why is None and p.suffix == ".toml" and any(q.name in dirs for q in p.resolve().parents):
                try:
                    if not_a_configuration(p) is None:
                        out.append(str(p.resolve()))
                except Exception:  # noqa: BLE001 (collected: its ERROR item says why)
                    out.append(str(p.resolve()))
    return sorted(set(out))


def prove_ahead(config) -> None:
    """Under ``pytest -n N`` (this is the controller, before the workers start): prove the proof files once,
    in N processes (:func:`symlayout.prove.schedule.prove_files`), and hand the answers to the workers through
    a file named in the environment, so that every worker collects its items without proving."""
    # lazy: pytest loads this plugin in every run; the prover only once a symlayout file is collected
    from .prove.schedule import default_jobs, prove_files
    files = proof_files(config)
    if not files:
        return
    jobs = config.getoption("numprocesses", None) or default_jobs()
    answers = prove_files([(f, True) for f in files], None, int(jobs))
    fd, name = tempfile.mkstemp(prefix="symlayout-pytest-", suffix=".pickle")
    with os.fdopen(fd, "wb") as f:
        pickle.dump({file_key(p): a for p, a in zip(files, answers)}, f)
    os.environ[_AHEAD] = name
    config.add_cleanup(lambda: (os.environ.pop(_AHEAD, None), os.unlink(name)))


class ProofError(Exception):
    """A configuration file that cannot be read (reported as a collection ERROR)."""


class ProofFile(pytest.File):
    """A configuration file: proved while it is collected, so that its items are its results, one item per
    result name."""

    def collect(self):
        kind, what = proved(self.path)
        if kind != "report" or what.error:
            message = what if kind != "report" else what.error
            yield UnreadableItem.from_parent(self, name="config", message=message)
            return
        for name, results in result_items(what.results).items():
            yield ProofItem.from_parent(self, name=name, report=what, results=results)
        if not what.results:
            yield ProofItem.from_parent(self, name="config", report=what, results=[])


class UnreadableItem(pytest.Item):
    """A configuration that cannot be read or proved: an ERROR (in setup), never a FAILED; the other files
    still run."""

    def __init__(self, *, message, **kw):
        super().__init__(**kw)
        self.message = message

    def setup(self):
        pytest.fail(f"symlayout: cannot prove this configuration: {self.message}", pytrace=False)

    def runtest(self):  # pragma: no cover (setup raises)
        raise ProofError(self.message)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, ProofError):
            return f"symlayout: cannot prove this configuration: {excinfo.value}"
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, 0, f"symlayout configuration {self.path.name}"


class ProofFailure(Exception):
    pass


class ProofItem(pytest.Item):
    """The results of one name (``property[operand]``) of a configuration file."""

    def __init__(self, *, report, results, **kw):
        super().__init__(**kw)
        self.report, self.results = report, results
        self.add_marker(pytest.mark.symlayout)

    def runtest(self):
        # lazy: pytest loads this plugin in every run; the prover only once a symlayout file is collected
        from .cli.prove import format_text
        # lazy: pytest loads this plugin in every run; the prover only once a symlayout file is collected
        from .prove.engine import ConfigReport
        if not self.results:
            pytest.skip("no property of this configuration applies")
        for r in self.results:
            self.user_properties.append(("symlayout", json.dumps(r.to_json(), sort_keys=True)))
        bad = [r for r in self.results if not r.as_expected]
        if bad:
            raise ProofFailure(format_text([ConfigReport(self.report.path, self.report.name, results=bad)]))

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, ProofFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, 0, f"symlayout proof {self.path.name}::{self.name}"


def pytest_configure(config):
    config.addinivalue_line("markers", "symlayout: a symlayout proof item (a configuration's result)")
    xdist_controller = not hasattr(config, "workerinput") and config.getoption("dist", "no") not in ("no", None)
    if xdist_controller and not config.getoption("--symlayout-no-proofs"):
        prove_ahead(config)
