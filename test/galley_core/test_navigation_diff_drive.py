"""Kitchen-R's controller: every rule band, table-driven, and closed loop on the unicycle model."""

from __future__ import annotations

import math

import numpy as np
import pytest

from galley_core.config import ConfigError
from galley_core.geometry import Pose2D, normalize_angle
from galley_core.navigation.diff_drive import (
    ControllerState,
    DiffDriveConfig,
    DiffDriveController,
    FollowedPath,
    heading_error,
)
from galley_core.navigation.grid import OccupancyGrid
from galley_core.navigation.theta_star import ThetaStar, ThetaStarConfig
from galley_core.navigation.unicycle import integrate_unicycle

DT = 0.1


def path_at_bearing(bearing: float, distance: float = 2.0) -> FollowedPath:
    """A one-waypoint path whose waypoint lies at ``bearing`` from a robot at the origin facing +x."""
    return FollowedPath(np.array([[distance * math.cos(bearing), distance * math.sin(bearing)]]))


# theta_e, expected w, expected v after one step from v_prev = 0.1 m/s; band edges are
# approached from just inside (the waypoint's bearing is computed back through cos and sin)
BANDS = [
    (0.0, 0.0, 0.104),  # straight: ramp by acc * dt = 0.004
    (0.05, 0.05, 0.104),
    (-0.099, -0.099, 0.104),
    (0.1 + 1e-9, 0.9 * (0.1 + 1e-9), 0.104),  # band 1: limit 0.12 not reached yet
    (-0.3, -0.9 * 0.3, 0.104),
    (0.38 + 1e-9, 0.85 * (0.38 + 1e-9), 0.08),  # band 2: limit 0.08 applies at once
    (0.69, 0.85 * 0.69, 0.08),
    (0.7 + 1e-9, 0.8 * (0.7 + 1e-9), 0.05),  # band 3
    (-0.99, -0.8 * 0.99, 0.05),
    (1.0 + 1e-9, 0.75 * (1.0 + 1e-9), 0.03),  # band 4
    (1.249, 0.75 * 1.249, 0.03),
    (1.25 + 1e-9, 0.7, 0.0),  # rotate in place, clamped to max_w
    (-2.5, -0.7, 0.0),
    (3.1, 0.7, 0.0),
]


@pytest.mark.parametrize(("theta_e", "w_expected", "v_expected"), BANDS)
def test_heading_error_bands(theta_e, w_expected, v_expected):
    ctrl = DiffDriveController()
    ctrl.v = 0.1
    v, w, state, reason = ctrl.step(Pose2D(), path_at_bearing(theta_e), DT)
    assert state == ControllerState.ACTIVE and reason == ""
    assert w == pytest.approx(w_expected, abs=1e-9)
    assert v == pytest.approx(v_expected, abs=1e-9)


def test_heading_error_is_the_papers_formula_in_the_robot_frame():
    rng = np.random.default_rng(3)
    for _ in range(200):
        x, y, theta = rng.uniform(-5, 5), rng.uniform(-5, 5), rng.uniform(-math.pi, math.pi)
        wx, wy = rng.uniform(-5, 5, size=2)
        ctrl = DiffDriveController()
        ctrl._current = FollowedPath(np.array([[wx, wy]]))  # only to read the error
        ctrl._path = ctrl._current.waypoints
        d_e, theta_e = ctrl._waypoint_error(Pose2D(x, y, theta))
        alpha = math.atan2(wy - y, wx - x)
        assert theta_e == pytest.approx(heading_error(alpha, theta), abs=1e-9)
        assert d_e == pytest.approx(math.hypot(wx - x, wy - y))


def test_speed_ramps_at_acc_v_to_max_v():
    ctrl = DiffDriveController()
    path = FollowedPath(np.array([[50.0, 0.0]]))
    speeds = [ctrl.step(Pose2D(), path, DT)[0] for _ in range(60)]
    assert speeds[:3] == pytest.approx([0.004, 0.008, 0.012])
    assert speeds[44] == pytest.approx(0.18) and max(speeds) == pytest.approx(0.18)


def test_waypoints_switch_below_the_switch_distance():
    path = FollowedPath(np.array([[0.3, 0.0], [0.34, 0.0], [1.0, 0.0], [2.0, 0.0]]))
    ctrl = DiffDriveController()
    ctrl.step(Pose2D(), path, DT)
    assert ctrl.index == 2  # 0.3 and 0.34 m are within 0.35 m; 1.0 m is not
    ctrl.step(Pose2D(0.66, 0.0, 0.0), path, DT)
    assert ctrl.index == 3


def test_arrival_then_final_heading_correction_at_fixed_rate():
    path = FollowedPath(np.array([[1.0, 0.0]]), goal_yaw=1.0)
    ctrl = DiffDriveController()
    ctrl.v = 0.18
    v, w, state, _ = ctrl.step(Pose2D(0.92, 0.0, 0.0), path, DT)  # 0.08 m <= 0.09 m: arrived
    assert (v, w, state) == (0.0, 0.15, ControllerState.ACTIVE)
    assert ctrl.phase == "final_heading"
    v, w, _, _ = ctrl.step(Pose2D(0.92, 0.0, 2.0), path, DT)  # overshot: turn back at -0.15
    assert (v, w) == (0.0, -0.15)
    v, w, state, _ = ctrl.step(Pose2D(0.92, 0.0, 0.95), path, DT)  # |theta_e| < 0.1: done
    assert (v, w, state) == (0.0, 0.0, ControllerState.SUCCEEDED)
    assert ctrl.step(Pose2D(0.92, 0.0, 0.95), path, DT)[2] == ControllerState.SUCCEEDED


def test_arrival_needs_the_last_waypoint_within_arrival_distance():
    path = FollowedPath(np.array([[1.0, 0.0]]))
    ctrl = DiffDriveController()
    assert ctrl.step(Pose2D(0.9, 0.0, 0.0), path, DT)[:3] == pytest.approx((0.004, 0.0, 1))
    assert ctrl.step(Pose2D(0.91, 0.0, 0.0), path, DT)[2] == ControllerState.SUCCEEDED  # no goal yaw


def test_near_goal_deceleration_needs_a_speed_above_its_threshold():
    path = FollowedPath(np.array([[1.0, 0.0]]))
    default = DiffDriveController()
    default.v = 0.18
    default.step(Pose2D(), path, DT)
    assert default._local_max_v == 0.18  # never fires with max_v 0.18 < 0.3
    fast = DiffDriveController(DiffDriveConfig(max_linear_speed_mps=0.5))
    fast.v = 0.5
    v, _, _, _ = fast.step(Pose2D(), path, DT)
    assert fast._local_max_v == pytest.approx(0.45) and v == pytest.approx(0.45)
    v, _, _, _ = fast.step(Pose2D(), path, DT)
    assert v == pytest.approx(0.405)
    far = DiffDriveController(DiffDriveConfig(max_linear_speed_mps=0.5))
    far.v = 0.5
    far.step(Pose2D(), FollowedPath(np.array([[3.0, 0.0]])), DT)  # beyond 1.5 m: no deceleration
    assert far._local_max_v == 0.5


@pytest.mark.parametrize(
    ("pose", "path", "words"),
    [
        (Pose2D(math.nan, 0.0, 0.0), FollowedPath(np.array([[1.0, 0.0]])), ["not finite", "odometry"]),
        (Pose2D(), FollowedPath(np.zeros((0, 2))), ["non-empty"]),
        (Pose2D(), FollowedPath(np.array([[1.0, math.inf]])), ["non-finite waypoint"]),
        (Pose2D(), FollowedPath(np.zeros((101, 2))), ["101 waypoints", "max_waypoints = 100"]),
        (Pose2D(), FollowedPath(np.array([[1.0, 0.0]]), goal_yaw=math.nan), ["goal heading"]),
    ],
)
def test_bad_input_fails_with_a_reason_and_zero_command(pose, path, words):
    ctrl = DiffDriveController()
    ctrl.v = 0.1
    v, w, state, reason = ctrl.step(pose, path, DT)
    assert (v, w, state) == (0.0, 0.0, ControllerState.FAILED)
    for word in words:
        assert word in reason


def test_withdrawing_the_path_cancels_and_a_new_path_starts_over():
    ctrl = DiffDriveController()
    first = FollowedPath(np.array([[0.2, 0.0], [5.0, 0.0]]))
    ctrl.step(Pose2D(), first, DT)
    assert ctrl.index == 1
    assert ctrl.step(Pose2D(), None, DT)[2:] == (ControllerState.CANCELED, "the path was withdrawn")
    second = FollowedPath(np.array([[0.2, 0.0], [5.0, 0.0]]))
    assert ctrl.step(Pose2D(), second, DT)[2] == ControllerState.ACTIVE
    assert ctrl.step(Pose2D(), None, DT)[2] == ControllerState.CANCELED
    assert DiffDriveController().step(Pose2D(), None, DT) == (0.0, 0.0, ControllerState.IDLE, "")


def test_config_rejects_bands_out_of_order():
    with pytest.raises(ConfigError, match="band_edges_rad"):
        DiffDriveConfig(band_edges_rad=(0.7, 0.38, 1.0))
    with pytest.raises(ConfigError, match="band_gains"):
        DiffDriveConfig(band_gains=(0.9,))
    with pytest.raises(ConfigError, match="arrival_distance_m"):
        DiffDriveConfig(arrival_distance_m=0.0)


def kitchen() -> OccupancyGrid:
    """A 6 x 5 m kitchen: walls, counters along two walls, an island, a table."""
    res = 0.05
    data = np.zeros((100, 120), dtype=np.int8)
    data[:2, :] = data[-2:, :] = data[:, :2] = data[:, -2:] = 100  # walls
    data[2:14, 2:80] = 100  # counter along the bottom wall
    data[40:100, 2:14] = 100  # counter along the left wall
    data[40:56, 50:80] = 100  # island
    data[70:84, 90:104] = 100  # table
    return OccupancyGrid(data, res)


GOALS = [
    ((1.2, 1.2, 0.0), (4.8, 1.5, math.pi / 2)),
    ((4.8, 1.5, math.pi / 2), (1.5, 4.3, math.pi)),
    ((1.5, 4.3, math.pi), (5.45, 4.55, -math.pi / 2)),
    ((5.45, 4.55, -math.pi / 2), (3.2, 3.3, 0.3)),
    ((3.2, 3.3, 0.3), (1.2, 1.2, -2.0)),
]


@pytest.mark.parametrize(("start", "goal"), GOALS)
def test_closed_loop_on_the_unicycle_reaches_goals_across_the_kitchen(start, goal):
    planner = ThetaStar(grid=kitchen(), config=ThetaStarConfig(clearance_m=0.3))
    plan = planner.plan(start[:2], goal[:2])
    assert plan.ok, plan.reason
    path = FollowedPath(plan.waypoints, goal_yaw=goal[2])
    ctrl = DiffDriveController()
    pose = Pose2D(*start)
    state = ControllerState.ACTIVE
    for _ in range(int(300 / DT)):
        v, w, state, reason = ctrl.step(pose, path, DT)
        if state != ControllerState.ACTIVE:
            break
        pose = integrate_unicycle(pose, v, w, DT)
    assert state == ControllerState.SUCCEEDED, reason
    assert math.hypot(pose.x - goal[0], pose.y - goal[1]) <= 0.09
    assert abs(normalize_angle(pose.theta - goal[2])) < 0.1


def test_the_progress_checker_calls_a_base_stalled_only_after_timeout_without_moving_or_turning():
    from galley_core.navigation.diff_drive import ProgressChecker

    checker = ProgressChecker(distance_m=0.1, rotation_rad=0.2, timeout_s=2.0)
    s = 1_000_000_000
    assert not checker.stalled(Pose2D(0.0, 0.0, 0.0), 0)
    assert not checker.stalled(Pose2D(0.05, 0.0, 0.1), 2 * s)  # not yet past the timeout
    assert checker.stalled(Pose2D(0.05, 0.0, 0.1), 2 * s + 1)
    assert not checker.stalled(Pose2D(0.0, 0.0, 0.25), 3 * s)  # a turn is progress: new reference
    assert not checker.stalled(Pose2D(0.0, 0.0, 0.25), 5 * s)
    checker.reset()
    assert not checker.stalled(Pose2D(1.0, 1.0, 0.0), 100 * s)  # a new goal starts afresh
