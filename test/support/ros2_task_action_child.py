"""/task/execute under real rclpy and DDS: run by test_task_action_ros2.py in a process of its own.

It needs galley_msgs' classes on PYTHONPATH and their libraries on LD_LIBRARY_PATH from the start
(scripts/build_nav2_msgs.py --package galley_msgs). The task executor runs as it ships, in the ROS 2
host; a stand-in planner answers /task/instruction on /task/plan; a client node sends goals. No
simulator: a move step just runs (until canceled), and a plan the executor rejects fails the goal.
Prints one JSON object with what each scenario saw.
"""

from __future__ import annotations

import json
import time
from typing import Any

import rclpy
from rclpy.executors import SingleThreadedExecutor

from galley_nodes.nodes.task_action import EXECUTE
from galley_nodes.nodes.task_executor import TaskExecutorNode
from galley_runtime.actions import ClientGoal
from galley_runtime.node import Calls, Node, Publishes, Subscribes
from galley_runtime.qos import QoS
from galley_runtime.ros2.host import create_node

PLANS = {"drive to purple": ["move to the purple zone"], "fly": ["fly to the moon"]}


class StandInPlanner(Node):
    """Answers an instruction with its plan from PLANS, as the task planner would."""

    name = "stand_in_planner"
    subscribes = (Subscribes("task/instruction", "std_msgs/msg/String", "on_instruction", QoS(depth=10)),)
    publishes = (Publishes("task/plan", "galley_msgs/msg/TaskPlan", QoS.latched()),)

    def on_instruction(self, msg: Any) -> None:
        plan = self.msg("galley_msgs/msg/TaskPlan", instruction=msg.data, steps=PLANS[msg.data])
        self.publish("task/plan", plan)


class Client(Node):
    name = "task_action_client"
    calls = (Calls("task/execute", EXECUTE),)


def main() -> None:
    rclpy.init()
    made = [create_node(cls) for cls in (StandInPlanner, TaskExecutorNode, Client)]
    executor = SingleThreadedExecutor()
    for ros_node, _ in made:
        executor.add_node(ros_node)
    client: Client = made[-1][1]  # type: ignore[assignment]
    feedback: list[tuple[ClientGoal, Any]] = []

    def send(instruction: str) -> ClientGoal:
        goal = client.msg(f"{EXECUTE}_Goal", instruction=instruction)
        return client.send_goal("task/execute", goal, feedback=lambda g, f: feedback.append((g, f)))

    def spin_until(predicate: Any, timeout_s: float = 15.0) -> bool:
        end = time.monotonic() + timeout_s
        while not predicate() and time.monotonic() < end:
            executor.spin_once(timeout_sec=0.02)
        return bool(predicate())

    def summary(goal: ClientGoal) -> dict[str, Any]:
        result = goal.result
        return {
            "accepted": goal.accepted,
            "status": goal.status,
            "success": bool(result.success) if result is not None else None,
            "reason": str(result.reason) if result is not None else "",
            "feedback": [[int(f.step_index), str(f.step), int(f.verdict)] for g, f in feedback if g is goal],
        }

    spin_until(lambda: False, 2.0)  # discovery
    out: dict[str, Any] = {}
    running = send("drive to purple")
    spin_until(lambda: any(g is running and f.step_index == 0 for g, f in feedback))
    running.cancel()
    spin_until(lambda: running.done)
    out["canceled"] = summary(running)
    rejected = send("fly")
    spin_until(lambda: rejected.done)
    out["rejected_plan"] = summary(rejected)
    empty = send(" ")
    spin_until(lambda: empty.done)
    out["empty"] = summary(empty)
    print(json.dumps(out))
    executor.shutdown()
    for ros_node, _ in made:
        ros_node.destroy_node()
    rclpy.try_shutdown()


if __name__ == "__main__":
    main()
