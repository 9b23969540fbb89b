"""arm_controller in the embedded host: command rate, status, and every failure reason."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from galley_core.config import ConfigError
from galley_core.episode import Episode, ObjectPlacement
from galley_core.geometry import Pose2D
from galley_core.scene import load_scene
from galley_nodes.nodes.arm_controller import ArmControllerNode
from galley_nodes.registry import load_node_class
from galley_runtime import messages
from galley_runtime.conversions import joint_positions_from_msg
from galley_runtime.embedded import EmbeddedHost
from galley_runtime.params_file import ParameterError
from galley_runtime.qos import QoS
from galley_sim.sim_node import SimNode

ACTIVE, SUCCEEDED, FAILED = 1, 2, 3


@pytest.fixture(scope="module")
def kitchen(request):
    return load_scene(request.config.rootpath / "config" / "scenes" / "kitchen.yaml")


class Rig:
    """A host with the sim (optional) and arm_controller; records statuses and joint commands."""

    def __init__(self, tmp_path, kitchen, *, sim: bool = True, robot=None, **params: Any) -> None:
        self.host = EmbeddedHost()
        if sim:
            zone = kitchen.zone("blue")
            placement = ObjectPlacement("cup", "blue", zone.center[0], zone.center[1], 0.0, "red", -3.0, 2.6)
            episode = Episode("kitchen", 0, Pose2D(*(robot or zone.approach)), (placement,), {})
            path = tmp_path / "episode.json"
            path.write_text(json.dumps(episode.to_dict()))
            self.host.add_node(SimNode, parameters={"episode_file": str(path), "cameras_enabled": False})
        self.node = self.host.add_node(ArmControllerNode, parameters=params)
        self.statuses: list[Any] = []
        self.commands: list[Any] = []
        p = self.host.participant("test")
        p.create_subscription(
            "/arm/status", "galley_msgs/msg/ActionStatus", self.statuses.append, QoS.latched()
        )
        p.create_subscription(
            "/arm/joint_command", "sensor_msgs/msg/JointState", self.commands.append, QoS(depth=1000)
        )
        self.targets: list[Any] = []
        self.measured: list[Any] = []
        p.create_subscription(
            "/joint_states", "sensor_msgs/msg/JointState", self.measured.append, QoS(depth=5)
        )
        p.create_subscription(
            "/arm/target", "geometry_msgs/msg/PoseStamped", self.targets.append, QoS.latched()
        )
        self.goals = p.create_publisher("/arm/goal", "galley_msgs/msg/ArmGoal", QoS())
        self.joints = p.create_publisher("/joint_states", "sensor_msgs/msg/JointState", QoS())
        self.host.run_for(0.1)

    def send(self, action: int, name: str) -> None:
        self.goals.publish(messages.new("galley_msgs/msg/ArmGoal", action=action, object_name=name))
        self.host.run_for(0.01)

    def machine_target(self) -> Any:
        """The last /arm/target position published, None when cleared."""
        last = self.targets[-1] if self.targets else None
        if last is None or not last.header.frame_id:
            return None
        p = last.pose.position
        return np.array([p.x, p.y, p.z])

    def tcp(self) -> Any:
        """The tcp in base_link at the simulator's last /joint_states."""
        arm = self.node.machine.arm
        q, _ = joint_positions_from_msg(self.measured[-1], arm.joint_names)
        p, _ = arm.tcp_pose(np.asarray(q, dtype=float))
        return np.asarray(p)

    def wait(self, timeout_s: float = 20.0) -> Any:
        self.host.run_until(lambda: self.statuses[-1].state in (SUCCEEDED, FAILED), timeout_s)
        return self.statuses[-1]


def test_registered_and_commands_at_100_hz_with_the_gripper(kitchen, tmp_path):
    assert load_node_class("arm_controller") is ArmControllerNode
    rig = Rig(tmp_path, kitchen)
    rig.send(0, "cup")
    assert rig.statuses[-1].state == ACTIVE and rig.statuses[-1].phase == "approach"
    before = len(rig.commands)
    rig.host.run_for(1.0)
    assert len(rig.commands) - before >= 100
    last = rig.commands[-1]
    assert list(last.name) == [
        "waist", "shoulder", "elbow", "forearm_roll", "wrist_angle", "wrist_rotate", "gripper",
    ]  # fmt: skip
    assert (
        len(last.position) == len(last.velocity) == 7 and last.position[-1] == 1.0
    )  # open while approaching
    status = rig.wait()
    assert status.state == SUCCEEDED and status.goal_id == "cup", status.reason
    rig.host.run_for(0.5)
    quiet = len(rig.commands)
    rig.host.run_for(0.5)
    assert len(rig.commands) == quiet  # idle: the arm holds its last command


def test_arm_target_is_each_phase_goal_where_the_tcp_ends_it_and_cleared_when_done(kitchen, tmp_path):
    """/arm/target: the phase's tcp goal, once per phase (what a learned policy is taught to aim at)."""
    rig = Rig(tmp_path, kitchen)
    rig.send(0, "cup")
    phases, reached = [], []
    while rig.statuses[-1].state == ACTIVE:
        phase, target = rig.statuses[-1].phase, rig.machine_target()
        rig.host.run_for(0.05)
        if rig.statuses[-1].phase != phase and target is not None:  # the phase ended at its goal
            phases.append(phase)
            reached.append(np.linalg.norm(rig.tcp() - target))
    assert rig.statuses[-1].state == SUCCEEDED, rig.statuses[-1].reason
    assert phases[:3] == ["approach", "pre_grasp", "descend"]
    assert max(reached[:3]) < 0.03  # each ended within the tolerances of its published goal
    published = [t for t in rig.targets if t.header.frame_id]
    assert len(published) >= 5 and all(t.header.frame_id == "base_link" for t in published)
    assert rig.targets[-1].header.frame_id == ""  # cleared once no goal runs


def test_bad_goals_fail_with_a_reason_that_names_the_input(kitchen, tmp_path):
    rig = Rig(tmp_path, kitchen)
    rig.send(0, "teapot")
    assert rig.statuses[-1].state == FAILED and "unknown object 'teapot'" in rig.statuses[-1].reason
    rig.send(1, "cup")
    assert rig.statuses[-1].state == FAILED and "pick 'cup' first" in rig.statuses[-1].reason
    rig.send(7, "cup")
    assert rig.statuses[-1].state == FAILED and "neither PICK (0) nor PLACE (1)" in rig.statuses[-1].reason


def test_without_joint_states_or_object_poses_the_goal_fails(kitchen, tmp_path):
    rig = Rig(tmp_path, kitchen, sim=False)
    rig.send(0, "cup")
    assert "no joint states on /joint_states" in rig.statuses[-1].reason
    names = ["waist", "shoulder", "elbow", "forearm_roll", "wrist_angle", "wrist_rotate"]
    rig.joints.publish(messages.new("sensor_msgs/msg/JointState", name=names, position=np.zeros(6)))
    rig.send(0, "cup")
    assert rig.statuses[-1].state == FAILED and "no pose for 'cup'" in rig.statuses[-1].reason
    rig.joints.publish(
        messages.new("sensor_msgs/msg/JointState", name=names, position=[np.nan, 0, 0, 0, 0, 0])
    )
    rig.send(0, "cup")
    assert "NaN" in rig.statuses[-1].reason


def test_a_target_beyond_the_arm_is_unreachable(kitchen, tmp_path):
    zone = kitchen.zone("blue")
    rig = Rig(tmp_path, kitchen, robot=(zone.approach[0], zone.approach[1] + 0.5, zone.approach[2]))
    rig.send(0, "cup")
    status = rig.wait()
    assert status.state == FAILED and status.reason.startswith("unreachable: cup's grasp point")


def test_a_grasp_that_closes_fully_is_a_missed_grasp(kitchen, tmp_path):
    rig = Rig(tmp_path, kitchen, finger_closed_m=0.04)  # every closure now looks empty
    rig.send(0, "cup")
    status = rig.wait()
    assert status.state == FAILED and status.reason.startswith("grasp missed: the fingers closed fully")
    assert [s.phase for s in rig.statuses if s.phase][-1] == "grasp"


def test_an_object_that_leaves_the_gripper_has_slipped(kitchen, tmp_path):
    # A tenth of a millimetre counts: the cup moves about 0.4 mm in a firm grasp (contact compliance).
    rig = Rig(tmp_path, kitchen, slip_distance_m=0.0001)
    rig.send(0, "cup")
    status = rig.wait()
    assert status.state == FAILED and status.reason.startswith("object slipped: 'cup'")


def test_bad_parameters_are_rejected_at_start(kitchen, tmp_path):
    with pytest.raises(ParameterError, match="rate_hz"):
        EmbeddedHost().add_node(ArmControllerNode, parameters={"rate_hz": 50.0})
    with pytest.raises(ConfigError, match="robot_description"):
        EmbeddedHost().add_node(
            ArmControllerNode, parameters={"robot_description": str(tmp_path / "none.xml")}
        )


def test_an_object_handed_over_into_the_gripper_is_placed_as_if_picked(kitchen, tmp_path):
    """After an evaluation's teleport into the gripper (a failed pick), the oracle places the object."""
    rig = Rig(tmp_path, kitchen)
    rig.send(1, "cup")  # nothing in the gripper yet
    assert rig.wait().state == FAILED and "holds nothing" in rig.statuses[-1].reason
    sim = rig.host.node("sim").sim
    sim.hand_over("cup")
    rig.host.run_for(0.2)
    zone = kitchen.zone("blue")
    target = (zone.center[0], zone.center[1], zone.z)  # where the cup stood
    goal = messages.new("galley_msgs/msg/ArmGoal", action=1, object_name="cup")
    goal.target_pose.header.frame_id = "map"
    goal.target_pose.pose.position.x, goal.target_pose.pose.position.y, goal.target_pose.pose.position.z = (
        target
    )
    rig.goals.publish(goal)
    status = rig.wait(30.0)
    assert status.state == SUCCEEDED, status.reason
    rig.host.run_for(1.0)
    placed = sim.object_poses()["cup"].translation
    assert np.hypot(placed[0] - target[0], placed[1] - target[1]) < 0.05 and abs(placed[2] - zone.z) < 0.01


def test_a_stop_goal_cancels_the_running_goal_and_the_commands_stop(kitchen, tmp_path):
    """What the task executor sends when a /task/execute goal is canceled mid-pick."""
    rig = Rig(tmp_path, kitchen)
    rig.send(0, "cup")
    rig.host.run_for(0.5)
    rig.send(2, "")
    assert rig.statuses[-1].state == 4 and rig.statuses[-1].reason == "stopped by a STOP goal"  # CANCELED
    stopped = len(rig.commands)
    rig.host.run_for(0.5)
    assert len(rig.commands) == stopped  # the arm holds its last command
