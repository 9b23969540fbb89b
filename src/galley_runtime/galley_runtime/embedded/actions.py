"""Actions in the embedded host: ROS 2's action protocol in process, on the bus, in simulated time.

The three services of a ROS 2 action (send goal, cancel, get result) are requests queued to
endpoints of the bus (:meth:`galley_runtime.embedded.bus.Bus.add_endpoint`), so they are delivered
in order with the topics' messages, deterministically; nothing is answered inside the call that
asked. The two topics are real bus topics, which the recorder records as a ROS 2 action server's
bag holds them: ``/<action>/_action/status`` (``action_msgs/msg/GoalStatusArray``, latched, sent
whenever a goal's status changes) and ``/<action>/_action/feedback``
(``<pkg>/action/<Name>_FeedbackMessage``, which every client receives and filters by goal id).

Goal ids are UUIDs made from the client's name and a counter, so two runs give the same ids.
Like rclpy's server, the status keeps each ended goal for ``result_timeout_s`` of ROS time.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable
from typing import Any, Protocol

from galley_runtime import messages
from galley_runtime.actions import (
    FEEDBACK_QOS,
    STATUS_CANCELING,
    STATUS_EXECUTING,
    STATUS_QOS,
    ClientGoal,
    DoneCallback,
    FeedbackCallback,
    ServerGoal,
    action_topics,
    goal_id_text,
)
from galley_runtime.embedded.bus import Bus

__all__ = ["EmbeddedActionClient", "EmbeddedActionServer", "goal_uuid"]

#: How long an ended goal stays in the status array, seconds (rclpy's default result_timeout).
RESULT_TIMEOUT_S = 900.0
_NS = 1_000_000_000


class EmbeddedHost(Protocol):
    """What actions use of :class:`galley_runtime.embedded.host.EmbeddedHost`."""

    bus: Bus
    time_ns: int
    action_servers: dict[str, EmbeddedActionServer]


def goal_uuid(owner: str, number: int) -> bytes:
    """A deterministic version-4-shaped UUID for the ``number``-th goal of ``owner``."""
    raw = bytearray(hashlib.blake2b(f"{owner}#{number}".encode(), digest_size=16).digest())
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    return bytes(raw)


def _uuid_msg(goal_id: bytes) -> dict[str, Any]:
    return {"uuid": goal_id}


class EmbeddedActionServer:
    """One node's server of one action (made by ``EmbeddedNodeHost.create_action_server``)."""

    def __init__(
        self,
        host: EmbeddedHost,
        action: str,
        type_name: str,
        *,
        owner: str,
        on_goal: Callable[[ServerGoal], str | None],
        on_cancel: Callable[[ServerGoal], None] | None,
    ) -> None:
        self.action, self.type_name, self.owner = action, type_name, owner
        self._host = host
        self._on_goal, self._on_cancel = on_goal, on_cancel
        status_topic, feedback_topic = action_topics(action)
        bus = host.bus
        self._status = bus.add_publisher(status_topic, "action_msgs/msg/GoalStatusArray", STATUS_QOS, owner)
        self._feedback = bus.add_publisher(
            feedback_topic, f"{type_name}_FeedbackMessage", FEEDBACK_QOS, owner
        )
        self.endpoint = bus.add_endpoint(self._on_request, owner)
        self._goals: dict[bytes, tuple[ServerGoal, EmbeddedActionClient]] = {}
        self._ended_ns: dict[bytes, int] = {}

    def _on_request(self, request: tuple[Any, ...]) -> None:
        kind, client, goal_id = request[:3]
        if kind == "goal":
            self._receive_goal(client, goal_id, request[3])
        else:
            self._receive_cancel(client, goal_id)

    def _receive_goal(self, client: EmbeddedActionClient, goal_id: bytes, request: Any) -> None:
        handle = ServerGoal(
            goal_id, request, self._host.time_ns, on_feedback=self._publish_feedback, on_end=self._ended
        )
        reason = self._on_goal(handle)
        if reason is not None:
            if not handle.active:
                raise RuntimeError(f"{self.owner}: {self.action}: a goal was ended, then rejected ({reason})")
            self._host.bus.send(client.endpoint, ("response", goal_id, False, reason))
            return
        self._goals[goal_id] = (handle, client)
        self._host.bus.send(client.endpoint, ("response", goal_id, True, ""))
        self._publish_status(executing=goal_id)
        if not handle.active:  # ended in the goal method itself: report it now that it is accepted
            self._ended(handle)

    def _receive_cancel(self, client: EmbeddedActionClient, goal_id: bytes) -> None:
        entry = self._goals.get(goal_id)
        if entry is None or not entry[0].active:
            reason = "the goal is not executing (it ended or was never accepted)"
        elif entry[0].cancel_requested:
            reason = ""
        elif self._on_cancel is None:
            reason = f"{self.owner} does not cancel {self.action} goals"
        else:
            handle = entry[0]
            handle.status = STATUS_CANCELING
            self._publish_status()
            self._on_cancel(handle)
            reason = ""
        if reason:
            self._host.bus.send(client.endpoint, ("cancel_rejected", goal_id, reason))

    def _publish_feedback(self, handle: ServerGoal, feedback: Any) -> None:
        self._feedback.publish(
            messages.new(
                f"{self.type_name}_FeedbackMessage", goal_id=_uuid_msg(handle.goal_id), feedback=feedback
            )
        )

    def _ended(self, handle: ServerGoal) -> None:
        entry = self._goals.get(handle.goal_id)
        if entry is None:
            return  # ended inside the goal method: reported once it is accepted
        self._ended_ns[handle.goal_id] = self._host.time_ns
        self._publish_status()
        self._host.bus.send(entry[1].endpoint, ("result", handle.goal_id, handle.status, handle.result))

    def _publish_status(self, executing: bytes = b"") -> None:
        """Publish every goal's status; ``executing`` shows as EXECUTING (accepted, whatever came after)."""
        now = self._host.time_ns
        for goal_id, ended in list(self._ended_ns.items()):
            if now - ended > RESULT_TIMEOUT_S * _NS:
                del self._ended_ns[goal_id], self._goals[goal_id]
        status_list = [
            {
                "goal_info": {"goal_id": _uuid_msg(goal_id), "stamp": messages.time_msg(handle.accepted_ns)},
                "status": STATUS_EXECUTING if goal_id == executing else handle.status,
            }
            for goal_id, (handle, _) in self._goals.items()
        ]
        self._status.publish(messages.new("action_msgs/msg/GoalStatusArray", status_list=status_list))


class EmbeddedActionClient:
    """One node's client of one action (made by ``EmbeddedNodeHost.create_action_client``)."""

    def __init__(self, host: EmbeddedHost, action: str, type_name: str, owner: str) -> None:
        self.action, self.type_name, self.owner = action, type_name, owner
        self._host = host
        self._numbers = itertools.count()
        self._goals: dict[bytes, ClientGoal] = {}
        self.endpoint = host.bus.add_endpoint(self._on_reply, owner)
        _, feedback_topic = action_topics(action)
        host.bus.add_subscription(
            feedback_topic, f"{type_name}_FeedbackMessage", self._on_feedback, FEEDBACK_QOS, owner
        )

    def send_goal(
        self, goal: Any, feedback: FeedbackCallback | None, done: DoneCallback | None
    ) -> ClientGoal:
        goal_id = goal_uuid(self.owner + self.action, next(self._numbers))
        handle = ClientGoal(goal_id, goal, cancel=self._cancel, feedback=feedback, done=done)
        self._goals[goal_id] = handle
        server = self._host.action_servers.get(self.action)
        if server is None:
            reason = f"no action server of {self.action} is running; start the node that serves it"
            self._host.bus.send(self.endpoint, ("response", goal_id, False, reason))
        elif server.type_name != self.type_name:
            reason = f"{server.owner} serves {self.action} as {server.type_name}, not {self.type_name}"
            self._host.bus.send(self.endpoint, ("response", goal_id, False, reason))
        else:
            self._host.bus.send(server.endpoint, ("goal", self, goal_id, goal))
        return handle

    def _cancel(self, handle: ClientGoal) -> None:
        server = self._host.action_servers.get(self.action)
        if server is not None:
            self._host.bus.send(server.endpoint, ("cancel", self, handle.goal_id))

    def _on_reply(self, reply: tuple[Any, ...]) -> None:
        kind, goal_id = reply[:2]
        handle = self._goals.get(goal_id)
        if handle is None:
            return
        if kind == "response":
            handle.deliver_response(reply[2], reply[3])
            if not reply[2]:
                del self._goals[goal_id]
        elif kind == "result":
            del self._goals[goal_id]
            handle.deliver_result(reply[2], reply[3])
        else:  # cancel_rejected
            handle.reason = f"cancel of goal {goal_id_text(goal_id)} rejected: {reply[2]}"

    def _on_feedback(self, msg: Any) -> None:
        handle = self._goals.get(bytes(msg.goal_id.uuid))
        if handle is not None:
            handle.deliver_feedback(msg.feedback)
