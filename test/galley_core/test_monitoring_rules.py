"""Each monitor rule alone: thresholds, what its reasons name, and its configuration checks."""

from __future__ import annotations

import pytest

from galley_core.config import ConfigError
from galley_core.monitoring import (
    ActiveStep,
    FallenObjectConfig,
    FallenObjectRule,
    MoveCheckConfig,
    MoveCheckRule,
    PickCheckConfig,
    PickCheckRule,
    PlaceCheckConfig,
    PlaceCheckRule,
    TimeLimitConfig,
    TimeLimitRule,
    TopicRateConfig,
    TopicRateRule,
    parse_rate_rules,
)
from galley_core.tasks.grammar import parse_step

S = 1_000_000_000


def active(text: str, index: int = 1, started_s: float = 0.0, zone: str = "") -> ActiveStep:
    return ActiveStep(index, text, parse_step(text), round(started_s * S), zone)


def test_time_limit_is_per_action_and_names_the_step():
    rule = TimeLimitRule(TimeLimitConfig(pick_time_limit_s=10.0))
    step = active("pick the bowl", index=2, started_s=5.0)
    assert rule.check(step, 15 * S) is None
    verdict = rule.check(step, 15 * S + 1)
    assert verdict is not None and not verdict.passed
    assert "step 2 'pick the bowl'" in verdict.reason and "> 10 s" in verdict.reason
    assert (verdict.step_index, verdict.step) == (2, "pick the bowl")
    assert rule.check(active("move to the red zone", started_s=5.0), 15 * S + 1) is None  # 120 s


def test_fallen_objects_are_named_and_parked_objects_ignored():
    rule = FallenObjectRule(FallenObjectConfig())
    bounds = (-4.0, -3.0, 4.0, 3.0)
    objects = {"apple": (0.0, 0.0, 0.76), "cup": (1.0, 1.0, 0.02), "fork": (-6.0, 1.0, 0.0)}
    verdicts = rule.check(objects, bounds, None, 0)
    assert [v.reason.split()[0] for v in verdicts] == ["cup"]
    assert "fell to the floor" in verdicts[0].reason and "z = 0.020 m" in verdicts[0].reason
    only_apple = FallenObjectRule(FallenObjectConfig(key_objects=("apple",)))
    assert only_apple.check(objects, bounds, None, 0) == []


def test_end_of_step_checks_compare_distances_with_their_thresholds():
    pick = PickCheckRule(PickCheckConfig(pick_max_distance_m=0.05))
    step = active("pick the cup")
    assert pick.check(step, (0.0, 0.0, 1.0), (0.0, 0.03, 1.0), 0).passed
    far = pick.check(step, (0.0, 0.0, 1.0), (0.0, 0.0, 1.06), 0)
    assert not far.passed and "0.060 m" in far.reason and "cup" in far.reason
    assert "no pose of object 'cup'" in pick.check(step, (0, 0, 0), None, 0).reason

    place = PlaceCheckRule(PlaceCheckConfig())
    put = active("place the cup", zone="green")
    assert place.check(put, (1.0, 2.04), (1.0, 2.0), 0).passed
    missed = place.check(put, (1.0, 2.06), (1.0, 2.0), 0)
    assert not missed.passed and "green zone" in missed.reason
    assert "needs a move" in place.check(active("place the cup"), (0, 0), None, 0).reason

    move = MoveCheckRule(MoveCheckConfig())
    go = active("move to the red zone")
    assert move.check(go, (0.0, 0.09), (0.0, 0.0), 0).passed
    assert not move.check(go, (0.0, 0.11), (0.0, 0.0), 0).passed


def test_topic_rates_are_judged_after_one_window_and_a_silent_topic_fails():
    rule = TopicRateRule(TopicRateConfig(rate_rules=("/scan 8", "/odom 40")))
    rule.start(0)
    for i in range(1, 21):
        rule.on_message("/scan", i * S // 10)
    assert rule.check(None, S // 2) == []  # not a whole window yet
    verdicts = rule.check(None, 2 * S)
    assert [v.reason.split()[1] for v in verdicts] == ["/odom"]
    assert "0.0 Hz" in verdicts[0].reason and "< 40 Hz" in verdicts[0].reason
    assert rule.rates_hz(2 * S)["/scan"] == pytest.approx(10.0)


def test_rate_configuration_needs_one_threshold_per_absolute_topic():
    assert parse_rate_rules(["/scan 8", "/odom   40.5"]) == {"/scan": 8.0, "/odom": 40.5}
    for wrong in ("/scan", "scan 8", "/scan eight", "/scan -1", "/scan 8 Hz", "/scan nan", "/scan inf", ""):
        with pytest.raises(
            ConfigError, match=r"rate_rules .*'TOPIC MIN_HZ' entries such as '/odom 40'"
        ) as err:
            TopicRateConfig(rate_rules=("/odom 40", wrong))
        assert repr(wrong) in str(err.value)
    with pytest.raises(ConfigError, match=r"one entry per topic \(/scan twice\)"):
        TopicRateConfig(rate_rules=("/scan 8", "/scan 9"))
