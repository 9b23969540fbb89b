"""The dataset reader: a recorded episode as samples at a chosen rate, each stream sample-and-hold."""

from __future__ import annotations

import math

import numpy as np
import pytest

from galley_nodes.nodes.recorder import RecorderNode
from galley_runtime import messages
from galley_runtime.embedded import EmbeddedHost
from galley_runtime.qos import QoS
from galley_runtime.recording.dataset import iter_episodes, iter_samples, load_episode
from galley_sim.sim_node import SimNode


@pytest.fixture(scope="module")
def bag(tmp_path_factory):
    """1.5 s of an episode with both cameras (64 x 48), a velocity ramp and one arm command."""
    out = tmp_path_factory.mktemp("bags")
    host = EmbeddedHost()
    host.add_node(SimNode, parameters={"seed": 2, "image_width": 64, "image_height": 48})
    teleop = host.participant("teleop")
    cmd = teleop.create_publisher("/cmd_vel", "geometry_msgs/msg/Twist", QoS())
    arm = teleop.create_publisher("/arm/joint_command", "sensor_msgs/msg/JointState", QoS())
    host.add_node(RecorderNode, parameters={"output_dir": str(out), "bag_name": "ep0", "split_period_s": 1.0})
    sent = []
    for i in range(15):
        v = 0.01 * i
        cmd.publish(messages.new("geometry_msgs/msg/Twist", linear={"x": v}, angular={"z": -v}))
        sent.append((host.time_ns, v))
        if i == 5:
            arm.publish(messages.new("sensor_msgs/msg/JointState", name=["waist"], position=[0.3]))
        host.run_for(0.1)
    host.shutdown()
    return out / "ep0", sent


def test_samples_hold_the_latest_message_of_every_stream(bag):
    path, sent = bag
    data = load_episode(path, rate_hz=5.0)
    t = data["t_s"]
    assert np.allclose(np.diff(t), 0.2) and len(t) >= 7
    assert data["image/base"].shape == (len(t), 48, 64, 3) and data["image/base"].dtype == np.uint8
    assert data["depth/base"].shape == (len(t), 48, 64) and data["depth/base"].dtype == np.float32
    assert data["joint_position"].shape == (len(t), 8) and data["odom"].shape == (len(t), 5)
    for k, tick in enumerate(t):
        before = [v for stamp, v in sent if stamp <= round(tick * 1e9)]
        if not before:
            assert not data["valid/cmd_vel"][k]
            continue
        assert data["valid/cmd_vel"][k] and data["cmd_vel"][k] == pytest.approx([before[-1], -before[-1]])
    waist = data["arm_command"][:, 0]
    assert (
        math.isnan(waist[0])
        and waist[-1] == pytest.approx(0.3)
        and np.isnan(data["arm_command"][-1, 1:]).all()
    )
    moving = data["valid/image/wrist"]
    assert moving[-1] and not np.array_equal(data["image/base"][-1], np.zeros((48, 64, 3), np.uint8))


def test_a_folder_of_bags_iterates_episodes_with_their_metadata(bag, tmp_path):
    path, _ = bag
    [(found, meta, samples)] = list(iter_episodes(path.parent, rate_hz=2.0))
    assert found == path and meta["seed"] == 2 and meta["scene"] == "kitchen"
    assert len(list(samples)) == len(list(iter_samples(path, 2.0)))
    with pytest.raises(FileNotFoundError, match="no bags under"):
        next(iter_episodes(tmp_path))
    with pytest.raises(ValueError, match="rate_hz"):
        next(iter_samples(path, 0.0))
