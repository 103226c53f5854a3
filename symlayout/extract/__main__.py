"""``python -m symlayout.extract HEADER --type TYPE``: write the configuration(s) of a CuTe C++ traits type.

Exit codes: 0 written; 2 bad input (a header or type that does not compile --
the message is the compiler's first error --, no compiler, no CuTe headers, an
unknown role); 4 internal error.  Without ``-o`` the TOML goes to standard output.

The main CLI gains ``symlayout extract`` with these arguments when it is wired in
(see ``docs/frontends.md``).
"""
from __future__ import annotations

import argparse
import sys

from . import ExtractError, extract
from .conventions import PROFILES

EXIT_OK, EXIT_INPUT, EXIT_INTERNAL = 0, 2, 4


def build_parser(prog: str = "symlayout extract") -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog=prog, description="Write the symlayout configuration(s) of a CuTe C++ traits type.")
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
    return ap


def _members(items) -> dict:
    out = {}
    for it in items:
        role, sep, name = it.partition("=")
        if not sep or not role:
            raise ExtractError(f"--member {it!r}: expected ROLE=NAME")
        out[role.strip()] = name.strip()
    return out


def main(argv=None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    try:
        arch = None if args.cuda_arch.lower() == "none" else int(args.cuda_arch)
    except ValueError:
        print(f"symlayout extract: error: --cuda-arch {args.cuda_arch!r}: expected an SM number such as 80, or none",
              file=sys.stderr)
        return EXIT_INPUT
    try:
        ex = extract(args.header, args.type_expr, args.include, args.profile, _members(args.member), arch,
                     args.defines, args.compiler)
    except ExtractError as e:
        print(f"symlayout extract: error: {e}", file=sys.stderr)
        return EXIT_INPUT
    except Exception as e:  # noqa: BLE001 - report, never a traceback
        print(f"symlayout extract: internal error: {type(e).__name__}: {' '.join(str(e).split())}", file=sys.stderr)
        return EXIT_INTERNAL
    for d in ex.docs:
        for n in d.notes:
            if n.startswith("not supported"):
                print(f"symlayout extract: warning: {d.key}: {n}", file=sys.stderr)
    if args.output:
        for p in ex.write(args.output):
            print(p)
    else:
        for i, d in enumerate(ex.docs):
            if len(ex.docs) > 1:
                print(f"# ---- document {d.key!r} ({i + 1} of {len(ex.docs)})")
            print(d.to_toml())
    print(f"symlayout extract: {len(ex.docs)} configuration(s) from {ex.probe.traits} in {ex.seconds:.1f} s "
          f"({ex.probe.compiler})", file=sys.stderr)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
