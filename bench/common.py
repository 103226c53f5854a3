"""Shared helpers for the hand-run benchmarks in bench/ (never run in CI, not collected by pytest).

* machine information (CPU model, cores, Python and package versions),
* timing helpers (median of N repeats),
* peak memory (ru_maxrss of the process, tracemalloc peak of a block),
* ``append_results(section, table_markdown)``: append a dated section with the machine to bench/RESULTS.md,
* ``pip_install_cache(packages)``: install packages into the benchmark cache directory
  (``$SYMLAYOUT_BENCH_CACHE`` or ``~/.cache/symlayout-bench``), used by the scripts' ``--install``.
"""
from __future__ import annotations

import datetime as _dt
import gc
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
import tracemalloc
from contextlib import contextmanager
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
RESULTS = BENCH / "RESULTS.md"
CACHE = Path(os.environ.get("SYMLAYOUT_BENCH_CACHE", Path.home() / ".cache" / "symlayout-bench"))
SITE = CACHE / "site"          # pip --target directory for tensor-layouts and the CUDA header wheels


# ---------------------------------------------------------------- cache directory / installs

def use_cache_site() -> None:
    """Make packages installed by ``pip_install_cache`` importable (after the environment's own)."""
    if SITE.is_dir() and str(SITE) not in sys.path:
        sys.path.append(str(SITE))


def pip_install_cache(packages: list[str]) -> None:
    """``pip install --target CACHE/site PACKAGES`` (the ordinary client, PyPI)."""
    SITE.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--upgrade", "--target", str(SITE), *packages]
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)
    use_cache_site()


# ---------------------------------------------------------------- machine information

def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _dist_version(name: str) -> str | None:
    from importlib import metadata
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        pass
    # packages installed with pip --target into the cache directory
    if SITE.is_dir():
        norm = name.replace("-", "_").lower()
        for d in SITE.glob("*.dist-info"):
            stem = d.name[: -len(".dist-info")]
            pkg, _, ver = stem.rpartition("-")
            if pkg.lower() == norm:
                return ver + " (bench cache)"
    return None


def git_sha() -> str:
    try:
        sha = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short=12", "HEAD"], capture_output=True,
                             text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no",
                                "--", "symlayout"], capture_output=True, text=True).stdout.strip()
        return sha + ("+dirty(symlayout/)" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def machine_info() -> dict:
    """CPU model, cores, OS, Python and the versions of the packages the benchmarks compare."""
    info = {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "symlayout": f"{_dist_version('symlayout') or '?'} @ {git_sha()}",
    }
    for name in ("sympy", "z3-solver", "nvidia-cutlass", "tensor-layouts"):
        info[name] = _dist_version(name) or "not installed"
    info["pycute"] = ("from nvidia-cutlass " + info["nvidia-cutlass"]) if _importable("pycute") else "not installed"
    try:
        gxx = subprocess.run(["g++", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    except (OSError, IndexError):
        gxx = "not found"
    info["g++"] = gxx
    info["calibration"] = python_rate()
    return info


def python_rate(n: int = 2_000_000, repeat: int = 3) -> str:
    """This interpreter's speed on this machine right now: additions per second of a plain ``for`` loop
    (best of ``repeat``). Shared 2-core machines differ by 2x from day to day; absolute times in two
    sections compare only through this figure (ratios measured side by side in one run need none)."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        s = 0
        for i in range(n):
            s += i
        best = min(best, time.perf_counter() - t0)
    return f"{n / best / 1e6:.1f} M loop additions/s"


def _importable(mod: str) -> bool:
    import importlib.util
    return importlib.util.find_spec(mod) is not None


def machine_line(info: dict | None = None) -> str:
    i = info or machine_info()
    return (f"{i['cpu']}, {i['cores']} cores, {i['os']}; Python {i['python']}; symlayout {i['symlayout']}; "
            f"sympy {i['sympy']}; z3-solver {i['z3-solver']}; pycute {i['pycute']}; "
            f"tensor-layouts {i['tensor-layouts']}; {i['g++']}; pure Python {i.get('calibration', '?')}")


# ---------------------------------------------------------------- timing

def time_call(fn, *args, repeat: int = 5, **kw) -> tuple[float, list[float], object]:
    """Run ``fn(*args, **kw)`` ``repeat`` times; returns (median seconds, all seconds, last result)."""
    times, result = [], None
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        result = fn(*args, **kw)
        times.append(time.perf_counter() - t0)
    return statistics.median(times), times, result


def median(xs):
    xs = list(xs)
    return statistics.median(xs) if xs else float("nan")


def fmt_s(s: float) -> str:
    """Seconds in a readable unit."""
    if s != s:  # nan
        return "n/a"
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.1f} ms"
    return f"{s * 1e6:.1f} µs"


# ---------------------------------------------------------------- memory

def peak_rss_mib() -> float:
    """Peak resident set size of this process so far (ru_maxrss, KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def peak_rss_children_mib() -> float:
    """Largest peak RSS among waited-for child processes (worker pools, the compiler, the C++ program)."""
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0


@contextmanager
def traced(out: dict, key: str = "tracemalloc_peak_mib"):
    """``with traced(d): ...`` stores the tracemalloc peak (MiB) of the block in ``d[key]``.

    tracemalloc slows Python allocation down a lot: never time inside it."""
    tracemalloc.start()
    try:
        yield
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        out[key] = peak / 2**20


# ---------------------------------------------------------------- tables and RESULTS.md

def md_table(headers: list[str], rows: list[list]) -> str:
    """A GitHub markdown table."""
    def cell(x):
        return str(x).replace("|", "\\|")
    out = ["| " + " | ".join(map(cell, headers)) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(map(cell, r)) + " |" for r in rows]
    return "\n".join(out)


def append_results(section: str, table_markdown: str, info: dict | None = None, command: str | None = None) -> None:
    """Append ``## section`` (with the date, the machine and the command) and the table to bench/RESULTS.md."""
    info = info or machine_info()
    now = _dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    cmd = command or "python " + " ".join([os.path.relpath(sys.argv[0], REPO)] + sys.argv[1:])
    head = "" if RESULTS.exists() else (
        "# symlayout benchmarks\n\n"
        "Run by hand (never in CI): `python bench/algebra.py`, `python bench/prove.py`, "
        "`python bench/seed_check.py` (add `--install` once to fetch tensor-layouts and the CUDA header wheels "
        "into the benchmark cache). Each run appends a section below.\n")
    text = (f"{head}\n## {section} — {now}\n\n"
            f"Machine: {machine_line(info)}\n\n"
            f"Command: `{cmd}`\n\n{table_markdown.rstrip()}\n")
    with open(RESULTS, "a") as f:
        f.write(text)
    print(f"(appended to {os.path.relpath(RESULTS, Path.cwd()) if RESULTS.is_relative_to(Path.cwd()) else RESULTS})")
