"""The policy evaluator without a simulator: the plan runner, place targets and the step criteria."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pytest

from galley_core.geometry import Pose2D, Transform, quaternion_from_yaw
from galley_core.scene import load_scene
from galley_core.tasks.executor import ExecutorConfig, PlanRunner, move_goal, place_target
from galley_core.tasks.grammar import parse_plan
from galley_core.tasks.judging import (
    PickRetreat,
    held,
    judge_step,
    move_succeeded,
    pick_succeeded,
    place_succeeded,
    retreat_over,
    robot_zone,
    settled,
    surface_z,
)
from galley_core.tf_tree import TransformError

CONFIG = ExecutorConfig()  # nav 0.10 m, place 0.05 m, lift 0.03 m
TINY = 1e-6  # metres: just inside / just outside a tolerance
BOWL_ON_BLUE = ["move to the blue zone", "pick the bowl", "move to the green zone", "place the bowl"]


@pytest.fixture(scope="module")
def kitchen(request):
    return load_scene(request.config.rootpath / "config" / "scenes" / "kitchen.yaml")


def at(x: float, y: float, z: float, yaw: float = 0.0) -> Transform:
    """An upright object pose."""
    return Transform(np.array([x, y, z]), np.array(quaternion_from_yaw(yaw)))


def runner_at(steps: list[str], index: int, config: ExecutorConfig = CONFIG) -> PlanRunner:
    """A runner whose steps before ``index`` succeeded and whose step ``index`` is running."""
    runner = PlanRunner(parse_plan(steps), config)
    for i in range(index):
        runner.begin(float(i))
        runner.finish(True, "", float(i) + 0.5)
    runner.begin(float(index))
    return runner


@dataclass
class FakeTruth:
    """Ground truth as plain values; what is None or absent is unknown. Records what was asked."""

    base: Pose2D | None = None
    objects: dict[str, Transform] = field(default_factory=dict)
    tcp_position: np.ndarray | None = None
    asked: list[str] = field(default_factory=list)

    def base_pose(self) -> Pose2D:
        self.asked.append("base")
        if self.base is None:
            raise TransformError("map -> base_link: no transform")
        return self.base

    def object_pose(self, name: str) -> Transform:
        self.asked.append(name)
        return self.objects[name]

    def tcp(self) -> np.ndarray:
        self.asked.append("tcp")
        if self.tcp_position is None:
            raise TransformError("map -> gripper_link: no transform")
        return self.tcp_position


# -- the criteria on plain values, at their tolerances --------------------------------------------


@pytest.mark.parametrize(
    ("base", "ok"),
    [
        (Pose2D(0.0, 0.0, 3.0), True),  # the yaw is not judged
        (Pose2D(0.1, 0.0), True),  # at the radius
        (Pose2D(0.0, -0.1 - TINY), False),
        (Pose2D(0.08, 0.08), False),  # 0.113 m: each axis alone would pass
    ],
)
def test_a_move_succeeds_within_the_radius_of_the_goal_position(base, ok):
    success, reason = move_succeeded(base, Pose2D(0.0, 0.0, 1.0), CONFIG)
    assert success is ok
    assert (reason == "") is ok
    if not ok:
        assert f"m from the goal (> {CONFIG.nav_success_radius_m} m)" in reason


@pytest.mark.parametrize(
    ("object_z", "surface", "ok"),
    [
        (0.78, 0.75, True),
        (0.03, 0.0, True),  # at the lift height
        (0.03 - TINY, 0.0, False),
        (0.70, 0.75, False),  # below its surface: fallen off it
    ],
)
def test_a_pick_succeeds_with_the_object_lifted_off_its_surface(object_z, surface, ok):
    success, reason = pick_succeeded(object_z, surface, "cup", CONFIG)
    assert success is ok
    if not ok:
        assert reason == f"the cup is not lifted ({object_z - surface:.3f} m above its surface)"


@pytest.mark.parametrize(
    ("position", "ok"),
    [
        ((0.0, 0.0, 0.0), True),
        ((0.05, 0.0, 0.0), True),  # at the radius
        ((0.0, 0.0, 0.05 + TINY), False),  # height counts: the distance is 3-D
        ((0.04, 0.04, 0.0), False),  # 0.057 m: each axis alone would pass
    ],
)
def test_a_place_succeeds_within_the_radius_of_its_target(position, ok):
    success, reason = place_succeeded(np.array(position), (0.0, 0.0, 0.0), "plate", CONFIG)
    assert success is ok
    if not ok:
        assert reason.startswith("the plate ended ") and reason.endswith("m from its target (> 0.05 m)")


def test_a_config_sets_the_tolerances():
    loose = ExecutorConfig(nav_success_radius_m=0.5, place_success_radius_m=0.2, lift_height_m=0.1)
    assert move_succeeded(Pose2D(0.4, 0.0), Pose2D(), loose)[0]
    assert place_succeeded((0.15, 0.0, 0.0), (0.0, 0.0, 0.0), "cup", loose)[0]
    assert not pick_succeeded(0.08, 0.0, "cup", loose)[0]


def test_an_object_is_held_with_the_tcp_at_its_grasp_point(kitchen):
    bowl = kitchen.object("bowl")  # round: held anywhere on the circle its grasp offset sweeps
    pose = at(1.0, 2.0, 0.9)
    rim = pose.apply(np.array(bowl.grasp_offset))
    assert held(kitchen, "bowl", pose, rim, 0.05) == (True, "")
    across = pose.apply(np.array([0.0, -bowl.grasp_offset[0], bowl.grasp_offset[2]]))
    assert held(kitchen, "bowl", pose, across, 0.05) == (True, "")
    assert held(kitchen, "bowl", pose, rim + np.array([0.0, 0.0, 0.05 - TINY]), 0.05)[0]
    ok, reason = held(kitchen, "bowl", pose, rim + np.array([0.0, 0.0, 0.05 + TINY]), 0.05)
    assert not ok
    assert reason == "the bowl is lifted but not held: the gripper is 0.050 m from its grasp point"


def test_a_fork_is_held_only_at_its_handle(kitchen):
    fork = kitchen.object("fork")  # not round: its grasp point turns with it
    pose = at(0.0, 0.0, 0.75, yaw=math.pi / 2)
    handle = pose.apply(np.array(fork.grasp_offset))
    assert held(kitchen, "fork", pose, handle, 0.05)[0]
    x, _, z = fork.grasp_offset
    assert held(kitchen, "fork", pose, pose.apply(np.array([x + 0.05 - TINY, 0.0, z])), 0.05)[0]
    mirrored = pose.apply(np.array([-x, 0.0, z]))  # where a round object would be held too
    ok, reason = held(kitchen, "fork", pose, mirrored, 0.05)
    assert not ok and "0.060 m from its grasp point" in reason


# -- where the robot is and what the object stood on ----------------------------------------------


@pytest.mark.parametrize("zone", ["red", "green", "blue", "yellow", "purple"])
def test_the_robot_zone_is_the_one_whose_approach_pose_is_nearest(kitchen, zone):
    x, y, _ = kitchen.zone(zone).approach
    assert robot_zone(kitchen, Pose2D(x, y)) == zone
    assert robot_zone(kitchen, Pose2D(x + 0.3, y - 0.2, 2.0)) == zone


def test_the_robot_zone_between_two_approaches_goes_to_the_nearer(kitchen):
    blue, yellow = kitchen.zone("blue").approach, kitchen.zone("yellow").approach  # 1 m apart
    middle = (blue[0] + yellow[0]) / 2.0
    assert robot_zone(kitchen, Pose2D(middle - 0.01, blue[1])) == "blue"
    assert robot_zone(kitchen, Pose2D(middle + 0.01, blue[1])) == "yellow"


def test_the_surface_is_the_zone_of_the_last_move_before_the_pick(kitchen):
    plan = parse_plan(
        ["move to the red zone", "move to the blue zone", "pick the bowl", "move to the red zone"]
    )
    assert surface_z(kitchen, plan, 2) == kitchen.zone("blue").z == pytest.approx(0.75)
    assert surface_z(kitchen, plan, 1) == kitchen.zone("red").z


def test_without_a_move_before_it_the_surface_is_the_highest_zone(kitchen):
    assert surface_z(kitchen, parse_plan(["pick the cup"]), 0) == max(z.z for z in kitchen.zones)
    assert surface_z(kitchen, parse_plan(["pick the cup"]), 0) == pytest.approx(0.9)


# -- a running step judged on ground truth ---------------------------------------------------------


def test_a_move_is_judged_on_the_base_alone(kitchen):
    runner = runner_at(BOWL_ON_BLUE, 2)
    x, y, yaw = kitchen.zone("green").approach
    truth = FakeTruth(base=Pose2D(x, y + 0.1 - TINY, yaw))
    assert judge_step(runner, kitchen, truth, CONFIG) == (True, "")
    assert truth.asked == ["base"]  # no object frame is needed
    ok, reason = judge_step(runner, kitchen, FakeTruth(base=Pose2D(x - 0.1 - TINY, y)), CONFIG)
    assert not ok and reason.startswith("the base stopped 0.100 m from the goal")
    assert move_goal(kitchen, "green") == Pose2D(x, y, yaw)


def test_a_move_settles_facing_the_goal_heading_and_wraps(kitchen):
    """Not a success criterion: what completion 'criteria' waits for before it ends a move."""
    runner = runner_at(BOWL_ON_BLUE, 2)
    x, y, yaw = kitchen.zone("green").approach
    for error, facing in ((0.1 - TINY, True), (-0.1 + TINY, True), (0.1 + TINY, False), (math.pi, False)):
        assert settled(runner, kitchen, FakeTruth(base=Pose2D(x, y, yaw + error)), CONFIG) is facing
    assert settled(runner, kitchen, FakeTruth(base=Pose2D(x, y, yaw + 2 * math.pi + 0.05)), CONFIG)
    assert settled(
        runner,
        kitchen,
        FakeTruth(base=Pose2D(x, y, yaw + 3.0)),
        ExecutorConfig(nav_heading_tolerance_rad=math.pi),
    )
    assert not settled(runner, kitchen, FakeTruth(), CONFIG)  # no base pose: not yet
    assert settled(runner_at(BOWL_ON_BLUE, 3), kitchen, FakeTruth(), CONFIG)  # a place: nothing to wait for
    with pytest.raises(ValueError, match="nav_heading_tolerance_rad"):
        ExecutorConfig(nav_heading_tolerance_rad=0.0)


def test_a_pick_settles_with_its_object_raised_to_the_carry_height(kitchen):
    """The oracle's pick ends with the object carried over the counters; a policy's waits for that too."""
    runner = runner_at(BOWL_ON_BLUE, 1)
    carry = ExecutorConfig(pick_carry_height_m=0.94)
    lifted = FakeTruth(objects={"bowl": at(1.0, 2.0, kitchen.zone("blue").z + 0.05)})
    assert judge_step(runner, kitchen, lifted, carry)[0]  # the criterion holds: lifted
    assert not settled(runner, kitchen, lifted, carry)  # but not yet carried
    assert settled(runner, kitchen, FakeTruth(objects={"bowl": at(1.0, 2.0, 0.94 + TINY)}), carry)
    assert settled(runner, kitchen, lifted, CONFIG)  # 0: no wait, the lift ends the pick
    assert not settled(runner, kitchen, FakeTruth(), carry)  # no object pose: not yet


def test_a_pick_settles_only_with_the_arm_drawn_back(kitchen):
    """The oracle's retreat draws the arm back; a policy's pick must not end with the arm reaching out."""
    runner = runner_at(BOWL_ON_BLUE, 1)
    carry = ExecutorConfig(pick_carry_height_m=0.94)
    carried = FakeTruth(objects={"bowl": at(1.1, 2.0, 0.95)})
    assert settled(runner, kitchen, carried, carry, arm_drawn_back=True)
    assert not settled(runner, kitchen, carried, carry, arm_drawn_back=False)
    assert (
        settled(runner_at(BOWL_ON_BLUE, 0), kitchen, carried, carry, arm_drawn_back=False) is False
    )  # a move
    assert settled(runner_at(BOWL_ON_BLUE, 3), kitchen, carried, carry, arm_drawn_back=False)  # a place
    back = ExecutorConfig(pick_retreat_m=0.18)
    assert not retreat_over(0.17, 0.15, back, period_s=0.1)  # not yet far enough
    assert not retreat_over(0.20, 0.18, back, period_s=0.1)  # still drawing away at 0.2 m/s
    assert retreat_over(0.201, 0.20, back, period_s=0.1)  # 1 cm/s: over
    assert retreat_over(0.19, 0.20, back, period_s=0.1)  # turned back towards the object
    assert not retreat_over(0.25, None, back, period_s=0.1)  # the first check: no speed yet
    follow, pick = PickRetreat(back, period_s=0.1), runner_at(BOWL_ON_BLUE, 1).current
    stood = {"bowl": at(1.0, 2.0, 0.95)}
    assert not follow.over(pick, FakeTruth(objects=stood))  # no tcp yet
    tcps = [(1.0, 2.05), (1.0, 1.9), (1.0, 1.8), (1.0, 1.799)]  # reaching, drawing back, at rest
    seen = [follow.over(pick, FakeTruth(objects=stood, tcp_position=np.array([*p, 1.0]))) for p in tcps]
    assert seen == [False, False, False, True]
    assert follow.over(runner_at(BOWL_ON_BLUE, 3).current, FakeTruth())  # a place: nothing to follow


def test_a_pick_is_judged_on_the_lift_off_the_surface_of_the_zone_moved_to(kitchen):
    runner = runner_at(BOWL_ON_BLUE, 1)
    table = kitchen.zone("blue").z
    lifted = FakeTruth(objects={"bowl": at(-0.5, -0.56, table + 0.03 + TINY)})
    assert judge_step(runner, kitchen, lifted, CONFIG) == (True, "")
    assert lifted.asked == ["bowl"]  # the arm's status said the grasp closed: no tcp needed
    resting = FakeTruth(objects={"bowl": at(-0.5, -0.56, table + 0.03 - TINY)})
    assert judge_step(runner, kitchen, resting, CONFIG) == (
        False,
        "the bowl is not lifted (0.030 m above its surface)",
    )


def test_a_pick_judged_on_criteria_also_needs_the_object_in_the_gripper(kitchen):
    runner = runner_at(BOWL_ON_BLUE, 1)
    pose = at(-0.5, -0.56, 0.9)
    rim = pose.apply(np.array(kitchen.object("bowl").grasp_offset))
    holding = FakeTruth(objects={"bowl": pose}, tcp_position=rim)
    assert judge_step(runner, kitchen, holding, CONFIG, hold_distance_m=0.05) == (True, "")
    knocked = FakeTruth(objects={"bowl": pose}, tcp_position=rim + np.array([0.2, 0.0, 0.0]))
    ok, reason = judge_step(runner, kitchen, knocked, CONFIG, hold_distance_m=0.05)
    assert not ok and reason.startswith("the bowl is lifted but not held")


def test_a_pick_that_fails_the_lift_does_not_need_the_gripper(kitchen):
    runner = runner_at(BOWL_ON_BLUE, 1)
    resting = FakeTruth(objects={"bowl": at(-0.5, -0.56, 0.75)})  # no tcp known
    ok, reason = judge_step(runner, kitchen, resting, CONFIG, hold_distance_m=0.05)
    assert (ok, reason) == (False, "the bowl is not lifted (0.000 m above its surface)")
    assert resting.asked == ["bowl"]


def test_a_place_is_judged_against_its_place_goal(kitchen):
    runner = runner_at(BOWL_ON_BLUE, 3)
    goal = place_target(kitchen, "green", "bowl", {}, kitchen.zone("green").approach[:2])
    near = FakeTruth(objects={"bowl": at(goal[0] + 0.05 - TINY, goal[1], goal[2])})
    assert judge_step(runner, kitchen, near, CONFIG, place_goal=goal) == (True, "")
    far = FakeTruth(objects={"bowl": at(goal[0], goal[1] - 0.05 - TINY, goal[2])})
    ok, reason = judge_step(runner, kitchen, far, CONFIG, place_goal=goal)
    assert not ok and reason.startswith("the bowl ended 0.050 m from its target")
    with pytest.raises(ValueError, match="place goal"):
        judge_step(runner, kitchen, near, CONFIG)


def test_a_place_judged_on_criteria_also_needs_the_object_let_go(kitchen):
    runner = runner_at(BOWL_ON_BLUE, 3)
    goal = place_target(kitchen, "green", "bowl", {}, kitchen.zone("green").approach[:2])
    pose = at(*goal)
    rim = pose.apply(np.array(kitchen.object("bowl").grasp_offset))
    holding = FakeTruth(objects={"bowl": pose}, tcp_position=rim)
    ok, reason = judge_step(runner, kitchen, holding, CONFIG, place_goal=goal, hold_distance_m=0.05)
    assert (ok, reason) == (False, "the bowl is at its target but still in the gripper (it must be let go)")
    left = FakeTruth(objects={"bowl": pose}, tcp_position=rim + np.array([0.0, 0.0, 0.1]))
    assert judge_step(runner, kitchen, left, CONFIG, place_goal=goal, hold_distance_m=0.05) == (True, "")
    # the arm's status said it opened: the target alone (no tcp asked for)
    assert judge_step(runner, kitchen, holding, CONFIG, place_goal=goal) == (True, "")


@pytest.mark.parametrize(
    ("index", "truth", "missing"),
    [
        (0, FakeTruth(), "map -> base_link: no transform"),
        (1, FakeTruth(), "'bowl'"),
        (1, FakeTruth(objects={"bowl": at(-0.5, -0.56, 0.9)}), "map -> gripper_link: no transform"),
        (3, FakeTruth(objects={"cup": at(0.0, 0.0, 0.9)}), "'bowl'"),
    ],
)
def test_missing_ground_truth_fails_the_step_and_says_so(kitchen, index, truth, missing):
    runner = runner_at(BOWL_ON_BLUE, index)
    ok, reason = judge_step(runner, kitchen, truth, CONFIG, place_goal=(0.0, 0.0, 0.0), hold_distance_m=0.05)
    assert (ok, reason) == (False, f"no ground truth to judge the step: {missing}")


def test_judging_needs_a_running_step(kitchen):
    runner = PlanRunner(parse_plan(["pick the cup"]), CONFIG)
    runner.begin(0.0)
    runner.finish(True, "", 1.0)
    with pytest.raises(RuntimeError, match="no step is running"):
        judge_step(runner, kitchen, FakeTruth(), CONFIG)


# -- the runner and the place target ----------------------------------------------------------------


def test_the_runner_records_each_step_and_succeeds_when_all_do():
    runner = PlanRunner(parse_plan(BOWL_ON_BLUE), CONFIG)
    for i in range(4):
        assert str(runner.begin(10.0 * i)) == BOWL_ON_BLUE[i]
        assert runner.elapsed_s(10.0 * i + 2.5) == 2.5
        runner.finish(True, "", 10.0 * i + 2.5)
    assert runner.done and runner.success and runner.current is None
    assert [r.duration_s for r in runner.results] == [2.5] * 4


def test_the_runner_stops_at_a_failure_unless_teleporting():
    stopping = runner_at(BOWL_ON_BLUE, 0)
    stopping.finish(False, "no path", 1.0)
    assert stopping.done and not stopping.success and len(stopping.results) == 1
    teleporting = ExecutorConfig(teleport_on_failure=True)
    going_on = runner_at(BOWL_ON_BLUE, 0, teleporting)
    going_on.finish(False, "no path", 1.0)
    assert not going_on.done and going_on.current is not None and going_on.current.action == "pick"
    going_on.begin(1.0)
    going_on.finish(False, "missed", 2.0)  # the object is teleported into the gripper
    assert not going_on.done and going_on.current is not None and going_on.current.action == "move"


def test_the_runner_times_out_after_the_step_limit_and_truncates_to_max_steps():
    runner = runner_at(BOWL_ON_BLUE, 0, ExecutorConfig(step_time_limit_s=10.0, max_steps=2))
    assert len(runner.plan) == 2
    assert not runner.timed_out(10.0) and runner.timed_out(10.0 + TINY)


def test_an_abort_fails_the_running_step_and_ends_the_episode():
    runner = runner_at(BOWL_ON_BLUE, 1)
    runner.abort("aborted by fallen_object: the bowl fell", 4.0)
    assert runner.done and runner.results[-1].reason == "aborted by fallen_object: the bowl fell"
    assert [r.success for r in runner.results] == [True, False]


def test_the_place_target_lies_in_the_zone_clear_of_other_objects(kitchen):
    green = kitchen.zone("green")
    robot = green.approach[:2]
    x, y, z = place_target(kitchen, "green", "cup", {}, robot)
    assert z == green.z
    assert abs(x - green.center[0]) <= green.size[0] / 2 and abs(y - green.center[1]) <= green.size[1] / 2
    crowded = {"apple": (x, y), "cup": (x, y)}  # the object itself does not crowd its own spot
    x2, y2, _ = place_target(kitchen, "green", "cup", crowded, robot)
    assert math.hypot(x2 - x, y2 - y) >= 0.12


@pytest.mark.parametrize(("placed", "other"), [("plate", "apple"), ("plate", "cup"), ("bowl", "apple")])
def test_the_place_target_keeps_footprints_apart_in_a_crowded_zone(kitchen, placed, other):
    # Another object at the patch's centre: a 30 cm patch leaves the plate only its corners, and
    # judged by centres alone the plate went down on top of the apple (fresh-suite failures).
    green = kitchen.zone("green")
    x, y, _ = place_target(kitchen, "green", placed, {other: green.center}, green.approach[:2])
    gap = math.hypot(x - green.center[0], y - green.center[1])
    gap -= kitchen.object(placed).footprint_radius + kitchen.object(other).footprint_radius
    assert gap > 0.0
    assert abs(x - green.center[0]) <= green.size[0] / 2 and abs(y - green.center[1]) <= green.size[1] / 2
    # the footprint stays on the counter, whose front edge is 0.22 m before the zone's centre
    assert y - kitchen.object(placed).footprint_radius > green.center[1] - 0.22


def test_the_place_target_stays_within_the_arms_reach_of_a_base_parked_short(kitchen):
    # The base may stop up to 10 cm short of the approach pose; the clearest corner of the purple
    # patch is then beyond what the arm reaches top-down over the counter.
    purple = kitchen.zone("purple")
    robot = (purple.approach[0] - 0.1, purple.approach[1])
    plate = (purple.center[0] - 0.06, purple.center[1])  # on the robot's side of the patch
    x, y, _ = place_target(kitchen, "purple", "fork", {"plate": plate}, robot)
    assert math.hypot(x - robot[0], y - robot[1]) <= 0.78
