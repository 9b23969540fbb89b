"""Global planner benchmark: galley's Theta* against python-motion-planning's Theta* and tcod's A*.

Usage::

    python bench/planner.py [--quick]

Grids, all planned corner to corner on the same blocked cells (the obstacles after galley's
inflation, so every planner sees the same free space):

* the kitchen map, maps/kitchen.yaml (clearance 0.3 m), when it exists;
* random 200 x 200 and 1000 x 1000 grids with 15 % obstacle cells (seed 0, no inflation).

Times are per plan, after a warm-up call; galley's map preparation (inflation, region labels,
free-square radii) is timed apart, because the planner node does it once per map. The first
planner in a process loads the compiled kernels from numba's cache, in its map preparation and
first call (the kitchen row's prep and 1st columns). python-motion-planning is not pinned in
requirements-dev.txt, as it pulls in vtk, pyvista, faiss and gymnasium; install it to compare::

    .venv/bin/pip install python-motion-planning==2.1

Without it the bench prints a note and skips its columns. tcod and python-motion-planning (with
``strict_collision`` off) let diagonal moves squeeze between touching obstacle cells; galley
never does, which can make its paths a little longer than tcod's. The last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from galley_core.navigation.grid import OccupancyGrid, load_map_yaml
from galley_core.navigation.theta_star import ThetaStar, ThetaStarConfig

REPO = Path(__file__).resolve().parents[1]
KITCHEN = REPO / "maps" / "kitchen.yaml"
_PMP_WARM: list[bool] = []


def random_grid(n: int, density: float = 0.15, seed: int = 0) -> OccupancyGrid:
    rng = np.random.default_rng(seed)
    data = np.where(rng.random((n, n)) < density, 100, 0).astype(np.int8)
    data[0, 0] = data[-1, -1] = 0
    return OccupancyGrid(data, 1.0)


def corner_cells(planner: ThetaStar) -> tuple[tuple[int, int], tuple[int, int]]:
    """The free cells nearest the lower-left and upper-right corners, in one connected region."""
    labels = planner._labels
    counts = np.bincount(labels.ravel())
    counts[0] = 0
    rows, cols = np.nonzero(labels == np.argmax(counts))
    key = rows + cols
    a, b = int(np.argmin(key)), int(np.argmax(key))
    return (int(rows[a]), int(cols[a])), (int(rows[b]), int(cols[b]))


def timed(fn: Any, repeats: int) -> tuple[float, Any]:
    """Median wall time of ``repeats`` calls (seconds) and the last result."""
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def polyline_length(points: Any) -> float:
    pts = np.asarray(points, dtype=float).reshape(-1, 2)
    return float(np.sum(np.hypot(*np.diff(pts, axis=0).T))) if len(pts) > 1 else math.nan


def run_galley(grid: OccupancyGrid, clearance: float, repeats: int) -> dict[str, Any]:
    config = ThetaStarConfig(clearance_m=clearance, max_waypoints=1_000_000, max_planning_time_s=0.0)
    t0 = time.perf_counter()
    planner = ThetaStar(grid=grid, config=config)
    prep = time.perf_counter() - t0
    (sr, sc), (gr, gc) = corner_cells(planner)
    start, goal = grid.cell_to_world(sr, sc), grid.cell_to_world(gr, gc)
    first = planner.plan(start, goal)
    seconds, result = timed(lambda: planner.plan(start, goal), repeats)
    assert result.ok, result.reason
    return {
        "planner": planner,
        "cells": ((sr, sc), (gr, gc)),
        "prep_s": prep,
        "first_s": first.planning_time_s,
        "s": seconds,
        "length_cells": result.length_m / grid.resolution,
        "vertices": len(result.path),
        "expansions": result.expansions,
    }


def run_tcod(blocked: np.ndarray, cells: Any, repeats: int) -> dict[str, Any] | None:
    try:
        import tcod.path  # noqa: PLC0415 (optional: tcod, a baseline)
    except ImportError:
        return None
    cost = np.where(blocked, 0, 1).astype(np.int8)
    (sr, sc), (gr, gc) = cells

    def plan() -> list[tuple[int, int]]:
        return [(sr, sc), *tcod.path.AStar(cost, diagonal=1.41).get_path(sr, sc, gr, gc)]

    seconds, path = timed(plan, repeats)
    return {"s": seconds, "length_cells": polyline_length(path)}


def run_pmp(blocked: np.ndarray, cells: Any) -> dict[str, Any] | None:
    try:
        from python_motion_planning.common import TYPES, Grid  # noqa: PLC0415 (optional: python_motion_planning, a baseline)
        from python_motion_planning.path_planner import ThetaStar as PmpThetaStar  # noqa: PLC0415 (optional: python_motion_planning, a baseline)
    except ImportError:
        return None
    if not _PMP_WARM:  # its numba helpers compile or load on first use: keep that out of the timing
        PmpThetaStar(map_=Grid(bounds=[[0, 8], [0, 8]], resolution=1.0), start=(0, 0), goal=(7, 7)).plan()
        _PMP_WARM.append(True)
    h, w = blocked.shape
    type_map = np.where(blocked, TYPES.OBSTACLE, TYPES.FREE).astype(np.int8)
    env = Grid(bounds=[[0, h], [0, w]], resolution=1.0, type_map=type_map, strict_collision=True)
    (sr, sc), (gr, gc) = cells
    planner = PmpThetaStar(map_=env, start=(sr, sc), goal=(gr, gc))
    t0 = time.perf_counter()
    path, info = planner.plan()
    seconds = time.perf_counter() - t0
    if not info.get("success"):
        return {"s": seconds, "length_cells": math.nan}
    return {"s": seconds, "length_cells": polyline_length(path)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="fewer repeats, python-motion-planning on 200 only"
    )
    args = parser.parse_args()
    repeats = 3 if args.quick else 7
    cases: list[tuple[str, OccupancyGrid, float]] = []
    if KITCHEN.is_file():
        cases.append(("kitchen", load_map_yaml(KITCHEN), 0.3))
    else:
        print("kitchen map not found (maps/kitchen.yaml), row skipped")
    cases += [("200", random_grid(200), 0.0), ("1000", random_grid(1000), 0.0)]
    figures: dict[str, float] = {}
    rows = []
    notes = []
    for name, grid, clearance in cases:
        g = run_galley(grid, clearance, repeats)
        blocked = g["planner"].blocked
        t = run_tcod(blocked, g["cells"], repeats)
        p = None if args.quick and name == "1000" else run_pmp(blocked, g["cells"])
        rows.append((name, grid, g, t, p))
        figures[f"theta_star_ms_{name}"] = round(g["s"] * 1e3, 3)
        figures[f"theta_star_prep_ms_{name}"] = round(g["prep_s"] * 1e3, 3)
        figures[f"theta_star_length_cells_{name}"] = round(g["length_cells"], 3)
        if t is not None:
            figures[f"tcod_astar_ms_{name}"] = round(t["s"] * 1e3, 3)
            figures[f"length_ratio_vs_tcod_{name}"] = round(g["length_cells"] / t["length_cells"], 4)
        if p is not None:
            figures[f"pmp_theta_star_ms_{name}"] = round(p["s"] * 1e3, 3)
            figures[f"speedup_vs_pmp_{name}"] = round(p["s"] / g["s"], 1)
            figures[f"length_ratio_vs_pmp_{name}"] = round(g["length_cells"] / p["length_cells"], 4)
    if rows and rows[0][3] is None:
        notes.append("tcod is not installed (pip install -r requirements-dev.txt): its columns are skipped")
    if all(r[4] is None for r in rows):
        notes.append(
            "python-motion-planning is not installed (pip install python-motion-planning==2.1): "
            "its columns are skipped"
        )
    elif args.quick:
        notes.append("--quick: python-motion-planning is not run on the 1000 x 1000 grid")

    def fmt(value: float | None, spec: str) -> str:
        return "-" if value is None or not math.isfinite(value) else format(value, spec)

    header = (
        f"{'grid':>8} {'cells':>11} {'prep ms':>8} {'galley ms':>10} {'1st ms':>8} {'tcod ms':>8} "
        f"{'pmp ms':>10} {'x pmp':>7} {'len galley':>10} {'/tcod':>7} {'/pmp':>7}"
    )
    print(header)
    print("-" * len(header))
    for name, grid, g, t, p in rows:
        print(
            f"{name:>8} {grid.height:>5}x{grid.width:<5} {g['prep_s'] * 1e3:>8.1f} {g['s'] * 1e3:>10.2f} "
            f"{g['first_s'] * 1e3:>8.1f} {fmt(t and t['s'] * 1e3, '8.2f'):>8} "
            f"{fmt(p and p['s'] * 1e3, '10.1f'):>10} {fmt(p and p['s'] / g['s'], '7.0f'):>7} "
            f"{g['length_cells']:>10.1f} {fmt(t and g['length_cells'] / t['length_cells'], '7.4f'):>7} "
            f"{fmt(p and g['length_cells'] / p['length_cells'], '7.4f'):>7}"
        )
    print(
        "lengths in cells; tcod's A* and Nav2 let diagonal moves squeeze between touching obstacle "
        "cells, which shortens their paths; galley (and python-motion-planning's strict collision) never "
        "squeeze; Nav2's C++ Theta* core takes about 220 ms on the 1000 x 1000 grid on 2-core machines"
    )
    for note in notes:
        print(f"note: {note}")
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
