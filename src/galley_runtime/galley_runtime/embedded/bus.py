"""In-process topics: fan-out, QoS depth, QoS matching and transient-local latching.

Every published message gets a global sequence number. Each matched subscription queues it
(dropping its oldest entry when a keep_last queue is full, as DDS does) and the bus remembers the
(sequence, subscription) pair; :meth:`Bus.deliver_pending` then calls the callbacks in publication
order. A callback may publish; those messages are delivered after the ones already pending, so
delivery is breadth-first and deterministic.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from galley_runtime import messages, rosbags_messages
from galley_runtime.qos import QoS

__all__ = ["Bus", "BusPublisher", "BusSubscription", "TopicTypeError"]

_log = logging.getLogger("galley.bus")

#: A callback that publishes to its own input forever would never return; this bounds one drain.
MAX_DELIVERIES_PER_DRAIN = 1_000_000


class TopicTypeError(TypeError):
    """A topic is used with two different message types."""


@dataclass(eq=False)
class BusPublisher:
    """A publication of one node on one topic."""

    bus: Bus
    topic: str
    type_name: str
    qos: QoS
    owner: str
    history: deque[Any] = field(default_factory=deque)  # kept for late joiners if transient-local
    count: int = 0
    #: The matched subscriptions, in subscription order; None after the graph changed (rebuilt
    #: at the next publish, so a publish does not test every subscription of the topic).
    receivers: list[BusSubscription] | None = None
    #: The message class that passed the type check (later messages of it skip the name check).
    checked_class: type | None = None
    #: How many of ``receivers`` read the messages (the others are stamp subscriptions).
    readers: int = 0

    def publish(self, msg: Any) -> None:
        self.bus.publish(self, msg)

    def get_subscription_count(self) -> int:
        """Matched subscriptions and the host's taps on the topic (as rclpy's Publisher counts)."""
        return self.bus.subscription_count(self)


@dataclass(eq=False)
class BusSubscription:
    """A subscription of one node to one topic, with its queue of undelivered messages."""

    topic: str
    type_name: str
    qos: QoS
    owner: str
    callback: Callable[[Any], None]
    queue: deque[tuple[int, Any]] = field(default_factory=deque)
    matched: set[int] = field(default_factory=set)  # ids of publishers it receives from
    received: int = 0
    dropped: int = 0
    #: The callback receives each message's stamp (:func:`messages.stamp_ns_of`), not the message.
    stamps_only: bool = False

    def __post_init__(self) -> None:
        self.queue = deque(maxlen=self.qos.queue_limit)


@dataclass
class _Topic:
    type_name: str
    publishers: list[BusPublisher] = field(default_factory=list)
    subscriptions: list[BusSubscription] = field(default_factory=list)


class Bus:
    """The topics of one embedded host.

    Args:
        check_messages: verify on publish that the message has the declared type and that numeric
            sequence fields hold numpy arrays (what the recorder and rclpy conversions need).
    """

    def __init__(self, *, check_messages: bool = True) -> None:
        self.check_messages = check_messages
        self._topics: dict[str, _Topic] = {}
        self._pending: deque[tuple[int, BusSubscription]] = deque()
        self._seq = 0
        self._taps: dict[str, list[Callable[[Any], None]]] = {}
        self._observers: list[Callable[[str, str, Any], None]] = []

    # -- graph ---------------------------------------------------------------------------------

    def _topic(self, name: str, type_name: str, who: str) -> _Topic:
        topic = self._topics.get(name)
        if topic is None:
            messages.backend().get_class(type_name)  # fail early on an unknown type
            topic = self._topics[name] = _Topic(type_name)
        elif topic.type_name != type_name:
            users = sorted({e.owner for e in (*topic.publishers, *topic.subscriptions)})
            raise TopicTypeError(
                f"{who} uses topic {name!r} with type {type_name}, but it already carries "
                f"{topic.type_name} (used by {', '.join(users)})"
            )
        return topic

    def topic_names_and_types(self) -> list[tuple[str, list[str]]]:
        return sorted((name, [t.type_name]) for name, t in self._topics.items())

    def add_publisher(self, topic: str, type_name: str, qos: QoS, owner: str) -> BusPublisher:
        entry = self._topic(topic, type_name, owner)
        pub = BusPublisher(self, topic, type_name, qos, owner, deque(maxlen=qos.queue_limit))
        entry.publishers.append(pub)
        self._graph_changed(entry)
        for sub in entry.subscriptions:
            self._match(pub, sub)
        return pub

    def add_subscription(
        self,
        topic: str,
        type_name: str,
        callback: Callable[[Any], None],
        qos: QoS,
        owner: str,
        *,
        stamps_only: bool = False,
    ) -> BusSubscription:
        entry = self._topic(topic, type_name, owner)
        sub = BusSubscription(topic, type_name, qos, owner, callback, stamps_only=stamps_only)
        entry.subscriptions.append(sub)
        self._graph_changed(entry)
        for pub in entry.publishers:
            self._match(pub, sub)
        return sub

    def remove_subscription(self, sub: BusSubscription) -> None:
        entry = self._topics[sub.topic]
        entry.subscriptions.remove(sub)
        self._graph_changed(entry)
        sub.queue.clear()

    @staticmethod
    def _graph_changed(entry: _Topic) -> None:
        for pub in entry.publishers:
            pub.receivers = None

    def _receivers(self, pub: BusPublisher) -> list[BusSubscription]:
        receivers = pub.receivers
        if receivers is None:
            subs = self._topics[pub.topic].subscriptions
            receivers = pub.receivers = [sub for sub in subs if id(pub) in sub.matched]
            pub.readers = sum(not sub.stamps_only for sub in receivers)
        return receivers

    def _match(self, pub: BusPublisher, sub: BusSubscription) -> None:
        reason = sub.qos.incompatibility(pub.qos)
        if reason is not None:
            _log.warning(
                f"{sub.owner} subscribes to {sub.topic!r} with QoS incompatible with publisher "
                f"{pub.owner}: {reason}; no messages will be delivered from it (as in ROS 2)"
            )
            return
        sub.matched.add(id(pub))
        pub.receivers = None
        if sub.qos.durability == "transient_local" and pub.history:
            for msg in pub.history:  # latched messages for the late joiner
                self._enqueue(sub, msg)

    def subscription_count(self, pub: BusPublisher) -> int:
        """How many subscriptions (and taps) receive what ``pub`` publishes."""
        return len(self._receivers(pub)) + len(self._taps.get(pub.topic, ()))

    def has_readers(self, pub: BusPublisher, *, taps: bool = True) -> bool:
        """Whether anything reads ``pub``'s messages.

        A subscription that is not a stamp subscription reads them, as do a tap (unless ``taps``
        is False), an observer and a transient-local history (kept for late joiners).
        """
        self._receivers(pub)
        return bool(
            pub.readers
            or (taps and self._taps.get(pub.topic))
            or self._observers
            or pub.qos.durability == "transient_local"
        )

    def add_endpoint(self, callback: Callable[[Any], None], owner: str) -> BusSubscription:
        """A receiver outside any topic (an action's service side): :meth:`send` queues to it.

        What is sent is delivered in order with the topics' messages, by :meth:`deliver_pending`.
        """
        return BusSubscription("", "", QoS(history="keep_all"), owner, callback)

    def send(self, endpoint: BusSubscription, request: Any) -> None:
        """Queue ``request`` for an endpoint of :meth:`add_endpoint`."""
        self._enqueue(endpoint, request)

    def add_tap(self, topic: str, callback: Callable[[Any], None]) -> None:
        """Call ``callback`` synchronously with every message published on ``topic``."""
        self._taps.setdefault(topic, []).append(callback)

    def add_observer(self, callback: Callable[[str, str, Any], None]) -> Callable[[], None]:
        """Call ``callback(topic, type_name, msg)`` with every message published on any topic.

        Unlike a tap or a subscription, an observer is not counted by ``get_subscription_count``,
        so it never makes a node do work it would otherwise skip (render a camera, say): what an
        observer sees is exactly what the run publishes without it. The callback runs in the
        publisher's call and must return quickly (a live view queues and drops). Returns a
        function that removes the observer.
        """
        self._observers.append(callback)
        return lambda: self._observers.remove(callback)

    # -- data flow -----------------------------------------------------------------------------

    def _enqueue(self, sub: BusSubscription, msg: Any) -> None:
        self._seq += 1
        if sub.queue.maxlen is not None and len(sub.queue) == sub.queue.maxlen:
            sub.dropped += 1
        sub.queue.append((self._seq, messages.stamp_ns_of(msg) if sub.stamps_only else msg))
        self._pending.append((self._seq, sub))

    def publish(self, pub: BusPublisher, msg: Any) -> None:
        if self.check_messages:
            _check(pub, msg)
        pub.count += 1
        if pub.qos.durability == "transient_local":
            pub.history.append(msg)
        receivers = pub.receivers
        if receivers is None:
            receivers = self._receivers(pub)
        if receivers:
            stamp = messages.stamp_ns_of(msg) if pub.readers < len(receivers) else 0
            self._fan_out(receivers, msg, stamp)
        for tap in self._taps.get(pub.topic, ()):
            tap(msg)
        for observer in self._observers:
            observer(pub.topic, pub.type_name, msg)

    def publish_lazily(self, pub: BusPublisher, stamp_ns: int, build: Callable[[], Any]) -> None:
        """:meth:`publish` ``build()`` if anything reads it, else :meth:`publish_stamp`."""
        if self.has_readers(pub):
            self.publish(pub, build())
        else:
            self.publish_stamp(pub, stamp_ns)

    def publish_stamp(self, pub: BusPublisher, stamp_ns: int) -> None:
        """Count a message stamped ``stamp_ns`` that nobody reads (see :meth:`has_readers`).

        Its stamp subscriptions receive the stamp, as :meth:`publish` would have given them.
        """
        pub.count += 1
        receivers = pub.receivers
        if receivers is None:
            receivers = self._receivers(pub)
        self._fan_out(receivers, None, stamp_ns)

    def _fan_out(self, receivers: list[BusSubscription], msg: Any, stamp: int) -> None:
        """Queue ``msg`` (to a stamp subscription: ``stamp``) to each; :meth:`_enqueue`, inline."""
        seq, pending = self._seq, self._pending
        for sub in receivers:
            seq += 1
            queue = sub.queue
            if len(queue) == queue.maxlen:
                sub.dropped += 1
            queue.append((seq, stamp if sub.stamps_only else msg))
            pending.append((seq, sub))
        self._seq = seq

    def deliver_pending(self) -> int:
        """Run the callbacks of every queued message, including ones their callbacks publish.

        Returns:
            The number of callbacks run.
        """
        delivered = 0
        while self._pending:
            seq, sub = self._pending.popleft()
            if not sub.queue or sub.queue[0][0] != seq:
                continue  # dropped by a full queue, or the subscription was removed
            _, msg = sub.queue.popleft()
            sub.received += 1
            sub.callback(msg)
            delivered += 1
            if delivered > MAX_DELIVERIES_PER_DRAIN:
                raise RuntimeError(
                    f"more than {MAX_DELIVERIES_PER_DRAIN} deliveries at one instant: a callback "
                    f"keeps publishing (last on {sub.topic!r} to {sub.owner})"
                )
        return delivered

    def statistics(self) -> dict[str, dict[str, int]]:
        """Per topic: messages published, delivered and dropped (summed over subscriptions)."""
        stats = {}
        for name, topic in sorted(self._topics.items()):
            stats[name] = {
                "published": sum(p.count for p in topic.publishers),
                "delivered": sum(s.received for s in topic.subscriptions),
                "dropped": sum(s.dropped for s in topic.subscriptions),
            }
        return stats


def _check(pub: BusPublisher, msg: Any) -> None:
    if type(msg) is not pub.checked_class:
        type_name = messages.type_name_of(msg)
        if type_name != pub.type_name:
            raise TypeError(
                f"{pub.owner} published a {type_name} on {pub.topic!r}, which carries {pub.type_name}"
            )
        pub.checked_class = type(msg)
    problem = rosbags_messages.find_unconverted_sequence(msg)
    if problem:
        raise TypeError(
            f"{pub.owner} published on {pub.topic!r} a message whose field {problem} holds a "
            "Python list; build sequence fields through Node.msg(..., field=values) so that both "
            "hosts convert them"
        )
