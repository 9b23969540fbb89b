"""``diffusion_policy``: a trained diffusion policy driving base and arm in place of the oracle nodes.

Replaces the diff-drive controller and the arm controller (Kitchen-R's "policy" evaluation mode
replaces the global planner too; galley keeps it, for the points of /plan in the `sensors` and
`privileged` observations).
Subscribes the base and wrist cameras, /joint_states, /odom and /episode/events (the plan step
now running: the decomposed task text). At ``rate_hz`` (the rate
the policy was trained at) it keeps the last ``obs_horizon`` observations; when its queue of actions
is empty it samples an action chunk (``horizon`` actions) and queues the first ``action_steps``.
Each action is Kitchen-R's action point: (v, ω) go to /cmd_vel; the end-effector pose
(base_link) and gripper opening become /arm/joint_command through the arm's kinematics: RMPflow
(position and orientation leaves, no obstacles) follows the target at ``arm_rate_hz``.

Between steps (no step running) it commands zero velocity and holds the arm. With ``hold_idle``
(default) it also holds what the oracle never moves in a step: the arm and gripper in a move (as
at the move's start), the base in a pick or place (observations.hold_idle). The task executor
judges the steps on ground truth (its ``completion: criteria``); this node reports no status.
An evaluation's teleport of an object into the gripper (/sim/teleport, frame ``gripper/<name>``,
after a failed pick) leaves the gripper closed and the arm tucked under the node: it then holds
the gripper closed, starts its history afresh, and RMPflow restarts from the measured joints once
they show the jump.

The observation is the run's preset (galley_learning.policy.observations): for ``sensors`` the
node also follows the executor's /goal_pose, the planner's /plan and the perception node's
/perception/objects, and looks up ``map -> base_link`` in TF (never an ``object/<name>`` frame of
the simulator); for ``privileged`` it follows /arm/goal too and looks up ``map -> object/<name>``,
as the oracle nodes do. A low-dimensional run (no cameras) subscribes no camera image, though
``sensors`` needs perception, which reads the base camera's depth. Every conversion (state, gripper
opening, delta actions back to targets) is the one training used.
"""

from __future__ import annotations

import contextlib
from collections import deque
from dataclasses import dataclass
from typing import Any

import numpy as np

from galley_core.config import Config, ConfigError, param
from galley_core.manipulation.rmpflow import RmpFlow, RmpState
from galley_core.scene import SceneError
from galley_core.tf_tree import TransformError
from galley_learning.policy.config import TORCH_DEVICES
from galley_learning.policy.frames import ee_pose, goal_tracker, load_robot_arm
from galley_learning.policy.goals import GOAL_NAMES, Planar, goal_features, planar_from_transform, step_kind
from galley_learning.policy.observations import decode_action, gripper_opening, hold_idle, policy_state
from galley_learning.policy.sensors import SENSOR_NAMES, Perceived, SensorGoals, perceived_from_msg
from galley_learning.policy.shipped import resolve_policy
from galley_nodes.nodes.arm_controller import FINGERS
from galley_runtime.config_files import find_scene
from galley_runtime.conversions import (
    arm_target_msg,
    image_from_msg,
    joint_positions_from_msg,
    joint_state_msg,
    odom_row,
)
from galley_runtime.msg_constants import ABORT, EPISODE_DONE, STEP_FAILED, STEP_STARTED, STEP_SUCCEEDED
from galley_runtime.node import Node, Publishes, Subscribes, Timer
from galley_runtime.qos import QoS

#: A measured joint this far from RMPflow's state after a hand-over: the teleport has moved the arm.
_JUMP_RAD = 0.05


@dataclass(frozen=True)
class DiffusionPolicyConfig(Config):
    run: str = param(
        "", "a shipped policy's name (default) or a training run folder (galley train --out RUN)"
    )
    device: str = param("cpu", "torch device: cpu, cuda, cuda:N, auto", pattern=TORCH_DEVICES)
    cpu_threads: int = param(1, "torch threads on a CPU; 0: torch's default", ge=0)
    rate_hz: float = param(10.0, "observation and action rate; the dataset's frame rate", unit="Hz", gt=0.0)
    arm_rate_hz: float = param(100.0, "joint command rate", unit="Hz", gt=0.0)
    action_steps: int = param(0, "actions executed per sampled chunk; 0: the run's setting", ge=0)
    seed: int = param(0, "seed of the diffusion sampler", ge=0)
    posture: tuple[float, ...] = param(
        (0.0, -0.6, 1.6, 0.0, 0.57, 0.0), "RMPflow's joint-space posture target", unit="rad"
    )
    hold_idle: bool = param(
        True,
        "hold what the oracle never moves in a step: in a move the arm and gripper as at its start, in "
        "a pick or place the base (observations.hold_idle); false: every action dimension as learned",
    )
    scene: str = param("kitchen", "scene name (config/scenes/<name>.yaml) or path: the objects' grasps")
    map_frame: str = param("map", "the frame of the executor's goals and the objects' TF frames")
    base_frame: str = param("base_link", "the robot's base frame")


class DiffusionPolicyNode(Node):
    name = "diffusion_policy"
    Config = DiffusionPolicyConfig
    uses_tf = True  # map -> base_link (and map -> object/<name> for the privileged observation)
    subscribes = (
        Subscribes("camera/base/image_raw", "sensor_msgs/msg/Image", "on_base_image", QoS(depth=2)),
        Subscribes("camera/wrist/image_raw", "sensor_msgs/msg/Image", "on_wrist_image", QoS(depth=2)),
        Subscribes("joint_states", "sensor_msgs/msg/JointState", "on_joint_states", QoS(depth=5)),
        Subscribes("odom", "nav_msgs/msg/Odometry", "on_odom", QoS(depth=5)),
        Subscribes("episode/events", "galley_msgs/msg/EpisodeEvent", "on_episode_event", QoS(depth=100)),
        Subscribes("goal_pose", "geometry_msgs/msg/PoseStamped", "on_goal_pose", QoS(depth=5)),
        Subscribes("plan", "nav_msgs/msg/Path", "on_plan", QoS(depth=5)),
        Subscribes("arm/goal", "galley_msgs/msg/ArmGoal", "on_arm_goal", QoS(depth=5)),
        Subscribes("perception/objects", "galley_msgs/msg/PerceivedObjects", "on_perceived", QoS(depth=2)),
        Subscribes("sim/teleport", "geometry_msgs/msg/PoseStamped", "on_teleport", QoS(depth=5)),
    )
    publishes = (
        Publishes("cmd_vel", "geometry_msgs/msg/Twist"),
        Publishes("arm/joint_command", "sensor_msgs/msg/JointState"),
        Publishes("arm/target", "geometry_msgs/msg/PoseStamped", QoS.latched()),  # as arm_controller's
    )
    timers = (
        Timer("on_frame", period_s=lambda c: 1.0 / c.rate_hz),
        Timer("on_arm", period_s=lambda c: 1.0 / c.arm_rate_hz),
    )

    def __init__(self, host: Any, config: DiffusionPolicyConfig) -> None:
        super().__init__(host, config)
        from galley_learning.policy.runtime import PolicyRunner, RunMismatchError  # noqa: PLC0415 (deferred: torch)

        if not config.run:
            raise ConfigError("run", config.run, "a shipped policy's name or a training run folder")
        try:
            self.policy = PolicyRunner(
                resolve_policy(config.run), device=config.device, seed=config.seed, threads=config.cpu_threads
            )
        except FileNotFoundError as err:
            raise ConfigError(
                "run", config.run, f"a shipped policy or a run folder with policy.pt ({err})"
            ) from None
        except RunMismatchError as err:
            raise ConfigError("run", config.run, str(err)) from None
        except ValueError as err:
            raise ConfigError("device", config.device, str(err)) from None
        self.arm = load_robot_arm()
        self.rmp = RmpFlow(self.arm, posture=config.posture)
        history = self.policy.config.obs_horizon
        self.frames: deque[dict[str, Any]] = deque(maxlen=history + 1)  # one more: relative state
        self.queue: deque[np.ndarray[Any, Any]] = deque()
        self.images: dict[str, Any] = {}
        self.joints: Any = None
        self.odom: Any = None
        self.step_text = ""
        self.gripper_command: float | None = None  # the last action's
        # ee_p, ee_q and gripper at the step's first action: what hold_idle keeps in a move.
        self.step_start: tuple[Any, Any, float] | None = None
        try:
            self.goals = goal_tracker(config.scene, self.arm)
            sensing = self.policy.config.observation == "sensors"
            self.sensors = SensorGoals(find_scene(config.scene)) if sensing else None
        except SceneError as err:
            raise ConfigError("scene", config.scene, str(err)) from None
        self.perceived: dict[str, Perceived] = {}  # perception's latest estimates (sensors)
        self.target: np.ndarray[Any, Any] | None = None  # x y z qw qx qy qz gripper, base_link
        self.rmp_state: RmpState | None = None
        self.handed_over = False  # an object teleported into the gripper; the arm's jump not yet seen
        self.chunks = 0

    # -- inputs ----------------------------------------------------------------------------------

    def on_base_image(self, msg: Any) -> None:
        self.images["base"] = msg

    def on_wrist_image(self, msg: Any) -> None:
        self.images["wrist"] = msg

    def on_joint_states(self, msg: Any) -> None:
        self.joints = msg

    def on_odom(self, msg: Any) -> None:
        self.odom = msg

    def on_goal_pose(self, msg: Any) -> None:
        self.goals.on_goal_pose(msg)
        if self.sensors is not None:
            self.sensors.on_goal_pose(msg)
        self._refresh_goal()

    def on_plan(self, msg: Any) -> None:
        self.goals.on_plan(msg)
        if self.sensors is not None:
            self.sensors.on_plan(msg)
        self._refresh_goal()

    def on_perceived(self, msg: Any) -> None:
        self.perceived = perceived_from_msg(msg)
        self._refresh_goal()

    def on_arm_goal(self, msg: Any) -> None:
        self.goals.on_arm_goal(msg)
        self._refresh_goal()

    def _refresh_goal(self) -> None:
        """The frame observed at this instant sees what arrived at it too, as a bag's sample does.

        A bag's frame holds every message stamped at or before its tick; a message stamped with
        the tick but delivered after this node's timer fired would otherwise be missing here.
        """
        if self.frames and self.frames[-1]["t_ns"] == self.now_ns():
            self.frames[-1]["goal"] = self._goal(self.frames[-1]["ee_p"])

    def on_episode_event(self, msg: Any) -> None:
        self.step_start = None
        if msg.kind == STEP_STARTED:
            self.step_text = str(msg.step)
            self.queue.clear()  # a new step: plan afresh
        elif msg.kind in (STEP_SUCCEEDED, STEP_FAILED, EPISODE_DONE, ABORT):
            self.step_text = ""
            self.queue.clear()
            self.handed_over = False  # a step ran since: any jump of the arm has been seen
        self._refresh_goal()

    def on_teleport(self, msg: Any) -> None:
        """An object teleported into the gripper: the gripper closed on it, the arm tucked."""
        if msg.header.frame_id.startswith("gripper/"):
            self.gripper_command = 0.0
            self.target = None  # no command from before the jump (on_arm would swing the arm back)
            self.joints = self.rmp_state = None  # restart from joint states sent after the teleport
            self.frames.clear()  # the arm jumps: no relative state across it
            self.queue.clear()
            self.step_start = None
            self.handed_over = True

    def _follow_hand_over(self, q: np.ndarray[Any, Any]) -> None:
        """Restart RMPflow from the measured joints once a hand-over's jump of the arm shows in them.

        Joint states sent before the teleport but received after it (ROS 2 delivers topics
        independently) would otherwise leave RMPflow where the pick left the arm.
        """
        state = self.rmp_state
        if self.handed_over and state is not None and float(np.max(np.abs(q - state.q))) > _JUMP_RAD:
            self.rmp_state = RmpState(q.copy(), np.zeros_like(q))
            self.frames.clear()
            self.step_start = None
            self.handed_over = False

    # -- policy ------------------------------------------------------------------------------------

    def _observe(self) -> dict[str, Any] | None:
        """This instant's observation, or None while a stream is still silent."""
        cameras = self.policy.config.cameras
        if self.joints is None or self.odom is None or any(c not in self.images for c in cameras):
            return None
        q, missing = joint_positions_from_msg(self.joints, self.arm.joint_names)
        fingers, _ = joint_positions_from_msg(self.joints, FINGERS)
        if missing or not np.all(np.isfinite(q)):
            return None
        p, quat = ee_pose(self.arm, np.asarray(q, dtype=float)[None])
        return {
            "t_ns": self.now_ns(),
            "q": np.asarray(q, dtype=float),
            "ee_p": p[0],
            "ee_q": quat[0],
            "odom": odom_row(self.odom),
            "gripper": float(gripper_opening(np.asarray(fingers, dtype=float))),
            "goal": self._goal(p[0]),
            "images": {c: image_from_msg(self.images[c]) for c in cameras},
        }

    def _goal(self, ee_p: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        """The preset's step features (zeros while TF has no base pose yet)."""
        c = self.config
        try:
            base = planar_from_transform(self.lookup_transform(c.map_frame, c.base_frame))
        except TransformError:
            return np.zeros(len(SENSOR_NAMES if self.sensors is not None else GOAL_NAMES))
        if self.sensors is not None:
            return self.sensors.features(self.step_text, base, self.perceived, ee_p)
        objects: dict[str, Planar] = {}
        name = self.goals.goal.object_name
        if name:
            with contextlib.suppress(TransformError):
                objects[name] = planar_from_transform(self.lookup_transform(c.map_frame, f"object/{name}"))
        return goal_features(step_kind(self.step_text), base, self.goals, objects, ee_p)

    def on_frame(self) -> None:
        frame = self._observe()
        if frame is None:
            return
        self._follow_hand_over(frame["q"])
        self.frames.append(frame)
        if self.rmp_state is None:
            self.rmp_state = RmpState(frame["q"].copy(), np.zeros_like(frame["q"]))
        if not self.step_text:
            if self.target is not None:
                self.publish("arm/target", arm_target_msg(None, None, "", frame["t_ns"]))
            self.target = None
            self.publish("cmd_vel", self.msg("geometry_msgs/msg/Twist"))
            return
        if not self.queue:
            history = list(self.frames)
            while len(history) < self.frames.maxlen:  # the first frames: repeat the oldest
                history.insert(0, history[0])
            state = policy_state(
                self.policy.config.observation,
                ee_p=np.stack([f["ee_p"] for f in history]),
                ee_q=np.stack([f["ee_q"] for f in history]),
                gripper=np.array([f["gripper"] for f in history]),
                odom=np.stack([f["odom"] for f in history]),
                goal=np.stack([f["goal"] for f in history]),
            )[1:]
            images = {c: np.stack([f["images"][c] for f in history[1:]]) for c in self.policy.config.cameras}
            chunk = self.policy.act(images, state, self.step_text)
            steps = self.config.action_steps or self.policy.config.action_steps
            self.queue.extend(chunk[:steps])
            self.chunks += 1
        action = decode_action(
            self.policy.config.actions, self.queue.popleft(), frame["ee_p"], frame["ee_q"], frame["goal"]
        )
        if self.config.hold_idle:
            if self.step_start is None:  # the step's first frame: what a move holds
                # The gripper as last commanded: its opening around a held bowl can read open.
                grip = frame["gripper"] if self.gripper_command is None else self.gripper_command
                self.step_start = (frame["ee_p"].copy(), frame["ee_q"].copy(), grip)
            action = hold_idle(action, step_kind(self.step_text), *self.step_start)
        self.gripper_command = float(action[9])
        v, w = float(action[0]), float(action[1])
        self.publish("cmd_vel", self.msg("geometry_msgs/msg/Twist", linear={"x": v}, angular={"z": w}))
        self.target = np.asarray(action[2:], dtype=float)
        qw, qx, qy, qz = self.target[3:7]  # as the arm controller's: where the tcp is heading
        heading = arm_target_msg(self.target[:3], (qx, qy, qz, qw), self.config.base_frame, frame["t_ns"])
        self.publish("arm/target", heading)

    def on_arm(self) -> None:
        target, state = self.target, self.rmp_state
        if target is None or state is None or not np.all(np.isfinite(target)):
            return
        qw, qx, qy, qz = target[3:7]
        self.rmp_state = self.rmp.step(
            state, 1.0 / self.config.arm_rate_hz, position=target[:3], orientation=(qx, qy, qz, qw)
        )
        gripper = float(np.clip(target[7], 0.0, 1.0))
        self.publish(
            "arm/joint_command",
            joint_state_msg(
                [*self.arm.joint_names, "gripper"],
                [*self.rmp_state.q, gripper],
                [*self.rmp_state.qd, 0.0],
                self.now_ns(),
            ),
        )
