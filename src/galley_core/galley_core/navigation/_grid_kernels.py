# The kernels branch a lot and take plain positional arguments: numba compiles those best.
# ruff: noqa: PLR0912, PLR0917
"""Compiled grid work: the Theta* search's map preparation, and grid coordinates to metres.

Compiled with numba where it is installed (:mod:`galley_core._jit`). Grid conventions: ``blocked``
is the flattened ``(height, width)`` uint8 mask, cell ``n = r * width + c``; vertices are cell
centres; continuous grid coordinates put the centre of cell (r, c) at ``(c + 0.5, r + 0.5)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from galley_core._jit import njit

__all__ = ["MOVE_DC", "MOVE_DR", "free_radius", "move_masks", "sight_cells", "to_world"]

#: The search's eight moves from a cell, as (row, column) steps: bit k of :func:`move_masks`.
#: The four straight moves come first (k < 4), then the diagonals.
MOVE_DR = (0, 1, 0, -1, 1, 1, -1, -1)
MOVE_DC = (1, 0, -1, 0, 1, -1, 1, -1)


@njit
def free_radius(blocked: Any, width: int, height: int) -> Any:
    """For every cell, the largest k <= 255 such that the (2k + 1)-cell square around it is unblocked.

    Cells outside the grid count as unblocked (no segment between cells of the grid leaves it);
    a blocked cell gets 0, and so does a free cell that touches a blocked one. Two raster passes
    of the chessboard distance transform.
    """
    n = width * height
    big = 1 << 20
    d = np.empty(n, dtype=np.int32)
    for i in range(n):
        d[i] = 0 if blocked[i] else big
    for r in range(height):
        for c in range(width):
            i = r * width + c
            v = d[i]
            if v == 0:
                continue
            if c > 0:
                v = min(v, d[i - 1] + 1)
            if r > 0:
                v = min(v, d[i - width] + 1)
                if c > 0:
                    v = min(v, d[i - width - 1] + 1)
                if c < width - 1:
                    v = min(v, d[i - width + 1] + 1)
            d[i] = v
    for r in range(height - 1, -1, -1):
        for c in range(width - 1, -1, -1):
            i = r * width + c
            v = d[i]
            if v == 0:
                continue
            if c < width - 1:
                v = min(v, d[i + 1] + 1)
            if r < height - 1:
                v = min(v, d[i + width] + 1)
                if c < width - 1:
                    v = min(v, d[i + width + 1] + 1)
                if c > 0:
                    v = min(v, d[i + width - 1] + 1)
            d[i] = v
    out = np.empty(n, dtype=np.uint8)
    for i in range(n):
        out[i] = max(0, min(255, d[i] - 1))
    return out


@njit
def sight_cells(blocked: Any, radius: Any) -> Any:
    """What the line-of-sight walk reads, one byte a cell: 0 blocked, else 1 + the free radius.

    ``radius`` is :func:`free_radius` of ``blocked`` (or zeros, for the plain cell-by-cell walk);
    radii above 254 count as 254. One array instead of two: each step of the walk loads one byte.
    """
    out = np.empty(blocked.shape[0], dtype=np.uint8)
    for i in range(blocked.shape[0]):
        out[i] = 0 if blocked[i] else min(np.int64(radius[i]), 254) + 1
    return out


@njit
def move_masks(blocked: Any, width: int, height: int) -> Any:
    """For every cell, the moves the search may make from it: bit k for (MOVE_DR[k], MOVE_DC[k]).

    A move needs its target cell free, and a diagonal one both cells beside it (no squeezing
    between diagonal neighbours). Cells on the grid's edge get 0: the search pads the grid with a
    blocked border, so it never stands there. One byte load per expansion instead of up to
    sixteen, and one branch per move instead of three.
    """
    out = np.zeros(width * height, dtype=np.uint8)
    for r in range(1, height - 1):
        for c in range(1, width - 1):
            s = r * width + c
            mask = 0
            for k in range(8):
                dr = MOVE_DR[k]
                dc = MOVE_DC[k]
                if blocked[s + dr * width + dc]:
                    continue
                if k >= 4 and (blocked[s + dc] or blocked[s + dr * width]):
                    continue
                mask |= 1 << k
            out[s] = mask
    return out


@njit
def to_world(pts: Any, x0: float, y0: float, c: float, s: float, resolution: float) -> Any:
    """Continuous grid coordinates ``(N, >= 2)`` (col, row) to map-frame metres ``(N, 2)``.

    What :meth:`~galley_core.navigation.grid.OccupancyGrid.grid_to_world` computes: ``(x0, y0)``
    is the grid's origin, ``c`` and ``s`` the cosine and sine of its yaw. Compiled, because numpy's
    dozen array operations on a handful of points cost tens of microseconds of every plan.
    """
    out = np.empty((pts.shape[0], 2))
    for i in range(pts.shape[0]):
        gx = pts[i, 0] * resolution
        gy = pts[i, 1] * resolution
        out[i, 0] = x0 + c * gx - s * gy
        out[i, 1] = y0 + s * gx + c * gy
    return out
