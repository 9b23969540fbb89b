"""Replay of a bag into the embedded host, on the bag's clock.

:class:`BagPlayer` publishes every recorded message at its recorded (receive) time: the host's
clock is advanced to each message's time, so the host publishes /clock from the bag's stamps and
every node's timers fire at the simulated times they fired live. At one instant, the recorded
messages are published before the timers due then fire (live, the simulator publishes before
the nodes added after it), and in the order they were recorded. /clock itself is not replayed
(the host publishes its own, at the same stamps); /tf and /tf_static feed the host's TF buffer.

Example::

    player = BagPlayer("runs/bags/episode_1")
    host = EmbeddedHost(params_files=["config/galley.yaml"])
    player.start(host)                # the host's clock jumps to the bag's first stamp
    host.add_node(MonitorNode)        # timers start from there, as they did live
    player.play(host, skip=skip_monitor_output)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from rosbags.interfaces import QosDurability
from rosbags.rosbag2 import Reader

from galley_runtime.embedded import EmbeddedHost
from galley_runtime.qos import QoS
from galley_runtime.rosbags_messages import deserialize

__all__ = ["BagPlayer", "skip_monitor_output"]

ABORT = 3  # galley_msgs/msg/EpisodeEvent.ABORT


def skip_monitor_output(topic: str, msg: Any) -> bool:
    """Leave out what a monitor running in the replay publishes itself (its verdicts, aborts, diagnostics)."""
    if topic in ("/monitor/events", "/diagnostics"):
        return True
    return topic == "/episode/events" and int(msg.kind) == ABORT


class BagPlayer:
    """Plays one bag folder (or a single .mcap / .db3 file) into an embedded host.

    Args:
        bag: the bag.
        topics: topics to play; None: all.
        exclude: topics never played (default: /clock, which the host publishes itself).

    Raises:
        FileNotFoundError: no such bag.
    """

    def __init__(
        self, bag: str | Path, *, topics: Iterable[str] | None = None, exclude: Iterable[str] = ("/clock",)
    ) -> None:
        self.path = Path(bag)
        if not self.path.exists():
            raise FileNotFoundError(
                f"no bag at {self.path}; give a bag folder (with metadata.yaml) or an .mcap file"
            )
        self._reader = Reader(self.path)
        self._reader.open()
        wanted = set(topics) if topics is not None else None
        excluded = set(exclude)
        self.connections = [
            c
            for c in self._reader.connections
            if (wanted is None or c.topic in wanted) and c.topic not in excluded
        ]
        self.start_ns = self._reader.start_time if self._reader.message_count else 0
        self.end_ns = max(self.start_ns, self._reader.end_time - 1)
        self.counts: dict[str, int] = {}

    @property
    def duration_s(self) -> float:
        return (self.end_ns - self.start_ns) / 1e9

    def start(self, host: EmbeddedHost) -> None:
        """Move the host's clock to the bag's first stamp (do it before adding the nodes)."""
        if host.time_ns < self.start_ns:
            host._advance_to(self.start_ns)  # no public way yet to start a host's clock later

    def play(
        self,
        host: EmbeddedHost,
        *,
        rate: float | None = None,
        skip: Callable[[str, Any], bool] | None = None,
        progress: Callable[[float], None] | None = None,
    ) -> dict[str, int]:
        """Publish every message at its time, running the host's timers in between.

        Args:
            host: the host, whose clock is at or before the bag's start.
            rate: simulated seconds per wall second; None: as fast as possible.
            skip: ``skip(topic, message)`` True leaves a message out.
            progress: called with the fraction played, about every simulated second.

        Returns:
            Messages published per topic.
        """
        self.start(host)
        participant = host.participant("bag_player")
        publishers = {}
        for c in self.connections:
            latched = any(q.durability == QosDurability.TRANSIENT_LOCAL for q in c.ext.offered_qos_profiles)
            qos = QoS.latched(depth=100) if latched else QoS(depth=1000)
            publishers[c.id] = participant.create_publisher(c.topic, c.msgtype, qos)
        wall0, next_report = time.perf_counter(), self.start_ns
        for connection, stamp, raw in self._reader.messages(self.connections):
            msg = deserialize(raw, connection.msgtype)
            if skip is not None and skip(connection.topic, msg):
                continue
            self._run_until(host, stamp)
            if rate is not None:
                ahead = (stamp - self.start_ns) / 1e9 / rate - (time.perf_counter() - wall0)
                if ahead > 0:
                    time.sleep(ahead)
            publishers[connection.id].publish(msg)
            self.counts[connection.topic] = self.counts.get(connection.topic, 0) + 1
            if progress is not None and stamp >= next_report:
                progress((stamp - self.start_ns) / max(1, self.end_ns - self.start_ns))
                next_report = stamp + 1_000_000_000
        self._run_until(host, self.end_ns + 1)
        host.bus.deliver_pending()
        return self.counts

    @staticmethod
    def _run_until(host: EmbeddedHost, stamp: int) -> None:
        """Fire the timers due before ``stamp``, deliver, then move the clock to ``stamp``."""
        while (due := host.next_due_ns()) is not None and due < stamp:
            host.step()
        host.bus.deliver_pending()
        host._advance_to(stamp)

    def close(self) -> None:
        self._reader.close()
