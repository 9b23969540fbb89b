"""Conversions between galley_core types and ROS messages: the one place nodes translate.

Works with the message classes of either host (see :mod:`galley_runtime.messages`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from galley_core.geometry import Pose2D, Transform, yaw_from_quaternion
from galley_core.navigation.grid import OccupancyGrid
from galley_core.tf_tree import TransformValues, transform_of_values
from galley_runtime import messages

__all__ = [
    "RGB_ENCODINGS",
    "arm_target_msg",
    "diagnostic_array_msg",
    "image_from_msg",
    "occupancy_grid_from_msg",
    "occupancy_grid_msg",
    "odom_row",
    "odometry_msg",
    "orientation_unset",
    "path_from_msg",
    "path_msg",
    "pose2d_from_pose_msg",
    "pose_msg",
    "transform_from_msg",
    "transform_from_pose_msg",
    "transform_items",
    "transform_stamped_msg",
    "transform_stamped_msg_from_values",
    "transform_stamped_msgs_from_values",
    "transform_values",
    "transform_values_from_msg",
]


#: Colour encodings that :func:`image_from_msg` reads as RGB (alpha dropped, BGR reordered).
RGB_ENCODINGS = ("rgb8", "bgr8", "rgba8", "bgra8")


def transform_stamped_msg(transform: Transform, parent: str, child: str, stamp: int | Any) -> Any:
    """``geometry_msgs/msg/TransformStamped`` of ``T_parent_child``.

    ``stamp`` is integer nanoseconds or a ``builtin_interfaces/msg/Time`` (share one among the
    transforms of a TF message: they are built by the thousand).
    """
    return transform_stamped_msg_from_values(
        transform.translation.tolist(), transform.rotation.tolist(), parent, child, stamp
    )


def transform_stamped_msg_from_values(
    translation: Sequence[float], rotation: Sequence[float], parent: str, child: str, stamp: int | Any
) -> Any:
    """``geometry_msgs/msg/TransformStamped`` of a translation and a unit quaternion as Python floats.

    ``translation`` is (x, y, z) in metres, ``rotation`` (x, y, z, w); see :func:`transform_stamped_msg`.
    """
    return transform_stamped_msgs_from_values([(parent, child, translation, rotation)], stamp)[0]


def transform_items(
    frames: Sequence[tuple[str, str]], values: np.ndarray[Any, Any]
) -> list[tuple[str, str, list[float], list[float]]]:
    """(parent, child, [x, y, z], [qx, qy, qz, qw]) per frame pair and row of an (N, 7) array."""
    return [(p, c, row[:3], row[3:]) for (p, c), row in zip(frames, values.tolist(), strict=True)]


def transform_stamped_msgs_from_values(
    items: Iterable[tuple[str, str, Sequence[float], Sequence[float]]], stamp: int | Any
) -> list[Any]:
    """One TF message's worth of ``TransformStamped``, all with ``stamp``.

    ``items`` are (parent, child, (x, y, z), (qx, qy, qz, qw)) in metres and Python floats.
    """
    if isinstance(stamp, int):
        stamp = messages.time_msg(stamp)
    cls = messages.message_class
    stamped, header = cls("geometry_msgs/msg/TransformStamped"), cls("std_msgs/msg/Header")
    transform, vector = cls("geometry_msgs/msg/Transform"), cls("geometry_msgs/msg/Vector3")
    quaternion = cls("geometry_msgs/msg/Quaternion")
    out = []
    for parent, child, (tx, ty, tz), (qx, qy, qz, qw) in items:
        out.append(
            stamped(
                header=header(stamp=stamp, frame_id=parent),
                child_frame_id=child,
                transform=transform(
                    translation=vector(x=tx, y=ty, z=tz), rotation=quaternion(x=qx, y=qy, z=qz, w=qw)
                ),
            )
        )
    return out


def transform_from_msg(msg: Any) -> Transform:
    """:class:`Transform` of a ``geometry_msgs/msg/Transform`` (or the ``.transform`` of a stamped one).

    Raises:
        ValueError: a non-finite value or a zero quaternion.
    """
    return transform_of_values(transform_values_from_msg(msg))


def transform_values_from_msg(msg: Any) -> TransformValues:
    """:func:`transform_from_msg` as Python floats (what a TF buffer keeps), the quaternion normalised.

    Raises:
        ValueError: a non-finite value or a zero quaternion.
    """
    tf = getattr(msg, "transform", msg)
    t, q = tf.translation, tf.rotation
    return transform_values((t.x, t.y, t.z), (q.x, q.y, q.z, q.w))


def transform_values(translation: Sequence[float], rotation: Sequence[float]) -> TransformValues:
    """A translation (m) and a quaternion (x, y, z, w) as :data:`TransformValues`, the quaternion normalised.

    Raises:
        ValueError: a non-finite value or a zero quaternion.
    """
    (tx, ty, tz), (qx, qy, qz, qw) = translation, rotation
    norm = math.sqrt(qx * qx + qy * qy + qz * qz + qw * qw)
    if not (math.isfinite(tx + ty + tz) and math.isfinite(norm)) or norm < 1e-9:
        raise ValueError(
            f"transform has a non-finite value or a zero quaternion: translation ({tx}, {ty}, {tz}), "
            f"rotation ({qx}, {qy}, {qz}, {qw})"
        )
    return (tx, ty, tz, qx / norm, qy / norm, qz / norm, qw / norm)


def pose_msg(pose: Pose2D) -> Any:
    """``geometry_msgs/msg/Pose`` of a planar pose (z = 0)."""
    qx, qy, qz, qw = pose.quaternion()
    cls = messages.message_class  # several per state message: built directly
    return cls("geometry_msgs/msg/Pose")(
        position=cls("geometry_msgs/msg/Point")(x=pose.x, y=pose.y, z=0.0),
        orientation=cls("geometry_msgs/msg/Quaternion")(x=qx, y=qy, z=qz, w=qw),
    )


def odometry_msg(header: Any, child_frame: str, pose: Pose2D, v: float, w: float) -> Any:
    """``nav_msgs/msg/Odometry`` of a planar pose and forward and turning speeds (m/s, rad/s)."""
    cls = messages.message_class  # 50 Hz: built directly (zero covariances)
    vector = cls("geometry_msgs/msg/Vector3")
    twist = cls("geometry_msgs/msg/Twist")(
        linear=vector(x=v, y=0.0, z=0.0), angular=vector(x=0.0, y=0.0, z=w)
    )
    return cls("nav_msgs/msg/Odometry")(
        header=header,
        child_frame_id=child_frame,
        pose=cls("geometry_msgs/msg/PoseWithCovariance")(pose=pose_msg(pose), covariance=np.zeros(36)),
        twist=cls("geometry_msgs/msg/TwistWithCovariance")(twist=twist, covariance=np.zeros(36)),
    )


def pose2d_from_pose_msg(msg: Any) -> Pose2D:
    """Planar pose (x, y, yaw) of a ``geometry_msgs/msg/Pose``."""
    p, q = msg.position, msg.orientation
    return Transform(np.array([p.x, p.y, p.z]), np.array([q.x, q.y, q.z, q.w])).to_pose2d()


def odom_row(msg: Any) -> np.ndarray[Any, Any]:
    """(x, y, yaw, forward speed, yaw rate) of a ``nav_msgs/msg/Odometry``: m, rad, m/s, rad/s."""
    p, q, twist = msg.pose.pose.position, msg.pose.pose.orientation, msg.twist.twist
    return np.array([p.x, p.y, yaw_from_quaternion((q.x, q.y, q.z, q.w)), twist.linear.x, twist.angular.z])


def occupancy_grid_msg(grid: OccupancyGrid, frame_id: str, stamp_ns: int, data: Any = None) -> Any:
    """``nav_msgs/msg/OccupancyGrid`` of a grid (``data``: other cell values of the same shape)."""
    cells = np.asarray(grid.data if data is None else data, dtype=np.int8)
    stamp = messages.time_msg(stamp_ns)
    return messages.new(
        "nav_msgs/msg/OccupancyGrid",
        header=messages.new("std_msgs/msg/Header", stamp=stamp, frame_id=frame_id),
        info=messages.new(
            "nav_msgs/msg/MapMetaData",
            map_load_time=stamp,
            resolution=float(grid.resolution),
            width=grid.width,
            height=grid.height,
            origin=pose_msg(grid.origin),
        ),
        data=cells.reshape(-1),
    )


def occupancy_grid_from_msg(msg: Any) -> OccupancyGrid:
    """:class:`OccupancyGrid` of a ``nav_msgs/msg/OccupancyGrid``.

    Raises:
        ValueError: the data does not match width x height, or the metadata is not valid.
    """
    info = msg.info
    width, height = int(info.width), int(info.height)
    data = np.asarray(msg.data, dtype=np.int8)
    if data.size != width * height or data.size == 0:
        raise ValueError(f"map has {data.size} cells, but its info says {width} x {height}")
    return OccupancyGrid(
        data.reshape(height, width), float(info.resolution), pose2d_from_pose_msg(info.origin)
    )


def path_msg(points: Any, frame_id: str, stamp_ns: int, goal_yaw: float | None = None) -> Any:
    """``nav_msgs/msg/Path`` through ``(N, 2)`` points (metres); each pose faces the next point.

    The last pose carries ``goal_yaw`` (radians) when given, else the last segment's heading.
    """
    pts = np.asarray(points, dtype=float).reshape(-1, 2)
    yaws = np.zeros(len(pts))
    if len(pts) >= 2:
        d = np.diff(pts, axis=0)
        yaws[:-1] = np.arctan2(d[:, 1], d[:, 0])
        yaws[-1] = yaws[-2]
    if goal_yaw is not None and len(pts):
        yaws[-1] = goal_yaw
    header = messages.new("std_msgs/msg/Header", stamp=messages.time_msg(stamp_ns), frame_id=frame_id)
    poses = [
        messages.new(
            "geometry_msgs/msg/PoseStamped", header=header, pose=pose_msg(Pose2D(float(x), float(y), yaw))
        )
        for (x, y), yaw in zip(pts, yaws.tolist(), strict=True)
    ]
    return messages.new("nav_msgs/msg/Path", header=header, poses=poses)


def path_from_msg(msg: Any) -> tuple[Any, float | None]:
    """``(N, 2)`` points (metres) of a ``nav_msgs/msg/Path`` and the last pose's yaw.

    The yaw is None when the last orientation is not a usable quaternion (e.g. all zeros).
    Non-finite positions are kept, for the caller to reject with a reason.
    """
    pts = np.array([[p.pose.position.x, p.pose.position.y] for p in msg.poses], dtype=float).reshape(-1, 2)
    if not msg.poses:
        return pts, None
    q = msg.poses[-1].pose.orientation
    try:
        yaw = Transform(np.zeros(3), np.array([q.x, q.y, q.z, q.w])).yaw()
    except ValueError:
        return pts, None
    return pts, yaw


def diagnostic_array_msg(entries: Any, stamp_ns: int, prefix: str) -> Any:
    """``diagnostic_msgs/msg/DiagnosticArray`` of :class:`galley_core.monitoring.monitor.DiagnosticEntry` s.

    Each status is named ``<prefix>: <entry name>``; its level is the entry's (OK, WARN, ERROR, STALE).
    """
    status = [
        {
            "level": int(e.level),
            "name": f"{prefix}: {e.name}",
            "message": e.message,
            "hardware_id": prefix,
            "values": [{"key": k, "value": v} for k, v in e.values],
        }
        for e in entries
    ]
    header = messages.new("std_msgs/msg/Header", stamp=messages.time_msg(stamp_ns))
    return messages.new("diagnostic_msgs/msg/DiagnosticArray", header=header, status=status)


def transform_from_pose_msg(msg: Any) -> Transform:
    """:class:`Transform` of a ``geometry_msgs/msg/Pose`` (position and orientation).

    Raises:
        ValueError: a non-finite value or a zero quaternion.
    """
    p, q = msg.position, msg.orientation
    return Transform(np.array([p.x, p.y, p.z]), np.array([q.x, q.y, q.z, q.w]))


def joint_positions_from_msg(msg: Any, names: Any) -> tuple[Any, list[str]]:
    """Positions of the joints ``names`` in a ``sensor_msgs/msg/JointState``, and the names it lacks.

    Missing joints are NaN in the returned array.
    """
    index = {name: i for i, name in enumerate(msg.name)}
    positions = np.asarray(msg.position, dtype=float)
    out = np.full(len(names), np.nan)
    missing = []
    for k, name in enumerate(names):
        i = index.get(name)
        if i is None or i >= len(positions):
            missing.append(name)
        else:
            out[k] = positions[i]
    return out, missing


def joint_state_msg(names: Any, positions: Any, velocities: Any, stamp_ns: int, frame_id: str = "") -> Any:
    """``sensor_msgs/msg/JointState`` with positions (rad or command units) and velocities by name."""
    return messages.new(
        "sensor_msgs/msg/JointState",
        header=messages.new("std_msgs/msg/Header", stamp=messages.time_msg(stamp_ns), frame_id=frame_id),
        name=list(names),
        position=np.asarray(positions, dtype=float),
        velocity=np.asarray(velocities, dtype=float),
        effort=np.zeros(0),
    )


def orientation_unset(pose_stamped: Any) -> bool:
    """Whether a place goal's ``geometry_msgs/PoseStamped`` leaves the yaw open (an all-zero quaternion)."""
    o = pose_stamped.pose.orientation
    return bool(o.x == o.y == o.z == o.w == 0.0)


def arm_target_msg(position: Any, quaternion_xyzw: Any, frame_id: str, stamp_ns: int) -> Any:
    """``geometry_msgs/msg/PoseStamped`` of /arm/target: where the tcp is heading.

    ``position`` None: no target (an empty frame_id; the arm holds or no step runs).
    """
    if position is None:
        position, quaternion_xyzw, frame_id = (0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0), ""
    x, y, z = (float(v) for v in position)
    qx, qy, qz, qw = (float(v) for v in quaternion_xyzw)
    return messages.new(
        "geometry_msgs/msg/PoseStamped",
        header=messages.new("std_msgs/msg/Header", stamp=messages.time_msg(stamp_ns), frame_id=frame_id),
        pose=messages.new(
            "geometry_msgs/msg/Pose",
            position=messages.new("geometry_msgs/msg/Point", x=x, y=y, z=z),
            orientation=messages.new("geometry_msgs/msg/Quaternion", x=qx, y=qy, z=qz, w=qw),
        ),
    )


def image_from_msg(msg: Any) -> np.ndarray[Any, Any]:
    """A sensor_msgs/Image as an RGB (H, W, 3) uint8 array, or (H, W) float32 metres for 32FC1.

    Raises:
        ValueError: an encoding other than :data:`RGB_ENCODINGS` and 32FC1, naming it.
    """
    h, w = int(msg.height), int(msg.width)
    data = np.asarray(msg.data, dtype=np.uint8)
    if msg.encoding == "32FC1":
        return data.view(np.float32).reshape(h, w).copy()
    if msg.encoding not in RGB_ENCODINGS:
        raise ValueError(f"image encoding {msg.encoding!r}; publish {', '.join(RGB_ENCODINGS)} or 32FC1")
    rgb = data.reshape(h, w, -1)[:, :, :3]
    return (rgb[:, :, ::-1] if msg.encoding.startswith("bgr") else rgb).copy()
    rgb = data.reshape(h, w, -1)[:, :, :3]
    return (rgb[:, :, ::-1] if msg.encoding.startswith("bgr") else rgb).copy()
