"""Compile CUDA C++ (with inline PTX) for the present GPU through CuPy, launch it,
and check every CUDA error.

CuPy is imported inside the functions, so this module imports on a machine
without it (:func:`arch_flag` and :func:`nvrtc_options` are pure).

Compilation goes through NVRTC with an explicit ``-arch=sm_XY`` for the device
(CuPy's low-level NVRTC binding, cubin loaded with :class:`cupy.RawModule`);
where that binding is missing it falls back to ``cupy.RawModule(code=...)``,
which picks the architecture itself.  :attr:`Module.how` records which path
compiled a module.

>>> arch_flag((9, 0))
'-arch=sm_90'
>>> nvrtc_options((9, 0), extra=("-lineinfo",))
('-arch=sm_90', '-std=c++17', '-lineinfo')
"""
from __future__ import annotations

import os
import subprocess
import tempfile
import traceback
from dataclasses import dataclass, field
from typing import Any, Sequence


class CudaError(RuntimeError):
    """A compile, load, launch or runtime failure on the device (one-line message first)."""


def load_cupy():
    """The ``cupy`` module (a one-line CudaError without it)."""
    try:
        import cupy
    except Exception as e:  # pragma: no cover - exercised only without cupy
        raise CudaError(f"CuPy is not importable: {e}") from e
    return cupy


def arch_flag(cc: tuple[int, int], suffix: str = "") -> str:
    """The NVRTC ``-arch`` option for compute capability ``cc`` (``suffix`` e.g. ``"a"``).

    >>> arch_flag((8, 9)), arch_flag((9, 0), "a")
    ('-arch=sm_89', '-arch=sm_90a')
    """
    return f"-arch=sm_{cc[0]}{cc[1]}{suffix}"


def nvrtc_options(cc: tuple[int, int], extra: Sequence[str] = (), suffix: str = "") -> tuple[str, ...]:
    """NVRTC options used for a module: the arch flag, C++17, then ``extra``.

    >>> nvrtc_options((8, 0))
    ('-arch=sm_80', '-std=c++17')
    """
    return (arch_flag(cc, suffix), "-std=c++17", *extra)


def compute_capability(device: int = 0) -> tuple[int, int]:
    """``(major, minor)`` of CUDA device ``device`` (needs CuPy and a GPU).

    >>> compute_capability()  # doctest: +SKIP
    (9, 0)
    """
    cp = load_cupy()
    props = cp.cuda.runtime.getDeviceProperties(device)
    return int(props["major"]), int(props["minor"])


def max_dynamic_shared_memory(device: int = 0) -> int:
    """The most shared memory one block may opt in to on device ``device`` (bytes; 232448 on the
    H100/H200): a kernel asking for more is refused at launch (CUDA_ERROR_INVALID_VALUE).

    >>> max_dynamic_shared_memory()  # doctest: +SKIP
    232448
    """
    cp = load_cupy()
    return int(cp.cuda.runtime.getDeviceProperties(device)["sharedMemPerBlockOptin"])


def device_info(device: int = 0) -> dict[str, Any]:
    """Name, compute capability, driver/runtime/NVRTC versions and CuPy version.

    >>> device_info()["name"]  # doctest: +SKIP
    'NVIDIA H200'
    """
    cp = load_cupy()
    rt = cp.cuda.runtime
    props = rt.getDeviceProperties(device)
    name = props["name"]
    if isinstance(name, bytes):
        name = name.decode(errors="replace")
    info: dict[str, Any] = {
        "name": name,
        "compute_capability": f"{props['major']}.{props['minor']}",
        "multiprocessors": int(props.get("multiProcessorCount", 0)),
        "cuda_driver_api_version": _fmt_cuda_version(rt.driverGetVersion()),
        "cuda_runtime_version": _fmt_cuda_version(rt.runtimeGetVersion()),
        "cupy_version": cp.__version__,
    }
    try:
        major, minor = cp.cuda.nvrtc.getVersion()
        info["nvrtc_version"] = f"{major}.{minor}"
    except Exception as e:  # pragma: no cover
        info["nvrtc_version"] = f"unknown ({e})"
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20)
        line = out.stdout.strip().splitlines()[device] if out.returncode == 0 else ""
        if line:
            info["driver_version"] = line.split(",")[-1].strip()
    except Exception:  # pragma: no cover - nvidia-smi missing
        pass
    return info


def _fmt_cuda_version(v: int) -> str:
    return f"{v // 1000}.{(v % 1000) // 10}"


@dataclass
class Module:
    """A loaded CUDA module: ``raw`` is the :class:`cupy.RawModule`, ``how`` the
    compile path ("nvrtc-cubin", "nvrtc-ptx" or "rawmodule"), ``options`` the
    NVRTC options, ``log`` the compiler log (warnings).

    >>> Module(raw=None, how="rawmodule", options=()).how
    'rawmodule'
    """
    raw: Any
    how: str
    options: tuple[str, ...]
    log: str = ""
    _fns: dict = field(default_factory=dict)

    def function(self, name: str):
        """The kernel ``name`` (an ``extern "C"`` symbol), loading the module if needed.

        >>> mod.function("probe")  # doctest: +SKIP
        <cupy._core.raw.RawKernel ...>
        """
        if name not in self._fns:
            try:
                self._fns[name] = self.raw.get_function(name)
            except Exception as e:
                raise CudaError(f"cannot load kernel {name!r}: {e}") from e
        return self._fns[name]


def compile_module(source: str, *, cc: tuple[int, int] | None = None, suffix: str = "",
                   extra_options: Sequence[str] = (), name: str = "probe.cu") -> Module:
    """Compile ``source`` with NVRTC for the present GPU and load it.

    Raises :class:`CudaError` with the NVRTC log on a compile error.

    >>> m = compile_module('extern "C" __global__ void k(int* p) { *p = 1; }')  # doctest: +SKIP
    >>> m.options[0]  # doctest: +SKIP
    '-arch=sm_90'
    """
    cp = load_cupy()
    if cc is None:
        cc = compute_capability()
    opts = nvrtc_options(cc, extra_options, suffix)
    nv = getattr(cp.cuda, "nvrtc", None)
    if nv is not None and hasattr(nv, "createProgram") and hasattr(nv, "compileProgram"):
        prog = nv.createProgram(source, name, (), ())
        try:
            try:
                nv.compileProgram(prog, opts)
            except Exception as e:
                log = _safe_log(nv, prog)
                raise CudaError(f"NVRTC failed ({' '.join(opts)}): {log.strip() or e}") from None
            log = _safe_log(nv, prog)
            if hasattr(nv, "getCUBIN"):
                image, ext, how = nv.getCUBIN(prog), ".cubin", "nvrtc-cubin"
            else:  # pragma: no cover - old CuPy
                image, ext, how = nv.getPTX(prog).encode(), ".ptx", "nvrtc-ptx"
        finally:
            try:
                nv.destroyProgram(prog)
            except Exception:  # pragma: no cover
                pass
        fd, path = tempfile.mkstemp(suffix=ext, prefix="symlayout_")
        with os.fdopen(fd, "wb") as f:
            f.write(image if isinstance(image, (bytes, bytearray)) else bytes(image))
        try:
            raw = cp.RawModule(path=path)
            raw.get_function  # attribute check only; loading happens on first get_function
        except Exception as e:
            raise CudaError(f"cannot load compiled module: {e}") from e
        return Module(raw=raw, how=how, options=opts, log=log)
    # Fallback: let CuPy choose the architecture.
    rest = tuple(o for o in opts if not o.startswith("-arch"))
    try:
        raw = cp.RawModule(code=source, options=rest, backend="nvrtc")
        raw.compile()
    except Exception as e:
        raise CudaError(f"RawModule compile failed: {e}") from None
    return Module(raw=raw, how="rawmodule", options=rest)


def _safe_log(nv, prog) -> str:
    try:
        return nv.getProgramLog(prog)
    except Exception:  # pragma: no cover
        return ""


def check(where: str = "") -> None:
    """Synchronize the device and raise :class:`CudaError` on any pending CUDA error.

    >>> check("after probe")  # doctest: +SKIP
    """
    cp = load_cupy()
    try:
        cp.cuda.runtime.deviceSynchronize()
        get_last = getattr(cp.cuda.runtime, "getLastError", None)
        if get_last is not None:
            err = get_last()
            if err:
                raise CudaError(f"CUDA error {err} {where}".strip())
    except CudaError:
        raise
    except Exception as e:
        raise CudaError(f"CUDA error {where}: {e}".strip()) from e


def launch(module: Module, kernel: str, grid: int | tuple, block: int | tuple, args: tuple,
           shared_mem: int = 0) -> None:
    """Launch ``kernel`` of ``module`` and wait for it, checking errors before and after.

    >>> launch(mod, "probe", 1, 32, (buf,))  # doctest: +SKIP
    """
    fn = module.function(kernel)
    grid = grid if isinstance(grid, tuple) else (grid,)
    block = block if isinstance(block, tuple) else (block,)
    try:
        fn(grid, block, args, shared_mem=shared_mem)
    except Exception as e:
        raise CudaError(f"launch of {kernel} failed: {e}") from e
    check(f"after {kernel}")


_STICKY = ("misaligned", "illegal", "launch failure", "unspecified launch", "700", "716", "719",
           "hardware stack", "illegal instruction", "exception", "poison")


def is_sticky(msg: str) -> bool:
    """Whether a CUDA error message names an error that poisons the context."""
    low = msg.lower()
    return any(s in low for s in _STICKY)


def error_site(e: BaseException) -> str:
    """Where an exception that is not a CUDA fault was raised: the innermost frame of symlayout's code
    and, when the error came from deeper (CuPy, NumPy), the innermost frame of all, so that a harness
    error read from a GPU run's report can be found without the GPU.

    >>> try:
    ...     int("x")
    ... except ValueError as e:
    ...     print(error_site(e).split(":")[0].startswith("<doctest"))
    True
    """
    frames = traceback.extract_tb(e.__traceback__)
    if not frames:
        return ""

    def text(f):
        path = f.filename.replace(os.sep, "/")
        cut = path.rfind("symlayout/")
        return f"{path[cut:] if cut >= 0 else os.path.basename(path)}:{f.lineno} ({f.name})"
    ours = [f for f in frames if "symlayout" in f.filename.replace(os.sep, "/").split("/")]
    last = frames[-1]
    if ours and ours[-1] is not last:
        return f"{text(ours[-1])} <- {text(last)}"
    return text(last)
