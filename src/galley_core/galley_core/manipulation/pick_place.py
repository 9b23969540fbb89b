"""Kitchen-R's pick-and-place state machine (Sec. V-C): ten phases, raised-cosine blends, RMPflow.

The phases and their targets are laid out by :mod:`galley_core.manipulation.phases`, in the reach
geometry of :mod:`galley_core.manipulation.reach`; this module runs them in time. Between the
previous target and the next, position and orientation follow the raised-cosine blend
``alpha(tau) = (1 - cos(pi tau)) / 2`` over ``tau`` in [0, 1] (slerp for orientation), in a time set by
``cartesian_speed_mps`` and ``angular_speed_rps`` (at least ``min_blend_s``); RMPflow tracks the
moving target. A motion phase ends when the measured tcp is within its tolerance of the target;
it fails as unreachable ``settle_limit_s`` after the blend ends if RMPflow's own plan is short of
the target (joint limits, obstacles), or ``track_limit_s`` later if the plan is there and the
measured arm is not (pushed off by a perturbation spell, lagging its command).

Time: the phases run on the machine's own clock, which advances by what RMPflow integrates (the
time since the last step, at most ``max_step_s``). A controller that stalls (a first-call compile,
a process starved of CPU under ROS 2: its sim time jumps) resumes its motion where it stopped
instead of finding the blend and the settle limit past. Judgements are made on fresh measurements:
the joint state's stamp (``measured_s``) must be later than the moment a judgement fell due (the
settle limit, the end of a hold), the tcp speed is measured between samples by their stamps, and a
sample taken before the phase began does not end it. Late or bunched joint states then delay a
judgement instead of falsifying it.

The fingers close along ``y`` in both directions, so a closing direction and its opposite grip
alike: PICK picks the one nearer the gripper's current heading, to spare the wrist a half turn.
A round object (bowl, plate, cup, apple: ``GraspSpec.symmetric``) is the same turned about its
axis, so its grasp offset turns too: PICK takes a bowl by the point of its rim nearest the
shoulder, and PLACE, unless the goal fixes the final yaw, sets it down turned so that the tcp is
on the arm's side of the target. Taking the far rim cost a rim's diameter of reach, and a place
at the edge of the arm's reach failed for it.

Failure reasons: unreachable (target beyond the arm's reach, or not reached in time), grasp missed
(the fingers closed fully, or the object is not between them after closing), object slipped (it
fell away from the tcp while held), the object ended too far from the place target, or a bad
input (unknown object, no pose, NaN), as text naming the input.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from galley_core.geometry import Transform, quaternion_slerp
from galley_core.manipulation._kinematics_kernels import rotation_error
from galley_core.manipulation.kinematics import ArmKinematics
from galley_core.manipulation.phases import (
    GraspSpec,
    Phase,
    PickPlaceConfig,
    pick_grasp,
    pick_phases,
    place_phases,
    place_tcp,
)
from galley_core.manipulation.poses import (
    matrix_from_quat,
    quat_from_matrix,
    raised_cosine,
    rotz,
    top_down_quaternion,
    upright,
)
from galley_core.manipulation.reach import ArmReach, held_offset, in_gripper
from galley_core.manipulation.rmpflow import Obstacles, RmpFlow, RmpState
from galley_core.manipulation.speed import TcpSpeed
from galley_core.manipulation.verdicts import grasp_missed, short_of_target

__all__ = [
    "ArmCommand",
    "PickPlace",
    "PickPlaceState",
]

F64 = NDArray[np.float64]


class PickPlaceState(enum.IntEnum):
    """What the machine is doing; the values are galley_msgs/ActionStatus's states."""

    IDLE = 0
    ACTIVE = 1
    SUCCEEDED = 2
    FAILED = 3
    CANCELED = 4


@dataclass(frozen=True)
class ArmCommand:
    """Joint commands: positions (rad), velocities (rad/s) and the gripper opening fraction (0..1)."""

    positions: F64
    velocities: F64
    gripper: float


class PickPlace:
    """The ten-phase pick-and-place machine driving RMPflow; see the module docstring.

    Args:
        rmp: RMPflow on the arm (its kinematics give forward kinematics and the reach).
        config: phases, timing and checks.
    """

    def __init__(self, rmp: RmpFlow, config: PickPlaceConfig | None = None) -> None:
        self.rmp = rmp
        self.arm: ArmKinematics = rmp.arm
        self.config = config or PickPlaceConfig()
        self.state = PickPlaceState.IDLE
        self.reason = ""
        self.goal = ""  # "pick" or "place"
        self.object_name = ""
        self.held = ""  # object held after a successful pick
        self._held_offset: F64 = np.zeros(3)  # tcp in the object's upright frame, while held
        self._held_yaw = 0.0  # closing yaw relative to the object's yaw, while held
        self._held_point: F64 = np.zeros(3)  # the tcp in the object's own (tilted) frame, while held
        self._grasp_offset: F64 = np.zeros(3)  # the pick's grasp point in the object frame
        self._phases: list[Phase] = []
        self._index = 0
        self._rmp_state = RmpState(np.zeros(self.arm.dof), np.zeros(self.arm.dof))
        self._last_s = 0.0  # sim time of the last step
        self._clock_s = 0.0  # the machine's clock: sim time less what was not integrated (stalls)
        self._phase_start_s = 0.0  # on the machine's clock
        self._phase_start_sim_s = 0.0  # in sim time, to tell samples of this phase from older ones
        self._due_s: float | None = None  # sim time at which the phase's judgement fell due
        self._from: tuple[F64, F64] = (np.zeros(3), np.array([0.0, 0.0, 0.0, 1.0]))
        self._goal_pose: tuple[F64, F64] | None = None
        self._blend_s = 0.0
        self._anchors: dict[str, tuple[F64, float]] = {}
        self._gripper = 1.0
        self._speed = TcpSpeed(self.config.speed_window_s)
        self.reach = ArmReach.of(self.arm)  # the shoulder, the waist axis, the arm's length

    # -- status ----------------------------------------------------------------------------------

    @property
    def phase(self) -> str:
        """The current phase name while ACTIVE, else an empty string."""
        if self.state != PickPlaceState.ACTIVE or not self._phases:
            return ""
        return self._phases[self._index].name

    @property
    def active(self) -> bool:
        return self.state == PickPlaceState.ACTIVE

    @property
    def target(self) -> tuple[F64, F64] | None:
        """The running phase's tcp goal (position, quaternion x y z w; root frame), None when idle.

        Where the phase ends, not the blended reference RMPflow follows on the way: the intent a
        learned policy can be taught (the joint command one step ahead nearly equals the present).
        """
        if not self.active or self._goal_pose is None:
            return None
        return self._goal_pose[0].copy(), self._goal_pose[1].copy()

    def fail(self, reason: str) -> None:
        """End the goal as FAILED with ``reason`` (e.g. a bad input found by the caller)."""
        self.state = PickPlaceState.FAILED
        self.reason = reason

    def cancel(self, reason: str = "canceled") -> None:
        """End an active goal as CANCELED."""
        if self.active:
            self.state = PickPlaceState.CANCELED
            self.reason = reason

    # -- goals -----------------------------------------------------------------------------------

    def start_pick(
        self, name: str, grasp: GraspSpec, object_pose: Transform, joints: ArrayLike, now_s: float
    ) -> None:
        """Start picking object ``name`` at ``object_pose`` (arm root frame), the arm at ``joints`` (rad)."""
        c = self.config
        self._begin("pick", name, joints, now_s)
        position, yaw = upright(object_pose)
        point, offset, closing = pick_grasp(grasp, position, yaw, self.reach.shoulder)
        above = point + np.array([0.0, 0.0, c.approach_height_m])
        if self._unreachable(above, f"{name}'s grasp point"):
            return
        closing = self.reach.closing_within_wrist(self._rmp_state.q, point, yaw + closing) - yaw
        retreat = self.reach.retreat(c, point, float(position[2]), c.lift_height_m, yaw)
        self._phases = pick_phases(c, offset, closing, retreat)
        self._grasp_offset = offset
        self._anchors = {"object": (position, yaw)}
        self._enter(0, now_s, object_pose)

    def take(self, name: str, grasp: GraspSpec, object_pose: Transform, joints: ArrayLike) -> bool:
        """Hold ``name`` if it sits in the gripper as a grasp leaves it; whether it does.

        An object handed over into the gripper (an evaluation's teleport after a failed pick) is
        then placed as one this machine picked: held where its grasp point is within
        ``grasp_check_distance_m`` of the tcp (root frame: ``object_pose``; ``joints`` measured).
        """
        tcp, tcp_r = self.arm.tcp_pose(np.asarray(joints, dtype=float))
        position, yaw = upright(object_pose)
        if not in_gripper(grasp, tcp, position, yaw, self.config.grasp_check_distance_m):
            return False
        self._hold(name, tcp, tcp_r, object_pose)
        return True

    def _hold(self, name: str, tcp: F64, tcp_r: F64, object_pose: Transform) -> None:
        """Hold ``name``: the tcp in the object's upright frame and in its own, the closing yaw."""
        position, yaw = upright(object_pose)
        self._held_offset, self._held_yaw = held_offset(tcp, tcp_r, position, yaw)
        self._held_point = object_pose.inverse().apply(tcp)
        self.held = name

    def start_place(
        self, name: str, target: Transform, joints: ArrayLike, now_s: float, *, free_yaw: bool = False
    ) -> None:
        """Start placing the held object ``name`` so that its bottom centre ends at ``target`` (root frame).

        The target's yaw is the object's yaw at the end; with ``free_yaw`` (a symmetric object whose
        final yaw nobody asked for) the yaw that puts the tcp nearest the shoulder instead.
        """
        c = self.config
        if self.held != name:
            holding = f"holds {self.held!r}" if self.held else "holds nothing"
            self._begin("place", name, joints, now_s)
            self.fail(f"cannot place {name!r}: the gripper {holding}; pick {name!r} first")
            return
        self._begin("place", name, joints, now_s)
        position, yaw = upright(target)
        tcp_at, yaw = place_tcp(self._held_offset, position, yaw, self.reach.shoulder, free_yaw=free_yaw)
        if self._unreachable(tcp_at + np.array([0.0, 0.0, c.approach_height_m]), "the place target"):
            return
        # the empty gripper leaves as a pick's retreat leaves: at carry height, back towards the
        # shoulder, so that its fingers clear the counters the base drives past next
        release = tcp_at + np.array([0.0, 0.0, c.release_height_m])
        retreat = self.reach.retreat(
            c, release, float(position[2]) + c.release_height_m, c.place_retreat_height_m, yaw
        )
        self._phases = place_phases(c, self._held_offset, self._held_yaw, retreat)
        self._anchors = {"target": (position, yaw)}
        self._enter(0, now_s, None)

    def _begin(self, goal: str, name: str, joints: ArrayLike, now_s: float) -> None:
        q = np.asarray(joints, dtype=float).reshape(-1)
        self.goal, self.object_name = goal, name
        self.state, self.reason = PickPlaceState.ACTIVE, ""
        self._phases, self._index = [], 0
        self._goal_pose = None
        self._speed.reset()
        self._last_s = now_s
        self._clock_s = 0.0
        if q.shape != (self.arm.dof,) or not np.all(np.isfinite(q)):
            self.fail(f"the measured arm joint positions {q.tolist()} are not {self.arm.dof} finite numbers")
            return
        self._rmp_state = RmpState(self.arm.clip(q), np.zeros(self.arm.dof))
        self._gripper = 1.0 if goal == "pick" else 0.0

    def _unreachable(self, point: F64, what: str) -> bool:
        if not self.active:
            return True
        reason = self.reach.unreachable(point, what, self.config.reach_margin_m)
        if reason:
            self.fail(reason)
        return bool(reason)

    def _enter(self, index: int, now_s: float, object_pose: Transform | None) -> None:
        self._index = index
        self._phase_start_s = self._clock_s
        self._phase_start_sim_s = now_s
        self._due_s = None
        if self._goal_pose is None:
            p, rot = self.arm.tcp_pose(self._rmp_state.q)
            self._from = (p, quat_from_matrix(rot))
        else:
            self._from = self._goal_pose
        phase = self._phases[index]
        if phase.anchor == "object" and object_pose is not None:  # follow the object if it was nudged
            self._anchors["object"] = upright(object_pose)
        position, yaw = self._anchors[phase.anchor]
        goal = (position + rotz(yaw) @ phase.position, top_down_quaternion(yaw + phase.closing_yaw))
        self._goal_pose = goal
        angle = float(np.linalg.norm(rotation_error(goal[1], matrix_from_quat(self._from[1]))))
        c = self.config
        move = goal[0] - self._from[0]
        distance = float(np.linalg.norm(move))
        if phase.rise_first:  # two moves, each in half the blend
            distance = 2.0 * max(abs(float(move[2])), float(np.linalg.norm(move[:2])))
        self._blend_s = max(c.min_blend_s, distance / c.cartesian_speed_mps, angle / c.angular_speed_rps)

    # -- stepping --------------------------------------------------------------------------------

    def step(  # noqa: PLR0912, PLR0915 - one tick of the phase machine, read in the order it runs
        self,
        now_s: float,
        joints: ArrayLike,
        fingers: ArrayLike,
        object_pose: Transform,
        obstacles: Obstacles | None = None,
        *,
        measured_s: float | None = None,
    ) -> ArmCommand | None:
        """Advance to ``now_s`` and return the joint command, or None when no goal is active.

        Args:
            now_s: time, seconds.
            joints: measured arm joint positions (rad).
            fingers: measured finger positions (m), each 0 (closed) to fully open.
            object_pose: the object's pose in the arm's root frame (base_link), best at ``measured_s``.
            obstacles: furniture and other objects in the root frame.
            measured_s: when ``joints`` and ``fingers`` were measured (the joint state's stamp),
                seconds on the clock of ``now_s``; None: now.
        """
        if not self.active:
            return None
        q = np.asarray(joints, dtype=float).reshape(-1)
        f = np.asarray(fingers, dtype=float).reshape(-1)
        if q.shape != (self.arm.dof,) or not (np.all(np.isfinite(q)) and np.all(np.isfinite(f))):
            self.fail(
                f"NaN or missing values in the measured joint state ({q.tolist()}, fingers {f.tolist()})"
            )
            return None
        c = self.config
        phase = self._phases[self._index]
        dt = min(max(now_s - self._last_s, 0.0), c.max_step_s)
        self._last_s = now_s
        self._clock_s += dt
        measured = now_s if measured_s is None else min(measured_s, now_s)
        t = self._clock_s - self._phase_start_s
        goal_p, goal_q = self._goal_pose if self._goal_pose is not None else self._from
        tau = t / self._blend_s
        alpha = raised_cosine(tau)
        along: float | F64 = alpha
        if phase.rise_first:  # across at the higher height: up, then across; or across, then down
            first, second = raised_cosine(2 * tau), raised_cosine(2 * tau - 1)
            up = goal_p[2] >= self._from[0][2]
            along = np.array([second, second, first] if up else [first, first, second])
        ref_p = self._from[0] + along * (goal_p - self._from[0])
        ref_q = quaternion_slerp(self._from[1], goal_q, alpha)
        if dt > 0:
            self._rmp_state = self.rmp.step(
                self._rmp_state, dt, ref_p, ref_q, obstacles, tool_spheres=phase.tools
            )
        self._gripper = phase.gripper
        command = ArmCommand(self._rmp_state.q.copy(), self._rmp_state.qd.copy(), self._gripper)

        tcp_p, tcp_r = self.arm.tcp_pose(q)
        self._speed.update(tcp_p, measured)
        if phase.check_slip and self._slipped(tcp_p, object_pose):
            return command
        if phase.hold_s > 0:
            if t >= max(phase.hold_s, self._blend_s) and self._judgeable(now_s, measured):
                self._finish_hold(phase, tcp_p, tcp_r, f, object_pose, now_s)
            return command
        if t < self._blend_s or measured < self._phase_start_sim_s:  # nothing measured of this phase yet
            return command
        error_p = float(np.linalg.norm(goal_p - tcp_p))
        error_r = float(np.linalg.norm(rotation_error(goal_q, tcp_r)))
        tol_p, tol_r = (
            (c.position_tolerance_m, c.orientation_tolerance_rad)
            if phase.precise
            else (c.coarse_position_tolerance_m, c.coarse_orientation_tolerance_rad)
        )
        # Stalled short of the target in position or in orientation (a held object that touches down
        # tilts the wrist): measured between samples, so a repeated sample is no stall.
        short = error_p > tol_p or error_r > tol_r
        stalled = short and self._speed.mps < c.stall_speed_mps and t > self._blend_s + 0.3
        if stalled and phase.descent:
            # Stalled on the surface just short of the target: the fingertips (pick) or the held
            # object (place) touch down first.
            tol_p = c.descend_tolerance_m if self.goal == "pick" else c.place_descend_tolerance_m
            tol_r = c.coarse_orientation_tolerance_rad
        elif stalled and phase.stall_ends:
            tol_p = c.retreat_tolerance_m
        at_rest = not phase.settle or self._speed.mps < c.stall_speed_mps
        if error_p <= tol_p and error_r <= tol_r and at_rest:
            self._next(now_s, object_pose)
        elif t > self._blend_s + c.settle_limit_s and self._judgeable(now_s, measured):
            where = f"{self.goal} {self.object_name!r}, phase {phase.name}"
            plan_there = self._plan_reaches(goal_p, goal_q, tol_p, tol_r)
            after = t - self._blend_s
            if reason := short_of_target(
                where, error_p, error_r, after, plan_there, c.settle_limit_s, c.track_limit_s
            ):
                self.fail(reason)
        return command

    def _plan_reaches(self, goal_p: F64, goal_q: F64, tol_p: float, tol_r: float) -> bool:
        """Whether RMPflow's own plan (not the measured arm) has its tcp at the goal, within tolerance."""
        plan_p, plan_r = self.arm.tcp_pose(self._rmp_state.q)
        return bool(
            np.linalg.norm(goal_p - plan_p) <= tol_p
            and np.linalg.norm(rotation_error(goal_q, plan_r)) <= tol_r
        )

    def _judgeable(self, now_s: float, measured_s: float) -> bool:
        """Whether a judgement due now (first asked at ``now_s``) may use a sample measured at ``measured_s``.

        Only one measured since the judgement fell due: a late sample shows the arm as it was.
        """
        if self._due_s is None:
            self._due_s = now_s
        return measured_s >= self._due_s

    def _slipped(self, tcp: F64, object_pose: Transform) -> bool:
        """Whether the point of the object held at the tcp has left it by ``slip_distance_m``.

        The point is taken in the object's own frame, tilt included: a plate held by its rim that
        touches down and turns flat about the fingers has not slipped, though its centre moves by
        the rim's radius times the turn (31 degrees read as 15 mm, upright).
        """
        distance = float(np.linalg.norm(object_pose.apply(self._held_point) - tcp))
        if distance > self.config.slip_distance_m:
            self.held = ""
            self.fail(
                f"object slipped: {self.object_name!r} moved {distance * 1000:.0f} mm away from the gripper "
                f"during {self.phase}"
            )
            return True
        return False

    def _finish_hold(  # noqa: PLR0917
        self, phase: Phase, tcp: F64, tcp_r: F64, fingers: F64, object_pose: Transform, now_s: float
    ) -> None:
        c = self.config
        if phase.name == "grasp":
            position, yaw = upright(object_pose)
            distance = float(np.linalg.norm(position + rotz(yaw) @ self._grasp_offset - tcp))
            reason = grasp_missed(
                self.object_name, fingers, c.finger_closed_m, distance, c.grasp_check_distance_m
            )
            if reason:
                self.fail(reason)
                return
            self._hold(self.object_name, tcp, tcp_r, object_pose)
            self._anchors["grasp"] = (position, yaw)
        elif phase.name == "release":
            self.held = ""
        self._next(now_s, object_pose)

    def _next(self, now_s: float, object_pose: Transform) -> None:
        if self._index + 1 < len(self._phases):
            self._enter(self._index + 1, now_s, object_pose)
            return
        if self.goal == "place":
            position, _ = upright(object_pose)
            target = self._anchors["target"][0]
            distance = float(np.linalg.norm(position - target))
            if distance > self.config.place_tolerance_m:
                self.fail(
                    f"{self.object_name!r} ended {distance * 100:.1f} cm from the place target "
                    f"(more than {self.config.place_tolerance_m * 100:g} cm)"
                )
                return
        self.state = PickPlaceState.SUCCEEDED
