"""The PTX-ISA model of CuTe's 8-bit transposed ldmatrix/stmatrix atoms (issue 29 item 4): for every
``SM100_U8*_LDSM_T`` / ``SM100_U8*_STSM_T`` the ``(address lane, byte)`` of each register byte by the ISA's
``.m16n16`` / ``.m16n8`` fragment figures (atoms/narrow_matrix.py) equals the route CuTe's Copy_Traits give (checked
against CuTe C++ in tests/test_narrow_matrix.py); wrong readings of the ISA differ.  Nothing is measured on hardware:
the instructions need sm_100a."""
from __future__ import annotations

import pytest

from symlayout.atoms.copy import make_copy_atom
from symlayout.atoms.narrow_matrix import (isa_route, m16n16_dest, m16n16_row_lane, m16n8_src, m8n16_row_lane,
                                           narrow_copy_names, u8_ldsm_t_shuffle)
from symlayout.prove.copy.model import hardware_of

NAMES = [n for n in narrow_copy_names() if n.endswith(("_LDSM_T", "_STSM_T"))]


def _cute_route(name):
    """``{(lane, reg, byte): (address lane, byte in row)}`` of CuTe's Copy_Traits route of ``name``."""
    hw = hardware_of(make_copy_atom(name, "uint8_t"))
    regs = hw.traits.d_regs if hw.kind == "ldsm" else hw.traits.s_regs
    return {(lane, reg, byte): hw.provider(lane, 4 * reg + byte, 8, 32)
            for lane in range(32) for reg in range(regs.count) for byte in range(4)}


def _differences(name, model):
    return [(k, v, model(name, *k)) for k, v in _cute_route(name).items() if model(name, *k) != v]


def test_the_atoms():
    assert NAMES == ["SM100_U8x8_LDSM_T", "SM100_U8x16_LDSM_T", "SM100_U8x4_STSM_T", "SM100_U8x8_STSM_T",
                     "SM100_U8x16_STSM_T"]


@pytest.mark.parametrize("name", NAMES)
def test_isa_model_is_cutes_route_per_lane_register_byte(name):
    route = _cute_route(name)
    regs = {"SM100_U8x8_LDSM_T": 2, "SM100_U8x16_LDSM_T": 4, "SM100_U8x4_STSM_T": 1, "SM100_U8x8_STSM_T": 2,
            "SM100_U8x16_STSM_T": 4}[name]                # the PTX's register count (.x1/.x2/.x4)
    assert len(route) == 32 * regs * 4
    assert len(set(route.values())) == len(route)          # every register byte has its own smem byte
    assert _differences(name, isa_route) == []


def _non_trans(name, lane, reg, byte):
    # the wrong model: the same fragments read row-major (element (row, col) at byte col of smem row ``row``)
    if "LDSM" in name:
        matrix, row, col = m16n16_dest(lane, *u8_ldsm_t_shuffle(reg, byte))
        return m16n16_row_lane(matrix, row), col
    matrix, row, col = m16n8_src(lane, reg, byte)
    return m8n16_row_lane(matrix, row), col


def _unshuffled(name, lane, reg, byte):
    # the instruction's registers without CuTe's byte shuffle after the load
    matrix, row, col = m16n16_dest(lane, reg, byte)
    return m16n16_row_lane(matrix, col), row


def _adjacent_rows(name, lane, reg, byte):
    # "4 consecutive columns across 2 rows" read as rows 2g, 2g+1 instead of g, g+8
    r, b = u8_ldsm_t_shuffle(reg, byte)
    return m16n16_row_lane(r // 2, 4 * (lane % 4) + b), 2 * (lane // 4) + r % 2


@pytest.mark.parametrize("name", NAMES)
def test_non_transposed_model_differs(name):
    assert len(_differences(name, _non_trans)) > 0


@pytest.mark.parametrize("wrong", [_unshuffled, _adjacent_rows])
@pytest.mark.parametrize("name", NAMES[:2])
def test_wrong_readings_of_the_load_differ(name, wrong):
    assert len(_differences(name, wrong)) > 0
