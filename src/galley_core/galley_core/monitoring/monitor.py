"""The episode monitor: runs the rules over the steps of one episode and decides when to abort.

:class:`EpisodeMonitor` is driven by its caller (the ``monitor`` node):

* :meth:`~EpisodeMonitor.step_started` / :meth:`~EpisodeMonitor.step_ended` /
  :meth:`~EpisodeMonitor.episode_done` from the task executor's episode events;
* :meth:`~EpisodeMonitor.tick` at every monitor tick with the current :class:`WorldState`
  (time limits, fallen objects, topic rates);
* :meth:`~EpisodeMonitor.on_message` for every message of a watched topic;
* :meth:`~EpisodeMonitor.preflight` with the simulator's preflight result.

Each returns the verdicts reached. The first failed verdict aborts the episode (when
``abort_on_failure``); after it the monitor stays quiet until the next episode starts (a
``STEP_STARTED`` of step 0).

:data:`MonitorConfig` is every rule's configuration in one flat dataclass (one ROS parameter per
field), built by :func:`combine_configs`; :meth:`EpisodeMonitor.from_config` splits it again.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
from numpy.typing import NDArray

from galley_core.config import Config, param, sub_config
from galley_core.geometry import Pose2D, Transform
from galley_core.manipulation.poses import grasp_point
from galley_core.monitoring.rules import (
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
)
from galley_core.monitoring.verdicts import ActiveStep, Level, Verdict
from galley_core.scene import Scene, SceneError
from galley_core.tasks.grammar import InvalidPlanError, parse_step

__all__ = [
    "AbortConfig",
    "DiagnosticEntry",
    "EpisodeMonitor",
    "MonitorConfig",
    "WorldState",
    "combine_configs",
    "config_part",
]

P = TypeVar("P", bound=Config)


@dataclass(frozen=True)
class AbortConfig(Config):
    abort_on_failure: bool = param(True, "abort the episode at the first failed check")


def combine_configs(name: str, *parts: type[Config]) -> type[Config]:
    """One flat frozen :class:`Config` dataclass with every field of ``parts``, docs and checks kept.

    Cross-field checks of the parts run too (each part is rebuilt from the combined values).

    Raises:
        TypeError: two parts declare the same field name.
    """
    specs: list[tuple[str, Any, Any]] = []
    seen: set[str] = set()
    for part in parts:
        hints = typing.get_type_hints(part)
        for f in dataclasses.fields(part):
            if f.name in seen:
                raise TypeError(f"field {f.name!r} is declared by two parts of {name}")
            seen.add(f.name)
            specs.append((f.name, hints[f.name], dataclasses.field(default=f.default, metadata=f.metadata)))

    def post_init(self: Config) -> None:
        Config.__post_init__(self)
        for part in parts:
            config_part(self, part)  # the parts' own cross-field checks

    cls = dataclasses.make_dataclass(
        name, specs, bases=(Config,), frozen=True, namespace={"__post_init__": post_init}
    )
    cls.__doc__ = f"Every field of {', '.join(p.__name__ for p in parts)}."
    return cls


def config_part(config: Config, part: type[P]) -> P:
    """The ``part`` configuration held in a combined configuration (see :func:`combine_configs`)."""
    return sub_config(part, config)


#: The parts of the monitor's configuration, in the order of :data:`MonitorConfig`'s fields.
MONITOR_CONFIG_PARTS: tuple[type[Config], ...] = (
    AbortConfig,
    TimeLimitConfig,
    FallenObjectConfig,
    PickCheckConfig,
    PlaceCheckConfig,
    MoveCheckConfig,
    TopicRateConfig,
)
MonitorConfig = combine_configs("MonitorConfig", *MONITOR_CONFIG_PARTS)


@dataclass(frozen=True)
class WorldState:
    """What the rules look at, in the map frame (metres, radians).

    Attributes:
        objects: object name -> ``T_map_object`` (origin at the object's bottom centre).
        base: the base's ground-truth pose, None when unknown.
        tcp: (3,) position of the gripper's tool centre point, None when unknown.
    """

    objects: Mapping[str, Transform] = field(default_factory=dict)
    base: Pose2D | None = None
    tcp: NDArray[np.float64] | None = None


@dataclass(frozen=True)
class DiagnosticEntry:
    """One line of the monitor's diagnostics: a rule's current state."""

    name: str
    level: Level
    message: str
    values: tuple[tuple[str, str], ...] = ()


def _failure(rule: str, reason: str, index: int, text: str, now_ns: int) -> Verdict:
    return Verdict(rule, False, reason, step_index=index, step=text, time_ns=now_ns)


class EpisodeMonitor:
    """Runs the monitor's rules over episodes of plan steps (see the module docstring).

    Args:
        scene: the scene (zones for goals, object grasp points, map bounds).
        time_limit, fallen, pick, place, move, rates: the rules' configurations.
        abort_on_failure: whether the first failed check aborts the episode.
    """

    def __init__(
        self,
        scene: Scene,
        *,
        time_limit: TimeLimitConfig | None = None,
        fallen: FallenObjectConfig | None = None,
        pick: PickCheckConfig | None = None,
        place: PlaceCheckConfig | None = None,
        move: MoveCheckConfig | None = None,
        rates: TopicRateConfig | None = None,
        abort_on_failure: bool = True,
    ) -> None:
        self.scene = scene
        self.time_limit = TimeLimitRule(time_limit or TimeLimitConfig())
        self.fallen = FallenObjectRule(fallen or FallenObjectConfig())
        self.pick = PickCheckRule(pick or PickCheckConfig())
        self.place = PlaceCheckRule(place or PlaceCheckConfig())
        self.move = MoveCheckRule(move or MoveCheckConfig())
        self.rates = TopicRateRule(rates or TopicRateConfig())
        self.abort_on_failure = abort_on_failure
        self.step: ActiveStep | None = None
        self.running = False
        self.aborted: Verdict | None = None
        self.verdicts: list[Verdict] = []
        self.preflight_result: tuple[bool, str] | None = None
        self._zone = ""
        self._place_goal: tuple[float, float] | None = None

    @classmethod
    def from_config(cls, scene: Scene, config: Config) -> EpisodeMonitor:
        """A monitor from a :data:`MonitorConfig` (or any configuration combining its parts)."""
        return cls(
            scene,
            time_limit=config_part(config, TimeLimitConfig),
            fallen=config_part(config, FallenObjectConfig),
            pick=config_part(config, PickCheckConfig),
            place=config_part(config, PlaceCheckConfig),
            move=config_part(config, MoveCheckConfig),
            rates=config_part(config, TopicRateConfig),
            abort_on_failure=config_part(config, AbortConfig).abort_on_failure,
        )

    @property
    def watched_topics(self) -> tuple[str, ...]:
        """The topics whose rates are checked."""
        return tuple(self.rates.thresholds)

    @property
    def active(self) -> bool:
        """Whether an episode is running and has not been aborted."""
        return self.running and self.aborted is None

    # -- events --------------------------------------------------------------------------------

    def step_started(self, index: int, text: str, now_ns: int) -> list[Verdict]:
        """The executor started step ``index``; step 0 starts a new episode."""
        if index == 0 or not self.running:
            self._new_episode(now_ns)
        if not self.active:
            return []
        try:
            step = parse_step(text)
        except InvalidPlanError as err:
            return self._conclude([_failure("plan", str(err), index, text, now_ns)])
        if step.action == "move":
            self._zone = step.target
        self.step = ActiveStep(index, text, step, now_ns, self._zone)
        if step.action != "place":
            # Not at a place step's start: under ROS 2 its goal (/arm/goal) can come before its
            # STEP_STARTED (/episode/events), two topics that DDS does not keep in order.
            self._place_goal = None
        if self.preflight_result is not None and not self.preflight_result[0]:
            reason = f"the simulator's preflight failed: {self.preflight_result[1]}"
            return self._conclude([_failure("preflight", reason, index, text, now_ns)])
        return []

    def step_ended(
        self, index: int, succeeded: bool, now_ns: int, world: WorldState, reason: str = ""
    ) -> list[Verdict]:
        """The executor reports the end of step ``index``: check the action's outcome."""
        step = self.step
        if not self.active or step is None or step.index != index:
            return []
        self.step = None
        if not succeeded:
            self._place_goal = None
            why = f"{step.describe()} failed" + (f": {reason}" if reason else "")
            return self._conclude([_failure("step_failed", why, index, step.text, now_ns)])
        verdict = self._end_check(step, now_ns, world)
        if step.step.action == "place":  # a goal that came during another step is the next place's
            self._place_goal = None
        return self._conclude([verdict])

    def episode_done(self, now_ns: int) -> list[Verdict]:
        """The executor finished the plan: the episode ends."""
        self.running = False
        self.step = None
        return []

    def preflight(self, ok: bool, message: str, now_ns: int) -> list[Verdict]:
        """The simulator's preflight result; a failure aborts the running (or the next) episode."""
        self.preflight_result = (ok, message)
        if ok or not self.active:
            return []
        step = self.step
        return self._conclude(
            [
                Verdict(
                    "preflight",
                    False,
                    f"the simulator's preflight failed: {message}",
                    step_index=-1 if step is None else step.index,
                    step="" if step is None else step.text,
                    time_ns=now_ns,
                )
            ]
        )

    def set_place_goal(self, x: float, y: float) -> None:
        """Where the running (or the next) place step was asked to put the object (map, metres).

        Without it a place is judged against the centre of the zone the base moved to last. The
        goal holds until a place step ends, a step fails, or a step other than a place starts: under
        ROS 2 it can come before the STEP_STARTED of its place, and even before the end of the move
        before it.
        """
        self._place_goal = (x, y)

    def on_message(self, topic: str, now_ns: int) -> None:
        """A message of a watched topic arrived."""
        self.rates.on_message(topic, now_ns)

    def tick(self, now_ns: int, world: WorldState) -> list[Verdict]:
        """The checks made at every monitor tick while an episode runs."""
        if not self.active:
            return []
        found: list[Verdict] = []
        if self.step is not None and (late := self.time_limit.check(self.step, now_ns)) is not None:
            found.append(late)
        objects = {name: t.translation for name, t in world.objects.items()}
        found += self.fallen.check(objects, self.scene.bounds, self.step, now_ns)
        found += self.rates.check(self.step, now_ns)
        return self._conclude(found)

    # -- internals -----------------------------------------------------------------------------

    def _new_episode(self, now_ns: int) -> None:
        self.running = True
        self.aborted = None
        self.step = None
        self._zone = ""
        self.verdicts = []
        self.rates.start(now_ns)

    def _end_check(self, step: ActiveStep, now_ns: int, world: WorldState) -> Verdict:
        target = step.step.target
        try:
            if step.step.action == "move":
                x, y, _ = self.scene.zone(target).approach
                base = None if world.base is None else (world.base.x, world.base.y)
                return self.move.check(step, base, (x, y), now_ns)
            pose = world.objects.get(target)
            if step.step.action == "pick":
                spec = self.scene.object(target)
                grasp = None if pose is None else grasp_point(spec, pose, near=world.tcp)
                return self.pick.check(step, world.tcp, grasp, now_ns)
            xy = None if pose is None else pose.translation[:2]
            if self._place_goal is not None:
                gx, gy = self._place_goal
                return self.place.check(step, xy, self._place_goal, now_ns, f"its goal ({gx:.2f}, {gy:.2f})")
            goal = self.scene.zone(step.zone).center if step.zone else None
            return self.place.check(step, xy, goal, now_ns)
        except (KeyError, SceneError) as err:
            reason = f"{step.describe()} names something the scene lacks: {err}"
            return Verdict("plan", False, reason, step_index=step.index, step=step.text, time_ns=now_ns)

    def _conclude(self, found: list[Verdict]) -> list[Verdict]:
        """Mark the first failure as the abort; nothing after it counts in this episode."""
        out = []
        for verdict in found:
            if self.aborted is not None:
                break
            final = verdict
            if not verdict.passed and self.abort_on_failure:
                final = self.aborted = dataclasses.replace(verdict, abort=True)
            out.append(final)
        self.verdicts += out
        return out

    # -- reporting -----------------------------------------------------------------------------

    def diagnostics(self, now_ns: int) -> list[DiagnosticEntry]:
        """The current state of the episode and of every rule, for /diagnostics."""
        entries = []
        if self.aborted is not None:
            state = DiagnosticEntry("episode", Level.ERROR, f"aborted: {self.aborted.reason}")
        elif self.running:
            what = "between steps" if self.step is None else self.step.describe()
            state = DiagnosticEntry("episode", Level.OK, f"running, {what}")
        else:
            state = DiagnosticEntry("episode", Level.OK, "idle")
        entries.append(state)
        if self.preflight_result is None:
            missing = "no preflight result from the simulator yet"
            entries.append(DiagnosticEntry("preflight", Level.STALE, missing))
        else:
            ok, message = self.preflight_result
            entries.append(DiagnosticEntry("preflight", Level.OK if ok else Level.ERROR, message))
        if self.step is not None:
            elapsed = (now_ns - self.step.started_ns) / 1e9
            limit = self.time_limit.limit_s(self.step.step.action)
            entries.append(
                DiagnosticEntry(
                    "time_limit",
                    Level.OK,
                    f"{self.step.describe()}: {elapsed:.1f} s of {limit:g} s",
                    (("elapsed_s", f"{elapsed:.3f}"), ("limit_s", f"{limit:g}")),
                )
            )
        for topic, rate in self.rates.rates_hz(now_ns).items():
            threshold = self.rates.thresholds[topic]
            if rate is None:
                entries.append(DiagnosticEntry(f"topic_rate {topic}", Level.STALE, "measuring"))
                continue
            level = Level.OK if rate >= threshold else Level.ERROR
            values = (("rate_hz", f"{rate:.2f}"), ("min_rate_hz", f"{threshold:g}"))
            entries.append(DiagnosticEntry(f"topic_rate {topic}", level, f"{rate:.1f} Hz", values))
        return entries
