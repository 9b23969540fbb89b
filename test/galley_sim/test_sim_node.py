"""The sim node in the embedded host: real MuJoCo physics, no welds, commands over topics."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from typing import Any

import mujoco
import numpy as np
import pytest

from galley_core.episode import Episode, ObjectPlacement, sample_episode
from galley_core.geometry import Pose2D, normalize_angle
from galley_isaac.config import load_bridge_config
from galley_runtime import messages
from galley_runtime.conversions import pose2d_from_pose_msg
from galley_runtime.embedded import EmbeddedHost
from galley_runtime.qos import QoS
from galley_sim.rendering import SideBySideRenderer
from galley_sim.scene_model import ROBOT_FRAMES, STATIC_FRAMES
from galley_sim.sim_node import SimNode
from galley_sim.simulator import ARM_JOINTS, KitchenSim, PreflightError, SimOptions


class Commands:
    """Publishes /cmd_vel and /arm/joint_command into a host, as a controller would."""

    def __init__(self, host: EmbeddedHost) -> None:
        self.host = host
        participant = host.participant("test_commands")
        self._cmd = participant.create_publisher("/cmd_vel", "geometry_msgs/msg/Twist", QoS())
        self._joints = participant.create_publisher("/arm/joint_command", "sensor_msgs/msg/JointState", QoS())

    def drive(self, v: float, w: float, seconds: float) -> None:
        """Publish (v, w) at 10 Hz for ``seconds``."""
        for _ in range(round(seconds * 10)):
            self._cmd.publish(messages.new("geometry_msgs/msg/Twist", linear={"x": v}, angular={"z": w}))
            self.host.run_for(0.1)

    def joints(self, seconds: float, *, velocity: bool = False, **targets: float) -> None:
        """Send joint position (or velocity) targets once, then run for ``seconds``."""
        field = "velocity" if velocity else "position"
        msg = messages.new(
            "sensor_msgs/msg/JointState", name=list(targets), **{field: list(targets.values())}
        )
        self._joints.publish(msg)
        self.host.run_for(seconds)


def start_sim(
    tmp_path, episode: Episode, **params: Any
) -> tuple[EmbeddedHost, SimNode, dict[str, list[Any]], Commands]:
    """A host running the sim node on ``episode``, a dict collecting messages by topic, and commands."""
    path = tmp_path / "episode.json"
    path.write_text(json.dumps(episode.to_dict()))
    host = EmbeddedHost()
    seen: dict[str, list[Any]] = {}
    probe = host.participant("probe")
    types = {
        "/odom": "nav_msgs/msg/Odometry",
        "/sim/ground_truth/base_pose": "geometry_msgs/msg/PoseStamped",
        "/joint_states": "sensor_msgs/msg/JointState",
        "/scan": "sensor_msgs/msg/LaserScan",
        "/sim/contacts": "galley_msgs/msg/Contacts",
        "/camera/base/image_raw": "sensor_msgs/msg/Image",
        "/camera/base/depth/image_raw": "sensor_msgs/msg/Image",
        "/camera/base/camera_info": "sensor_msgs/msg/CameraInfo",
        "/camera/wrist/image_raw": "sensor_msgs/msg/Image",
        "/imu/data": "sensor_msgs/msg/Imu",
    }
    for topic, type_name in types.items():
        seen[topic] = []
        probe.create_subscription(topic, type_name, seen[topic].append, QoS(depth=1000))
    params = {"episode_file": str(path), "cameras_enabled": False} | params
    sim = host.add_node(SimNode, parameters=params)
    return host, sim, seen, Commands(host)


def test_odometry_agrees_with_ground_truth_after_a_straight_metre_and_a_right_angle(episode_at, tmp_path):
    host, _, seen, commands = start_sim(tmp_path, episode_at((-1.0, 0.8, 0.0)))
    commands.drive(0.2, 0.0, 5.0)
    commands.drive(0.0, 0.0, 0.5)
    commands.drive(0.0, 0.5, math.pi)
    commands.drive(0.0, 0.0, 0.5)
    start = Pose2D(-1.0, 0.8, 0.0).to_transform()
    truth = (
        start.inverse() * pose2d_from_pose_msg(seen["/sim/ground_truth/base_pose"][-1].pose).to_transform()
    ).to_pose2d()
    odom = pose2d_from_pose_msg(seen["/odom"][-1].pose.pose)
    assert truth.x == pytest.approx(1.0, abs=0.02) and abs(truth.y) < 0.01  # it did drive a metre
    assert abs(normalize_angle(truth.theta - math.pi / 2)) < 0.05  # and turn a right angle
    assert math.hypot(odom.x - truth.x, odom.y - truth.y) < 0.01
    assert abs(normalize_angle(odom.theta - truth.theta)) < 0.01
    assert seen["/odom"][-1].header.frame_id == "odom" and seen["/odom"][-1].child_frame_id == "base_link"
    # TF agrees too: map -> base_link is the ground truth.
    tf = host.tf.lookup("map", "base_link")[0].to_pose2d()
    assert (tf.x, tf.y) == pytest.approx((-1.0 + truth.x, 0.8 + truth.y), abs=1e-6)


def test_scan_ranges_match_the_known_walls(episode_at, tmp_path):
    host, _, seen, _ = start_sim(tmp_path, episode_at((0.0, 0.8, 0.0)))
    host.run_for(0.2)
    scan = seen["/scan"][-1]
    ranges = np.asarray(scan.ranges)
    assert len(ranges) == 360 and scan.header.frame_id == "laser"
    angles = scan.angle_min + scan.angle_increment * np.arange(len(ranges))

    def at(angle: float) -> float:
        return float(ranges[np.argmin(np.abs(np.arctan2(np.sin(angles - angle), np.cos(angles - angle))))])

    laser_x = 0.26  # laser position on the base (robot.xml)
    assert at(0.0) == pytest.approx(4.0 - laser_x, abs=0.02)  # east wall
    assert at(math.pi / 2) == pytest.approx(2.4 - 0.8, abs=0.02)  # counter front
    assert at(-math.pi / 2) == pytest.approx(0.8 - (-0.35), abs=0.02)  # table edge
    assert at(math.pi) == pytest.approx(4.0 + laser_x, abs=0.02)  # west wall


def test_images_have_the_declared_sizes_and_encodings(kitchen, tmp_path):
    host, _, seen, _ = start_sim(
        tmp_path, sample_episode(kitchen, 2), cameras_enabled=True, image_width=160, image_height=120
    )
    host.run_for(0.2)
    for topic, encoding, channels, itemsize in (
        ("/camera/base/image_raw", "rgb8", 3, 1),
        ("/camera/wrist/image_raw", "rgb8", 3, 1),
        ("/camera/base/depth/image_raw", "32FC1", 1, 4),
    ):
        image = seen[topic][-1]
        assert (image.width, image.height, image.encoding) == (160, 120, encoding), topic
        assert image.step == 160 * channels * itemsize and len(image.data) == image.step * 120
    assert len(seen["/camera/base/image_raw"]) == 2  # 10 Hz
    depth = np.frombuffer(seen["/camera/base/depth/image_raw"][-1].data.tobytes(), dtype=np.float32)
    assert np.all(np.isfinite(depth)) and depth.min() > 0.1 and depth.max() < 12.0
    info = seen["/camera/base/camera_info"][-1]
    assert info.header.frame_id == "base_camera_optical" and info.k[2] == pytest.approx((160 - 1) / 2)
    assert host.tf.can_transform("base_link", "base_camera_optical")


def test_an_image_nobody_subscribes_to_is_not_rendered(kitchen, tmp_path):
    path = tmp_path / "episode.json"
    path.write_text(json.dumps(sample_episode(kitchen, 2).to_dict()))
    host = EmbeddedHost()
    wrist: list[Any] = []
    host.participant("probe").create_subscription(
        "/camera/wrist/image_raw", "sensor_msgs/msg/Image", wrist.append, QoS(depth=10)
    )
    host.add_node(SimNode, parameters={"episode_file": str(path), "cameras_enabled": True})
    host.run_for(0.2)
    stats = host.bus.statistics()
    assert len(wrist) == 2 and stats["/camera/wrist/image_raw"]["published"] == 2
    assert stats["/camera/base/image_raw"]["published"] == 0
    assert stats["/camera/base/depth/image_raw"]["published"] == 0
    assert stats["/camera/base/camera_info"]["published"] == 2  # info goes out regardless
    assert stats["/camera/top_down/image_raw"]["published"] == 0
    depth: list[Any] = []
    host.participant("late").create_subscription(
        "/camera/base/depth/image_raw", "sensor_msgs/msg/Image", depth.append, QoS(depth=10)
    )
    host.run_for(0.1)
    assert len(depth) == 1 and depth[0].encoding == "32FC1"


def chroma(rgb: np.ndarray) -> np.ndarray:
    rgb = rgb.astype(float)
    return rgb / np.maximum(rgb.sum(axis=-1, keepdims=True), 1.0)


def count_colour(image: np.ndarray, rgba: tuple[float, ...], tolerance: float = 0.04) -> int:
    target = chroma(np.array(rgba[:3]) * 255)
    close = np.linalg.norm(chroma(image) - target, axis=-1) < tolerance
    bright_enough = image.astype(float).sum(axis=-1) > 60
    return int(np.count_nonzero(close & bright_enough))


def test_the_top_down_image_shows_every_zone_colour(kitchen, tmp_path):
    host, _, _, _ = start_sim(tmp_path, sample_episode(kitchen, 4))
    host.run_for(1.0)
    late: list[Any] = []  # latched: a late subscriber still gets the episode's image
    host.participant("planner").create_subscription(
        "/camera/top_down/image_raw", "sensor_msgs/msg/Image", late.append, QoS.latched()
    )
    host.run_for(0.01)
    assert len(late) == 1
    later: list[Any] = []  # rendered once: a second subscriber gets the latched image
    host.participant("recorder").create_subscription(
        "/camera/top_down/image_raw", "sensor_msgs/msg/Image", later.append, QoS.latched()
    )
    host.run_for(0.1)
    assert later == late and host.bus.statistics()["/camera/top_down/image_raw"]["published"] == 1
    msg = late[0]
    image = np.asarray(msg.data).reshape(msg.height, msg.width, 3)
    assert (msg.width, msg.height) == (640, 480)
    for zone in kitchen.zones:
        assert count_colour(image, zone.rgba) > 150, f"zone {zone.name} not visible"


def test_robot_cameras_can_hide_the_zones(kitchen, episode_at):
    zone = kitchen.zone("blue")
    episode = episode_at(zone.approach)
    counts = {}
    for hide in (True, False):
        sim = KitchenSim(kitchen, SimOptions(hide_zones_from_robot_cameras=hide))
        sim.reset(episode)
        counts[hide] = count_colour(sim.render("base_camera"), zone.rgba)
        sim.close()
    assert counts[False] > 200 and counts[True] == 0


def test_joint_commands_bring_the_arm_to_targets(episode_at, tmp_path):
    _, _, seen, commands = start_sim(tmp_path, episode_at((0.0, 0.8, 0.0)))
    targets = dict(zip(ARM_JOINTS, (0.4, 0.3, 0.9, -0.5, 0.6, 1.0), strict=True))
    commands.joints(3.0, **targets, gripper=0.5)
    state = seen["/joint_states"][-1]
    position = dict(zip(state.name, np.asarray(state.position), strict=True))
    for name, target in targets.items():
        assert position[name] == pytest.approx(target, abs=0.01), name
    assert position["left_finger"] == pytest.approx(0.02, abs=0.002)
    # Velocity commands (no positions): the target moves at that rate.
    commands.joints(2.0, velocity=True, waist=0.2)
    state = seen["/joint_states"][-1]
    assert dict(zip(state.name, np.asarray(state.position), strict=True))["waist"] == pytest.approx(
        0.8, abs=0.03
    )


@pytest.mark.parametrize("name", ["apple", "bowl", "cup", "fork", "plate"])
def test_scripted_joint_commands_grasp_lift_and_hold_each_object(
    kitchen, episode_at, tmp_path, name, grasp_waypoints
):
    zone = kitchen.zone("blue")
    placement = ObjectPlacement(name, "blue", zone.center[0], zone.center[1], 0.4, "red", -3.0, 2.6)
    host, node, _, commands = start_sim(tmp_path, episode_at(zone.approach, (placement,)))
    host.run_for(0.5)
    waypoints = grasp_waypoints(node.sim, name)
    commands.joints(2.0, **waypoints["above"], gripper=1.0)
    commands.joints(1.5, **waypoints["at"])
    commands.joints(1.0, gripper=0.0)
    commands.joints(2.0, **waypoints["lifted"])
    lifted = host.tf.lookup("map", f"object/{name}")[0]
    tcp_to_object = node.sim.site_transform("tcp").inverse() * lifted
    host.run_for(5.0)
    held = host.tf.lookup("map", f"object/{name}")[0]
    assert lifted.translation[2] > zone.z + 0.1  # off the table
    assert np.linalg.norm(held.translation - lifted.translation) < 0.01  # and held for 5 s
    still = node.sim.site_transform("tcp").inverse() * held
    assert np.linalg.norm(still.translation - tcp_to_object.translation) < 0.01


def test_the_same_seed_gives_the_same_episode_and_stream(kitchen, tmp_path):
    def run(seed: int) -> list[bytes]:
        host = EmbeddedHost()
        stream: list[bytes] = []
        probe = host.participant("probe")
        for topic, type_name in (
            ("/tf", "tf2_msgs/msg/TFMessage"),
            ("/joint_states", "sensor_msgs/msg/JointState"),
        ):
            probe.create_subscription(
                topic, type_name, lambda m: stream.append(messages_bytes(m)), QoS(depth=1000)
            )
        host.add_node(SimNode, parameters={"seed": seed, "cameras_enabled": False})
        drive_host = host.participant("teleop").create_publisher("/cmd_vel", "geometry_msgs/msg/Twist", QoS())
        drive_host.publish(messages.new("geometry_msgs/msg/Twist", linear={"x": 0.1}, angular={"z": 0.2}))
        host.run_for(0.4)
        return stream

    first, again, other = run(5), run(5), run(6)
    assert len(first) > 30 and first == again and first != other


def messages_bytes(msg: Any) -> bytes:
    from galley_runtime.rosbags_messages import serialize

    return serialize(msg)


def test_preflight_names_what_overlaps(kitchen, episode_at):
    sim = KitchenSim(kitchen)
    zone = kitchen.zone("blue")
    same_spot = tuple(
        ObjectPlacement(n, "blue", zone.center[0], zone.center[1], 0.0, "red", 0, 0) for n in ("apple", "cup")
    )
    with pytest.raises(PreflightError, match=r"object/apple and object/cup interpenetrate"):
        sim.reset(episode_at(zone.approach, same_spot))
    with pytest.raises(PreflightError, match=r"the robot starts in collision \(base_link and world overlap"):
        sim.reset(episode_at((0.0, -0.8, 0.0)))  # inside the table
    sim.reset(replace(sample_episode(kitchen, 3)))  # a sampled episode passes


def test_links_with_a_joint_go_on_tf_and_fixed_links_on_tf_static(kitchen, tmp_path, request):
    host, sim, _, _ = start_sim(tmp_path, sample_episode(kitchen, 3))
    tf: dict[str, list[Any]] = {"/tf": [], "/tf_static": []}
    probe = host.participant("tf_probe")
    for topic, received in tf.items():
        qos = QoS.latched() if topic == "/tf_static" else QoS(depth=1000)
        probe.create_subscription(topic, "tf2_msgs/msg/TFMessage", received.append, qos)
    host.run_for(0.1)
    edges = {
        topic: {(t.header.frame_id, t.child_frame_id) for m in msgs for t in m.transforms}
        for topic, msgs in tf.items()
    }
    model = sim.sim.model
    base = model.body("base_link").id
    robot = [b for b in range(model.nbody) if model.body_rootid[b] == base and b != base]
    for body in robot:
        parent, child = model.body(model.body_parentid[body]).name, model.body(body).name
        topic = "/tf" if model.body_jntnum[body] else "/tf_static"
        assert (parent, child) in edges[topic], f"{parent} -> {child} is not on {topic}"
    assert {c for _, c in ROBOT_FRAMES} | {c for _, c in STATIC_FRAMES} == {model.body(b).name for b in robot}
    # The Isaac Sim bridge publishes the same links on the same topics.
    isaac = load_bridge_config(request.config.rootpath / "config" / "isaac" / "kitchen.yaml")
    assert {(k.parent, k.frame) for k in isaac.links} == set(ROBOT_FRAMES)
    assert {(k.parent, k.frame) for k in isaac.static_links} == {*STATIC_FRAMES, ("base_link", "imu_link")}


def test_contacts_with_walls_and_furniture_are_reported(episode_at, tmp_path):
    _, _, seen, commands = start_sim(tmp_path, episode_at((3.3, 0.5, 0.0)))
    commands.drive(0.3, 0.0, 3.0)
    touching = [m for m in seen["/sim/contacts"] if len(m.robot_geoms)]
    assert touching, "driving into the east wall produced no contact"
    assert "wall_east" in touching[-1].obstacle_geoms


def test_a_nan_velocity_command_stops_the_base_with_a_warning(episode_at, tmp_path, caplog):
    _, _, seen, commands = start_sim(tmp_path, episode_at((-1.0, 0.8, 0.0)))
    commands.drive(0.2, 0.0, 1.0)
    with caplog.at_level("WARNING"):
        commands.drive(float("nan"), 0.0, 1.0)
    assert "non-finite" in caplog.text
    assert abs(seen["/odom"][-1].twist.twist.linear.x) < 1e-3


def test_a_renderer_dropped_without_close_leaves_the_others_working(kitchen, episode_at):
    sim = KitchenSim(kitchen, SimOptions(image_width=96, image_height=72))
    sim.reset(episode_at(kitchen.zone("blue").approach))
    cameras = ["base_camera", "wrist_camera"]
    expected = sim.render_cameras(cameras)
    dropped = SideBySideRenderer(sim.model, 96, 72, 2)
    kept = SideBySideRenderer(sim.model, 96, 72, 2)  # its GL context is current now
    del dropped  # freed by the garbage collector, not closed
    for a, b in zip(kept.render(sim.data, cameras, mujoco.MjvOption()), expected, strict=True):
        np.testing.assert_array_equal(a, b)
    kept.close()
    sim.close()


def test_subdividing_faces_for_lighting_would_change_almost_no_pixel(kitchen):
    """The model draws box faces as one quad and the floor with a 1 m grid (see mjcf.py): with no
    specular light that looks like MuJoCo's default subdivision, only cheaper."""
    images = {}
    for subdivided in (False, True):
        sim = KitchenSim(kitchen, SimOptions(image_width=320, image_height=240))
        if subdivided:
            sim.model.vis.quality.numquads = 4
            sim.model.geom_size[sim.model.geom("floor").id, 2] = 0.1
        images[subdivided] = []
        for seed in range(3):
            sim.reset(sample_episode(kitchen, seed))
            images[subdivided] += [
                *sim.render_cameras(["base_camera", "wrist_camera"]),
                sim.render("top_down"),
            ]
        sim.close()
    for coarse, fine in zip(images[False], images[True], strict=True):
        difference = np.abs(coarse.astype(int) - fine.astype(int))
        assert difference.mean() < 0.05  # grey levels
        assert (difference.max(axis=-1) > 2).mean() < 1e-3


def test_sensors_evaluated_once_per_step_call_read_as_if_every_physics_step_had(kitchen):
    """KitchenSim.step skips MuJoCo's sensor stage but in its last physics step: bit for bit the
    same IMU readings and motion as evaluating the sensors in every step."""
    runs = []
    for every_step in (False, True):
        sim = KitchenSim(kitchen, SimOptions())
        sim.reset(sample_episode(kitchen, 3))
        if every_step:
            sim._step_without_sensors = lambda n, sim=sim: mujoco.mj_step(sim.model, sim.data, nstep=n)
        sim.set_joint_targets({"shoulder": -0.6, "elbow": 1.2, "gripper": 0.5})
        readings = []
        for tick in range(300):
            if tick % 50 == 0:
                sim.set_base_command(0.05 * (tick % 150 / 50 - 1), 0.4 - 0.2 * (tick % 100 / 50))
            sim.step(5)
            readings.append(np.concatenate([sim.data.qpos, sim.data.qvel, *sim.imu()]))
        runs.append(np.array(readings))
        sim.close()
    assert np.ptp(runs[1][:, -6:], axis=0).max() > 0.1  # gyro and accelerometer see the motion
    np.testing.assert_array_equal(runs[0], runs[1])
