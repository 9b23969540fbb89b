"""Actions under ROS 2: galley's action declaration on rclpy's ActionServer and ActionClient.

The server: rclpy's ``goal_callback`` calls the node's goal method with a
:class:`galley_runtime.actions.ServerGoal` and accepts or rejects (rclpy's answer carries no
reason: the host logs it); the ``execute_callback`` is a coroutine that waits until the node
ends the goal (from any later callback), then ends the rclpy goal the same way and returns the
result. ``cancel_callback`` accepts when the node declared a cancel method, which it then calls.
The client: ``send_goal_async`` with the goal's UUID, then ``get_result_async``; the node's
callbacks run from the executor, as with the embedded host.

Action classes come from ``<package>.action`` (``nav2_msgs.action.FollowPath``). Where that package
is not installed (PyPI's ROS 2 wheels have no nav2_msgs), :func:`action_class` raises ImportError
and the host runs the node without that action, with a warning; its topics work as before.
"""

from __future__ import annotations

import importlib
import uuid
from collections import deque
from collections.abc import Callable
from typing import Any

import rclpy.node
from rclpy.action import ActionClient, ActionServer, CancelResponse, GoalResponse
from rclpy.task import Future

from galley_runtime.actions import (
    STATUS_ABORTED,
    STATUS_CANCELED,
    STATUS_CANCELING,
    STATUS_SUCCEEDED,
    ClientGoal,
    DoneCallback,
    FeedbackCallback,
    ServerGoal,
)
from galley_runtime.node import Logger

__all__ = ["RclpyActionClient", "RclpyActionServer", "action_class"]


def action_class(type_name: str) -> Any:
    """The rclpy action class of ``pkg/action/Name``.

    Raises:
        ImportError: the package or the action is not installed; the message says which.
    """
    package, kind, name = [*type_name.split("/"), "", ""][:3]
    if kind != "action" or not package or not name:
        raise ImportError(f"action type {type_name!r} is not of the form 'package/action/Name'")
    try:
        return getattr(importlib.import_module(f"{package}.action"), name)
    except (ModuleNotFoundError, AttributeError) as err:
        raise ImportError(
            f"no rclpy class of {type_name} ({err}); install ros-<distro>-{package.replace('_', '-')}"
        ) from None


class RclpyActionServer:
    """A node's server of one action on rclpy."""

    def __init__(
        self,
        node: rclpy.node.Node,
        action: str,
        type_name: str,
        *,
        on_goal: Callable[[ServerGoal], str | None],
        on_cancel: Callable[[ServerGoal], None] | None,
        logger: Logger,
    ) -> None:
        self._node, self._action, self._log = node, action, logger
        self._on_goal, self._on_cancel = on_goal, on_cancel
        self._accepted: deque[ServerGoal] = deque()  # accepted, waiting for their rclpy handle
        self._goals: dict[bytes, tuple[ServerGoal, Any, Future]] = {}
        self._server = ActionServer(
            node,
            action_class(type_name),
            action,
            execute_callback=self._execute,
            goal_callback=self._goal,
            cancel_callback=self._cancel,
        )

    def _goal(self, request: Any) -> GoalResponse:
        # rclpy names the goal's UUID only once accepted: the handle gets it in _execute.
        handle = ServerGoal(
            bytes(16),
            request,
            self._node.get_clock().now().nanoseconds,
            on_feedback=self._feedback,
            on_end=self._ended,
        )
        reason = self._on_goal(handle)
        if reason is not None:
            self._log.warning(f"{self._action}: rejected a goal: {reason}")
            return GoalResponse.REJECT
        self._accepted.append(handle)
        return GoalResponse.ACCEPT

    async def _execute(self, goal_handle: Any) -> Any:
        handle = self._accepted.popleft()  # rclpy executes accepted goals in the order accepted
        handle.goal_id = bytes(goal_handle.goal_id.uuid)
        done = Future()
        self._goals[handle.goal_id] = (handle, goal_handle, done)
        if handle.active:
            await done
        del self._goals[handle.goal_id]
        if handle.status == STATUS_SUCCEEDED:
            goal_handle.succeed()
        elif handle.status == STATUS_CANCELED and goal_handle.is_cancel_requested:
            goal_handle.canceled()
        else:  # aborted, or ended canceled without a cancel request (rclpy allows only abort then)
            goal_handle.abort()
        return handle.result

    def _cancel(self, goal_handle: Any) -> CancelResponse:
        entry = self._goals.get(bytes(goal_handle.goal_id.uuid))
        if self._on_cancel is None or entry is None or not entry[0].active:
            return CancelResponse.REJECT
        handle = entry[0]
        handle.status = STATUS_CANCELING  # the node sees cancel_requested in its cancel method
        self._on_cancel(handle)
        return CancelResponse.ACCEPT

    def _feedback(self, handle: ServerGoal, feedback: Any) -> None:
        entry = self._goals.get(handle.goal_id)
        if entry is not None:  # feedback from the goal method itself, before rclpy's handle: dropped
            entry[1].publish_feedback(feedback)

    def _ended(self, handle: ServerGoal) -> None:
        entry = self._goals.get(handle.goal_id)
        if entry is not None and not entry[2].done():
            entry[2].set_result(None)

    def destroy(self) -> None:
        self._server.destroy()


class RclpyActionClient:
    """A node's client of one action on rclpy."""

    def __init__(self, node: rclpy.node.Node, action: str, type_name: str) -> None:
        self._client = ActionClient(node, action_class(type_name), action)
        self._uuid_class = type(self._client._action_type.Impl.SendGoalService.Request().goal_id)
        self._handles: dict[bytes, Any] = {}

    def send_goal(
        self, goal: Any, feedback: FeedbackCallback | None, done: DoneCallback | None
    ) -> ClientGoal:
        goal_id = uuid.uuid4().bytes
        handle = ClientGoal(goal_id, goal, cancel=self._cancel, feedback=feedback, done=done)
        future = self._client.send_goal_async(
            goal,
            feedback_callback=lambda msg: handle.deliver_feedback(msg.feedback),
            goal_uuid=self._uuid_class(uuid=list(goal_id)),
        )
        future.add_done_callback(lambda f: self._answered(handle, f.result()))
        return handle

    def _answered(self, handle: ClientGoal, goal_handle: Any) -> None:
        if goal_handle is None or not goal_handle.accepted:
            handle.deliver_response(False, "the server rejected the goal (its log says why)")
            return
        self._handles[handle.goal_id] = goal_handle
        handle.deliver_response(True)
        goal_handle.get_result_async().add_done_callback(lambda f: self._result(handle, f.result()))

    def _result(self, handle: ClientGoal, response: Any) -> None:
        self._handles.pop(handle.goal_id, None)
        status = int(response.status) if response is not None else STATUS_ABORTED
        handle.deliver_result(status, response.result if response is not None else None)

    def _cancel(self, handle: ClientGoal) -> None:
        goal_handle = self._handles.get(handle.goal_id)
        if goal_handle is not None:
            goal_handle.cancel_goal_async()

    def server_is_ready(self) -> bool:
        return bool(self._client.server_is_ready())
