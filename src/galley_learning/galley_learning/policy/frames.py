"""One recorded episode as policy frames: observations and Kitchen-R's action points, at a fixed rate.

Reads a bag through the recorder's dataset reader (:mod:`galley_runtime.recording.dataset`) and
derives, per tick of ``rate_hz``:

* ``action`` (T, 10): Kitchen-R's action point (Sec. IV) ``(v, ω, x, y, z, qw, qx, qy, qz, g)``:
  the commanded base velocities (/cmd_vel), the commanded end-effector pose in ``base_link``
  (forward kinematics of the /arm/joint_command positions; the measured pose while the arm has no
  command) and the commanded gripper opening (0 closed, 1 open).
* ``state`` (T, 20): Kitchen-R's robot state, ten values relative to the previous state's frame
  (end-effector translation 3, rotation 6 as the first two columns of the rotation matrix, gripper
  gap 1; the end-effector pose in ``odom``, so base motion shows), followed by the same ten values
  absolute in ``base_link``. galley adds the absolute half: relative motion alone does not tell the
  policy where the end-effector is, and its actions are absolute targets.
* ``images`` per camera (T, H, W, 3) uint8, resized to ``image_size``; ``step`` (T,) the plan
  step running (the decomposed task text; "" between steps).

With ``observation`` other than ``kitchen_r`` the state is that preset's, and with ``actions``
``delta`` the end-effector part of the action is relative to the measured pose (the conversions
are :mod:`galley_learning.policy.observations`', which the policy node calls too). The
``privileged`` preset's step target comes from the bag's /goal_pose, /plan, /arm/goal and /tf
(the simulator's object frames), the topics the oracle nodes act on; the ``sensors`` preset's from
/goal_pose, /plan, the step's text, /tf's base pose and the perception node's estimates, recorded
online (/perception/objects: ``galley collect`` runs perception, so the estimates are those the
node made at that instant from that frame, with its latency and its gaps, as when acting).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray
from scipy.spatial.transform import Rotation

from galley_core.manipulation.kinematics import ArmKinematics, load_arm
from galley_core.manipulation.phases import grasp_spec, shoulder_point
from galley_description import ROBOT_XML
from galley_learning.policy.config import ARM_TARGETS, CAMERAS
from galley_learning.policy.goals import (
    GOAL_NAMES,
    GoalTracker,
    Planar,
    goal_features,
    planar_from_transform,
    step_kind,
)
from galley_learning.policy.observations import (
    FINGER_OPEN_M,
    KITCHEN_R_NAMES,
    encode_actions,
    gripper_opening,
    policy_state,
    robot_state,
)
from galley_learning.policy.sensors import SENSOR_NAMES, SensorGoals, perceived_from_msg
from galley_runtime.config_files import find_scene

__all__ = [
    "ACTION_NAMES",
    "CAMERAS",
    "FINGER_OPEN_M",
    "STATE_NAMES",
    "EpisodeFrames",
    "NoEstimatesError",
    "ee_pose",
    "episode_frames",
    "goal_rows",
    "goal_tracker",
    "load_robot_arm",
    "resize_images",
    "robot_state",
]

_log = logging.getLogger(__name__)

F64 = NDArray[np.float64]

ACTION_NAMES = ("v", "w", "x", "y", "z", "qw", "qx", "qy", "qz", "gripper")
STATE_NAMES = KITCHEN_R_NAMES  # the kitchen_r preset's (observations.state_names for the others)
GOAL_TOPICS = ("/goal_pose", "/plan", "/arm/goal", "/arm/target", "/tf", "/perception/objects")


class NoEstimatesError(ValueError):
    """A bag with pick or place steps in which perception never reported an object (``sensors``)."""


@dataclass
class EpisodeFrames:
    """One episode's frames; every array has the time axis first (T)."""

    t_s: F64
    images: dict[str, NDArray[np.uint8]]
    state: F64
    action: F64
    step: NDArray[np.str_]
    ee_pose: F64  # (T, 7) measured end-effector x y z qw qx qy qz in base_link
    odom: F64  # (T, 5) x, y, yaw, v, ω
    goal: F64  # (T, len(GOAL_NAMES)) the step's target in the robot's frame (observations.goal_features)
    sensors: F64  # (T, len(SENSOR_NAMES)) the sensors preset's step features; (T, 0) for other presets
    absolute: F64  # (T, 10) Kitchen-R's absolute action points (``action`` is them as ``actions``)

    def __len__(self) -> int:
        return len(self.t_s)


def load_robot_arm() -> ArmKinematics:
    """The arm of galley_sim's robot description, rooted at ``base_link``, to its ``tcp`` site."""
    return load_arm(ROBOT_XML, root_body="base_link", tcp_site="tcp")


def goal_tracker(scene: str = "kitchen", arm: ArmKinematics | None = None) -> GoalTracker:
    """A GoalTracker with the scene's grasps and the arm's shoulder, as the arm controller has them.

    Raises:
        SceneError: no such scene (the message lists those found).
    """
    found = find_scene(scene)
    grasps = {name: grasp_spec(found.object(name)) for name in found.object_names}
    return GoalTracker(grasps, shoulder_point(arm or load_robot_arm()))


def ee_pose(arm: ArmKinematics, q: F64) -> tuple[F64, F64]:
    """Positions (T, 3) and w-first quaternions (T, 4, w >= 0) of the tcp for joint rows q (T, dof)."""
    positions = np.empty((len(q), 3))
    matrices = np.empty((len(q), 3, 3))
    for i, row in enumerate(q):
        positions[i], matrices[i] = arm.tcp_pose(row)
    xyzw = Rotation.from_matrix(matrices).as_quat()
    wxyz = np.concatenate([xyzw[:, 3:], xyzw[:, :3]], axis=1)
    wxyz *= np.where(wxyz[:, :1] < 0, -1.0, 1.0)  # one sign per orientation
    return positions, wxyz


def resize_images(images: NDArray[np.uint8], size: tuple[int, int] | None) -> NDArray[np.uint8]:
    if size is None or images.shape[2:0:-1] == size:
        return images
    return np.stack([cv2.resize(im, size, interpolation=cv2.INTER_AREA) for im in images])


def episode_frames(
    bag: str | Path,
    *,
    rate_hz: float = 10.0,
    image_size: tuple[int, int] | None = (96, 72),
    cameras: Mapping[str, str] = CAMERAS,
    arm: ArmKinematics | None = None,
    observation: str = "kitchen_r",
    actions: str = "absolute",
    scene: str = "kitchen",
    arm_target: str = "phase",
) -> EpisodeFrames:
    """The frames of the bag at ``bag`` (see the module docstring).

    Args:
        rate_hz: frames per second (the cameras' rate, 10 Hz, by default).
        image_size: (width, height) to resize every image to; None keeps the recorded size.
        cameras: camera name -> image topic (none: no images).
        arm: the arm's kinematics (default: galley_description's robot).
        observation: the state's preset (observations.OBSERVATIONS).
        actions: the action kind (observations.ACTIONS).
        scene: the scene the bag was recorded in (its objects' grasps, for the contact point).
        arm_target: the arm's action in a pick or place: ``phase``, the pick-and-place machine's
            phase goal (/arm/target: where the arm is heading), or ``command``, the pose of the
            next joint command (/arm/joint_command: a few millimetres ahead of the present).

    Raises:
        ValueError: the bag lacks a stream the frames need (names the topic).
        FileNotFoundError: no bag at ``bag``.
    """
    from galley_runtime.recording.dataset import DatasetStreams, load_episode  # noqa: PLC0415 (deferred: rosbags)

    if arm_target not in ARM_TARGETS:
        raise ValueError(f"arm_target {arm_target!r}: choose {', '.join(ARM_TARGETS)}")

    streams = DatasetStreams(cameras={f"image/{n}": t for n, t in cameras.items()})
    data = load_episode(bag, rate_hz, streams)
    if not data:
        raise ValueError(f"bag {bag} has no messages")
    arm = arm or load_robot_arm()
    needed = {
        "joint_position": "/joint_states",
        "odom": "/odom",
        **{f"image/{n}": t for n, t in cameras.items()},
    }
    for key, topic in needed.items():
        if not data[f"valid/{key}"].any():
            raise ValueError(f"bag {bag} has no {topic} messages; record it (recorder topics: all)")
    # From the first tick at which every stream needed has spoken.
    start = int(max(np.argmax(data[f"valid/{k}"]) for k in needed))
    data = {k: v[start:] for k, v in data.items()}
    dof = arm.dof
    q = data["joint_position"][:, :dof]
    fingers = data["joint_position"][:, dof : dof + 2]
    gripper = gripper_opening(fingers)
    ee_p, ee_q = ee_pose(arm, q)

    commanded = data["arm_command"][:, :dof]
    have = np.all(np.isfinite(commanded), axis=1)
    target_p, target_q = ee_p.copy(), ee_q.copy()
    if have.any():
        target_p[have], target_q[have] = ee_pose(arm, commanded[have])
    grip_cmd = data["gripper_command"]
    grip_cmd = np.where(np.isfinite(grip_cmd), grip_cmd, gripper)
    cmd = np.where(data["valid/cmd_vel"][:, None], data["cmd_vel"], 0.0)
    absolute = np.concatenate([cmd, target_p, target_q, grip_cmd[:, None]], axis=1)
    steps = data["step"].astype(str)
    sensing = SensorGoals(find_scene(scene)) if observation == "sensors" else None
    goal, phase, sensed = goal_rows(bag, data["t_s"], steps, ee_p, goal_tracker(scene, arm), sensors=sensing)
    if sensing is not None and steps.size and not sensed[:, SENSOR_NAMES.index("seen")].any():
        arm_steps = np.char.startswith(steps, "pick ") | np.char.startswith(steps, "place ")
        if arm_steps.any():
            raise NoEstimatesError(
                f"bag {bag} has no /perception/objects estimate of a step's object (recorded by galley "
                "before 2026-11-28, without the base camera's depth, or perception never saw it); "
                "collect again, or train --observation privileged"
            )
    if arm_target == "phase":
        arm_steps = np.char.startswith(steps, "pick ") | np.char.startswith(steps, "place ")
        if arm_steps.any() and not np.isfinite(phase).any():
            raise ValueError(
                f"bag {bag} has pick or place steps but no /arm/target (recorded by galley after "
                "2026-11-26); collect again, or take the joint commands' poses (--arm-target command)"
            )
        ahead = np.all(np.isfinite(phase), axis=1)
        absolute[ahead, 2:9] = phase[ahead]
    moves = np.char.startswith(steps, "move ")
    if observation != "kitchen_r" and moves.any() and not goal[moves, GOAL_NAMES.index("goal_dist")].any():
        raise ValueError(
            f"bag {bag} has move steps but no /goal_pose; record the oracle with task_executor.move_with: "
            "goal_pose (galley collect's params.yaml sets it)"
        )
    features = sensed if observation == "sensors" else goal
    state = policy_state(observation, ee_p=ee_p, ee_q=ee_q, gripper=gripper, odom=data["odom"], goal=features)

    size = None if image_size is None else (int(image_size[0]), int(image_size[1]))
    images = {n: resize_images(data[f"image/{n}"], size) for n in cameras}
    return EpisodeFrames(
        t_s=data["t_s"],
        images=images,
        state=state,
        action=encode_actions(actions, absolute, ee_p, ee_q, features),
        step=steps,
        ee_pose=np.concatenate([ee_p, ee_q], axis=1),
        odom=data["odom"],
        goal=goal,
        sensors=sensed,
        absolute=absolute,
    )


def goal_rows(
    bag: str | Path,
    t_s: F64,
    steps: NDArray[np.str_],
    ee_p: F64,
    tracker: GoalTracker | None = None,
    *,
    sensors: SensorGoals | None = None,
) -> tuple[F64, F64, F64]:
    """:func:`~galley_learning.policy.goals.goal_features` and /arm/target at the ticks ``t_s`` (s).

    The executor's /goal_pose and /arm/goal, the planner's /plan and the /tf transforms (map -> odom
    -> base_link, map -> object/<name>) are held from their last message at or before each tick, as
    the dataset reader holds every stream; so is the arm controller's /arm/target, whose message
    with an empty frame_id (no goal running) ends it.

    With ``sensors``, the sensors preset's rows too, from the same /goal_pose, /plan and base pose
    and the latest /perception/objects message at each tick.

    Returns:
        The goal rows (T, len(GOAL_NAMES)), the arm targets (T, 7: x y z qw qx qy qz in
        base_link; NaN where none), and the sensors rows (T, len(SENSOR_NAMES); (T, 0) without
        ``sensors``).
    """
    from rosbags.rosbag2 import Reader  # noqa: PLC0415 (deferred: rosbags)

    from galley_runtime.recording.decoding import MessageDecoder  # noqa: PLC0415 (deferred: rosbags)

    tracker = tracker or goal_tracker()
    decoder = MessageDecoder()  # a message that cannot be read is skipped (its stream holds)
    transforms: dict[str, Planar] = {}
    objects: dict[str, Planar] = {}
    ticks = np.round(np.asarray(t_s) * 1e9).astype(np.int64)
    out = np.zeros((len(ticks), len(GOAL_NAMES)))
    sensed = np.zeros((len(ticks), len(SENSOR_NAMES) if sensors is not None else 0))
    perceived: dict[str, Any] = {}
    followers: list[Any] = [tracker] if sensors is None else [tracker, sensors]
    targets = np.full((len(ticks), 7), np.nan)
    target = np.full(7, np.nan)
    i = 0
    # /tf arrives at 50 Hz, each message with every frame (the simulator's one TFMessage a tick):
    # only the last such one before a tick is read (deserialising them all was half a bag's time).
    # Other broadcasters (perception's perceived/<name>, 10 Hz) publish on /tf too: the messages
    # since the last tick are read newest first until one holds the base.
    pending_tf: list[tuple[bytes, str]] = []

    def emit(until: int) -> None:
        nonlocal i
        if pending_tf and i < len(ticks) and ticks[i] < until:
            _read_tf(pending_tf, decoder, objects, transforms)
            pending_tf.clear()
        while i < len(ticks) and ticks[i] < until:
            base = _base_in_map(transforms)
            if base is not None:
                out[i] = goal_features(step_kind(str(steps[i])), base, tracker, objects, ee_p[i])
                if sensors is not None:
                    sensed[i] = sensors.features(str(steps[i]), base, perceived, ee_p[i])
            targets[i] = target
            i += 1

    with Reader(Path(bag)) as reader:
        connections = [c for c in reader.connections if c.topic in GOAL_TOPICS]
        for connection, stamp, raw in reader.messages(connections):
            emit(stamp)
            if connection.topic == "/tf":
                pending_tf.append((raw, connection.msgtype))
                continue
            msg = decoder.decode(connection.topic, raw, connection.msgtype)
            if msg is None:
                continue
            if connection.topic == "/perception/objects":
                perceived = perceived_from_msg(msg)
            elif connection.topic in ("/goal_pose", "/plan"):
                for follower in followers:  # the move's goal and path, for either preset
                    (follower.on_goal_pose if connection.topic == "/goal_pose" else follower.on_plan)(msg)
            elif connection.topic == "/arm/goal":
                tracker.on_arm_goal(msg)
            else:
                target = _target_values(msg)
    emit(np.iinfo(np.int64).max)
    for line in decoder.summary():
        _log.warning("%s: %s", bag, line)
    return out, targets, sensed


def _read_tf(
    pending: list[tuple[bytes, str]], decoder: Any, objects: dict[str, Planar], transforms: dict[str, Planar]
) -> None:
    """Update ``objects`` (object/<name>) and ``transforms`` (odom, base_link) from /tf messages.

    Newest first, down to the first message that holds the base (the simulator's, every frame).
    """
    newer: set[str] = set()  # frames a newer message of this pass has set already
    for raw, msgtype in reversed(pending):
        tf = decoder.decode("/tf", raw, msgtype)
        children = [(str(t.child_frame_id), t) for t in (tf.transforms if tf is not None else ())]
        for child, t in children:
            if child in newer:
                continue
            newer.add(child)
            if child.startswith("object/"):
                objects[child.removeprefix("object/")] = planar_from_transform(t)
            elif child in ("odom", "base_link"):
                transforms[child] = planar_from_transform(t)
        if "base_link" in newer:
            break


def _target_values(msg: Any) -> F64:
    """x y z qw qx qy qz of an /arm/target message (w >= 0, as ee_pose's); NaN for "no target"."""
    if not msg.header.frame_id:
        return np.full(7, np.nan)
    p, q = msg.pose.position, msg.pose.orientation
    sign = -1.0 if q.w < 0 else 1.0
    return np.array([p.x, p.y, p.z, sign * q.w, sign * q.x, sign * q.y, sign * q.z])


def _base_in_map(transforms: Mapping[str, Planar]) -> Planar | None:
    """base_link in map, composed from map -> odom and odom -> base_link (both planar)."""
    odom, base = transforms.get("odom"), transforms.get("base_link")
    if odom is None or base is None:
        return None
    c, s = np.cos(odom[3]), np.sin(odom[3])
    return (
        odom[0] + c * base[0] - s * base[1],
        odom[1] + s * base[0] + c * base[1],
        odom[2] + base[2],
        float(np.arctan2(np.sin(odom[3] + base[3]), np.cos(odom[3] + base[3]))),
    )


def describe(frames: EpisodeFrames) -> dict[str, Any]:
    """Shapes and value ranges, for reports."""
    return {
        "frames": len(frames),
        "seconds": float(frames.t_s[-1] - frames.t_s[0]) if len(frames) else 0.0,
        "images": {n: list(v.shape[1:]) for n, v in frames.images.items()},
        "steps": sorted({s for s in frames.step.tolist() if s}),
    }
