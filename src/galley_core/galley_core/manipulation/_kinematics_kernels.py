# Kernels take many positional arguments: numba compiles plain arguments best.
# ruff: noqa: PLR0917
"""Compiled kernels of the arm's kinematics: link frames, point Jacobians, orientation errors.

Compiled with numba where it is installed (:mod:`galley_core._jit`). Arrays are float64 and
C-contiguous; the public API is in :mod:`.kinematics`.

Conventions: link ``k`` is moved by joint ``k``; ``axes_w[k]`` and ``points_w[k]`` are joint
``k``'s axis and a point on it in the root frame. The linear velocity of a point ``x`` fixed to
link ``l`` is ``sum_{i<=l} qd_i a_i x (x - o_i)``; the velocity-product term ``J'qd`` (what the
point's acceleration is when ``qdd = 0``) is

    sum_{i<=l} qd_i [ (w_{i-1} x a_i) x (x - o_i) + a_i x (xd - od_i) ]

with ``w_{i-1}`` the angular velocity of link ``i - 1`` and ``od_i`` the velocity of ``o_i``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from galley_core._jit import njit

__all__ = ["cross", "link_frames", "point_jacobian", "point_terms", "rotation_error"]


@njit
def cross(a: Any, b: Any) -> Any:
    out = np.empty(3)
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]
    return out


@njit
def _axis_rotation(axis: Any, angle: float) -> Any:
    """Rotation matrix of ``angle`` about the unit ``axis`` (Rodrigues)."""
    x, y, z = axis[0], axis[1], axis[2]
    c, s = math.cos(angle), math.sin(angle)
    t = 1.0 - c
    r = np.empty((3, 3))
    r[0, 0] = t * x * x + c
    r[0, 1] = t * x * y - s * z
    r[0, 2] = t * x * z + s * y
    r[1, 0] = t * x * y + s * z
    r[1, 1] = t * y * y + c
    r[1, 2] = t * y * z - s * x
    r[2, 0] = t * x * z - s * y
    r[2, 1] = t * y * z + s * x
    r[2, 2] = t * z * z + c
    return r


@njit
def link_frames(q: Any, fix_r: Any, fix_p: Any, axes: Any, points: Any) -> Any:
    """Link rotations (n, 3, 3) and origins (n, 3), joint axes (n, 3) and axis points (n, 3), root frame."""
    n = q.shape[0]
    rot = np.empty((n, 3, 3))
    pos = np.empty((n, 3))
    axes_w = np.empty((n, 3))
    points_w = np.empty((n, 3))
    r = np.eye(3)
    p = np.zeros(3)
    for k in range(n):
        p = p + r @ fix_p[k]
        r = r @ fix_r[k]
        points_w[k] = p + r @ points[k]
        axes_w[k] = r @ axes[k]
        rj = _axis_rotation(axes[k], q[k])
        p = p + r @ (points[k] - rj @ points[k])
        r = r @ rj
        rot[k] = r
        pos[k] = p
    return rot, pos, axes_w, points_w


@njit
def point_jacobian(x: Any, link: int, axes_w: Any, points_w: Any) -> Any:
    """(3, n) Jacobian of the linear velocity of point ``x`` (root frame) fixed to link ``link``."""
    n = axes_w.shape[0]
    jac = np.zeros((3, n))
    for i in range(link + 1):
        jac[:, i] = cross(axes_w[i], x - points_w[i])
    return jac


@njit
def point_terms(x: Any, link: int, axes_w: Any, points_w: Any, qd: Any, omega: Any, odot: Any) -> Any:
    """Jacobian (3, n), velocity (3,) and velocity-product term J'qd (3,) of a point on ``link``."""
    n = axes_w.shape[0]
    jac = np.zeros((3, n))
    for i in range(link + 1):
        jac[:, i] = cross(axes_w[i], x - points_w[i])
    xd = jac @ qd
    bias = np.zeros(3)
    for i in range(link + 1):
        if qd[i] == 0.0:
            continue
        term = cross(axes_w[i], xd - odot[i])
        if i > 0:
            term += cross(cross(omega[i - 1], axes_w[i]), x - points_w[i])
        bias += qd[i] * term
    return jac, xd, bias


@njit
def _quat_from_matrix(r: Any) -> Any:
    """Unit quaternion (x, y, z, w) of a rotation matrix."""
    q = np.empty(4)
    tr = r[0, 0] + r[1, 1] + r[2, 2]
    if tr > 0.0:
        s = math.sqrt(tr + 1.0) * 2.0
        q[3] = 0.25 * s
        q[0] = (r[2, 1] - r[1, 2]) / s
        q[1] = (r[0, 2] - r[2, 0]) / s
        q[2] = (r[1, 0] - r[0, 1]) / s
    elif r[0, 0] > r[1, 1] and r[0, 0] > r[2, 2]:
        s = math.sqrt(1.0 + r[0, 0] - r[1, 1] - r[2, 2]) * 2.0
        q[3] = (r[2, 1] - r[1, 2]) / s
        q[0] = 0.25 * s
        q[1] = (r[0, 1] + r[1, 0]) / s
        q[2] = (r[0, 2] + r[2, 0]) / s
    elif r[1, 1] > r[2, 2]:
        s = math.sqrt(1.0 + r[1, 1] - r[0, 0] - r[2, 2]) * 2.0
        q[3] = (r[0, 2] - r[2, 0]) / s
        q[0] = (r[0, 1] + r[1, 0]) / s
        q[1] = 0.25 * s
        q[2] = (r[1, 2] + r[2, 1]) / s
    else:
        s = math.sqrt(1.0 + r[2, 2] - r[0, 0] - r[1, 1]) * 2.0
        q[3] = (r[1, 0] - r[0, 1]) / s
        q[0] = (r[0, 2] + r[2, 0]) / s
        q[1] = (r[1, 2] + r[2, 1]) / s
        q[2] = 0.25 * s
    return q / math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])


@njit
def rotation_error(target_quat: Any, r: Any) -> Any:
    """Rotation vector (3,) that turns orientation ``r`` into ``target_quat`` (x, y, z, w), root frame.

    Quaternion feedback: ``q_e = q_target * conj(q)`` on the shorter arc, then its axis times its angle.
    """
    c = _quat_from_matrix(r)
    tx, ty, tz, tw = target_quat[0], target_quat[1], target_quat[2], target_quat[3]
    cx, cy, cz, cw = -c[0], -c[1], -c[2], c[3]
    ex = tw * cx + tx * cw + ty * cz - tz * cy
    ey = tw * cy - tx * cz + ty * cw + tz * cx
    ez = tw * cz + tx * cy - ty * cx + tz * cw
    ew = tw * cw - tx * cx - ty * cy - tz * cz
    if ew < 0.0:
        ex, ey, ez, ew = -ex, -ey, -ez, -ew
    s = math.sqrt(ex * ex + ey * ey + ez * ez)
    out = np.zeros(3)
    if s < 1e-12:
        return out
    angle = 2.0 * math.atan2(s, ew)
    out[0] = ex / s * angle
    out[1] = ey / s * angle
    out[2] = ez / s * angle
    return out
