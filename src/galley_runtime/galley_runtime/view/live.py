"""The live view: an embedded host's topics over the Foxglove WebSocket protocol (foxglove-sdk).

:class:`LiveView` observes the host's bus (:meth:`Bus.add_observer`, which no node can see: no
camera renders for it and no message changes). A published message on a viewed topic whose
channel a client subscribes to is converted (:mod:`galley_runtime.view.convert`) and logged to
the SDK's server, which keeps a bounded backlog per client and drops a slow client's oldest
messages; the small ones (everything but images, the map and the scene) right there, on the
simulation's thread, the heavy ones on a bounded queue for a worker thread. So the simulation
never waits for a client: a full queue drops the message (counted in :attr:`LiveView.dropped`),
and a client that stalls or goes away changes nothing in the run or its bag. Camera images are
throttled (wall clock) and sent as JPEG, and the fast streams thinned to what a screen shows:
/tf to ``tf_hz`` (30 per wall second: the 50 Hz /tf comes whole while the simulation runs at
0.6x real time or slower), /odom and /scan to ``max_hz`` (10 per wall second, the LiDAR's own
rate at real time). Message times are the simulation's clock.

What the view costs the simulation is Python work under the GIL and each hand-over of the GIL
between threads, which on a busy machine is a wait for the scheduler: the SDK's ``log`` lets the
GIL go, so a worker logging each message took it back and forth with the simulation's thread
several times a batch. Converting the small messages where they are published costs a few tens
of microseconds each and no hand-over. Nothing is converted for a channel without a subscriber
(a topic nobody views costs one dict look-up), each message is encoded once whatever the number
of clients, the fast streams are written as JSON text directly
(:mod:`~galley_runtime.view.convert`), and the trajectory's points are each written once.
``python bench/view.py`` measures it.

Channels (topic: schema):

* /tf, /tf_static: foxglove.FrameTransforms; /view/scene: foxglove.SceneUpdate (furniture, zones,
  objects in their ``object/<name>`` frames); /map: foxglove.Grid;
* /camera/*/image_raw: foxglove.CompressedImage, when the run renders the cameras (``--video``, a
  policy, or ``sim.cameras_enabled``: the view does not turn them on); /scan: foxglove.LaserScan;
* /odom: foxglove.PoseInFrame; /plan (the global path): foxglove.PosesInFrame; /view/trajectory:
  the base's executed path (ground truth), foxglove.PosesInFrame;
* /view/plan: galley.PlanProgress, the task plan with each step's state and the monitor's verdict;
* /diagnostics, /task/plan, /task/status, /arm/goal, /episode/events, /monitor/events: their ROS
  types as JSON (:func:`~galley_runtime.view.convert.ros_to_dict`).

Latched things (the scene, the map, the plans, the trajectory) are sent again to each new subscriber.
"""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from galley_core.scene import Scene
from galley_runtime.view import convert
from galley_runtime.view.plan_progress import PlanProgress

__all__ = ["CAMERA_TOPICS", "LiveView"]

_log = logging.getLogger("galley.view")

CAMERA_TOPICS = ("/camera/base/image_raw", "/camera/wrist/image_raw", "/camera/top_down/image_raw")

#: topic -> (schema, converter or None for ros_to_dict, latched)
_VIEWED: dict[str, tuple[str, Callable[[Any], Any] | None, bool]] = {
    "/tf": ("foxglove.FrameTransforms", convert.frame_transforms, False),
    "/tf_static": ("foxglove.FrameTransforms", convert.frame_transforms, True),
    "/map": ("foxglove.Grid", convert.grid, True),
    "/scan": ("foxglove.LaserScan", convert.laser_scan, False),
    "/odom": ("foxglove.PoseInFrame", convert.pose_in_frame, False),
    "/plan": ("foxglove.PosesInFrame", convert.poses_in_frame, True),
    **{t: ("foxglove.CompressedImage", convert.compressed_image, False) for t in CAMERA_TOPICS},
    "/diagnostics": ("diagnostic_msgs/msg/DiagnosticArray", None, False),
    "/task/plan": ("galley_msgs/msg/TaskPlan", None, True),
    "/task/status": ("galley_msgs/msg/ActionStatus", None, True),
    "/arm/goal": ("galley_msgs/msg/ArmGoal", None, True),
    "/episode/events": ("galley_msgs/msg/EpisodeEvent", None, False),
    "/monitor/events": ("galley_msgs/msg/EpisodeEvent", None, False),
}
#: The fast streams, thinned (wall clock): a viewer needs no more, and at 10x real time the
#: simulator's 50 Hz /tf is 500 messages a wall second. /tf moves everything drawn (the robot,
#: the arm, the objects), so it keeps a smooth animation's rate; the others go at ``max_hz``.
_STREAMS = ("/tf", "/odom", "/scan")
#: Inputs of the view's own channels (/view/plan, /view/trajectory), always taken.
_INPUTS = ("/task/plan", "/episode/events", "/monitor/events")
#: The base's ground-truth pose, the executed trajectory's source.
_BASE_POSE = "/sim/ground_truth/base_pose"
_CLOCK_PERIOD_S = 0.05  # wall seconds between the clients' clock updates
#: Converted by the worker: a JPEG, the map's grid in base64, the scene (milliseconds each).
_HEAVY = (*CAMERA_TOPICS, "/map", "__scene__")
_TRAJECTORY_STEP_M = 0.03  # a new trajectory point once the base moved this far
_TRAJECTORY_PERIOD_S = 0.5  # wall seconds between trajectory messages


@dataclass
class _Channel:
    topic: str
    schema: str
    convert: Callable[[Any], Any] | None
    latched: bool
    channel: Any  # foxglove.Channel
    last: Any = None  # the last converted message (latched channels)
    min_period_s: float = 0.0  # thinning: a token bucket of 1 / min_period_s tokens a wall second
    tokens: float = 0.0
    last_wall_s: float = 0.0

    def admit(self, now: float) -> bool:
        """Whether a message may go now: the rate on average, in bursts of up to 0.2 s's worth.

        Bursts, because the lockstep simulation publishes unevenly in wall time.
        """
        rate = 1.0 / self.min_period_s
        self.tokens = min(max(1.0, rate / 5), self.tokens + (now - self.last_wall_s) * rate)
        self.last_wall_s = now
        if self.tokens < 1.0:
            return False
        self.tokens -= 1.0
        return True


@dataclass
class _Stats:
    queued: int = 0
    dropped: int = 0
    sent: dict[str, int] = field(default_factory=dict)


class LiveView:
    """Serves the topics of embedded hosts to Foxglove clients (and the page, see ``front``).

    Args:
        port: the SDK server's port on 127.0.0.1 (0: any free one; see :attr:`port`).
        tf_hz: the most /tf messages per second (wall clock), however fast the simulation runs;
            0: every message.
        max_hz: the same for /odom and /scan.
        image_hz: the most camera images per second per camera (wall clock).
        queue_size: messages waiting for conversion before new ones are dropped.
        scene: drawn on /view/scene where a host runs no simulator node to take it from (a replay).
    """

    def __init__(
        self,
        *,
        port: int = 0,
        tf_hz: float = 30.0,
        max_hz: float = 10.0,
        image_hz: float = 5.0,
        queue_size: int = 256,
        scene: Scene | None = None,
    ) -> None:
        import foxglove  # noqa: PLC0415 (optional: foxglove-sdk)
        from foxglove.websocket import Capability  # noqa: PLC0415 (optional: foxglove-sdk)

        self._foxglove = foxglove
        self._context = foxglove.Context()
        self._channels: dict[str, _Channel] = {}
        for topic, (schema, fn, latched) in _VIEWED.items():
            hz = image_hz if fn is convert.compressed_image else max_hz if topic in _STREAMS else 0.0
            hz = tf_hz if topic == "/tf" else hz
            self._add_channel(topic, schema, fn, latched, 1.0 / hz if hz > 0 else 0.0)
        for topic, schema in (
            ("/view/scene", "foxglove.SceneUpdate"),
            ("/view/trajectory", "foxglove.PosesInFrame"),
            ("/view/plan", "galley.PlanProgress"),
        ):
            self._add_channel(topic, schema, None, True, 0.0)
        # The heavy messages' queue: a plain deque (append and popleft are atomic), and the
        # worker woken only when there is something for it (a few times a second at most).
        self._queue: deque[tuple[str, Any]] = deque()
        self._queue_size = queue_size
        self._closing = False
        self._wake = threading.Event()
        self._resend: set[str] = set()
        self.stats = _Stats()
        self._progress = PlanProgress()
        self._trajectory: list[str] = []  # the points as JSON (convert.xy_pose)
        self._last_xy = (math.inf, math.inf)
        self._trajectory_frame = "map"
        self._trajectory_sent = (0, 0.0)  # (points sent, wall time)
        self._time_ns = 0
        self._clock_sent_s = 0.0  # wall time of the last clock update
        self._detach: Callable[[], None] | None = None
        self._default_scene = scene
        self._host: Any = None
        self._scene_tries = 0
        # The observer's routes: topic -> what to do with a message (no entry: not viewed).
        self._routes: dict[str, Callable[[str, Any], None]] = {_BASE_POSE: self._take_pose}
        for topic, channel in self._channels.items():
            always = channel.latched or topic in _INPUTS
            self._routes[topic] = self._take if always else self._offer
        for topic in _INPUTS:
            self._routes[topic] = self._take
        self.server = foxglove.start_server(
            name="galley",
            host="127.0.0.1",
            port=port,
            capabilities=[Capability.Time],
            server_listener=_Listener(self),
            context=self._context,
        )
        self._worker = threading.Thread(target=self._work, name="galley-view", daemon=True)
        self._worker.start()

    @property
    def port(self) -> int:
        """The SDK server's port (127.0.0.1)."""
        return int(self.server.port)

    @property
    def dropped(self) -> int:
        """Messages dropped because the queue was full (the simulation went on)."""
        return self.stats.dropped

    def _add_channel(self, topic: str, schema: str, fn: Any, latched: bool, period: float) -> None:
        channel = self._foxglove.Channel(
            topic,
            schema=self._foxglove.Schema(
                name=schema, encoding="jsonschema", data=_json_bytes(convert.json_schema(schema))
            ),
            message_encoding="json",
            context=self._context,
        )
        self._channels[topic] = _Channel(topic, schema, fn, latched, channel, min_period_s=period)

    # -- the host side (simulation thread) ------------------------------------------------------

    def attach(self, host: Any) -> None:
        """Follow ``host``, detaching from the previous one.

        The clients get a new session, as each episode's clock starts again at 0. The scene
        drawn is the simulator node's, else the one given to the constructor.
        """
        if self._detach is not None:
            self._detach()
        self._host, self._scene_tries = host, 0
        self._trajectory = []  # taken by the worker as a whole: a new list, not cleared
        self._last_xy = (math.inf, math.inf)
        self._trajectory_frame = "map"
        self._routes["/tf"] = self._find_scene
        self._queue.clear()  # the previous episode's
        self._reset()
        self._detach = host.bus.add_observer(self._observe)

    def _observe(self, topic: str, type_name: str, msg: Any) -> None:
        """The bus observer: cheap, never blocks (a full queue drops the message).

        It sees every message of the run (about 5,000 a wall second at 10x real time), most on
        topics nobody views: one look-up, and out.
        """
        route = self._routes.get(topic)
        if route is not None:
            route(topic, msg)

    def _offer(self, topic: str, msg: Any) -> None:
        """A stream: taken only while a client subscribes, at most at its channel's rate."""
        channel = self._channels[topic]
        if not channel.channel.has_sinks():
            return  # nobody subscribes: nothing to convert
        if channel.min_period_s and not channel.admit(time.monotonic()):
            return
        self._take(topic, msg)

    def _take(self, topic: str, msg: Any) -> None:
        """Convert and send a message now, or queue it for the worker (the heavy ones)."""
        if topic in _HEAVY:
            self._put((topic, msg))
            return
        try:
            self._handle(topic, msg)
        except Exception as err:  # a bad message must not end the view, nor the run
            _log.warning(f"live view: {topic}: {err!r}")

    def _take_pose(self, topic: str, msg: Any) -> None:
        """The base's ground-truth pose: a trajectory point once it moved _TRAJECTORY_STEP_M.

        Points are taken here (a comparison), so the 50 Hz pose never goes through the queue.
        """
        p = msg.pose.position
        x, y = float(p.x), float(p.y)
        last = self._last_xy
        if (x - last[0]) ** 2 + (y - last[1]) ** 2 > _TRAJECTORY_STEP_M**2:
            self._last_xy = (x, y)
            self._trajectory.append(convert.xy_pose(x, y))
            self._trajectory_frame = msg.header.frame_id or "map"
            self._send_trajectory()

    def _find_scene(self, topic: str, msg: Any) -> None:
        """/tf until the scene is found, then /tf is a stream like the others.

        The scene is the simulator node's, once it runs (its first /tf may come from its
        constructor); a host without one (a replay) gets the default scene after a few /tf.
        """
        try:
            scene = getattr(self._host.node("sim"), "scene", None)
        except KeyError:
            scene = None
        self._scene_tries += 1
        if isinstance(scene, Scene) or self._scene_tries > 10:
            self._host = None
            self._routes["/tf"] = self._offer
            self._put(("__scene__", scene if isinstance(scene, Scene) else self._default_scene))
        self._offer(topic, msg)

    def _put(self, item: tuple[str, Any]) -> None:
        if len(self._queue) >= self._queue_size:
            self.stats.dropped += 1
            return
        self._queue.append(item)
        self.stats.queued += 1
        self._wake.set()

    # -- the worker thread -----------------------------------------------------------------------

    def _work(self) -> None:
        while True:
            self._wake.wait()
            self._wake.clear()
            while self._queue:
                item = self._queue.popleft()
                try:
                    self._handle_heavy(*item)
                except Exception as err:  # a bad message must not end the view
                    _log.warning(f"live view: {item[0]}: {err!r}")
            for topic in self._take_resend():
                channel = self._channels[topic]
                if channel.last is not None:
                    channel.channel.log(channel.last, log_time=self._time_ns)
            if self._closing:
                return

    def _send_trajectory(self) -> None:
        """The trajectory so far, every _TRAJECTORY_PERIOD_S (wall) while it grows."""
        now, (sent, sent_at) = time.monotonic(), self._trajectory_sent
        if len(self._trajectory) != sent and now >= sent_at + _TRAJECTORY_PERIOD_S:
            self._trajectory_sent = (len(self._trajectory), now)
            xy = convert.xy_poses(self._trajectory_frame, self._time_ns, self._trajectory)
            self._log(self._channels["/view/trajectory"], xy)

    def _take_resend(self) -> list[str]:
        topics, self._resend = list(self._resend), set()
        return topics

    def _handle_heavy(self, topic: str, msg: Any) -> None:
        """The worker's: the scene, the map, a camera image (at the view's clock)."""
        if topic == "__scene__":
            if msg is not None:
                self._log(self._channels["/view/scene"], convert.scene_update(msg))
            return
        channel = self._channels[topic]
        data = channel.convert(msg) if channel.convert is not None else convert.ros_to_dict(msg)
        if data is not None:
            self._log(channel, data)

    def _handle(self, topic: str, msg: Any) -> None:
        """The simulation thread's: the view's clock, the plan's progress, a small message."""
        header = getattr(msg, "header", None)
        if header is None and getattr(msg, "transforms", None):  # a TFMessage: its transforms' time
            header = msg.transforms[0].header
        if header is not None:
            self._time_ns = max(self._time_ns, convert.stamp_ns(header.stamp))
            now = time.monotonic()
            if now >= self._clock_sent_s + _CLOCK_PERIOD_S:  # the clients' clock
                self._clock_sent_s = now
                self.server.broadcast_time(self._time_ns)
        if topic in _INPUTS:
            self._follow(topic, msg)
        channel = self._channels.get(topic)
        if channel is None:
            return
        data = channel.convert(msg) if channel.convert is not None else convert.ros_to_dict(msg)
        if data is not None:
            self._log(channel, data)

    def _log(self, channel: _Channel, data: Any) -> None:
        if channel.latched:
            channel.last = data
        channel.channel.log(data, log_time=self._time_ns)
        self.stats.sent[channel.topic] = self.stats.sent.get(channel.topic, 0) + 1

    def _reset(self) -> None:
        self._time_ns = 0
        self._clock_sent_s = 0.0
        self._progress = PlanProgress()
        self._trajectory_sent = (0, 0.0)
        for channel in self._channels.values():
            channel.last = None
        self.server.clear_session()

    def _follow(self, topic: str, msg: Any) -> None:
        """The view's own channels: the plan's progress and the executed trajectory."""
        if self._progress.update(topic, msg):
            self._log(self._channels["/view/plan"], self._progress.as_dict(self._time_ns))

    def close(self) -> None:
        """Stop following, let the worker finish what is queued, stop the server."""
        if self._detach is not None:
            self._detach()
            self._detach = None
        self._closing = True
        self._wake.set()
        self._worker.join(timeout=5.0)
        self.server.stop()


class _Listener:
    """foxglove ServerListener: a new subscriber to a latched channel gets its last message."""

    def __init__(self, view: LiveView) -> None:
        self._view = view

    def on_subscribe(self, client: Any, channel: Any) -> None:
        ours = self._view._channels.get(channel.topic)
        if ours is not None and ours.latched:
            self._view._resend.add(channel.topic)
            self._view._wake.set()

    def on_unsubscribe(self, client: Any, channel: Any) -> None:
        pass


def _json_bytes(value: Any) -> bytes:
    return json.dumps(value).encode()
