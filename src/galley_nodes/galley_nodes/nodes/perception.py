"""``perception``: the scene's object poses from the robot's own RGB-D camera.

Subscribes the base camera's depth image (``/camera/base/depth/image_raw``, 32FC1 metres), its
colour image and camera_info; looks up in TF the camera's optical frame and the robot's links
(to leave the robot's own body out) at each image's stamp. Publishes every frame's estimates on
``/perception/objects`` (galley_msgs/PerceivedObjects, in the map frame) and as TF frames
``perceived/<name>`` (parent ``map``), the counterparts of the simulator's ground truth
``object/<name>``, which this node never reads: no ``/sim/`` topic, no ``object/`` frame.
The algorithm is :mod:`galley_core.perception`; an object out of view keeps its last estimate with
a decaying confidence.

Depth and colour images of one instant are paired by stamp: a depth image is processed once the
colour image of its stamp and its camera's TF are in (whichever arrives last), or after
``sync_wait_s`` without colour; without TF by then it is dropped.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass
from typing import Any

from galley_core.config import param
from galley_core.geometry import Transform, quaternion_from_yaw
from galley_core.perception import Intrinsics, ObjectEstimate, ObjectPerception, PerceptionConfig
from galley_core.tf_tree import TransformError
from galley_runtime import messages
from galley_runtime.config_files import find_scene
from galley_runtime.conversions import image_from_msg, transform_from_msg, transform_stamped_msg
from galley_runtime.node import Node, Publishes, Subscribes, Timer

__all__ = ["PerceptionNode", "PerceptionNodeConfig"]


@dataclass(frozen=True)
class PerceptionNodeConfig(PerceptionConfig):
    scene: str = param("kitchen", "scene name (config/scenes/<name>.yaml) or path: static geometry, objects")
    map_frame: str = param("map", "fixed frame of the estimates")
    base_frame: str = param("base_link", "the robot's base frame (its body is left out of the points)")
    frame_prefix: str = param("perceived/", "TF frames of the estimates: <prefix><object name>")
    sync_wait_s: float = param(
        0.1, "a depth image waits this long for its colour image and its camera's TF", unit="s", gt=0.0
    )
    retry_period_s: float = param(0.02, "how often a waiting depth image is tried again", unit="s", gt=0.0)


class PerceptionNode(Node):
    name = "perception"
    Config = PerceptionNodeConfig
    subscribes = (
        Subscribes("/camera/base/depth/image_raw", "sensor_msgs/msg/Image", "on_depth"),
        Subscribes("/camera/base/image_raw", "sensor_msgs/msg/Image", "on_rgb"),
        Subscribes("/camera/base/camera_info", "sensor_msgs/msg/CameraInfo", "on_camera_info"),
    )
    publishes = (Publishes("/perception/objects", "galley_msgs/msg/PerceivedObjects"),)
    timers = (Timer("on_retry", period_s=lambda c: c.retry_period_s),)
    uses_tf = True

    def __init__(self, host: Any, config: PerceptionNodeConfig) -> None:
        super().__init__(host, config)
        self.scene = find_scene(config.scene)
        self.perception = ObjectPerception(self.scene, config)
        self._shapes = {o.name: o for o in self.scene.objects}
        self._intrinsics: Intrinsics | None = None
        self._pending_depth: Any = None
        self._rgb: Any = None
        self._warned: set[str] = set()
        #: Wall-clock and CPU (this thread's) seconds each processed frame took, the latest 1000 (for
        #: benchmarks and diagnostics; on a loaded machine the CPU time is the steadier measure).
        self.frame_seconds: deque[float] = deque(maxlen=1000)
        self.frame_cpu_seconds: deque[float] = deque(maxlen=1000)

    # -- inputs --------------------------------------------------------------------------------

    def on_camera_info(self, msg: Any) -> None:
        k = [float(v) for v in msg.k]
        self._intrinsics = Intrinsics(k[0], k[4], k[2], k[5], int(msg.width), int(msg.height))

    def on_rgb(self, msg: Any) -> None:
        self._rgb = msg
        self.on_retry()

    def on_depth(self, msg: Any) -> None:
        if self._pending_depth is not None:
            self._warn_once("dropped", "a depth image was dropped: its colour image or TF never came in time")
        self._pending_depth = msg
        self.on_retry()

    def on_retry(self) -> None:
        """Process the waiting depth image once its colour image and its camera's TF are in.

        In the embedded host both come before the depth image (the simulator publishes state, then
        colour, then depth, in one tick); over DDS they may come after it. A depth image waits
        ``sync_wait_s`` for them, then goes without colour, or is dropped without TF.
        """
        depth = self._pending_depth
        if depth is None:
            return
        c = self.config
        stamp = messages.stamp_ns_of(depth)
        waited = (self.now_ns() - stamp) * 1e-9 >= c.sync_wait_s
        rgb = self._rgb if self._rgb is not None and messages.stamp_ns_of(self._rgb) == stamp else None
        if rgb is None and c.colour_weight > 0 and not waited:
            return
        if self._intrinsics is None:
            self._warn_once("info", "no camera_info yet on /camera/base/camera_info: frames wait for it")
            return
        try:
            camera = transform_from_msg(self.lookup_transform(c.map_frame, depth.header.frame_id, stamp))
        except TransformError as err:
            if waited:
                self._pending_depth = None
                self._warn_once("camera_tf", f"dropping frames: no transform {c.map_frame} -> camera ({err})")
            return
        self._pending_depth = None
        self._process(depth, rgb, camera)

    # -- one frame -----------------------------------------------------------------------------

    def _process(self, depth_msg: Any, rgb_msg: Any, camera: Transform) -> None:
        assert self._intrinsics is not None  # on_retry waits for camera_info
        started, started_cpu = time.perf_counter(), time.thread_time()
        stamp = messages.stamp_ns_of(depth_msg)
        c = self.config
        links = {}
        for frame in [c.base_frame, *self.perception.robot.frames]:
            try:
                links["base_link" if frame == c.base_frame else frame] = transform_from_msg(
                    self.lookup_transform(c.map_frame, frame, stamp)
                )
            except TransformError:
                self._warn_once(f"link:{frame}", f"robot frame {frame} not in TF: its points are not masked")
        depth = image_from_msg(depth_msg)
        rgb = image_from_msg(rgb_msg) if rgb_msg is not None and c.colour_weight > 0 else None
        if rgb is not None and rgb.shape[:2] != depth.shape:
            rgb = None
        result = self.perception.frame(depth, rgb, self._intrinsics, camera, links, stamp * 1e-9)
        self._publish(result.estimates, depth_msg.header.stamp, stamp * 1e-9)
        self.frame_seconds.append(time.perf_counter() - started)
        self.frame_cpu_seconds.append(time.thread_time() - started_cpu)

    def _publish(self, estimates: list[ObjectEstimate], stamp: Any, now_s: float) -> None:
        c = self.config
        objects, transforms = [], []
        for e in estimates:
            spec = self._shapes[e.name]
            pose = Transform(e.position, quaternion_from_yaw(e.yaw))
            objects.append(
                {
                    "name": e.name,
                    "shape": spec.shape,
                    "pose": {
                        "position": dict(zip("xyz", pose.translation.tolist(), strict=True)),
                        "orientation": dict(zip("xyzw", pose.rotation.tolist(), strict=True)),
                    },
                    "yaw_observable": not spec.symmetric_about_z,
                    "confidence": e.confidence,
                    "fit_rms": e.rms_m,
                    "points": e.points,
                    "age": max(0.0, now_s - e.last_seen_s),
                }
            )
            transforms.append(transform_stamped_msg(pose, c.map_frame, f"{c.frame_prefix}{e.name}", stamp))
        header = {"stamp": stamp, "frame_id": c.map_frame}
        self.publish(
            "/perception/objects",
            self.msg("galley_msgs/msg/PerceivedObjects", header=header, objects=objects),
        )
        if transforms:
            self.send_transforms(transforms)

    def _warn_once(self, key: str, text: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            self.log.warning(text)
