"""Every conversion between the robot's messages and the policy's numbers, once, for training and acting.

``frames`` (a bag as training frames) and the ``diffusion_policy`` node (acting) both call these
functions, so that training and acting see the same numbers:

* :func:`gripper_opening`: finger positions -> opening 0 (closed) .. 1 (open);
* :func:`policy_state`: the state vector of an observation preset (``OBSERVATIONS``);
* :class:`GoalTracker` and :func:`goal_features`: the running step's target in the robot's frame,
  from the sources the oracle nodes use (the executor's /goal_pose and /arm/goal, the planner's
  /plan, TF);
* :func:`encode_actions` / :func:`decode_action`: Kitchen-R's absolute action points to and from
  the action kind the policy learns (``ACTIONS``).

Observation presets:

* ``sensors`` (the default): what a robot has. The proprioceptive part below, and the step's
  features of :mod:`galley_learning.policy.sensors` (``SENSOR_NAMES``): its kind, a move's goal
  and /plan points, the step object's shape and perception's estimate of it (pose, confidence),
  and the anchor (the object as perceived when the pick began; the spot of the zone a place
  chooses among the perceived objects). No simulator ground truth, no point of the oracle's arm code.
* ``kitchen_r``: Kitchen-R's own (Sec. VI-B): camera images, the step text, and the robot state of
  :func:`robot_state` (the end-effector pose relative to the previous frame, plus galley's absolute
  half). Nothing in it says where a step's target is except the text and the images.
* ``privileged`` (``goal`` before; beyond Kitchen-R; for comparison, as no robot has it): the
  proprioceptive part (the end-effector pose in ``base_link``, the
  gripper opening, the base pose in ``odom``; not its velocity, which the oracle's next command
  nearly equals, so that a policy seeing it learns to copy it) and the step's target in the
  robot's frame (:func:`goal_features`): a move's goal pose relative to ``base_link`` and two
  points of the global planner's /plan (:func:`path_point`: the waypoint the path follower steers
  to, and one about 1 m on); a pick's object, a place's target point, relative to ``base_link`` and
  to the end-effector. The oracle's commands are functions of exactly these (the controller steers
  to /plan's waypoints, not along the line to the goal, which may cross furniture; the
  pick-and-place machine places its phase targets in the object's frame), so the mapping the
  policy learns is a function of what it sees. The zones are not in the robot cameras'
  view and the step text names a zone, not where it is from the robot.
* ``proprio``: ``privileged`` without the target (the step kind stays): an ablation, to show what the
  target adds.

Action kinds: ``absolute`` (Kitchen-R's ``(v, ω, x, y, z, qw, qx, qy, qz, g)``, the end-effector
target in ``base_link``) or ``delta`` (the target relative to the current end-effector pose:
translation in ``base_link`` axes, rotation ``q_ee⁻¹ q_target``). An absolute target almost equals the
absolute state the policy sees, so copying the present scores well offline and does nothing
online; a delta is zero when the arm is to stay, and what it must do otherwise. ``contact``: the
target's translation relative to the arm step's contact point (a pick's grasp point, a place's
release point: :meth:`GoalTracker.contact_point`; the end-effector's where there is none, in a
move) and its rotation absolute. The pick-and-place machine's phase targets are fixed offsets from
that point (above it, at it, lifted from it), so each phase's action is a constant to learn, where
an absolute target must be computed from the object's position and a delta integrates its errors.
``anchor`` (``sensors`` only): the same, relative to the sensors preset's anchor, a point the robot
makes from its own estimates; where the tcp goes relative to it (the grasp's height and side, the
held object's offset) is the policy's to learn.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.spatial.transform import Rotation

from galley_learning.policy.config import ACTIONS, OBSERVATIONS
from galley_learning.policy.goals import CONTACT, GOAL_NAMES, STEP_KINDS
from galley_learning.policy.sensors import ANCHOR, SENSOR_NAMES

__all__ = [
    "ACTIONS",
    "FINGER_OPEN_M",
    "GOAL_NAMES",
    "OBSERVATIONS",
    "SENSOR_NAMES",
    "decode_action",
    "encode_actions",
    "gripper_opening",
    "hold_idle",
    "policy_state",
    "robot_state",
    "state_names",
]

F64 = NDArray[np.float64]

FINGER_OPEN_M = 0.04  # galley_mm's finger travel: 0 (closed) to 0.04 m each
GRIPPER_SPLIT = 0.5  # a learned gripper command at or above this opens the gripper, below closes it

_TEN = ("dx", "dy", "dz", "r11", "r21", "r31", "r12", "r22", "r32", "gripper")
KITCHEN_R_NAMES = tuple(f"rel_{n}" for n in _TEN) + tuple(f"abs_{n}" for n in _TEN)
_PROPRIO = (*(f"ee_{n}" for n in _TEN), "odom_x", "odom_y", "odom_cos", "odom_sin")


def state_names(observation: str) -> tuple[str, ...]:
    """Names of the state vector's values for an observation preset."""
    if observation == "kitchen_r":
        return KITCHEN_R_NAMES
    if observation == "sensors":
        return (*_PROPRIO, *SENSOR_NAMES)
    if observation == "privileged":
        return (*_PROPRIO, *GOAL_NAMES)
    if observation == "proprio":
        return (*_PROPRIO, *GOAL_NAMES[: len(STEP_KINDS)])
    raise ValueError(f"observation {observation!r}: choose {', '.join(OBSERVATIONS)}")


def gripper_opening(fingers: Any) -> F64:
    """Opening 0 (closed) .. 1 (open) of finger positions (..., 2) in metres.

    Missing fingers (NaN) are left out; with none, the gripper reads open (1.0).
    """
    f = np.asarray(fingers, dtype=float)
    finite = np.isfinite(f)
    count = finite.sum(axis=-1)
    mean = np.where(finite, f, 0.0).sum(axis=-1) / np.maximum(count, 1)
    return np.where(count > 0, np.clip(mean / FINGER_OPEN_M, 0.0, 1.0), 1.0)


def _ten(rotation: Rotation, translation: F64, gripper: F64) -> F64:
    """Translation 3, rotation 6 (first two matrix columns), gripper 1 per row."""
    m = rotation.as_matrix()
    return np.concatenate([translation, m[:, :, 0], m[:, :, 1], gripper[:, None]], axis=1)


def _rotation(ee_q: F64) -> Rotation:
    """scipy rotations of w-first quaternions (T, 4)."""
    q = np.asarray(ee_q, dtype=float)
    return Rotation.from_quat(np.concatenate([q[:, 1:], q[:, :1]], axis=1))


def robot_state(ee_p: F64, ee_q: F64, odom: F64, gripper: F64) -> F64:
    """Kitchen-R's state rows (T, 20) of consecutive frames (``KITCHEN_R_NAMES``).

    Ten values relative to the previous frame's end-effector pose in ``odom`` (so base motion
    shows), then the same ten absolute in ``base_link``. The first row's relative part is the
    identity (no earlier frame).

    Args:
        ee_p, ee_q: tcp positions (T, 3) and w-first quaternions (T, 4) in base_link.
        odom: (T, >= 3) base x, y, yaw in odom.
        gripper: (T,) opening, 0 closed to 1 open.
    """
    odom = np.asarray(odom, dtype=float)
    base_r = Rotation.from_euler("z", odom[:, 2:3])
    base_t = np.concatenate([odom[:, :2], np.zeros((len(odom), 1))], axis=1)
    ee_r = _rotation(ee_q)
    world_r = base_r * ee_r
    world_t = base_t + base_r.apply(ee_p)
    before = np.r_[0, : len(odom) - 1]
    prev_r, prev_t = world_r[before], world_t[before]
    rel_t = prev_r.inv().apply(world_t - prev_t)
    gripper = np.asarray(gripper, dtype=float)
    return np.concatenate([_ten(prev_r.inv() * world_r, rel_t, gripper), _ten(ee_r, ee_p, gripper)], axis=1)


def policy_state(observation: str, *, ee_p: F64, ee_q: F64, gripper: F64, odom: F64, goal: F64) -> F64:
    """The state rows (T, D) of consecutive frames for an observation preset (``state_names``).

    Args:
        ee_p, ee_q: tcp positions (T, 3) and w-first quaternions (T, 4) in base_link.
        gripper: (T,) opening.
        odom: (T, 5) base x, y, yaw, v, ω in odom (:func:`galley_runtime.conversions.odom_row`).
        goal: (T, F) the preset's step features: :func:`goal_features` rows (GOAL_NAMES) for
            ``privileged`` and ``proprio``, :class:`~galley_learning.policy.sensors.SensorGoals`
            rows (SENSOR_NAMES) for ``sensors``; unused by ``kitchen_r``.
    """
    if observation == "kitchen_r":
        return robot_state(ee_p, ee_q, odom, gripper)
    state_names(observation)  # the preset is known
    odom = np.asarray(odom, dtype=float)
    gripper = np.asarray(gripper, dtype=float)
    # Not the base's velocity: the oracle's next (v, ω) nearly equals its present one, and a policy
    # that sees it learns to copy it (measured: it spun in place at the data's largest ω).
    base = np.stack([odom[:, 0], odom[:, 1], np.cos(odom[:, 2]), np.sin(odom[:, 2])], axis=1)
    goal = np.asarray(goal, dtype=float)
    target = goal[:, : len(STEP_KINDS)] if observation == "proprio" else goal
    return np.concatenate(
        [_ten(_rotation(ee_q), np.asarray(ee_p, dtype=float), gripper), base, target], axis=1
    )


def _wxyz(rotation: Rotation) -> F64:
    xyzw = rotation.as_quat().reshape(-1, 4)
    wxyz = np.concatenate([xyzw[:, 3:], xyzw[:, :3]], axis=1)
    return wxyz * np.where(wxyz[:, :1] < 0, -1.0, 1.0)  # one sign per orientation


def _anchor(kind: str, ee_p: F64, goal: Any) -> F64:
    """Per row, the point an action's translation is relative to.

    The end-effector's (``delta``), or the contact point (``contact``, goal_features rows) or the
    anchor (``anchor``, SensorGoals rows) where a row has one, and the end-effector's elsewhere.
    """
    if kind == "delta":
        return ee_p
    names, column = (SENSOR_NAMES, ANCHOR) if kind == "anchor" else (GOAL_NAMES, CONTACT)
    if goal is None:
        raise ValueError(f"actions {kind!r} need the step features beside the end-effector pose")
    goal = np.asarray(goal, dtype=float).reshape(len(ee_p), -1)
    if goal.shape[1] != len(names):
        raise ValueError(f"actions {kind!r} need rows of {len(names)} step features, not {goal.shape[1]}")
    has = goal[:, column : column + 1] > 0.5
    # the point in base_link: goal_features' contact_x.. or SensorGoals' anchor_x, _y, _z
    return np.where(has, goal[:, column + 1 : column + 4], ee_p)


def encode_actions(kind: str, action: F64, ee_p: F64, ee_q: F64, goal: Any = None) -> F64:
    """Absolute action points (T, 10) as the action kind ``kind`` (``ACTIONS``) learns them.

    Args:
        action: (T, 10) ``(v, ω, x, y, z, qw, qx, qy, qz, g)``, the target in base_link.
        ee_p, ee_q: (T, 3), (T, 4) the measured end-effector pose at each action's frame.
        goal: (T, F) the step features at each action's frame (``contact``: goal_features rows,
            ``anchor``: SensorGoals rows).
    """
    action = np.asarray(action, dtype=float)
    if kind == "absolute":
        return action.copy()
    if kind not in ACTIONS:
        raise ValueError(f"actions {kind!r}: choose {', '.join(ACTIONS)}")
    ee_p = np.asarray(ee_p, dtype=float)
    out = action.copy()
    out[:, 2:5] = action[:, 2:5] - _anchor(kind, ee_p, goal)
    if kind == "delta":
        out[:, 5:9] = _wxyz(_rotation(ee_q).inv() * _rotation(action[:, 5:9]))
    return out


def decode_action(kind: str, action: Any, ee_p: Any, ee_q: Any, goal: Any = None) -> F64:
    """One learned action (10,) as Kitchen-R's absolute action point, at the measured pose ``ee_p, ee_q``.

    ``goal``: this frame's step features (``contact``, ``anchor`` actions only). The gripper command is
    made open (1) or closed (0), as the oracle's always is: a regression's 0.88 partly closes the
    gripper, the policy then sees a gripper that only a pick closes, and predicts it closing on
    (measured: closed within 4 s of a move's start).
    """
    a = np.asarray(action, dtype=float).reshape(1, -1).copy()
    a[0, 9] = 1.0 if a[0, 9] >= GRIPPER_SPLIT else 0.0
    if kind == "absolute":
        return a[0]
    if kind not in ACTIONS:
        raise ValueError(f"actions {kind!r}: choose {', '.join(ACTIONS)}")
    ee_p = np.asarray(ee_p, dtype=float).reshape(1, 3)
    a[:, 2:5] = _anchor(kind, ee_p, goal) + a[:, 2:5]
    if kind == "delta":
        ee_q = np.asarray(ee_q, dtype=float).reshape(1, 4)
        dq = a[:, 5:9] / max(float(np.linalg.norm(a[0, 5:9])), 1e-9)
        a[:, 5:9] = _wxyz(_rotation(ee_q) * _rotation(dq))
    return a[0]


def hold_idle(action: Any, kind: str, start_p: Any, start_q: Any, start_gripper: float) -> F64:
    """A decoded action (10,) with what the oracle never moves in a ``kind`` step held.

    In a move, the arm's target and the gripper stay where they were at the step's start
    (``start_p``, ``start_q`` wxyz, ``start_gripper``: the last command, made open or closed); in a pick or
    place, the base stands. In the collected data these hold in every frame: within each move the
    oracle's arm target moves under 0.4 mm and its gripper command not at all (the target lies within
    7.3 mm of the end-effector at the move's start), and (v, ω) are exactly 0 in every pick and
    place frame. A regression's small errors there drive the robot into states the data never hold
    (the arm 0.1 to 0.4 m off its rest, the gripper closed before a pick, the base turning in it).
    """
    a = np.asarray(action, dtype=float).copy()
    if kind == "move":
        a[2:5] = np.asarray(start_p, dtype=float)
        a[5:9] = np.asarray(start_q, dtype=float)
        a[9] = 1.0 if start_gripper >= GRIPPER_SPLIT else 0.0
    elif kind in ("pick", "place"):
        a[0:2] = 0.0
    return a
