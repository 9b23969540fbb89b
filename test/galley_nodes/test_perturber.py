"""The perturber between the oracle and the simulator (galley collect --perturb)."""

from __future__ import annotations

from typing import Any

import numpy as np

from galley_episodes.bringup import build_host
from galley_episodes.episode import run_settings
from galley_nodes import stack
from galley_nodes.registry import load_node_class
from galley_runtime import messages
from galley_runtime.embedded import EmbeddedHost
from galley_runtime.qos import QoS


def _drive(
    scale: float, v: float = 0.1, arm_phase: str = ""
) -> tuple[list[tuple[float, float]], list[np.ndarray]]:
    """Send (v, 0.3 rad/s) and fixed arm positions at 10 Hz for 30 s; what the simulator gets.

    ``arm_phase``: a running pick's phase on /arm/status throughout ("" none).
    """
    host = EmbeddedHost([])
    host.add_node(load_node_class("perturber"), parameters={"scale": scale, "seed": 3})
    me = host.participant("oracle")
    if arm_phase:
        status = me.create_publisher("/arm/status", "galley_msgs/msg/ActionStatus", QoS.latched(10))
        status.publish(messages.new("galley_msgs/msg/ActionStatus", state=1, goal_id="cup", phase=arm_phase))
    cmd = me.create_publisher("/cmd_vel", "geometry_msgs/msg/Twist", QoS(depth=5))
    arm = me.create_publisher("/arm/joint_command", "sensor_msgs/msg/JointState", QoS(depth=5))
    speeds: list[tuple[float, float]] = []
    joints: list[np.ndarray] = []
    me.create_subscription(
        "/perturbed/cmd_vel",
        "geometry_msgs/msg/Twist",
        lambda m: speeds.append((m.linear.x, m.angular.z)),
        QoS(depth=5),
    )
    me.create_subscription(
        "/perturbed/arm/joint_command",
        "sensor_msgs/msg/JointState",
        lambda m: joints.append(np.array(m.position)),
        QoS(depth=5),
    )
    names = [f"joint{i}" for i in range(1, 7)] + ["gripper"]
    for _ in range(300):
        cmd.publish(messages.new("geometry_msgs/msg/Twist", linear={"x": v}, angular={"z": 0.3}))
        arm.publish(
            messages.new(
                "sensor_msgs/msg/JointState", name=names, position=np.full(7, 0.5), velocity=np.zeros(7)
            )
        )
        host.run_for(0.1)
    return speeds, joints


def test_without_scale_the_commands_pass_unchanged() -> None:
    speeds, joints = _drive(0.0)
    assert len(speeds) == 300 and set(speeds) == {(0.1, 0.3)}
    assert all(np.array_equal(j, np.full(7, 0.5)) for j in joints)


def test_with_scale_spells_of_noise_leave_the_gripper_alone() -> None:
    speeds, joints = _drive(1.0)
    moved = np.abs(np.array(speeds) - (0.1, 0.3)).max(axis=1) > 1e-12
    assert 0.1 < moved.mean() < 0.5  # in spells, not always
    arm = np.stack(joints)
    assert np.abs(arm[:, :6] - 0.5).max() > 0.01 and np.all(arm[:, 6] == 0.5)
    # turning in place: the oracle does not correct its position there, so no noise
    turning, _ = _drive(1.0, v=0.0)
    assert set(turning) == {(0.0, 0.3)}


def test_the_arm_is_left_alone_in_its_contact_phases() -> None:
    for phase, perturbed in (("descend", False), ("grasp", False), ("release", False), ("approach", True)):
        speeds, joints = _drive(1.0, arm_phase=phase)
        arm = np.stack(joints)
        assert bool(np.abs(arm[:, :6] - 0.5).max() > 0.01) is perturbed, phase
        assert np.abs(np.array(speeds) - (0.1, 0.3)).max() > 1e-3  # the base still is


def test_the_stack_puts_it_between_the_oracle_and_the_simulator(monkeypatch: Any, tmp_path: Any) -> None:
    mode = stack.Mode(cameras=False, record=True, perturb=True)
    assert "perturber" in stack.nodes(mode) and "perturber" not in stack.nodes(stack.Mode())
    assert stack.remappings(mode, "sim") == {
        "/cmd_vel": "/perturbed/cmd_vel",
        "/arm/joint_command": "/perturbed/arm/joint_command",
    }
    assert stack.remappings(stack.Mode(), "sim") == {}
    settings = run_settings("kitchen", 4, out_dir=tmp_path, cameras=False, params=[], perturb=0.5)
    assert settings.parameters["perturber"]["scale"] == 0.5
    host = build_host(mode, settings, [])
    probe = host.participant("probe")
    listeners = {
        t: probe.create_publisher(t, "geometry_msgs/msg/Twist", QoS()).get_subscription_count()
        for t in ("/perturbed/cmd_vel", "/cmd_vel")
    }
    host.shutdown()
    assert listeners["/perturbed/cmd_vel"] == 1  # the simulator follows the perturbed commands
    assert listeners["/cmd_vel"] >= 1  # the perturber (and whoever watches) hears the oracle
