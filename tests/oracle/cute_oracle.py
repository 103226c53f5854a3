"""CuTe C++ oracle for whole configurations: a batch of configurations -> one host-only C++ program.

Each configuration (a dict, see :func:`case_toml` for its keys) becomes one function ``case_N()`` that builds
the real CuTe objects and calls ``oracle::run_case`` (``oracle.hpp``: CuTe partitions, the real
``cute::copy`` dispatch captured by a recording op, the PTX ldmatrix/stmatrix/vector routes written
independently in C++).  The program prints one ``VERDICT {json}`` line per configuration.  A configuration
CuTe refuses to compile is attributed from g++'s instantiation backtrace and compiled alone to read its
``static_assert`` text: its result is ``{"rejected": "<text>"}``.

Nothing here uses symlayout: layouts are read by the small parser below, so that a parser bug in
symlayout cannot make the oracle check a different configuration than the one symlayout checks.

Headers: ``$SYMLAYOUT_CUTE_SITE`` (a ``pip install --target`` directory holding ``nvidia-cutlass`` and the
``nvidia-cuda-{runtime,cccl,nvcc}-cu12`` header wheels) or the importable packages; :func:`include_dirs`
returns ``None`` when they (or ``g++``) are missing, and the tests skip.
"""
from __future__ import annotations

import concurrent.futures as cf
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PRELUDE = HERE / "oracle.hpp"
PROPERTIES = ("coverage", "alignment", "exactly_once", "slot_agreement", "bank_conflicts", "in_bounds",
              "type_agreement")


# ---------------------------------------------------------------- headers and compiler


def _site_dirs():
    env = os.environ.get("SYMLAYOUT_CUTE_SITE")
    if env:
        yield Path(env)
    for p in sys.path:
        if p and Path(p).is_dir():
            yield Path(p)


def include_dirs():
    """``[cutlass include, cuda_runtime, cuda_cccl, cuda_nvcc]`` include directories, or None."""
    if shutil.which("g++") is None:
        return None
    found = {}
    subs = {"cute": "cutlass_library/source/include", "rt": "nvidia/cuda_runtime/include",
            "cccl": "nvidia/cuda_cccl/include", "nvcc": "nvidia/cuda_nvcc/include"}
    for site in _site_dirs():
        for k, sub in subs.items():
            if k not in found and (site / sub).is_dir():
                found[k] = str(site / sub)
    if "cute" not in found or "rt" not in found:
        return None
    return [found[k] for k in ("cute", "rt", "cccl", "nvcc") if k in found]


def cute_version(incs) -> str:
    """CUTLASS version from ``cutlass/version.h`` (e.g. ``4.2.0``)."""
    text = Path(incs[0], "cutlass", "version.h").read_text()
    parts = [re.search(rf"#define CUTLASS_{k} (\d+)", text).group(1) for k in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(parts)


# ---------------------------------------------------------------- notation -> C++


_TOKEN = re.compile(r"\s*(Sw<\s*-?\d+\s*,\s*-?\d+\s*,\s*-?\d+\s*>|_|-?_?\d+|[(),:]|\bo\b)")


def _tokens(s: str):
    pos, out = 0, []
    s = s.strip()
    while pos < len(s):
        m = _TOKEN.match(s, pos)
        if not m:
            raise ValueError(f"cannot read {s!r} at {pos}")
        out.append(m.group(1))
        pos = m.end()
    return out


def _tuple(toks, i):
    t = toks[i]
    if t == "(":
        items, i = [], i + 1
        while toks[i] != ")":
            v, i = _tuple(toks, i)
            items.append(v)
            if toks[i] == ",":
                i += 1
        return tuple(items), i + 1
    if t == "_":
        return "_", i + 1
    return int(t.replace("_", "")), i + 1


def parse(s: str):
    """``"(8,(2,2)):(2,(1,16))"`` -> ``("layout", shape, stride)``; ``"(2,2,1)"`` -> ``("shape", shape)``;
    ``"Sw<3,3,3> o 16 o L"`` -> ``("composed", (3,3,3), 16, layout)``; ``"_"`` -> ``("_",)``."""
    toks = _tokens(s)
    if toks[0].startswith("Sw<"):
        bms = tuple(int(x) for x in re.findall(r"-?\d+", toks[0]))
        assert toks[1] == "o", s
        rest = toks[2:]
        off = 0
        if len(rest) > 2 and rest[1] == "o":
            off = int(rest[0].replace("_", ""))
            rest = rest[2:]
        return ("composed", bms, off, _parse_layout(rest, s))
    if toks == ["_"]:
        return ("_",)
    return _parse_layout(toks, s)


def _parse_layout(toks, s):
    shape, i = _tuple(toks, 0)
    if i == len(toks):
        return ("shape", shape)
    assert toks[i] == ":", s
    stride, j = _tuple(toks, i + 1)
    assert j == len(toks), s
    return ("layout", shape, stride)


def _cpp_tuple(t, kind: str) -> str:
    if isinstance(t, int):
        return f"Int<{t}>"
    return f"{kind}<" + ",".join(_cpp_tuple(e, kind) for e in t) + ">"


def cpp_layout_type(p) -> str:
    if p[0] == "shape":
        return f"Layout<{_cpp_tuple(p[1], 'Shape')}>"
    return f"Layout<{_cpp_tuple(p[1], 'Shape')},{_cpp_tuple(p[2], 'Stride')}>"


def cpp_layout(s: str) -> str:
    """A C++ expression for the layout written ``s`` (swizzles: ``composition(Swizzle, offset, layout)``)."""
    p = parse(s)
    if p[0] == "composed":
        b, m, sh = p[1]
        return f"composition(Swizzle<{b},{m},{sh}>{{}}, Int<{p[2]}>{{}}, {cpp_layout_type(p[3])}{{}})"
    return f"{cpp_layout_type(p)}{{}}"


def cpp_permutation(perm) -> str:
    if not perm:
        return "Tile<Underscore,Underscore,Underscore>{}"
    ents = []
    for e in perm:
        p = parse(str(e))
        if p[0] == "_":
            ents.append("Underscore")
        elif p[0] == "shape" and isinstance(p[1], int):
            ents.append(f"Int<{p[1]}>")
        else:
            ents.append(cpp_layout_type(p))
    return "Tile<" + ",".join(ents) + ">{}"


_CPP_TYPES = {"half_t": "half_t", "bfloat16_t": "bfloat16_t", "tfloat32_t": "tfloat32_t", "float": "float",
              "double": "double", "int8_t": "int8_t", "uint8_t": "uint8_t", "int16_t": "int16_t",
              "uint16_t": "uint16_t", "int32_t": "int32_t", "uint32_t": "uint32_t",
              "float_e4m3_t": "float_e4m3_t", "float_e5m2_t": "float_e5m2_t"}


def copy_op_cpp(name: str):
    """``(C++ op type, route kind, matrices, transposed)`` of a copy op name.

    ldmatrix/stmatrix: ``SM75_U32x{1,2,4}_LDSM_N`` (.x1/.x2/.x4), ``SM75_U16x{2,4,8}_LDSM_T`` (.x1/.x2/.x4
    .trans), likewise ``SM90_..._STSM_N/T``; everything else is a per-thread vector copy.
    """
    m = re.fullmatch(r"SM(75|90)_U(32|16)x(\d)_(LDSM|STSM)_(N|T)", name)
    if m:
        regs = int(m.group(3))
        num = regs if m.group(2) == "32" else regs // 2
        kind = "oracle::LDSM" if m.group(4) == "LDSM" else "oracle::STSM"
        return f"oracle::Rec<{name}>", kind, num, m.group(5) == "T"
    if name.startswith("AutoVectorizingCopy") or name == "DefaultCopy":
        return name, "oracle::VEC", 1, False                   # recorded at CuTe's element-wise copy_if
    return f"oracle::Rec<{name}>", "oracle::VEC", 1, False


def case_cpp(case: dict, fn: str) -> str:
    """The C++ function ``fn`` checking one configuration."""
    mma, cp = case["mma"], case["copy"]
    op = "ABC".index(case["operand"])
    layout = mma.get("layout") or "(1,1,1)"
    lay = parse(layout)
    op_t, kind, num, trans = copy_op_cpp(cp["atom"])
    vt = _CPP_TYPES[cp["type"]]
    return (f"void {fn}() {{  // {case['id']}\n"
            f"  auto mma = make_tiled_mma({mma['atom']}{{}}, {cpp_layout_type(lay)}{{}}, "
            f"{cpp_permutation(mma.get('permutation'))});\n"
            f"  oracle::run_case<{op}, {op_t}, {vt}, {kind}, {num}, {'true' if trans else 'false'}>(\"{case['id']}\", mma, "
            f"{cpp_layout(cp['smem'])}, {int(cp.get('align', 128))});\n}}\n")


def program(cases, header=None) -> tuple[str, dict]:
    """The C++ program for ``cases`` and the map ``line -> case index`` of each case function's lines
    (``header``: how to include ``oracle.hpp``, default its path)."""
    head = (f'// generated by tests/oracle/cute_oracle.py: {len(cases)} configuration(s)\n'
            f'#include "{header or PRELUDE}"\nusing namespace cute;\n')
    return assemble(head, cases, case_cpp)


def assemble(head, cases, case_cpp) -> tuple[str, dict]:
    """``head``, one function ``case_cpp(case, "case_<i>")`` per case and a ``main`` that runs the cases
    named on its command line (all without arguments); with the map ``line -> case index``."""
    lines, body = {}, []
    n = head.count("\n") + 1
    for i, c in enumerate(cases):
        f = case_cpp(c, f"case_{i}")
        for k in range(f.count("\n")):
            lines[n + k] = i
        n += f.count("\n")
        body.append(f)
    table = ", ".join(f"case_{i}" for i in range(len(cases)))
    main = ("#include <cstdlib>\nint main(int argc, char** argv) {\n"
            f"  void (*cases[])() = {{{table}}};\n"
            "  if (argc > 1) { for (int a = 1; a < argc; ++a) cases[std::atoi(argv[a])](); }\n"
            "  else for (auto f : cases) f();\n  std::puts(\"DONE\");\n  return 0;\n}\n")
    return head + "".join(body) + main, lines


# ---------------------------------------------------------------- compile, attribute, run


FLAGS = ["-std=c++17", "-O0", "-w"]


def _gxx(incs, src: Path, exe: Path, syntax_only: bool = False):
    out = ["-fsyntax-only"] if syntax_only else ["-o", str(exe)]
    cmd = ["g++", *FLAGS, "-fmax-errors=200", *[f"-I{d}" for d in incs], str(src), *out]
    r = subprocess.run(cmd, capture_output=True, text=True)
    return r.returncode == 0, r.stderr


def _precompiled(work: Path, incs):
    """``oracle.hpp`` with its precompiled header in ``work`` (halves a one-case compile):
    ``(include dirs, header name)``; the header's own path if g++ cannot precompile it."""
    hdr = work / "oracle.hpp"
    shutil.copyfile(PRELUDE, hdr)
    r = subprocess.run(["g++", *FLAGS, *[f"-I{d}" for d in incs], "-x", "c++-header", str(hdr), "-o", str(hdr) + ".gch"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return incs, None
    return [str(work), *incs], "oracle.hpp"


def rejection_text(stderr: str) -> str:
    """CuTe's reason from g++'s output: the first ``static assertion failed: ...``, else the first error."""
    m = re.search(r"static assertion failed: ?(.*)", stderr)
    if m:
        return m.group(1).strip() or "static assertion failed"
    m = re.search(r"error: (.*)", stderr)
    return m.group(1).strip() if m else "does not compile"


def _blamed(stderr: str, src: Path, lines: dict) -> dict:
    """``{case index: reason}`` from g++'s output: each error is attributed to the case whose function the
    instantiation backtrace just before it ends in (``<src>:<line>:<col>:   required from here``)."""
    out: dict = {}
    case = None
    pat = re.compile(re.escape(str(src)) + r":(\d+):\d+:")
    for line in stderr.splitlines():
        m = pat.match(line)
        if m and lines.get(int(m.group(1))) is not None:
            case = lines[int(m.group(1))]
        if " error: " in line and case is not None and case not in out:
            out[case] = rejection_text(line[line.index(" error: ") + 1:])
    return out


def _parse_verdicts(out: str) -> dict:
    res = {}
    for line in out.splitlines():
        if line.startswith("VERDICT "):
            d = json.loads(line[len("VERDICT "):])
            res[d.pop("id")] = d
    return res


def signature(c) -> str:
    """What decides the TiledCopy's C++ type: cases sharing it share CuTe's class-level static_asserts."""
    return json.dumps([c["mma"], c["operand"], c["copy"]["atom"], c["copy"]["type"]], sort_keys=True)


def _run_batch(cases, incs, work: Path, tag: str, log, header=None) -> dict:
    """Compile ``cases`` as one program, dropping the ones CuTe rejects, and run it.

    A failed compile names its culprits through g++'s instantiation backtraces (g++ reports a failed class
    template such as TiledCopy's once, so the other cases with the same TiledCopy type are suspects too);
    each is compiled alone (``-fsyntax-only``): if it fails, it is rejected with the first error of its own
    compile (the same whatever batch it was in), else it stays."""
    results: dict = {}
    todo = list(range(len(cases)))
    exe = None

    def alone(c, name):
        s1 = work / f"{name}.cpp"
        s1.write_text(program([c], header)[0])
        ok1, err1 = _gxx(incs, s1, None, syntax_only=True)
        return None if ok1 else rejection_text(err1)

    for attempt in range(len(cases) + 1):
        if not todo:
            return results
        sub = [cases[i] for i in todo]
        src, exe = work / f"{tag}_{attempt}.cpp", work / f"{tag}_{attempt}"
        text, lines = program(sub, header)
        src.write_text(text)
        ok, err = _gxx(incs, src, exe)
        if ok:
            break
        named = _blamed(err, src, lines)
        sigs = {signature(sub[j]) for j in named}
        check = [j for j in range(len(sub)) if j in named or signature(sub[j]) in sigs] if named else range(len(sub))
        blamed = {}
        for j in check:
            why = alone(sub[j], f"{tag}_{attempt}_{j}")
            if why is not None:
                blamed[j] = why
        if not blamed:
            raise RuntimeError(f"{src} does not compile, but every case compiles alone:\n{err[-2000:]}")
        for j, why in blamed.items():
            results[sub[j]["id"]] = {"rejected": why}
            log(f"  rejected {sub[j]['id']}: {why}")
        todo = [i for j, i in enumerate(todo) if j not in blamed]
    r = subprocess.run([str(exe)], capture_output=True, text=True)
    got = _parse_verdicts(r.stdout)
    for j, i in enumerate(todo):
        c = cases[i]
        if c["id"] in got:
            results[c["id"]] = got[c["id"]]
            continue
        r1 = subprocess.run([str(exe), str(j)], capture_output=True, text=True)
        g1 = _parse_verdicts(r1.stdout)
        results[c["id"]] = g1.get(c["id"], {"error": f"the oracle program failed (exit {r1.returncode})"})
    return results


def headers(incs=None) -> list:
    """``incs``, else the CuTe include folders :func:`include_dirs` finds; RuntimeError where there are none."""
    incs = incs or include_dirs()
    if incs is None:
        raise RuntimeError("CuTe headers or g++ not found (set SYMLAYOUT_CUTE_SITE)")
    return incs


@contextlib.contextmanager
def work_folder(workdir, prefix: str):
    """The folder an oracle compiles in: ``workdir`` (kept), else a new temporary one, removed after a run
    that did not fail."""
    work = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix=prefix))
    work.mkdir(parents=True, exist_ok=True)
    yield work
    if not workdir:
        shutil.rmtree(work, ignore_errors=True)


def run_batches(cases, batch: int, run_batch, jobs: int, log, on_batch=None) -> dict:
    """``run_batch(chunk, tag)`` of ``cases`` cut into chunks of ``batch``, on ``jobs`` threads, the results
    merged; after each chunk ``on_batch(its results)`` and a log line with the time so far."""
    chunks = [cases[i:i + batch] for i in range(0, len(cases), batch)]
    out, t0 = {}, time.perf_counter()
    with cf.ThreadPoolExecutor(max_workers=jobs) as ex:
        futs = [ex.submit(run_batch, ch, f"b{k}") for k, ch in enumerate(chunks)]
        for n, f in enumerate(cf.as_completed(futs), 1):
            res = f.result()
            out.update(res)
            if on_batch:
                on_batch(res)
            log(f"  batch {n}/{len(chunks)} done ({time.perf_counter() - t0:.0f} s)")
    return out


def run_cases(cases, incs=None, jobs: int = 2, batch: int = 24, workdir=None, log=print, on_batch=None) -> dict:
    """Oracle verdicts of ``cases``: ``{id: {"coverage": "proved", ..., "bank_degree": n, "detail": {...}}}``
    or ``{id: {"rejected": text}}`` (``{"error": ...}`` if the oracle itself failed).  Cases are batched
    by TiledCopy type (shared instantiations compile once); ``on_batch(results)`` after each batch."""
    incs = headers(incs)
    with work_folder(workdir, "symlayout-oracle-") as work:
        incs, header = _precompiled(work, incs)
        return run_batches(sorted(cases, key=signature), batch,
                           lambda chunk, tag: _run_batch(chunk, incs, work, tag, log, header), jobs, log, on_batch)


# ---------------------------------------------------------------- the configuration as symlayout reads it


def case_toml(case: dict) -> str:
    """The configuration file of a case (``shared/spec/configs.md``).

    Case keys: ``id``; ``mma``: ``atom``, ``layout``, ``permutation`` (list or None); ``operand``
    (A/B/C); ``copy``: ``atom``, ``type``, ``smem``, ``align``.
    """
    mma, cp = case["mma"], case["copy"]
    out = [f'name = "{case["id"]}"', "[mma]", f'atom = "{mma["atom"]}"', f'layout = "{mma.get("layout") or "(1,1,1)"}"']
    if mma.get("permutation"):
        out.append("permutation = [" + ", ".join(f'"{p}"' for p in mma["permutation"]) + "]")
    out += [f"[copy.{case['operand']}]", f'atom = "{cp["atom"]}"', f'type = "{cp["type"]}"', f'smem = "{cp["smem"]}"',
            f"align = {int(cp.get('align', 128))}"]
    return "\n".join(out) + "\n"
