# Kernels take many positional arguments and branch a lot: numba compiles plain loops best.
# ruff: noqa: PLR0912, PLR0915, PLR0917
"""Compiled kernels of RMPflow on the arm: one evaluation of the combined policies, and integration.

Compiled with numba where it is installed (:mod:`galley_core._jit`). Arrays are float64 and
C-contiguous; the public API is in :mod:`.rmpflow`, the kinematics in :mod:`._kinematics_kernels`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from galley_core._jit import njit
from galley_core.manipulation._kinematics_kernels import cross, link_frames, point_terms, rotation_error

# Indices into the gains vector of rmp_eval (built by rmpflow.RmpFlowConfig.gains()).
G_TARGET_P, G_TARGET_D, G_TARGET_EPS = 0, 1, 2
G_TARGET_MMIN, G_TARGET_MMAX, G_TARGET_MLEN, G_TARGET_AMIN = 3, 4, 5, 6
G_TARGET_BOOST, G_TARGET_BLEN = 7, 8
G_ORIENT_P, G_ORIENT_D, G_ORIENT_M, G_ORIENT_BOOST, G_ORIENT_BLEN = 9, 10, 11, 12, 13
G_COLL_REP, G_COLL_REPLEN, G_COLL_DAMP, G_COLL_DAMPLEN = 14, 15, 16, 17
G_COLL_M, G_COLL_RADIUS, G_COLL_VGATE = 18, 19, 20
G_JL_REP, G_JL_REPLEN, G_JL_DAMP, G_JL_DAMPLEN, G_JL_M, G_JL_RADIUS, G_JL_BUFFER = 21, 22, 23, 24, 25, 26, 27
G_CS_P, G_CS_D, G_CS_M, G_CS_THRESH = 28, 29, 30, 31
G_DAMP_D, G_DAMP_M, G_INERTIA = 32, 33, 34
G_VMAX, G_VREGION, G_VGAIN, G_VMETRIC = 35, 36, 37, 38
G_AMAX = 39
N_GAINS = 40

#: Bits of ``mode``: which task-space targets are active.
MODE_POSITION = 1
MODE_ORIENTATION = 2


@njit
def _barrier(
    x: float,
    xd: float,
    rep: float,
    rep_len: float,
    damp: float,
    damp_len: float,
    metric: float,
    radius: float,
    gate_len: float,
) -> Any:
    """Acceleration and metric of a 1-D barrier leaf on a distance ``x`` (x > 0 is free).

    ``a = rep exp(-x / rep_len) - damp min(xd, 0) / (x / damp_len + 0.1)``;
    ``m = metric (1 - x / radius)^2 s(-xd / gate_len)`` with the logistic ``s``: full weight when
    approaching, fading when moving away; zero beyond ``radius``.
    """
    xc = max(x, 1e-4)
    a = rep * math.exp(-xc / rep_len)
    if xd < 0.0:
        a -= damp * xd / (xc / damp_len + 0.1)
    w = 1.0 - x / radius
    z = -xd / gate_len
    gate = 1.0 / (1.0 + math.exp(-z)) if z > -30.0 else 0.0
    return a, metric * w * w * gate


@njit
def rmp_eval(
    q: Any,
    qd: Any,
    fix_r: Any,
    fix_p: Any,
    axes: Any,
    points: Any,
    tcp_r: Any,
    tcp_p: Any,
    sph_link: Any,
    sph_c: Any,
    sph_r: Any,
    sph_on: Any,
    lower: Any,
    upper: Any,
    target_p: Any,
    target_quat: Any,
    mode: int,
    posture: Any,
    box_c: Any,
    box_r: Any,
    box_h: Any,
    ball_c: Any,
    ball_r: Any,
    g: Any,
) -> Any:
    """One RMPflow evaluation: joint accelerations (n,) and the smallest sphere clearance (m).

    Leaves are pulled back with ``f = sum J^T M_i (a_i - J'qd)`` and ``M = sum J^T M_i J``, then
    ``qdd = M^-1 f`` (M is positive definite: the damping and inertia terms are), capped in norm.
    """
    n = q.shape[0]
    rot, pos, axes_w, points_w = link_frames(q, fix_r, fix_p, axes, points)
    omega = np.zeros((n, 3))
    odot = np.zeros((n, 3))
    w = np.zeros(3)
    for k in range(n):
        v = np.zeros(3)
        for i in range(k):
            v += qd[i] * cross(axes_w[i], points_w[k] - points_w[i])
        odot[k] = v
        w = w + qd[k] * axes_w[k]
        omega[k] = w
    big_m = np.zeros((n, n))
    f = np.zeros(n)

    # End-effector position attractor: soft-normalised, metric growing near the target.
    tcp = pos[n - 1] + rot[n - 1] @ tcp_p
    dist = 0.0
    if mode & MODE_POSITION:
        jac, xd, bias = point_terms(tcp, n - 1, axes_w, points_w, qd, omega, odot)
        e = target_p - tcp
        dist = math.sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2])
        a = g[G_TARGET_P] * e / (dist + g[G_TARGET_EPS]) - g[G_TARGET_D] * xd
        alpha = max(math.exp(-dist * dist / (2.0 * g[G_TARGET_MLEN] ** 2)), g[G_TARGET_AMIN])
        m = alpha * g[G_TARGET_MMAX] + (1.0 - alpha) * g[G_TARGET_MMIN]
        m *= 1.0 + g[G_TARGET_BOOST] * math.exp(-dist * dist / (2.0 * g[G_TARGET_BLEN] ** 2))
        big_m += m * (jac.T @ jac)
        f += m * (jac.T @ (a - bias))

    # Orientation by quaternion feedback; its metric grows as the position target comes near.
    if mode & MODE_ORIENTATION:
        e_r = rotation_error(target_quat, rot[n - 1] @ tcp_r)
        bias = np.zeros(3)
        for i in range(1, n):
            bias += qd[i] * cross(omega[i - 1], axes_w[i])
        a = g[G_ORIENT_P] * e_r - g[G_ORIENT_D] * omega[n - 1]
        m = g[G_ORIENT_M] * (1.0 + g[G_ORIENT_BOOST] * math.exp(-dist * dist / (2.0 * g[G_ORIENT_BLEN] ** 2)))
        jr = axes_w.T.copy()
        big_m += m * (jr.T @ jr)
        f += m * (jr.T @ (a - bias))

    # Obstacle repulsors: every collision sphere against every box and ball, on the signed distance.
    clearance = np.inf
    for s in range(sph_r.shape[0]):
        if not sph_on[s]:
            continue
        link = sph_link[s]
        c = pos[link] + rot[link] @ sph_c[s]
        jac = np.zeros((3, n))
        have_terms = False
        xd = np.zeros(3)
        bias = np.zeros(3)
        for b in range(box_h.shape[0] + ball_r.shape[0]):
            if b < box_h.shape[0]:
                local = box_r[b].T @ (c - box_c[b])
                h = box_h[b]
                outside = np.zeros(3)
                for k in range(3):
                    outside[k] = local[k] - min(max(local[k], -h[k]), h[k])
                d_out = math.sqrt(outside[0] ** 2 + outside[1] ** 2 + outside[2] ** 2)
                if d_out > 1e-9:
                    normal_local = outside / d_out
                    d = d_out - sph_r[s]
                else:  # centre inside: leave through the nearest face
                    best, axis = np.inf, 0
                    for k in range(3):
                        depth = h[k] - abs(local[k])
                        if depth < best:
                            best, axis = depth, k
                    normal_local = np.zeros(3)
                    normal_local[axis] = 1.0 if local[axis] >= 0.0 else -1.0
                    d = -best - sph_r[s]
                normal = box_r[b] @ normal_local
            else:
                o = b - box_h.shape[0]
                diff = c - ball_c[o]
                dc = math.sqrt(diff[0] ** 2 + diff[1] ** 2 + diff[2] ** 2)
                normal = diff / dc if dc > 1e-9 else np.array([0.0, 0.0, 1.0])
                d = dc - sph_r[s] - ball_r[o]
            clearance = min(clearance, d)
            if d >= g[G_COLL_RADIUS]:
                continue
            if not have_terms:
                jac, xd, bias = point_terms(c, link, axes_w, points_w, qd, omega, odot)
                have_terms = True
            jd = normal @ jac
            a, m = _barrier(
                d,
                normal @ xd,
                g[G_COLL_REP],
                g[G_COLL_REPLEN],
                g[G_COLL_DAMP],
                g[G_COLL_DAMPLEN],
                g[G_COLL_M],
                g[G_COLL_RADIUS],
                g[G_COLL_VGATE],
            )
            if m > 0.0:
                big_m += m * np.outer(jd, jd)
                f += m * (a - normal @ bias) * jd

    # Joint-limit barriers (lower and upper, inside a buffer), c-space posture, damping, velocity cap.
    for j in range(n):
        for side in (1.0, -1.0):
            x = q[j] - lower[j] - g[G_JL_BUFFER] if side > 0 else upper[j] - g[G_JL_BUFFER] - q[j]
            if x >= g[G_JL_RADIUS]:
                continue
            a, m = _barrier(
                x,
                side * qd[j],
                g[G_JL_REP],
                g[G_JL_REPLEN],
                g[G_JL_DAMP],
                g[G_JL_DAMPLEN],
                g[G_JL_M],
                g[G_JL_RADIUS],
                0.05,
            )
            big_m[j, j] += m
            f[j] += side * m * a
        e = posture[j] - q[j]
        if abs(e) > g[G_CS_THRESH]:
            e = g[G_CS_THRESH] * (1.0 if e > 0 else -1.0)
        big_m[j, j] += g[G_CS_M] + g[G_DAMP_M] + g[G_INERTIA]
        f[j] += g[G_CS_M] * (g[G_CS_P] * e - g[G_CS_D] * qd[j]) - g[G_DAMP_M] * g[G_DAMP_D] * qd[j]
        excess = abs(qd[j]) - (g[G_VMAX] - g[G_VREGION])
        if excess > 0.0:
            m = g[G_VMETRIC] * min(excess / g[G_VREGION], 1.0)
            big_m[j, j] += m
            f[j] -= m * g[G_VGAIN] * excess * (1.0 if qd[j] > 0 else -1.0)

    qdd = np.linalg.solve(big_m, f)
    norm = math.sqrt(np.sum(qdd * qdd))
    if norm > g[G_AMAX]:
        qdd *= g[G_AMAX] / norm
    return qdd, clearance


@njit
def rmp_integrate(
    q: Any,
    qd: Any,
    duration: float,
    max_step: float,
    fix_r: Any,
    fix_p: Any,
    axes: Any,
    points: Any,
    tcp_r: Any,
    tcp_p: Any,
    sph_link: Any,
    sph_c: Any,
    sph_r: Any,
    sph_on: Any,
    lower: Any,
    upper: Any,
    target_p: Any,
    target_quat: Any,
    mode: int,
    posture: Any,
    box_c: Any,
    box_r: Any,
    box_h: Any,
    ball_c: Any,
    ball_r: Any,
    g: Any,
) -> Any:
    """Integrate RMPflow for ``duration`` seconds in equal substeps of at most ``max_step``.

    Semi-implicit Euler; joint speeds are clipped to the velocity cap and positions to the joint
    limits (a joint that reaches a limit stops). Returns (q, qd, smallest clearance seen).
    """
    steps = max(1, math.ceil(duration / max_step - 1e-9))
    dt = duration / steps
    q = q.copy()
    qd = qd.copy()
    clearance = np.inf
    vmax = g[G_VMAX]
    for _ in range(steps):
        qdd, c = rmp_eval(
            q,
            qd,
            fix_r,
            fix_p,
            axes,
            points,
            tcp_r,
            tcp_p,
            sph_link,
            sph_c,
            sph_r,
            sph_on,
            lower,
            upper,
            target_p,
            target_quat,
            mode,
            posture,
            box_c,
            box_r,
            box_h,
            ball_c,
            ball_r,
            g,
        )
        clearance = min(clearance, c)
        for j in range(q.shape[0]):
            v = min(max(qd[j] + qdd[j] * dt, -vmax), vmax)
            x = q[j] + v * dt
            if x < lower[j]:
                x, v = lower[j], 0.0
            elif x > upper[j]:
                x, v = upper[j], 0.0
            q[j] = x
            qd[j] = v
    return q, qd, clearance
