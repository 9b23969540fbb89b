"""/task/execute in the embedded host: an instruction in, feedback per step, a result; cancel stops.

The stack is the oracle's navigation and the task executor, which serves the action. Plans are
moves, the cheapest steps to run, which galley's planner does not make from an instruction (it
moves objects), so a stand-in planner answers /task/instruction on /task/plan as the task planner
does; the real task planner answers an instruction it cannot plan.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from galley_core.episode import Episode
from galley_core.geometry import Pose2D
from galley_nodes.nodes.task_action import EXECUTE
from galley_nodes.registry import load_node_class
from galley_runtime import messages
from galley_runtime.actions import STATUS_ABORTED, STATUS_CANCELED, STATUS_SUCCEEDED
from galley_runtime.embedded import EmbeddedHost
from galley_runtime.qos import QoS

RUNNING, SUCCEEDED, FAILED = 0, 1, 2


class Stack:
    """Sim, map, planner, controller, navigator, task planner and executor; a /task/execute client."""

    def __init__(
        self, repo: Any, tmp_path: Any, plans: dict[str, list[str]] | None = None, **executor_params: Any
    ) -> None:
        episode = tmp_path / "episode.json"
        episode.write_text(json.dumps(Episode("kitchen", 0, Pose2D(-1.0, 0.8, 0.0), (), {}).to_dict()))
        self.host = host = EmbeddedHost([repo / "config" / "galley.yaml"])
        host.add_node(
            load_node_class("sim"), parameters={"episode_file": str(episode), "cameras_enabled": False}
        )
        maps = str(repo / "maps" / "kitchen.yaml")
        host.add_node(load_node_class("map_server"), parameters={"yaml_filename": maps})
        host.add_node(load_node_class("global_planner"))
        host.add_node(load_node_class("diff_drive_controller"), parameters={"use_tf": True})
        host.add_node(load_node_class("navigator"))
        probe = host.participant("probe")
        if plans is None:
            host.add_node(load_node_class("task_planner"), parameters={"backend": "galley"})
        else:
            plan_pub = probe.create_publisher("/task/plan", "galley_msgs/msg/TaskPlan", QoS.latched())

            def stand_in(msg: Any) -> None:
                steps = plans[msg.data]
                plan_pub.publish(messages.new("galley_msgs/msg/TaskPlan", instruction=msg.data, steps=steps))

            probe.create_subscription("/task/instruction", "std_msgs/msg/String", stand_in, QoS(depth=10))
        params = {"move_with": "navigate_to_pose", **executor_params}
        host.add_node(load_node_class("task_executor"), parameters=params)
        self.results: list[Any] = []
        probe.create_subscription(
            "/task/result", "galley_msgs/msg/EpisodeResult", self.results.append, QoS.latched()
        )
        self.client = probe.create_action_client("/task/execute", EXECUTE)
        self.feedback: list[Any] = []
        host.run_for(0.5)

    def send(self, instruction: str) -> Any:
        goal = messages.new(f"{EXECUTE}_Goal", instruction=instruction)
        return self.client.send_goal(goal, lambda _, fb: self.feedback.append(fb), None)

    def base_xy(self) -> Any:
        pose = self.host.node("sim").sim.base_pose()
        return np.array([pose.x, pose.y])


def test_an_instruction_runs_with_feedback_per_step_and_a_result(repo, tmp_path):
    stack = Stack(repo, tmp_path, {"drive to blue": ["move to the blue zone"]})
    goal = stack.send("drive to blue")
    assert stack.host.run_until(lambda: goal.done, 200.0)
    assert goal.accepted and goal.status == STATUS_SUCCEEDED, goal.result.reason
    assert goal.result.success and list(goal.result.steps) == ["move to the blue zone"]
    assert list(goal.result.step_success) == [True] and goal.result.reason == ""
    seen = [(f.step_index, f.step, f.verdict) for f in stack.feedback]
    assert seen == [
        (-1, "", RUNNING),  # planning
        (-1, "", RUNNING),  # the plan
        (0, "move to the blue zone", RUNNING),
        (0, "move to the blue zone", SUCCEEDED),
    ]
    assert list(stack.feedback[1].plan) == ["move to the blue zone"]
    assert stack.results[-1].success  # the topic interface tells the same


def test_a_failing_instruction_ends_with_success_false_and_its_reason(repo, tmp_path):
    stack = Stack(repo, tmp_path, {"drive to purple": ["move to the purple zone"]}, step_time_limit_s=3.0)
    goal = stack.send("drive to purple")  # far away: past the step time limit
    assert stack.host.run_until(lambda: goal.done, 30.0)
    assert goal.status == STATUS_ABORTED and not goal.result.success
    assert list(goal.result.step_success) == [False]
    assert "exceeded the 3 s step time limit" in goal.result.reason
    assert stack.feedback[-1].verdict == FAILED and stack.feedback[-1].reason == goal.result.reason
    empty = stack.send("  ")
    stack.host.run_for(0.1)
    assert empty.accepted is False and "instruction is empty" in empty.reason


def test_an_instruction_the_planner_cannot_plan_ends_with_the_planners_reason(repo, tmp_path):
    stack = Stack(repo, tmp_path)  # galley's task planner
    goal = stack.send("Move the teapot to the green zone.")
    assert stack.host.run_until(lambda: goal.done, 10.0)
    assert goal.status == STATUS_ABORTED and not goal.result.success
    assert goal.result.reason.startswith("no plan: ") and list(goal.result.steps) == []


def test_cancel_stops_the_robot_and_ends_the_goal_canceled(repo, tmp_path):
    stack = Stack(repo, tmp_path, {"drive to purple": ["move to the purple zone"]})
    goal = stack.send("drive to purple")
    start = stack.base_xy()
    assert stack.host.run_until(lambda: np.linalg.norm(stack.base_xy() - start) > 0.2, 60.0)
    goal.cancel()
    assert stack.host.run_until(lambda: goal.done, 5.0)
    assert goal.status == STATUS_CANCELED and goal.result.reason == "canceled by the client"
    stack.host.run_for(1.0)  # the base brakes
    stopped = stack.base_xy()
    stack.host.run_for(3.0)
    assert np.linalg.norm(stack.base_xy() - stopped) < 0.01
    assert not stack.results[-1].success  # /task/result: the plan ended there
