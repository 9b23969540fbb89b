# Kernels take many positional arguments and branch a lot: numba compiles plain loops best.
# ruff: noqa: PLR0912, PLR0915, PLR0917
"""Compiled kernels of the Theta* search: a resumable Lazy Theta* search, line-of-sight tests, resampling.

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
    "free_radius",
    "line_of_sight",
    "line_of_sight_float",
    "resample",
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


def _njit_inline(func: Callable[..., Any]) -> Any:
    """A helper of the kernels, inlined where it is called (numba's IR inlining)."""
    if _numba_njit is None:
        return func
    return _numba_njit(cache=True, nogil=True, inline="always")(func)


@_njit
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


@_njit
def line_of_sight(blocked: Any, radius: Any, width: int, r0: int, c0: int, r1: int, c1: int) -> bool:
    """Whether the segment between the centres of cells (r0, c0) and (r1, c1) is visible.

    Both end cells must be inside the grid; they are checked too. ``radius`` is
    :func:`free_radius` of ``blocked``: where the walk stands in a cell whose square of radius
    k >= 2 is free, it jumps to the last cell of the segment inside that square (the cells between
    are known free), so that long lines through open space cost a few steps. The cells visited
    are those of the exact cell-by-cell walk, in integers.
    """
    n = r0 * width + c0
    if blocked[n] or blocked[r1 * width + c1]:
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
        k = np.int64(radius[n])
        if k >= 2:
            # Cross major boundaries i .. m and every minor one up to the same t: at most k cells
            # along either axis (small <= big), all inside the free square.
            m = min(i + k - 1, big - 1)
            jj = ((2 * m + 1) * small + big) // (2 * big)
            n += (m + 1 - i) * sa + (jj - j) * sb
            i = m + 1
            j = jj
            continue
        cmp = (2 * i + 1) * small - (2 * j + 1) * big if j < small else -1
        if cmp < 0:
            n += sa
            i += 1
        elif cmp > 0:
            n += sb
            j += 1
        else:  # through a corner: both cells beside it
            if blocked[n + sa] or blocked[n + sb]:
                return False
            n += sa + sb
            i += 1
            j += 1
        if blocked[n]:
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


# The open list: a binary heap whose entries carry their keys (hf: f, hg: g, hn: the cell), so
# that sifting reads contiguous memory; hpos[cell] is the cell's entry (-1: not in the heap).
# Order: lower f first; on ties the deeper cell (higher g) first.


@_njit_inline
def _sift_up(hf: Any, hg: Any, hn: Any, hpos: Any, i: int, fv: float, gv: float, node: int) -> None:
    """Put ``node`` with keys (fv, gv) into the hole at entry i and move it up."""
    while i > 0:
        up = (i - 1) >> 1
        fu = hf[up]
        if not (fv < fu or (fv == fu and gv > hg[up])):
            break
        hf[i] = fu
        hg[i] = hg[up]
        other = hn[up]
        hn[i] = other
        hpos[other] = i
        i = up
    hf[i] = fv
    hg[i] = gv
    hn[i] = node
    hpos[node] = i


@_njit_inline
def _sift_down(hf: Any, hg: Any, hn: Any, hpos: Any, size: int) -> None:
    """Move the last entry into the hole at the top and down (``size`` counts the entries left)."""
    fv = hf[size]
    gv = hg[size]
    node = hn[size]
    i = 0
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        fc = hf[child]
        gc = hg[child]
        if child + 1 < size:
            f2 = hf[child + 1]
            if f2 < fc or (f2 == fc and hg[child + 1] > gc):
                child += 1
                fc = f2
                gc = hg[child]
        if not (fc < fv or (fc == fv and gc > gv)):
            break
        hf[i] = fc
        hg[i] = gc
        other = hn[child]
        hn[i] = other
        hpos[other] = i
        i = child
    hf[i] = fv
    hg[i] = gv
    hn[i] = node
    hpos[node] = i


@_njit_inline
def _dist(dr: float, dc: float) -> float:
    return math.sqrt(dr * dr + dc * dc)


@_njit_inline
def _step(k: int) -> tuple[int, int]:
    """The k-th of the 8 moves (dr, dc): 4 straight ones first, then the diagonals."""
    if k == 0:
        return 0, 1
    if k == 1:
        return 1, 0
    if k == 2:
        return 0, -1
    if k == 3:
        return -1, 0
    if k == 4:
        return 1, 1
    if k == 5:
        return 1, -1
    if k == 6:
        return -1, 1
    return -1, -1


@_njit
def search(
    blocked: Any,
    radius: Any,
    width: int,
    start: int,
    goal: int,
    sid: int,
    mark: Any,
    g: Any,
    parent: Any,
    hf: Any,
    hg: Any,
    hn: Any,
    hpos: Any,
    state: Any,
    budget: int,
    heuristic_weight: float,
) -> int:
    """Lazy Theta* (Nash, Koenig & Tovey, 2010) from ``start`` to ``goal`` (cell indices), resumable.

    Theta* checks the line of sight from a cell's parent to each of its eight neighbours; Lazy
    Theta* instead gives each neighbour the parent's straight path on trust and checks that one
    line when the neighbour is expanded. Where it is not visible, the cell takes the best closed
    neighbour as its parent instead (a path of grid moves, always valid). One line-of-sight test
    per expansion instead of up to eight.

    ``blocked`` must have a blocked border one cell wide (the caller pads the grid), so that
    neighbours need no bounds checks. Per-cell arrays are valid for this search only where
    ``mark[n] >= 2 * sid`` (``2 * sid``: seen, ``2 * sid + 1``: closed), so that they need no
    clearing between searches. ``state`` holds ``[heap size, expansions]``. Call first with
    ``state[0] == 0`` to initialise, then again with the same arrays while it returns
    :data:`PAUSED` (after ``budget`` more expansions).

    Returns:
        FOUND (follow ``parent`` from ``goal``), PAUSED, or NO_PATH.
    """
    seen = 2 * sid
    shut = seen + 1
    size = state[0]
    goal_r = goal // width
    goal_c = goal - goal_r * width
    if state[1] == 0 and size == 0:
        mark[start] = seen
        g[start] = 0.0
        sr = start // width
        parent[start] = start
        hf[0] = heuristic_weight * _dist(sr - goal_r, start - sr * width - goal_c)
        hg[0] = 0.0
        hn[0] = start
        hpos[start] = 0
        size = 1
    done = 0
    while size > 0:
        if done >= budget:
            state[0] = size
            state[1] += done
            return PAUSED
        s = hn[0]
        size -= 1
        if size > 0:
            _sift_down(hf, hg, hn, hpos, size)
        hpos[s] = -1
        mark[s] = shut
        done += 1
        s_r = s // width
        s_c = s - s_r * width
        p = parent[s]
        p_r = p // width
        p_c = p - p_r * width
        if p != s and not line_of_sight(blocked, radius, width, p_r, p_c, s_r, s_c):
            # The trusted straight path is blocked: the best closed neighbour becomes the parent.
            best = math.inf
            best_n = -1
            for k in range(8):
                dr, dc = _step(k)
                n = s + dr * width + dc
                if mark[n] != shut or blocked[n]:
                    continue
                if dr != 0 and dc != 0 and (blocked[s + dc] or blocked[s + dr * width]):
                    continue
                cand = g[n] + (_SQRT2 if dr != 0 and dc != 0 else 1.0)
                if cand < best:
                    best = cand
                    best_n = n
            g[s] = best
            parent[s] = best_n
            p = best_n
            p_r = p // width
            p_c = p - p_r * width
        if s == goal:
            state[0] = size
            state[1] += done
            return FOUND
        g_p = g[p]
        for k in range(8):
            dr, dc = _step(k)
            n = s + dr * width + dc
            if blocked[n]:
                continue
            m = mark[n]
            if m == shut:
                continue
            if dr != 0 and dc != 0 and (blocked[s + dc] or blocked[s + dr * width]):
                continue
            if m != seen:
                mark[n] = seen
                g[n] = math.inf
                hpos[n] = -1
            # Straight from s's parent (through s when s is the start), sight checked on expansion.
            nr = s_r + dr
            nc = s_c + dc
            new_g = g_p + _dist(nr - p_r, nc - p_c)
            if new_g >= g[n]:
                continue
            g[n] = new_g
            parent[n] = p
            new_f = new_g + heuristic_weight * _dist(nr - goal_r, nc - goal_c)
            if hpos[n] < 0:
                size += 1
                _sift_up(hf, hg, hn, hpos, size - 1, new_f, new_g, n)
            else:
                _sift_up(hf, hg, hn, hpos, hpos[n], new_f, new_g, n)
    state[0] = 0
    state[1] += done
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


@_njit_inline
def _pieces(seg: Any, step: float) -> int:
    total = 0
    for length in seg:
        total += max(1, math.ceil(length / step - 1e-9))
    return total


@_njit
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
