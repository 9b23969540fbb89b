"""The pick-and-place machine without a simulator: blend, orientations, phases, refusals."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from galley_core.geometry import Transform, quaternion_from_yaw
from galley_core.manipulation._kinematics_kernels import _quat_from_matrix, rotation_error
from galley_core.manipulation.kinematics import load_arm
from galley_core.manipulation.phases import PICK_PHASES, PLACE_PHASES, GraspSpec, PickPlaceConfig
from galley_core.manipulation.pick_place import PickPlace, PickPlaceState
from galley_core.manipulation.poses import grasp_point, raised_cosine, rotz, top_down_quaternion
from galley_core.manipulation.rmpflow import RmpFlow
from galley_core.scene import ObjectSpec

ROBOT = "src/galley_description/galley_description/models/galley_mm/robot.xml"
POSTURE = np.array([0.0, -0.6, 1.6, 0.0, 0.57, 0.0])


def test_the_raised_cosine_blend_is_kitchen_rs():
    assert [raised_cosine(t) for t in (-1.0, 0.0, 0.5, 1.0, 2.0)] == pytest.approx([0.0, 0.0, 0.5, 1.0, 1.0])
    slopes = np.diff([raised_cosine(t) for t in np.linspace(0, 1, 101)])
    assert slopes[0] < 1e-3 and slopes[-1] < 1e-3 and np.all(slopes >= 0)  # eases in and out


def test_ten_phases_in_all():
    assert len(PICK_PHASES) + len(PLACE_PHASES) == 10


@pytest.mark.parametrize("yaw", [0.0, 0.7, -2.0, math.pi])
def test_top_down_orientation_points_x_down_and_closes_along_the_yaw(yaw):
    q = top_down_quaternion(yaw)
    rot = Transform(np.zeros(3), q).apply(np.eye(3)).T  # columns: the gripper axes in the world
    assert rot[:, 0] == pytest.approx([0.0, 0.0, -1.0], abs=1e-12)
    assert rot[:, 1] == pytest.approx([math.cos(yaw), math.sin(yaw), 0.0], abs=1e-12)
    assert np.linalg.norm(rotation_error(q, rot)) < 1e-9
    assert abs(abs(float(np.dot(_quat_from_matrix(rot), q))) - 1.0) < 1e-12


def test_the_arm_follows_the_pick_phases_to_the_grasp_in_kinematic_simulation():
    """Measured joints = commanded joints, an object that never moves: it must reach 'grasp'."""
    arm = load_arm(ROBOT)
    machine = PickPlace(RmpFlow(arm, posture=POSTURE))
    q = POSTURE.copy()
    cup = Transform(np.array([0.62, 0.05, 0.75]), quaternion_from_yaw(0.3))
    machine.start_pick("cup", GraspSpec((0.0, 0.0, 0.06)), cup, q, 0.0)
    seen = []
    for k in range(1, 1500):
        command = machine.step(k * 0.01, q, [0.04, 0.04], cup)
        if command is None or machine.phase == "grasp":
            break
        q = command.positions
        seen.append(machine.phase)
    assert machine.state == PickPlaceState.ACTIVE and machine.phase == "grasp", machine.reason
    assert list(dict.fromkeys(seen)) == ["approach", "pre_grasp", "descend"]
    tcp, _ = arm.tcp_pose(q)
    assert np.linalg.norm(tcp - [0.62, 0.05, 0.81]) < 0.01


def test_refusals_name_the_problem():
    machine = PickPlace(RmpFlow(load_arm(ROBOT), posture=POSTURE))
    far = Transform(np.array([1.6, 0.0, 0.75]))
    machine.start_pick("apple", GraspSpec((0.0, 0.0, 0.037)), far, POSTURE, 0.0)
    assert machine.state == PickPlaceState.FAILED and machine.reason.startswith("unreachable: apple's grasp")
    machine.start_place("apple", far, POSTURE, 0.0)
    assert "holds nothing; pick 'apple' first" in machine.reason
    machine.start_pick("apple", GraspSpec((0.0, 0.0, 0.037)), far, [np.nan] * 6, 0.0)
    assert "not 6 finite numbers" in machine.reason


def _pick_with_retreat_stalled_after(
    moved_m: float, config: PickPlaceConfig | None = None
) -> tuple[PickPlace, np.ndarray]:
    """A kinematic pick whose arm freezes once the retreat has carried the tcp ``moved_m`` back.

    Returns the machine and the final tcp position.
    """
    arm = load_arm(ROBOT)
    machine = PickPlace(RmpFlow(arm, posture=POSTURE), config)
    q = POSTURE.copy()
    cup = Transform(np.array([0.62, 0.05, 0.75]), quaternion_from_yaw(0.3))
    machine.start_pick("cup", GraspSpec((0.0, 0.0, 0.06)), cup, q, 0.0)
    held = False
    retreat_start = None
    for k in range(1, 3000):
        if held:  # the cup follows the closed gripper
            tcp, _ = arm.tcp_pose(q)
            cup = Transform(tcp - [0.0, 0.0, 0.06], quaternion_from_yaw(0.3))
        command = machine.step(k * 0.01, q, [0.02, 0.02], cup)
        if command is None or machine.state != PickPlaceState.ACTIVE:
            break
        held = held or machine.phase in {"lift", "retreat"}
        if machine.phase == "retreat":
            tcp, _ = arm.tcp_pose(q)
            retreat_start = tcp if retreat_start is None else retreat_start
            if np.linalg.norm((tcp - retreat_start)[:2]) >= moved_m:
                continue  # stalled: the measured joints no longer follow the command
        q = command.positions
    return machine, arm.tcp_pose(q)[0]


def test_a_retreat_stalled_close_to_its_target_still_finishes_the_pick():
    machine, _ = _pick_with_retreat_stalled_after(0.05)  # 3 cm short of the default 8 cm
    assert machine.state == PickPlaceState.SUCCEEDED, machine.reason


def test_a_retreat_stalled_far_from_its_target_is_unreachable():
    machine, _ = _pick_with_retreat_stalled_after(0.0)  # 8 cm short: more than retreat_tolerance_m
    assert machine.state == PickPlaceState.FAILED
    assert "phase retreat" in machine.reason and "unreachable" in machine.reason


def test_the_retreat_carries_the_object_above_carry_height():
    """The cup (bottom at 0.75 m, grasped 6 cm up) rides with its bottom >= 1.0 m, clear of 0.9 m counters."""
    config = PickPlaceConfig(carry_height_m=1.0)
    machine, tcp = _pick_with_retreat_stalled_after(1.0, config)  # never stalls
    assert machine.state == PickPlaceState.SUCCEEDED, machine.reason
    assert tcp[2] - 0.06 >= 1.0 - config.coarse_position_tolerance_m
    plain, tcp = _pick_with_retreat_stalled_after(1.0)
    assert tcp[2] - 0.06 == pytest.approx(0.75 + plain.config.lift_height_m, abs=0.02)


BOWL = GraspSpec((0.062, 0.0, 0.04), 0.0, symmetric=True)  # the kitchen's bowl: by the rim


def _pick_bowl(
    bowl: Transform, grasp: GraspSpec = BOWL
) -> tuple[PickPlace, np.ndarray, Transform, list[np.ndarray]]:
    """A kinematic pick of a bowl that follows the closed gripper rigidly.

    Returns the machine, the arm's joints, the bowl's pose and the tcp position at each grasp phase.
    """
    arm = load_arm(ROBOT)
    machine = PickPlace(RmpFlow(arm, posture=POSTURE))
    q = POSTURE.copy()
    machine.start_pick("bowl", grasp, bowl, q, 0.0)
    in_gripper: Transform | None = None  # the bowl in the tcp frame once lifted
    at_grasp = []
    for k in range(1, 4000):
        tcp_p, tcp_r = arm.tcp_pose(q)
        tcp = Transform(tcp_p, _quat_from_matrix(tcp_r))
        if machine.phase == "grasp":
            at_grasp.append(tcp_p)
        if machine.phase == "lift" and in_gripper is None:
            in_gripper = tcp.inverse() * bowl
        if in_gripper is not None:
            bowl = tcp * in_gripper
        command = machine.step(k * 0.01, q, [0.02, 0.02], bowl)
        if command is None or machine.state != PickPlaceState.ACTIVE:
            break
        q = command.positions
    return machine, q, bowl, at_grasp


def test_a_round_object_is_grasped_at_its_rim_point_nearest_the_shoulder():
    """The bowl's rim offset points away from the arm (yaw 0, bowl ahead): the grasp turns it round."""
    centre = np.array([0.55, 0.1, 0.75])
    bowl = Transform(centre, quaternion_from_yaw(0.0))
    machine, _, _, at_grasp = _pick_bowl(bowl)
    assert machine.state == PickPlaceState.SUCCEEDED, machine.reason
    waist = np.array([0.2, 0.0])  # the arm's vertical axis in base_link (robot.xml's arm_base_link)
    towards_arm = (waist - centre[:2]) / np.linalg.norm(waist - centre[:2])
    expected = [*(centre[:2] + 0.062 * towards_arm), 0.79]
    assert np.linalg.norm(at_grasp[-1] - expected) < 0.02
    _, _, _, at_grasp = _pick_bowl(bowl, GraspSpec(BOWL.offset, BOWL.yaw))  # grasped where told
    assert np.linalg.norm(at_grasp[-1] - [0.612, 0.1, 0.79]) < 0.02


def test_a_round_object_is_set_down_with_the_tcp_on_the_arms_side():
    """Turning the bowl as it is set down reaches targets a rim's diameter further away."""
    machine, q, bowl, _ = _pick_bowl(Transform(np.array([0.5, 0.0, 0.75]), quaternion_from_yaw(0.0)))
    assert machine.state == PickPlaceState.SUCCEEDED and machine.held == "bowl", machine.reason

    def farthest_reachable(free_yaw: bool) -> float:
        farthest = 0.0
        for x in np.arange(0.4, 1.2, 0.005):
            # a target yaw that puts the held rim on the far side of the bowl
            target = Transform(np.array([x, 0.0, 0.75]), quaternion_from_yaw(bowl.yaw() + math.pi))
            machine.start_place("bowl", target, q, 100.0, free_yaw=free_yaw)
            if machine.state == PickPlaceState.ACTIVE:
                farthest = float(x)
            machine.cancel()
        return farthest

    assert farthest_reachable(True) - farthest_reachable(False) > 0.1


def test_a_round_objects_grasp_point_is_where_its_rim_is_nearest():
    bowl = Transform(np.array([1.0, 2.0, 0.9]), quaternion_from_yaw(0.5))
    offset = (0.062, 0.0, 0.04)
    spec = ObjectSpec("bowl", "bowl", (0.065, 0.05, 0.006), 0.2, grasp_offset=offset)
    square = dataclasses.replace(spec, shape="box", size=(0.13, 0.13, 0.05))  # not round
    cup = ObjectSpec("cup", "cylinder", (0.032, 0.09), 0.12, grasp_offset=(0.0, 0.0, 0.06))
    tcp = np.array([1.0, 1.5, 0.95])  # south of the bowl
    assert grasp_point(square, bowl, near=tcp) == pytest.approx(bowl.apply(np.array(offset)))
    assert grasp_point(spec, bowl, near=tcp) == pytest.approx([1.0, 2.0 - 0.062, 0.94])
    assert grasp_point(cup, bowl, near=tcp) == pytest.approx([1.0, 2.0, 0.96])


def test_an_object_picked_near_the_base_retreats_no_nearer_the_shoulder_than_the_arm_folds():
    """The kitchen's plate by its near rim, 0.31 m ahead of the shoulder, with galley.yaml's 25 cm retreat.

    The full retreat would put the tcp 6 cm from the shoulder's vertical, folded past the elbow's
    limit: the arm stalled there, 7 to 11 cm short, and the pick failed as unreachable.
    """
    plate = GraspSpec((0.087, 0.0, 0.016), 0.0, symmetric=True)
    config = PickPlaceConfig(retreat_distance_m=0.25, carry_height_m=1.0)
    folded = dataclasses.replace(config, retreat_min_radius_m=0.0)  # the retreat before the limit
    for cfg, expected in ((config, PickPlaceState.SUCCEEDED), (folded, PickPlaceState.FAILED)):
        arm = load_arm(ROBOT)
        machine = PickPlace(RmpFlow(arm, posture=POSTURE), cfg)
        q = POSTURE.copy()
        pose = Transform(np.array([0.6, 0.02, 0.75]), quaternion_from_yaw(0.4))
        machine.start_pick("plate", plate, pose, q, 0.0)
        in_gripper: Transform | None = None
        for k in range(1, 4000):
            tcp_p, tcp_r = arm.tcp_pose(q)
            tcp = Transform(tcp_p, _quat_from_matrix(tcp_r))
            if machine.phase in {"lift", "retreat"}:  # the plate follows the closed gripper
                in_gripper = in_gripper or tcp.inverse() * pose
                pose = tcp * in_gripper
            command = machine.step(k * 0.01, q, [0.01, 0.01], pose)
            if command is None or machine.state != PickPlaceState.ACTIVE:
                break
            q = command.positions
        assert machine.state == expected, machine.reason
    assert "phase retreat" in machine.reason and "unreachable" in machine.reason


def test_the_place_retreat_leaves_the_empty_gripper_at_carry_height_pulled_back():
    """After the release the gripper rises first, to carry height, then back towards the shoulder.

    Left low where it let go (10 cm above the release), the fingers caught the next zone's counter
    edge as the base turned there, and pushed it up to 16 cm short of its goal.
    """
    config = PickPlaceConfig(retreat_distance_m=0.25, carry_height_m=1.0)
    arm = load_arm(ROBOT)
    machine = PickPlace(RmpFlow(arm, posture=POSTURE), config)
    q = POSTURE.copy()
    cup = Transform(np.array([0.62, 0.05, 0.75]), quaternion_from_yaw(0.3))
    machine.start_pick("cup", GraspSpec((0.0, 0.0, 0.06)), cup, q, 0.0)
    place_at = Transform(np.array([0.6, -0.2, 0.75]), quaternion_from_yaw(0.0))
    now = 0.0
    retreat: list[np.ndarray] = []  # the tcp during the place's retreat
    for _ in range(8000):
        now += 0.01
        tcp, _ = arm.tcp_pose(q)
        if machine.phase in {"lift", "retreat", "transport", "descend"} and machine.held == "cup":
            cup = Transform(tcp - [0.0, 0.0, 0.06], quaternion_from_yaw(cup.yaw()))  # held: it follows
        if machine.goal == "place" and machine.phase == "retreat":
            retreat.append(tcp)
        command = machine.step(now, q, [0.02, 0.02], cup)
        if command is None:
            if machine.goal == "place" or machine.state != PickPlaceState.SUCCEEDED:
                break
            machine.start_place("cup", place_at, q, now)
            continue
        q = command.positions
    assert machine.goal == "place" and machine.state == PickPlaceState.SUCCEEDED, machine.reason
    assert np.linalg.norm(cup.translation[:2] - place_at.translation[:2]) < 0.01  # left where it was set down
    released, final = retreat[0], arm.tcp_pose(q)[0]
    # the released cup's bottom would ride at carry height, as a held one does
    assert final[2] - 0.06 >= config.carry_height_m - config.coarse_position_tolerance_m
    waist = np.array([0.2, 0.0])  # the arm's vertical axis in base_link (robot.xml's arm_base_link)
    pulled = np.linalg.norm(released[:2] - waist) - np.linalg.norm(final[:2] - waist)
    assert pulled > 0.15
    # up first: the fingers move sideways only once they are above the cup (9 cm tall)
    for tcp in retreat:
        if np.linalg.norm((tcp - released)[:2]) > 0.01:
            assert tcp[2] - released[2] >= config.place_retreat_height_m - 0.02


def test_a_pick_turns_the_gripper_the_other_way_where_the_wrist_would_pass_its_limit():
    """A fresh-suite pick: the heading nearer the gripper's lay 0.13 rad past wrist_rotate's limit."""
    arm = load_arm(ROBOT)
    machine = PickPlace(RmpFlow(arm, posture=POSTURE))
    q = np.array([-0.4, -1.67, 2.34, 0.0, 0.9, -2.0])
    apple = Transform(np.array([0.751, -0.037, 0.9]), quaternion_from_yaw(-1.6))
    machine.start_pick("apple", GraspSpec((0.0, 0.0, 0.037)), apple, q, 0.0)
    wrist = []
    for k in range(1, 1500):
        command = machine.step(k * 0.01, q, [0.04, 0.04], apple)
        if command is None or machine.phase == "grasp":
            break
        q = command.positions
        wrist.append(q[-1])
    assert machine.phase == "grasp", machine.reason
    assert min(wrist) > arm.lower[-1] + 0.1 and max(wrist) < arm.upper[-1] - 0.1


def test_the_fingers_close_only_once_the_descent_has_come_to_rest_at_the_grasp_point():
    """An arm that lags its command and joint states at half the controller's rate (50 and 100 Hz).

    The descent used to end as soon as the tcp was within 5 mm of the grasp point, still moving
    down at several cm/s, and a tick that saw no new joint state read as a stop: the fingers
    closed above a spoon's 11 mm handle and slid over it (0 of 5 spoon picks in unseen kitchens).
    """
    arm = load_arm(ROBOT)
    machine = PickPlace(RmpFlow(arm, posture=POSTURE))
    spoon = Transform(np.array([0.6, 0.0, 0.75]), quaternion_from_yaw(0.2))
    grasp = GraspSpec((-0.027, 0.0, 0.017), 1.5708)
    q = measured = POSTURE.copy()
    machine.start_pick("spoon", grasp, spoon, q, 0.0)
    for k in range(1, 1500):
        command = machine.step(k * 0.01, measured, [0.04, 0.04], spoon)
        assert command is not None, machine.reason
        if machine.phase == "grasp":
            break
        q = q + 0.15 * (command.positions - q)  # the servos' lag: a time constant of about 60 ms
        if k % 2 == 0:
            measured = q.copy()
    assert machine.phase == "grasp", machine.reason
    target = spoon.translation + rotz(0.2) @ np.array(grasp.offset)
    tcp, _ = arm.tcp_pose(q)
    assert np.linalg.norm(tcp - target) < 0.002
    tcp_next, _ = arm.tcp_pose(q + 0.15 * (command.positions - q))
    assert np.linalg.norm(tcp_next - tcp) / 0.01 < 0.01  # at rest: below 1 cm/s


def test_a_held_object_is_carried_across_at_the_higher_of_the_two_heights():
    """Transport: up to the approach height above a higher target first, then across.

    On the slant from the carry pose a plate 7 cm above a counter swept a 9.5 cm mug along under
    its target and landed on it, tilted 31 degrees (a training kitchen, seed 995672).
    """
    arm = load_arm(ROBOT)
    config = PickPlaceConfig()
    machine = PickPlace(RmpFlow(arm, posture=POSTURE), config)
    q = POSTURE.copy()
    cup = Transform(np.array([0.62, 0.05, 0.75]), quaternion_from_yaw(0.3))
    machine.start_pick("cup", GraspSpec((0.0, 0.0, 0.06)), cup, q, 0.0)
    place_at = Transform(np.array([0.55, -0.25, 0.85]), quaternion_from_yaw(0.0))  # 10 cm higher
    transport: list[np.ndarray] = []
    now = 0.0
    for _ in range(8000):
        now += 0.01
        tcp, _ = arm.tcp_pose(q)
        if machine.held == "cup":
            cup = Transform(tcp - [0.0, 0.0, 0.06], quaternion_from_yaw(cup.yaw()))  # held: it follows
        if machine.goal == "place" and machine.phase == "transport":
            transport.append(tcp)
        command = machine.step(now, q, [0.02, 0.02], cup)
        if command is None:
            if machine.goal == "place" or machine.state != PickPlaceState.SUCCEEDED:
                break
            machine.start_place("cup", place_at, q, now)
            continue
        q = command.positions
    assert machine.goal == "place" and machine.state == PickPlaceState.SUCCEEDED, machine.reason
    start = transport[0]
    top = place_at.translation[2] + 0.06 + config.release_height_m + config.approach_height_m
    assert top - start[2] > 0.05  # the target's approach is well above the carry pose
    crossing = [tcp for tcp in transport if np.linalg.norm((tcp - start)[:2]) > 0.03]
    assert crossing and min(tcp[2] for tcp in crossing) >= top - 0.03


@pytest.mark.parametrize(("turn_deg", "slide_m", "slipped"), [(25.0, 0.0, False), (0.0, 0.04, True)])
def test_a_plate_turning_about_the_fingers_has_not_slipped_one_sliding_out_has(turn_deg, slide_m, slipped):
    """Slip is the held point leaving the tcp, the object's tilt included.

    A plate held by its rim that touches down turns flat about the fingers: its centre moves by
    the rim's radius times the turn (25 degrees: 37 mm), but what the fingers hold stays there.
    Measured upright, the turn read as a slip and failed the place.
    """
    plate = Transform(np.array([0.62, 0.05, 0.75]), quaternion_from_yaw(0.3))
    machine, q, plate, _ = _pick_bowl(plate, GraspSpec((0.087, 0.0, 0.016), 0.0, symmetric=True))
    assert machine.state == PickPlaceState.SUCCEEDED, machine.reason
    arm = machine.arm
    tcp_p, tcp_r = arm.tcp_pose(q)
    in_gripper = Transform(tcp_p, _quat_from_matrix(tcp_r)).inverse() * plate
    half = math.radians(turn_deg) / 2.0  # about the rim's tangent at the fingers (the tcp's z)
    turn = Transform(np.array([0.0, slide_m, 0.0]), np.array([0.0, 0.0, math.sin(half), math.cos(half)]))
    machine.start_place("bowl", Transform(np.array([0.55, -0.2, 0.75])), q, 40.0)  # _pick_bowl names it
    for k in range(1, 100):
        tcp_p, tcp_r = arm.tcp_pose(q)
        plate = Transform(tcp_p, _quat_from_matrix(tcp_r)) * turn * in_gripper
        command = machine.step(40.0 + k * 0.01, q, [0.003, 0.003], plate)
        if command is None:
            break
        q = command.positions
    assert ("slipped" in machine.reason) == slipped, machine.reason
    assert machine.state == (PickPlaceState.FAILED if slipped else PickPlaceState.ACTIVE), machine.reason


def _pick_pushed_off(push_s: tuple[float, float]) -> tuple[PickPlace, float]:
    """A kinematic pick whose measured arm is held 4 cm off its command over ``push_s`` (start, end).

    Stands for a perturbation spell (or a lagging controller): RMPflow's own plan reaches each
    target, the measured tcp does not. Returns the machine when it stops or grasps, and the time.
    """
    arm = load_arm(ROBOT)
    machine = PickPlace(RmpFlow(arm, posture=POSTURE))
    q = POSTURE.copy()
    cup = Transform(np.array([0.62, 0.05, 0.75]), quaternion_from_yaw(0.3))
    machine.start_pick("cup", GraspSpec((0.0, 0.0, 0.06)), cup, q, 0.0)
    t = 0.0
    for k in range(1, 3000):
        t = k * 0.01
        pushed = q + np.where(push_s[0] <= t < push_s[1], 0.08, 0.0)  # each joint 0.08 rad off
        command = machine.step(t, pushed, [0.04, 0.04], cup)
        if command is None or machine.phase == "grasp":
            break
        q = command.positions
    return machine, t


def test_an_arm_pushed_off_its_command_for_a_while_is_not_unreachable():
    machine, _ = _pick_pushed_off((0.0, 6.0))  # past approach's settle limit, not its tracking limit
    assert machine.state == PickPlaceState.ACTIVE and machine.phase == "grasp", machine.reason


def test_an_arm_that_never_follows_its_plan_fails_after_the_tracking_limit_and_says_so():
    machine, t = _pick_pushed_off((0.0, 99.0))
    c = PickPlaceConfig()
    assert machine.state == PickPlaceState.FAILED and "phase approach" in machine.reason
    assert "does not follow its command" in machine.reason
    assert t > c.settle_limit_s + c.track_limit_s
