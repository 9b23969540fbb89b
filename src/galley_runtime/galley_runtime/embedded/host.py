"""The embedded host: many galley nodes in one process on a lockstep simulated clock.

The host owns time. It keeps every node's timers in one queue ordered by (due time, node order,
timer order), advances the clock to the next due time, publishes /clock, fires the timers due
then and, after each callback, delivers every pending message (see :mod:`galley_runtime.embedded.bus`).
Nothing depends on wall-clock time or thread scheduling, so two runs with the same inputs
produce identical message streams, as fast as the machine allows.

Example::

    host = EmbeddedHost(params_files=["config/demo.yaml"])
    host.add_node(UnicycleBaseNode)
    host.add_node(SquareDriverNode)
    host.run_for(30.0)
    host.shutdown()
"""

from __future__ import annotations

import heapq
import itertools
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from galley_core.config import ConfigError, config_from_values
from galley_core.tf_tree import TransformError, TransformTree, TransformValues
from galley_runtime import messages
from galley_runtime.actions import ServerGoal
from galley_runtime.conversions import (
    transform_items,
    transform_stamped_msg_from_values,
    transform_stamped_msgs_from_values,
    transform_values,
)
from galley_runtime.embedded.actions import EmbeddedActionClient, EmbeddedActionServer
from galley_runtime.embedded.bus import Bus, BusPublisher
from galley_runtime.embedded.logger import NodeLogger
from galley_runtime.embedded.names import check_namespace, resolve_name
from galley_runtime.embedded.tf_ingest import ingest_message, ingest_values
from galley_runtime.node import Node, NodeHost, undeclared_tf
from galley_runtime.params_file import ParameterError, load_params_files, node_parameters
from galley_runtime.qos import QoS

__all__ = ["EmbeddedHost", "EmbeddedNodeHost", "watch_hosts"]

N = TypeVar("N", bound=Node)

_NS = 1_000_000_000
_CLOCK_QOS = QoS(depth=10)
_TF_QOS = QoS(depth=100)


#: Called with every EmbeddedHost made in this process (a live view attaches to each episode's).
_HOST_WATCHERS: list[Callable[[EmbeddedHost], None]] = []


def watch_hosts(callback: Callable[[EmbeddedHost], None]) -> Callable[[], None]:
    """Call ``callback(host)`` with every :class:`EmbeddedHost` made from now on in this process.

    For tools that follow whatever the commands run (``galley eval --view`` watches one episode's
    host after another) without each command passing them along. Returns a function that stops it.
    """
    _HOST_WATCHERS.append(callback)
    return lambda: _HOST_WATCHERS.remove(callback)


@dataclass(eq=False)
class _Timer:
    period_ns: int
    due_ns: int
    callback: Callable[[], None]
    owner: str
    cancelled: bool = False

    def cancel(self) -> None:
        self.cancelled = True


class EmbeddedNodeHost(NodeHost):
    """What the embedded host gives one node (see :class:`galley_runtime.node.NodeHost`)."""

    def __init__(
        self,
        host: EmbeddedHost,
        name: str,
        namespace: str,
        remappings: Mapping[str, str],
        *,
        uses_tf: bool = True,
    ) -> None:
        check_namespace(namespace)
        self._host = host
        self.node_name = name
        self.namespace = "/" + namespace.strip("/") if namespace.strip("/") else ""
        self.fully_qualified_name = f"{self.namespace}/{name}"
        self.logger = NodeLogger(host, self.fully_qualified_name)
        self._remap = {
            self.resolve(k, remap=False): self.resolve(v, remap=False) for k, v in remappings.items()
        }
        self._uses_tf = uses_tf  # as the ROS 2 host: no TF listener unless the node's class asks
        self._order = next(host._node_counter)
        self._tf_publishers: dict[bool, BusPublisher] = {}
        self._static_transforms: dict[str, Any] = {}

    def resolve(self, topic: str, *, remap: bool = True) -> str:
        """The fully qualified topic name after namespace resolution and remapping."""
        full = resolve_name(topic, self.namespace, self.node_name)
        return self._remap.get(full, full) if remap else full

    def now_ns(self) -> int:
        return self._host.time_ns

    def create_publisher(self, topic: str, type_name: str, qos: QoS) -> BusPublisher:
        return self._host.bus.add_publisher(self.resolve(topic), type_name, qos, self.fully_qualified_name)

    def create_subscription(
        self, topic: str, type_name: str, callback: Callable[[Any], None], qos: QoS
    ) -> object:
        return self._host.bus.add_subscription(
            self.resolve(topic), type_name, callback, qos, self.fully_qualified_name
        )

    def create_stamp_subscription(
        self, topic: str, type_name: str, callback: Callable[[int], None], qos: QoS
    ) -> object:
        return self._host.bus.add_subscription(
            self.resolve(topic), type_name, callback, qos, self.fully_qualified_name, stamps_only=True
        )

    def has_readers(self, publisher: Any) -> bool:
        return self._host.bus.has_readers(publisher)

    def publish_lazily(self, publisher: Any, stamp_ns: int, build: Callable[[], Any]) -> None:
        self._host.bus.publish_lazily(publisher, stamp_ns, build)

    def create_timer(self, period_s: float, callback: Callable[[], None]) -> _Timer:
        return self._host._add_timer(self._order, period_s, callback, self.fully_qualified_name)

    def lookup_transform(self, target: str, source: str, time_ns: int | None = None) -> Any:
        if not self._uses_tf:
            raise TransformError(undeclared_tf(self.fully_qualified_name))
        values, stamp = self._host.tf.lookup_values(target, source, time_ns)
        return transform_stamped_msg_from_values(values[:3], values[3:], target, source, stamp)

    def lookup_transform_values(
        self, target: str, source: str, time_ns: int | None = None
    ) -> TransformValues:
        """What reading :meth:`lookup_transform`'s message gives, without building the message."""
        if not self._uses_tf:
            raise TransformError(undeclared_tf(self.fully_qualified_name))
        values, _ = self._host.tf.lookup_values(target, source, time_ns)
        return transform_values(values[:3], values[3:])

    def _tf_publisher(self, static: bool) -> BusPublisher:
        pub = self._tf_publishers.get(static)
        if pub is None:
            topic, qos = ("/tf_static", QoS.latched()) if static else ("/tf", _TF_QOS)
            pub = self._tf_publishers[static] = self._host.bus.add_publisher(
                topic, "tf2_msgs/msg/TFMessage", qos, self.fully_qualified_name
            )
        return pub

    def send_transform_values(
        self, frames: Sequence[tuple[str, str]], values: np.ndarray[Any, Any], stamp: Any
    ) -> None:
        """Feeds the buffer ``values``; builds the /tf message only for readers besides its tap."""
        stamp_ns = messages.time_ns_from_msg(stamp)
        ingest_values(self._host.tf, frames, values, stamp_ns)
        pub, bus = self._tf_publisher(False), self._host.bus
        if not bus.has_readers(pub, taps=False):
            bus.publish_stamp(pub, stamp_ns)
            return
        msg = messages.message_class("tf2_msgs/msg/TFMessage")(
            transforms=transform_stamped_msgs_from_values(transform_items(frames, values), stamp)
        )
        self._host._ingested = msg
        try:
            pub.publish(msg)
        finally:
            self._host._ingested = None

    def send_transforms(self, transforms: Sequence[Any], *, static: bool = False) -> None:
        pub = self._tf_publisher(static)
        if static:
            # Like tf2_ros.StaticTransformBroadcaster: republish every static transform so far.
            self._static_transforms.update({t.child_frame_id: t for t in transforms})
            transforms = list(self._static_transforms.values())
        pub.publish(messages.new("tf2_msgs/msg/TFMessage", transforms=list(transforms)))

    def topic_names_and_types(self) -> list[tuple[str, list[str]]]:
        return self._host.bus.topic_names_and_types()

    def create_action_server(
        self,
        action: str,
        type_name: str,
        on_goal: Callable[[ServerGoal], str | None],
        on_cancel: Callable[[ServerGoal], None] | None,
    ) -> EmbeddedActionServer:
        name = self.resolve(action)
        servers = self._host.action_servers
        if name in servers:
            raise ValueError(
                f"{self.fully_qualified_name} serves action {name!r}, which {servers[name].owner} already "
                "serves; run one server per action (remap one of them)"
            )
        server = EmbeddedActionServer(
            self._host,
            name,
            type_name,
            owner=self.fully_qualified_name,
            on_goal=on_goal,
            on_cancel=on_cancel,
        )
        servers[name] = server
        return server

    def create_action_client(self, action: str, type_name: str) -> EmbeddedActionClient:
        return EmbeddedActionClient(self._host, self.resolve(action), type_name, self.fully_qualified_name)


@dataclass
class _NodeRecord:
    node: Node
    host: EmbeddedNodeHost


class EmbeddedHost:
    """Runs galley nodes in one process on a simulated clock.

    Args:
        params_files: ROS 2 parameter files, layered in order (later values win).
        check_messages: check every published message's type and sequence fields (cheap; on by default).
        publish_clock: publish ``rosgraph_msgs/msg/Clock`` on /clock whenever time advances (to
            its subscribers: when there are none, no message is built).
        tf_cache_s: how long the TF buffer keeps dynamic transforms, seconds.
    """

    def __init__(
        self,
        params_files: Sequence[str | Path] = (),
        *,
        check_messages: bool = True,
        publish_clock: bool = True,
        tf_cache_s: float = 10.0,
    ) -> None:
        self.bus = Bus(check_messages=check_messages)
        self.tf = TransformTree(int(tf_cache_s * _NS))
        self.time_ns = 0
        self._params = load_params_files(params_files)
        #: Action servers by fully qualified action name (see galley_runtime.embedded.actions).
        self.action_servers: dict[str, EmbeddedActionServer] = {}
        self._records: dict[str, _NodeRecord] = {}
        self._timers: list[tuple[int, int, int, _Timer]] = []
        self._timer_counter = itertools.count()
        self._node_counter = itertools.count()
        self._shut_down = False
        self._ingested: Any = None  # the /tf message being published whose numbers are in self.tf
        for topic, static in (("/tf", False), ("/tf_static", True)):
            self.bus.add_tap(
                topic, lambda m, s=static: m is self._ingested or ingest_message(self.tf, m, static=s)
            )
        self._clock = (
            self.bus.add_publisher("/clock", "rosgraph_msgs/msg/Clock", _CLOCK_QOS, "/embedded_host")
            if publish_clock
            else None
        )
        for watcher in list(_HOST_WATCHERS):
            watcher(self)

    # -- nodes ---------------------------------------------------------------------------------

    def add_node(
        self,
        node_cls: type[N],
        *,
        name: str | None = None,
        namespace: str = "",
        parameters: Mapping[str, Any] | None = None,
        remappings: Mapping[str, str] | None = None,
    ) -> N:
        """Construct a node with its parameters from the files, then ``parameters`` on top.

        Raises:
            ParameterError: a parameter is unknown, of the wrong type or not allowed; the message
                names the node, the parameter, where it was set and what is allowed.
        """
        if self._shut_down:
            raise RuntimeError("the host has been shut down")
        node_host = EmbeddedNodeHost(
            self, name or node_cls.name, namespace, remappings or {}, uses_tf=node_cls.uses_tf
        )
        fqn = node_host.fully_qualified_name
        if fqn in self._records:
            raise ValueError(f"a node named {fqn!r} already runs in this host; give another name=")
        config = self.node_config(node_cls, fqn, parameters)
        node = node_cls(node_host, config)
        self._records[fqn] = _NodeRecord(node, node_host)
        self.bus.deliver_pending()  # latched messages for the new node's subscriptions
        return node

    def node_config(
        self, node_cls: type[Node], name: str, parameters: Mapping[str, Any] | None = None
    ) -> Any:
        """The configuration ``add_node`` would give ``node_cls`` as ``name``, without starting it.

        Raises:
            ParameterError: as :meth:`add_node`.
        """
        fqn = name if name.startswith("/") else "/" + name
        given = {k: (v, "the parameters given to add_node") for k, v in (parameters or {}).items()}
        config, _ = node_parameters(node_cls.Config, fqn, self._params, given)
        return config

    def node(self, name: str) -> Node:
        """A running node by name (``/ns/name`` or just ``name`` in the root namespace)."""
        key = name if name.startswith("/") else "/" + name
        try:
            return self._records[key].node
        except KeyError:
            raise KeyError(f"no node {key!r}; running: {', '.join(self._records)}") from None

    def participant(self, name: str, namespace: str = "") -> EmbeddedNodeHost:
        """A node-less participant in the graph (for tools and tests): it can publish and subscribe."""
        return EmbeddedNodeHost(self, name, namespace, {})

    def set_parameters(self, node_name: str, values: Mapping[str, Any]) -> None:
        """Update parameters of a running node: validate all, then apply (``on_config_change``).

        Raises:
            ParameterError: nothing is applied.
        """
        node = self.node(node_name)
        try:
            config = config_from_values(type(node.config), values, base=node.config)
        except ConfigError as err:
            raise ParameterError(
                f"node {node_name!r}: parameter {err.field!r} = {err.value!r} is not allowed: {err.allowed}"
            ) from None
        node.on_config_change(config)

    # -- time ----------------------------------------------------------------------------------

    def _add_timer(self, order: int, period_s: float, callback: Callable[[], None], owner: str) -> _Timer:
        period_ns = round(period_s * _NS)
        if period_ns <= 0:
            raise ValueError(f"{owner}: timer period {period_s} s must be positive")
        timer = _Timer(period_ns, self.time_ns + period_ns, callback, owner)
        heapq.heappush(self._timers, (timer.due_ns, order, next(self._timer_counter), timer))
        return timer

    def _advance_to(self, time_ns: int) -> None:
        if time_ns > self.time_ns:
            self.time_ns = time_ns
            # Volatile, like every /clock: nobody who subscribes later misses a message not sent
            # now, and an evaluation with no recorder has nobody to send it to.
            if self._clock is not None and self._clock.get_subscription_count():
                self._clock.publish(messages.new("rosgraph_msgs/msg/Clock", clock=messages.time_msg(time_ns)))
                self.bus.deliver_pending()

    def next_due_ns(self) -> int | None:
        """When the next timer fires, or None if there are no timers."""
        while self._timers and self._timers[0][3].cancelled:
            heapq.heappop(self._timers)
        return self._timers[0][0] if self._timers else None

    def step(self) -> bool:
        """Advance to the next instant at which timers are due and fire them all, in order.

        Returns:
            False when there is no timer to fire.
        """
        self.bus.deliver_pending()
        due = self.next_due_ns()
        if due is None:
            return False
        self._advance_to(due)
        while self._timers and self._timers[0][0] == due:
            _, order, seq, timer = heapq.heappop(self._timers)
            if timer.cancelled:
                continue
            timer.callback()
            self.bus.deliver_pending()
            if not timer.cancelled:
                timer.due_ns += timer.period_ns
                heapq.heappush(self._timers, (timer.due_ns, order, seq, timer))
        return True

    def run_for(self, seconds: float) -> None:
        """Run every timer due in the next ``seconds`` of simulated time; the clock ends there."""
        end = self.time_ns + round(seconds * _NS)
        while (due := self.next_due_ns()) is not None and due <= end:
            self.step()
        self.bus.deliver_pending()
        self._advance_to(end)

    def run_until(self, predicate: Callable[[], bool], timeout_s: float) -> bool:
        """Step until ``predicate()`` holds (checked after each instant) or ``timeout_s`` passes.

        Returns:
            Whether the predicate held.
        """
        end = self.time_ns + round(timeout_s * _NS)
        self.bus.deliver_pending()
        while not predicate():
            due = self.next_due_ns()
            if due is None or due > end:
                self._advance_to(end)
                return predicate()
            self.step()
        return True

    @property
    def now_s(self) -> float:
        """Simulated time, seconds."""
        return self.time_ns / _NS

    # -- life cycle ----------------------------------------------------------------------------

    def shutdown(self) -> None:
        """Shut every node down, last added first, delivering what each publishes on the way out.

        Add the nodes that must see everything (a recorder) first, so that they shut down last.
        """
        if self._shut_down:
            return
        self._shut_down = True
        errors: list[BaseException] = []
        for record in reversed(list(self._records.values())):
            try:
                record.node.on_shutdown()
                self.bus.deliver_pending()
            except Exception as err:  # every node gets its chance to flush
                logging.getLogger("galley.host").error(
                    f"{record.host.fully_qualified_name}: on_shutdown failed: {err!r}"
                )
                errors.append(err)
        if errors:
            raise errors[0]

    def __enter__(self) -> EmbeddedHost:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
