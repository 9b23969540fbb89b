"""Transport-independent nodes: what a node declares and what a host gives it.

A galley node is a class that declares, once, as class attributes:

* ``name``: its default ROS node name;
* ``Config``: a frozen :class:`galley_core.config.Config` dataclass, one ROS parameter per field;
* ``publishes`` / ``subscribes``: topics with their ROS type names and QoS;
* ``timers``: periodic callbacks, with periods in seconds of ROS time;
* ``serves`` / ``calls``: actions it serves (with its goal and cancel methods) and calls, with their
  ROS action type names (:mod:`galley_runtime.actions`);
* ``uses_tf``: whether it looks up transforms (the ROS 2 host then starts a TF listener).

A host (the embedded host in :mod:`galley_runtime.embedded`, or the rclpy adapter in
:mod:`galley_runtime.ros2`) builds the configuration from parameter files, constructs the node
with a :class:`NodeHost`, and runs its callbacks. Callbacks receive real ROS message objects
(rclpy classes under ROS 2, ``rosbags`` classes in the embedded host; the same fields) and build
replies with :meth:`Node.msg`. A node never imports rclpy or mujoco.

Actions (nav2_msgs ComputePathToPose, FollowPath and NavigateToPose, so that galley's planner and
controller and Nav2's servers can stand in for each other) are declared like topics and served or
called through :class:`NodeHost`, which both hosts implement; see :mod:`galley_runtime.actions`
for the goal handles and their semantics.

Messages: set sequence fields (``float32[] ranges``, ``uint8[] data``) through the keyword
arguments of :meth:`Node.msg`, not by assigning to the attribute afterwards: the host converts
numpy arrays, lists and ``array.array`` into what its message classes require.

Example::

    class Talker(Node):
        name = "talker"
        Config = TalkerConfig
        publishes = (Publishes("chatter", "std_msgs/msg/String"),)
        timers = (Timer("tick", period_s=lambda c: 1.0 / c.rate_hz),)

        def tick(self) -> None:
            self.publish("chatter", self.msg("std_msgs/msg/String", data="hello"))
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

import numpy as np

from galley_core.config import Config
from galley_core.geometry import Transform
from galley_core.tf_tree import TransformValues, transform_of_values
from galley_runtime import conversions, messages
from galley_runtime.actions import (
    ActionClientHandle,
    Calls,
    ClientGoal,
    DoneCallback,
    FeedbackCallback,
    ServerGoal,
    Serves,
    check_actions,
)
from galley_runtime.node_logging import Logger, PerSeverityLogger
from galley_runtime.qos import QoS

__all__ = [
    "Calls",
    "ClientGoal",
    "Logger",
    "NoConfig",
    "Node",
    "NodeHost",
    "PerSeverityLogger",
    "Publishes",
    "ServerGoal",
    "Serves",
    "Subscribes",
    "Timer",
    "TimerHandle",
    "undeclared_tf",
]

_NODE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_TOPIC_NAME = re.compile(r"^(~/|/)?[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*$")
_DEFAULT_QOS = QoS()
_TYPE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*/msg/[A-Z][A-Za-z0-9]*$")


@dataclass(frozen=True)
class NoConfig(Config):
    """The configuration of a node without parameters."""


@dataclass(frozen=True)
class Publishes:
    """A publication: topic name (relative, absolute or ``~/`` private), ROS type name, QoS."""

    topic: str
    type: str
    qos: QoS = _DEFAULT_QOS


@dataclass(frozen=True)
class Subscribes:
    """A subscription: topic, ROS type name, the name of the node method to call, QoS."""

    topic: str
    type: str
    callback: str
    qos: QoS = _DEFAULT_QOS


@dataclass(frozen=True)
class Timer:
    """A periodic callback: the node method to call and its period in seconds of ROS time.

    ``period_s`` is a number or a function of the node's configuration (e.g. ``lambda c: 1 / c.rate_hz``).
    As with rclpy, the first call comes one period after the node starts.
    """

    callback: str
    period_s: float | Callable[[Any], float]

    def period_for(self, config: Any) -> float:
        period = self.period_s(config) if callable(self.period_s) else float(self.period_s)
        if not period > 0.0:
            raise ValueError(f"timer {self.callback!r}: period {period} s must be > 0")
        return period


class TimerHandle(Protocol):
    """What a host returns for a timer."""

    def cancel(self) -> None: ...


class PublisherHandle(Protocol):
    """What a host returns for a publication (an rclpy ``Publisher`` under ROS 2)."""

    def publish(self, msg: Any) -> None: ...

    def get_subscription_count(self) -> int:
        """How many subscriptions currently receive this publisher's messages."""
        ...


class NodeHost(ABC):
    """What a host provides to one node: clock, logger, topics, timers, TF.

    The embedded host and the ROS 2 host implement it; nodes use it through :class:`Node`.
    """

    #: The node's fully qualified name, e.g. ``/square_driver``.
    fully_qualified_name: str
    logger: Logger

    @abstractmethod
    def now_ns(self) -> int:
        """Current ROS time (simulated time under ``use_sim_time``), integer nanoseconds."""

    @abstractmethod
    def create_publisher(self, topic: str, type_name: str, qos: QoS) -> PublisherHandle:
        """Create a publisher; ``topic`` is resolved against the node's namespace."""

    @abstractmethod
    def create_subscription(
        self, topic: str, type_name: str, callback: Callable[[Any], None], qos: QoS
    ) -> object:
        """Create a subscription whose callback receives message objects."""

    def create_stamp_subscription(
        self, topic: str, type_name: str, callback: Callable[[int], None], qos: QoS
    ) -> object:
        """A subscription whose callback receives each message's stamp, not the message.

        The stamp as :func:`~galley_runtime.messages.stamp_ns_of` reads it (0 if unstamped). For a
        watch on a topic's rate: it does not read what the messages say, so a host may skip building
        messages that only such subscriptions receive (:meth:`publish_lazily`).
        """
        return self.create_subscription(topic, type_name, lambda m: callback(messages.stamp_ns_of(m)), qos)

    def has_readers(self, publisher: PublisherHandle) -> bool:
        """Whether anyone reads what ``publisher`` publishes (a stamp subscription does not)."""
        return publisher.get_subscription_count() > 0

    def publish_lazily(self, publisher: PublisherHandle, stamp_ns: int, build: Callable[[], Any]) -> None:
        """Publish ``build()``, a message stamped ``stamp_ns``, building it only if someone reads it.

        With no reader, stamp subscriptions still receive ``stamp_ns``, as they would from the
        message. Under rclpy every subscription reads.
        """
        if self.has_readers(publisher):
            publisher.publish(build())

    @abstractmethod
    def create_timer(self, period_s: float, callback: Callable[[], None]) -> TimerHandle:
        """Create a timer on ROS time; the first call comes after one period."""

    @abstractmethod
    def lookup_transform(self, target: str, source: str, time_ns: int | None = None) -> Any:
        """``geometry_msgs/msg/TransformStamped`` from ``source`` into ``target`` at ``time_ns``.

        None asks for the latest available. Never blocks.

        Raises:
            galley_core.tf_tree.TransformError: unknown frame, unconnected frames, or extrapolation.
        """

    def lookup_transform_values(
        self, target: str, source: str, time_ns: int | None = None
    ) -> TransformValues:
        """:meth:`lookup_transform` as numbers: (x, y, z, qx, qy, qz, qw), the quaternion normalised.

        Exactly what :func:`~galley_runtime.conversions.transform_values_from_msg` reads from
        that message; a host may give it without building the message (the embedded host does).
        """
        return conversions.transform_values_from_msg(self.lookup_transform(target, source, time_ns))

    @abstractmethod
    def send_transforms(self, transforms: Sequence[Any], *, static: bool = False) -> None:
        """Broadcast ``geometry_msgs/msg/TransformStamped`` messages on /tf (or /tf_static)."""

    def send_transform_values(
        self, frames: Sequence[tuple[str, str]], values: np.ndarray[Any, Any], stamp: Any
    ) -> None:
        """Broadcast one /tf message: (parent, child) ``frames``, an (N, 7) array of ``values``.

        Rows (x, y, z, qx, qy, qz, qw) in metres; ``stamp`` a ``builtin_interfaces/msg/Time``. The
        same message as :meth:`send_transforms` of their ``TransformStamped``; a host may take the
        numbers as they are besides (the embedded host feeds its TF buffer without reading them back).
        """
        items = conversions.transform_items(frames, values)
        self.send_transforms(conversions.transform_stamped_msgs_from_values(items, stamp))

    @abstractmethod
    def topic_names_and_types(self) -> list[tuple[str, list[str]]]:
        """Topics currently known in the graph, with their type names."""

    def topic_type_hash(self, topic: str, type_name: str) -> str:
        """The type description hash (``RIHS01_...``) the graph advertises for a topic; "" if unknown."""
        return ""

    def create_action_server(
        self,
        action: str,
        type_name: str,
        on_goal: Callable[[ServerGoal], str | None],
        on_cancel: Callable[[ServerGoal], None] | None,
    ) -> object:
        """Serve an action (see :mod:`galley_runtime.actions`); ``action`` resolves like a topic."""
        raise NotImplementedError(f"{type(self).__name__} does not host actions")

    def create_action_client(self, action: str, type_name: str) -> ActionClientHandle:
        """A client of an action (see :mod:`galley_runtime.actions`)."""
        raise NotImplementedError(f"{type(self).__name__} does not host actions")


class Node:
    """Base class of galley nodes. See the module docstring for what a subclass declares.

    Args:
        host: the node's host interface.
        config: the validated configuration (an instance of ``Config``).
    """

    name: ClassVar[str]
    Config: ClassVar[type[Config]] = NoConfig
    publishes: ClassVar[Sequence[Publishes]] = ()
    subscribes: ClassVar[Sequence[Subscribes]] = ()
    timers: ClassVar[Sequence[Timer]] = ()
    serves: ClassVar[Sequence[Serves]] = ()
    calls: ClassVar[Sequence[Calls]] = ()
    uses_tf: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "name" in cls.__dict__:
            _check_declaration(cls)

    def __init__(self, host: NodeHost, config: Any) -> None:
        if not isinstance(config, self.Config):
            raise TypeError(
                f"{type(self).__name__} needs a {self.Config.__name__}, got {type(config).__name__}"
            )
        self.host = host
        self.config = config
        self.log: Logger = host.logger
        self._publishers = {p.topic: host.create_publisher(p.topic, p.type, p.qos) for p in self.publishes}
        for sub in self.subscribes:
            host.create_subscription(sub.topic, sub.type, getattr(self, sub.callback), sub.qos)
        self._timers = [
            host.create_timer(t.period_for(config), getattr(self, t.callback)) for t in self.timers
        ]
        self._action_servers = [
            host.create_action_server(
                s.action, s.type, getattr(self, s.goal), getattr(self, s.cancel) if s.cancel else None
            )
            for s in self.serves
        ]
        self._action_clients = {c.action: host.create_action_client(c.action, c.type) for c in self.calls}

    # -- messages and time ---------------------------------------------------------------------

    def _publisher(self, topic: str) -> PublisherHandle:
        try:
            return self._publishers[topic]
        except KeyError:
            declared = ", ".join(self._publishers) or "none"
            raise KeyError(f"node {self.name!r} does not publish {topic!r} (declared: {declared})") from None

    def publish(self, topic: str, msg: Any) -> None:
        """Publish on a topic declared in ``publishes`` (by the name used there)."""
        self._publisher(topic).publish(msg)

    def publish_lazily(self, topic: str, stamp_ns: int, build: Callable[[], Any]) -> None:
        """:meth:`publish` ``build()`` only if someone reads it; see :meth:`NodeHost.publish_lazily`.

        For messages built often for rate watchers alone (the simulator's IMU at 100 Hz).
        """
        self.host.publish_lazily(self._publisher(topic), stamp_ns, build)

    def has_subscribers(self, topic: str) -> bool:
        """Whether anyone receives what is published on ``topic`` (declared in ``publishes``).

        For work done only to be published, such as rendering a camera image: skip it when this
        is False, as ROS 2 camera drivers do.
        """
        return self._publisher(topic).get_subscription_count() > 0

    def has_readers(self, topic: str) -> bool:
        """:meth:`has_subscribers`, not counting stamp subscriptions (which read no message)."""
        return self.host.has_readers(self._publisher(topic))

    def send_goal(
        self,
        action: str,
        goal: Any,
        *,
        feedback: FeedbackCallback | None = None,
        done: DoneCallback | None = None,
    ) -> ClientGoal:
        """Send a goal to an action declared in ``calls``; see :mod:`galley_runtime.actions`."""
        try:
            client = self._action_clients[action]
        except KeyError:
            declared = ", ".join(self._action_clients) or "none"
            raise KeyError(f"node {self.name!r} does not call {action!r} (declared: {declared})") from None
        return client.send_goal(goal, feedback, done)

    def can_send_goal(self, action: str) -> bool:
        """Whether goals can go to ``action`` (declared in ``calls``).

        False under ROS 2 when its package is not installed. Whether a server runs is another
        matter: the goal's answer says.
        """
        return bool(getattr(self._action_clients[action], "available", True))

    @staticmethod
    def msg(type_name: str, /, **fields: Any) -> Any:
        """A new message of ``type_name`` with ROS defaults and the given fields (dicts for nested)."""
        return messages.new(type_name, **fields)

    def now_ns(self) -> int:
        """ROS time in nanoseconds."""
        return self.host.now_ns()

    def now_s(self) -> float:
        """ROS time in seconds."""
        return self.host.now_ns() * 1e-9

    def stamp(self) -> Any:
        """The current ROS time as ``builtin_interfaces/msg/Time``."""
        return messages.time_msg(self.host.now_ns())

    # -- TF ------------------------------------------------------------------------------------

    def lookup_transform(self, target: str, source: str, time_ns: int | None = None) -> Any:
        """See :meth:`NodeHost.lookup_transform`."""
        return self.host.lookup_transform(target, source, time_ns)

    def lookup(self, target: str, source: str, time_ns: int | None = None) -> Transform:
        """``T_target_source`` as a :class:`~galley_core.geometry.Transform`; see :meth:`lookup_transform`.

        The same as ``transform_from_msg(self.lookup_transform(...))``, cheaper in the embedded host.
        """
        return transform_of_values(self.host.lookup_transform_values(target, source, time_ns))

    def send_transforms(self, transforms: Sequence[Any], *, static: bool = False) -> None:
        """See :meth:`NodeHost.send_transforms`."""
        self.host.send_transforms(transforms, static=static)

    def send_transform_values(
        self, frames: Sequence[tuple[str, str]], values: np.ndarray[Any, Any], stamp: Any
    ) -> None:
        """See :meth:`NodeHost.send_transform_values` (for transforms sent by the dozen, often)."""
        self.host.send_transform_values(frames, values, stamp)

    # -- life cycle ----------------------------------------------------------------------------

    def on_config_change(self, config: Any) -> None:
        """Called with a new, already validated configuration after a parameter update.

        The default adopts it; nodes whose timers or state depend on it override this.
        """
        self.config = config

    def on_shutdown(self) -> None:
        """Called once when the host shuts down: flush files, publish last messages."""


def _check_declaration(cls: type[Node]) -> None:
    """Reject a malformed declaration when the class is defined, not when it first runs."""
    where = f"node class {cls.__qualname__}"
    if not _NODE_NAME.match(cls.name):
        raise TypeError(f"{where}: name {cls.name!r} is not a valid ROS node name")
    if not (isinstance(cls.Config, type) and issubclass(cls.Config, Config)):
        raise TypeError(f"{where}: Config must be a galley_core.config.Config dataclass")
    for decl in (*cls.publishes, *cls.subscribes):
        if not _TOPIC_NAME.match(decl.topic):
            raise TypeError(f"{where}: {decl.topic!r} is not a valid topic name")
        if not _TYPE_NAME.match(decl.type):
            raise TypeError(
                f"{where}: {decl.type!r} is not a ROS message type name like 'std_msgs/msg/String'"
            )
    topics = [p.topic for p in cls.publishes]
    if len(set(topics)) != len(topics):
        raise TypeError(f"{where}: a topic is declared twice in publishes: {topics}")
    for decl in (*cls.subscribes, *cls.timers):
        if not callable(getattr(cls, decl.callback, None)):
            raise TypeError(f"{where}: callback {decl.callback!r} is not a method of the class")
    check_actions(where, cls)


def undeclared_tf(node_name: str) -> str:
    """Why a node that does not declare ``uses_tf`` gets no transforms (both hosts say it alike)."""
    return f"node {node_name} looks up transforms, but its class does not set uses_tf = True"
