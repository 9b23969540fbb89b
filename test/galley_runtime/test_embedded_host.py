"""The embedded host running real nodes: delivery, QoS, latching, timers, parameters, determinism."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import pytest

from galley_core.config import Config, param
from galley_nodes.nodes.square_driver import SquareDriverNode
from galley_nodes.nodes.trajectory_logger import TrajectoryLoggerNode
from galley_nodes.nodes.unicycle_base import UnicycleBaseNode
from galley_runtime import messages, rosbags_messages
from galley_runtime.embedded import EmbeddedHost
from galley_runtime.embedded.bus import TopicTypeError
from galley_runtime.node import Node, Publishes, Subscribes, Timer
from galley_runtime.params_file import ParameterError
from galley_runtime.qos import QoS

MS = 1_000_000
DEFAULT_QOS = QoS()
INT32 = "std_msgs/msg/Int32"


@dataclass(frozen=True)
class CounterConfig(Config):
    period_s: float = param(0.1, "publishing period", unit="s", gt=0.0)
    burst: int = param(1, "messages per tick", ge=1)
    start: int = param(0, "first value")


class Counter(Node):
    """Publishes ``burst`` increasing integers on ``count`` every period."""

    name = "counter"
    Config = CounterConfig
    publishes = (Publishes("count", INT32),)
    timers = (Timer("on_tick", period_s=lambda c: c.period_s),)

    def __init__(self, host: Any, config: CounterConfig) -> None:
        super().__init__(host, config)
        self.value = config.start
        self.ticks_ns: list[int] = []

    def on_tick(self) -> None:
        self.ticks_ns.append(self.now_ns())
        for _ in range(self.config.burst):
            self.publish("count", self.msg(INT32, data=self.value))
            self.value += 1

    def on_config_change(self, config: CounterConfig) -> None:
        self.config = config
        self.changes = getattr(self, "changes", 0) + 1


class Relay(Node):
    """Republishes ``count`` + 1000 on ``relayed``."""

    name = "relay"
    subscribes = (Subscribes("count", INT32, "on_count"),)
    publishes = (Publishes("relayed", INT32),)

    def on_count(self, msg: Any) -> None:
        self.publish("relayed", self.msg(INT32, data=msg.data + 1000))


def spy(
    host: EmbeddedHost, topic: str, type_name: str = INT32, qos: QoS = DEFAULT_QOS, name: str = "spy"
) -> list[Any]:
    """Subscribe a participant; returns the list the messages land in as (time_ns, topic, data)."""
    seen: list[Any] = []
    participant = host.participant(name)
    participant.create_subscription(
        topic, type_name, lambda m: seen.append((host.time_ns, topic, getattr(m, "data", m))), qos
    )
    return seen


def test_delivery_follows_publication_order_breadth_first():
    host = EmbeddedHost()
    seen: list[Any] = []
    participant = host.participant("spy")
    for topic in ("/count", "/relayed", "/other"):
        participant.create_subscription(
            topic, INT32, lambda m, t=topic: seen.append((t, m.data)), QoS(depth=100)
        )
    host.add_node(Counter, parameters={"burst": 2})
    host.add_node(Relay)
    host.add_node(Counter, name="other", parameters={"start": 50}, remappings={"count": "other"})
    host.run_for(0.1)
    # At t = 0.1 s the first counter fires (2 messages), their relays follow them, then the second counter.
    assert seen == [("/count", 0), ("/count", 1), ("/relayed", 1000), ("/relayed", 1001), ("/other", 50)]


def test_keep_last_depth_drops_the_oldest_messages():
    host = EmbeddedHost()
    shallow = spy(host, "/count", qos=QoS(depth=2), name="shallow")
    everything = spy(host, "/count", qos=QoS(history="keep_all"), name="all")
    host.add_node(Counter, parameters={"burst": 5})
    host.run_for(0.1)
    assert [d for _, _, d in shallow] == [3, 4]
    assert [d for _, _, d in everything] == [0, 1, 2, 3, 4]
    assert host.bus.statistics()["/count"] == {"published": 5, "delivered": 7, "dropped": 3}


@dataclass(frozen=True)
class MapConfig(Config):
    versions: int = param(1, "how many map versions to publish at start", ge=1)


class LatchedMap(Node):
    """Publishes its map once, at start, transient-local (like nav2's map_server)."""

    name = "map_server"
    Config = MapConfig
    publishes = (Publishes("map", "std_msgs/msg/String", QoS.latched(depth=2)),)

    def __init__(self, host: Any, config: MapConfig) -> None:
        super().__init__(host, config)
        for version in range(config.versions):
            self.publish("map", self.msg("std_msgs/msg/String", data=f"map v{version}"))


class MapReader(Node):
    """Subscribes to the map the way rviz or a planner does: transient-local."""

    name = "map_reader"
    subscribes = (Subscribes("map", "std_msgs/msg/String", "on_map", QoS.latched(depth=5)),)

    def __init__(self, host: Any, config: Any) -> None:
        super().__init__(host, config)
        self.maps: list[tuple[int, str]] = []

    def on_map(self, msg: Any) -> None:
        self.maps.append((self.now_ns(), msg.data))


class VolatileMapReader(MapReader):
    name = "volatile_map_reader"
    subscribes = (Subscribes("map", "std_msgs/msg/String", "on_map", QoS()),)


def test_transient_local_latches_the_last_depth_messages_for_late_subscribers():
    host = EmbeddedHost()
    host.add_node(LatchedMap, parameters={"versions": 3})
    host.run_for(5.0)
    late = host.add_node(MapReader)
    volatile = host.add_node(VolatileMapReader)
    host.run_for(0.1)
    # Delivered when the late node joins (t = 5 s); the publisher keeps depth = 2.
    assert late.maps == [(5_000 * MS, "map v1"), (5_000 * MS, "map v2")]
    assert volatile.maps == []


def test_incompatible_qos_delivers_nothing_and_warns(caplog):
    host = EmbeddedHost()
    best_effort = host.participant("sensor").create_publisher("/scan", INT32, QoS.sensor_data())
    with caplog.at_level(logging.WARNING):
        strict = spy(host, "/scan", qos=QoS(reliability="reliable"), name="strict")
        relaxed = spy(host, "/scan", qos=QoS.sensor_data(), name="relaxed")
    best_effort.publish(messages.new(INT32, data=7))
    host.run_for(0.01)
    assert strict == [] and [d for _, _, d in relaxed] == [7]
    assert "RELIABILITY" in caplog.text and "/strict" in caplog.text


def test_subscription_count_counts_matched_subscriptions_only():
    host = EmbeddedHost()
    counter = host.add_node(Counter)
    assert counter.has_subscribers("count") is False
    spy(host, "/count", qos=QoS(reliability="best_effort"), name="relaxed")  # asks less: matched
    assert counter.has_subscribers("count") is True
    best_effort = host.participant("sensor").create_publisher("/scan", INT32, QoS.sensor_data())
    spy(host, "/scan", qos=QoS(reliability="reliable"), name="strict")  # incompatible: not counted
    assert best_effort.get_subscription_count() == 0
    with pytest.raises(KeyError, match="does not publish"):
        counter.has_subscribers("other")


def test_timers_fire_at_their_periods_in_simulated_time():
    host = EmbeddedHost()
    fast = host.add_node(Counter, name="fast", parameters={"period_s": 0.1})
    slow = host.add_node(Counter, name="slow", parameters={"period_s": 0.25})
    clock = spy(host, "/clock", "rosgraph_msgs/msg/Clock")
    host.run_for(1.0)
    assert fast.ticks_ns == [k * 100 * MS for k in range(1, 11)]
    assert slow.ticks_ns == [k * 250 * MS for k in range(1, 5)]
    assert host.time_ns == 1000 * MS
    stamps = [messages.time_ns_from_msg(m.clock) for _, _, m in clock]
    assert stamps == sorted({*fast.ticks_ns, *slow.ticks_ns})


def test_the_clock_is_built_only_for_subscribers():
    host = EmbeddedHost()
    host.add_node(Counter, name="fast", parameters={"period_s": 0.1})
    host.run_for(0.5)
    assert host.bus.statistics()["/clock"]["published"] == 0
    clock = spy(host, "/clock", "rosgraph_msgs/msg/Clock")
    host.run_for(0.5)
    assert [messages.time_ns_from_msg(m.clock) for _, _, m in clock] == [k * 100 * MS for k in range(6, 11)]


def test_parameters_come_from_layered_yaml_files(params_file):
    base = params_file(
        """
/**:
  ros__parameters:
    use_sim_time: true
    burst: 2            # only nodes that declare it take it
    side_m: 9.0         # unknown to the counter: ignored under a wildcard
counter:
  ros__parameters:
    period_s: 0.5
robot:
  fast:
    ros__parameters:
      period_s: 0.2
""",
        "base.yaml",
    )
    override = params_file("counter:\n  ros__parameters:\n    start: 100\n", "override.yaml")
    host = EmbeddedHost([base, override])
    counter = host.add_node(Counter)
    namespaced = host.add_node(Counter, name="fast", namespace="/robot")
    assert (counter.config.period_s, counter.config.burst, counter.config.start) == (0.5, 2, 100)
    assert namespaced.config.period_s == 0.2 and namespaced.config.start == 0
    host.run_for(0.5)
    assert counter.ticks_ns == [500 * MS] and len(namespaced.ticks_ns) == 2


def test_a_bad_parameter_is_rejected_naming_node_parameter_source_and_allowed_values(params_file):
    bad = params_file("counter:\n  ros__parameters:\n    period_s: -1.0\n")
    with pytest.raises(ParameterError) as err:
        EmbeddedHost([bad]).add_node(Counter)
    text = str(err.value)
    assert "node '/counter'" in text and "'period_s' = -1.0" in text
    assert "> 0" in text and str(bad) in text

    typo = params_file("counter:\n  ros__parameters:\n    perod_s: 1.0\n", "typo.yaml")
    with pytest.raises(ParameterError, match="did you mean period_s"):
        EmbeddedHost([typo]).add_node(Counter)

    wrong_type = params_file("counter:\n  ros__parameters:\n    burst: two\n", "type.yaml")
    with pytest.raises(ParameterError, match="'burst' = 'two' is not allowed: an integer"):
        EmbeddedHost([wrong_type]).add_node(Counter)


def test_malformed_params_files_are_named(params_file):
    with pytest.raises(ParameterError, match="is not valid YAML"):
        EmbeddedHost([params_file("counter: [unclosed\n")])
    with pytest.raises(ParameterError, match="must hold a mapping"):
        EmbeddedHost([params_file("counter: 3\n", "flat.yaml")])
    with pytest.raises(ParameterError, match="does not exist"):
        EmbeddedHost(["/no/such/params.yaml"])


def test_set_parameters_validates_before_applying():
    host = EmbeddedHost()
    counter = host.add_node(Counter)
    with pytest.raises(ParameterError, match="'burst' = 0 is not allowed"):
        host.set_parameters("counter", {"burst": 0, "start": 5})
    assert counter.config.burst == 1 and counter.config.start == 0 and not hasattr(counter, "changes")
    host.set_parameters("counter", {"burst": 3})
    assert counter.config.burst == 3 and counter.changes == 1


def record_everything(host: EmbeddedHost) -> list[tuple[str, int, bytes]]:
    stream: list[tuple[str, int, bytes]] = []
    participant = host.participant("recorder")
    # /tf is created on the first broadcast, after this subscription; name it explicitly.
    topics = dict(host.bus.topic_names_and_types()) | {"/tf": ["tf2_msgs/msg/TFMessage"]}
    for topic, types in topics.items():
        participant.create_subscription(
            topic,
            types[0],
            lambda m, t=topic: stream.append((t, host.time_ns, rosbags_messages.serialize(m))),
            QoS(history="keep_all", durability="volatile"),
        )
    return stream


def run_demo_graph(side_m: float = 0.5) -> list[tuple[str, int, bytes]]:
    host = EmbeddedHost()
    host.add_node(TrajectoryLoggerNode)
    host.add_node(UnicycleBaseNode)
    host.add_node(SquareDriverNode, parameters={"side_m": side_m})
    host.add_node(Counter, parameters={"burst": 3, "period_s": 0.03})
    stream = record_everything(host)
    host.run_for(12.0)
    host.shutdown()
    return stream


def test_two_identical_runs_give_identical_message_streams():
    first, second = run_demo_graph(), run_demo_graph()
    assert len(first) > 2000
    assert {t for t, _, _ in first} >= {"/cmd_vel", "/odom", "/tf", "/trajectory", "/count", "/clock"}
    assert first == second
    assert run_demo_graph(side_m=0.6) != first  # and the comparison does see a difference


class FinalWords(Node):
    name = "final_words"
    publishes = (Publishes("count", INT32),)

    def on_shutdown(self) -> None:
        self.publish("count", self.msg(INT32, data=-1))


class Listener(Node):
    name = "listener"
    subscribes = (Subscribes("count", INT32, "on_count"),)

    def __init__(self, host: Any, config: Any) -> None:
        super().__init__(host, config)
        self.heard: list[int] = []
        self.flushed: list[int] | None = None

    def on_count(self, msg: Any) -> None:
        self.heard.append(msg.data)

    def on_shutdown(self) -> None:
        self.flushed = list(self.heard)


def test_shutdown_goes_last_added_first_and_delivers_final_messages():
    with EmbeddedHost() as host:
        listener = host.add_node(Listener)
        host.add_node(FinalWords)
    assert listener.flushed == [-1]


def test_topic_type_conflicts_and_unconverted_sequences_are_caught():
    host = EmbeddedHost()
    host.add_node(Counter)
    with pytest.raises(TopicTypeError, match="already carries std_msgs/msg/Int32"):
        host.participant("x").create_subscription("/count", "std_msgs/msg/String", print, QoS())
    pub = host.participant("scanner").create_publisher("/scan", "sensor_msgs/msg/LaserScan", QoS())
    scan = messages.new("sensor_msgs/msg/LaserScan")
    scan.ranges = [1.0, 2.0]
    with pytest.raises(TypeError, match="field ranges holds a Python list"):
        pub.publish(scan)
    with pytest.raises(TypeError, match="published a geometry_msgs/msg/Twist"):
        pub.publish(messages.new("geometry_msgs/msg/Twist"))


def test_run_until_stops_when_the_predicate_holds():
    host = EmbeddedHost()
    counter = host.add_node(Counter)
    assert host.run_until(lambda: counter.value >= 5, timeout_s=10.0)
    assert host.time_ns == 500 * MS
    assert not host.run_until(lambda: counter.value >= 1000, timeout_s=1.0)
    assert host.time_ns == 1500 * MS


def test_node_declarations_are_checked_when_the_class_is_defined():
    with pytest.raises(TypeError, match="not a ROS message type name"):

        class BadType(Node):
            name = "bad_type"
            publishes = (Publishes("x", "Twist"),)

    with pytest.raises(TypeError, match="callback 'missing' is not a method"):

        class BadCallback(Node):
            name = "bad_callback"
            timers = (Timer("missing", 0.1),)


def test_a_subscription_added_or_removed_between_publications_is_honoured():
    host = EmbeddedHost()
    host.add_node(Counter)
    first = spy(host, "/count", name="first")
    host.run_for(0.1)
    second = spy(host, "/count", name="second")
    host.run_for(0.1)
    sub = next(s for s in host.bus._topics["/count"].subscriptions if s.owner == "/first")
    host.bus.remove_subscription(sub)
    host.run_for(0.1)
    assert [d for _, _, d in first] == [0, 1]
    assert [d for _, _, d in second] == [1, 2]


class LazyStamper(Node):
    """Publishes a PointStamped stamped now every 0.1 s, built only for a reader; counts builds."""

    name = "stamper"
    publishes = (Publishes("point", "geometry_msgs/msg/PointStamped"),)
    timers = (Timer("on_tick", period_s=0.1),)
    built = 0

    def on_tick(self) -> None:
        self.publish_lazily("point", self.now_ns(), self.build)

    def build(self) -> Any:
        self.built += 1
        return self.msg("geometry_msgs/msg/PointStamped", header={"stamp": self.stamp()})


def test_a_lazy_message_is_built_only_for_a_reader_and_its_stamp_reaches_rate_watchers():
    host = EmbeddedHost()
    stamper = host.add_node(LazyStamper)
    stamps: list[int] = []
    watcher = host.participant("watcher")
    watcher.create_stamp_subscription("/point", "geometry_msgs/msg/PointStamped", stamps.append, DEFAULT_QOS)
    assert stamper.has_subscribers("point") and not stamper.has_readers("point")
    host.run_for(0.3)
    assert stamper.built == 0 and stamps == [100 * MS, 200 * MS, 300 * MS]
    assert host.bus.statistics()["/point"]["published"] == 3
    observed: list[Any] = []
    detach = host.bus.add_observer(lambda topic, _, msg: observed.append(msg) if topic == "/point" else None)
    host.run_for(0.1)  # a live view reads what it observes
    assert stamper.built == 1 and len(observed) == 1 and stamps[-1] == 400 * MS
    detach()
    readings = spy(host, "/point", "geometry_msgs/msg/PointStamped", name="reader")
    assert stamper.has_readers("point")
    host.run_for(0.2)
    assert stamper.built == 3 and [messages.stamp_ns_of(m) for _, _, m in readings] == [500 * MS, 600 * MS]
    assert stamps == [k * 100 * MS for k in range(1, 7)]  # from the built messages as from the stamps
