"""``perturber``: noise on the oracle's commands, for demonstrations with recoveries (collect --perturb).

Sits between the oracle's controllers and the simulator: subscribes /cmd_vel and
/arm/joint_command (what the oracle commands, which the recorder records as the actions) and
publishes the commands plus a DART-style offset (galley_core.perturbation: drawn per short spell,
held through it, zero between spells) on /perturbed/cmd_vel and /perturbed/arm/joint_command, which
the simulator then follows (the stack remaps its inputs there when it runs this node). The oracle
acts on the state the noise leads to, so the bag shows how it comes back. ``scale`` sizes the noise
(0 passes every command through unchanged). The gripper is never perturbed, nor /cmd_vel while
the oracle commands no forward speed (turning in place, its final heading correction, stopped):
there it does not correct its position, so noise would only undo what it did. Nor is the arm
perturbed in its contact phases (``quiet_phases``, read from /arm/status): noise at the fingertips
there knocks the object over or closes the fingers beside it, which the demonstrator cannot undo
(with it, 3 of 4 collected plans failed their first pick; with noise in a place's retreat, the
open fingers knocked a just-released apple off its zone in 4 of 24 plans). The arm is perturbed
on its way to the object, lifting it and carrying it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from galley_core.config import Config, param
from galley_core.perturbation import SpellNoise, SpellNoiseConfig
from galley_runtime.conversions import joint_state_msg
from galley_runtime.node import Node, Publishes, Subscribes
from galley_runtime.qos import QoS

ARM_JOINTS = 6  # galley_mm's arm (the gripper is the command's last, named entry)


@dataclass(frozen=True)
class PerturberConfig(Config):
    scale: float = param(0.0, "noise size: multiplies the standard deviations below; 0: none", ge=0.0)
    linear_mps: float = param(0.06, "std of the forward-speed offset at scale 1", unit="m/s", ge=0.0)
    angular_rps: float = param(0.35, "std of the yaw-rate offset at scale 1", unit="rad/s", ge=0.0)
    joint_rad: float = param(0.08, "std of each arm joint's position offset at scale 1", unit="rad", ge=0.0)
    spell_s: float = param(1.0, "how long one spell of noise lasts", unit="s", gt=0.0)
    gap_s: float = param(3.0, "mean time between spells (exponential)", unit="s", gt=0.0)
    seed: int = param(0, "seed of the spells and offsets", ge=0)
    quiet_phases: tuple[str, ...] = param(
        ("pre_grasp", "descend", "grasp", "release", "retreat"),
        "arm phases (/arm/status) without arm noise: the fingers at the object or in contact with it, "
        "the held object set down, the open fingers leaving it",
    )


class PerturberNode(Node):
    name = "perturber"
    Config = PerturberConfig
    subscribes = (
        Subscribes("cmd_vel", "geometry_msgs/msg/Twist", "on_cmd_vel", QoS(depth=5)),
        Subscribes("arm/joint_command", "sensor_msgs/msg/JointState", "on_arm_command", QoS(depth=5)),
        Subscribes("arm/status", "galley_msgs/msg/ActionStatus", "on_arm_status", QoS.latched(10)),
    )
    publishes = (
        Publishes("perturbed/cmd_vel", "geometry_msgs/msg/Twist"),
        Publishes("perturbed/arm/joint_command", "sensor_msgs/msg/JointState"),
    )

    def __init__(self, host: Any, config: PerturberConfig) -> None:
        super().__init__(host, config)
        fields = ("scale", "linear_mps", "angular_rps", "joint_rad", "spell_s", "gap_s", "seed")
        self.noise = SpellNoise(SpellNoiseConfig(**{f: getattr(config, f) for f in fields}), ARM_JOINTS)
        self._arm_phase = ""  # the arm controller's running phase ("" when idle)

    def on_arm_status(self, msg: Any) -> None:
        self._arm_phase = str(msg.phase) if msg.state == msg.ACTIVE else ""

    def on_cmd_vel(self, msg: Any) -> None:
        dv, dw, _ = self.noise.at(self.now_s())
        if msg.linear.x == 0.0:
            # Turning in place (and the final heading correction) or stopped: the oracle does not
            # correct its position there, so noise would only undo the step it has done.
            dv = dw = 0.0
        twist = {"linear": {"x": msg.linear.x + dv}, "angular": {"z": msg.angular.z + dw}}
        self.publish("perturbed/cmd_vel", self.msg("geometry_msgs/msg/Twist", **twist))

    def on_arm_command(self, msg: Any) -> None:
        _, _, dq = self.noise.at(self.now_s())
        if self._arm_phase in self.config.quiet_phases:
            dq = np.zeros_like(dq)
        names = [str(n) for n in msg.name]
        position = np.asarray(msg.position, dtype=float).copy()
        arm = [i for i, n in enumerate(names) if n != "gripper"][:ARM_JOINTS]
        if len(position) == len(names):
            position[arm] += dq[: len(arm)]
        self.publish(
            "perturbed/arm/joint_command",
            joint_state_msg(names, position, np.asarray(msg.velocity, dtype=float), self.now_ns()),
        )
