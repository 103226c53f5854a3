"""``symlayout extract HEADER --type TYPE``: the configuration(s) of a CuTe C++ traits type.

Compiles a small host program against the CUTLASS headers (the ``nvidia-cutlass``
wheel ships them; g++, clang++ or nvcc, whichever is present) that instantiates
the traits type, reads its TiledMma, copy atoms, smem layouts and stage counts
by convention (``--member`` overrides a role) and writes TOML ready for
``symlayout prove``.  Without ``-o`` the TOML goes to standard output.
"""
from __future__ import annotations

import sys

from .common import EXIT_OK, PROG, UsageError

HELP = "write the configuration(s) of a CuTe C++ traits type (compiles it against the CUTLASS headers)"
EXIT_CODES = {EXIT_OK: "written (the summary goes to stderr)",
              2: "bad input: a header or type that does not compile (the compiler's first error), no compiler, "
                 "no CuTe headers, an unknown role"}


def add_arguments(ap) -> None:
    # lazy: the C++ front-end only for 'symlayout extract'; other commands start without it
    from ..frontends.cute_cpp.conventions import PROFILES
    ap.add_argument("header", help="the header that declares the traits type")
    ap.add_argument("--type", required=True, dest="type_expr",
                    help='the traits type, e.g. "Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, cutlass::half_t>"')
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
    ap.add_argument("-o", "--output", help="output file (several documents: FILE_<doc>.toml) or directory")


def _members(items) -> dict:
    out = {}
    for it in items:
        role, sep, name = it.partition("=")
        if not sep or not role:
            raise UsageError(f"--member {it!r}: expected ROLE=NAME")
        out[role.strip()] = name.strip()
    return out


def run(args) -> int:
    # lazy: the C++ front-end only for 'symlayout extract'; other commands start without it
    from ..frontends.cute_cpp import ExtractError, extract
    try:
        arch = None if args.cuda_arch.lower() == "none" else int(args.cuda_arch)
    except ValueError:
        raise UsageError(f"--cuda-arch {args.cuda_arch!r}: expected an SM number such as 80, or none") from None
    try:
        ex = extract(args.header, args.type_expr, args.include, args.profile, _members(args.member), arch,
                     args.defines, args.compiler)
    except ExtractError as e:
        raise UsageError(str(e)) from None
    for d in ex.docs:
        for n in d.notes:
            if n.startswith("not supported"):
                print(f"{PROG} extract: warning: {d.key}: {n}", file=sys.stderr)
    if args.output:
        for p in ex.write(args.output):
            print(p)
    else:
        for i, d in enumerate(ex.docs):
            if len(ex.docs) > 1:
                print(f"# ---- document {d.key!r} ({i + 1} of {len(ex.docs)})")
            print(d.to_toml())
    print(f"{PROG} extract: {len(ex.docs)} configuration(s) from {ex.probe.traits} in {ex.seconds:.1f} s "
          f"({ex.probe.compiler})", file=sys.stderr)
    return EXIT_OK
