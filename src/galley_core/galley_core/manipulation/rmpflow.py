"""RMPflow for the arm: Riemannian motion policies combined in joint space and integrated.

After Cheng et al., "RMPflow" (2018), and Kitchen-R Sec. V-C. Each leaf policy lives on a task
space with a map ``x = phi(q)``, its Jacobian ``J``, a desired acceleration ``a`` and a metric
``M`` (how much that leaf matters, direction by direction):

* end-effector position attractor: ``a = k_p (x* - x) / (|x* - x| + eps) - k_d xd`` (soft-normalised:
  a constant pull far away, a linear spring of stiffness ``k_p / eps`` near the target); metric
  ``m I`` with ``m`` between ``target_metric_min`` and ``target_metric_max`` by a Gaussian of the
  distance, boosted by ``1 + target_boost exp(-d^2 / 2 l^2)`` close to the target;
* orientation by quaternion feedback: ``e = 2 log(q* conj(q))`` (a rotation vector),
  ``a = k_p e - k_d w``, metric ``m (1 + boost exp(-d^2 / 2 l^2))`` with ``d`` the position error,
  so that orientation dominates once the gripper is close;
* obstacle repulsors between each collision sphere and each obstacle (boxes for furniture, balls
  for other objects) on the signed clearance ``x``: ``a = k exp(-x / l) - k_d min(xd, 0) / (x / l_d + 0.1)``,
  metric ``m (1 - x / r)^2`` inside ``r`` (the modulation radius), gated by the approach speed;
* joint-limit barriers of the same form on the distance to each limit (inside a buffer);
* joint-space posture target, damping and inertia (constant metrics), and a joint-velocity cap;

then ``qdd = (sum J^T M J)^-1 sum J^T M (a - J'qd)`` (``J'qd``: the velocity-product term of
each task map, computed exactly), capped in norm, and integrated (semi-implicit Euler) in
substeps of at most ``max_substep_s`` to joint positions and velocities, clipped to the velocity
cap and the joint limits, so the commands never leave the limits.

Kitchen-R drives ALOHA's 8-DoF arm with NVIDIA's RMPflow (Lula); galley_mm's arm has 6 DoF
(waist, shoulder, elbow, forearm_roll, wrist_angle, wrist_rotate). The default gains follow the
shape of NVIDIA's published Franka RMPflow configuration (target 30 / 85 with eps 0.075, here 30 / 45; metric
2500 to 10000 with a x20 boost within 2 cm; orientation 210 / 60; c-space target 100 / 50 with
metric 50; damping 30 with metric 50 and inertia 100; velocity cap 1 rad/s; acceleration norm
50 rad/s^2), retuned for this arm where noted on each parameter.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from galley_core.config import Config, ConfigError, param
from galley_core.geometry import Transform, quaternion_from_yaw
from galley_core.manipulation import _rmp_kernels as K  # noqa: N812
from galley_core.manipulation.kinematics import ArmKinematics
from galley_core.manipulation.poses import matrix_from_quat
from galley_core.scene import Box

__all__ = ["Obstacles", "RmpFlow", "RmpFlowConfig", "RmpState"]

F64 = NDArray[np.float64]


@dataclass(frozen=True)
class RmpFlowConfig(Config):
    """Gains of RMPflow's leaf policies (see the module docstring for the formulas)."""

    target_p_gain: float = param(30.0, "position attractor gain k_p", unit="m/s^2", gt=0.0)
    target_d_gain: float = param(
        45.0,
        "position attractor damping k_d (NVIDIA: 85; about critical for k_p / eps here)",
        unit="1/s",
        ge=0.0,
    )
    target_norm_eps: float = param(
        0.075, "soft normalisation length eps: linear spring within about this distance", unit="m", gt=0.0
    )
    target_metric_min: float = param(2500.0, "position metric far from the target", gt=0.0)
    target_metric_max: float = param(10000.0, "position metric at the target", gt=0.0)
    target_metric_length: float = param(
        0.05, "length scale of the Gaussian blending the position metric from min to max", unit="m", gt=0.0
    )
    target_min_alpha: float = param(0.01, "smallest blend weight of the maximum metric", ge=0.0, le=1.0)
    target_boost: float = param(20.0, "extra factor of the position metric close to the target", ge=0.0)
    target_boost_length: float = param(0.02, "length scale of the position metric boost", unit="m", gt=0.0)
    orientation_p_gain: float = param(210.0, "orientation feedback gain", unit="1/s^2", gt=0.0)
    orientation_d_gain: float = param(60.0, "orientation damping", unit="1/s", ge=0.0)
    orientation_metric: float = param(10.0, "orientation metric far from the position target", gt=0.0)
    orientation_boost: float = param(
        3000.0, "extra factor of the orientation metric close to the position target", ge=0.0
    )
    orientation_boost_length: float = param(0.08, "length scale of the orientation boost", unit="m", gt=0.0)
    collision_repulsion_gain: float = param(
        300.0, "obstacle repulsion at contact (NVIDIA: 800)", unit="m/s^2", ge=0.0
    )
    collision_repulsion_length: float = param(0.02, "decay length of the repulsion", unit="m", gt=0.0)
    collision_damping_gain: float = param(
        50.0, "damping of approach speed towards an obstacle", unit="1/s", ge=0.0
    )
    collision_damping_length: float = param(0.04, "length scale of that damping", unit="m", gt=0.0)
    collision_metric: float = param(
        2000.0, "obstacle metric at contact (NVIDIA: 10000 over 0.5 m; lower over a shorter radius)", ge=0.0
    )
    collision_radius: float = param(
        0.12, "clearance beyond which an obstacle is ignored (metric modulation radius)", unit="m", gt=0.0
    )
    collision_velocity_gate: float = param(
        0.02, "approach speed scale of the logistic gate of the obstacle metric", unit="m/s", gt=0.0
    )
    joint_limit_gain: float = param(20.0, "joint-limit repulsion at the buffer edge", unit="rad/s^2", ge=0.0)
    joint_limit_length: float = param(0.05, "decay length of that repulsion", unit="rad", gt=0.0)
    joint_limit_damping: float = param(20.0, "damping of speed towards a limit", unit="1/s", ge=0.0)
    joint_limit_damping_length: float = param(0.05, "length scale of that damping", unit="rad", gt=0.0)
    joint_limit_metric: float = param(1000.0, "joint-limit metric at the buffer edge", ge=0.0)
    joint_limit_radius: float = param(
        0.15, "distance from the buffer edge where the barrier starts", unit="rad", gt=0.0
    )
    joint_limit_buffer: float = param(0.03, "margin kept inside each joint limit", unit="rad", ge=0.0)
    cspace_p_gain: float = param(100.0, "posture target gain", unit="1/s^2", ge=0.0)
    cspace_d_gain: float = param(50.0, "posture target damping", unit="1/s", ge=0.0)
    cspace_metric: float = param(50.0, "posture target metric", ge=0.0)
    cspace_robust_threshold: float = param(
        0.5, "posture errors are clipped to this size (robust term)", unit="rad", gt=0.0
    )
    damping_gain: float = param(30.0, "joint damping", unit="1/s", ge=0.0)
    damping_metric: float = param(50.0, "joint damping metric", ge=0.0)
    inertia: float = param(100.0, "joint-space inertia (metric with no acceleration of its own)", ge=0.0)
    max_joint_speed: float = param(1.0, "joint velocity cap", unit="rad/s", gt=0.0)
    velocity_cap_region: float = param(0.3, "speeds within this of the cap are braked", unit="rad/s", gt=0.0)
    velocity_cap_gain: float = param(1000.0, "braking gain of the velocity cap", unit="1/s", ge=0.0)
    velocity_cap_metric: float = param(100.0, "metric of the velocity cap at the cap", ge=0.0)
    max_acceleration: float = param(50.0, "cap on the norm of the joint acceleration", unit="rad/s^2", gt=0.0)
    max_substep_s: float = param(
        0.005, "longest integration substep (at most 1/200 s)", unit="s", gt=0.0, le=0.005
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.target_metric_max < self.target_metric_min:
            raise ConfigError(
                "target_metric_max",
                self.target_metric_max,
                f">= target_metric_min ({self.target_metric_min})",
            )
        if self.velocity_cap_region >= self.max_joint_speed:
            raise ConfigError(
                "velocity_cap_region", self.velocity_cap_region, f"< max_joint_speed ({self.max_joint_speed})"
            )

    def gains(self) -> F64:
        """The gains vector of the compiled kernel."""
        g = np.zeros(K.N_GAINS)
        g[K.G_TARGET_P], g[K.G_TARGET_D], g[K.G_TARGET_EPS] = (
            self.target_p_gain,
            self.target_d_gain,
            self.target_norm_eps,
        )
        g[K.G_TARGET_MMIN], g[K.G_TARGET_MMAX] = self.target_metric_min, self.target_metric_max
        g[K.G_TARGET_MLEN], g[K.G_TARGET_AMIN] = self.target_metric_length, self.target_min_alpha
        g[K.G_TARGET_BOOST], g[K.G_TARGET_BLEN] = self.target_boost, self.target_boost_length
        g[K.G_ORIENT_P], g[K.G_ORIENT_D], g[K.G_ORIENT_M] = (
            self.orientation_p_gain,
            self.orientation_d_gain,
            self.orientation_metric,
        )
        g[K.G_ORIENT_BOOST], g[K.G_ORIENT_BLEN] = self.orientation_boost, self.orientation_boost_length
        g[K.G_COLL_REP], g[K.G_COLL_REPLEN] = self.collision_repulsion_gain, self.collision_repulsion_length
        g[K.G_COLL_DAMP], g[K.G_COLL_DAMPLEN] = self.collision_damping_gain, self.collision_damping_length
        g[K.G_COLL_M], g[K.G_COLL_RADIUS] = self.collision_metric, self.collision_radius
        g[K.G_COLL_VGATE] = self.collision_velocity_gate
        g[K.G_JL_REP], g[K.G_JL_REPLEN] = self.joint_limit_gain, self.joint_limit_length
        g[K.G_JL_DAMP], g[K.G_JL_DAMPLEN] = self.joint_limit_damping, self.joint_limit_damping_length
        g[K.G_JL_M], g[K.G_JL_RADIUS], g[K.G_JL_BUFFER] = (
            self.joint_limit_metric,
            self.joint_limit_radius,
            self.joint_limit_buffer,
        )
        g[K.G_CS_P], g[K.G_CS_D], g[K.G_CS_M], g[K.G_CS_THRESH] = (
            self.cspace_p_gain,
            self.cspace_d_gain,
            self.cspace_metric,
            self.cspace_robust_threshold,
        )
        g[K.G_DAMP_D], g[K.G_DAMP_M], g[K.G_INERTIA] = self.damping_gain, self.damping_metric, self.inertia
        g[K.G_VMAX], g[K.G_VREGION] = self.max_joint_speed, self.velocity_cap_region
        g[K.G_VGAIN], g[K.G_VMETRIC] = self.velocity_cap_gain, self.velocity_cap_metric
        g[K.G_AMAX] = self.max_acceleration
        return g


@dataclass(frozen=True)
class Obstacles:
    """What the arm's spheres keep away from, in the arm's root frame (base_link), metres.

    Attributes:
        box_centers: (B, 3) box centres.
        box_rotations: (B, 3, 3) box axes (columns) in the root frame.
        box_half_sizes: (B, 3) half extents.
        ball_centers: (O, 3) centres of spheres (other objects).
        ball_radii: (O,) radii.
    """

    box_centers: F64 = field(default_factory=lambda: np.zeros((0, 3)))
    box_rotations: F64 = field(default_factory=lambda: np.zeros((0, 3, 3)))
    box_half_sizes: F64 = field(default_factory=lambda: np.zeros((0, 3)))
    ball_centers: F64 = field(default_factory=lambda: np.zeros((0, 3)))
    ball_radii: F64 = field(default_factory=lambda: np.zeros(0))

    def __post_init__(self) -> None:
        shapes = {
            "box_centers": (np.asarray(self.box_centers, dtype=float).reshape(-1, 3), None),
            "box_rotations": (np.asarray(self.box_rotations, dtype=float).reshape(-1, 3, 3), None),
            "box_half_sizes": (np.asarray(self.box_half_sizes, dtype=float).reshape(-1, 3), None),
            "ball_centers": (np.asarray(self.ball_centers, dtype=float).reshape(-1, 3), None),
            "ball_radii": (np.asarray(self.ball_radii, dtype=float).reshape(-1), None),
        }
        for name, (arr, _) in shapes.items():
            if not np.all(np.isfinite(arr)):
                raise ValueError(f"obstacles: {name} has a non-finite value")
            object.__setattr__(self, name, np.ascontiguousarray(arr))
        if not len(self.box_centers) == len(self.box_rotations) == len(self.box_half_sizes):
            raise ValueError("obstacles: box_centers, box_rotations and box_half_sizes differ in length")
        if len(self.ball_centers) != len(self.ball_radii):
            raise ValueError("obstacles: ball_centers and ball_radii differ in length")

    @staticmethod
    def from_scene(
        boxes: Sequence[Box],
        root_from_map: Transform,
        balls: Sequence[tuple[ArrayLike, float]] = (),
        *,
        near: ArrayLike | None = None,
        within_m: float = np.inf,
    ) -> Obstacles:
        """Scene boxes (map frame) and balls (root frame: centre, radius) as obstacles in the root frame.

        Args:
            boxes: walls and furniture of a :class:`galley_core.scene.Scene`.
            root_from_map: ``T_root_map``, e.g. the TF transform base_link <- map.
            balls: other objects, already in the root frame.
            near, within_m: keep only boxes whose surface is within ``within_m`` of the point ``near``
                (root frame), e.g. of the shoulder within the arm's reach, to save evaluations.
        """
        centers, rotations, halves = [], [], []
        for box in boxes:
            yaw_rot = Transform(np.asarray(box.center, dtype=float), quaternion_from_yaw(box.yaw))
            t = root_from_map * yaw_rot
            rot = matrix_from_quat(t.rotation)
            half = np.asarray(box.size, dtype=float) / 2.0
            if near is not None:
                local = rot.T @ (np.asarray(near, dtype=float) - t.translation)
                gap = float(np.linalg.norm(np.maximum(np.abs(local) - half, 0.0)))
                if gap > within_m:
                    continue
            centers.append(t.translation)
            rotations.append(rot)
            halves.append(half)
        return Obstacles(
            np.array(centers).reshape(-1, 3),
            np.array(rotations).reshape(-1, 3, 3),
            np.array(halves).reshape(-1, 3),
            np.array([np.asarray(c, dtype=float) for c, _ in balls]).reshape(-1, 3),
            np.array([r for _, r in balls], dtype=float),
        )


@dataclass
class RmpState:
    """Joint positions (rad) and velocities (rad/s) that RMPflow integrates."""

    q: F64
    qd: F64


class RmpFlow:
    """RMPflow on an arm: evaluate accelerations, integrate to joint commands.

    Args:
        arm: the arm's kinematics (:func:`galley_core.manipulation.kinematics.load_arm`).
        config: leaf gains.
        posture: (n,) joint-space posture target, radians (default: the middle of the limits).
    """

    def __init__(
        self, arm: ArmKinematics, config: RmpFlowConfig | None = None, posture: ArrayLike | None = None
    ):
        self.arm = arm
        self.config = config or RmpFlowConfig()
        self._gains = self.config.gains()
        mid = (arm.lower + arm.upper) / 2.0
        self.posture = np.ascontiguousarray(mid if posture is None else posture, dtype=float)
        if self.posture.shape != (arm.dof,) or not np.all(np.isfinite(self.posture)):
            raise ValueError(f"posture must be {arm.dof} finite joint positions, got {posture!r}")
        self._no_tools = (~arm.sphere_tool).astype(np.uint8)
        self.min_clearance = np.inf

    def _target(self, position: ArrayLike | None, orientation: ArrayLike | None) -> tuple[F64, F64, int]:
        mode = 0
        p, quat = np.zeros(3), np.array([0.0, 0.0, 0.0, 1.0])
        if position is not None:
            p = np.ascontiguousarray(position, dtype=float).reshape(3)
            mode |= K.MODE_POSITION
        if orientation is not None:
            quat = np.ascontiguousarray(orientation, dtype=float).reshape(4)
            quat = quat / np.linalg.norm(quat)
            mode |= K.MODE_ORIENTATION
        if not (np.all(np.isfinite(p)) and np.all(np.isfinite(quat))):
            raise ValueError(f"RMPflow target has a non-finite value: position {p}, orientation {quat}")
        return p, quat, mode

    def _args(self, obstacles: Obstacles | None, tools: bool) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        a, o = self.arm, obstacles or Obstacles()
        active = np.ones(len(a.sphere_radius), dtype=np.uint8) if tools else self._no_tools
        return (
            a.fixed_rotation,
            a.fixed_translation,
            a.axes,
            a.joint_points,
            a.tcp_rotation,
            a.tcp_translation,
            a.sphere_link,
            a.sphere_center,
            a.sphere_radius,
            active,
            a.lower,
            a.upper,
        ), (o.box_centers, o.box_rotations, o.box_half_sizes, o.ball_centers, o.ball_radii)

    def acceleration(
        self,
        q: ArrayLike,
        qd: ArrayLike,
        position: ArrayLike | None = None,
        orientation: ArrayLike | None = None,
        obstacles: Obstacles | None = None,
        *,
        tool_spheres: bool = True,
    ) -> tuple[F64, float]:
        """Joint accelerations (rad/s^2) and the smallest sphere clearance (m; inf without obstacles).

        Args:
            q, qd: joint positions (rad) and velocities (rad/s).
            position: tcp target (3,) in the root frame, metres; None: no position leaf.
            orientation: tcp target orientation, quaternion (x, y, z, w); None: no orientation leaf.
            obstacles: in the root frame.
            tool_spheres: whether the spheres around the fingers avoid obstacles too.
        """
        p, quat, mode = self._target(position, orientation)
        arm_args, obs_args = self._args(obstacles, tool_spheres)
        qdd, clearance = K.rmp_eval(
            self.arm._q(q), self.arm._q(qd), *arm_args, p, quat, mode, self.posture, *obs_args, self._gains
        )
        return qdd, float(clearance)

    def step(
        self,
        state: RmpState,
        duration_s: float,
        position: ArrayLike | None = None,
        orientation: ArrayLike | None = None,
        obstacles: Obstacles | None = None,
        *,
        tool_spheres: bool = True,
    ) -> RmpState:
        """Integrate for ``duration_s`` seconds (substeps of at most ``max_substep_s``) toward the target.

        Returns the new state (positions within the joint limits, speeds within the cap) and
        updates :attr:`min_clearance` with the smallest clearance seen (metres).
        """
        if not duration_s > 0:
            raise ValueError(f"duration_s = {duration_s} must be > 0")
        p, quat, mode = self._target(position, orientation)
        arm_args, obs_args = self._args(obstacles, tool_spheres)
        q, qd, clearance = K.rmp_integrate(
            self.arm._q(state.q),
            self.arm._q(state.qd),
            float(duration_s),
            self.config.max_substep_s,
            *arm_args,
            p,
            quat,
            mode,
            self.posture,
            *obs_args,
            self._gains,
        )
        self.min_clearance = min(self.min_clearance, float(clearance))
        return RmpState(q, qd)
