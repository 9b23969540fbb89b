"""The ROS 2 host: runs one declared galley node as an rclpy node (Humble and Jazzy).

``run_node(NodeClass)`` is what each ``ros2 run galley_nodes <node>`` executable calls. It

* creates an ``rclpy.node.Node`` with the class's name (remappable with ``--ros-args -r __node:=``);
* declares one ROS parameter per configuration field (description, unit and allowed values in the
  descriptor), reads their values from ``--params-file`` / ``-p`` overrides, and builds the
  configuration with the same validation as the embedded host;
* validates parameter updates before accepting them (``add_on_set_parameters_callback``) and hands
  the new configuration to the node after they are set (``add_post_set_parameters_callback`` on
  Jazzy; on Humble, which lacks it, right after validation);
* creates the declared publishers, subscriptions (message classes by type name, from
  ``<package>.msg``) and timers (on the node clock, so ``use_sim_time`` gives simulated time);
* serves and calls the declared actions through rclpy's ActionServer / ActionClient
  (:mod:`galley_runtime.ros2.actions`; an action whose package is not installed is left out, with
  a warning);
* gives TF through ``tf2_ros`` (Buffer, TransformListener, (Static)TransformBroadcaster);
* gives the node rclpy's logger wrapped in :class:`galley_runtime.node.PerSeverityLogger`, so that no
  node trips rclpy's rule against one call site logging at two severities;
* spins until Ctrl-C or shutdown, then calls the node's ``on_shutdown``. Ctrl-C (SIGINT, also what
  ``ros2 launch`` stops its nodes with) ends the spin between callbacks: rclpy's own handler shuts
  the context down, and the host's Python handler only notes the signal where Python's would raise
  KeyboardInterrupt wherever the node happens to be: inside rclpy's conversion of a taken message
  (which then fails with pybind11's ``RuntimeError: Unable to convert call argument '0' to Python
  object``: the monitor exited 1) or in the middle of a callback (the recorder, closing its bag
  on an abort, left the last file unfinished).

Where rclpy's parameters differ from the embedded host's, the host bridges them: a list parameter
left unset by the params file (``key_objects: []``, which rcl cannot type) is the empty list of the
node's configuration, and is set on the ROS node as a typed empty array.

tf2_ros is optional here: PyPI's ROS 2 wheels (``ros-jazzy-rclpy``), which CI installs, have none.
Without it, nodes are created and run, transform look-ups raise ``TransformError`` (as before the
first transform arrives) and broadcasting a transform raises ``RuntimeError``; a full ROS 2 install
always has tf2_ros.

This module imports rclpy at import time; nothing else in galley does.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import rclpy
import rclpy.node
from rcl_interfaces.msg import ParameterDescriptor, SetParametersResult
from rclpy.duration import Duration
from rclpy.executors import ExternalShutdownException
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.time import Time

from galley_core.config import ConfigError, config_from_values, describe_fields
from galley_core.tf_tree import TransformError
from galley_runtime import messages
from galley_runtime.actions import ServerGoal
from galley_runtime.message_backend import UnknownMessageTypeError
from galley_runtime.node import Node, NodeHost, PerSeverityLogger, undeclared_tf
from galley_runtime.params_file import ParameterError, unset_lists_as_empty
from galley_runtime.qos import QoS
from galley_runtime.ros2.actions import RclpyActionClient, RclpyActionServer
from galley_runtime.ros2.messages import RclpyMessages

try:  # optional: the PyPI wheels of rclpy come without tf2_ros (see the module docstring)
    import tf2_ros
except ImportError:
    tf2_ros = None

#: The typed empty array of a list parameter, by element type.
_ARRAY_TYPES = {
    bool: Parameter.Type.BOOL_ARRAY,
    int: Parameter.Type.INTEGER_ARRAY,
    float: Parameter.Type.DOUBLE_ARRAY,
    str: Parameter.Type.STRING_ARRAY,
}
_NO_TF2 = "tf2_ros is not installed (install ros-<distro>-tf2-ros, part of every ROS 2 desktop install)"

N = TypeVar("N", bound=Node)

__all__ = ["RclpyNodeHost", "create_node", "qos_profile", "run_node"]


def qos_profile(qos: QoS) -> QoSProfile:
    """The rclpy QoS profile of a galley :class:`QoS`."""
    return QoSProfile(
        history=HistoryPolicy.KEEP_LAST if qos.history == "keep_last" else HistoryPolicy.KEEP_ALL,
        depth=qos.depth,
        reliability=ReliabilityPolicy.RELIABLE
        if qos.reliability == "reliable"
        else ReliabilityPolicy.BEST_EFFORT,
        durability=(
            DurabilityPolicy.TRANSIENT_LOCAL
            if qos.durability == "transient_local"
            else DurabilityPolicy.VOLATILE
        ),
    )


class RclpyNodeHost(NodeHost):
    """What an rclpy node gives a galley node (see :class:`galley_runtime.node.NodeHost`)."""

    def __init__(self, node: rclpy.node.Node, *, uses_tf: bool) -> None:
        self.node = node
        self.fully_qualified_name = node.get_fully_qualified_name()
        self.logger = PerSeverityLogger(node.get_logger())
        self._uses_tf = uses_tf
        self._buffer: Any = None
        self._listener: Any = None
        if uses_tf and tf2_ros is None:
            self.logger.warning(f"{_NO_TF2}: transform look-ups will fail")
        elif uses_tf:
            self._buffer = tf2_ros.Buffer(node=node)
            self._listener = tf2_ros.TransformListener(self._buffer, node)
        self._broadcasters: dict[bool, Any] = {}

    def now_ns(self) -> int:
        return int(self.node.get_clock().now().nanoseconds)

    def create_publisher(self, topic: str, type_name: str, qos: QoS) -> Any:
        return self.node.create_publisher(messages.backend().get_class(type_name), topic, qos_profile(qos))

    def create_subscription(
        self, topic: str, type_name: str, callback: Callable[[Any], None], qos: QoS
    ) -> Any:
        return self.node.create_subscription(
            messages.backend().get_class(type_name), topic, callback, qos_profile(qos)
        )

    def create_timer(self, period_s: float, callback: Callable[[], None]) -> Any:
        return self.node.create_timer(period_s, callback)

    def lookup_transform(self, target: str, source: str, time_ns: int | None = None) -> Any:
        if self._uses_tf and tf2_ros is None:
            raise TransformError(f"{target} <- {source}: {_NO_TF2}")
        if self._buffer is None:
            raise TransformError(undeclared_tf(self.fully_qualified_name))
        time = Time() if time_ns is None else Time(nanoseconds=time_ns)
        try:
            return self._buffer.lookup_transform(target, source, time, timeout=Duration())
        except tf2_ros.TransformException as err:
            raise TransformError(f"{target} <- {source}: {err}") from None

    def send_transforms(self, transforms: Sequence[Any], *, static: bool = False) -> None:
        broadcaster = self._broadcasters.get(static)
        if broadcaster is None:
            if tf2_ros is None:
                raise RuntimeError(f"node {self.fully_qualified_name} broadcasts transforms, but {_NO_TF2}")
            cls = tf2_ros.StaticTransformBroadcaster if static else tf2_ros.TransformBroadcaster
            broadcaster = self._broadcasters[static] = cls(self.node)
        broadcaster.sendTransform(list(transforms))

    def topic_names_and_types(self) -> list[tuple[str, list[str]]]:
        return [(name, list(types)) for name, types in self.node.get_topic_names_and_types()]

    def topic_type_hash(self, topic: str, type_name: str) -> str:
        endpoints = [
            *self.node.get_publishers_info_by_topic(topic),
            *self.node.get_subscriptions_info_by_topic(topic),
        ]
        for endpoint in endpoints:
            advertised = getattr(endpoint, "topic_type_hash", None)  # Humble's graph has none
            if endpoint.topic_type == type_name and advertised is not None and advertised.version > 0:
                return str(advertised)  # RIHS01_<hex>, as rosbag2 stores it
        return ""

    def create_action_server(
        self,
        action: str,
        type_name: str,
        on_goal: Callable[[ServerGoal], str | None],
        on_cancel: Callable[[ServerGoal], None] | None,
    ) -> RclpyActionServer | None:
        try:
            return RclpyActionServer(
                self.node, action, type_name, on_goal=on_goal, on_cancel=on_cancel, logger=self.logger
            )
        except ImportError as err:  # e.g. PyPI's wheels: no nav2_msgs
            self.logger.warning(f"not serving action {action}: {err}; the node's topics work as before")
            return None

    def create_action_client(self, action: str, type_name: str) -> Any:
        try:
            return RclpyActionClient(self.node, action, type_name)
        except ImportError as err:
            self.logger.warning(f"cannot call action {action}: {err}")
            return _MissingActionClient(action, str(err))


class _MissingActionClient:
    """A declared action client whose action type is not installed: sending a goal says so."""

    available = False

    def __init__(self, action: str, why: str) -> None:
        self._action, self._why = action, why

    def send_goal(self, goal: Any, feedback: Any, done: Any) -> Any:
        raise RuntimeError(f"cannot send a goal to {self._action}: {self._why}")


class _Parameters:
    """Declares a node's configuration as ROS parameters and keeps the two in step."""

    def __init__(self, node: rclpy.node.Node, config_cls: type[Any]) -> None:
        self.node = node
        self.config_cls = config_cls
        self.fields = {info.name: info for info in describe_fields(config_cls)}
        self.galley_node: Node | None = None
        self._pending: Any = None
        self._declaring = True
        node.add_on_set_parameters_callback(self._validate)
        self._post_set = hasattr(node, "add_post_set_parameters_callback")  # Iron and newer
        if self._post_set:
            node.add_post_set_parameters_callback(self._apply)

    def declare(self) -> Any:
        """Declare every field and build the configuration from the effective values.

        Raises:
            ConfigError: a value from the parameter overrides is not allowed.
        """
        values: dict[str, Any] = {}
        for name, info in self.fields.items():
            descriptor = ParameterDescriptor(description=info.description(), dynamic_typing=True)
            default = list(info.default) if info.is_array else info.default
            param = self.node.declare_parameter(name, default, descriptor)
            values[name] = param.value
            if info.is_array and not param.value:
                # Unset (`[]` in a params file) or an empty default, which rclpy types as a byte
                # array: give it the element type the configuration declares.
                self.node.set_parameters([Parameter(name, _ARRAY_TYPES[info.scalar_type], [])])
        self._declaring = False
        return config_from_values(self.config_cls, unset_lists_as_empty(self.config_cls, values))

    def _candidate(self, params: list[Parameter]) -> Any:
        assert self.galley_node is not None
        ours = unset_lists_as_empty(
            self.config_cls, {p.name: p.value for p in params if p.name in self.fields}
        )
        return config_from_values(self.config_cls, ours, base=self.galley_node.config) if ours else None

    def _validate(self, params: list[Parameter]) -> SetParametersResult:
        if self._declaring:
            return SetParametersResult(successful=True)  # checked together in declare()
        try:
            candidate = self._candidate(params)
        except ConfigError as err:
            return SetParametersResult(successful=False, reason=f"{err.field} = {err.value!r}: {err.allowed}")
        if candidate is not None:
            if self._post_set:
                self._pending = candidate
            else:
                self._adopt(candidate)
        return SetParametersResult(successful=True)

    def _apply(self, params: list[Parameter]) -> None:
        if self._pending is not None:
            candidate, self._pending = self._pending, None
            self._adopt(candidate)

    def _adopt(self, config: Any) -> None:
        assert self.galley_node is not None
        self.galley_node.on_config_change(config)


def create_node(
    node_cls: type[N], *, name: str | None = None, namespace: str | None = None, **node_kwargs: Any
) -> tuple[rclpy.node.Node, N]:
    """Create the rclpy node and the galley node it hosts (``rclpy.init`` must have been called).

    ``node_kwargs`` go to ``rclpy.node.Node`` (e.g. ``parameter_overrides``, ``context``).

    Raises:
        ParameterError: a parameter value from the overrides is not allowed.
    """
    messages.use_backend(RclpyMessages())
    ros_node = rclpy.node.Node(name or node_cls.name, namespace=namespace, **node_kwargs)
    params = _Parameters(ros_node, node_cls.Config)
    try:
        config = params.declare()
    except ConfigError as err:
        fqn = ros_node.get_fully_qualified_name()
        ros_node.destroy_node()
        raise ParameterError(
            f"node {fqn!r}: parameter {err.field!r} = {err.value!r} is not allowed: {err.allowed} "
            "(fix the params file or the -p override)"
        ) from None
    galley_node = node_cls(RclpyNodeHost(ros_node, uses_tf=node_cls.uses_tf), config)
    params.galley_node = galley_node
    return ros_node, galley_node


def _note_sigint(received: list[int]) -> Any:
    """Install a SIGINT handler that notes the signal and leaves the stopping to rclpy's handler.

    rclpy.init chains its handler (which shuts the context down, ending ``rclpy.spin``) to the one
    installed before it, so this one runs after it. Returns the previous handler (None off the main
    thread, where none can be installed).
    """
    if threading.current_thread() is not threading.main_thread():
        return None

    def noted(signum: int, frame: Any) -> None:
        received.append(signum)

    return signal.signal(signal.SIGINT, noted)


def run_node(node_cls: type[Node], args: Sequence[str] | None = None) -> int:
    """Run one galley node as an rclpy node until shutdown; returns the exit status."""
    sigint: list[int] = []
    previous = _note_sigint(sigint)
    rclpy.init(args=list(args) if args is not None else sys.argv)
    ros_node: rclpy.node.Node | None = None
    galley_node: Node | None = None
    try:
        ros_node, galley_node = create_node(node_cls)
        rclpy.spin(ros_node)
    except ParameterError as err:
        print(f"[ERROR] {err}", file=sys.stderr)
        return 2
    except UnknownMessageTypeError as err:  # e.g. galley_msgs on PyPI's wheels alone: one line, not a trace
        print(
            f"[ERROR] {node_cls.name}: {err}; build it (colcon build) and source install/setup.bash",
            file=sys.stderr,
        )
        return 2
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except RuntimeError:
        if not sigint:  # what a context shut down by SIGINT can make of a call in progress
            raise
    finally:
        if galley_node is not None:
            galley_node.on_shutdown()
        if ros_node is not None:
            ros_node.destroy_node()
        rclpy.try_shutdown()
        if previous is not None:  # after rclpy's, which puts back the handler it found
            signal.signal(signal.SIGINT, previous)
    return 0
