"""The sliding-window rate estimator over simulated time."""

from __future__ import annotations

import pytest

from galley_core.monitoring import SlidingWindowRate

S = 1_000_000_000


def test_a_steady_stream_measures_its_rate_once_a_window_has_passed():
    rate = SlidingWindowRate(1.0)
    rate.start(0)
    for i in range(1, 31):  # 10 Hz for 3 s
        rate.add(i * S // 10)
    assert not rate.ready(S // 2)
    assert rate.ready(S)
    assert rate.rate_hz(3 * S) == pytest.approx(10.0)
    assert rate.rate_hz(3 * S + S // 2) == pytest.approx(5.0)  # half the window is silent
    assert rate.rate_hz(5 * S) == 0.0


def test_the_window_is_half_open_and_restart_forgets():
    rate = SlidingWindowRate(0.5)
    rate.start(0)
    rate.add(S)  # at exactly now - window: outside (t - w, t]
    assert rate.rate_hz(S + S // 2) == 0.0
    rate.add(2 * S)
    rate.start(2 * S)
    assert rate.rate_hz(2 * S) == 0.0 and not rate.ready(2 * S)
    assert rate.total == 2


def test_a_window_must_be_positive():
    with pytest.raises(ValueError, match="window_s"):
        SlidingWindowRate(0.0)


def test_arrivals_after_the_queried_time_are_not_counted():
    rate = SlidingWindowRate(1.0)
    rate.start(0)
    for t in (1.2, 1.5, 1.9, 2.4, 2.6):
        rate.add(round(t * S))
    assert rate.rate_hz(2 * S) == pytest.approx(3.0)  # 1.2, 1.5, 1.9 in (1, 2]; not 2.4 or 2.6
    assert rate.rate_hz(round(2.5 * S)) == pytest.approx(2.0)  # 1.9 and 2.4 in (1.5, 2.5]; 1.5 is not
