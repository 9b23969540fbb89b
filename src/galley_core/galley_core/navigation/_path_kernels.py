# Kernels take many positional arguments: numba compiles plain arguments best.
# ruff: noqa: PLR0917
"""Compiled post-processing of a Theta* path: tracing it, pulling it taut, resampling it into waypoints.

Compiled with numba where it is installed (:mod:`galley_core._jit`). Points are in continuous grid
coordinates (col, row): the centre of cell (r, c) is at ``(c + 0.5, r + 0.5)``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from galley_core._jit import njit, njit_inline
from galley_core.navigation._sight_kernels import line_of_sight_float

__all__ = ["finish", "resample", "tighten"]


@njit
def _visible(blocked: Any, width: int, height: int, a: Any, b: Any) -> bool:
    return bool(line_of_sight_float(blocked, width, height, a[0], a[1], b[0], b[1]))


@njit
def tighten(blocked: Any, width: int, height: int, points: Any, sweeps: int, iterations: int) -> Any:
    """Shorten a visible polyline ``(N, 2)`` (grid coordinates) while every segment stays visible.

    Theta* puts vertices on cell centres and checks sight only from a parent, so its paths around
    rounded (inflated) obstacles are a little longer than the taut path. Each sweep drops every
    vertex whose neighbours see each other, then slides each remaining vertex toward the midpoint
    of its neighbours as far as both its segments stay visible (bisection). Both moves only
    shorten the path; the end points never move.
    """
    cur = points.copy()
    m = cur.shape[0]
    for _ in range(sweeps):
        out = np.empty_like(cur[:m])
        out[0] = cur[0]
        k = 1
        for i in range(1, m - 1):
            if not _visible(blocked, width, height, out[k - 1], cur[i + 1]):
                out[k] = cur[i]
                k += 1
        out[k] = cur[m - 1]
        k += 1
        removed = k < m
        cur = out
        m = k
        moved = 0.0
        for i in range(1, m - 1):
            vx = cur[i, 0]
            vy = cur[i, 1]
            mx = 0.5 * (cur[i - 1, 0] + cur[i + 1, 0]) - vx
            my = 0.5 * (cur[i - 1, 1] + cur[i + 1, 1]) - vy
            lo = 0.0
            hi = 1.0
            for _it in range(iterations):
                t = 0.5 * (lo + hi)
                cur[i, 0] = vx + t * mx
                cur[i, 1] = vy + t * my
                if _visible(blocked, width, height, cur[i - 1], cur[i]) and _visible(
                    blocked, width, height, cur[i], cur[i + 1]
                ):
                    lo = t
                else:
                    hi = t
            cur[i, 0] = vx + lo * mx
            cur[i, 1] = vy + lo * my
            moved = max(moved, lo * math.hypot(mx, my))
        if not removed and moved < 1e-3:
            break
    return cur[:m].copy()


@njit_inline
def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-8 + 1e-5 * abs(b)  # numpy.isclose's tolerances


@njit
def finish(
    rec: Any,
    shift: int,
    start: int,
    goal: int,
    blocked: Any,
    width: int,
    height: int,
    ends: Any,
    snapped_start: bool,
    snapped_goal: bool,
    sweeps: int,
) -> Any:
    """The path a search found, in grid coordinates ``(N, 2)``, and its length in cells.

    The path is traced, its ends attached, and pulled taut.

    ``rec`` holds the search's records (:mod:`._search_kernels`: the parent in the low 32 bits of
    word ``2n + 1``) over the grid padded by one cell, ``2**shift`` cells wide; the parents are
    followed from ``goal`` to ``start`` and each cell becomes its centre in the unpadded grid
    (``blocked``, ``width`` x ``height``). ``ends`` is the exact start and goal ``[[x, y], [x, y]]``.
    An end that was not snapped replaces its cell's centre where the segment to the next vertex
    is visible, and is joined to the centre (a segment inside one free cell) where it is not; a
    snapped end keeps its cell centre. Then :func:`tighten` with ``sweeps`` sweeps (when > 0).
    """
    mask = (1 << shift) - 1
    count = 1
    n = goal
    while n != start:
        n = rec[2 * n + 1] & 0xFFFFFFFF
        count += 1
    pts = np.empty((count + 2, 2))
    lo = 1  # pts[lo:hi] is the path; one free row on either side for an attached end
    hi = count + 1
    n = goal
    for i in range(hi - 1, lo - 1, -1):
        pts[i, 0] = (n & mask) - 0.5
        pts[i, 1] = (n >> shift) - 0.5
        n = rec[2 * n + 1] & 0xFFFFFFFF
    if not snapped_goal:
        gx = ends[1, 0]
        gy = ends[1, 1]
        if hi - lo >= 2 and line_of_sight_float(
            blocked, width, height, pts[hi - 2, 0], pts[hi - 2, 1], gx, gy
        ):
            pts[hi - 1, 0] = gx
            pts[hi - 1, 1] = gy
        elif not (_close(pts[hi - 1, 0], gx) and _close(pts[hi - 1, 1], gy)):
            pts[hi, 0] = gx
            pts[hi, 1] = gy
            hi += 1
    if not snapped_start:
        sx = ends[0, 0]
        sy = ends[0, 1]
        if hi - lo >= 2 and line_of_sight_float(
            blocked, width, height, sx, sy, pts[lo + 1, 0], pts[lo + 1, 1]
        ):
            pts[lo, 0] = sx
            pts[lo, 1] = sy
        elif not (_close(pts[lo, 0], sx) and _close(pts[lo, 1], sy)):
            lo -= 1
            pts[lo, 0] = sx
            pts[lo, 1] = sy
    if hi - lo == 1:
        pts[hi] = pts[lo]
        hi += 1
    out = pts[lo:hi].copy()
    if sweeps > 0 and hi - lo > 2:
        out = tighten(blocked, width, height, out, sweeps, 12)
    length = 0.0
    for i in range(out.shape[0] - 1):
        length += math.sqrt((out[i + 1, 0] - out[i, 0]) ** 2 + (out[i + 1, 1] - out[i, 1]) ** 2)
    return out, length


@njit_inline
def _pieces(seg: Any, step: float) -> int:
    total = 0
    for length in seg:
        total += max(1, math.ceil(length / step - 1e-9))
    return total


@njit
def resample(pts: Any, max_points: int, spacing: float) -> Any:
    """Divide every segment of a polyline ``(N, 2)`` (N >= 2) so that points are at most ``spacing`` apart.

    Every vertex is kept. When that would give more than ``max_points`` points the spacing grows
    (bisection for the smallest that fits) until it does not.
    """
    m = pts.shape[0]
    seg = np.empty(m - 1)
    for i in range(m - 1):
        dx = pts[i + 1, 0] - pts[i, 0]
        dy = pts[i + 1, 1] - pts[i, 1]
        seg[i] = math.sqrt(dx * dx + dy * dy)
    step = spacing
    if _pieces(seg, step) + 1 > max_points:
        # The number of points falls as the step grows.
        lo = step
        hi = seg.max() + 1e-9
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            if _pieces(seg, mid) + 1 > max_points:
                lo = mid
            else:
                hi = mid
        step = hi
    out = np.empty((_pieces(seg, step) + 1, 2))
    out[0, 0] = pts[0, 0]
    out[0, 1] = pts[0, 1]
    j = 1
    for s in range(m - 1):
        k = max(1, math.ceil(seg[s] / step - 1e-9))
        ax = pts[s, 0]
        ay = pts[s, 1]
        dx = pts[s + 1, 0] - ax
        dy = pts[s + 1, 1] - ay
        for i in range(1, k + 1):
            t = i / k
            out[j, 0] = ax + dx * t
            out[j, 1] = ay + dy * t
            j += 1
    return out
