# Kernels take many positional arguments: numba compiles plain arguments best.
# ruff: noqa: PLR0917
"""Compiled kernels of the shape models: signed distances of posed points, the Huber cost.

Compiled with numba where it is installed (:mod:`galley_core._jit`). A pose fit evaluates a
shape's distances some fifty times for a cluster of a few hundred points, and a frame fits every
cluster against every object: as numpy expressions each evaluation was a dozen array operations
on small arrays, dominated by their overhead. Here one call transforms the points into the
object frame and evaluates the distance point by point, for several poses at once.

Shapes are coded as :data:`SHAPE_CODES` and sized by three numbers as
:class:`galley_core.scene.ObjectSpec` gives them (sphere: radius; box: x, y, z; cylinder: radius,
height; bowl and plate: radius, height, wall; fork: length, width, thickness). The object frame has
its origin at the bottom centre, z up; the public API is :class:`.shapes.ShapeModel`.
"""

from __future__ import annotations

import math
from typing import Any

from galley_core._jit import njit, njit_inline

__all__ = ["SHAPE_CODES", "huber_cost", "posed_distances"]

SPHERE, BOX, CYLINDER, BOWL, PLATE, FORK = range(6)
SHAPE_CODES = {"sphere": SPHERE, "box": BOX, "cylinder": CYLINDER, "bowl": BOWL, "plate": PLATE, "fork": FORK}
#: The fork, as galley_sim.mjcf builds it: the handle's share of the length, the handle's half
#: width as a share of the width, the head's half thickness as a share of the thickness.
FORK_HANDLE_LENGTH, FORK_HANDLE_WIDTH, FORK_HEAD_THICKNESS = 0.62, 0.275, 0.35


@njit_inline
def _box(
    x: float, y: float, z: float, cx: float, cy: float, cz: float, hx: float, hy: float, hz: float
) -> float:
    qx, qy, qz = abs(x - cx) - hx, abs(y - cy) - hy, abs(z - cz) - hz
    ox, oy, oz = max(qx, 0.0), max(qy, 0.0), max(qz, 0.0)
    return math.sqrt(ox * ox + oy * oy + oz * oz) + min(max(qx, qy, qz), 0.0)


@njit_inline
def _radial(rho: float, z: float, rho_center: float, rho_half: float, z0: float, z1: float) -> float:
    """A solid of revolution whose section is the rectangle rho_center +- rho_half, z0..z1."""
    dr = abs(rho - rho_center) - rho_half
    dz = abs(z - (z0 + z1) / 2.0) - (z1 - z0) / 2.0
    return math.hypot(max(dr, 0.0), max(dz, 0.0)) + min(max(dr, dz), 0.0)


@njit_inline
def _distance(code: int, s0: float, s1: float, s2: float, x: float, y: float, z: float) -> Any:
    """Signed distance (m, negative inside) of one point in the object frame."""
    if code == SPHERE:
        dz = z - s0
        return math.sqrt(x * x + y * y + dz * dz) - s0
    if code == BOX:
        return _box(x, y, z, 0.0, 0.0, s2 / 2.0, s0 / 2.0, s1 / 2.0, s2 / 2.0)
    if code == FORK:
        handle = FORK_HANDLE_LENGTH * s0
        head = s0 - handle
        return min(
            _box(
                x,
                y,
                z,
                -s0 / 2.0 + handle / 2.0,
                0.0,
                s2 / 2.0,
                handle / 2.0,
                FORK_HANDLE_WIDTH * s1,
                s2 / 2.0,
            ),
            _box(
                x,
                y,
                z,
                s0 / 2.0 - head / 2.0,
                0.0,
                s2 * FORK_HEAD_THICKNESS,
                head / 2.0,
                s1 / 2.0,
                s2 * FORK_HEAD_THICKNESS,
            ),
        )
    rho = math.hypot(x, y)
    if code == CYLINDER:
        return _radial(rho, z, 0.0, s0, 0.0, s1)
    # bowl and plate: a base disc (inside the rim for a bowl) and a rim ring of the wall's thickness
    base = s0 - s2 if code == BOWL else s0
    disc = _radial(rho, z, 0.0, base, 0.0, s2)
    rim = _radial(rho, z, s0 - s2 / 2.0, s2 / 2.0, s2, s1)
    return min(disc, rim)


@njit
def posed_distances(code: int, size: Any, points: Any, poses: Any, out: Any) -> None:
    """``out[k, i]``: the distance of map point ``points[i]`` to the shape at ``poses[k]`` (x, y, z, yaw).

    ``points`` (N, 3), ``poses`` (K, 4) and ``out`` (K, N) are float64.
    """
    s0, s1, s2 = size[0], size[1], size[2]
    for k in range(poses.shape[0]):
        px, py, pz, yaw = poses[k, 0], poses[k, 1], poses[k, 2], poses[k, 3]
        c, s = math.cos(yaw), math.sin(yaw)
        for i in range(points.shape[0]):
            dx, dy = points[i, 0] - px, points[i, 1] - py
            out[k, i] = _distance(code, s0, s1, s2, c * dx + s * dy, -s * dx + c * dy, points[i, 2] - pz)


@njit
def huber_cost(r: Any, delta: float) -> float:
    """Sum of the Huber loss of residuals ``r`` (m): quadratic within ``delta``, linear beyond."""
    total = 0.0
    for value in r:
        a = abs(value)
        total += 0.5 * a * a if a <= delta else delta * (a - 0.5 * delta)
    return total
