# The kernels take plain positional arguments: numba compiles those best.
# ruff: noqa: PLR0917
"""Compiled pose work for the simulator's 50 Hz state: relative body poses and object poses as rows.

Compiled with numba where it is installed (:mod:`galley_core._jit`). A row is
(x, y, z, qx, qy, qz, qw); MuJoCo's quaternions are (w, x, y, z) and its rotation matrices
row-major (nbody, 9). The arithmetic is written out in the order the numpy and Python code it
replaced used, so the rows are the same to the last bit.
"""

from __future__ import annotations

from typing import Any

from galley_core._jit import njit

__all__ = ["body_rows", "relative_rows"]


@njit
def relative_rows(xpos: Any, xquat: Any, xmat: Any, parents: Any, children: Any, out: Any) -> None:
    """``out[k]`` = T_parent_child of bodies ``parents[k]``, ``children[k]``.

    Translation ``R_parentᵀ (p_child - p_parent)``, rotation ``conj(q_parent) q_child`` (unit up
    to rounding).
    """
    for k in range(parents.shape[0]):
        p, c = parents[k], children[k]
        dx = xpos[c, 0] - xpos[p, 0]
        dy = xpos[c, 1] - xpos[p, 1]
        dz = xpos[c, 2] - xpos[p, 2]
        for i in range(3):
            out[k, i] = xmat[p, i] * dx + xmat[p, 3 + i] * dy + xmat[p, 6 + i] * dz
        aw, ax, ay, az = xquat[p, 0], xquat[p, 1], xquat[p, 2], xquat[p, 3]
        bw, bx, by, bz = xquat[c, 0], xquat[c, 1], xquat[c, 2], xquat[c, 3]
        out[k, 3] = aw * bx - ax * bw - ay * bz + az * by
        out[k, 4] = aw * by + ax * bz - ay * bw - az * bx
        out[k, 5] = aw * bz - ax * by + ay * bx - az * bw
        out[k, 6] = aw * bw + ax * bx + ay * by + az * bz


@njit
def body_rows(xpos: Any, xquat: Any, bodies: Any, out: Any) -> None:
    """``out[k]`` = the world pose of body ``bodies[k]``."""
    for k in range(bodies.shape[0]):
        b = bodies[k]
        out[k, 0], out[k, 1], out[k, 2] = xpos[b, 0], xpos[b, 1], xpos[b, 2]
        out[k, 3], out[k, 4], out[k, 5], out[k, 6] = xquat[b, 1], xquat[b, 2], xquat[b, 3], xquat[b, 0]
