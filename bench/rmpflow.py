"""Time of one RMPflow evaluation on galley_mm's 6-DoF arm, against a plain-numpy evaluation.

    python bench/rmpflow.py [--quick]

One evaluation: forward kinematics, the tcp and 12 collision-sphere Jacobians with their
velocity-product terms, the leaves (position attractor, quaternion orientation, sphere repulsors
against 3 boxes and 2 balls, joint-limit barriers, posture, damping, velocity cap), the pull-back
and the 6x6 solve. galley's evaluation is the compiled kernel behind ``RmpFlow.acceleration``;
the baseline is the same kernel run as plain Python/numpy (``.py_func``, what runs where numba is
missing), over the same random states. Target (issue 5): <= 0.2 ms per evaluation.
Prints a table and, last, one JSON line.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from galley_core._jit import HAVE_NUMBA
from galley_core.manipulation import _rmp_kernels as kernels
from galley_core.manipulation.kinematics import load_arm
from galley_core.manipulation.poses import top_down_quaternion
from galley_core.manipulation.rmpflow import Obstacles, RmpFlow
from galley_description import ROBOT_XML

POSTURE = np.array([0.0, -0.6, 1.6, 0.0, 0.57, 0.0])


def scene() -> Obstacles:
    """A table in front, a wall to the side, a shelf above; two other objects on the table."""
    return Obstacles(
        box_centers=[[0.9, 0.0, 0.375], [0.3, 0.8, 1.2], [0.7, 0.0, 1.45]],
        box_rotations=[np.eye(3)] * 3,
        box_half_sizes=[[0.45, 0.8, 0.375], [1.0, 0.05, 1.2], [0.2, 0.4, 0.02]],
        ball_centers=[[0.6, 0.12, 0.8], [0.62, -0.15, 0.79]],
        ball_radii=[0.04, 0.05],
    )


def time_per_call(func, args_list, repeats: int) -> float:
    """Median over repeats of the mean time per call, milliseconds."""
    runs = []
    for _ in range(repeats):
        start = time.perf_counter()
        for args in args_list:
            func(*args)
        runs.append((time.perf_counter() - start) / len(args_list) * 1e3)
    return float(np.median(runs))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="fewer evaluations (well under a minute)")
    args = parser.parse_args()
    count, repeats = (500, 3) if args.quick else (5000, 5)

    arm = load_arm(ROBOT_XML)
    rmp = RmpFlow(arm, posture=POSTURE)
    obstacles = scene()
    rng = np.random.default_rng(0)
    states = [
        (arm.clip(POSTURE + rng.uniform(-0.6, 0.6, 6)), rng.uniform(-0.5, 0.5, 6)) for _ in range(count)
    ]
    target, orientation = np.array([0.65, 0.05, 0.85]), top_down_quaternion(0.3)
    p, quat, mode = rmp._target(target, orientation)
    arm_args, obs_args = rmp._args(obstacles, True)
    calls = [(q, qd, *arm_args, p, quat, mode, rmp.posture, *obs_args, rmp._gains) for q, qd in states]
    print(f"compiling (numba: {HAVE_NUMBA}) ...", flush=True)
    kernels.rmp_eval(*calls[0])
    compiled = time_per_call(kernels.rmp_eval, calls, repeats)
    api = time_per_call(
        lambda q, qd: rmp.acceleration(q, qd, target, orientation, obstacles), states, repeats
    )
    plain_func = getattr(kernels.rmp_eval, "py_func", kernels.rmp_eval)
    baseline_calls = calls[: max(50, count // 20)]
    plain = time_per_call(plain_func, baseline_calls, 1)
    rows = [
        ("plain numpy (same kernel, not compiled): baseline", plain, None),
        ("compiled kernel", compiled, 0.2),
        ("RmpFlow.acceleration (argument checks included)", api, 0.2),
    ]
    spheres, boxes, balls = len(arm.sphere_radius), len(obstacles.box_centers), len(obstacles.ball_radii)
    print(
        f"one RMPflow evaluation: 6 joints, {spheres} spheres, {boxes} boxes + {balls} balls, {count} states"
    )
    print(f"{'evaluation':52s} {'ms':>8s} {'speed-up':>9s} {'target':>10s}")
    for name, ms, goal in rows:
        mark = "" if goal is None else (f"<= {goal:g} " + ("ok" if ms <= goal else "MISSED"))
        print(f"{name:52s} {ms:8.4f} {plain / ms:8.1f}x {mark:>10s}")
    print(
        json.dumps(
            {
                "rmpflow_eval_ms": round(compiled, 4),
                "rmpflow_api_ms": round(api, 4),
                "rmpflow_plain_numpy_ms": round(plain, 4),
                "speedup_vs_plain_numpy": round(plain / compiled, 1),
                "collision_spheres": spheres,
                "obstacles": boxes + balls,
            }
        )
    )


if __name__ == "__main__":
    main()
