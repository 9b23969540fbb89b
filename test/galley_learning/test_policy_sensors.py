"""The ``sensors`` observation (galley_learning.policy.sensors): what a robot has, on exact cases."""

from __future__ import annotations

import math
from types import SimpleNamespace as Msg

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from galley_core.config import ConfigError
from galley_core.tasks.executor import place_target
from galley_learning.policy.config import DatasetConfig
from galley_learning.policy.goals import GOAL_NAMES
from galley_learning.policy.observations import decode_action, encode_actions, policy_state, state_names
from galley_learning.policy.sensors import SENSOR_NAMES, Perceived, SensorGoals, perceived_from_msg
from galley_runtime.config_files import find_scene


@pytest.fixture(scope="module")
def scene():  # type: ignore[no-untyped-def]
    return find_scene("kitchen")


def _named(values: np.ndarray) -> dict[str, float]:
    return dict(zip(SENSOR_NAMES, values.tolist(), strict=True))


def test_nothing_of_the_simulator_or_the_oracle_is_in_the_state() -> None:
    names = state_names("sensors")
    assert not [n for n in names if n.startswith(("contact", "closing", "target"))]  # the oracle's points
    assert "object_x" in names and "confidence" in names and "anchor_x" in names


def test_a_pick_sees_the_perceived_object_and_anchors_where_it_was_first_seen(scene) -> None:  # type: ignore[no-untyped-def]
    sensors = SensorGoals(scene)
    base = (1.0, 0.0, 0.0, math.pi / 2)  # facing +y
    ee = np.array([0.3, 0.0, 1.0])
    # nothing perceived yet: the step kind and the object's shape, no estimate, no anchor
    f = _named(sensors.features("pick the cup", base, {}, ee))
    assert f["is_pick"] == 1.0 and f["shape_cylinder"] == 1.0 and f["seen"] == 0.0 and f["has_anchor"] == 0.0
    cup = Perceived(
        1.0, 0.6, 0.75, math.pi / 2, 0.8
    )  # 0.6 m ahead, on a 0.75 m surface, turned with the base
    f = _named(sensors.features("pick the cup", base, {"cup": cup}, ee))
    assert (f["object_x"], f["object_y"], f["object_z"]) == pytest.approx((0.6, 0.0, 0.75), abs=1e-12)
    assert (f["object_ee_x"], f["object_ee_z"]) == pytest.approx((0.3, -0.25))
    assert (f["object_cos"], f["object_sin"], f["confidence"]) == pytest.approx((1.0, 0.0, 0.8), abs=1e-12)
    assert (f["anchor_x"], f["anchor_z"]) == pytest.approx((0.6, 0.75))
    # lifted: the estimate follows the cup, the anchor stays where the pick began
    lifted = Perceived(1.0, 0.6, 0.9, math.pi / 2, 0.7)
    f = _named(sensors.features("pick the cup", base, {"cup": lifted}, ee))
    assert f["object_z"] == pytest.approx(0.9) and f["anchor_z"] == pytest.approx(0.75)
    # the next pick anchors afresh
    f = _named(sensors.features("pick the apple", base, {"cup": lifted}, ee))
    assert f["has_anchor"] == 0.0 and f["seen"] == 0.0 and f["shape_sphere"] == 1.0


def test_a_place_anchors_at_the_spot_the_task_layer_would_choose_among_perceived_objects(scene) -> None:  # type: ignore[no-untyped-def]
    sensors = SensorGoals(scene)
    ee = np.zeros(3)
    x, y, yaw = scene.zone("blue").approach
    sensors.features("move to the blue zone", (x, y, 0.0, yaw), {}, ee)
    perceived = {"apple": Perceived(-0.5, -0.56, 0.75, 0.0, 0.9), "bowl": Perceived(9.0, 9.0, 0.9, 0.0, 0.9)}
    base = (x, y + 0.05, 0.0, yaw)
    f = _named(sensors.features("place the bowl", base, perceived, ee))
    spot = place_target(scene, "blue", "bowl", {"apple": (-0.5, -0.56)}, (x, y + 0.05))
    c, s = math.cos(yaw), math.sin(yaw)
    dx, dy = spot[0] - base[0], spot[1] - base[1]
    assert f["has_anchor"] == 1.0
    assert (f["anchor_x"], f["anchor_y"], f["anchor_z"]) == pytest.approx(
        (c * dx + s * dy, -s * dx + c * dy, spot[2])
    )
    assert math.hypot(spot[0] + 0.5, spot[1] + 0.56) > 0.1  # not on the apple the robot sees there


def test_a_place_holds_its_spot_while_estimates_move_and_chooses_again_after_the_base_moved(scene) -> None:  # type: ignore[no-untyped-def]
    sensors = SensorGoals(scene)
    ee = np.zeros(3)
    x, y, yaw = scene.zone("blue").approach
    sensors.features("move to the blue zone", (x, y, 0.0, yaw), {}, ee)
    base = (x, y, 0.0, yaw)
    first = place_target(scene, "blue", "bowl", {}, (x, y))
    f0 = _named(sensors.features("place the bowl", base, {}, ee))
    # the arm hides nothing any more: an apple appears on the chosen spot; the spot holds
    apple = {"apple": Perceived(first[0], first[1], first[2], 0.0, 0.9)}
    f1 = _named(sensors.features("place the bowl", base, apple, ee))
    assert (f1["anchor_x"], f1["anchor_y"]) == pytest.approx((f0["anchor_x"], f0["anchor_y"]))
    # the base teleported 10 cm: the spot is chosen again, among what is perceived now
    moved = (x + 0.1 * math.cos(yaw), y + 0.1 * math.sin(yaw), 0.0, yaw)
    f2 = _named(sensors.features("place the bowl", moved, apple, ee))
    again = place_target(scene, "blue", "bowl", {"apple": first[:2]}, moved[:2])
    assert math.dist(again[:2], first[:2]) > 0.05
    c, s = math.cos(yaw), math.sin(yaw)
    dx, dy = again[0] - moved[0], again[1] - moved[1]
    assert (f2["anchor_x"], f2["anchor_y"]) == pytest.approx((c * dx + s * dy, -s * dx + c * dy))


def test_perceived_objects_are_read_from_the_message() -> None:
    q = Rotation.from_euler("z", 0.3).as_quat()
    pose = Msg(position=Msg(x=1.0, y=2.0, z=0.9), orientation=Msg(x=q[0], y=q[1], z=q[2], w=q[3]))
    got = perceived_from_msg(Msg(objects=[Msg(name="fork", pose=pose, confidence=0.6)]))
    assert got["fork"] == Perceived(1.0, 2.0, 0.9, pytest.approx(0.3), 0.6)


def test_anchor_actions_are_relative_to_the_anchor_and_decode_to_the_same_target() -> None:
    rng = np.random.default_rng(3)
    n = 10
    ee_p = rng.normal(size=(n, 3))
    ee_q = np.tile([1.0, 0.0, 0.0, 0.0], (n, 1))
    target_q = np.tile([0.0, 1.0, 0.0, 0.0], (n, 1))
    absolute = np.concatenate([rng.normal(size=(n, 5)), target_q, rng.integers(0, 2, size=(n, 1))], axis=1)
    rows = np.zeros((n, len(SENSOR_NAMES)))
    col = SENSOR_NAMES.index
    has = np.arange(n) % 2 == 0
    rows[has, col("has_anchor")] = 1.0
    rows[:, col("anchor_x") : col("anchor_z") + 1] = rng.normal(size=(n, 3))
    encoded = encode_actions("anchor", absolute, ee_p, ee_q, rows)
    anchor = np.where(has[:, None], rows[:, col("anchor_x") : col("anchor_z") + 1], ee_p)
    np.testing.assert_allclose(encoded[:, 2:5], absolute[:, 2:5] - anchor)
    for k in range(n):
        np.testing.assert_allclose(
            decode_action("anchor", encoded[k], ee_p[k], ee_q[k], rows[k]), absolute[k]
        )
    with pytest.raises(ValueError, match=f"rows of {len(SENSOR_NAMES)} step features"):
        encode_actions("anchor", absolute, ee_p, ee_q, np.zeros((n, len(GOAL_NAMES))))  # privileged rows
    state = policy_state(
        "sensors", ee_p=ee_p, ee_q=ee_q, gripper=np.ones(n), odom=np.zeros((n, 5)), goal=rows
    )
    assert state.shape == (n, len(state_names("sensors")))


def test_each_action_kind_goes_with_the_preset_whose_points_it_reads() -> None:
    with pytest.raises(ConfigError, match=r"actions.*observation sensors"):
        DatasetConfig(observation="privileged", actions="anchor")
    with pytest.raises(ConfigError, match=r"actions.*observation privileged"):
        DatasetConfig(observation="sensors", actions="contact")
    assert DatasetConfig(observation="sensors", actions="absolute").actions == "absolute"
