"""Fixtures of the simulator tests: scripted top-down grasps by damped-least-squares IK.

Test tooling only: galley's arm controller (RMPflow) is a separate component. ``grasp_waypoints``
computes the joint positions that put the tool centre point at a pose with the gripper pointing
down, so that tests can drive the arm with plain /arm/joint_command messages.
"""

from __future__ import annotations

import math

import mujoco
import numpy as np
import pytest

from galley_core.episode import Episode, ObjectPlacement
from galley_core.geometry import Pose2D, Transform
from galley_core.scene import load_scene
from galley_sim.simulator import ARM_JOINTS, KitchenSim


@pytest.fixture(scope="module")
def kitchen(request):
    """The shipped kitchen, config/scenes/kitchen.yaml."""
    return load_scene(request.config.rootpath / "config" / "scenes" / "kitchen.yaml")


@pytest.fixture(scope="module")
def episode_at(kitchen):
    """Episodes of the shipped kitchen: ``episode_at((x, y, yaw), objects)``, the robot there, only
    ``objects`` placed."""

    def make(robot: tuple[float, float, float], objects: tuple[ObjectPlacement, ...] = ()) -> Episode:
        return Episode("kitchen", 0, Pose2D(*robot), objects, {})

    return make


def top_down_rotation(closing_yaw: float) -> np.ndarray:
    """Rotation matrix (world) of the gripper: approach axis x down, closing axis y at ``closing_yaw``."""
    x = np.array([0.0, 0.0, -1.0])
    y = np.array([math.cos(closing_yaw), math.sin(closing_yaw), 0.0])
    return np.stack([x, y, np.cross(x, y)], axis=1)


def solve_ik(
    sim: KitchenSim, position: np.ndarray, rotation: np.ndarray, iterations: int = 300
) -> dict[str, float]:
    """Arm joint positions that put site ``tcp`` at ``position`` with orientation ``rotation``.

    Raises:
        AssertionError: the target is not reached within 5 mm and 0.05 rad.
    """
    m = sim.model
    d = mujoco.MjData(m)
    d.qpos[:] = sim.data.qpos
    dofs = [m.joint(n).dofadr[0] for n in ARM_JOINTS]
    qadr = [m.joint(n).qposadr[0] for n in ARM_JOINTS]
    # Start from a working posture, not the tucked one (the shoulder sits at its limit there).
    d.qpos[qadr] = (0.0, -0.6, 1.6, 0.0, 0.57, 0.0)
    site = m.site("tcp").id
    jacp, jacr = np.zeros((3, m.nv)), np.zeros((3, m.nv))
    for _ in range(iterations):
        mujoco.mj_kinematics(m, d)
        mujoco.mj_comPos(m, d)
        err_p = position - d.site_xpos[site]
        current = d.site_xmat[site].reshape(3, 3)
        err_r = 0.5 * sum(np.cross(current[:, i], rotation[:, i]) for i in range(3))
        if np.linalg.norm(err_p) < 1e-4 and np.linalg.norm(err_r) < 1e-3:
            break
        mujoco.mj_jacSite(m, d, jacp, jacr, site)
        jac = np.vstack([jacp[:, dofs], jacr[:, dofs]])
        err = np.concatenate([err_p, err_r])
        dq = jac.T @ np.linalg.solve(jac @ jac.T + 1e-4 * np.eye(6), err)
        for i, adr in enumerate(qadr):
            lo, hi = m.jnt_range[m.joint(ARM_JOINTS[i]).id]
            d.qpos[adr] = np.clip(d.qpos[adr] + dq[i], lo, hi)
    mujoco.mj_kinematics(m, d)
    assert np.linalg.norm(position - d.site_xpos[site]) < 5e-3, "IK did not reach the position"
    return {n: float(d.qpos[a]) for n, a in zip(ARM_JOINTS, qadr, strict=True)}


def _grasp_waypoints(sim: KitchenSim, name: str) -> dict[str, dict[str, float]]:
    """Joint targets for above / at / lifted of the scene's grasp of object ``name`` where it lies now."""
    spec = sim.scene.object(name)
    pose: Transform = sim.object_poses()[name]
    grasp = pose.apply(np.array(spec.grasp_offset))
    closing = pose.yaw() + spec.grasp_yaw
    rotation = top_down_rotation(closing)
    up = np.array([0.0, 0.0, 0.12])
    return {
        "above": solve_ik(sim, grasp + up, rotation),
        "at": solve_ik(sim, grasp, rotation),
        "lifted": solve_ik(sim, grasp + up + np.array([0.0, 0.0, 0.05]), rotation),
    }


@pytest.fixture
def grasp_waypoints():
    """``grasp_waypoints(sim, name)``: joint targets above, at and lifted from object ``name``'s grasp."""
    return _grasp_waypoints
