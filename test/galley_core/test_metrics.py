"""Metrics on hand-computed examples (Kitchen-R eqs. 1-3, LCS ratio, motion metrics)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from galley_core.tasks.metrics import (
    exact_match,
    lcs_ratio,
    m_metric,
    motion_metrics,
    p_metric,
    step_matches,
    success_rates,
)

GOLD_A = ["move to the blue zone", "pick the bowl", "move to the green zone", "place the bowl"]
GOLD_B = ["move to the red zone", "pick the cup", "move to the purple zone", "place the cup"]


def test_exact_match_counts_positionwise_character_exact_steps():
    predicted_a = ["move to the blue zone", "pick the bowl", "move to the red zone", "place the bowl"]  # 3/4
    predicted_b = ["pick the cup", "move to the red zone"]  # shifted: 0/4
    assert step_matches(predicted_a, GOLD_A) == [True, True, False, True]
    assert exact_match([predicted_a, predicted_b], [GOLD_A, GOLD_B]) == pytest.approx((3 / 4 + 0) / 2)
    assert exact_match([GOLD_A, GOLD_B], [GOLD_A, GOLD_B]) == 1.0
    # Extra predicted steps do not add; a trailing space is not an exact match.
    assert exact_match([[*GOLD_A, "pick the cup"]], [GOLD_A]) == 1.0
    assert exact_match([["move to the blue zone "]], [["move to the blue zone"]]) == 0.0
    with pytest.raises(ValueError, match="as many predicted as gold"):
        exact_match([GOLD_A], [GOLD_A, GOLD_B])


def test_success_rates_and_m():
    sr = [[True, True, False, True], [True, True, True, True]]
    assert success_rates(sr) == (7 / 8, 1 / 2)
    em = [[True, True, False, True], [False, False, False, False]]
    # episode 1: (2 + 2 + 0 + 2) / 4 = 1.5; episode 2: (1 + 1 + 1 + 1) / 4 = 1.0; M = 1.25
    assert m_metric(em, sr) == pytest.approx(1.25)


def test_p_is_inverse_em_plus_mean_step_mse():
    # EM 0.5 -> 2; MSE: episode means 0.1 and 0.3 -> 0.2; P = 2.2
    assert p_metric(0.5, [[0.1, 0.1], [0.2, 0.4]]) == pytest.approx(2.2)
    assert p_metric(0.0, [[0.1]]) == math.inf


def test_lcs_ratio():
    assert lcs_ratio(["a", "x", "b", "c"], ["a", "b", "c", "d"]) == pytest.approx(3 / 4)
    assert lcs_ratio([], ["a"]) == 0.0


def test_motion_metrics_of_a_constant_acceleration():
    t = np.linspace(0.0, 2.0, 201)
    x = 0.5 * 0.3 * t**2  # a = 0.3 m/s^2
    m = motion_metrics(t, np.stack([x, np.zeros_like(x)], 1), collisions=2, decision_times_s=[0.01, 0.03])
    assert m.path_length_m == pytest.approx(0.6)
    assert m.finish_time_s == pytest.approx(2.0)
    assert m.mean_speed_mps == pytest.approx(0.3, rel=1e-3)  # mean of 0.3 t over [0, 2]
    assert m.mean_abs_acceleration_mps2 == pytest.approx(0.3, rel=1e-6)
    assert m.mean_abs_jerk_mps3 == pytest.approx(0.0, abs=1e-6)
    assert m.collisions == 2 and m.mean_decision_time_s == pytest.approx(0.02)
