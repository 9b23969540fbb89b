"""The task executor runs plans on the simulator and judges every step on ground truth."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from galley_core.episode import Episode, ObjectPlacement
from galley_core.geometry import Pose2D
from galley_nodes.registry import load_node_class
from galley_runtime import messages
from galley_runtime.embedded import EmbeddedHost
from galley_runtime.qos import QoS


def navigation_host(
    repo,
    tmp_path,
    *,
    navigator: bool = False,
    objects: tuple[ObjectPlacement, ...] = (),
    **executor_params: Any,
) -> tuple[EmbeddedHost, Any, dict[str, list[Any]]]:
    episode = tmp_path / "episode.json"
    episode.write_text(json.dumps(Episode("kitchen", 0, Pose2D(-1.0, 0.8, 0.0), objects, {}).to_dict()))
    host = EmbeddedHost([repo / "config" / "galley.yaml"])
    host.add_node(load_node_class("sim"), parameters={"episode_file": str(episode), "cameras_enabled": False})
    host.add_node(
        load_node_class("map_server"), parameters={"yaml_filename": str(repo / "maps" / "kitchen.yaml")}
    )
    host.add_node(load_node_class("global_planner"))
    host.add_node(load_node_class("diff_drive_controller"), parameters={"use_tf": True})
    if navigator:
        host.add_node(load_node_class("navigator"))
        executor_params["move_with"] = "navigate_to_pose"
    executor = host.add_node(load_node_class("task_executor"), parameters=executor_params)
    seen: dict[str, list[Any]] = {"result": [], "events": [], "status": []}
    probe = host.participant("probe")
    probe.create_subscription(
        "/task/result", "galley_msgs/msg/EpisodeResult", seen["result"].append, QoS.latched()
    )
    probe.create_subscription(
        "/episode/events", "galley_msgs/msg/EpisodeEvent", seen["events"].append, QoS(depth=100)
    )
    probe.create_subscription(
        "/task/status", "galley_msgs/msg/ActionStatus", seen["status"].append, QoS.latched()
    )
    seen["plan_pub"] = [probe.create_publisher("/task/plan", "galley_msgs/msg/TaskPlan", QoS.latched())]
    host.run_for(0.5)
    return host, executor, seen


def send_plan(seen: dict[str, list[Any]], steps: list[str], instruction: str = "") -> None:
    seen["plan_pub"][0].publish(
        messages.new("galley_msgs/msg/TaskPlan", instruction=instruction, steps=steps)
    )


def test_move_steps_run_in_order_and_are_judged_on_ground_truth(repo, tmp_path):
    host, _, seen = navigation_host(repo, tmp_path)
    send_plan(seen, ["move to the blue zone", "move to the green zone"], "tour")
    assert host.run_until(lambda: bool(seen["result"]), 200.0)
    result = seen["result"][-1]
    assert result.success and list(result.step_success) == [True, True]
    assert all(0 < d < 120 for d in result.step_duration_s)
    kinds = [(e.kind, e.step_index) for e in seen["events"]]
    assert kinds == [(0, 0), (1, 0), (0, 1), (1, 1), (4, -1)]  # started, succeeded, ..., episode done


def test_a_step_past_its_time_limit_fails_and_stops_the_episode(repo, tmp_path):
    host, _, seen = navigation_host(repo, tmp_path, step_time_limit_s=3.0)
    send_plan(seen, ["move to the purple zone", "move to the red zone"])
    assert host.run_until(lambda: bool(seen["result"]), 30.0)
    result = seen["result"][-1]
    assert not result.success and list(result.step_success) == [False]
    assert "exceeded the 3 s step time limit" in result.step_reason[0]


def test_moves_through_navigate_to_pose_are_judged_and_the_time_limit_cancels_them(repo, tmp_path):
    host, executor, seen = navigation_host(repo, tmp_path, navigator=True)
    cmds: list[Any] = []
    probe = host.participant("cmd_probe")
    probe.create_subscription("/cmd_vel", "geometry_msgs/msg/Twist", cmds.append, QoS(depth=1000))
    plan = host.participant("goal_probe")
    goals: list[Any] = []
    plan.create_subscription("/goal_pose", "geometry_msgs/msg/PoseStamped", goals.append, QoS())
    send_plan(seen, ["move to the blue zone"], "drive")
    assert host.run_until(lambda: bool(seen["result"]), 200.0)
    assert list(seen["result"][-1].step_success) == [True] and not goals  # the action, not /goal_pose
    host.set_parameters("task_executor", {"step_time_limit_s": 3.0})
    assert executor.config.step_time_limit_s == 3.0
    seen["result"].clear()
    send_plan(seen, ["move to the purple zone"])
    assert host.run_until(lambda: bool(seen["result"]), 30.0)
    result = seen["result"][-1]
    assert (
        list(result.step_success) == [False] and "exceeded the 3 s step time limit" in result.step_reason[0]
    )
    stopped_at = len(cmds)
    host.run_for(2.0)
    # The time limit canceled the goal: one zero command, then nothing drives the base.
    assert cmds[stopped_at - 1].linear.x == 0.0 and cmds[stopped_at - 1].angular.z == 0.0
    assert len(cmds) == stopped_at


def test_k_steps_only_and_invalid_plans(repo, tmp_path):
    host, _, seen = navigation_host(repo, tmp_path, max_steps=1)
    send_plan(seen, ["move to the blue zone", "move to the red zone"])
    assert host.run_until(lambda: bool(seen["result"]), 100.0)
    assert list(seen["result"][-1].plan) == ["move to the blue zone"] and seen["result"][-1].success
    send_plan(seen, ["move to the orange zone"])
    host.run_for(0.1)
    assert seen["status"][-1].state == 3
    assert "no zone 'orange'; zones: red, green, blue, yellow, purple" in seen["status"][-1].reason
    send_plan(seen, ["fly to the moon"])
    host.run_for(0.1)
    assert "is not a step" in seen["status"][-1].reason


@pytest.mark.parametrize("rule", ["monitor"])
def test_an_abort_on_episode_events_ends_the_episode(repo, tmp_path, rule):
    host, _, seen = navigation_host(repo, tmp_path)
    send_plan(seen, ["move to the purple zone"])
    host.run_for(2.0)
    aborts = host.participant("fake_monitor").create_publisher(
        "/episode/events", "galley_msgs/msg/EpisodeEvent", QoS(depth=100)
    )
    stale = messages.new(
        "galley_msgs/msg/EpisodeEvent", kind=3, rule=rule, reason="the fork fell in the last episode"
    )
    stale.header.stamp = messages.time_msg(host.time_ns - 2_500_000_000)  # before the plan began
    aborts.publish(stale)
    host.run_for(0.2)
    assert not seen["result"], "an abort stamped before the plan began must not end it (DDS reorders)"
    now = messages.new("galley_msgs/msg/EpisodeEvent", kind=3, rule=rule, reason="the cup fell to the floor")
    now.header.stamp = messages.time_msg(host.time_ns)
    aborts.publish(now)
    host.run_for(0.2)
    result = seen["result"][-1]
    assert not result.success and "aborted by monitor: the cup fell to the floor" in result.step_reason[0]


def test_teleport_on_failure_puts_the_base_at_the_failed_goal_and_goes_on(repo, tmp_path):
    host, _, seen = navigation_host(repo, tmp_path, step_time_limit_s=3.0, teleport_on_failure=True)
    teleports: list[Any] = []
    host.participant("spy").create_subscription(
        "/sim/teleport", "geometry_msgs/msg/PoseStamped", teleports.append, QoS()
    )
    send_plan(seen, ["move to the purple zone", "move to the red zone"])
    assert host.run_until(lambda: bool(seen["result"]), 200.0)
    result = seen["result"][-1]
    # Both moves run out of time (3 s); after each the base is put at that step's goal.
    assert list(result.step_success) == [False, False] and len(result.plan) == 2
    assert [
        (t.header.frame_id, round(t.pose.position.x, 2), round(t.pose.position.y, 2)) for t in teleports
    ] == [
        ("base_link", 2.83, -1.0),
        ("base_link", -3.0, 1.95),
    ]
    pose = host.node("sim").sim.base_pose()
    assert (pose.x, pose.y) == pytest.approx((-3.0, 1.95), abs=0.01)


def test_teleport_after_a_failed_pick_puts_the_object_into_the_gripper_and_goes_on(repo, tmp_path):
    bowl = ObjectPlacement("bowl", "green", -0.3, 2.62, 0.0, "purple", 3.52, -1.0)
    host, _, seen = navigation_host(
        repo, tmp_path, objects=(bowl,), step_time_limit_s=15.0, teleport_on_failure=True
    )
    teleports: list[Any] = []
    host.participant("spy").create_subscription(
        "/sim/teleport", "geometry_msgs/msg/PoseStamped", teleports.append, QoS()
    )
    send_plan(seen, ["pick the bowl", "move to the green zone"])  # no arm driver: the pick times out
    assert host.run_until(lambda: bool(seen["result"]), 200.0)
    result = seen["result"][-1]
    assert list(result.step_success) == [False, True]
    assert [t.header.frame_id for t in teleports] == ["gripper/bowl"]
    sim = host.node("sim").sim
    held, tcp = sim.object_poses()["bowl"].translation, sim.site_transform("tcp").translation
    # carried to the zone: at the tcp, its bottom above the counters (0.9 m)
    assert np.linalg.norm(held - tcp) < 0.08 and held[2] > 0.94
    assert np.hypot(*(held[:2] - np.array([-0.3, 1.95]))) < 0.6


def test_criteria_completion_judges_the_oracle_as_it_goes(tmp_path):
    """completion: criteria ends each step as soon as ground truth meets it and the robot has
    settled as the oracle leaves it; a pick needs the object lifted and in the gripper."""
    from galley_episodes import run_episode

    params = tmp_path / "criteria.yaml"
    params.write_text("task_executor:\n  ros__parameters:\n    completion: criteria\n")
    runs = {
        mode: run_episode(
            "Move the bowl to the green zone",
            seed=0,
            plan="move to the purple zone; pick the bowl",
            params=extra,
            progress=False,
        )["steps"]
        for mode, extra in (("status", []), ("criteria", [params]))
    }
    assert [s["success"] for s in runs["criteria"]] == [True, True], runs["criteria"]
    (move_s, pick_s), (move_c, pick_c) = ([s["duration_s"] for s in runs[m]] for m in ("status", "criteria"))
    # A move waits for the goal heading too (nav_heading_tolerance_rad, the path follower's), so it
    # ends no later than the oracle's own end, after its final turn; a pick waits for the arm drawn
    # back with its retreat over (pick_retreat_m), which is where the oracle's pick reports its end.
    assert move_c <= move_s and pick_s - 0.5 <= pick_c <= pick_s


@pytest.mark.parametrize(("tolerance", "ends_s"), [(0.1, 3.0), (3.14159, 0.1)])
def test_criteria_completion_waits_for_the_goal_heading_and_judges_position_at_the_limit(
    repo, tmp_path, tolerance, ends_s
):
    """A base on the move's goal but facing away: with the heading asked for, the move does not end
    until the time limit, which judges position alone (success); with the yaw free it ends at once."""
    from galley_core.tasks.executor import move_goal
    from galley_runtime.config_files import find_scene

    goal = move_goal(find_scene("kitchen"), "blue")
    episode = tmp_path / "episode.json"
    start = Pose2D(goal.x, goal.y, goal.theta + 1.5)
    episode.write_text(json.dumps(Episode("kitchen", 0, start, (), {}).to_dict()))
    host = EmbeddedHost([repo / "config" / "galley.yaml"])
    host.add_node(load_node_class("sim"), parameters={"episode_file": str(episode), "cameras_enabled": False})
    params = {"completion": "criteria", "step_time_limit_s": 3.0, "nav_heading_tolerance_rad": tolerance}
    host.add_node(load_node_class("task_executor"), parameters=params)
    results: list[Any] = []
    probe = host.participant("probe")
    probe.create_subscription("/task/result", "galley_msgs/msg/EpisodeResult", results.append, QoS.latched())
    plans = probe.create_publisher("/task/plan", "galley_msgs/msg/TaskPlan", QoS.latched())
    host.run_for(0.5)
    plans.publish(messages.new("galley_msgs/msg/TaskPlan", instruction="", steps=["move to the blue zone"]))
    assert host.run_until(lambda: bool(results), 10.0)
    result = results[-1]
    assert list(result.step_success) == [True] and list(result.step_reason) == [""]
    assert result.step_duration_s[0] == pytest.approx(ends_s, abs=0.15)
