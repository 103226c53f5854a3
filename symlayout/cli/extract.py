"""``symlayout extract HEADER --type TYPE``: the configuration(s) of a CuTe C++ traits type.

Compiles a small host program against the CUTLASS headers (the ``nvidia-cutlass``
wheel ships them; g++, clang++ or nvcc, whichever is present) that instantiates
the traits type, reads its TiledMma, copy atoms, smem layouts and stage counts
by convention (``--member`` overrides a role) and writes TOML ready for
``symlayout prove``.  Without ``-o`` the TOML goes to standard output.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

from .common import EXIT_OK, PROG, UsageError

HELP = ("write the configuration(s) of CuTe C++ traits types (compiles them against the CUTLASS headers of "
        "the nvidia-cutlass package: pip install nvidia-cutlass, or SYMLAYOUT_CUTE_SITE, or -I)")
EXIT_CODES = {EXIT_OK: "written (the summary goes to stderr)",
              2: "bad input: a header or type that does not compile (the compiler's first error), no compiler, "
                 "no CuTe headers, an unknown role"}


def add_arguments(ap) -> None:
    # lazy: the C++ front-end only for 'symlayout extract'; other commands start without it
    from ..frontends.cute_cpp.conventions import PROFILES
    ap.add_argument("header", help="the header that declares the traits type")
    ap.add_argument("--type", action="append", default=[], dest="type_expr", metavar="TYPE",
                    help='the traits type, e.g. "Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, '
                         'cutlass::half_t>" (repeatable: several types of the header in one run)')
    ap.add_argument("--types-from", default=None, metavar="FILE",
                    help="a file listing traits types, one per line ('#' starts a comment)")
    ap.add_argument("-I", dest="include", action="append", default=[], metavar="DIR",
                    help="include directory (before the CUTLASS headers found from the nvidia-cutlass package)")
    ap.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VALUE]", help="preprocessor define")
    ap.add_argument("--member", action="append", default=[], metavar="[DOC:]ROLE=NAME",
                    help="which member plays a role: mma, stages, accum, X.smem, X.copy, X.g2s, X.stride (X = A, B, C); "
                         "NAME^T for a copy of the transposed tile; an empty NAME drops the role")
    ap.add_argument("--profile", choices=sorted(PROFILES), help="naming convention (default: detected)")
    ap.add_argument("--cuda-arch", default="80", metavar="SM|none",
                    help="__CUDA_ARCH__/10 that the header's own text sees (default 80; 'none' leaves it unset)")
    ap.add_argument("--compiler", help="C++ compiler (default: $CXX, g++, clang++ or nvcc, whichever is present)")
    ap.add_argument("--assume", action="append", default=[], metavar="NAME%N==0",
                    help="state what the kernel's callers guarantee of a parameter, e.g. ldA%%16==0 (written as its "
                         "multiple_of; repeatable)")
    ap.add_argument("--no-check", action="store_true",
                    help="skip the check that names results holding only under a stronger assumption than the "
                         "extractor's default leading dimension (DEPENDS lines on stderr)")
    ap.add_argument("-o", "--output", help="output file (several documents: FILE_<doc>.toml) or directory")


def _members(items) -> dict:
    out = {}
    for it in items:
        role, sep, name = it.partition("=")
        if not sep or not role:
            raise UsageError(f"--member {it!r}: expected ROLE=NAME")
        out[role.strip()] = name.strip()
    return out


def _types(args) -> list:
    """The traits types: every ``--type``, then the lines of ``--types-from``."""
    types = list(args.type_expr)
    if args.types_from:
        try:
            with open(args.types_from, encoding="utf-8") as f:
                lines = f.read().splitlines()
        except OSError as e:
            raise UsageError(f"--types-from {args.types_from}: {e.strerror}") from None
        types += [t for t in (ln.split("#", 1)[0].strip() for ln in lines) if t]
    if not types:
        raise UsageError("no traits type: give --type TYPE (repeatable) or --types-from FILE")
    return types


def _target(out: str, i: int, n: int) -> Path:
    """Where the documents of the ``i``-th of ``n`` types go (``-o``): ``out`` for one type; else
    ``<out>_<i>.toml`` (or ``type<i>.toml`` inside a directory), each document keyed after it."""
    p = Path(out)
    if n == 1:
        return p
    return p / f"type{i + 1}.toml" if p.is_dir() else p.with_name(f"{p.stem}_{i + 1}{p.suffix or '.toml'}")


def _apply_assumptions(docs, given) -> None:
    """``--assume NAME%N==0``: the parameter's ``multiple_of`` in every document that has it."""
    # lazy: the front end only for 'symlayout extract'
    from ..frontends.assumptions import parse_assume
    for a in given:
        parsed = parse_assume(a)
        if parsed is None:
            raise UsageError(f"--assume {a!r}: expected NAME%N==0, e.g. ldA%16==0")
        name, n = parsed
        having = [d for d in docs if name in d.params]
        if not having:
            known = sorted({p for d in docs for p in d.params})
            raise UsageError(f"--assume {a}: no parameter {name} (the parameters: {', '.join(known) or 'none'})")
        for d in having:
            d.params[name] = dict(d.params[name], multiple_of=n)
            d.table_comments.setdefault("params", []).append(f"{name} % {n} == 0: stated (--assume {a})")


def _name_dependencies(docs, type_expr) -> None:
    """Prove each document; a result refuted only under the extractor's default leading dimension
    (a multiple of the copy's vector) but proved under a stronger one is named on stderr, with the
    ``--assume`` that states it, and in a comment of ``[params]`` (the file itself states only what
    the traits say: ``symlayout prove`` of it refutes the property until the assumption is stated)."""
    # lazy: the front end and the prover only for 'symlayout extract'
    from ..config import loads_config
    # lazy: as above
    from ..errors import SymlayoutError
    # lazy: as above
    from ..frontends.assumptions import default_assumptions, under_stronger
    # lazy: as above
    from ..prove.engine import prove_config
    for d in docs:
        assumed = {p: b for p, b in default_assumptions(d).items()
                   if not any(c.startswith(f"{p} % ") for c in d.table_comments.get("params", []))}
        if not assumed:
            continue
        try:
            rep = prove_config(loads_config(d.to_toml(), path="<extract>"))
        except SymlayoutError:
            continue   # 'symlayout prove' of the file says what is wrong with it
        for r in rep.results:
            if r.status != "refuted" or r.expected == "refuted":
                continue
            found = under_stronger(d, assumed, r)
            if found is not None:
                where = f"{type_expr}: {d.key}" if type_expr else d.key
                print(f"{PROG} extract: DEPENDS {where}: {found[1]}", file=sys.stderr)
                prop, p, m = re.match(r"(.*?): (\w+) % (\d+) == 0", found[1]).groups()
                d.table_comments.setdefault("params", []).append(
                    f"{prop} holds only if {p} % {m} == 0: state it (multiple_of = {m} here, or symlayout extract "
                    f"--assume {p}%{m}==0)")


def run(args) -> int:
    # lazy: the C++ front-end only for 'symlayout extract'; other commands start without it
    from ..frontends.cute_cpp import ExtractError, extract
    try:
        arch = None if args.cuda_arch.lower() == "none" else int(args.cuda_arch)
    except ValueError:
        raise UsageError(f"--cuda-arch {args.cuda_arch!r}: expected an SM number such as 80, or none") from None
    types, members = _types(args), _members(args.member)
    for t_i, type_expr in enumerate(types):
        try:
            ex = extract(args.header, type_expr, args.include, args.profile, members, arch, args.defines, args.compiler)
        except ExtractError as e:
            raise UsageError(str(e) if len(types) == 1 else f"--type {type_expr!r}: {e}") from None
        _apply_assumptions(ex.docs, args.assume)
        if not args.no_check:
            _name_dependencies(ex.docs, type_expr if len(types) > 1 else None)
        for d in ex.docs:
            for n in d.notes:
                if n.startswith("not supported"):
                    print(f"{PROG} extract: warning: {d.key}: {n}", file=sys.stderr)
        if args.output:
            for p in ex.write(_target(args.output, t_i, len(types))):
                print(p)
        else:
            for i, d in enumerate(ex.docs):
                if len(ex.docs) > 1 or len(types) > 1:
                    print(f"# ---- {type_expr}: document {d.key!r} ({i + 1} of {len(ex.docs)})")
                print(d.to_toml())
        print(f"{PROG} extract: {len(ex.docs)} configuration(s) from {ex.probe.traits} in {ex.seconds:.1f} s "
              f"({ex.probe.compiler})", file=sys.stderr)
    return EXIT_OK
