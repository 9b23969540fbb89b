# Kernels take many positional arguments and branch a lot: numba compiles plain loops best.
# ruff: noqa: PLR0912, PLR0915, PLR0917
"""The compiled, resumable Lazy Theta* search over the cells of a padded grid.

Compiled with numba where it is installed (:mod:`galley_core._jit`). Grid conventions: ``blocked``
is the flattened ``(height, width)`` uint8 mask, cell ``n = r * width + c``; vertices are cell
centres; continuous grid coordinates put the centre of cell (r, c) at ``(c + 0.5, r + 0.5)``.
Sight between cells is :func:`galley_core.navigation._sight_kernels.line_of_sight`.
"""

from __future__ import annotations

import math
from typing import Any

from galley_core._jit import njit, njit_inline
from galley_core.navigation._sight_kernels import line_of_sight

__all__ = ["FOUND", "NO_PATH", "PAUSED", "search"]

FOUND = 0
PAUSED = 1
NO_PATH = 2

_SQRT2 = math.sqrt(2.0)


# The open list: a binary heap whose entries carry their keys (hf: f, hg: g, hn: the cell), so
# that sifting reads contiguous memory; hpos[cell] is the cell's entry (-1: not in the heap).
# Order: lower f first; on ties the deeper cell (higher g) first.


@njit_inline
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


@njit_inline
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


@njit_inline
def _dist(dr: float, dc: float) -> float:
    return math.sqrt(dr * dr + dc * dc)


@njit_inline
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


@njit
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
