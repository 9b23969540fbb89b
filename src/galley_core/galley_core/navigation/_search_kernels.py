# Kernels take many positional arguments and branch a lot: numba compiles plain loops best.
# ruff: noqa: PLR0912, PLR0915, PLR0917
"""The compiled, resumable Lazy Theta* search over the cells of a padded grid.

Compiled with numba where it is installed (:mod:`galley_core._jit`). Grid conventions: cell
``n = r * width + c`` of the flattened ``(height, width)`` grid; vertices are cell centres. The
search reads the grid through two byte arrays made once per map (:mod:`._grid_kernels`): ``cells``
(:func:`sight_cells`, what :func:`galley_core.navigation._sight_kernels.line_of_sight` walks)
and ``moves`` (:func:`move_masks`, the moves allowed from each cell).

Memory layout. Each cell's search state is one 16-byte record in an int64 array ``rec`` of
``2 * cells`` words: word ``2n`` is g (read and written through ``rg``, a float64 view of the
same buffer), word ``2n + 1`` packs the cell's mark (high 32 bits) and parent (low 32 bits), so
that a neighbour's mark, g and parent share one cache line. Marks make the records valid for one
search only (``2 sid``: seen, ``2 sid + 1``: closed), so nothing is cleared between searches.

The open list is a bucket queue on f with exact order. Bucket ``b`` holds the entries with
``floor((f - f_start) / BUCKET_WIDTH) == b``; the buckets ahead of the current one are unsorted
linked lists in an entry pool (``pool_fg``: f and g, ``pool_nx``: cell and next entry), a ring of
``len(heads)`` buckets (a power of two). The current bucket, with every entry whose bucket is not
ahead of it (f in Lazy Theta* need not grow from pop to pop), is a small binary heap (``heap_fg``,
``heap_n``) ordered by f, then deeper g first. An improved cell is pushed again instead of moved
(decrease-key); entries whose cell is closed or whose g is no longer the cell's are skipped when
popped. The pops come in the order of one binary heap over all entries.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from galley_core._jit import njit, njit_inline
from galley_core.navigation._grid_kernels import MOVE_DC, MOVE_DR
from galley_core.navigation._sight_kernels import line_of_sight

__all__ = ["BUCKET_WIDTH", "FOUND", "GROW", "NO_PATH", "PAUSED", "STATE_SIZE", "search"]

FOUND = 0
PAUSED = 1
NO_PATH = 2
#: The entry pool or the heap is full: the caller enlarges them and calls again.
GROW = 3

#: Width of a bucket of the open list in f (cells). Narrow, so that the current bucket's heap
#: stays a few entries deep: with 0.5 its sift-down was about a quarter of the search on random
#: 15 % grids; 1/64 plans the same paths about 0.85 of the time there (bench/planner.py).
BUCKET_WIDTH = 1.0 / 64.0
#: Words of the search's resumable state: [heap size, expansions, current bucket, pool top,
#: free entry, entries in buckets].
STATE_SIZE = 6
_LOW = 0xFFFFFFFF
_SQRT2 = math.sqrt(2.0)


@njit_inline
def _before(f1: float, g1: float, f2: float, g2: float) -> bool:
    """Whether entry (f1, g1) pops before (f2, g2): lower f first, on ties the deeper (higher g)."""
    return f1 < f2 or (f1 == f2 and g1 > g2)


@njit_inline
def _heap_push(hfg: Any, hn: Any, size: int, fv: float, gv: float, node: int) -> None:
    """Put (fv, gv, node) into the heap of ``size`` entries (the caller counts it)."""
    i = size
    while i > 0:
        up = (i - 1) >> 1
        fu = hfg[2 * up]
        gu = hfg[2 * up + 1]
        if not _before(fv, gv, fu, gu):
            break
        hfg[2 * i] = fu
        hfg[2 * i + 1] = gu
        hn[i] = hn[up]
        i = up
    hfg[2 * i] = fv
    hfg[2 * i + 1] = gv
    hn[i] = node


@njit_inline
def _heap_pop_fix(hfg: Any, hn: Any, size: int) -> None:
    """Move the last entry (index ``size``) into the hole at the top and down."""
    fv = hfg[2 * size]
    gv = hfg[2 * size + 1]
    node = hn[size]
    i = 0
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        fc = hfg[2 * child]
        gc = hfg[2 * child + 1]
        if child + 1 < size:
            f2 = hfg[2 * child + 2]
            g2 = hfg[2 * child + 3]
            if _before(f2, g2, fc, gc):
                child += 1
                fc = f2
                gc = g2
        if not _before(fc, gc, fv, gv):
            break
        hfg[2 * i] = fc
        hfg[2 * i + 1] = gc
        hn[i] = hn[child]
        i = child
    hfg[2 * i] = fv
    hfg[2 * i + 1] = gv
    hn[i] = node


@njit_inline
def _bucket_of(f: float, f0: float, inv_width: float) -> int:
    return math.floor((f - f0) * inv_width)


@njit_inline
def _pool_put(
    pfg: Any, pnx: Any, heads: Any, slot: int, fv: float, gv: float, node: int, top: int, free: int
) -> tuple[int, int]:
    """Link (fv, gv, node) into ring slot ``slot`` in a free entry (the caller checked room): (top, free)."""
    e = free
    if e >= 0:
        free = pnx[2 * e + 1]
    else:
        e = top
        top += 1
    pfg[2 * e] = fv
    pfg[2 * e + 1] = gv
    pnx[2 * e] = node
    pnx[2 * e + 1] = heads[slot]
    heads[slot] = e
    return top, free


@njit_inline
def _save(st: Any, size: int, done: int, cur: int, top: int, free: int, queued: int) -> None:
    """Keep the search's state for the next call (see :data:`STATE_SIZE`)."""
    st[0] = size
    st[1] += done
    st[2] = cur
    st[3] = top
    st[4] = free
    st[5] = queued


@njit
def search(
    cells: Any,
    moves: Any,
    shift: int,
    start: int,
    goal: int,
    sid: int,
    rec: Any,
    rg: Any,
    heap_fg: Any,
    heap_n: Any,
    pool_fg: Any,
    pool_nx: Any,
    heads: Any,
    st: Any,
    budget: int,
    heuristic_weight: float,
) -> int:
    """Lazy Theta* (Nash, Koenig & Tovey, 2010) from ``start`` to ``goal`` (cell indices), resumable.

    Theta* checks the line of sight from a cell's parent to each of its eight neighbours; Lazy
    Theta* instead gives each neighbour the parent's straight path on trust and checks that one
    line when the neighbour is expanded. Where it is not visible, the cell takes the best closed
    neighbour as its parent instead (a path of grid moves, always valid). One line-of-sight test
    per expansion instead of up to eight.

    ``cells`` and ``moves`` are ``2**shift`` cells wide (rows and columns from cells by shifts and
    masks, no division), made from a grid with a blocked border at least one cell wide (the caller
    pads the grid), so that neighbours need no bounds checks. ``rec``/``rg`` and the open list are
    described in the module docstring; ``heads`` (a power-of-two length) must be all -1 and ``st``
    (:data:`STATE_SIZE` words) all 0 on the first call. Call again with the same arrays while it
    returns :data:`PAUSED` (after ``budget`` more expansions) or :data:`GROW` (after enlarging the
    heap or the pool, contents kept).

    Returns:
        FOUND (follow the parents from ``goal``), PAUSED, GROW, or NO_PATH.
    """
    width = 1 << shift
    col_mask = width - 1
    seen = 2 * sid
    shut = seen + 1
    seen_hi = seen << 32
    goal_r = goal >> shift
    goal_c = goal & col_mask
    start_r = start >> shift
    f0 = heuristic_weight * math.sqrt((start_r - goal_r) ** 2 + ((start & col_mask) - goal_c) ** 2)
    inv_width = 1.0 / BUCKET_WIDTH
    ring_mask = heads.shape[0] - 1
    heap_cap = heap_n.shape[0]
    pool_cap = pool_nx.shape[0] // 2
    dr_k = np.array(MOVE_DR)
    dc_k = np.array(MOVE_DC)
    size = st[0]
    cur = st[2]
    top = st[3]  # pool: entries used so far, first free entry (-1: none), entries in buckets
    free = st[4]
    queued = st[5]
    if st[1] == 0 and size == 0 and top == 0:
        rg[2 * start] = 0.0
        rec[2 * start + 1] = seen_hi | start
        heap_fg[0] = f0
        heap_fg[1] = 0.0
        heap_n[0] = start
        size = 1
        free = -1
    done = 0
    while True:
        if size == 0:
            # Open the next non-empty bucket: its entries go into the heap, or on round the ring.
            if queued == 0:
                st[0] = 0
                st[1] += done
                return NO_PATH
            cur += 1
            slot = cur & ring_mask
            e = heads[slot]
            if e < 0:
                continue
            if queued > heap_cap:
                _save(st, size, done, cur - 1, top, free, queued)
                return GROW
            heads[slot] = -1
            while e >= 0:
                nxt = pool_nx[2 * e + 1]
                fv = pool_fg[2 * e]
                gv = pool_fg[2 * e + 1]
                node = pool_nx[2 * e]
                pool_nx[2 * e + 1] = free  # free the entry
                free = e
                queued -= 1
                b = _bucket_of(fv, f0, inv_width)
                if b <= cur:
                    _heap_push(heap_fg, heap_n, size, fv, gv, node)
                    size += 1
                else:  # beyond the ring when it was pushed: on to its bucket, or round again
                    slot = min(b, cur + ring_mask) & ring_mask
                    top, free = _pool_put(pool_fg, pool_nx, heads, slot, fv, gv, node, top, free)
                    queued += 1
                e = nxt
            continue
        if done >= budget or size + 8 > heap_cap or top + 8 > pool_cap:
            _save(st, size, done, cur, top, free, queued)
            return PAUSED if done >= budget else GROW
        s = heap_n[0]
        g_e = heap_fg[1]
        size -= 1
        if size > 0:
            _heap_pop_fix(heap_fg, heap_n, size)
        info = rec[2 * s + 1]
        if (info >> 32) != seen or rg[2 * s] != g_e:
            continue  # closed already, or pushed again with a lower g
        done += 1
        s_r = s >> shift
        s_c = s & col_mask
        p = info & _LOW
        p_r = p >> shift
        p_c = p & col_mask
        if p != s and not line_of_sight(cells, width, p_r, p_c, s_r, s_c):
            # The trusted straight path is blocked: the best closed neighbour becomes the parent.
            best = math.inf
            best_n = -1
            allowed = moves[s]
            for k in range(8):
                if not (allowed >> k) & 1:
                    continue
                n = s + dr_k[k] * width + dc_k[k]
                if (rec[2 * n + 1] >> 32) != shut:
                    continue
                cand = rg[2 * n] + (_SQRT2 if k >= 4 else 1.0)
                if cand < best:
                    best = cand
                    best_n = n
            rg[2 * s] = best
            p = best_n
            p_r = p >> shift
            p_c = p & col_mask
        rec[2 * s + 1] = (shut << 32) | p
        if s == goal:
            _save(st, size, done, cur, top, free, queued)
            return FOUND
        g_p = rg[2 * p]
        allowed = moves[s]
        for k in range(8):
            if not (allowed >> k) & 1:
                continue
            dr = dr_k[k]
            dc = dc_k[k]
            n = s + dr * width + dc
            m = rec[2 * n + 1] >> 32
            if m == shut:
                continue
            # Straight from s's parent (through s when s is the start), sight checked on expansion.
            nr = s_r + dr
            nc = s_c + dc
            new_g = g_p + math.sqrt((nr - p_r) * (nr - p_r) + (nc - p_c) * (nc - p_c))
            if m == seen and new_g >= rg[2 * n]:
                continue
            rg[2 * n] = new_g
            rec[2 * n + 1] = seen_hi | p
            new_f = new_g + heuristic_weight * math.sqrt(
                (nr - goal_r) * (nr - goal_r) + (nc - goal_c) * (nc - goal_c)
            )
            b = _bucket_of(new_f, f0, inv_width)
            if b <= cur:
                _heap_push(heap_fg, heap_n, size, new_f, new_g, n)
                size += 1
            else:
                slot = min(b, cur + ring_mask) & ring_mask
                top, free = _pool_put(pool_fg, pool_nx, heads, slot, new_f, new_g, n, top, free)
                queued += 1
