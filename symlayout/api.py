"""The Python API: load or write a configuration, prove it, read the report.

The same model objects as the CLI (``symlayout prove/show/explain``): a
:class:`~symlayout.config.Config` is loaded once, proved once, and the
:class:`Report` builds its operand models once, for explanations and pictures.

>>> import symlayout
>>> cfg = symlayout.config('''
... [mma]
... atom = "SM80_16x8x16_F16F16F16F16_TN"
... layout = "(2,2,1)"
... [copy.A]
... atom = "SM75_U32x2_LDSM_N"
... type = "half_t"
... smem = "(32,16):(16,1)"
... ''')
>>> rep = symlayout.prove(cfg)
>>> rep.ok, rep["bank_conflicts[A]"].status, rep.summary["proved"]
(False, 'refuted', 6)
>>> print(rep.counterexamples[0].message)
2-way bank conflict: warp 0 instruction 0 phase 0 needs 2 wavefronts (minimum 1); lanes [0, 4] hit bank 0 at byte addresses [0, 128]
>>> rep.svg("banks").startswith("<svg")
True
"""
from __future__ import annotations

import math
import numbers
import os

from .algebra.z3lock import serialized
from .errors import ArgumentTypeError, ArgumentValueError, ConfigError
from .config import load_config, loads_config, Config, PROPERTIES, MAX_TIMEOUT_S
from .algebra.display import Svg
from .algebra.notation import parse
from .algebra._lazy import sympy
from .tiled.mma import make_tiled_mma
from .atoms.copy import make_copy_atom
from .tiled.copy import make_tiled_copy_X
from .prove.engine import prove_config
from .prove.verdict.summary import exit_code, summary
from .cli.prove import format_text
from .prove.report.explain import operand_models, SLOT_PROPERTIES, explain_result, explain_slot, first_refutation
from .prove.report import pictures
from .prove.report.report_html import report_section
from .frontends.document import toml_value

__all__ = ["load", "config", "prove", "Report", "tiled_mma", "tiled_copy_A", "tiled_copy_B", "tiled_copy_C",
           "layout"]


# ---------------------------------------------------------------- configurations


@serialized
def load(path):
    """Read and validate one configuration file (:func:`symlayout.config.load_config`)."""
    if not isinstance(path, (str, os.PathLike)):
        raise ArgumentTypeError(f"symlayout.load(): path must be a str or os.PathLike, not {type(path).__name__}")
    return load_config(path)


@serialized
def config(text: str | None = None, /, *, path: str = "<string>", **tables):
    """A configuration from TOML text, or from tables given as keyword arguments.

    >>> import symlayout
    >>> cfg = symlayout.config(mma={"atom": "SM80_16x8x16_F16F16F16F16_TN", "layout": "(2,2,1)"},
    ...                        copy={"A": {"atom": "SM75_U32x4_LDSM_N", "type": "half_t",
    ...                                    "smem": "Sw<3,3,3> o (64,64):(64,1)"}})
    >>> str(cfg.copies["A"].smem)
    'Sw<3,3,3> o 0 o (64,64):(64,1)'
    """
    if text is None:
        if not tables:
            raise ConfigError("symlayout.config(): give TOML text or tables (mma=..., copy=...)")
        text = _toml(tables)
    elif tables:
        raise ConfigError("symlayout.config(): give TOML text or tables, not both")
    return loads_config(text, path)


def _toml_value(v) -> str:
    try:
        return toml_value(v)
    except TypeError:
        raise ConfigError(f"symlayout.config(): cannot write {type(v).__name__} {v!r} as TOML") from None


def _toml(tables: dict) -> str:
    """TOML text of nested dicts (scalars first, then tables, then sub-tables)."""
    lines = []

    def emit(prefix, d):
        subs = {k: v for k, v in d.items() if isinstance(v, dict) and any(isinstance(x, dict) for x in v.values())
                or isinstance(v, dict) and prefix == ""}
        if prefix:
            lines.append(f"[{prefix}]")
        for k, v in d.items():
            if k not in subs:
                lines.append(f"{k} = {_toml_value(v)}")
        for k, v in subs.items():
            emit(f"{prefix}.{k}" if prefix else k, v)
    emit("", tables)
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- building blocks


def layout(text: str, **symbols):
    """A layout from CuTe notation: ``symlayout.layout("Sw<3,3,3> o (8,64):(64,1)")``.

    >>> import symlayout
    >>> L = symlayout.layout("(4,8):(8,1)"); L(1), L.size()
    (8, 32)
    """
    return parse(text, {k: sympy.Symbol(k, integer=True, positive=True) for k in symbols} or None)


def tiled_mma(atom: str, layout: str | None = None, permutation=None):
    """``make_tiled_mma(atom, atom_layout, permutation)`` (atom by CuTe name).

    >>> import symlayout
    >>> symlayout.tiled_mma("SM80_16x8x16_F16F16F16F16_TN", "(2,2,1)").size()
    128
    """
    return make_tiled_mma(atom, layout, permutation)


def _tiled_copy(op, atom, value_type, mma):
    if isinstance(mma, str):
        mma = tiled_mma(mma)
    return make_tiled_copy_X(make_copy_atom(atom, value_type), mma, op)


def tiled_copy_A(atom: str, value_type: str, mma):
    """``make_tiled_copy_A(Copy_Atom<atom, value_type>, mma)``.

    >>> import symlayout
    >>> mma = symlayout.tiled_mma("SM80_16x8x16_F16F16F16F16_TN", "(2,2,1)")
    >>> symlayout.tiled_copy_A("SM75_U32x4_LDSM_N", "half_t", mma).tiler_mn
    (32, 16)
    """
    return _tiled_copy("A", atom, value_type, mma)


def tiled_copy_B(atom: str, value_type: str, mma):
    """``make_tiled_copy_B(Copy_Atom<atom, value_type>, mma)``."""
    return _tiled_copy("B", atom, value_type, mma)


def tiled_copy_C(atom: str, value_type: str, mma):
    """``make_tiled_copy_C(Copy_Atom<atom, value_type>, mma)``."""
    return _tiled_copy("C", atom, value_type, mma)


# ---------------------------------------------------------------- proving


def prove(cfg, properties=None, method: str = "auto", timeout_s: float | None = None) -> "Report":
    """Prove a configuration (a Config, TOML text or a path) and return its :class:`Report`."""
    if isinstance(cfg, (str, os.PathLike)) and not isinstance(cfg, Config):
        cfg = load(cfg) if os.path.exists(str(cfg)) or str(cfg).endswith(".toml") else config(str(cfg))
    if not isinstance(cfg, Config):
        raise ConfigError(f"symlayout.prove(): expected a configuration, TOML text or a path, not {type(cfg).__name__}")
    properties = _check_properties(properties)
    _check_method(method)
    _check_timeout(timeout_s)
    return Report(cfg, prove_config(cfg, properties, method=method, timeout_s=timeout_s))


METHODS = ("auto", "exhaustive", "z3")


def _check_properties(properties):
    """``None`` or a list of distinct property names (a single name is not read letter by letter)."""
    if properties is None:
        return None
    if isinstance(properties, (str, bytes)) or not hasattr(properties, "__iter__"):
        raise ArgumentTypeError(f"symlayout.prove(): properties must be a list of property names, not "
                                f"{type(properties).__name__} {properties!r:.60}")
    out = list(properties)
    for p in out:
        if not isinstance(p, str):
            raise ArgumentTypeError(f"symlayout.prove(): properties: {p!r:.60} is not a property name (a str)")
        if p not in PROPERTIES:
            raise ArgumentValueError(f"symlayout.prove(): properties: unknown property {p!r:.60} "
                                     f"(known: {', '.join(PROPERTIES)})")
    if not out:
        raise ArgumentValueError("symlayout.prove(): properties is empty (None proves every property)")
    if len(set(out)) != len(out):
        raise ArgumentValueError(f"symlayout.prove(): properties names a property twice: {out}")
    return out


def _check_method(method):
    if not isinstance(method, str):
        raise ArgumentTypeError(f"symlayout.prove(): method must be a str, not {type(method).__name__}")
    if method not in METHODS:
        raise ArgumentValueError(f"symlayout.prove(): method {method!r:.60} is not one of {', '.join(METHODS)}")


def _check_timeout(timeout_s):
    """``None`` (the configuration's ``[prove] timeout_s``) or seconds in ``(0, MAX_TIMEOUT_S]``."""
    if timeout_s is None:
        return
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, numbers.Real):
        raise ArgumentTypeError(f"symlayout.prove(): timeout_s must be a number of seconds or None, not "
                                f"{type(timeout_s).__name__} {timeout_s!r:.60}")
    if not math.isfinite(timeout_s) or not 0 < timeout_s <= MAX_TIMEOUT_S:
        raise ArgumentValueError(f"symlayout.prove(): timeout_s = {timeout_s!r} must be positive and finite, at "
                                 f"most {MAX_TIMEOUT_S:g} seconds")


class Report:
    """The results of one configuration: verdicts, counterexamples, explanations, pictures.

    ``results``: :class:`~symlayout.prove.verdict.result.Result` objects (``status``,
    ``operand``, ``counterexample``, ...); ``report["bank_conflicts[A]"]`` picks
    one; ``ok`` is True when every result is as expected; ``exit_code`` is what
    ``symlayout prove`` would exit with.  ``explain()`` and ``svg()`` build the
    operand models once.  In Jupyter the report renders as a table with pictures.
    """

    def __init__(self, cfg, report):
        self.config = cfg
        self.report = report
        self._models = None

    # -- verdicts
    @property
    def results(self) -> list:
        return list(self.report.results)

    @property
    def ok(self) -> bool:
        return self.report.ok

    @property
    def error(self):
        return self.report.error

    @property
    def exit_code(self) -> int:
        return exit_code([self.report])

    @property
    def summary(self) -> dict:
        return summary([self.report])

    @property
    def counterexamples(self) -> list:
        """The counterexamples of every refuted result, in order."""
        return [r.counterexample for r in self.report.results if r.counterexample is not None]

    def __getitem__(self, key: str):
        for r in self.report.results:
            if key in (r.property + (f"[{r.operand}]" if r.operand else ""), r.property):
                return r
        raise KeyError(key)

    def __iter__(self):
        return iter(self.report.results)

    def to_json(self) -> dict:
        return self.report.to_json()

    def text(self, quiet: bool = False) -> str:
        """What ``symlayout prove`` prints for this configuration."""
        return format_text([self.report], quiet=quiet)

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        s = self.summary
        return (f"<symlayout.Report {self.config.path}: {s['proved']} proved, {s['refuted']} refuted, "
                f"{s['unmet']} unmet>")

    # -- models, explanations, pictures
    @serialized
    def models(self):
        """``(tiled_mma, {operand: OperandModel})``, built once."""
        if self._models is None:
            self._models = operand_models(self.config)
        return self._models

    @serialized
    def explain(self, operand: str | None = None, thread: int | None = None, slot: int | None = None) -> str:
        """The route of fragment ``slot`` of ``thread`` (or of the first counterexample)."""
        if (thread is None) != (slot is None):
            raise ConfigError("explain(): give thread and slot together (or neither: the first counterexample)")
        if thread is not None:
            _, models = self.models()
            op = operand or (sorted(models)[0] if models else None)
            if op not in models:
                raise ConfigError(f"{self.config.path}: no [copy.{op}] table to explain")
            return explain_slot(self.config, models[op], thread, slot)[0]
        r = first_refutation(self.report.results, operand)
        if r is None:
            return f"{self.config.name or self.config.path}: nothing is refuted"
        needs_models = r.property in SLOT_PROPERTIES and not self.config.params
        return explain_result(self.config, r, self.models()[1] if needs_models else None)[0]

    @serialized
    def svg(self, view: str = "tv", operand: str | None = None, thread: int | None = None) -> Svg:
        """A picture as an SVG string: ``tv``, ``copy``, ``banks`` or ``swizzle`` (see ``symlayout show``); a
        ``str`` that Jupyter draws inline (``_repr_svg_``)."""
        if self.config.threadmap is not None:
            # lazy: the thread-map pictures import the threadmap solver (~0.3 s); only show(view=threadmap) needs them
            from .prove.report.threadmap_pictures import show_threadmap
            return Svg(show_threadmap(self.config)[1])
        mma, models = self.models()
        op = operand or (sorted(models)[0] if models else "A")
        return Svg(pictures.view_svg(view, self.config, mma, op, models.get(op), thread=thread,
                                     results=self.report.results))

    @serialized
    def _repr_html_(self) -> str:
        return report_section(self)
