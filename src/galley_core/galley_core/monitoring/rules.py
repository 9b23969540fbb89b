"""The monitor's rules (Kitchen-R Sec. V-E), each with its own configuration.

Every check returns :class:`~galley_core.monitoring.verdicts.Verdict` objects whose reason names
what was checked (step, object, topic) and the measured value against the threshold. Whether a
failed check aborts the episode is decided by :class:`~galley_core.monitoring.monitor.EpisodeMonitor`.

Defaults are Kitchen-R's where the paper gives them (120 s per step; base within 10 cm of its
goal; object within 5 cm of its target); the others are galley's choices, documented per field.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from galley_core.config import Config, ConfigError, param
from galley_core.monitoring.rate import SlidingWindowRate
from galley_core.monitoring.verdicts import ActiveStep, Verdict

__all__ = [
    "FallenObjectConfig",
    "FallenObjectRule",
    "MoveCheckConfig",
    "MoveCheckRule",
    "PickCheckConfig",
    "PickCheckRule",
    "PlaceCheckConfig",
    "PlaceCheckRule",
    "TimeLimitConfig",
    "TimeLimitRule",
    "TopicRateConfig",
    "TopicRateRule",
    "parse_rate_rules",
]

_NS = 1_000_000_000
#: A point or vector: a sequence of floats or a numpy array, metres.
Vector = Sequence[float] | NDArray[np.float64]


def _verdict(rule: str, passed: bool, reason: str, step: ActiveStep | None, now_ns: int) -> Verdict:
    return Verdict(
        rule,
        passed,
        reason,
        step_index=-1 if step is None else step.index,
        step="" if step is None else step.text,
        time_ns=now_ns,
    )


# -- time limits ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class TimeLimitConfig(Config):
    move_time_limit_s: float = param(120.0, "longest a move step may take", unit="s", gt=0.0)
    pick_time_limit_s: float = param(120.0, "longest a pick step may take", unit="s", gt=0.0)
    place_time_limit_s: float = param(120.0, "longest a place step may take", unit="s", gt=0.0)


class TimeLimitRule:
    """A step running longer than its action's limit fails (checked at every monitor tick)."""

    name = "time_limit"

    def __init__(self, config: TimeLimitConfig) -> None:
        self.config = config

    def limit_s(self, action: str) -> float:
        """The limit of ``move``, ``pick`` or ``place``, seconds."""
        return float(getattr(self.config, f"{action}_time_limit_s"))

    def check(self, step: ActiveStep, now_ns: int) -> Verdict | None:
        """A failed verdict once ``step`` has run past its limit, None before."""
        elapsed_s = (now_ns - step.started_ns) / _NS
        limit = self.limit_s(step.step.action)
        if elapsed_s <= limit:
            return None
        return _verdict(
            self.name,
            False,
            f"{step.describe()} exceeded its time limit: {elapsed_s:.1f} s > {limit:g} s",
            step,
            now_ns,
        )


# -- objects on the floor ------------------------------------------------------------------------


@dataclass(frozen=True)
class FallenObjectConfig(Config):
    floor_z_m: float = param(
        0.05, "an object whose bottom centre is below this height (map z) is on the floor", unit="m"
    )
    key_objects: tuple[str, ...] = param(
        (), "objects to watch; empty: every object of the scene that lies within the map"
    )


class FallenObjectRule:
    """A key object on the floor fails the episode (checked at every monitor tick).

    Objects outside the scene's bounds are not part of the episode (the simulator parks unused
    objects off the map) and are ignored.
    """

    name = "fallen_object"

    def __init__(self, config: FallenObjectConfig) -> None:
        self.config = config

    def check(
        self,
        objects: Mapping[str, Vector],
        bounds: tuple[float, float, float, float] | None,
        step: ActiveStep | None,
        now_ns: int,
    ) -> list[Verdict]:
        """Failed verdicts for the key objects now on the floor.

        Args:
            objects: object name -> (x, y, z) of its bottom centre in the map frame, metres.
            bounds: (x_min, y_min, x_max, y_max) of the map, metres; None: no bound.
            step: the step being executed, if any.
            now_ns: simulated time.
        """
        watched = self.config.key_objects or tuple(sorted(objects))
        out = []
        for name in watched:
            position = objects.get(name)
            if position is None:
                continue
            x, y, z = (float(v) for v in position[:3])
            if bounds is not None and not (bounds[0] <= x <= bounds[2] and bounds[1] <= y <= bounds[3]):
                continue
            if z < self.config.floor_z_m:
                reason = (
                    f"{name} fell to the floor (z = {z:.3f} m < {self.config.floor_z_m:g} m "
                    f"at x = {x:.2f} m, y = {y:.2f} m)"
                )
                out.append(_verdict(self.name, False, reason, step, now_ns))
        return out


# -- end-of-step checks --------------------------------------------------------------------------


@dataclass(frozen=True)
class PickCheckConfig(Config):
    pick_max_distance_m: float = param(
        0.05,
        "at the end of a pick, the largest distance from the gripper's tool centre point to the "
        "object's grasp point",
        unit="m",
        gt=0.0,
    )


class PickCheckRule:
    """At the end of a pick the gripper's tool centre point must be near the object's grasp point."""

    name = "pick_distance"

    def __init__(self, config: PickCheckConfig) -> None:
        self.config = config

    def check(
        self,
        step: ActiveStep,
        tcp: Vector | None,
        grasp_point: Vector | None,
        now_ns: int,
    ) -> Verdict:
        """Pass when ``|tcp - grasp_point| <= pick_max_distance_m`` (map frame, metres)."""
        target = step.step.target
        if tcp is None or grasp_point is None:
            missing = "the gripper" if tcp is None else f"object {target!r}"
            return _verdict(self.name, False, f"{step.describe()}: no pose of {missing}", step, now_ns)
        d = math.dist(tuple(map(float, tcp[:3])), tuple(map(float, grasp_point[:3])))
        limit = self.config.pick_max_distance_m
        ok = d <= limit
        reason = f"{step.describe()}: gripper {d:.3f} m from the {target}'s grasp point " + (
            f"(<= {limit:g} m)" if ok else f"> {limit:g} m"
        )
        return _verdict(self.name, ok, reason, step, now_ns)


@dataclass(frozen=True)
class PlaceCheckConfig(Config):
    place_max_distance_m: float = param(
        0.05,
        "after a place, the largest horizontal distance from the object's centre to the goal "
        "(the centre of the zone the base moved to last)",
        unit="m",
        gt=0.0,
    )


class PlaceCheckRule:
    """After a place the object must lie within a distance of the goal point (horizontal)."""

    name = "place_distance"

    def __init__(self, config: PlaceCheckConfig) -> None:
        self.config = config

    def check(
        self,
        step: ActiveStep,
        object_xy: Vector | None,
        goal_xy: Vector | None,
        now_ns: int,
        goal_name: str = "",
    ) -> Verdict:
        """Pass when the object's (x, y) is within ``place_max_distance_m`` of ``goal_xy``.

        ``goal_name`` says what the goal is in the reason (default: the zone's centre).
        """
        target = step.step.target
        if object_xy is None:
            reason = f"{step.describe()}: no pose of object {target!r}"
            return _verdict(self.name, False, reason, step, now_ns)
        if goal_xy is None:
            reason = f"{step.describe()}: no goal (a place needs a move to a zone before it)"
            return _verdict(self.name, False, reason, step, now_ns)
        d = math.dist((float(object_xy[0]), float(object_xy[1])), (float(goal_xy[0]), float(goal_xy[1])))
        limit = self.config.place_max_distance_m
        ok = d <= limit
        goal_name = goal_name or f"the {step.zone} zone's centre"
        reason = f"{step.describe()}: the {target} lies {d:.3f} m from {goal_name} " + (
            f"(<= {limit:g} m)" if ok else f"> {limit:g} m"
        )
        return _verdict(self.name, ok, reason, step, now_ns)


@dataclass(frozen=True)
class MoveCheckConfig(Config):
    move_goal_radius_m: float = param(
        0.10, "after a move, the base centre must lie within this radius of the goal", unit="m", gt=0.0
    )


class MoveCheckRule:
    """After a move the base centre must lie within a circle around the zone's approach point."""

    name = "move_goal"

    def __init__(self, config: MoveCheckConfig) -> None:
        self.config = config

    def check(
        self,
        step: ActiveStep,
        base_xy: Vector | None,
        goal_xy: Vector,
        now_ns: int,
    ) -> Verdict:
        """Pass when ``|base_xy - goal_xy| <= move_goal_radius_m`` (map frame, metres)."""
        if base_xy is None:
            return _verdict(self.name, False, f"{step.describe()}: no ground-truth base pose", step, now_ns)
        d = math.dist((float(base_xy[0]), float(base_xy[1])), (float(goal_xy[0]), float(goal_xy[1])))
        limit = self.config.move_goal_radius_m
        ok = d <= limit
        reason = f"{step.describe()}: base {d:.3f} m from the goal " + (
            f"(<= {limit:g} m)" if ok else f"> {limit:g} m"
        )
        return _verdict(self.name, ok, reason, step, now_ns)


# -- topic rates ---------------------------------------------------------------------------------


def _float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def parse_rate_rules(entries: Sequence[str]) -> dict[str, float]:
    """Topic -> lowest acceptable rate (Hz) of ``rate_rules`` entries ``"TOPIC MIN_HZ"``.

    One record per topic in one ROS string array (ROS parameters hold no list of records), e.g.
    ``["/odom 40", "/scan 8"]``.

    Raises:
        ConfigError: an entry that is not an absolute topic name and a rate >= 0, or a topic twice.
    """
    rules: dict[str, float] = {}
    for entry in entries:
        parts = str(entry).split()
        topic, min_hz = (parts[0], _float(parts[1])) if len(parts) == 2 else ("", None)
        if not topic.startswith("/") or min_hz is None or not 0.0 <= min_hz < math.inf:
            raise ConfigError(
                "rate_rules", tuple(entries), f"'TOPIC MIN_HZ' entries such as '/odom 40' (not {entry!r})"
            )
        if topic in rules:
            raise ConfigError("rate_rules", tuple(entries), f"one entry per topic ({topic} twice)")
        rules[topic] = min_hz
    return rules


@dataclass(frozen=True)
class TopicRateConfig(Config):
    rate_rules: tuple[str, ...] = param(
        (),
        "watched topics, one 'TOPIC MIN_HZ' entry each: an absolute topic name and its lowest "
        "acceptable rate in Hz (e.g. '/odom 40')",
    )
    rate_window_s: float = param(
        1.0, "sliding window of simulated time over which rates are measured", unit="s", gt=0.0
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        parse_rate_rules(self.rate_rules)


class TopicRateRule:
    """Every watched topic's rate over the window must stay at or above its threshold.

    A topic is judged once a whole window has passed since :meth:`start` (the episode's first step),
    so a topic that never publishes fails with rate 0 after one window.
    """

    name = "topic_rate"

    def __init__(self, config: TopicRateConfig) -> None:
        self.config = config
        self.thresholds = parse_rate_rules(config.rate_rules)
        self.estimators = {t: SlidingWindowRate(config.rate_window_s) for t in self.thresholds}

    def start(self, now_ns: int) -> None:
        """Start measuring every topic afresh (at an episode's start)."""
        for estimator in self.estimators.values():
            estimator.start(now_ns)

    def on_message(self, topic: str, now_ns: int) -> None:
        """Record that a message of ``topic`` arrived at ``now_ns``."""
        estimator = self.estimators.get(topic)
        if estimator is not None:
            estimator.add(now_ns)

    def rates_hz(self, now_ns: int) -> dict[str, float | None]:
        """Each topic's rate, None while its first window is not complete."""
        return {t: (e.rate_hz(now_ns) if e.ready(now_ns) else None) for t, e in self.estimators.items()}

    def check(self, step: ActiveStep | None, now_ns: int) -> list[Verdict]:
        """Failed verdicts for the topics below their threshold."""
        out = []
        window = self.config.rate_window_s
        for topic, rate in self.rates_hz(now_ns).items():
            if rate is not None and rate < self.thresholds[topic]:
                reason = (
                    f"topic {topic} dropped to {rate:.1f} Hz over the last {window:g} s "
                    f"(< {self.thresholds[topic]:g} Hz)"
                )
                out.append(_verdict(self.name, False, reason, step, now_ns))
        return out
