"""The gripper geometry written in galley_core is the one robot.xml builds (MuJoCo's compilation)."""

from __future__ import annotations

import numpy as np
import pytest

from galley_core.manipulation.gripper import GALLEY_MM_GRIPPER
from galley_description import ROBOT_XML

mujoco = pytest.importorskip("mujoco", reason="the check compiles robot.xml with MuJoCo")

PADS = ("left_finger_pad", "right_finger_pad")
FINGERS = ("left_finger", "right_finger")


def _extent(model, data, geom: str, axis: np.ndarray) -> tuple[float, float]:
    """(lowest, highest) projection of a box geom onto ``axis`` (world frame), metres."""
    g = model.geom(geom).id
    centre = float(data.geom_xpos[g] @ axis)
    half = float(np.abs(data.geom_xmat[g].reshape(3, 3).T @ axis) @ model.geom_size[g])
    return centre - half, centre + half


@pytest.fixture(scope="module")
def gripper():
    """(model, data, approach axis, tcp position) with the fingers fully open."""
    model = mujoco.MjModel.from_xml_path(str(ROBOT_XML))
    data = mujoco.MjData(model)
    for finger in FINGERS:
        joint = model.joint(finger)
        data.qpos[joint.qposadr[0]] = joint.range[1]
    mujoco.mj_kinematics(model, data)
    site = model.site("tcp").id
    approach = data.site_xmat[site].reshape(3, 3)[:, 0]  # the tcp's x: the gripper's approach axis
    return model, data, approach, data.site_xpos[site].copy()


def test_the_pads_reach_past_the_tcp_as_written(gripper) -> None:
    model, data, approach, tcp = gripper
    tips = [_extent(model, data, pad, approach)[1] for pad in PADS]
    assert max(tips) - tcp @ approach == pytest.approx(GALLEY_MM_GRIPPER.pad_reach_m, abs=1e-6)


def test_the_palm_stands_back_from_the_tcp_as_written(gripper) -> None:
    model, data, approach, tcp = gripper
    face = _extent(model, data, "palm", approach)[1]
    assert tcp @ approach - face == pytest.approx(GALLEY_MM_GRIPPER.palm_above_tcp_m, abs=1e-6)


def test_the_fingers_open_as_wide_as_written(gripper) -> None:
    model, data, _, _ = gripper
    closing = data.xmat[model.body("left_finger_link").id].reshape(3, 3) @ model.joint("left_finger").axis
    left, right = (_extent(model, data, pad, closing) for pad in PADS)
    gap = left[0] - right[1]  # the left pad's inner face to the right pad's
    assert gap == pytest.approx(GALLEY_MM_GRIPPER.opening_m, abs=1e-6)
