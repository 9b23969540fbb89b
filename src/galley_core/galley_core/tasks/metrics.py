"""Evaluation metrics: Kitchen-R's EM, SR, M and P; ET-Plan-Bench's LCS ratio; CleanUpBench's motion metrics.

Kitchen-R (Sec. IV), for N plans with gold plans of n_i steps:

* EM (1) = 1/N sum_i PS_i / n_i, where PS_i counts predicted steps equal, character for character,
  to the gold step at the same position;
* SR: 1 for a step completed within its time limit (base within 10 cm, object within 5 cm);
  reported per step and per episode (an episode succeeds when every step does);
* M (3) = 1/N sum_i 1/n_i sum_j (EM_j + SR_j), with EM_j = 1 when step j was predicted exactly
  (so M lies in [0, 2]);
* P (2) = 1/EM + 1/N sum_i 1/n_i sum_j MSE_j, the mean squared error of a learned policy's actions
  on step j (lower is better; infinite when EM = 0).

Motion metrics (CleanUpBench) are computed from a trajectory sampled in time.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

__all__ = [
    "MotionMetrics",
    "exact_match",
    "lcs_ratio",
    "m_metric",
    "motion_metrics",
    "p_metric",
    "step_matches",
    "success_rates",
]


def step_matches(predicted: Sequence[str], gold: Sequence[str]) -> list[bool]:
    """For each gold step, whether the predicted plan has exactly that string at that position."""
    return [i < len(predicted) and predicted[i] == g for i, g in enumerate(gold)]


def exact_match(predicted: Sequence[Sequence[str]], gold: Sequence[Sequence[str]]) -> float:
    """Kitchen-R's EM (1) over plans; every gold plan must have at least one step.

    Raises:
        ValueError: different numbers of plans, no plans, or an empty gold plan.
    """
    if len(predicted) != len(gold) or not gold:
        raise ValueError(
            f"exact_match needs as many predicted as gold plans (> 0), got {len(predicted)} and {len(gold)}"
        )
    total = 0.0
    for pred, ref in zip(predicted, gold, strict=True):
        if not ref:
            raise ValueError("a gold plan has no steps")
        total += sum(step_matches(pred, ref)) / len(ref)
    return total / len(gold)


def success_rates(step_success: Sequence[Sequence[bool]]) -> tuple[float, float]:
    """(SR over all steps, SR over episodes) from per-episode lists of step outcomes."""
    steps = [s for episode in step_success for s in episode]
    if not steps:
        raise ValueError("success_rates needs at least one step")
    per_step = sum(steps) / len(steps)
    per_episode = sum(all(episode) for episode in step_success) / len(step_success)
    return per_step, per_episode


def m_metric(step_em: Sequence[Sequence[bool]], step_success: Sequence[Sequence[bool]]) -> float:
    """Kitchen-R's M (3): per episode, the mean over its gold steps of EM_j + SR_j; averaged over episodes."""
    if len(step_em) != len(step_success) or not step_em:
        raise ValueError("m_metric needs the same number (> 0) of episodes for EM and SR")
    total = 0.0
    for em, sr in zip(step_em, step_success, strict=True):
        if len(em) != len(sr) or not em:
            raise ValueError("m_metric needs EM and SR for every gold step of an episode")
        total += sum(float(a) + float(b) for a, b in zip(em, sr, strict=True)) / len(em)
    return total / len(step_em)


def p_metric(em: float, step_mse: Sequence[Sequence[float]]) -> float:
    """Kitchen-R's P (2) = 1/EM + mean over episodes of the mean per-step action MSE."""
    if not step_mse or any(not episode for episode in step_mse):
        raise ValueError("p_metric needs at least one step MSE per episode")
    mse = sum(sum(episode) / len(episode) for episode in step_mse) / len(step_mse)
    return (math.inf if em <= 0.0 else 1.0 / em) + mse


def lcs_ratio(predicted: Sequence[str], gold: Sequence[str]) -> float:
    """ET-Plan-Bench's LCS ratio: longest common subsequence of steps over the gold plan's length."""
    if not gold:
        raise ValueError("lcs_ratio needs a non-empty gold plan")
    table = [[0] * (len(gold) + 1) for _ in range(len(predicted) + 1)]
    for i, p in enumerate(predicted, 1):
        for j, g in enumerate(gold, 1):
            table[i][j] = table[i - 1][j - 1] + 1 if p == g else max(table[i - 1][j], table[i][j - 1])
    return table[-1][-1] / len(gold)


@dataclass(frozen=True)
class MotionMetrics:
    """CleanUpBench's motion metrics of one trajectory (SI units)."""

    path_length_m: float
    finish_time_s: float
    mean_speed_mps: float
    mean_abs_acceleration_mps2: float
    mean_abs_jerk_mps3: float
    collisions: int
    mean_decision_time_s: float | None


def motion_metrics(
    times_s: ArrayLike,
    positions_m: ArrayLike,
    *,
    collisions: int = 0,
    decision_times_s: Sequence[float] = (),
) -> MotionMetrics:
    """Motion metrics of a planar trajectory.

    Args:
        times_s: (T,) increasing sample times.
        positions_m: (T, 2) positions.
        collisions: number of collision events with static obstacles (from the simulator's contacts).
        decision_times_s: computation time of each decision of the policy, if measured.

    Speeds, accelerations and jerks are finite differences of the samples; their means are of
    magnitudes. Fewer than four samples give zeros where a derivative cannot be formed.
    """
    t = np.asarray(times_s, dtype=float)
    p = np.asarray(positions_m, dtype=float).reshape(len(t), -1)
    if len(t) < 2:
        raise ValueError("motion_metrics needs at least two samples")
    if np.any(np.diff(t) <= 0):
        raise ValueError("motion_metrics needs strictly increasing times")
    steps = np.linalg.norm(np.diff(p, axis=0), axis=1)
    velocity = np.diff(p, axis=0) / np.diff(t)[:, None]
    mid_t = (t[1:] + t[:-1]) / 2
    acceleration = np.diff(velocity, axis=0) / np.diff(mid_t)[:, None] if len(t) >= 3 else np.zeros((0, 2))
    jerk = (
        np.diff(acceleration, axis=0) / np.diff((mid_t[1:] + mid_t[:-1]) / 2)[:, None]
        if len(t) >= 4
        else np.zeros((0, 2))
    )

    def mean_norm(values: np.ndarray) -> float:
        return float(np.linalg.norm(values, axis=1).mean()) if len(values) else 0.0

    return MotionMetrics(
        path_length_m=float(steps.sum()),
        finish_time_s=float(t[-1] - t[0]),
        mean_speed_mps=mean_norm(velocity),
        mean_abs_acceleration_mps2=mean_norm(acceleration),
        mean_abs_jerk_mps3=mean_norm(jerk),
        collisions=collisions,
        mean_decision_time_s=float(np.mean(decision_times_s)) if len(decision_times_s) else None,
    )
