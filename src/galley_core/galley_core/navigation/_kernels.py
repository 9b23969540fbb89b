# Kernels take many positional arguments and branch a lot: numba compiles plain loops best.
# ruff: noqa: PLR0912, PLR0915, PLR0917
"""Compiled kernels of the Theta* search: a resumable search and two line-of-sight tests.

Compiled with numba (``cache=True``, so a process pays the compile time once per machine); where
numba is not installed the same functions run as plain Python, correct but about 100 times slower.

Grid conventions: ``blocked`` is the flattened ``(height, width)`` uint8 mask, cell ``n = r * width + c``;
vertices are cell centres; continuous grid coordinates put the centre of cell (r, c) at
``(c + 0.5, r + 0.5)``. A segment is visible when every cell its closed path touches is unblocked;
where it passes exactly through a cell corner, both cells beside the corner must be unblocked
(no squeezing between diagonal neighbours).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

_numba_njit: Callable[..., Any] | None
try:
    from numba import njit as _numba_njit
except ImportError:  # pragma: no cover - exercised only where numba is missing
    _numba_njit = None

HAVE_NUMBA = _numba_njit is not None

__all__ = [
    "FOUND",
    "HAVE_NUMBA",
    "NO_PATH",
    "PAUSED",
    "line_of_sight",
    "line_of_sight_float",
    "search",
    "tighten",
]

FOUND = 0
PAUSED = 1
NO_PATH = 2

_SQRT2 = math.sqrt(2.0)


def _njit(func: Callable[..., Any]) -> Any:
    if _numba_njit is None:
        return func
    return _numba_njit(cache=True, nogil=True)(func)


@_njit
def line_of_sight(blocked: Any, width: int, r0: int, c0: int, r1: int, c1: int) -> bool:
    """Whether the segment between the centres of cells (r0, c0) and (r1, c1) is visible.

    Both end cells must be inside the grid; they are checked too.
    """
    if blocked[r0 * width + c0] or blocked[r1 * width + c1]:
        return False
    dc = c1 - c0
    dr = r1 - r0
    sc = 1 if dc > 0 else -1
    sr = 1 if dr > 0 else -1
    adc = abs(dc)
    adr = abs(dr)
    c = c0
    r = r0
    i = 0  # vertical cell boundaries crossed
    j = 0  # horizontal cell boundaries crossed
    while i < adc or j < adr:
        # Next vertical boundary at t = (i + 1/2) / adc, next horizontal one at (j + 1/2) / adr.
        if i < adc and j < adr:
            cmp = (2 * i + 1) * adr - (2 * j + 1) * adc
        elif i < adc:
            cmp = -1
        else:
            cmp = 1
        if cmp < 0:
            c += sc
            i += 1
        elif cmp > 0:
            r += sr
            j += 1
        else:  # through a corner: both cells beside it
            if blocked[r * width + c + sc] or blocked[(r + sr) * width + c]:
                return False
            c += sc
            r += sr
            i += 1
            j += 1
        if blocked[r * width + c]:
            return False
    return True


@_njit
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


@_njit
def _better(f: Any, g: Any, a: int, b: int) -> bool:
    """Heap order: lower f first; on ties the deeper node (higher g) first."""
    return bool(f[a] < f[b] or (f[a] == f[b] and g[a] > g[b]))


@_njit
def _sift_up(heap: Any, hpos: Any, f: Any, g: Any, i: int) -> None:
    node = heap[i]
    while i > 0:
        up = (i - 1) >> 1
        other = heap[up]
        if not _better(f, g, node, other):
            break
        heap[i] = other
        hpos[other] = i
        i = up
    heap[i] = node
    hpos[node] = i


@_njit
def _sift_down(heap: Any, hpos: Any, f: Any, g: Any, i: int, size: int) -> None:
    node = heap[i]
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        if child + 1 < size and _better(f, g, heap[child + 1], heap[child]):
            child += 1
        if not _better(f, g, heap[child], node):
            break
        heap[i] = heap[child]
        hpos[heap[i]] = i
        i = child
    heap[i] = node
    hpos[node] = i


@_njit
def _dist(dr: float, dc: float) -> float:
    return math.sqrt(dr * dr + dc * dc)


@_njit
def search(
    blocked: Any,
    width: int,
    height: int,
    start: int,
    goal: int,
    sid: int,
    stamp: Any,
    closed: Any,
    g: Any,
    f: Any,
    parent: Any,
    heap: Any,
    hpos: Any,
    state: Any,
    budget: int,
    heuristic_weight: float,
) -> int:
    """Theta* from ``start`` to ``goal`` (cell indices), resumable.

    Per-cell arrays are valid for this search only where ``stamp[n] == sid`` (``closed[n] == sid``
    marks closed cells), so that they need no clearing between searches. ``state`` holds
    ``[heap size, expansions]``. Call first with ``state[0] == 0`` to initialise, then again with
    the same arrays while it returns :data:`PAUSED` (after ``budget`` more expansions).

    Returns:
        FOUND (follow ``parent`` from ``goal``), PAUSED, or NO_PATH.
    """
    size = state[0]
    if state[1] == 0 and size == 0:
        stamp[start] = sid
        g[start] = 0.0
        gr = goal // width
        gc = goal - gr * width
        sr = start // width
        f[start] = heuristic_weight * _dist(sr - gr, start - sr * width - gc)
        parent[start] = start
        heap[0] = start
        hpos[start] = 0
        size = 1
    goal_r = goal // width
    goal_c = goal - goal_r * width
    done = 0
    while size > 0:
        if done >= budget:
            state[0] = size
            return PAUSED
        s = heap[0]
        if s == goal:
            state[0] = size
            return FOUND
        size -= 1
        if size > 0:
            heap[0] = heap[size]
            hpos[heap[0]] = 0
            _sift_down(heap, hpos, f, g, 0, size)
        hpos[s] = -1
        closed[s] = sid
        done += 1
        state[1] += 1
        s_r = s // width
        s_c = s - s_r * width
        g_s = g[s]
        p = parent[s]
        p_r = p // width
        p_c = p - p_r * width
        g_p = g[p]
        for k in range(8):
            if k == 0:
                dr, dc = 0, 1
            elif k == 1:
                dr, dc = 1, 0
            elif k == 2:
                dr, dc = 0, -1
            elif k == 3:
                dr, dc = -1, 0
            elif k == 4:
                dr, dc = 1, 1
            elif k == 5:
                dr, dc = 1, -1
            elif k == 6:
                dr, dc = -1, 1
            else:
                dr, dc = -1, -1
            nr = s_r + dr
            nc = s_c + dc
            if nr < 0 or nc < 0 or nr >= height or nc >= width:
                continue
            n = nr * width + nc
            if blocked[n] or closed[n] == sid:
                continue
            if dr != 0 and dc != 0 and (blocked[s_r * width + nc] or blocked[nr * width + s_c]):
                continue
            if stamp[n] != sid:
                stamp[n] = sid
                g[n] = math.inf
                hpos[n] = -1
            g_old = g[n]
            new_g = math.inf
            new_parent = -1
            if p != s:
                # Path 2: straight from s's parent, when visible. It is never longer than path 1,
                # so when it would not improve n neither would path 1.
                cand = g_p + _dist(nr - p_r, nc - p_c)
                if cand >= g_old:
                    continue
                if line_of_sight(blocked, width, p_r, p_c, nr, nc):
                    new_g = cand
                    new_parent = p
            if new_parent < 0:
                cand = g_s + (_SQRT2 if dr != 0 and dc != 0 else 1.0)
                if cand >= g_old:
                    continue
                new_g = cand
                new_parent = s
            g[n] = new_g
            parent[n] = new_parent
            f[n] = new_g + heuristic_weight * _dist(nr - goal_r, nc - goal_c)
            if hpos[n] < 0:
                heap[size] = n
                hpos[n] = size
                size += 1
                _sift_up(heap, hpos, f, g, size - 1)
            else:
                _sift_up(heap, hpos, f, g, hpos[n])
    state[0] = 0
    return NO_PATH


@_njit
def _visible(blocked: Any, width: int, height: int, a: Any, b: Any) -> bool:
    return bool(line_of_sight_float(blocked, width, height, a[0], a[1], b[0], b[1]))


@_njit
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
