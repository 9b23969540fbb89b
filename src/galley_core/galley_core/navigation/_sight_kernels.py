# Kernels take many positional arguments and branch a lot: numba compiles plain loops best.
# ruff: noqa: PLR0912, PLR0917
"""Compiled line-of-sight tests of the Theta* search, between cell centres and between any two points.

Compiled with numba where it is installed (:mod:`galley_core._jit`). Grid conventions: ``blocked``
is the flattened ``(height, width)`` uint8 mask, cell ``n = r * width + c``; vertices are cell
centres; continuous grid coordinates put the centre of cell (r, c) at ``(c + 0.5, r + 0.5)``.
A segment is visible when every cell its closed path touches is unblocked; where it passes exactly
through a cell corner, both cells beside the corner must be unblocked (no squeezing between
diagonal neighbours).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from galley_core._jit import njit

__all__ = ["line_of_sight", "line_of_sight_float"]


@njit
def line_of_sight(cells: Any, width: int, r0: int, c0: int, r1: int, c1: int) -> bool:
    """Whether the segment between the centres of cells (r0, c0) and (r1, c1) is visible.

    Both end cells must be inside the grid; they are checked too. ``cells`` is
    :func:`~galley_core.navigation._grid_kernels.sight_cells` of the grid: 0 for a blocked cell,
    else 1 + its free radius. Where the walk stands in a cell whose square of radius k >= 2 is
    free, it jumps to the last cell of the segment inside that square (the cells between are known
    free), so that long lines through open space cost a few steps. The cells visited are those of
    the exact cell-by-cell walk, in integers, one byte load each.
    """
    n = r0 * width + c0
    code = np.int64(cells[n])
    if code == 0 or cells[r1 * width + c1] == 0:
        return False
    dc = c1 - c0
    dr = r1 - r0
    sc = 1 if dc > 0 else -1
    sr = width if dr > 0 else -width
    adc = abs(dc)
    adr = abs(dr)
    # Walk along the major axis (a: the one with more cell boundaries to cross), flat indices.
    if adc >= adr:
        big, small, sa, sb = adc, adr, sc, sr
    else:
        big, small, sa, sb = adr, adc, sr, sc
    # The i-th boundary across the major axis (from 0) is at t = (2i + 1) / (2 big), the j-th
    # across the minor one at t = (2j + 1) / (2 small); the last minor one comes no later than the
    # last major one, so the walk ends when all major boundaries are crossed.
    i = 0
    j = 0
    while i < big:
        k = code - 1
        if k >= 2:
            # Cross major boundaries i .. m and every minor one up to the same t: at most k cells
            # along either axis (small <= big), all inside the free square.
            m = min(i + k - 1, big - 1)
            jj = ((2 * m + 1) * small + big) // (2 * big)
            n += (m + 1 - i) * sa + (jj - j) * sb
            i = m + 1
            j = jj
            code = np.int64(cells[n])
            continue
        cmp = (2 * i + 1) * small - (2 * j + 1) * big if j < small else -1
        if cmp < 0:
            n += sa
            i += 1
        elif cmp > 0:
            n += sb
            j += 1
        else:  # through a corner: both cells beside it
            if cells[n + sa] == 0 or cells[n + sb] == 0:
                return False
            n += sa + sb
            i += 1
            j += 1
        code = np.int64(cells[n])
        if code == 0:
            return False
    return True


@njit
def line_of_sight_float(
    blocked: Any, width: int, height: int, x0: float, y0: float, x1: float, y1: float
) -> bool:
    """Whether the segment between two points in continuous grid coordinates (col, row) is visible.

    Every cell the segment passes through must lie inside the grid and be unblocked.
    """
    c = math.floor(x0)
    r = math.floor(y0)
    if c < 0 or r < 0 or c >= width or r >= height or blocked[r * width + c]:
        return False
    dx = x1 - x0
    dy = y1 - y0
    sc = 1 if dx > 0 else -1
    sr = 1 if dy > 0 else -1
    inf = math.inf
    t_delta_x = 1.0 / abs(dx) if dx != 0.0 else inf
    t_delta_y = 1.0 / abs(dy) if dy != 0.0 else inf
    if dx > 0:
        t_max_x = (c + 1 - x0) / dx
    elif dx < 0:
        t_max_x = (x0 - c) / -dx
    else:
        t_max_x = inf
    if dy > 0:
        t_max_y = (r + 1 - y0) / dy
    elif dy < 0:
        t_max_y = (y0 - r) / -dy
    else:
        t_max_y = inf
    eps = 1e-12
    while True:
        t = min(t_max_x, t_max_y)
        if t >= 1.0 - eps:
            return True
        if abs(t_max_x - t_max_y) <= eps:
            nc = c + sc
            nr = r + sr
            if nc < 0 or nr < 0 or nc >= width or nr >= height:
                return False
            if blocked[r * width + nc] or blocked[nr * width + c]:
                return False
            c = nc
            r = nr
            t_max_x += t_delta_x
            t_max_y += t_delta_y
        elif t_max_x < t_max_y:
            c += sc
            t_max_x += t_delta_x
        else:
            r += sr
            t_max_y += t_delta_y
        if c < 0 or r < 0 or c >= width or r >= height or blocked[r * width + c]:
            return False
