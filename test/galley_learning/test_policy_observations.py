"""The conversions training and acting share (galley_learning.policy.observations), on exact cases."""

from __future__ import annotations

import math
from types import SimpleNamespace as Msg

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from galley_core.manipulation.phases import GraspSpec
from galley_learning.policy.goals import GOAL_NAMES, GoalTracker, goal_features
from galley_learning.policy.observations import (
    decode_action,
    encode_actions,
    gripper_opening,
    hold_idle,
    policy_state,
    state_names,
)


def _pose_msg(x: float, y: float, z: float, yaw: float) -> Msg:
    q = Rotation.from_euler("z", yaw).as_quat()
    return Msg(position=Msg(x=x, y=y, z=z), orientation=Msg(x=q[0], y=q[1], z=q[2], w=q[3]))


def test_gripper_opening_ignores_missing_fingers_and_reads_open_without_any() -> None:
    np.testing.assert_allclose(
        gripper_opening([[0.02, 0.04], [0.02, np.nan], [np.nan, np.nan], [0.1, 0.1]]), [0.75, 0.5, 1.0, 1.0]
    )
    assert gripper_opening([-0.01, 0.0]) == 0.0


def test_move_goal_is_seen_from_the_base() -> None:
    tracker = GoalTracker()
    tracker.on_goal_pose(Msg(pose=_pose_msg(1.0, 2.0, 0.0, math.pi)))
    # base at (1, 0) facing +y: the goal is 2 m straight ahead, turned a quarter to the left
    f = dict(
        zip(
            GOAL_NAMES,
            goal_features("move", (1.0, 0.0, 0.0, math.pi / 2), tracker, {}, np.zeros(3)),
            strict=True,
        )
    )
    assert f["is_move"] == 1.0 and f["is_pick"] == 0.0
    assert f["goal_x"] == pytest.approx(2.0) and f["goal_y"] == pytest.approx(0.0, abs=1e-12)
    assert (f["goal_cos"], f["goal_sin"]) == pytest.approx((0.0, 1.0), abs=1e-12)
    assert f["goal_dist"] == pytest.approx(2.0)
    assert f["target_x"] == 0.0  # no pick or place target in a move
    # a pick step sees no move goal, and no target before its arm goal arrives
    assert not goal_features("pick", (1.0, 0.0, 0.0, 0.0), tracker, {}, np.zeros(3))[3:].any()


def _path_msg(points: list[tuple[float, float]]) -> Msg:
    return Msg(poses=[Msg(pose=_pose_msg(x, y, 0.0, 0.0)) for x, y in points])


def test_move_sees_the_planned_path_the_controller_steers_by() -> None:
    tracker = GoalTracker()
    tracker.on_goal_pose(Msg(pose=_pose_msg(2.0, 2.0, 0.0, 0.0)))
    # an L-shaped path: 2 m along +x, then 2 m along +y; waypoints every 0.25 m
    leg = np.arange(0.0, 2.01, 0.25)
    tracker.on_plan(_path_msg([(x, 0.0) for x in leg] + [(2.0, y) for y in leg[1:]]))
    base = (1.9, 0.0, 0.0, 0.0)  # near the corner, facing +x
    f = dict(zip(GOAL_NAMES, goal_features("move", base, tracker, {}, np.zeros(3)), strict=True))
    # nearest waypoint (2, 0) is 0.1 m away: steer to the first one 0.35 m on, (2, 0.5), to the left
    assert (f["path_x"], f["path_y"]) == pytest.approx((0.1, 0.5))
    assert math.atan2(f["path_sin"], f["path_cos"]) == pytest.approx(math.atan2(0.5, 0.1))
    assert (f["path_far_x"], f["path_far_y"]) == pytest.approx((0.1, 1.0))
    # the straight line to the goal says otherwise: (0.1, 2.0)
    assert (f["goal_x"], f["goal_y"]) == pytest.approx((0.1, 2.0))
    # at the path's end both points are its last waypoint
    f = dict(zip(GOAL_NAMES, goal_features("move", (2.0, 1.9, 0, 0), tracker, {}, np.zeros(3)), strict=True))
    assert (f["path_x"], f["path_y"], f["path_far_x"]) == pytest.approx((0.0, 0.1, 0.0), abs=1e-12)
    # a new goal drops the old path until the planner answers; an empty path cancels
    tracker.on_goal_pose(Msg(pose=_pose_msg(0.0, 0.0, 0.0, 0.0)))
    assert not goal_features("move", base, tracker, {}, np.zeros(3))[GOAL_NAMES.index("path_x") :].any()
    tracker.on_plan(_path_msg([]))
    assert tracker.goal.path is None


def test_pick_and_place_targets_from_the_base_and_the_end_effector() -> None:
    tracker = GoalTracker()
    tracker.on_arm_goal(Msg(action=0, object_name="bowl", target_pose=Msg(pose=_pose_msg(0, 0, 0, 0))))
    objects = {"bowl": (2.0, 1.0, 0.8, 0.3)}
    ee = np.array([0.5, 0.0, 1.0])
    f = dict(zip(GOAL_NAMES, goal_features("pick", (1.0, 1.0, 0.0, 0.0), tracker, objects, ee), strict=True))
    assert (f["target_x"], f["target_y"], f["target_z"]) == pytest.approx((1.0, 0.0, 0.8))
    assert (f["target_ee_x"], f["target_ee_y"], f["target_ee_z"]) == pytest.approx((0.5, 0.0, -0.2))
    assert (f["target_cos"], f["target_sin"]) == pytest.approx((math.cos(0.3), math.sin(0.3)))
    tracker.on_arm_goal(Msg(action=1, object_name="bowl", target_pose=Msg(pose=_pose_msg(1.0, 3.0, 0.9, 0))))
    f = dict(
        zip(
            GOAL_NAMES,
            goal_features("place", (1.0, 1.0, 0.0, math.pi / 2), tracker, objects, ee),
            strict=True,
        )
    )
    assert (f["target_x"], f["target_y"], f["target_z"]) == pytest.approx((2.0, 0.0, 0.9), abs=1e-12)
    # a pick step while the arm goal is still the last place's: no target rather than the wrong one
    assert not goal_features("pick", (1.0, 1.0, 0.0, 0.0), tracker, objects, ee)[8:].any()


def _contact(features: np.ndarray) -> dict[str, float]:
    return dict(zip(GOAL_NAMES, features, strict=True))


def test_a_pick_contact_is_the_grasp_point_turned_to_the_shoulder_and_held_once_lifted() -> None:
    grasps = {
        "bowl": GraspSpec((0.062, 0.0, 0.04), 0.0, symmetric=True),
        "fork": GraspSpec((-0.03, 0.0, 0.018), math.pi / 2),
    }
    tracker = GoalTracker(grasps, shoulder=(0.0, 0.0, 0.9))
    base = (1.0, 1.0, 0.0, 0.0)
    ee = np.array([0.4, 0.0, 1.0])
    tracker.on_arm_goal(Msg(action=0, object_name="bowl", target_pose=Msg(pose=_pose_msg(0, 0, 0, 0))))
    f = _contact(goal_features("pick", base, tracker, {"bowl": (1.7, 1.0, 0.8, 1.0)}, ee))
    # the rim point nearest the shoulder: 0.062 m back towards it, 0.04 m up, whatever the bowl's yaw
    assert f["has_contact"] == 1.0
    assert (f["contact_x"], f["contact_y"], f["contact_z"]) == pytest.approx((0.7 - 0.062, 0.0, 0.84))
    assert (f["contact_ee_x"], f["contact_ee_z"]) == pytest.approx((0.7 - 0.062 - 0.4, -0.16))
    # nudged on its support: followed; lifted: the grasp-time point is kept
    f = _contact(goal_features("pick", base, tracker, {"bowl": (1.75, 1.0, 0.8, 1.0)}, ee))
    assert f["contact_x"] == pytest.approx(0.75 - 0.062)
    f = _contact(goal_features("pick", base, tracker, {"bowl": (1.75, 1.0, 0.9, 1.0)}, ee))
    assert (f["contact_x"], f["contact_z"]) == pytest.approx((0.75 - 0.062, 0.84))
    # a fork is not round: its offset turns with it; the closing direction doubled (pi-symmetric)
    tracker.on_arm_goal(Msg(action=0, object_name="fork", target_pose=Msg(pose=_pose_msg(0, 0, 0, 0))))
    f = _contact(goal_features("pick", base, tracker, {"fork": (1.7, 1.0, 0.8, math.pi / 2)}, ee))
    assert (f["contact_x"], f["contact_y"], f["contact_z"]) == pytest.approx((0.7, -0.03, 0.818))
    assert (f["closing_cos2"], f["closing_sin2"]) == pytest.approx((1.0, 0.0), abs=1e-9)


def test_a_place_contact_keeps_the_held_offset_and_turns_a_round_object_to_the_shoulder() -> None:
    tracker = GoalTracker({"bowl": GraspSpec((0.062, 0.0, 0.04), symmetric=True)}, shoulder=(0.0, 0.0, 0.9))
    base = (0.0, 0.0, 0.0, 0.0)
    held = {"bowl": (0.5, 0.2, 1.0, 0.0)}
    ee = np.array([0.5, 0.262, 1.04])  # the tcp on the rim, 0.062 m to the bowl's left
    unset = Msg(position=Msg(x=0.7, y=0.0, z=0.8), orientation=Msg(x=0.0, y=0.0, z=0.0, w=0.0))
    tracker.on_arm_goal(Msg(action=1, object_name="bowl", target_pose=Msg(pose=unset)))
    f = _contact(goal_features("place", base, tracker, held, ee))
    # yaw left open: set down turned so that the tcp is on the shoulder's side of the target
    assert (f["contact_x"], f["contact_y"], f["contact_z"]) == pytest.approx((0.7 - 0.062, 0.0, 0.84))
    # the held object from the end-effector: in the hand (once released, it stays behind)
    assert (f["object_ee_x"], f["object_ee_y"], f["object_ee_z"]) == pytest.approx((0.0, -0.062, -0.04))
    tracker.on_arm_goal(
        Msg(action=1, object_name="bowl", target_pose=Msg(pose=_pose_msg(0.7, 0.0, 0.8, 0.0)))
    )
    f = _contact(goal_features("place", base, tracker, held, ee))
    assert (f["contact_x"], f["contact_y"], f["contact_z"]) == pytest.approx((0.7, 0.062, 0.84))
    # once released the tcp leaves, and the release point stays where it was
    f = _contact(goal_features("place", base, tracker, held, ee + np.array([0.0, 0.0, 0.2])))
    assert (f["contact_x"], f["contact_y"]) == pytest.approx((0.7, 0.062))


def test_contact_actions_are_relative_to_the_contact_point_and_decode_to_the_same_target() -> None:
    rng = np.random.default_rng(3)
    n = 12
    ee_p = rng.normal(size=(n, 3))
    ee_q = np.roll(Rotation.random(n, random_state=4).as_quat(), 1, axis=1)
    target_q = np.roll(Rotation.random(n, random_state=5).as_quat(), 1, axis=1)
    target_q *= np.where(target_q[:, :1] < 0, -1.0, 1.0)
    absolute = np.concatenate([rng.normal(size=(n, 5)), target_q, rng.integers(0, 2, size=(n, 1))], axis=1)
    goal = np.zeros((n, len(GOAL_NAMES)))
    col = GOAL_NAMES.index
    arm_step = np.arange(n) % 2 == 0  # a pick or place with a contact point; a move without
    goal[arm_step, col("has_contact")] = 1.0
    goal[:, col("contact_x") : col("contact_z") + 1] = rng.normal(size=(n, 3))
    contact = encode_actions("contact", absolute, ee_p, ee_q, goal)
    anchor = np.where(arm_step[:, None], goal[:, col("contact_x") : col("contact_z") + 1], ee_p)
    np.testing.assert_allclose(contact[:, 2:5], absolute[:, 2:5] - anchor)
    np.testing.assert_array_equal(contact[:, 5:9], absolute[:, 5:9])  # the rotation stays absolute
    for k in range(n):
        decoded = decode_action("contact", contact[k], ee_p[k], ee_q[k], goal[k])
        np.testing.assert_allclose(decoded, absolute[k], atol=1e-12)
    with pytest.raises(ValueError, match="need the step features"):
        encode_actions("contact", absolute, ee_p, ee_q)


def test_presets_have_their_names_and_proprio_hides_the_target() -> None:
    t = 3
    ee_p, ee_q = np.tile([0.4, 0.0, 0.9], (t, 1)), np.tile([1.0, 0.0, 0.0, 0.0], (t, 1))
    odom, goal = np.zeros((t, 5)), np.arange(t * len(GOAL_NAMES), dtype=float).reshape(t, -1)
    for name in ("kitchen_r", "privileged", "proprio"):
        state = policy_state(name, ee_p=ee_p, ee_q=ee_q, gripper=np.ones(t), odom=odom, goal=goal)
        assert state.shape == (t, len(state_names(name)))
    proprio = policy_state("proprio", ee_p=ee_p, ee_q=ee_q, gripper=np.ones(t), odom=odom, goal=goal)
    np.testing.assert_array_equal(proprio[:, -3:], goal[:, :3])  # the step's kind, nothing of where
    with pytest.raises(ValueError, match="choose sensors, kitchen_r, privileged, proprio"):
        state_names("images")


def test_delta_actions_are_relative_and_decode_to_the_same_target() -> None:
    rng = np.random.default_rng(0)
    n = 20
    ee_p, target_p = rng.normal(size=(n, 3)), rng.normal(size=(n, 3))
    ee_q = np.roll(Rotation.random(n, random_state=1).as_quat(), 1, axis=1)
    target_q = np.roll(Rotation.random(n, random_state=2).as_quat(), 1, axis=1)
    target_q *= np.where(target_q[:, :1] < 0, -1.0, 1.0)
    gripper = rng.integers(0, 2, size=(n, 1))  # the oracle's commands: open 1 or closed 0
    absolute = np.concatenate([rng.normal(size=(n, 2)), target_p, target_q, gripper], axis=1)
    delta = encode_actions("delta", absolute, ee_p, ee_q)
    np.testing.assert_allclose(delta[:, 2:5], target_p - ee_p)
    np.testing.assert_array_equal(delta[:, [0, 1, 9]], absolute[:, [0, 1, 9]])
    for k in range(n):
        np.testing.assert_allclose(decode_action("delta", delta[k], ee_p[k], ee_q[k]), absolute[k], atol=1e-9)
    # staying put is the zero translation and the identity rotation
    still = encode_actions("delta", np.concatenate([[0, 0], ee_p[0], ee_q[0], [1]])[None], ee_p[:1], ee_q[:1])
    np.testing.assert_allclose(still[0, 2:9], [0, 0, 0, 1, 0, 0, 0], atol=1e-12)
    np.testing.assert_array_equal(encode_actions("absolute", absolute, ee_p, ee_q), absolute)


def test_a_learned_gripper_command_opens_or_closes() -> None:
    for kind in ("absolute", "delta"):
        for learned, command in ((0.88, 1.0), (0.5, 1.0), (0.3, 0.0), (-0.1, 0.0)):
            action = np.array([0, 0, 0, 0, 0, 1, 0, 0, 0, learned])
            assert decode_action(kind, action, np.zeros(3), [1.0, 0, 0, 0])[9] == command


def test_hold_idle_keeps_the_arm_in_a_move_and_the_base_in_a_pick_or_place() -> None:
    learned = np.array([0.15, -0.3, 0.5, 0.1, 0.9, 0.0, 1.0, 0.0, 0.0, 0.0])  # arm off, gripper closing
    start_p, start_q = np.array([0.35, 0.0, 1.01]), np.array([0.7071, 0.0, 0.7071, 0.0])
    moved = hold_idle(learned, "move", start_p, start_q, 0.93)
    np.testing.assert_allclose(moved, [0.15, -0.3, 0.35, 0.0, 1.01, 0.7071, 0.0, 0.7071, 0.0, 1.0])
    assert hold_idle(learned, "move", start_p, start_q, 0.07)[9] == 0.0  # holding an object: stays closed
    for kind in ("pick", "place"):
        np.testing.assert_array_equal(
            hold_idle(learned, kind, start_p, start_q, 1.0), [0.0, 0.0, *learned[2:]]
        )
    np.testing.assert_array_equal(hold_idle(learned, "", start_p, start_q, 1.0), learned)
