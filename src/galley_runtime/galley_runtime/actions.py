"""Actions: what a node declares it serves and calls, and the goal handles both hosts give it.

A node declares actions like topics, as class attributes::

    serves = (Serves("compute_path_to_pose", "nav2_msgs/action/ComputePathToPose", goal="on_goal",
                     cancel="on_cancel"),)
    calls = (Calls("follow_path", "nav2_msgs/action/FollowPath"),)

**Serving.** For every goal that arrives the host calls the ``goal`` method with a
:class:`ServerGoal`. The method returns None to accept it, or a reason (a string) to reject it.
An accepted goal is executing: the node publishes feedback through the handle and ends it with
:meth:`ServerGoal.succeed`, :meth:`ServerGoal.abort` or :meth:`ServerGoal.canceled`, giving the
result message, then or later (from a timer or a message callback). When a client asks to cancel
an executing goal, the host marks it canceling and calls the ``cancel`` method, which stops
what the goal drives and ends it canceled; a server that declares no ``cancel`` method rejects
cancel requests, as rclpy's default does. Preemption is the node's choice: a node that follows
one goal at a time aborts the previous goal in its ``goal`` method, as Nav2's servers do.

**Calling.** :meth:`galley_runtime.node.Node.send_goal` sends a goal and returns a
:class:`ClientGoal` at once; the host calls ``feedback(goal, feedback_msg)`` for each feedback
and ``done(goal)`` once, when the goal is rejected (``accepted`` False, ``reason`` says why where
the host knows) or has ended (``status`` SUCCEEDED, ABORTED or CANCELED, ``result`` the result
message). :meth:`ClientGoal.cancel` asks the server to cancel it. Callbacks never run inside
``send_goal`` or ``cancel``; they come from the host's event loop, like a message's.

On the wire (both hosts) an action is ROS 2's: goal, cancel and result services, and the topics
``/<action>/_action/status`` (``action_msgs/msg/GoalStatusArray``, latched) and
``/<action>/_action/feedback`` (``<pkg>/action/<Name>_FeedbackMessage``), which a recorder records.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from galley_runtime.qos import QoS

__all__ = [
    "ACTIVE_STATUSES",
    "FEEDBACK_QOS",
    "STATUS_ABORTED",
    "STATUS_ACCEPTED",
    "STATUS_CANCELED",
    "STATUS_CANCELING",
    "STATUS_EXECUTING",
    "STATUS_QOS",
    "STATUS_SUCCEEDED",
    "STATUS_UNKNOWN",
    "ActionClientHandle",
    "Calls",
    "ClientGoal",
    "DoneCallback",
    "FeedbackCallback",
    "ServerGoal",
    "Serves",
    "action_topics",
    "goal_id_text",
    "status_name",
]

# action_msgs/msg/GoalStatus: status
STATUS_UNKNOWN, STATUS_ACCEPTED, STATUS_EXECUTING, STATUS_CANCELING = 0, 1, 2, 3
STATUS_SUCCEEDED, STATUS_CANCELED, STATUS_ABORTED = 4, 5, 6
ACTIVE_STATUSES = frozenset({STATUS_ACCEPTED, STATUS_EXECUTING, STATUS_CANCELING})
_STATUS_NAMES = ("UNKNOWN", "ACCEPTED", "EXECUTING", "CANCELING", "SUCCEEDED", "CANCELED", "ABORTED")

#: rcl's action topic QoS: the status is latched (keep last 1), feedback as any topic.
STATUS_QOS = QoS.latched()
FEEDBACK_QOS = QoS(depth=10)

_ACTION_TYPE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*/action/[A-Z][A-Za-z0-9]*$")
_ACTION_NAME = re.compile(r"^(~/|/)?[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*$")


@dataclass(frozen=True)
class Serves:
    """An action the node serves: name, ROS type name, its goal method and its cancel method ("" rejects)."""

    action: str
    type: str
    goal: str
    cancel: str = ""


@dataclass(frozen=True)
class Calls:
    """An action the node calls: name and ROS type name."""

    action: str
    type: str


def check_actions(where: str, node_cls: Any) -> None:
    """Raise TypeError for a malformed ``serves`` / ``calls`` (called when a node class is defined)."""
    for decl in (*node_cls.serves, *node_cls.calls):
        if not _ACTION_NAME.match(decl.action):
            raise TypeError(f"{where}: {decl.action!r} is not a valid action name")
        if not _ACTION_TYPE.match(decl.type):
            raise TypeError(
                f"{where}: {decl.type!r} is not a ROS action type name like 'nav2_msgs/action/FollowPath'"
            )
    for served in node_cls.serves:
        for method in filter(None, (served.goal, served.cancel)):
            if not callable(getattr(node_cls, method, None)):
                raise TypeError(f"{where}: action method {method!r} is not a method of the class")
    for kind in ("serves", "calls"):
        names = [a.action for a in getattr(node_cls, kind)]
        if len(set(names)) != len(names):
            raise TypeError(f"{where}: an action is declared twice in {kind}: {names}")


def action_topics(resolved_action: str) -> tuple[str, str]:
    """The status and feedback topics of a fully qualified action name."""
    return f"{resolved_action}/_action/status", f"{resolved_action}/_action/feedback"


def status_name(status: int) -> str:
    """``SUCCEEDED`` for 4, and so on (action_msgs/msg/GoalStatus)."""
    return _STATUS_NAMES[status] if 0 <= status < len(_STATUS_NAMES) else str(status)


def goal_id_text(goal_id: bytes) -> str:
    """A goal id as a UUID string, for logs."""
    h = goal_id.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


class ServerGoal:
    """One goal a node's action server received (see the module docstring).

    Attributes:
        goal_id: the 16 bytes of the goal's UUID.
        request: the goal message (``<pkg>/action/<Name>_Goal``).
        accepted_ns: ROS time when it arrived, nanoseconds.
        status: the action_msgs GoalStatus status.
        result: the result message once ended.
    """

    def __init__(
        self,
        goal_id: bytes,
        request: Any,
        accepted_ns: int,
        *,
        on_feedback: Callable[[ServerGoal, Any], None],
        on_end: Callable[[ServerGoal], None],
    ) -> None:
        self.goal_id = goal_id
        self.request = request
        self.accepted_ns = accepted_ns
        self.status = STATUS_EXECUTING
        self.result: Any = None
        self._on_feedback = on_feedback
        self._on_end = on_end

    @property
    def active(self) -> bool:
        """Whether the goal is executing or canceling (not yet ended)."""
        return self.status in ACTIVE_STATUSES

    @property
    def cancel_requested(self) -> bool:
        """Whether a client asked to cancel it and the server accepted."""
        return self.status == STATUS_CANCELING

    def publish_feedback(self, feedback: Any) -> None:
        """Publish ``<pkg>/action/<Name>_Feedback`` for this goal (ignored once it has ended)."""
        if self.active:
            self._on_feedback(self, feedback)

    def succeed(self, result: Any) -> None:
        """End the goal SUCCEEDED with ``result``."""
        self._end(STATUS_SUCCEEDED, result)

    def abort(self, result: Any) -> None:
        """End the goal ABORTED with ``result`` (which carries the error code and message)."""
        self._end(STATUS_ABORTED, result)

    def canceled(self, result: Any) -> None:
        """End the goal CANCELED with ``result``."""
        self._end(STATUS_CANCELED, result)

    def _end(self, status: int, result: Any) -> None:
        if not self.active:
            raise RuntimeError(
                f"goal {goal_id_text(self.goal_id)} has already ended {status_name(self.status)}; "
                f"it cannot end {status_name(status)}"
            )
        self.status, self.result = status, result
        self._on_end(self)


FeedbackCallback = Callable[["ClientGoal", Any], None]
DoneCallback = Callable[["ClientGoal"], None]


class ClientGoal:
    """A goal a node sent (see the module docstring).

    Attributes:
        goal_id: the 16 bytes of the goal's UUID.
        request: the goal message sent.
        accepted: None until the server answers, then whether it accepted the goal.
        reason: why the goal was rejected, or why its cancel was, where the host knows.
        status: the action_msgs GoalStatus status (UNKNOWN until accepted).
        result: the result message once ended.
    """

    def __init__(
        self,
        goal_id: bytes,
        request: Any,
        *,
        cancel: Callable[[ClientGoal], None],
        feedback: FeedbackCallback | None = None,
        done: DoneCallback | None = None,
    ) -> None:
        self.goal_id = goal_id
        self.request = request
        self.accepted: bool | None = None
        self.reason = ""
        self.status = STATUS_UNKNOWN
        self.result: Any = None
        self._cancel = cancel
        self._feedback = feedback
        self._done = done
        self._cancel_asked = False

    @property
    def done(self) -> bool:
        """Whether it was rejected or has ended."""
        return self.accepted is False or self.status in (STATUS_SUCCEEDED, STATUS_CANCELED, STATUS_ABORTED)

    def cancel(self) -> None:
        """Ask the server to cancel the goal (once; nothing happens when it has ended)."""
        if self.done or self._cancel_asked:
            return
        self._cancel_asked = True
        if self.accepted:  # else it goes out with the server's answer
            self._cancel(self)

    # -- for hosts -----------------------------------------------------------------------------

    def deliver_response(self, accepted: bool, reason: str = "") -> None:
        """The server's answer to the goal; a rejection ends it."""
        self.accepted = accepted
        if accepted:
            self.status = max(self.status, STATUS_ACCEPTED)
            if self._cancel_asked:  # asked before the answer came: ask the server now
                self._cancel(self)
        else:
            self.reason = reason or "the server rejected the goal"
            if self._done is not None:
                self._done(self)

    def deliver_feedback(self, feedback: Any) -> None:
        if self._feedback is not None and not self.done:
            self._feedback(self, feedback)

    def deliver_result(self, status: int, result: Any) -> None:
        if self.done:
            return
        self.status, self.result = status, result
        if self._done is not None:
            self._done(self)


class ActionClientHandle(Protocol):
    """What a host returns for a declared ``Calls``."""

    def send_goal(
        self, goal: Any, feedback: FeedbackCallback | None, done: DoneCallback | None
    ) -> ClientGoal: ...
