"""Theta*'s answers and options: failures with reasons, unknown cells, cancel, waypoints, kernels."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest
from scipy import ndimage

from galley_core.config import ConfigError
from galley_core.geometry import Pose2D
from galley_core.navigation import theta_star
from galley_core.navigation._grid_kernels import free_radius, sight_cells
from galley_core.navigation._sight_kernels import line_of_sight
from galley_core.navigation.grid import OccupancyGrid
from galley_core.navigation.paths import PathPlanningError, clearance_from_footprint, resample_polyline
from galley_core.navigation.theta_star import ThetaStar, ThetaStarConfig

# -- failures ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def room() -> ThetaStar:
    """A 5 m room (5 cm cells) with a wall and a walled-off closet in the top-right corner."""
    data = np.zeros((100, 100), dtype=np.int8)
    data[20:60, 40:50] = 100  # the wall, x 2.0..2.5 m, y 1.0..3.0 m
    data[70:74, 70:] = 100  # the closet's walls
    data[70:, 70:74] = 100
    return ThetaStar(grid=OccupancyGrid(data, 0.05), config=ThetaStarConfig(clearance_m=0.2))


@pytest.mark.parametrize(
    ("start", "goal", "code", "words"),
    [
        ((2.2, 2.0), (1.0, 1.0), "start_blocked", ["start (2.20, 2.00)", "obstacle", "snap_to_free"]),
        ((1.85, 2.0), (1.0, 1.0), "start_blocked", ["inside the clearance 0.2 m"]),
        ((1.0, 1.0), (2.3, 1.5), "goal_blocked", ["goal (2.30, 1.50)", "obstacle"]),
        (
            (1.0, 1.0),
            (9.0, 1.0),
            "goal_outside_map",
            ["goal (9.00, 1.00)", "outside the map", "x 0.00..5.00"],
        ),
        ((-0.1, 1.0), (1.0, 1.0), "start_outside_map", ["start (-0.10, 1.00)"]),
        ((1.0, 1.0), (4.4, 4.4), "no_path", ["cannot reach", "clearance_m"]),
        ((1.0, 1.0), (math.nan, 1.0), "invalid_input", ["goal", "not a finite position"]),
        ((1.0, 1.0), "kitchen", "invalid_input", ["goal 'kitchen'"]),
    ],
)
def test_failures_answer_without_searching_and_name_the_input(room, start, goal, code, words):
    result = room.plan(start, goal)
    assert not result.ok
    assert result.code == code
    for word in words:
        assert word in result.reason
    assert result.expansions == 0  # answered before any search: bounded time whatever the map
    assert result.path.shape == (0, 2)
    with pytest.raises(PathPlanningError) as err:
        result.unwrap()
    assert err.value.code == code


def test_unknown_cells_are_obstacles_unless_allowed():
    data = np.zeros((40, 40), dtype=np.int8)
    data[:, 18:22] = -1
    grid = OccupancyGrid(data, 0.1)
    assert (
        ThetaStar(grid=grid, config=ThetaStarConfig(clearance_m=0.1)).plan((0.5, 2), (3.5, 2)).code
        == "no_path"
    )
    allowed = ThetaStar(grid=grid, config=ThetaStarConfig(clearance_m=0.1, allow_unknown=True))
    result = allowed.plan((0.5, 2), (3.5, 2))
    assert result.ok and result.length_m == pytest.approx(3.0)
    assert (allowed.inflated_map() == -1).sum() == 160


def test_cancel_checker_and_time_limit_stop_a_long_search(monkeypatch):
    monkeypatch.setattr(theta_star, "EXPANSIONS_PER_SLICE", 500)
    data = np.zeros((300, 300), dtype=np.int8)
    data[20:300, 150] = 100
    grid = OccupancyGrid(data, 0.05)
    planner = ThetaStar(grid=grid, config=ThetaStarConfig(clearance_m=0.0, heuristic_weight=1.0))
    calls = []
    result = planner.plan(
        (0.5, 14.0), (14.0, 14.0), cancel_checker=lambda: calls.append(1) or len(calls) >= 3
    )
    assert result.code == "canceled" and "canceled" in result.reason
    assert len(calls) == 3 and result.expansions == 1500
    slow = ThetaStar(grid=grid, config=ThetaStarConfig(clearance_m=0.0, max_planning_time_s=1e-9))
    result = slow.plan((0.5, 14.0), (14.0, 14.0))
    assert result.code == "timeout" and "max_planning_time_s" in result.reason
    # The same planner plans again normally afterwards (its work arrays are per search).
    assert planner.plan((0.5, 14.0), (14.0, 14.0)).ok


def test_waypoints_keep_every_vertex_and_respect_the_limit(room):
    result = room.plan((0.5, 0.5), (4.0, 2.0))
    assert result.ok
    wp = result.waypoints
    assert len(wp) <= 100
    for vertex in result.path:
        assert np.min(np.hypot(*(wp - vertex).T)) < 1e-9
    assert np.max(np.hypot(*np.diff(wp, axis=0).T)) <= 0.25 + 1e-9
    few = resample_polyline(result.path, 12, 0.01)
    assert len(few) <= 12
    assert np.sum(np.hypot(*np.diff(few, axis=0).T)) == pytest.approx(result.length_m)
    capped = ThetaStar(grid=room.grid, config=ThetaStarConfig(clearance_m=0.2, max_waypoints=2))
    too_many = capped.plan((0.5, 0.5), (4.0, 2.0))
    assert too_many.code == "too_many_waypoints" and "raise max_waypoints" in too_many.reason


def test_start_and_goal_in_one_cell():
    grid = OccupancyGrid(np.zeros((10, 10), dtype=np.int8), 0.1)
    result = ThetaStar(grid=grid).plan(Pose2D(0.52, 0.51, 1.0), (0.55, 0.53))
    assert result.ok and result.path.shape == (2, 2)
    assert result.length_m == pytest.approx(math.hypot(0.03, 0.02))


def test_config_is_validated_and_footprint_gives_the_clearance():
    with pytest.raises(ConfigError, match="clearance_m"):
        ThetaStarConfig(clearance_m=-0.1)
    with pytest.raises(ConfigError, match="max_waypoints"):
        ThetaStarConfig(max_waypoints=1)
    footprint = [(0.3, 0.2), (0.3, -0.2), (-0.3, -0.2), (-0.3, 0.2)]
    assert clearance_from_footprint(footprint, padding_m=0.05) == pytest.approx(math.hypot(0.3, 0.2) + 0.05)


def test_plain_python_kernels_give_the_same_paths_as_the_compiled_ones():
    """Where numba is missing the kernels run uncompiled (NUMBA_DISABLE_JIT runs that code path)."""
    code = (
        "import json, numpy as np\n"
        "from galley_core.navigation.grid import OccupancyGrid\n"
        "from galley_core.navigation.theta_star import ThetaStar, ThetaStarConfig\n"
        "data = np.zeros((100, 100), dtype=np.int8); data[20:100, 40:50] = 100; data[0:70, 70:75] = 100\n"
        "p = ThetaStar(grid=OccupancyGrid(data, 0.05), config=ThetaStarConfig(clearance_m=0.1))\n"
        "r = p.plan((0.3, 0.3), (4.7, 4.7))\n"
        "print(json.dumps(r.path.tolist()))\n"
    )
    env_runs = []
    for disable in ("0", "1"):
        out = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={**__import__("os").environ, "NUMBA_DISABLE_JIT": disable},
        ).stdout
        env_runs.append(json.loads(out))
    assert env_runs[0] == env_runs[1]
    assert len(env_runs[0]) >= 3


def test_line_of_sight_jumps_through_free_squares_see_what_the_cell_walk_sees():
    """Jumps across free squares (radius >= 2) answer as the plain cell-by-cell walk (radius 0)."""
    rng = np.random.default_rng(7)
    for trial in range(60):
        h, w = (int(v) for v in rng.integers(2, 70, size=2))
        blocked = rng.random((h, w)) < rng.choice([0.0, 0.003, 0.02, 0.1])
        for _ in range(int(rng.integers(0, 5))):
            r, c = rng.integers(0, h), rng.integers(0, w)
            blocked[r : r + rng.integers(1, 15), c : c + rng.integers(1, 15)] = True
        flat = np.ascontiguousarray(blocked.reshape(-1), dtype=np.uint8)
        radius = free_radius(flat, w, h)
        if blocked.any():  # the chessboard distance to the nearest blocked cell, less one
            expected = np.clip(ndimage.distance_transform_cdt(~blocked, metric="chessboard") - 1, 0, 255)
        else:
            expected = np.full(blocked.shape, 255)
        assert np.array_equal(radius.reshape(h, w), expected), trial
        jumps, walk = sight_cells(flat, radius), sight_cells(flat, np.zeros_like(radius))
        assert np.array_equal(walk == 0, blocked.reshape(-1))
        for _ in range(300):
            r0, r1 = (int(v) for v in rng.integers(0, h, size=2))
            c0, c1 = (int(v) for v in rng.integers(0, w, size=2))
            assert line_of_sight(jumps, w, r0, c0, r1, c1) == line_of_sight(walk, w, r0, c0, r1, c1), (
                trial,
                r0,
                c0,
                r1,
                c1,
            )


def test_open_list_growth_and_ring_overflow_keep_the_paths(monkeypatch):
    """A tiny open list (grown mid-search) and a 4-bucket ring (entries round it) plan the same paths."""
    rng = np.random.default_rng(5)
    data = np.where(rng.random((150, 150)) < 0.15, 100, 0).astype(np.int8)
    grid = OccupancyGrid(data, 1.0)
    config = ThetaStarConfig(clearance_m=0.0, max_waypoints=10_000)
    roomy = ThetaStar(grid=grid, config=config)
    monkeypatch.setattr(theta_star, "_START_CAPACITY", 8)
    monkeypatch.setattr(theta_star, "BUCKET_RING", 4)
    cramped = ThetaStar(grid=grid, config=config)
    free = np.argwhere(~roomy.blocked)
    for _ in range(6):
        a, b = (grid.cell_to_world(*free[i]) for i in rng.integers(len(free), size=2))
        expected, got = roomy.plan(a, b), cramped.plan(a, b)
        assert got.code == expected.code
        assert np.array_equal(got.path, expected.path)
        assert got.expansions == expected.expansions
    assert len(cramped._heap_n) > 8  # it did grow


def test_search_generations_wrap_without_stale_marks():
    grid = OccupancyGrid(np.zeros((30, 30), dtype=np.int8), 0.1)
    planner = ThetaStar(grid=grid, config=ThetaStarConfig(clearance_m=0.0))
    first = planner.plan((0.25, 0.25), (2.75, 1.5))
    planner._sid = 2**30 - 2  # the last generation of marks: the next search clears them, starts at 1
    for _ in range(3):
        again = planner.plan((0.25, 0.25), (2.75, 1.5))
        assert again.ok and np.array_equal(again.path, first.path)
    assert planner._sid == 3


def test_the_compiled_and_scalar_grid_conversions_give_the_numpy_formulas_numbers_to_the_bit():
    """plan() converts its ends and its path without numpy's array methods: the same floats."""
    rng = np.random.default_rng(11)
    for _ in range(20):
        origin = Pose2D(*rng.uniform(-50.0, 50.0, size=2), float(rng.uniform(-math.pi, math.pi)))
        grid = OccupancyGrid(np.zeros((4, 4), dtype=np.int8), float(rng.uniform(0.01, 0.2)), origin)
        points = rng.uniform(-500.0, 500.0, size=(17, 2))
        c, s, g = math.cos(origin.theta), math.sin(origin.theta), points * grid.resolution
        numpy_formula = np.stack(
            [origin.x + c * g[:, 0] - s * g[:, 1], origin.y + s * g[:, 0] + c * g[:, 1]], 1
        )
        assert np.array_equal(grid.grid_to_world(points), numpy_formula)
        x, y = points[0]
        assert grid.world_to_grid_xy(x, y) == tuple(grid.world_to_grid([[x, y]])[0])
