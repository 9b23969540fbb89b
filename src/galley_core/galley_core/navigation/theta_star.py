"""Theta*: any-angle shortest paths on an occupancy grid that keep a clearance R from obstacles.

Kitchen-R plans with Theta* (Nash et al., 2007) over a 2D occupancy grid; every segment of the
returned polyline stays at least R from obstacles, R chosen from the robot's footprint.

How the clearance is kept. Distances to obstacles are measured to the centres of obstacle cells
(as nav2's inflation layer does). A cell is *blocked* when its centre lies closer than
``R + resolution / sqrt(2)`` to an obstacle centre (Euclidean distance transform). The search
runs over cell centres, and a segment is accepted only when every cell it touches is unblocked.
Every point of such a segment lies in an unblocked cell, so within ``resolution / sqrt(2)`` of a
centre that is at least ``R + resolution / sqrt(2)`` from every obstacle centre: the whole segment
keeps R. A robot of radius r whose footprint must also stay off the cells' squares needs
``R >= r + resolution / sqrt(2)``; :func:`~galley_core.navigation.paths.clearance_from_footprint` computes r.

The search itself (:mod:`galley_core.navigation._search_kernels`) is Lazy Theta* (Nash, Koenig & Tovey,
2010: one line-of-sight test per expanded cell instead of one per neighbour, which long lines
through open space skip across in jumps), compiled with numba and resumable: it runs in slices of
expansions, and between slices :meth:`ThetaStar.plan` asks the ``cancel_checker`` and the time
limit. Its open list is a bucket queue on f whose current bucket is a small heap (the pop order of
one binary heap, without decrease-key), each cell's state is one 16-byte record, and the padded
grid is a power of two wide, so that the search divides nothing; the planner keeps these buffers
from one search to the next. A final compiled pass traces the path and pulls it taut.
Unreachable goals are answered without a search: the connected regions of the free space are
labelled once per map.

Example::

    planner = ThetaStar(grid=load_map_yaml("maps/kitchen.yaml"), config=ThetaStarConfig(clearance_m=0.3))
    result = planner.plan((0.5, 0.5), (4.0, 2.0))
    if result.ok:
        waypoints = result.waypoints    # (N <= 100, 2) metres, map frame
    else:
        print(result.reason)
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import ndimage

from galley_core.config import Config, param
from galley_core.geometry import Pose2D
from galley_core.navigation._grid_kernels import free_radius, move_masks, sight_cells
from galley_core.navigation._path_kernels import finish
from galley_core.navigation._search_kernels import FOUND, GROW, PAUSED, STATE_SIZE, search
from galley_core.navigation.grid import OCCUPIED, UNKNOWN, OccupancyGrid, inflate
from galley_core.navigation.paths import PlanResult, resample_polyline

__all__ = ["ThetaStar", "ThetaStarConfig"]

#: Expansions between two calls of the cancel checker (about a millisecond of search).
EXPANSIONS_PER_SLICE = 20_000
#: Buckets in the open list's ring (each _search_kernels.BUCKET_WIDTH of f wide, so the ring spans
#: 128 cells of f; entries further ahead go round it again).
BUCKET_RING = 8192
#: Entries the open list's heap and pool start with; they double when a search needs more.
_START_CAPACITY = 4096
_HALF_DIAGONAL = 1.0 / math.sqrt(2.0)


@dataclass(frozen=True)
class ThetaStarConfig(Config):
    """Parameters of :class:`ThetaStar`; every distance in metres."""

    # 0.4 m: the circumscribed radius of galley_mm's 0.6 m x 0.5 m base (0.39 m), so that the base
    # can turn anywhere on the path without touching anything.
    clearance_m: float = param(
        0.4, "R: every path segment keeps at least this distance from obstacle cell centres", unit="m", ge=0.0
    )
    occupied_threshold: int = param(
        65, "cells with an occupancy value (percent) at or above this are obstacles", ge=1, le=100
    )
    allow_unknown: bool = param(False, "plan through unknown cells (-1); otherwise they are obstacles")
    snap_to_free: bool = param(
        False, "move a start or goal that lies in an obstacle or its inflation to the nearest free cell"
    )
    snap_radius_m: float = param(0.5, "how far a start or goal may be moved by snapping", unit="m", ge=0.0)
    max_waypoints: int = param(100, "the most waypoints handed to the controller", ge=2)
    waypoint_spacing_m: float = param(
        0.25, "waypoints are at most this far apart (more when max_waypoints requires)", unit="m", gt=0.0
    )
    heuristic_weight: float = param(
        1.0, "weight of the straight-line heuristic; > 1 searches less and plans longer paths", ge=1.0
    )
    tighten_sweeps: int = param(
        20, "sweeps of the pass that pulls the path taut (vertices slide off cell centres); 0: none", ge=0
    )
    max_planning_time_s: float = param(
        5.0, "give up after this much wall-clock time; 0: no limit", unit="s", ge=0.0
    )


class ThetaStar:
    """Theta* over one occupancy grid; see the module docstring.

    Construction prepares the grid (obstacles, inflation, connected regions, work arrays); each
    :meth:`plan` then only searches. Build a new planner when the map or the configuration changes.

    Args:
        grid: the occupancy grid.
        config: the planner's parameters.
    """

    def __init__(self, *, grid: OccupancyGrid, config: ThetaStarConfig | None = None) -> None:
        self.grid = grid
        self.config = config or ThetaStarConfig()
        c = self.config
        data = grid.data
        self.obstacles: NDArray[np.bool_] = data >= c.occupied_threshold
        if not c.allow_unknown:
            self.obstacles |= data == UNKNOWN
        #: Clearance radius in cells that a cell centre must keep (see the module docstring).
        self.blocking_radius_cells = c.clearance_m / grid.resolution + _HALF_DIAGONAL
        blocked, distance = inflate(self.obstacles, self.blocking_radius_cells)
        self.blocked: NDArray[np.bool_] = blocked
        #: Distance of every cell centre to the nearest obstacle centre, metres.
        self.obstacle_distance_m: NDArray[np.float64] = distance * grid.resolution
        # Regions connected by moves the search can make (diagonals need both side cells free,
        # so 4-connectivity): a goal in another region is unreachable, known without a search.
        self._labels, _ = ndimage.label(~blocked)
        h, w = blocked.shape
        self._blocked_flat = np.ascontiguousarray(blocked.reshape(-1), dtype=np.uint8)
        # The search runs on the grid padded with a blocked border (no bounds checks in its loop),
        # as wide as the next power of two (rows and columns of a cell index by shift and mask).
        self._shift = (w + 1).bit_length()
        pw = 1 << self._shift
        padded = np.ones((h + 2, pw), dtype=np.uint8)
        padded[1:-1, 1 : w + 1] = blocked
        self._padded_width = pw
        flat = padded.reshape(-1)
        self._cells = sight_cells(flat, free_radius(flat, pw, h + 2))
        self._moves = move_masks(flat, pw, h + 2)
        n = padded.size
        if n >= 2**31:
            raise ValueError(f"grid of {h} x {w} cells is too large for Theta* (at most 2**31 cells)")
        # One 16-byte record per cell (g; mark and parent) and the open list's buffers, reused by
        # every search (see _search_kernels); the heap and the pool grow when a search needs more.
        self._rec = np.zeros(2 * n, dtype=np.int64)
        self._rec_g = self._rec.view(np.float64)
        self._heads = np.full(BUCKET_RING, -1, dtype=np.int64)
        self._heap_fg = np.empty(2 * _START_CAPACITY, dtype=np.float64)
        self._heap_n = np.empty(_START_CAPACITY, dtype=np.int64)
        self._pool_fg = np.empty(2 * _START_CAPACITY, dtype=np.float64)
        self._pool_nx = np.empty(2 * _START_CAPACITY, dtype=np.int64)
        self._state = np.zeros(STATE_SIZE, dtype=np.int64)
        self._sid = 0

    def inflated_map(self) -> NDArray[np.int8]:
        """The grid as the planner sees it: 100 obstacle, 99 too close to one, -1 unknown, 0 free."""
        out = np.zeros(self.blocked.shape, dtype=np.int8)
        out[self.blocked] = 99
        out[self.obstacles] = OCCUPIED
        if self.config.allow_unknown:
            out[(self.grid.data == UNKNOWN) & ~self.blocked] = UNKNOWN
        return out

    def plan(
        self,
        start: Pose2D | Sequence[float],
        goal: Pose2D | Sequence[float],
        cancel_checker: Callable[[], bool] | None = None,
    ) -> PlanResult:
        """Plan from ``start`` to ``goal`` (map-frame positions in metres; headings are ignored).

        Args:
            start, goal: ``(x, y)`` or a :class:`Pose2D`.
            cancel_checker: called about every millisecond of search; returning True cancels.

        Returns:
            A :class:`PlanResult`; failures carry a code and a reason instead of raising.
        """
        t0 = time.perf_counter()
        try:
            sx, sy = _xy(start, "start")
            gx, gy = _xy(goal, "goal")
        except ValueError as err:
            return PlanResult(False, "invalid_input", str(err), planning_time_s=time.perf_counter() - t0)
        grid = self.grid
        cells: list[tuple[int, int]] = []
        snapped: list[bool] = []
        for name, (x, y) in (("start", (sx, sy)), ("goal", (gx, gy))):
            cell, moved, failure = self._free_cell(name, x, y)
            if failure is not None:
                return PlanResult(False, failure[0], failure[1], planning_time_s=time.perf_counter() - t0)
            assert cell is not None
            cells.append(cell)
            snapped.append(moved)
        (sr, sc), (gr, gc) = cells
        if self._labels[sr, sc] != self._labels[gr, gc]:
            return PlanResult(
                False,
                "no_path",
                f"no path from start ({sx:.2f}, {sy:.2f}) to goal ({gx:.2f}, {gy:.2f}): the goal lies "
                f"in a region of the map the robot cannot reach with clearance "
                f"{self.config.clearance_m} m; choose another goal or lower clearance_m",
                planning_time_s=time.perf_counter() - t0,
            )
        width, height = grid.width, grid.height
        pw = self._padded_width
        start_n, goal_n = (sr + 1) * pw + sc + 1, (gr + 1) * pw + gc + 1
        status, expansions, stopped = self._search(start_n, goal_n, t0, cancel_checker)
        if stopped is not None:
            return stopped
        if status != FOUND:  # the labels say reachable, so this is a bug, not user input
            raise RuntimeError(f"Theta* found no path between connected cells {cells}")
        vertices, length_cells = finish(
            self._rec,
            self._shift,
            start_n,
            goal_n,
            self._blocked_flat,
            width,
            height,
            np.array([grid.world_to_grid_xy(sx, sy), grid.world_to_grid_xy(gx, gy)]),
            snapped[0],
            snapped[1],
            self.config.tighten_sweeps,
        )
        path = grid.grid_to_world(vertices)
        length = float(length_cells) * grid.resolution
        c = self.config
        common = {
            "expansions": expansions,
            "start_snapped": snapped[0],
            "goal_snapped": snapped[1],
        }
        if len(path) > c.max_waypoints:
            return PlanResult(
                False,
                "too_many_waypoints",
                f"the path needs {len(path)} vertices, more than max_waypoints = {c.max_waypoints}; "
                "raise max_waypoints",
                planning_time_s=time.perf_counter() - t0,
                **common,  # type: ignore[arg-type]
            )
        waypoints = resample_polyline(path, c.max_waypoints, c.waypoint_spacing_m)
        return PlanResult(
            True,
            "ok",
            "",
            path=path,
            waypoints=waypoints,
            length_m=length,
            planning_time_s=time.perf_counter() - t0,
            **common,  # type: ignore[arg-type]
        )

    # -- helpers -------------------------------------------------------------------------------

    def _search(
        self, start_n: int, goal_n: int, t0: float, cancel_checker: Callable[[], bool] | None
    ) -> tuple[int, int, PlanResult | None]:
        """Run the kernel slice by slice: (status, expansions, failure result or None)."""
        self._sid += 1
        if self._sid >= 2**30 - 1:  # marks are 2 sid and 2 sid + 1 in the high half of a word
            self._rec[1::2] = 0
            self._sid = 1
        state = self._state
        state[:] = 0
        self._heads.fill(-1)
        limit = self.config.max_planning_time_s
        while True:
            status = search(
                self._cells,
                self._moves,
                self._shift,
                start_n,
                goal_n,
                self._sid,
                self._rec,
                self._rec_g,
                self._heap_fg,
                self._heap_n,
                self._pool_fg,
                self._pool_nx,
                self._heads,
                state,
                EXPANSIONS_PER_SLICE,
                self.config.heuristic_weight,
            )
            if status == GROW:
                self._grow()
                continue
            if status != PAUSED:
                break
            elapsed = time.perf_counter() - t0
            if cancel_checker is not None and cancel_checker():
                return (
                    status,
                    int(state[1]),
                    PlanResult(
                        False,
                        "canceled",
                        "planning was canceled by the caller",
                        expansions=int(state[1]),
                        planning_time_s=elapsed,
                    ),
                )
            if limit > 0.0 and elapsed > limit:
                return (
                    status,
                    int(state[1]),
                    PlanResult(
                        False,
                        "timeout",
                        f"no path found within max_planning_time_s = {limit} s ({int(state[1])} cells "
                        "expanded); raise max_planning_time_s or heuristic_weight",
                        expansions=int(state[1]),
                        planning_time_s=elapsed,
                    ),
                )
        return status, int(state[1]), None

    def _grow(self) -> None:
        """Double the open list's heap and entry pool, keeping their contents."""
        cap = 2 * len(self._heap_n)
        self._heap_fg = np.resize(self._heap_fg, 2 * cap)
        self._heap_n = np.resize(self._heap_n, cap)
        self._pool_fg = np.resize(self._pool_fg, 2 * cap)
        self._pool_nx = np.resize(self._pool_nx, 2 * cap)

    def _free_cell(
        self, name: str, x: float, y: float
    ) -> tuple[tuple[int, int] | None, bool, tuple[str, str] | None]:
        """The cell of (x, y), snapped if allowed: (cell, snapped, None) or (None, False, (code, reason))."""
        grid = self.grid
        r, c = grid.world_to_cell(x, y)
        if not grid.contains(r, c):
            x0, y0 = grid.grid_to_world([[0.0, 0.0]])[0]
            x1, y1 = grid.grid_to_world([[grid.width, grid.height]])[0]
            return (
                None,
                False,
                (
                    f"{name}_outside_map",
                    f"{name} ({x:.2f}, {y:.2f}) lies outside the map, which spans x {x0:.2f}..{x1:.2f}, "
                    f"y {y0:.2f}..{y1:.2f} m; give a {name} inside the map (map frame)",
                ),
            )
        if not self.blocked[r, c]:
            return (r, c), False, None
        if self.obstacles[r, c]:
            unknown = self.grid.data[r, c] == UNKNOWN
            what = "an unknown cell (allow_unknown is false)" if unknown else "an obstacle"
        else:
            margin = grid.resolution * _HALF_DIAGONAL
            what = (
                f"{self.obstacle_distance_m[r, c]:.2f} m from an obstacle, inside the clearance "
                f"{self.config.clearance_m} m plus half a cell diagonal ({margin:.3f} m)"
            )
        if self.config.snap_to_free:
            found = self._nearest_free(x, y, self.config.snap_radius_m)
            if found is not None:
                return found, True, None
            fix = f"no free cell within snap_radius_m = {self.config.snap_radius_m} m; move the {name}"
        else:
            fix = f"move the {name}, or set snap_to_free to move it to the nearest free cell"
        return None, False, (f"{name}_blocked", f"{name} ({x:.2f}, {y:.2f}) is in {what}; {fix}")

    def _nearest_free(self, x: float, y: float, radius_m: float) -> tuple[int, int] | None:
        grid = self.grid
        gx, gy = grid.world_to_grid([[x, y]])[0]
        k = math.ceil(radius_m / grid.resolution) + 1
        r0, c0 = max(0, math.floor(gy) - k), max(0, math.floor(gx) - k)
        r1, c1 = min(grid.height, math.floor(gy) + k + 1), min(grid.width, math.floor(gx) + k + 1)
        rows, cols = np.nonzero(~self.blocked[r0:r1, c0:c1])
        if rows.size == 0:
            return None
        d = np.hypot(cols + c0 + 0.5 - gx, rows + r0 + 0.5 - gy) * grid.resolution
        best = int(np.argmin(d))
        if d[best] > radius_m:
            return None
        return int(rows[best] + r0), int(cols[best] + c0)


def _xy(point: Pose2D | Sequence[float], name: str) -> tuple[float, float]:
    if isinstance(point, Pose2D):
        x, y = point.x, point.y
    else:
        try:
            x, y = (float(v) for v in list(point)[:2])
        except (TypeError, ValueError):
            raise ValueError(f"{name} {point!r} is not an (x, y) position in metres") from None
    if not (math.isfinite(x) and math.isfinite(y)):
        raise ValueError(f"{name} ({x}, {y}) is not a finite position; give (x, y) in metres")
    return x, y
