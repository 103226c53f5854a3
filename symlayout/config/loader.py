"""The loader: TOML text -> :class:`Config`, section by section (each section's checks in its module)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from ..errors import ConfigError
from .base import LoaderBase
from .copy import CopySection
from .elements import ElementsSection
from .epilogue import EpilogueSection
from .globalcopy import GlobalCopySection
from .keys import TOP
from .messages import _one_line
from .mma import MmaSection
from .model import Config
from .params import ParamsSection
from .prove_expect import ProveExpectSection
from .regcopy import RegisterCopySection
from .reuse import ReuseSection
from .sf import SfSection
from .smem import SmemSection
from .stages import StagesSection
from .threadmap import ThreadMapSection
from .tma import TmaSection
from .tmem import TmemSection


class _Loader(LoaderBase, ParamsSection, MmaSection, StagesSection, CopySection, GlobalCopySection, SmemSection,
              TmaSection, ProveExpectSection, ThreadMapSection, ElementsSection, TmemSection, SfSection,
              ReuseSection, RegisterCopySection, EpilogueSection):
    """Reads one configuration text (``_Loader(path, text).load()``)."""

    def load(self, parsed: dict | None = None) -> Config:
        """The configuration; ``parsed``: what ``tomllib.loads(self.text)`` returns, when the caller holds it
        (a sweep's candidate, written from that dict: not read back)."""
        try:
            data = tomllib.loads(self.text) if parsed is None else parsed
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(self.toml_error(str(e))) from None
        except RecursionError:
            line, col = self.deep_nesting_position()
            raise ConfigError(f"{self.path}:{line}:{col}: invalid TOML: arrays or tables nested too deeply") from None
        self.check_keys(data, (), TOP.names, what="top level")
        name = self.value(data, (), TOP["name"])
        if name is None:
            name = Path(self.path).stem
        elif "\n" in name or "\r" in name:
            self.fail(("name",), "name must be a single line")
        params = self.params = self.load_params(data)
        symbols = {n: p.symbol for n, p in params.items()}
        mma = self.load_mma(data, symbols) if "mma" in data else None
        self.sm100_mma = mma is not None and mma.is_sm100      # (Version 3: the SM100 TMA atoms need it)
        stages = self.load_stages(data, params)
        stages_param = stages if isinstance(stages, str) else None
        stages = None if stages_param else stages
        self.stages_family = stages_param
        copies = self.load_copies(data, symbols, mma)
        stages = self.apply_stages(copies, stages, stages_param)
        g2s, s2g = self.load_global_copies(data, symbols, copies, stages, copy_only=mma is None)   # (issue 31)
        if (g2s or s2g) and mma is not None and mma.is_sm100:          # Version 3: TMA loads an SM100 buffer
            self.fail(("g2s",) if g2s else ("s2g",), "[g2s.X] / [s2g.C]: not supported with an SM100 (SM100_MMA_*) "
                                                     "atom: describe the loads of an [smem.X] buffer in [tma.X]")
        threadmap = self.load_threadmap(data["threadmap"], ("threadmap",)) if "threadmap" in data else None
        regcopies = self.load_register_copies(data, symbols, mma)           # issue 31: copy-only kernels
        if mma is None and threadmap is None and not (regcopies or g2s or s2g):   # (issue 31: copy-only kernels)
            if copies:
                self.fail(("copy",), "[copy.*] needs an [mma] table (make_tiled_copy_A/B/C are built from the TiledMMA)")
            self.fail((), "nothing to prove: a configuration needs an [mma], a [threadmap] or a [g2r.X] / [r2g.X] table")
        if (regcopies or g2s or s2g) and threadmap is not None:
            self.fail(("threadmap",), "a configuration describes either TiledCopies ([g2r.X], [r2g.X]) or a thread "
                                      "map ([threadmap]), not both: split it into two files")
        if mma is not None and threadmap is not None:
            self.fail(("threadmap",), "a configuration describes either a TiledMMA ([mma], [copy.*]) or a thread "
                                      "map ([threadmap]), not both: split it into two files")
        prove = self.load_prove(data)
        expect = self.load_expect(data, prove)
        smem = self.load_smem_tables(data, symbols, mma, stages)
        tma = self.load_tma_tables(data, symbols, smem)
        copies, g2s, s2g, smem = self.apply_elements(data, copies, g2s, s2g, smem)
        reuse = self.load_reuse(data, symbols, mma)                      # issue 31
        epilogue, copies = self.load_epilogue(data, symbols, mma, copies)  # issue 31
        tmem, tmem_copies = self.load_tmem(data), self.load_tmem_copies(data, None, mma)     # Version 3: TMEM
        self.check_tmem_mma(tmem, tmem_copies, mma)
        sf = self.load_sf_tables(data, symbols, mma)            # Version 3: block-scale factors (issue 29)
        cfg = Config(path=self.path, name=name, mma=mma, copies=copies, threadmap=threadmap, params=params,
                     prove=prove, expect=expect, text=self.text, data=data, lines=self.lines,
                     g2s=g2s, s2g=s2g, stages=stages, smem=smem, tma=tma, stages_param=stages_param,
                     tmem=tmem, tmem_copies=tmem_copies, reuse=reuse, regcopies=regcopies, epilogue=epilogue,
                     sf=sf, stage_barrier_bytes=self.load_stage_barriers(data))
        if mma is not None and mma.is_sm100 and cfg.kernel_tables:      # Version 3 x issue 31: not modelled yet
            self.fail(next(((k,) for k in ("reuse", "epilogue", "g2r", "r2g", "tma") if k in data), ("mma",)),
                      "[reuse.X] / [epilogue] / [g2r.X] / [r2g.X] / a [tma.X] residue: not supported with an SM100 "
                      "(SM100_MMA_*) atom yet")
        if mma is not None:
            self.check_tiles(cfg)
        if threadmap is not None:
            self.check_threadmap_model(threadmap)
        return cfg

    def toml_error(self, msg: str) -> str:
        m = re.search(r"\(at line (\d+), column (\d+)\)", msg)
        core = re.sub(r"\s*\(at (line \d+, column \d+|end of document)\)", "", msg)
        if m:
            return f"{self.path}:{m.group(1)}:{m.group(2)}: invalid TOML: {_one_line(core)}"
        lines = self.text.split("\n")
        if lines and lines[-1] == "" and len(lines) > 1:
            lines = lines[:-1]
        return f"{self.path}:{len(lines)}:{len(lines[-1]) + 1}: invalid TOML: {_one_line(core)} (at the end of the file)"

    def deep_nesting_position(self):
        depth, line, col = 0, 1, 0
        for ch in self.text:
            col += 1
            if ch == "\n":
                line, col = line + 1, 0
            elif ch in "[{":
                depth += 1
                if depth > 100:
                    return line, col
            elif ch in "]}":
                depth = max(0, depth - 1)
        return 1, 1
