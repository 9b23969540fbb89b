"""Per-episode randomisation (Kitchen-R Sec. V-F): a seed decides everything that varies.

:func:`sample_episode` draws, from a scene and a seed,

* the robot start pose: uniform over the union of the scene's start segments (by length), with a
  yaw uniform in the scene's range;
* for each object, a start near one zone and a goal near another (distinct zones per object while
  there are enough), uniform within the zone's spawn radius, objects kept apart by their footprints;
* colours of the floor, the walls and the background objects.

The same scene and seed give the same episode; an :class:`Episode` converts to and from a plain
dict (JSON/YAML) so that batches can be generated once and replayed by several policies.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from galley_core.geometry import Pose2D
from galley_core.scene import Scene, SceneError

__all__ = ["Episode", "ObjectPlacement", "sample_episode"]

_MAX_TRIES = 200


@dataclass(frozen=True)
class ObjectPlacement:
    """Where an object starts and where it should end up.

    Attributes:
        name: object name.
        zone: zone it starts in.
        x, y, yaw: start position (metres) and heading (radians) on the zone's surface.
        goal_zone: zone it should be moved to.
        goal_x, goal_y: goal position, metres.
    """

    name: str
    zone: str
    x: float
    y: float
    yaw: float
    goal_zone: str
    goal_x: float
    goal_y: float


@dataclass(frozen=True)
class Episode:
    """One randomised episode of a scene."""

    scene: str
    seed: int
    robot_start: Pose2D
    objects: tuple[ObjectPlacement, ...]
    colors: dict[str, tuple[float, float, float, float]] = field(default_factory=dict)

    def placement(self, name: str) -> ObjectPlacement:
        for p in self.objects:
            if p.name == name:
                return p
        raise KeyError(f"episode has no object {name!r}; objects: {', '.join(p.name for p in self.objects)}")

    def to_dict(self) -> dict[str, Any]:
        """A plain dict (lists, numbers, strings) for JSON or YAML."""
        out = asdict(self)
        out["robot_start"] = [self.robot_start.x, self.robot_start.y, self.robot_start.theta]
        out["colors"] = {k: list(v) for k, v in self.colors.items()}
        return out

    @staticmethod
    def from_dict(data: dict[str, Any]) -> Episode:
        """Inverse of :meth:`to_dict`."""
        x, y, theta = data["robot_start"]
        return Episode(
            scene=str(data["scene"]),
            seed=int(data["seed"]),
            robot_start=Pose2D(float(x), float(y), float(theta)),
            objects=tuple(ObjectPlacement(**p) for p in data["objects"]),
            colors={k: (v[0], v[1], v[2], v[3]) for k, v in data.get("colors", {}).items()},
        )


def _sample_on_segments(scene: Scene, rng: np.random.Generator) -> tuple[float, float]:
    segments = [(np.array(a), np.array(b)) for a, b in scene.start_segments]
    lengths = np.array([float(np.linalg.norm(b - a)) for a, b in segments])
    if lengths.sum() <= 0:
        a, _ = segments[0]
        return float(a[0]), float(a[1])
    i = int(rng.choice(len(segments), p=lengths / lengths.sum()))
    a, b = segments[i]
    p = a + rng.uniform() * (b - a)
    return float(p[0]), float(p[1])


def _sample_in_zone(
    scene: Scene,
    zone_name: str,
    radius_m: float,
    taken: list[tuple[float, float, float]],
    rng: np.random.Generator,
) -> tuple[float, float]:
    zone = scene.zone(zone_name)
    for _ in range(_MAX_TRIES):
        r = zone.spawn_radius * math.sqrt(rng.uniform())
        a = rng.uniform(0.0, 2.0 * math.pi)
        x, y = zone.center[0] + r * math.cos(a), zone.center[1] + r * math.sin(a)
        if all(math.hypot(x - tx, y - ty) > radius_m + tr + 0.02 for tx, ty, tr in taken):
            return x, y
    raise SceneError(
        f"zone {zone_name!r} (spawn radius {zone.spawn_radius} m) has no room for another object; "
        "enlarge spawn_radius or use fewer objects"
    )


def sample_episode(scene: Scene, seed: int, *, objects: list[str] | None = None) -> Episode:
    """Draw an episode of ``scene`` from ``seed`` (see the module docstring).

    Args:
        scene: the scene.
        seed: any non-negative integer.
        objects: the objects to place (default: all of the scene's).

    Raises:
        SceneError: an unknown object name, or too little room in the zones.
    """
    if seed < 0:
        raise ValueError(f"seed = {seed} must be >= 0")
    # Keyed by the scene too, so that one seed gives unrelated draws in different scenes
    # (crc32 rather than hash(): the same in every process).
    rng = np.random.default_rng([zlib.crc32(scene.name.encode()), seed])
    names = objects if objects is not None else scene.object_names
    specs = [scene.object(n) for n in names]
    x, y = _sample_on_segments(scene, rng)
    yaw = float(rng.uniform(*scene.start_yaw_range))
    zone_names = scene.zone_names
    taken_start: list[tuple[float, float, float]] = []
    taken_goal: list[tuple[float, float, float]] = []
    placements = []
    starts, goals = _assign_zones(len(specs), zone_names, rng)
    for spec, start_zone, goal_zone in zip(specs, starts, goals, strict=True):
        sx, sy = _sample_in_zone(scene, start_zone, spec.footprint_radius, taken_start, rng)
        taken_start.append((sx, sy, spec.footprint_radius))
        gx, gy = _sample_in_zone(scene, goal_zone, spec.footprint_radius, taken_goal, rng)
        taken_goal.append((gx, gy, spec.footprint_radius))
        placements.append(
            ObjectPlacement(
                spec.name, start_zone, sx, sy, float(rng.uniform(-math.pi, math.pi)), goal_zone, gx, gy
            )
        )
    colors: dict[str, tuple[float, float, float, float]] = {
        "floor": _jitter(scene.floor_rgba, rng),
        "walls": _jitter(scene.wall_rgba, rng),
    }
    for bg in scene.background:
        hsv_rgb = rng.uniform(0.15, 0.95, size=3)
        colors[bg.name] = (float(hsv_rgb[0]), float(hsv_rgb[1]), float(hsv_rgb[2]), 1.0)
    return Episode(scene.name, seed, Pose2D(x, y, yaw), tuple(placements), colors)


def _assign_zones(count: int, zones: list[str], rng: np.random.Generator) -> tuple[list[str], list[str]]:
    """Start and goal zone per object: distinct zones while there are enough, goal != start."""
    if len(zones) == 1:
        return [zones[0]] * count, [zones[0]] * count
    if count <= len(zones):
        starts = [zones[int(i)] for i in rng.permutation(len(zones))[:count]]
        for _ in range(_MAX_TRIES):
            goals = [zones[int(i)] for i in rng.permutation(len(zones))[:count]]
            if all(g != s for g, s in zip(goals, starts, strict=True)):
                return starts, goals
    starts = [zones[int(rng.integers(len(zones)))] for _ in range(count)]
    goals = []
    for start in starts:
        others = [z for z in zones if z != start]
        goals.append(others[int(rng.integers(len(others)))])
    return starts, goals


def _jitter(
    rgba: tuple[float, float, float, float], rng: np.random.Generator
) -> tuple[float, float, float, float]:
    """A colour near ``rgba``: brightness and tint vary by up to 15 %."""
    scale = rng.uniform(0.85, 1.15) * rng.uniform(0.92, 1.08, size=3)
    r, g, b = np.clip(np.array(rgba[:3]) * scale, 0.0, 1.0)
    return (float(r), float(g), float(b), rgba[3])
