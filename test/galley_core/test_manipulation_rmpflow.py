"""RMPflow reaches poses, keeps the joint limits, and steers the arm around obstacles."""

from __future__ import annotations

import numpy as np
import pytest

from galley_core.config import ConfigError
from galley_core.geometry import Pose2D
from galley_core.manipulation._kinematics_kernels import _quat_from_matrix, rotation_error
from galley_core.manipulation.kinematics import load_arm
from galley_core.manipulation.poses import top_down_quaternion
from galley_core.manipulation.rmpflow import Obstacles, RmpFlow, RmpFlowConfig, RmpState
from galley_core.scene import Box

ROBOT = "src/galley_description/galley_description/models/galley_mm/robot.xml"
POSTURE = np.array([0.0, -0.6, 1.6, 0.0, 0.57, 0.0])  # the arm_controller's default posture


@pytest.fixture(scope="module")
def arm(request):
    return load_arm(request.config.rootpath / ROBOT)


def quat_of(rotation):
    return _quat_from_matrix(np.ascontiguousarray(rotation))


def run(rmp, state, seconds, position, orientation, obstacles=None, *, stop=None):  # noqa: PLR0917
    """Integrate at 100 Hz; returns the final state, the time taken and whether limits held throughout."""
    within = True
    for k in range(round(seconds * 100)):
        state = rmp.step(state, 0.01, position, orientation, obstacles)
        within &= bool(np.all(state.q >= rmp.arm.lower) and np.all(state.q <= rmp.arm.upper))
        if stop is not None and stop(state):
            return state, (k + 1) * 0.01, within
    return state, seconds, within


def test_fifty_random_reachable_poses_are_reached_within_5_mm_and_005_rad(arm):
    rmp = RmpFlow(arm, posture=POSTURE)
    rng = np.random.default_rng(7)
    errors = []
    for _ in range(50):
        # a reachable pose: forward kinematics of a random configuration around the working posture
        goal_q = arm.clip(POSTURE + rng.uniform(-0.7, 0.7, arm.dof))
        position, rotation = arm.tcp_pose(goal_q)
        orientation = quat_of(rotation)

        def reached(state, position=position, orientation=orientation):
            p, r = arm.tcp_pose(state.q)
            return (
                np.linalg.norm(p - position) < 0.005 and np.linalg.norm(rotation_error(orientation, r)) < 0.05
            )

        state, _, within = run(
            rmp, RmpState(POSTURE.copy(), np.zeros(6)), 10.0, position, orientation, stop=reached
        )
        p, r = arm.tcp_pose(state.q)
        errors.append((np.linalg.norm(p - position), np.linalg.norm(rotation_error(orientation, r)), within))
    errors = np.array(errors)
    assert np.all(errors[:, 2]), "a joint left its limits"
    assert np.all(errors[:, 0] < 0.005), f"position errors (m): {np.sort(errors[:, 0])[-5:]}"
    assert np.all(errors[:, 1] < 0.05), f"orientation errors (rad): {np.sort(errors[:, 1])[-5:]}"


def test_unreachable_targets_never_push_a_joint_past_its_limits(arm):
    rmp = RmpFlow(arm, RmpFlowConfig(max_joint_speed=2.0), posture=POSTURE)
    state = RmpState(POSTURE.copy(), np.zeros(6))
    for target in ([2.0, 0.0, 0.9], [0.0, 0.0, -1.0], [-0.3, 0.0, 2.5], [0.2, 0.0, 0.93]):
        state, _, within = run(rmp, state, 3.0, target, top_down_quaternion(1.0))
        assert within
        assert np.all(np.abs(state.qd) <= 2.0 + 1e-9)


def test_an_obstacle_across_the_straight_path_is_avoided(arm):
    start_q = arm.clip(POSTURE + np.array([0.5, 0.0, 0.0, 0.0, 0.0, 0.0]))
    goal_q = arm.clip(POSTURE + np.array([-0.5, 0.0, 0.0, 0.0, 0.0, 0.0]))
    goal, rotation = arm.tcp_pose(goal_q)
    orientation = quat_of(rotation)
    start, _ = arm.tcp_pose(start_q)
    middle = (start + goal) / 2.0
    # a ball where the straight line between the tcp poses would put the palm (0.09 m above the tcp)
    ball = Obstacles(ball_centers=[middle + np.array([0.0, 0.0, 0.09])], ball_radii=[0.05])

    def cleared(obstacles):
        rmp = RmpFlow(arm, posture=POSTURE)
        state, _, within = run(rmp, RmpState(start_q.copy(), np.zeros(6)), 8.0, goal, orientation, obstacles)
        reached = np.linalg.norm(arm.tcp_pose(state.q)[0] - goal)
        return rmp, reached, within

    rmp, reached, within = cleared(ball)
    print(f"minimum clearance around the obstacle: {rmp.min_clearance * 1000:.1f} mm")
    assert within and reached < 0.005
    assert rmp.min_clearance > 0.0
    # the obstacle really is in the way: with the repulsors off the arm passes through it
    blind = RmpFlow(arm, RmpFlowConfig(collision_metric=0.0), posture=POSTURE)
    state = RmpState(start_q.copy(), np.zeros(6))
    for _ in range(400):
        state = blind.step(state, 0.01, goal, orientation, ball)
    assert blind.min_clearance < 0.0


def test_boxes_from_the_scene_are_obstacles_in_the_root_frame():
    table = Box("table", (0.0, -0.8, 0.375), (1.6, 0.9, 0.75))
    far = Box("wall", (0.0, 10.0, 1.2), (8.0, 0.1, 2.4))
    root_from_map = Pose2D(0.5, 0.09, -np.pi / 2).to_transform().inverse()
    obstacles = Obstacles.from_scene([table, far], root_from_map, near=[0.2, 0.0, 0.93], within_m=1.0)
    assert len(obstacles.box_centers) == 1  # the far wall is dropped
    # the table's centre lies 0.89 m ahead of a base at (0.5, 0.09) facing -y, 0.5 m to its right
    assert obstacles.box_centers[0] == pytest.approx([0.89, -0.5, 0.375])
    assert np.abs(obstacles.box_rotations[0]) @ [0.8, 0.45, 0.375] == pytest.approx([0.45, 0.8, 0.375])


def test_gains_are_validated():
    with pytest.raises(ConfigError, match="max_substep_s"):
        RmpFlowConfig(max_substep_s=0.01)
    with pytest.raises(ConfigError, match="target_metric_max"):
        RmpFlowConfig(target_metric_max=10.0)
    with pytest.raises(ValueError, match="non-finite"):
        RmpFlow(load_arm(ROBOT)).acceleration(np.zeros(6), np.zeros(6), [np.nan, 0.0, 0.0])
