"""Kitchen-R's rule-based differential-drive path follower (Sec. V-B of the paper), ported exactly.

The controller runs at 10 Hz. It tracks the waypoint with index ``k``; each step it expresses the
waypoint in the robot frame, ``p = R(-theta) (w_k - x)``, so that ``d_e = |p|`` and the heading
error ``theta_e = atan2(p_y, p_x)``, which equals the paper's
``atan2(sin(alpha - theta), cos(alpha - theta))`` with ``alpha`` the bearing of the waypoint.

Rules, with this module's parameter names and the paper's defaults:

1. Waypoint switching: while ``d_e < switch_distance_m`` (0.35) and ``k`` is not the last
   waypoint, advance ``k``.
2. ``|theta_e| < heading_tolerance_rad`` (0.1): ``v`` ramps toward ``max_linear_speed_mps`` (0.18)
   at ``linear_acceleration_mps2`` (0.04): ``v = min(v_prev + acc * dt, limit)``; ``w = theta_e``.
3. Bands ``[0.1, 0.38) [0.38, 0.7) [0.7, 1.0) [1.0, 1.25)``: ``w = gain * theta_e`` with gains
   0.9, 0.85, 0.8, 0.75, and ``v`` ramps the same way toward a reduced limit. The paper leaves
   the reduced limits open; galley chooses 0.12, 0.08, 0.05, 0.03 m/s (``band_speed_limits_mps``):
   they fall with the error so that the turning radius ``v / w`` (0.35, 0.13, 0.06, 0.03 m at
   the bands' lower edges) stays below the radius needed to reach a waypoint 0.35 m away at that
   bearing (0.47, 0.27, 0.21, 0.18 m), so the robot never circles a waypoint. Lowering the
   limit takes effect at once (the paper ramps only upwards).
4. ``|theta_e| >= rotate_in_place_rad`` (1.25): ``v = 0``, ``w = clip(theta_e, +-max_angular_speed_rps)``
   (0.7 rad/s). The paper clamps ``w`` only in this rule, so the bands may command up to
   0.75 * 1.25 = 0.94 rad/s; that is kept.
5. Near-goal deceleration: on the last waypoint, when ``d_e < near_goal_distance_m`` (1.5) and
   ``v > near_goal_speed_mps`` (0.3), the local speed limit is multiplied by
   ``near_goal_decay`` (0.9, galley's choice; the paper says only "reduced at each step"). With
   the paper's ``max_v`` of 0.18 m/s this rule never fires; it is kept for faster settings.
6. Arrival: on the last waypoint, when ``d_s <= arrival_distance_m`` (0.09), stop and correct the
   heading toward the goal heading: ``theta_e = atan2(sin(theta_fin - theta), cos(...))``,
   ``v = 0``, ``w = +-final_rotation_speed_rps`` (0.15) until ``|theta_e| < heading_tolerance_rad``,
   then succeed. Without a goal heading the controller succeeds on arrival.

:meth:`DiffDriveController.step` ``(pose, path, dt) -> (v, w, state, reason)`` is deterministic
and does no I/O; the controller keeps only the waypoint index, the last commanded speed, the
local speed limit and its phase.
"""

from __future__ import annotations

import enum
import itertools
import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from galley_core.config import Config, ConfigError, param
from galley_core.geometry import Pose2D

__all__ = [
    "ControllerState",
    "DiffDriveConfig",
    "DiffDriveController",
    "FollowedPath",
    "ProgressChecker",
    "heading_error",
]


class ControllerState(enum.IntEnum):
    """What the controller is doing; the values are galley_msgs/ActionStatus's states."""

    IDLE = 0
    ACTIVE = 1
    SUCCEEDED = 2
    FAILED = 3
    CANCELED = 4


@dataclass(frozen=True)
class DiffDriveConfig(Config):
    """Parameters of :class:`DiffDriveController`, defaults from Kitchen-R (Sec. V-B)."""

    rate_hz: float = param(10.0, "control rate", unit="Hz", gt=0.0)
    switch_distance_m: float = param(0.35, "a waypoint closer than this is reached", unit="m", gt=0.0)
    max_linear_speed_mps: float = param(0.18, "max_v: forward speed limit", unit="m/s", gt=0.0)
    linear_acceleration_mps2: float = param(0.04, "acc_v: forward speed ramp", unit="m/s^2", gt=0.0)
    heading_tolerance_rad: float = param(
        0.1,
        "below this heading error drive straight (w = theta_e); also the final heading tolerance",
        unit="rad",
        gt=0.0,
    )
    band_edges_rad: tuple[float, ...] = param(
        (0.38, 0.7, 1.0), "upper edges of the first three heading-error bands", unit="rad", gt=0.0
    )
    band_gains: tuple[float, ...] = param(
        (0.9, 0.85, 0.8, 0.75), "w = gain * theta_e in each of the four bands", ge=0.0
    )
    band_speed_limits_mps: tuple[float, ...] = param(
        (0.12, 0.08, 0.05, 0.03), "reduced forward speed limit in each band (paper: open)", unit="m/s", ge=0.0
    )
    rotate_in_place_rad: float = param(
        1.25, "at or above this heading error stop and rotate in place", unit="rad", gt=0.0
    )
    max_angular_speed_rps: float = param(
        0.7, "max_w: yaw rate limit when rotating in place", unit="rad/s", gt=0.0
    )
    near_goal_distance_m: float = param(1.5, "near-goal deceleration below this distance", unit="m", ge=0.0)
    near_goal_speed_mps: float = param(
        0.3, "near-goal deceleration above this speed (never with max_v 0.18)", unit="m/s", ge=0.0
    )
    near_goal_decay: float = param(0.9, "factor on the local speed limit per near-goal step", gt=0.0, le=1.0)
    arrival_distance_m: float = param(0.09, "d_s: the goal is reached within this distance", unit="m", gt=0.0)
    final_rotation_speed_rps: float = param(
        0.15, "fixed yaw rate of the final heading correction", unit="rad/s", gt=0.0
    )
    max_waypoints: int = param(100, "a longer path is refused", ge=1)

    def __post_init__(self) -> None:
        super().__post_init__()
        edges = (self.heading_tolerance_rad, *self.band_edges_rad, self.rotate_in_place_rad)
        if len(self.band_edges_rad) != 3 or any(b <= a for a, b in itertools.pairwise(edges)):
            raise ConfigError(
                "band_edges_rad",
                self.band_edges_rad,
                "three increasing values between heading_tolerance_rad and rotate_in_place_rad",
            )
        if len(self.band_gains) != 4:
            raise ConfigError("band_gains", self.band_gains, "four gains, one per band")
        if len(self.band_speed_limits_mps) != 4:
            raise ConfigError(
                "band_speed_limits_mps", self.band_speed_limits_mps, "four limits, one per band"
            )


@dataclass(frozen=True, eq=False)
class FollowedPath:
    """A path for the controller.

    Attributes:
        waypoints: ``(N, 2)`` waypoints (x, y) in metres, in the frame of the robot poses.
        goal_yaw: the final heading in that frame, radians; None skips the final heading correction.
    """

    waypoints: NDArray[np.float64]
    goal_yaw: float | None = None


def heading_error(target: float, theta: float) -> float:
    """The paper's ``atan2(sin(target - theta), cos(target - theta))``, radians in [-pi, pi]."""
    return math.atan2(math.sin(target - theta), math.cos(target - theta))


class DiffDriveController:
    """Kitchen-R's path follower; see the module docstring for the rules.

    Args:
        config: the parameters.
    """

    def __init__(self, config: DiffDriveConfig | None = None) -> None:
        self.config = config or DiffDriveConfig()
        self._path: NDArray[np.float64] = np.zeros((0, 2))
        self._goal_yaw: float | None = None
        self._current: FollowedPath | None = None
        self.index = 0
        self.v = 0.0
        self._local_max_v = self.config.max_linear_speed_mps
        self.state = ControllerState.IDLE
        self.phase = ""
        self.reason = ""

    def _start(self, path: FollowedPath) -> None:
        """Begin following ``path``; a malformed one fails with the reason.

        The last commanded speed is kept, so that a new plan while driving does not jerk the base.
        """
        pts = np.asarray(path.waypoints, dtype=float)
        self._current = path
        self.index = 0
        self._local_max_v = self.config.max_linear_speed_mps
        self.reason = ""
        self.phase = "follow"
        self.state = ControllerState.ACTIVE
        goal_yaw = path.goal_yaw
        if pts.ndim != 2 or pts.shape[1:] != (2,) or len(pts) == 0:
            self._fail(f"path must be a non-empty (N, 2) array of waypoints, got shape {pts.shape}")
        elif not np.all(np.isfinite(pts)):
            self._fail("path has a non-finite waypoint; check the planner's output")
        elif len(pts) > self.config.max_waypoints:
            self._fail(
                f"path has {len(pts)} waypoints, more than max_waypoints = {self.config.max_waypoints}; "
                "resample it (the planner's max_waypoints) or raise max_waypoints"
            )
        elif goal_yaw is not None and not math.isfinite(goal_yaw):
            self._fail(f"goal heading {goal_yaw} is not finite; give a finite yaw or none")
        self._path = pts if self.state == ControllerState.ACTIVE else np.zeros((0, 2))
        self._goal_yaw = goal_yaw

    def cancel(self, reason: str = "canceled") -> None:
        """Stop following: the next step commands zero and reports CANCELED."""
        if self.state == ControllerState.ACTIVE:
            self.state = ControllerState.CANCELED
            self.reason = reason
        self._path = np.zeros((0, 2))
        self.v = 0.0

    def fail(self, reason: str, path: FollowedPath | None = None) -> None:
        """Abort (e.g. stale odometry): zero commands, FAILED with ``reason``.

        ``path``, when it is not the one being followed, is adopted first, so that the failure is
        reported for it.
        """
        if path is not None and path is not self._current:
            self._start(path)
        self._fail(reason)

    @property
    def current(self) -> FollowedPath | None:
        """The path last given to :meth:`step` (None when withdrawn or never given)."""
        return self._current

    def step(
        self, pose: Pose2D, path: FollowedPath | None, dt: float
    ) -> tuple[float, float, ControllerState, str]:
        """One control step.

        Args:
            pose: the robot pose, in the frame of the path.
            path: the path to follow. A path object other than the previous step's starts over
                (waypoint 0); None withdraws the path (CANCELED if one was being followed).
            dt: time since the previous step, seconds (the control period).

        Returns:
            ``(v, w, state, reason)``: forward speed (m/s), yaw rate (rad/s), the state after this
            step and, for FAILED or CANCELED, why. Commands are zero unless ACTIVE.
        """
        if path is None:
            if self._current is not None:
                self.cancel("the path was withdrawn")
                self._current = None
        elif path is not self._current:
            self._start(path)
        if self.state != ControllerState.ACTIVE:
            return 0.0, 0.0, self.state, self.reason
        if not all(math.isfinite(v) for v in (pose.x, pose.y, pose.theta)):
            self._fail(f"robot pose ({pose.x}, {pose.y}, {pose.theta}) is not finite; check odometry")
            return 0.0, 0.0, self.state, self.reason
        if not (math.isfinite(dt) and dt >= 0.0):
            self._fail(f"time step dt = {dt} s must be finite and >= 0")
            return 0.0, 0.0, self.state, self.reason
        c = self.config
        if self.phase == "follow":
            last = len(self._path) - 1
            d_e, theta_e = self._waypoint_error(pose)
            while d_e < c.switch_distance_m and self.index < last:
                self.index += 1
                d_e, theta_e = self._waypoint_error(pose)
            if self.index == last and d_e <= c.arrival_distance_m:
                self.phase = "final_heading"
                self.v = 0.0
            else:
                v, w = self._follow(d_e, theta_e, dt, on_last=self.index == last)
                return v, w, self.state, ""
        # Final heading correction.
        if self._goal_yaw is None:
            return self._succeed()
        err = heading_error(self._goal_yaw, pose.theta)
        if abs(err) < c.heading_tolerance_rad:
            return self._succeed()
        return 0.0, math.copysign(c.final_rotation_speed_rps, err), self.state, ""

    # -- rules ---------------------------------------------------------------------------------

    def _waypoint_error(self, pose: Pose2D) -> tuple[float, float]:
        """``(d_e, theta_e)`` of the current waypoint, computed in the robot frame."""
        dx, dy = self._path[self.index] - (pose.x, pose.y)
        cos_t, sin_t = math.cos(pose.theta), math.sin(pose.theta)
        x_r = cos_t * dx + sin_t * dy
        y_r = -sin_t * dx + cos_t * dy
        return math.hypot(x_r, y_r), math.atan2(y_r, x_r)

    def _follow(self, d_e: float, theta_e: float, dt: float, *, on_last: bool) -> tuple[float, float]:
        c = self.config
        if on_last and d_e < c.near_goal_distance_m and self.v > c.near_goal_speed_mps:
            self._local_max_v *= c.near_goal_decay
        err = abs(theta_e)
        if err >= c.rotate_in_place_rad:
            self.v = 0.0
            w = min(max(theta_e, -c.max_angular_speed_rps), c.max_angular_speed_rps)
            return 0.0, w
        if err < c.heading_tolerance_rad:
            gain, limit = 1.0, self._local_max_v
        else:
            band = sum(1 for edge in c.band_edges_rad if err >= edge)
            gain = c.band_gains[band]
            limit = min(c.band_speed_limits_mps[band], self._local_max_v)
        self.v = min(self.v + c.linear_acceleration_mps2 * dt, limit)
        return self.v, gain * theta_e

    def _succeed(self) -> tuple[float, float, ControllerState, str]:
        self.state = ControllerState.SUCCEEDED
        self.v = 0.0
        return 0.0, 0.0, self.state, ""

    def _fail(self, reason: str) -> None:
        self.state = ControllerState.FAILED
        self.reason = reason
        self.v = 0.0
        self._path = np.zeros((0, 2))

    @property
    def path(self) -> NDArray[np.float64]:
        """The waypoints being followed, ``(N, 2)`` metres (empty when none)."""
        return self._path

    def remaining_length(self, pose: Pose2D) -> float:
        """Path length from ``pose`` through the waypoints not yet reached, metres (0 with none)."""
        rest = self._path[self.index :]
        if len(rest) == 0:
            return 0.0
        along = float(sum(math.dist(a, b) for a, b in itertools.pairwise(rest)))
        return math.hypot(rest[0][0] - pose.x, rest[0][1] - pose.y) + along


@dataclass
class ProgressChecker:
    """Nav2's SimpleProgressChecker: no move of ``distance_m`` nor turn of ``rotation_rad`` in ``timeout_s``.

    A base that stalls so pushes against something (a blocked path).

    :meth:`reset` at each new goal; the first :meth:`stalled` call takes its pose as the reference.
    """

    distance_m: float
    rotation_rad: float
    timeout_s: float
    _reference: tuple[Pose2D, int] | None = None

    def reset(self) -> None:
        """Forget the reference pose (a new goal)."""
        self._reference = None

    def stalled(self, pose: Pose2D, now_ns: int) -> bool:
        """Whether the base has made no progress for longer than ``timeout_s`` up to ``now_ns``."""
        if self._reference is None:
            self._reference = (pose, now_ns)
        ref, since = self._reference
        turned = abs(math.remainder(pose.theta - ref.theta, math.tau))
        if math.hypot(pose.x - ref.x, pose.y - ref.y) >= self.distance_m or turned >= self.rotation_rad:
            self._reference = (pose, now_ns)
            return False
        return (now_ns - since) * 1e-9 > self.timeout_s
