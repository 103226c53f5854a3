"""``symlayout dsl FILE.py``: prove the configurations a CuTe DSL script builds.

The file is imported (its directory first on ``sys.path``, as for a script) after
the CuTe DSL (``pip install 'symlayout[dsl]'``).  Its configurations are, in this
order of preference:

1. what ``symlayout_configs()`` (or ``--function NAME``) returns -- a
   :class:`~symlayout.frontends.cute_dsl.DslConfig`, a list of them or a dict ``{key: DslConfig}``;
   the function is called while a ``@cute.jit`` function is being traced
   (:func:`symlayout.frontends.cute_dsl.trace`), so it is plain DSL setup code (it may also be
   a ``@cute.jit`` function itself);
2. otherwise the module's global :class:`~symlayout.frontends.cute_dsl.DslConfig` objects (a
   script that traces when imported).

Each configuration is proved (:meth:`DslConfig.prove`, counterexamples worded with
the DSL's names) and reported as ``symlayout prove`` reports a file, under
``FILE::key``.  Tables the prover does not read yet are named under
``not proved here``.  ``--toml`` prints the configurations instead (what
``symlayout prove`` reads).
"""
from __future__ import annotations

import json
import os
import pathlib
import re
import sys
import time

from .common import EXIT_OK, EXIT_REFUTED, EXIT_UNKNOWN, EXIT_USAGE, Style, UsageError, one_line, \
    positive_seconds, property_name, properties, use_colour
from ..errors import SymlayoutError
from ..prove.engine import ConfigReport
from ..prove.verdict.summary import exit_code
from .prove import format_text, json_document

HELP = "prove the configurations a CuTe DSL script builds (symlayout_configs() or its DslConfig objects)"
DESCRIPTION = """Prove the configurations a CuTe DSL script builds (pip install 'symlayout[dsl]').

FILE.py is imported after the CuTe DSL. Its configurations: what symlayout_configs() (or
--function NAME) returns -- a DslConfig, a list of them or a dict {key: DslConfig} -- called while a
@cute.jit function is being traced; else the module's global DslConfig objects. Each is proved and
reported as 'symlayout prove' reports a file, under FILE::key, counterexamples in the DSL's names;
tables the prover does not read yet are listed under 'not proved here'.

--entry Class.__call__ (or --entry fn) reads a kernel as written, without a wrapper: the class is
built (--init), the entry compiled on fake tensors (--shape, --dtype, --major) and stopped at the
kernel launch; every TiledMma, TiledCopy, smem layout and TMA atom it builds is named by the kernel's
own variables. A result that holds only under a stronger assumption than the front end's default
(e.g. ldA % 16 == 0) is reported as DEPENDS with the --assume that states it; what the kernel states itself
(cute.assume(stride, divby=N)) replaces the default (STATED lines). --package DIST[==VERSION] reads FILE from
that distribution: installed, else its wheel downloaded with pip into ~/.cache/symlayout and unpacked (never
installed). See docs/frontends.md."""
EXIT_CODES = {
    EXIT_OK: "every result as expected (--toml: written); results that depend on an assumption the front end "
             "did not make by default are listed as DEPENDS lines, exit still 0",
    EXIT_REFUTED: "some result not as expected (a property refuted, or vacuous); the UNMET lines name each",
    EXIT_USAGE: "bad input: the DSL not installed, a file that does not import or trace (FILE:LINE: the error), "
                "no DslConfig found, an operation symlayout does not model ('not supported: <op>')",
    EXIT_UNKNOWN: "some result unknown (e.g. a solver timeout) and none unmet",
}

FUNCTION = "symlayout_configs"
#: --arch choices (symlayout.frontends.dsl_entry.ARCHS; not imported here: the CLI starts without the front end)
ARCHS = ("sm_80", "sm_86", "sm_89", "sm_90a", "sm_100a")


def add_arguments(sp) -> None:
    sp.add_argument("file", metavar="FILE.py", help="a Python file that builds CuTe DSL objects")
    sp.add_argument("--function", default=None, metavar="NAME",
                    help=f"the function that returns the DslConfig objects (default: {FUNCTION}, if defined)")
    sp.add_argument("--entry", default=None, metavar="CLASS.METHOD|FN",
                    help="trace the kernel's own host code: construct CLASS (--init), compile METHOD (or the "
                         "function FN) on fake tensors and read what it builds, stopping at the kernel launch")
    sp.add_argument("--shape", default=None, metavar="M=..,N=..,K=..[,L=..]", help="--entry: the problem size")
    sp.add_argument("--dtype", default="f16", metavar="T|A=T,B=T,C=T",
                    help="--entry: element types of the fake tensors (f16, bf16, f32, tf32, e4m3, e5m2, i8; "
                         "default f16)")
    sp.add_argument("--major", default=None, metavar="A=K|M,B=K|N,C=N|M",
                    help="--entry: the contiguous mode of each tensor (default A=K,B=K,C=N)")
    sp.add_argument("--tensor", action="append", default=[], metavar="NAME=DIM,...[:TYPE][@ORDER]",
                    help="--entry: a tensor parameter's modes (names of --shape or numbers), row-major or in CuTe's "
                         "stride_order ORDER (0 = contiguous), and its element type if not --dtype's, e.g. "
                         "mQ=B,S,H,D, mLSE=B,H,S:f32 or q=S,D,HR,HK,B@3,0,1,2,4 (repeatable; default by name: A (M,K,L), B (N,K,L), C (M,N,L))")
    sp.add_argument("--init", default=None, metavar="K=V,...", help="--entry: constructor keyword arguments")
    sp.add_argument("--arg", default=None, metavar="K=V,...",
                    help="--entry: other entry arguments (as --init: Python literals, DSL types, names or "
                         "expressions of the kernel's module)")
    sp.add_argument("--package", action="append", default=[], metavar="DIST[==VERSION]",
                    help="FILE is a path inside this distribution (quack-kernels==0.6.5 quack/rmsnorm.py): the "
                         "installed one, else its wheel of VERSION downloaded with pip into ~/.cache/symlayout and "
                         "unpacked (not installed, not run); repeatable: every package's directory goes on "
                         "sys.path, FILE is looked for in the first")
    sp.add_argument("--path", action="append", default=[], metavar="DIR",
                    help="--entry: a directory to put on sys.path for the kernel's imports (repeatable), e.g. the "
                         "checkout that holds a package the kernel imports (quack); the root of the kernel's own "
                         "package is found from its imports")
    sp.add_argument("--arch", default=None, choices=sorted(ARCHS),
                    help="the DSL's target (CUTE_DSL_ARCH; default: from the entry's name (GemmSm90 -> sm_90a), else "
                         "from the source: tcgen05 -> sm_100a, warpgroup/TMA -> sm_90a, else sm_80)")
    sp.add_argument("--stub-module", action="append", default=None, metavar="NAME",
                    help="answer 'import NAME' with a stub module (repeatable; default: torch when it is not "
                         "installed); 'none' turns the default off")
    sp.add_argument("--stub-missing", action="store_true",
                    help="answer the import of every module that is not installed with a stub (a kernel "
                         "package's host-side dependencies: einops, triton, tvm_ffi); a note names them")
    sp.add_argument("--assume", action="append", default=[], metavar="NAME%N==0",
                    help="state what the kernel's callers guarantee of a parameter, e.g. ldA%%16==0 (repeatable); a "
                         "result that holds only under such an unstated assumption is reported as 'depends on "
                         "assumption'")
    sp.add_argument("--toml", action="store_true", help="print the configurations as TOML instead of proving them")
    sp.add_argument("-o", "--output", default=None, metavar="FILE|DIR",
                    help="write the configurations instead of proving them, one file each (what 'symlayout prove' "
                         "reads): FILE itself for one, FILE_<key>.toml for several, DIR/<name>_<key>.toml")
    sp.add_argument("--json", action="store_true", help="print one JSON document (as symlayout prove --json)")
    sp.add_argument("-q", "--quiet", action="store_true",
                    help="print only refutations, unmet expectations and errors (and the summary)")
    sp.add_argument("--method", choices=("auto", "exhaustive", "z3"), default="auto",
                    help="decide by exhaustive evaluation (auto) or with Z3")
    sp.add_argument("--timeout", type=positive_seconds, default=None, metavar="S", help="per-property timeout in seconds")
    sp.add_argument("--property", dest="property", action="append", type=property_name, default=None,
                    metavar="P", help="prove only this property (repeatable): " + ", ".join(properties()))
    sp.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                    help="colour the verdicts (auto: on a terminal, unless NO_COLOR is set)")


# ---------------------------------------------------------------- the user's file


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _dsl_message(text: str) -> str:
    """The DSL's diagnostic on one line: its error and suggestion, without the source excerpt it draws
    (``--> file:line`` and the caret lines; the line is given in front); the target is ``--arch``."""
    lines = text.strip().splitlines()
    head = [ln.strip() for ln in lines if ln.strip() and not ln.lstrip().startswith(("-->", "|"))
            and not re.match(r"\s*\d+\s*\|", ln)]
    msg = one_line(" ".join(head))
    return msg.replace("Ensure env CUTE_DSL_ARCH matches your GPU architecture",
                       "choose the target with --arch (CUTE_DSL_ARCH)")


def _user_error(path: str, shown: str, exc: BaseException) -> UsageError:
    """``FILE:LINE: <error>`` -- the line of ``path`` (shown as ``shown``) deepest in the traceback."""
    line = exc.lineno if isinstance(exc, SyntaxError) and exc.filename == path else None
    tb = exc.__traceback__
    while tb is not None:
        if os.path.abspath(tb.tb_frame.f_code.co_filename) == path:
            line = tb.tb_lineno
        tb = tb.tb_next
    kind = "" if isinstance(exc, SymlayoutError) else f"{type(exc).__name__}: "
    msg = _dsl_message(_ANSI.sub("", str(exc))) if str(exc).strip() else type(exc).__name__
    if "CALL_OUTSIDE_JIT" in msg:
        msg = f"DSL objects exist only at trace time: build them in {FUNCTION}() -- {msg}"
    where = f"{shown}:{line}" if line else shown
    return UsageError(f"{where}: {kind}{msg[:400]}")


def _import(path: str, shown: str):
    import importlib.util
    name = "symlayout_dsl_" + re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise UsageError(f"{shown}: not a Python file")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    sys.path.insert(0, os.path.dirname(path))
    try:
        spec.loader.exec_module(mod)
    except Exception as e:  # noqa: BLE001 (the user's code: reported with its line)
        raise _user_error(path, shown, e) from None
    finally:
        if os.path.dirname(path) in sys.path:
            sys.path.remove(os.path.dirname(path))
    return mod


def _named(value, what: str) -> list:
    """``[(key, DslConfig)]`` from a DslConfig, a list/tuple or a dict of them."""
    # lazy: the DSL front-end only for 'symlayout dsl'; other commands start without it
    from ..frontends.cute_dsl import DslConfig
    if isinstance(value, DslConfig):
        return [("", value)]
    if isinstance(value, dict):
        items = [(str(k), v) for k, v in value.items()]
    elif isinstance(value, (list, tuple)):
        items = [(str(i), v) for i, v in enumerate(value)]
    else:
        raise UsageError(f"{what} returned {type(value).__name__}: expected DslConfig objects (one, a list or a dict)")
    bad = [k for k, v in items if not isinstance(v, DslConfig)]
    if bad:
        raise UsageError(f"{what}: entry {bad[0]} is {type(dict(items)[bad[0]]).__name__}, not a DslConfig")
    return items


def _write(items, shown: str, out: str) -> list:
    """Write each configuration to its own file (a ``--toml`` stream holds several documents, which
    ``symlayout prove`` does not read as one file)."""
    p = pathlib.Path(out)
    keys = [key or str(i) for i, (key, _) in enumerate(items)]
    if p.is_dir():
        stem = pathlib.Path(shown).stem
        paths = [p / f"{stem}_{k}.toml" if len(items) > 1 else p / f"{stem}.toml" for k in keys]
    else:
        paths = [p] if len(items) == 1 else [p.with_name(f"{p.stem}_{k}{p.suffix or '.toml'}") for k in keys]
    for path, (_, cfg) in zip(paths, items):
        try:
            path.write_text(cfg.toml())
        except OSError as e:
            raise UsageError(f"-o {out}: {path}: {e.strerror}") from None
    return paths


def _apply_assumptions(items, given) -> None:
    """``--assume NAME%N==0``: the parameter's ``multiple_of`` in every configuration that has it."""
    for a in given or ():
        m = re.fullmatch(r"\s*([A-Za-z_]\w*)\s*%\s*(\d+)\s*==\s*0\s*", a)
        if not m or int(m.group(2)) < 1:
            raise UsageError(f"--assume {a!r}: expected NAME%N==0, e.g. ldA%16==0")
        name, n = m.group(1), int(m.group(2))
        having = [cfg for _, cfg in items if name in cfg.doc.params]
        if not having:
            known = sorted({p for _, cfg in items for p in cfg.doc.params})
            raise UsageError(f"--assume {a}: no parameter {name} (the parameters: {', '.join(known) or 'none'})")
        for cfg in having:
            cfg.assume(name, n)


def _stub_names(given) -> list:
    """The modules to stub: those given, and torch when it is not installed (``none``: none)."""
    # lazy: the DSL front-end only for 'symlayout dsl'; other commands start without it
    from ..frontends.stubs import missing
    given = list(given or ())
    if [g.lower() for g in given] == ["none"]:
        return []
    return given + (["torch"] if missing("torch") and "torch" not in given else [])


def _note_stubs(names) -> None:
    """Say which stub modules the kernel's file imported (on stderr)."""
    for n in names:
        if getattr(sys.modules.get(n), "__symlayout_stub__", False):
            print(f"symlayout dsl: note: {n} is {'not installed' if n == 'torch' else 'stubbed'}: the kernel's "
                  f"'import {n}' got a stub module (--stub-module; docs/frontends.md)", file=sys.stderr)


def _entry_spec(args):
    """The :class:`EntrySpec` of the command line (``--entry`` and its options)."""
    # lazy: the DSL front-end only for 'symlayout dsl'; other commands start without it
    from ..frontends.dsl_entry import EntrySpec, parse_assignments
    shape = {k.upper(): v for k, v in parse_assignments(args.shape, "--shape").items()}
    bad = [k for k, v in shape.items() if not v.isdigit() or int(v) < 1]
    if bad:
        raise UsageError(f"--shape {bad[0]}={shape[bad[0]]}: expected a positive integer")
    dt = args.dtype or "f16"
    dtypes = {k.upper(): v for k, v in parse_assignments(dt, "--dtype").items()} if "=" in dt else {"*": dt}
    majors = {k.upper(): v.upper() for k, v in parse_assignments(args.major, "--major").items()}
    tensors = {}
    for t in args.tensor:
        k, sep, v = t.partition("=")
        if not sep or not k.strip() or not v.strip():
            raise UsageError(f"--tensor {t!r}: expected NAME=DIM,DIM,... (e.g. mQ=B,S,H,D)")
        tensors[k.strip()] = v.strip()
    return EntrySpec(args.entry, shape=shape, dtypes=dtypes, majors=majors, tensors=tensors,
                     init=parse_assignments(args.init, "--init"), args=parse_assignments(args.arg, "--arg"))


def load_entry_configs(path: str, args) -> list:
    """``[(key, DslConfig)]`` of the kernel ``path`` traced from ``--entry`` (no wrapper)."""
    # lazy: the DSL front-end only for 'symlayout dsl'; other commands start without it
    from ..frontends.cute_dsl import DslError, import_dsl
    # lazy: as above
    from ..frontends.dsl_entry import entry_arch, guess_arch, set_arch
    shown, path = path, os.path.abspath(path)
    if not os.path.isfile(path):
        raise UsageError(f"{shown}: no such file")
    with open(path, encoding="utf-8", errors="replace") as f:
        arch = args.arch or entry_arch(args.entry) or guess_arch(f.read())
    try:
        import_dsl()   # before the stubs: the DSL's own optional imports (torch) see what is installed
    except DslError as e:
        raise UsageError(str(e)) from None
    before, path_before = set_arch(arch), list(sys.path)
    try:
        return _trace_entry_file(path, shown, args)
    finally:
        set_arch(before)
        sys.path[:] = path_before     # the kernel's package roots and --path (they stay while it traces)


def _trace_entry_file(path: str, shown: str, args) -> list:
    """:func:`load_entry_configs` once the DSL is imported and its target set."""
    # lazy: the DSL front-end only for 'symlayout dsl'; other commands start without it
    from ..frontends.cute_dsl import DslError
    # lazy: as above
    from ..frontends.dsl_entry import load_module, trace_entry
    # lazy: as above
    from ..frontends.stubs import install, install_missing, uninstall_missing
    stubs = _stub_names(args.stub_module)
    undo = install(stubs)
    anything = install_missing() if args.stub_missing else None
    try:
        spec = _entry_spec(args)
        try:
            mod = load_module(path, shown, [p for d in args.path for p in d.split(os.pathsep) if p])
        except DslError:
            raise
        except Exception as e:  # noqa: BLE001 (the user's code: reported with its line)
            raise _user_error(path, shown, e) from None
        _note_stubs(stubs)
        if anything is not None and anything.stubbed:
            print(f"symlayout dsl: note: not installed, stubbed (--stub-missing): {', '.join(anything.stubbed)}",
                  file=sys.stderr)
        try:
            return trace_entry(mod, path, spec, shown)
        except DslError:
            raise
        except Exception as e:  # noqa: BLE001 (the user's code: reported with its line)
            inner = _wrapped(e, DslError)
            if inner is not None:
                raise inner from None
            raise _user_error(path, shown, e) from None
    except DslError as e:
        raise UsageError(one_line(str(e))) from None
    finally:
        undo()
        if anything is not None:
            uninstall_missing(anything)


def _wrapped(exc, cls):
    """An exception of type ``cls`` that ``exc`` wraps (the DSL wraps errors raised while it traces)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, cls):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def load_dsl_configs(path: str, function: str | None = None) -> list:
    """``[(key, DslConfig)]`` of the CuTe DSL file ``path`` (see the module's docstring)."""
    # lazy: the DSL front-end only for 'symlayout dsl'; other commands start without it
    from ..frontends.cute_dsl import DslConfig, DslError, import_dsl, trace
    try:
        import_dsl()
    except DslError as e:
        raise UsageError(str(e)) from None
    shown, path = path, os.path.abspath(path)
    if not os.path.isfile(path):
        raise UsageError(f"{shown}: no such file")
    mod = _import(path, shown)
    name = function or (FUNCTION if hasattr(mod, FUNCTION) else None)
    if name is not None:
        fn = getattr(mod, name, None)
        if not callable(fn):
            raise UsageError(f"{shown}: no function {name}()")
        try:
            value = trace(fn)
        except UsageError:
            raise
        except Exception as e:  # noqa: BLE001 (the user's code: reported with its line)
            raise _user_error(path, shown, e) from None
        items = _named(value, f"{shown}: {name}()")
    else:
        items = [(k, v) for k, v in vars(mod).items() if isinstance(v, DslConfig)]
    if not items:
        raise UsageError(f"{shown}: no DslConfig found: define {FUNCTION}() returning DslConfig objects "
                         "(see 'symlayout dsl --help')")
    return items


# ---------------------------------------------------------------- proving


def prove_dsl(path: str, items, properties=None, method: str = "auto", timeout_s=None) -> list:
    """``[(ConfigReport, DslReport)]``: each configuration proved, reported under ``path::key``."""
    out = []
    for key, cfg in items:
        t0 = time.perf_counter()
        rep = cfg.prove(properties, method=method, timeout_s=timeout_s, name_assumptions=True)
        where = f"{path}::{key}" if key else path
        out.append((ConfigReport(where, cfg.name, results=rep.results, error=rep.error,
                                 seconds=time.perf_counter() - t0), rep))
    return out


def _resolve_packages(args) -> None:
    """``--package``: ``args.file`` becomes the kernel file inside the first distribution, and every
    distribution's directory joins ``args.path`` (a note on stderr says where each came from)."""
    if not args.package:
        return
    # lazy: the DSL front-end only for 'symlayout dsl'; other commands start without it
    from ..frontends.kernels import KernelNotFound, locate, package_root, parse_package
    try:
        specs = [parse_package(p) for p in args.package]
    except ValueError as e:
        raise UsageError(f"--package {e}") from None
    try:
        found = locate(specs[0], args.file)
        roots = [(specs[0], found.root, found.source)] + [(s, *package_root(s)) for s in specs[1:]]
    except KernelNotFound as e:
        raise UsageError(f"--package {one_line(str(e))}") from None
    for spec, root, source in roots:
        print(f"symlayout dsl: note: {spec}: {source} ({root})", file=sys.stderr)
    args.file = str(found.path)
    args.path = [str(r) for _, r, _ in roots] + list(args.path)


def run(args) -> int:
    t0 = time.perf_counter()
    _resolve_packages(args)
    shown = args.file
    if args.entry:
        items = load_entry_configs(args.file, args)
    else:
        items = load_dsl_configs(args.file, args.function)
    _apply_assumptions(items, args.assume)
    if args.output:
        for p in _write(items, args.file, args.output):
            print(p)
        return EXIT_OK
    if args.toml:
        for i, (key, cfg) in enumerate(items):
            print(f"# ---- {shown}{'::' + key if key else ''} ({i + 1} of {len(items)})")
            print(cfg.toml())
        return EXIT_OK
    pairs = prove_dsl(shown, items, args.property or None, args.method, args.timeout)
    reports = [r for r, _ in pairs]
    code = exit_code(reports)
    if args.json:
        doc = json_document(reports)
        for entry, (_, rep) in zip(doc["configs"], pairs):
            entry["dsl"] = {"version": rep.version, "not_proved_here": list(rep.left_out),
                            "depends_on_assumption": list(rep.depends)}
        for entry, (_, cfg) in zip(doc["configs"], items):
            entry["dsl"]["stated_by_kernel"] = list(cfg.stated)
        print(json.dumps(doc, indent=1))
        return code
    style = Style(use_colour(sys.stdout, args.color))
    print(format_text(reports, quiet=args.quiet, style=style))
    for r, rep in pairs:
        if rep.left_out and args.quiet:
            print(f"{r.path}: version {rep.version} proved; {len(rep.left_out)} parts not proved here "
                  "(without -q: which)")
        elif rep.left_out:
            print(f"{r.path}: version {rep.version} of the configuration proved; not proved here:")
            for x in rep.left_out:
                print(f"  {x}")
    for (r, _), (_, cfg) in zip(pairs, items):
        for x in cfg.stated:
            print(f"STATED   {r.path}: {x}")
    for r, rep in pairs:
        for x in rep.depends:
            print(f"DEPENDS  {r.path}: {x}")
    print(f"# {len(reports)} configuration(s) from {shown} in {time.perf_counter() - t0:.2f} s, exit {code}")
    return code
