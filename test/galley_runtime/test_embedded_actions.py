"""The embedded host's actions: ROS 2's protocol on the bus, deterministic, recorded as a real server's."""

from __future__ import annotations

from typing import Any

import pytest
from rosbags.rosbag2 import Reader

from galley_nodes.nodes.recorder import RecorderNode
from galley_runtime.action_definitions import ACTION_PARTS, action_message_texts, error_codes, split_action
from galley_runtime.actions import (
    STATUS_ABORTED,
    STATUS_CANCELED,
    STATUS_CANCELING,
    STATUS_EXECUTING,
    STATUS_SUCCEEDED,
    ServerGoal,
)
from galley_runtime.embedded import EmbeddedHost
from galley_runtime.node import Calls, Node, Serves, Timer
from galley_runtime.qos import QoS
from galley_runtime.rosbags_messages import deserialize

FOLLOW = "nav2_msgs/action/FollowPath"


class Countdown(Node):
    """Serves follow_path: feedback every 0.1 s, success after 5 ticks; ``instant`` goals end at once."""

    name = "countdown"
    serves = (Serves("follow_path", FOLLOW, goal="on_goal", cancel="on_cancel"),)
    timers = (Timer("on_tick", 0.1),)

    def __init__(self, host: Any, config: Any) -> None:
        super().__init__(host, config)
        self.goals: list[tuple[ServerGoal, int]] = []

    def on_goal(self, handle: ServerGoal) -> str | None:
        controller = handle.request.controller_id
        if controller == "refuse":
            return "controller_id 'refuse' is refused"
        if controller == "instant":
            handle.succeed(self.msg(f"{FOLLOW}_Result", error_msg="done at once"))
            return None
        self.goals.append((handle, 5))
        return None

    def on_cancel(self, handle: ServerGoal) -> None:
        assert handle.cancel_requested
        handle.canceled(self.msg(f"{FOLLOW}_Result"))

    def on_tick(self) -> None:
        left = []
        for handle, ticks in self.goals:
            if not handle.active:
                continue
            if ticks == 0:
                handle.succeed(self.msg(f"{FOLLOW}_Result"))
                continue
            handle.publish_feedback(self.msg(f"{FOLLOW}_Feedback", distance_to_goal=float(ticks)))
            left.append((handle, ticks - 1))
        self.goals = left


class NoCancel(Countdown):
    name = "no_cancel"
    serves = (Serves("follow_path", FOLLOW, goal="on_goal"),)


class Client(Node):
    name = "client"
    calls = (Calls("follow_path", FOLLOW),)


def run_scenario(server: type[Node] = Countdown) -> tuple[list[Any], list[Any], dict[str, Any]]:
    host = EmbeddedHost()
    tool = host.participant("tool")
    statuses: list[Any] = []
    tool.create_subscription(
        "/follow_path/_action/status", "action_msgs/msg/GoalStatusArray", statuses.append, QoS(depth=100)
    )
    host.add_node(server)
    client = host.add_node(Client)
    feedback: list[Any] = []
    goal = client.msg(f"{FOLLOW}_Goal")
    goals = {
        name: client.send_goal(
            "follow_path",
            client.msg(f"{FOLLOW}_Goal", controller_id=name),
            feedback=lambda g, f: feedback.append((g.goal_id, f.distance_to_goal)),
        )
        for name in ("finish", "cancel", "refuse", "instant")
    }
    host.run_for(0.25)
    goals["cancel"].cancel()
    host.run_for(1.0)
    del goal
    return statuses, feedback, goals


def test_goals_end_succeeded_canceled_rejected_and_at_once_with_their_status_stream():
    statuses, feedback, goals = run_scenario()
    assert goals["finish"].status == STATUS_SUCCEEDED
    assert goals["cancel"].status == STATUS_CANCELED
    assert goals["refuse"].accepted is False and "refused" in goals["refuse"].reason
    instant = goals["instant"]
    assert instant.status == STATUS_SUCCEEDED and instant.result.error_msg == "done at once"
    finish = goals["finish"].goal_id
    assert [d for g, d in feedback if g == finish] == [5.0, 4.0, 3.0, 2.0, 1.0]
    # The status of each goal moves as a real server's: EXECUTING, (CANCELING,) then the end.
    seen: dict[bytes, list[int]] = {}
    for msg in statuses:
        for status in msg.status_list:
            states = seen.setdefault(bytes(status.goal_info.goal_id.uuid), [])
            if not states or states[-1] != status.status:
                states.append(int(status.status))
    assert seen[finish] == [STATUS_EXECUTING, STATUS_SUCCEEDED]
    assert seen[goals["cancel"].goal_id] == [STATUS_EXECUTING, STATUS_CANCELING, STATUS_CANCELED]
    assert seen[goals["instant"].goal_id] == [STATUS_EXECUTING, STATUS_SUCCEEDED]
    assert goals["refuse"].goal_id not in seen


def test_two_runs_give_the_same_goal_ids_statuses_and_feedback():
    first, second = run_scenario(), run_scenario()
    assert first[1] == second[1]
    ids = [[bytes(s.goal_info.goal_id.uuid) for s in m.status_list] for m in first[0]]
    assert ids == [[bytes(s.goal_info.goal_id.uuid) for s in m.status_list] for m in second[0]]
    assert len({g.goal_id for g in first[2].values()}) == 4


def test_a_server_without_a_cancel_method_rejects_cancels_and_goes_on():
    _, _, goals = run_scenario(NoCancel)
    assert goals["cancel"].status == STATUS_SUCCEEDED
    assert "does not cancel" in goals["cancel"].reason


def test_declarations_are_checked_and_one_server_per_action():
    with pytest.raises(TypeError, match="not a ROS action type name"):
        type("Bad", (Node,), {"name": "bad", "calls": (Calls("follow_path", "nav2_msgs/msg/FollowPath"),)})
    with pytest.raises(TypeError, match="not a method"):
        type("Bad", (Node,), {"name": "bad", "serves": (Serves("follow_path", FOLLOW, goal="missing"),)})
    host = EmbeddedHost()
    host.add_node(Countdown)
    with pytest.raises(ValueError, match="already serves"):
        host.add_node(NoCancel)


def test_the_recorder_records_status_and_feedback_as_a_ros2_bag_holds_them(tmp_path):
    host = EmbeddedHost()
    host.add_node(RecorderNode, parameters={"output_dir": str(tmp_path), "bag_name": "bag"})
    host.add_node(Countdown)
    client = host.add_node(Client)
    host.run_for(0.5)  # the recorder discovers the action topics
    goal = client.send_goal("follow_path", client.msg(f"{FOLLOW}_Goal"))
    host.run_for(1.0)
    assert goal.status == STATUS_SUCCEEDED
    host.shutdown()
    with Reader(tmp_path / "bag") as reader:
        types = {c.topic: c.msgtype for c in reader.connections}
        raw = [(c.topic, bytes(data)) for c, _, data in reader.messages()]
        definitions = {c.topic: c.msgdef.data for c in reader.connections}
    assert types["/follow_path/_action/status"] == "action_msgs/msg/GoalStatusArray"
    assert types["/follow_path/_action/feedback"] == f"{FOLLOW}_FeedbackMessage"
    assert "MSG: nav2_msgs/action/FollowPath_Feedback" in definitions["/follow_path/_action/feedback"]
    feedback = [deserialize(d, f"{FOLLOW}_FeedbackMessage") for t, d in raw if t.endswith("feedback")]
    assert [f.feedback.distance_to_goal for f in feedback] == [5.0, 4.0, 3.0, 2.0, 1.0]
    assert {bytes(f.goal_id.uuid) for f in feedback} == {goal.goal_id}
    last = deserialize([d for t, d in raw if t.endswith("status")][-1], "action_msgs/msg/GoalStatusArray")
    assert [s.status for s in last.status_list] == [STATUS_SUCCEEDED]


def test_action_text_splits_into_the_types_rosidl_makes_and_the_error_codes_come_from_it():
    sections = split_action("int32 order\n---\nint32[] sequence\n---\n", "pkg/action/Fib")
    assert [s.strip() for s in sections] == ["int32 order", "int32[] sequence", ""]
    texts = action_message_texts("pkg/action/Fib", "int32 order\n---\nint32[] sequence\n---\n")
    assert texts["pkg/action/Fib_Feedback"].strip() == "uint8 structure_needs_at_least_one_member"
    assert "pkg/action/Fib_Goal goal" in texts["pkg/action/Fib_SendGoal_Request"]
    assert set(texts) == {f"pkg/action/Fib_{part}" for part in ACTION_PARTS}
    assert "SendGoal_Request" in ACTION_PARTS and "FeedbackMessage" in ACTION_PARTS
    with pytest.raises(ValueError, match="three sections"):
        split_action("int32 order\n", "pkg/action/Broken")
    assert error_codes("nav2_msgs/action/ComputePathToPose")["NO_VALID_PATH"] == 208
    assert error_codes("nav2_msgs/action/FollowPath")["FAILED_TO_MAKE_PROGRESS"] == 105
    assert STATUS_ABORTED == 6
