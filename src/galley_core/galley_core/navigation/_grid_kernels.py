# The kernel branches a lot: numba compiles plain loops best.
# ruff: noqa: PLR0912
"""Compiled map preparation of the Theta* search: the free square around every cell.

Compiled with numba where it is installed (:mod:`galley_core._jit`). Grid conventions: ``blocked``
is the flattened ``(height, width)`` uint8 mask, cell ``n = r * width + c``; vertices are cell
centres; continuous grid coordinates put the centre of cell (r, c) at ``(c + 0.5, r + 0.5)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from galley_core._jit import njit

__all__ = ["free_radius"]


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
