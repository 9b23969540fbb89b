"""Global planner benchmark: galley's Theta* against Nav2's, its own previous one, pmp's and tcod's A*.

Usage::

    python bench/planner.py [--quick] [--nav2 PATH] [--nav2-traversal-cost W]

Side by side (first table): galley's Theta* against Nav2's C++ Theta* core and against galley's
previous Theta* (commit f0b9886, loaded from git history into a temporary module), on the same
pre-inflated grids: random 200 x 200 and 1000 x 1000 grids with 15 % obstacle cells and, where
found beside the Nav2 harness, nav2_bringup's warehouse and depot maps (clearance 0.3 m); 10 far
pairs each, the planners taking turns pair by pair over repeated rounds, each pair's median time.
Nav2's core is a standalone harness built outside the repository from Nav2's public source
(bench/README.md says how); the bench looks for it at --nav2, $GALLEY_NAV2_THETA_STAR or
/opt/nav2_theta_star/nav2_theta_star_bench, and says how to get one when it finds none. Ratios are
medians over the pairs of per-pair ratios; galley's time is a whole ``plan()`` call, Nav2's its
``generatePath`` alone.

Against python-motion-planning and tcod (second table), grids all planned corner to corner on the
same blocked cells (the obstacles after galley's inflation, so every planner sees the same free space):

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
import importlib
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from galley_core.navigation.grid import OccupancyGrid, load_map_yaml
from galley_core.navigation.theta_star import ThetaStar, ThetaStarConfig

REPO = Path(__file__).resolve().parents[1]
KITCHEN = REPO / "maps" / "kitchen.yaml"
NAV2_DEFAULT = Path("/opt/nav2_theta_star/nav2_theta_star_bench")
#: The commit whose Theta* (binary heap with decrease-key) the side-by-side table compares against.
OLD_COMMIT = "f0b9886"
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


def load_old_theta_star() -> ModuleType | None:
    """galley's Theta* and its kernels at OLD_COMMIT (``git show``) as temporary modules; None without git."""
    base = "src/galley_core/galley_core/navigation/"
    names = ("theta_star", "_search_kernels", "_sight_kernels", "_path_kernels", "_grid_kernels")
    folder = Path(tempfile.mkdtemp(prefix="galley_old_theta_star_"))
    for name in names:
        out = subprocess.run(
            ["git", "-C", str(REPO), "show", f"{OLD_COMMIT}:{base}{name}.py"],
            check=False,
            capture_output=True,
            text=True,
        )
        if out.returncode != 0:
            return None
        text = out.stdout
        for other in names:
            text = text.replace(f"from galley_core.navigation.{other} import", f"from old{other} import")
        (folder / f"old{name}.py").write_text(text)
    sys.path.insert(0, str(folder))
    return importlib.import_module("oldtheta_star")


def find_nav2(given: str | None) -> Path | None:
    for candidate in (given, os.environ.get("GALLEY_NAV2_THETA_STAR"), str(NAV2_DEFAULT)):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return Path(candidate)
    return None


def far_pairs(planner: ThetaStar, count: int = 10, seed: int = 1) -> list[tuple[tuple[int, int], ...]]:
    """``count`` pairs of cells of the largest free region, at least 0.4 of its bounding diagonal apart."""
    labels = planner._labels
    counts = np.bincount(labels.ravel())
    counts[0] = 0
    cells = np.argwhere(labels == np.argmax(counts))
    far = 0.4 * float(np.hypot(*(cells.max(axis=0) - cells.min(axis=0))))
    rng = np.random.default_rng(seed)
    pairs: list[tuple[tuple[int, int], ...]] = []
    while len(pairs) < count:
        a, b = cells[rng.integers(len(cells), size=2)]
        if np.hypot(*(a - b)) >= far:
            pairs.append(((int(a[0]), int(a[1])), (int(b[0]), int(b[1]))))
    return pairs


def nav2_round(exe: Path, pgm: Path, pairs: Path, count: int, w_traversal: float) -> tuple[list[float], ...]:
    """One timed pass of Nav2's harness (a new process) over the pairs: (seconds, lengths in cells)."""
    command = [str(exe), str(pgm), str(pairs), "1", repr(w_traversal)]
    out = subprocess.run(command, capture_output=True, text=True, check=True)
    rows = [line.split() for line in out.stdout.splitlines() if line.strip()]
    if len(rows) != count:
        raise RuntimeError(f"{exe} printed {len(rows)} lines for {count} pairs: {out.stderr.strip()}")
    return [float(r[2]) for r in rows], [float(r[3]) for r in rows]


def side_by_side(
    name: str,
    grid: OccupancyGrid,
    clearance: float,
    *,
    rounds: int,
    old: ModuleType | None,
    nav2: Path | None,
    w_traversal: float,
) -> dict[str, Any]:
    """galley, its previous Theta* and Nav2's on 10 far pairs, interleaved: per-pair medians and lengths."""
    kwargs: dict[str, Any] = {
        "clearance_m": clearance,
        "max_waypoints": 1_000_000,
        "max_planning_time_s": 0.0,
    }
    planner = ThetaStar(grid=grid, config=ThetaStarConfig(**kwargs))
    pairs = far_pairs(planner)
    ends = [(grid.cell_to_world(*a), grid.cell_to_world(*b)) for a, b in pairs]
    runners: dict[str, Any] = {"galley": planner}
    if old is not None:
        runners["old"] = old.ThetaStar(grid=grid, config=old.ThetaStarConfig(**kwargs))
    times: dict[str, list[list[float]]] = {k: [[] for _ in pairs] for k in [*runners, "nav2"]}
    lengths: dict[str, list[float]] = {}
    folder = Path(tempfile.mkdtemp(prefix="galley_bench_planner_"))
    pgm = folder / f"{name}.pgm"
    h, w = planner.blocked.shape
    pgm.write_bytes(
        f"P5\n{w} {h}\n255\n".encode() + np.where(planner.blocked, 254, 0).astype(np.uint8).tobytes()
    )
    pair_files = [folder / f"{name}_pair{i}.txt" for i in range(len(pairs))]
    for (a, b), path in zip(pairs, pair_files, strict=True):
        path.write_text(f"{a[1]} {a[0]} {b[1]} {b[0]}\n")  # x = col, y = row
    for key, p in runners.items():  # warm-up (and the lengths: the same every round)
        lengths[key] = [p.plan(s, g).length_m / grid.resolution for s, g in ends]
    if nav2 is not None:
        lengths["nav2"] = []
    # Pair by pair, each planner in turn and on the same terms (bench/README.md): Nav2's harness
    # (a new process) plans the pair once untimed, then once timed, and so does each galley planner.
    for r in range(rounds):
        for i, (s, g) in enumerate(ends):
            if nav2 is not None:
                (secs,), (length,) = nav2_round(nav2, pgm, pair_files[i], 1, w_traversal)
                times["nav2"][i].append(secs)
                if r == 0:
                    lengths["nav2"].append(length)
            for key, p in runners.items():
                p.plan(s, g)
                t0 = time.perf_counter()
                result = p.plan(s, g)
                times[key][i].append(time.perf_counter() - t0)
                assert result.ok, result.reason
    med = {k: [statistics.median(v) for v in per_pair] for k, per_pair in times.items() if per_pair[0]}
    return {"name": name, "shape": (h, w), "med": med, "lengths": lengths}


def ratio(row: dict[str, Any], a: str, b: str, what: str = "med") -> float | None:
    """Median over the pairs of a's figure over b's (None when either planner did not run)."""
    if a not in row[what] or b not in row[what]:
        return None
    return float(statistics.median(x / y for x, y in zip(row[what][a], row[what][b], strict=True)))


def fixed_work_us(old: ModuleType | None, calls: int) -> dict[str, float]:
    """Median microseconds of a plan() between neighbouring free cells: the work outside the search."""
    grid = random_grid(200, seed=0)
    planners = {"galley": ThetaStar(grid=grid, config=ThetaStarConfig(clearance_m=0.0))}
    if old is not None:
        planners["old"] = old.ThetaStar(grid=grid, config=old.ThetaStarConfig(clearance_m=0.0))
    r, c = np.argwhere(~planners["galley"].blocked[:, :-1] & ~planners["galley"].blocked[:, 1:])[0]
    start, goal = grid.cell_to_world(r, c), grid.cell_to_world(r, c + 1)
    times: dict[str, list[float]] = {k: [] for k in planners}
    for _ in range(calls):
        for key, planner in planners.items():
            t0 = time.perf_counter()
            planner.plan(start, goal)
            times[key].append(time.perf_counter() - t0)
    return {k: statistics.median(v) * 1e6 for k, v in times.items()}


def side_by_side_table(args: argparse.Namespace, figures: dict[str, float]) -> None:
    nav2 = find_nav2(args.nav2)
    old = load_old_theta_star()
    # (name, grid, clearance m, rounds, rounds with --quick; 0: skipped)
    cases: list[tuple[str, OccupancyGrid, float, int, int]] = [
        ("rand200", random_grid(200, seed=0), 0.0, 9, 3),
        ("rand1000", random_grid(1000, seed=0), 0.0, 5, 3),
    ]
    maps = (nav2.parent if nav2 else NAV2_DEFAULT.parent) / "maps"
    for name, rounds in (("warehouse", 3), ("depot", 5)):
        if (maps / f"{name}.yaml").is_file():  # Nav2 takes seconds a plan on the warehouse
            cases.append(
                (name, load_map_yaml(maps / f"{name}.yaml"), 0.3, rounds, 0 if name == "warehouse" else 3)
            )
    print(
        "side by side: 10 far pairs per grid, each pair's median over interleaved rounds; Nav2 with "
        f"w_traversal_cost {args.nav2_traversal_cost}"
    )
    figures["sbs_nav2_w_traversal_cost"] = args.nav2_traversal_cost
    header = (
        f"{'grid':>10} {'cells':>11} {'rounds':>6} {'galley ms':>10} {'old ms':>8} {'nav2 ms':>8} "
        f"{'/nav2':>6} {'old/nav2':>8} {'/old':>6} {'len /nav2':>9} {'len /old':>9}"
    )
    print(header)
    print("-" * len(header))

    def fmt(value: float | None, spec: str) -> str:
        return "-" if value is None else format(value, spec)

    for name, grid, clearance, full_rounds, quick_rounds in cases:
        rounds = quick_rounds if args.quick else full_rounds
        if rounds == 0:
            print(f"{name:>10} skipped with --quick")
            continue
        row = side_by_side(
            name, grid, clearance, rounds=rounds, old=old, nav2=nav2, w_traversal=args.nav2_traversal_cost
        )
        total = {k: sum(v) * 1e3 for k, v in row["med"].items()}
        keys = ("galley_over_nav2", "old_over_nav2", "galley_over_old")
        r = {k: ratio(row, *k.split("_over_")) for k in keys}
        l_nav2, l_old = ratio(row, "galley", "nav2", "lengths"), ratio(row, "galley", "old", "lengths")
        h, w = row["shape"]
        print(
            f"{name:>10} {h:>5}x{w:<5} {rounds:>6} {total['galley']:>10.2f} "
            f"{fmt(total.get('old'), '8.2f'):>8} {fmt(total.get('nav2'), '8.2f'):>8} "
            f"{fmt(r[keys[0]], '6.3f'):>6} {fmt(r[keys[1]], '8.3f'):>8} {fmt(r[keys[2]], '6.3f'):>6} "
            f"{fmt(l_nav2, '9.4f'):>9} {fmt(l_old, '9.4f'):>9}"
        )
        figures[f"sbs_galley_ms_{name}"] = round(total["galley"], 3)
        figures.update({f"sbs_time_ratio_{k}_{name}": round(v, 4) for k, v in r.items() if v is not None})
        if l_nav2 is not None:
            figures[f"sbs_length_ratio_galley_over_nav2_{name}"] = round(l_nav2, 4)
        if l_old is not None:
            worst = max(
                abs(a / b - 1) for a, b in zip(row["lengths"]["galley"], row["lengths"]["old"], strict=True)
            )
            figures[f"sbs_length_max_rel_diff_vs_old_{name}"] = round(worst, 6)
    fixed = fixed_work_us(old, 500 if args.quick else 2000)
    print(
        "fixed work of one plan() (one cell apart on the random 200 x 200 grid, median): galley "
        + ", old ".join(f"{v:.1f} us" for v in fixed.values())
    )
    figures.update({f"sbs_fixed_plan_us_{k}": round(v, 2) for k, v in fixed.items()})
    print(
        "ms: sum over the 10 pairs of each pair's median; ratios (/nav2, old/nav2, /old, lengths): "
        "medians over the pairs of per-pair ratios; galley's time is a whole plan() (path pulled taut, "
        "waypoints), Nav2's its generatePath"
    )
    if old is None:
        print(f"note: git or commit {OLD_COMMIT} not found: the previous Theta* (old) is skipped")
    if nav2 is None:
        print(
            "note: no Nav2 Theta* harness found (--nav2, $GALLEY_NAV2_THETA_STAR or "
            f"{NAV2_DEFAULT}): its columns are skipped; bench/README.md says how to build one"
        )
    print()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="fewer repeats, python-motion-planning on 200 only"
    )
    parser.add_argument("--nav2", help="the Nav2 Theta* harness (bench/README.md says how to build it)")
    parser.add_argument(
        "--nav2-traversal-cost",
        type=float,
        default=2.0,
        help="Nav2's w_traversal_cost (2.0: its default; 0: path length alone, galley's objective)",
    )
    args = parser.parse_args()
    repeats = 3 if args.quick else 7
    figures: dict[str, float] = {}
    side_by_side_table(args, figures)
    cases: list[tuple[str, OccupancyGrid, float]] = []
    if KITCHEN.is_file():
        cases.append(("kitchen", load_map_yaml(KITCHEN), 0.3))
    else:
        print("kitchen map not found (maps/kitchen.yaml), row skipped")
    cases += [("200", random_grid(200), 0.0), ("1000", random_grid(1000), 0.0)]
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
        "squeeze"
    )
    for note in notes:
        print(f"note: {note}")
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
