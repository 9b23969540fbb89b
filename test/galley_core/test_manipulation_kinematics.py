"""Arm kinematics read from robot.xml agree with MuJoCo's compilation of the same file."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from galley_core.manipulation import _kinematics_kernels as kernels
from galley_core.manipulation.kinematics import KinematicsError, load_arm
from galley_sim.simulator import ARM_JOINTS

ROBOT = "src/galley_description/galley_description/models/galley_mm/robot.xml"


@pytest.fixture(scope="module")
def arm(request):
    return load_arm(request.config.rootpath / ROBOT)


@pytest.fixture(scope="module")
def mj(request):
    model = mujoco.MjModel.from_xml_path(str(request.config.rootpath / ROBOT))
    return model, mujoco.MjData(model)


def set_arm(model, data, q):
    data.qpos[:] = 0.0  # base at the origin: base_link is the world frame
    for name, value in zip(ARM_JOINTS, q, strict=True):
        data.qpos[model.joint(name).qposadr[0]] = value
    mujoco.mj_kinematics(model, data)
    mujoco.mj_comPos(model, data)


def random_configs(arm, count, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(arm.lower, arm.upper, size=(count, arm.dof))


def test_the_chain_and_limits_are_read_from_the_file(arm, mj):
    model, _ = mj
    assert arm.joint_names == ARM_JOINTS
    for i, name in enumerate(ARM_JOINTS):
        assert (arm.lower[i], arm.upper[i]) == tuple(model.jnt_range[model.joint(name).id])
    assert len(arm.sphere_radius) >= 8


def test_forward_kinematics_match_mujoco(arm, mj):
    model, data = mj
    site = model.site("tcp").id
    for q in random_configs(arm, 30):
        set_arm(model, data, q)
        position, rotation = arm.tcp_pose(q)
        assert np.max(np.abs(position - data.site_xpos[site])) <= 1e-6
        assert np.max(np.abs(rotation - data.site_xmat[site].reshape(3, 3))) <= 1e-6
        rot, pos, _, _ = arm.link_frames(q)
        for k, body in enumerate(("waist_link", "shoulder_link", "elbow_link", "forearm_link", "wrist_link")):
            assert np.max(np.abs(pos[k] - data.body(body).xpos)) <= 1e-6
            assert np.max(np.abs(rot[k] - data.body(body).xmat.reshape(3, 3))) <= 1e-6


def test_tcp_jacobian_matches_mujoco_and_finite_differences(arm, mj):
    model, data = mj
    site = model.site("tcp").id
    dofs = [model.joint(n).dofadr[0] for n in ARM_JOINTS]
    jacp, jacr = np.zeros((3, model.nv)), np.zeros((3, model.nv))
    h = 1e-6
    for q in random_configs(arm, 20, seed=1):
        set_arm(model, data, q)
        mujoco.mj_jacSite(model, data, jacp, jacr, site)
        jac = arm.tcp_jacobian(q)
        assert np.max(np.abs(jac[:3] - jacp[:, dofs])) <= 1e-6
        assert np.max(np.abs(jac[3:] - jacr[:, dofs])) <= 1e-6
        numeric = np.stack(
            [(arm.tcp_pose(q + h * e)[0] - arm.tcp_pose(q - h * e)[0]) / (2 * h) for e in np.eye(arm.dof)], 1
        )
        assert np.max(np.abs(jac[:3] - numeric)) <= 1e-6


def test_sphere_jacobians_match_finite_differences(arm):
    h = 1e-6
    for q in random_configs(arm, 10, seed=2):
        jac = arm.sphere_jacobians(q)
        numeric = np.stack(
            [
                (arm.sphere_centers(q + h * e) - arm.sphere_centers(q - h * e)) / (2 * h)
                for e in np.eye(arm.dof)
            ],
            axis=2,
        )
        assert np.max(np.abs(jac - numeric)) <= 1e-6


def test_spheres_sit_on_their_bodies_as_mujoco_places_them(arm, mj):
    model, data = mj
    q = random_configs(arm, 1, seed=3)[0]
    set_arm(model, data, q)
    centers = arm.sphere_centers(q)
    palm = data.body("gripper_link")
    expected = palm.xpos + palm.xmat.reshape(3, 3) @ np.array([0.02, 0.0, 0.0])
    assert np.max(np.abs(centers[7] - expected)) <= 1e-6


def test_velocity_product_term_matches_the_derivative_of_the_jacobian(arm):
    rng = np.random.default_rng(4)
    h = 1e-6
    for q in random_configs(arm, 10, seed=5):
        qd = rng.uniform(-1.0, 1.0, arm.dof)
        rot, pos, axes, points = arm.link_frames(q)
        omega = np.cumsum(qd[:, None] * axes, axis=0)
        odot = np.zeros((arm.dof, 3))
        for k in range(arm.dof):
            for i in range(k):
                odot[k] += qd[i] * np.cross(axes[i], points[k] - points[i])
        tcp = pos[-1] + rot[-1] @ arm.tcp_translation
        _, _, bias = kernels.point_terms(tcp, arm.dof - 1, axes, points, qd, omega, odot)
        numeric = (arm.tcp_jacobian(q + h * qd)[:3] - arm.tcp_jacobian(q - h * qd)[:3]) / (2 * h) @ qd
        assert np.max(np.abs(bias - numeric)) <= 1e-5


def test_orientation_attributes_and_degrees_are_read_as_mujoco_does(tmp_path):
    xml = """<mujoco><compiler angle="degree" eulerseq="zyx"/>
      <default><geom size="0.02"/>
        <default class="arm"><joint axis="0 1 0" range="-90 90"/></default></default>
      <worldbody><body name="base_link">
        <body name="a" pos="0.1 0 0.2" euler="30 20 10" childclass="arm">
          <joint name="j1" axis="0 0 1"/><geom/>
          <body name="b" pos="0.3 0 0" axisangle="1 1 0 40"><joint name="j2" pos="0.01 0 0"/><geom/>
            <body name="c" pos="0.2 0.05 0" xyaxes="0 1 0 -1 0 0.2">
              <joint name="j3" axis="1 0 0"/><geom/>
              <site name="tcp" pos="0.1 0 0" zaxis="0 1 1"/>
            </body></body></body></body></worldbody></mujoco>"""
    path = tmp_path / "arm.xml"
    path.write_text(xml)
    arm = load_arm(path, spheres=())
    model = mujoco.MjModel.from_xml_path(str(path))
    data = mujoco.MjData(model)
    assert arm.lower == pytest.approx(np.radians([-90, -90, -90]))
    for q in np.random.default_rng(6).uniform(-1.5, 1.5, (10, 3)):
        data.qpos[:] = q
        mujoco.mj_kinematics(model, data)
        position, rotation = arm.tcp_pose(q)
        assert np.max(np.abs(position - data.site_xpos[0])) <= 1e-6
        assert np.max(np.abs(rotation - data.site_xmat[0].reshape(3, 3))) <= 1e-6


def test_a_description_that_is_not_an_arm_is_rejected_with_the_reason(tmp_path):
    with pytest.raises(KinematicsError, match="no site 'gripper_tip'"):
        load_arm(ROBOT, tcp_site="gripper_tip")
    with pytest.raises(KinematicsError, match="no body named 'chassis'"):
        load_arm(ROBOT, root_body="chassis")
    with pytest.raises(KinematicsError, match="cannot read it"):
        load_arm(tmp_path / "missing.xml")
    path = tmp_path / "slide.xml"
    path.write_text(
        '<mujoco><worldbody><body name="base_link"><body name="a"><joint name="lift" type="slide" '
        'range="0 1"/><site name="tcp"/></body></body></worldbody></mujoco>'
    )
    with pytest.raises(KinematicsError, match="'lift' is a slide joint"):
        load_arm(path, spheres=())
