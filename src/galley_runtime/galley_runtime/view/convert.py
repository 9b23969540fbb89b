"""ROS messages and the scene as Foxglove schemas, JSON-encoded: the live view's one conversion module.

Every channel of the live view carries JSON (``message_encoding="json"``) under the name of a
Foxglove schema (``foxglove.FrameTransforms``, ``foxglove.SceneUpdate``...) or, for galley's and
ROS's own types, under the ROS type name with the message as a dict (field names as in the .msg).
JSON rather than the SDK's protobuf so that the page (plain JavaScript, no library) and any client
decode every channel with ``JSON.parse``; bytes (images, the occupancy grid) travel base64-encoded,
which the schemas say with ``contentEncoding``, as Foxglove's JSON schemas do. Times are the
simulation's clock: ``{"sec", "nsec"}``.

The fast streams (/tf, /odom, /scan, the trajectory) are written as JSON text directly, with
fixed-precision numbers (positions to 0.1 mm, quaternions to 1e-6, ranges to 1 mm): building a
dict and ``json.dumps`` of it spends most of its time printing each float's shortest repr, and
this runs with the GIL, time the simulation's thread waits for. The rest are dicts.
"""

from __future__ import annotations

import base64
import json
import math
from functools import cache
from typing import Any

import numpy as np

from galley_core.scene import Scene

__all__ = [
    "SCHEMAS",
    "compressed_image",
    "frame_transforms",
    "grid",
    "json_schema",
    "laser_scan",
    "pose_in_frame",
    "poses_in_frame",
    "ros_to_dict",
    "scene_update",
    "stamp_ns",
    "xy_pose",
    "xy_poses",
]

_NS = 1_000_000_000

#: Bytes fields per Foxglove schema (base64 in JSON); every other field is a plain JSON value.
_BYTES_FIELDS = {"foxglove.CompressedImage": ("data",), "foxglove.Grid": ("data",)}

#: The Foxglove schemas the view sends (the ROS types travel under their own names).
SCHEMAS = (
    "foxglove.FrameTransforms",
    "foxglove.SceneUpdate",
    "foxglove.CompressedImage",
    "foxglove.LaserScan",
    "foxglove.PoseInFrame",
    "foxglove.PosesInFrame",
    "foxglove.Grid",
)


def json_schema(name: str) -> dict[str, Any]:
    """The JSON schema announced with a channel: an object, with its bytes fields marked base64."""
    props = {f: {"type": "string", "contentEncoding": "base64"} for f in _BYTES_FIELDS.get(name, ())}
    return {"title": name, "type": "object", "properties": props}


def stamp_ns(stamp: Any) -> int:
    """A builtin_interfaces/Time as nanoseconds."""
    return int(stamp.sec) * _NS + int(stamp.nanosec)


def _time(stamp: Any) -> dict[str, int]:
    return {"sec": int(stamp.sec), "nsec": int(stamp.nanosec)}


def _time_ns(ns: int) -> dict[str, int]:
    return {"sec": ns // _NS, "nsec": ns % _NS}


def _vec(v: Any) -> dict[str, float]:
    return {"x": float(v.x), "y": float(v.y), "z": float(v.z)}


def _quat(q: Any) -> dict[str, float]:
    return {"x": float(q.x), "y": float(q.y), "z": float(q.z), "w": float(q.w)}


def _pose(p: Any) -> dict[str, Any]:
    return {"position": _vec(p.position), "orientation": _quat(p.orientation)}


@cache
def _jstr(text: str) -> str:
    """A string as JSON (frame ids repeat: each is escaped once)."""
    return json.dumps(text)


_STAMP = '{"sec":%d,"nsec":%d}'
_TRANSFORM = (
    '{"timestamp":' + _STAMP + ',"parent_frame_id":%s,"child_frame_id":%s,'
    '"translation":{"x":%.4f,"y":%.4f,"z":%.4f},"rotation":{"x":%.6f,"y":%.6f,"z":%.6f,"w":%.6f}}'
)
_POSE = '{"position":{"x":%.4f,"y":%.4f,"z":%.4f},"orientation":{"x":%.6f,"y":%.6f,"z":%.6f,"w":%.6f}}'


def _pose_json(p: Any) -> str:
    q, o = p.position, p.orientation
    return _POSE % (q.x, q.y, q.z, o.x, o.y, o.z, o.w)


def frame_transforms(msg: Any) -> str:
    """tf2_msgs/TFMessage -> foxglove.FrameTransforms (JSON text)."""
    parts = []
    for t in msg.transforms:
        s, v, r = t.header.stamp, t.transform.translation, t.transform.rotation
        ids = (_jstr(t.header.frame_id), _jstr(t.child_frame_id))
        parts.append(_TRANSFORM % (s.sec, s.nanosec, *ids, v.x, v.y, v.z, r.x, r.y, r.z, r.w))
    return '{"transforms":[' + ",".join(parts) + "]}"


@cache
def _ranges_format(n: int) -> str:
    return ",".join(("%.3f",) * n)


def laser_scan(msg: Any) -> str:
    """sensor_msgs/LaserScan -> foxglove.LaserScan (JSON text; in the scan's frame, angles in radians)."""
    ranges = np.asarray(msg.ranges, dtype=float)
    ranges = np.where(np.isfinite(ranges), ranges, 0.0)  # JSON has no inf; 0 is Foxglove's "no return"
    end = msg.angle_min + msg.angle_increment * max(len(ranges) - 1, 0)
    return (
        f'{{"timestamp":{_STAMP % (msg.header.stamp.sec, msg.header.stamp.nanosec)},'
        f'"frame_id":{_jstr(msg.header.frame_id)},'
        '"pose":{"position":{"x":0,"y":0,"z":0},"orientation":{"x":0,"y":0,"z":0,"w":1}},'
        f'"start_angle":{float(msg.angle_min)!r},"end_angle":{float(end)!r},'
        f'"ranges":[{_ranges_format(len(ranges)) % tuple(ranges.tolist())}],"intensities":[]}}'
    )


def compressed_image(msg: Any, quality: int = 70) -> dict[str, Any] | None:
    """sensor_msgs/Image (rgb8, bgr8 or mono8) -> foxglove.CompressedImage (JPEG); None for depth."""
    import cv2  # noqa: PLC0415 (optional: cv2)

    channels = {"rgb8": 3, "bgr8": 3, "mono8": 1}.get(msg.encoding)
    if channels is None:
        return None  # depth (32FC1) is for perception, not for looking at
    pixels = np.asarray(msg.data, dtype=np.uint8).reshape(int(msg.height), int(msg.step))
    pixels = pixels[:, : int(msg.width) * channels].reshape(int(msg.height), int(msg.width), channels)
    if msg.encoding == "rgb8":
        pixels = cv2.cvtColor(pixels, cv2.COLOR_RGB2BGR)
    ok, jpeg = cv2.imencode(".jpg", pixels, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        return None
    return {
        "timestamp": _time(msg.header.stamp),
        "frame_id": msg.header.frame_id,
        "format": "jpeg",
        "data": base64.b64encode(jpeg.tobytes()).decode("ascii"),
    }


def pose_in_frame(msg: Any) -> str:
    """geometry_msgs/PoseStamped or nav_msgs/Odometry -> foxglove.PoseInFrame (JSON text)."""
    pose = msg.pose.pose if hasattr(msg, "child_frame_id") else msg.pose  # Odometry: PoseWithCovariance
    stamp = _STAMP % (msg.header.stamp.sec, msg.header.stamp.nanosec)
    return f'{{"timestamp":{stamp},"frame_id":{_jstr(msg.header.frame_id)},"pose":{_pose_json(pose)}}}'


def poses_in_frame(msg: Any) -> dict[str, Any]:
    """nav_msgs/Path -> foxglove.PosesInFrame (the 3D panel draws it as a line)."""
    return {
        "timestamp": _time(msg.header.stamp),
        "frame_id": msg.header.frame_id,
        "poses": [_pose(p.pose) for p in msg.poses],
    }


def xy_pose(x: float, y: float) -> str:
    """A planar point (metres) as a pose of foxglove.PosesInFrame, JSON text (see :func:`xy_poses`)."""
    return _POSE % (x, y, 0.02, 0.0, 0.0, 0.0, 1.0)


def xy_poses(frame_id: str, time_ns: int, poses: list[str]) -> str:
    """Poses of :func:`xy_pose` -> foxglove.PosesInFrame, JSON text (the executed trajectory).

    The trajectory only grows, so each point is written once and the message is a join.
    """
    stamp = _STAMP % divmod(time_ns, _NS)
    return f'{{"timestamp":{stamp},"frame_id":{_jstr(frame_id)},"poses":[{",".join(poses)}]}}'


def grid(msg: Any) -> dict[str, Any]:
    """nav_msgs/OccupancyGrid -> foxglove.Grid, one uint8 field ``occupancy`` (0..100, 255 unknown)."""
    info = msg.info
    cells = np.asarray(msg.data, dtype=np.int8).astype(np.uint8)  # -1 (unknown) becomes 255
    return {
        "timestamp": _time(msg.header.stamp),
        "frame_id": msg.header.frame_id,
        "pose": _pose(info.origin),
        "column_count": int(info.width),
        "cell_size": {"x": float(info.resolution), "y": float(info.resolution)},
        "row_stride": int(info.width),
        "cell_stride": 1,
        "fields": [{"name": "occupancy", "offset": 0, "type": 1}],  # 1: UINT8
        "data": base64.b64encode(cells.tobytes()).decode("ascii"),
    }


def ros_to_dict(msg: Any) -> Any:
    """Any ROS message as plain JSON values, field names as in its .msg (constants left out)."""
    fields = getattr(msg, "__dataclass_fields__", None)
    if fields is not None:
        return {
            name: ros_to_dict(getattr(msg, name))
            for name in fields
            if not name.isupper() and not name.startswith("__")
        }
    if isinstance(msg, np.ndarray):
        return msg.tolist()
    if isinstance(msg, (list, tuple)):
        return [ros_to_dict(m) for m in msg]
    if isinstance(msg, float) and not math.isfinite(msg):
        return None
    if isinstance(msg, np.generic):
        return msg.item()
    return msg


def _color(rgba: tuple[float, float, float, float], alpha: float | None = None) -> dict[str, float]:
    r, g, b, a = rgba
    return {"r": r, "g": g, "b": b, "a": a if alpha is None else alpha}


def _yaw_pose(x: float, y: float, z: float, yaw: float = 0.0) -> dict[str, Any]:
    orientation = {"x": 0.0, "y": 0.0, "z": math.sin(yaw / 2), "w": math.cos(yaw / 2)}
    return {"position": {"x": x, "y": y, "z": z}, "orientation": orientation}


def _entity(entity_id: str, frame_id: str, time_ns: int, **primitives: list[Any]) -> dict[str, Any]:
    entity = {
        "timestamp": _time_ns(time_ns),
        "frame_id": frame_id,
        "id": entity_id,
        "lifetime": {"sec": 0, "nsec": 0},
        "frame_locked": True,
        "metadata": [],
    }
    for kind in ("arrows", "cubes", "spheres", "cylinders", "lines", "triangles", "texts", "models"):
        entity[kind] = primitives.get(kind, [])
    return entity


def _object_primitives(shape: str, size: tuple[float, ...], rgba: Any) -> dict[str, list[Any]]:
    """One object's primitive, centred on its frame (the simulator's object/<name> TF)."""
    color = _color(rgba)
    origin = _yaw_pose(0.0, 0.0, 0.0)
    if shape == "sphere":
        d = 2 * size[0]
        return {"spheres": [{"pose": origin, "size": {"x": d, "y": d, "z": d}, "color": color}]}
    if shape in ("cylinder", "bowl", "plate"):
        d, h = 2 * size[0], size[1]
        cylinder = {"pose": origin, "size": {"x": d, "y": d, "z": h}, "bottom_scale": 1.0, "top_scale": 1.0}
        return {"cylinders": [cylinder | {"color": color}]}
    x, y, z = [*size, 0.01, 0.01, 0.01][:3]
    return {"cubes": [{"pose": origin, "size": {"x": x, "y": y, "z": z}, "color": color}]}


def scene_update(scene: Scene, time_ns: int = 0) -> dict[str, Any]:
    """The scene as foxglove.SceneUpdate: furniture, walls, zones, objects.

    Furniture and walls are cubes, zones flat cubes on their surfaces, objects their primitive in
    their own ``object/<name>`` frame (which the simulator's TF moves).

    Entity ids say what each is (``box/<name>``, ``zone/<colour>``, ``object/<name>``); the
    metadata's ``kind`` and ``name`` let a client (the page) draw them without parsing ids.
    """
    entities = []
    for box in scene.boxes:
        cube = {
            "pose": _yaw_pose(*box.center, box.yaw),
            "size": dict(zip("xyz", map(float, box.size), strict=True)),
            "color": _color(box.rgba),
        }
        entity = _entity(f"box/{box.name}", "map", time_ns, cubes=[cube])
        entity["metadata"] = [{"key": "kind", "value": "box"}, {"key": "name", "value": box.name}]
        entities.append(entity)
    for zone in scene.zones:
        cube = {
            "pose": _yaw_pose(zone.center[0], zone.center[1], zone.z + 0.002),
            "size": {"x": zone.size[0], "y": zone.size[1], "z": 0.004},
            "color": _color(zone.rgba, 0.8),
        }
        entity = _entity(f"zone/{zone.name}", "map", time_ns, cubes=[cube])
        entity["metadata"] = [{"key": "kind", "value": "zone"}, {"key": "name", "value": zone.name}]
        entities.append(entity)
    for obj in scene.objects:
        entity = _entity(
            f"object/{obj.name}",
            f"object/{obj.name}",
            time_ns,
            **_object_primitives(obj.shape, obj.size, obj.rgba),
        )
        entity["metadata"] = [{"key": "kind", "value": "object"}, {"key": "name", "value": obj.name}]
        entities.append(entity)
    return {"deletions": [], "entities": entities}
