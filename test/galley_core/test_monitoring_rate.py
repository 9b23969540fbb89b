"""The sliding-window rate estimator over simulated time, on the messages' stamps."""

from __future__ import annotations

import pytest

from galley_core.monitoring import SlidingWindowRate

S = 1_000_000_000


def test_a_steady_stream_measures_its_rate_once_a_window_has_passed_and_zero_once_silent():
    rate = SlidingWindowRate(1.0)
    rate.start(0)
    for i in range(1, 31):  # 10 Hz for 3 s
        rate.add(i * S // 10)
        if i == 5:
            assert not rate.ready(S // 2)
    assert rate.ready(3 * S)
    assert rate.rate_hz(3 * S) == pytest.approx(10.0)
    assert rate.rate_hz(3 * S + S // 2) == pytest.approx(10.0)  # measured up to the newest stamp
    assert rate.rate_hz(4 * S) == 0.0  # nothing stamped for a whole window: silent
    assert rate.rate_hz(5 * S) == 0.0


def test_messages_delivered_late_or_out_of_order_count_at_their_stamps():
    """On a loaded machine the monitor's clock runs ahead of what it has received."""
    late = SlidingWindowRate(1.0)
    late.start(0)
    stamps = [i * S // 50 for i in range(1, 101)]  # 50 Hz for 2 s ...
    for i in range(0, 100, 4):  # ... delivered in bursts of four, the last burst reversed
        for t in reversed(stamps[i : i + 4]) if i == 96 else stamps[i : i + 4]:
            late.add(t)
    lagging_now = 2 * S + 3 * S // 10  # 0.3 s past the newest stamp
    assert late.ready(lagging_now) and late.rate_hz(lagging_now) == pytest.approx(50.0)
    halved = SlidingWindowRate(1.0)  # a producer that really slows down is still caught
    halved.start(0)
    for i in range(1, 51):
        halved.add(i * S // 25)
    assert halved.rate_hz(2 * S + 3 * S // 10) == pytest.approx(25.0)


def test_the_window_is_half_open_and_a_restart_forgets_and_ignores_older_stamps():
    rate = SlidingWindowRate(0.5)
    rate.start(0)
    rate.add(S)
    rate.add(S + S // 2)  # (1.0, 1.5]: the one at 1.0 lies at the window's open end
    assert rate.rate_hz(S + S // 2) == pytest.approx(2.0)
    rate.start(2 * S)
    rate.add(2 * S)  # stamped at the start: before the measurement
    assert rate.rate_hz(2 * S) == 0.0 and not rate.ready(2 * S)
    assert rate.total == 3


def test_a_window_must_be_positive():
    with pytest.raises(ValueError, match="window_s"):
        SlidingWindowRate(0.0)
