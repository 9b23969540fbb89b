"""Rooms and furniture of generated kitchens: boxes drawn from a seed, kept apart.

:func:`draw_layout` draws a rectangular room (walls 0.1 m thick around the floor) and furnishes it
the way kitchens are: a counter along one wall, often a second one along another, appliances
(a fridge, a range, a bin) and a shelf against the walls, an island and/or a table standing free
with room to drive round them. Every box is axis-aligned; furniture keeps :data:`GAP_M` from
other furniture and a free-standing piece :data:`PASSAGE_M` from everything, so that the base
(0.87 m wide with its clearance) passes. Whether every zone is in fact reachable is decided later,
on the occupancy map (:mod:`galley_core.scenes.checks`); a draw that fails is redrawn.

Every function here is pure: a ``random.Random`` in, plain data out.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace

from galley_core.scene import Box

__all__ = ["GAP_M", "PASSAGE_M", "Layout", "draw_layout"]

#: Least gap between two pieces of furniture along a wall, metres.
GAP_M = 0.05
#: Least distance from a free-standing piece (island, table) to anything else, metres.
PASSAGE_M = 1.05
_WALL_T = 0.1
_WALL_H = 2.4
_TRIES = 60


@dataclass(frozen=True)
class Layout:
    """A furnished room.

    Attributes:
        half: (half length x, half width y) of the floor inside the walls, metres.
        walls: the four wall boxes.
        furniture: furniture boxes (surfaces and obstacles), named for what they are.
        kinds: furniture name -> kind (counter, island, table, fridge, range, bin, shelf).
        against: furniture name -> the wall it stands against ("north", ...), "" when free-standing.
    """

    half: tuple[float, float]
    walls: tuple[Box, ...]
    furniture: tuple[Box, ...]
    kinds: dict[str, str]
    against: dict[str, str]

    @property
    def bounds(self) -> tuple[float, float, float, float]:
        hx, hy = self.half
        return (-hx - _WALL_T, -hy - _WALL_T, hx + _WALL_T, hy + _WALL_T)


def _r(value: float, step: float = 0.05) -> float:
    """``value`` on a multiple of ``step`` (furniture edges on the map's grid)."""
    return round(round(value / step) * step, 4)


def _walls(hx: float, hy: float, rgba: tuple[float, float, float, float]) -> tuple[Box, ...]:
    t, h = _WALL_T, _WALL_H
    return (
        Box("wall_north", (0.0, hy + t / 2, h / 2), (2 * hx + 2 * t, t, h), rgba=rgba),
        Box("wall_south", (0.0, -hy - t / 2, h / 2), (2 * hx + 2 * t, t, h), rgba=rgba),
        Box("wall_east", (hx + t / 2, 0.0, h / 2), (t, 2 * hy + 2 * t, h), rgba=rgba),
        Box("wall_west", (-hx - t / 2, 0.0, h / 2), (t, 2 * hy + 2 * t, h), rgba=rgba),
    )


def _gap(a: Box, b: Box) -> float:
    """Distance between two axis-aligned footprints (negative: they overlap), metres."""
    dx = abs(a.center[0] - b.center[0]) - (a.size[0] + b.size[0]) / 2
    dy = abs(a.center[1] - b.center[1]) - (a.size[1] + b.size[1]) / 2
    if dx < 0 and dy < 0:
        return max(dx, dy)
    return max(dx, 0.0) if dy < 0 else (max(dy, 0.0) if dx < 0 else (dx * dx + dy * dy) ** 0.5)


def _against_wall(
    name: str,
    *,
    wall: str,
    length: float,
    depth: float,
    height: float,
    half: tuple[float, float],
    rng: random.Random,
) -> Box | None:
    """A box of ``length`` along ``wall``, ``depth`` out from it, at a random place along it."""
    hx, hy = half
    along = hx if wall in ("north", "south") else hy
    if length > 2 * along - 0.2:
        return None
    s = _r(rng.uniform(-along + length / 2, along - length / 2))
    s = max(-along + length / 2, min(along - length / 2, s))
    if wall in ("north", "south"):
        y = hy - depth / 2 if wall == "north" else -hy + depth / 2
        return Box(name, (s, _r(y, 0.025), height / 2), (length, depth, height))
    x = hx - depth / 2 if wall == "east" else -hx + depth / 2
    return Box(name, (_r(x, 0.025), s, height / 2), (depth, length, height))


def _fits(box: Box, placed: list[Box], gap: float) -> bool:
    return all(_gap(box, other) >= gap for other in placed)


@dataclass(frozen=True)
class _Spec:
    kind: str
    length: tuple[float, float]
    depth: tuple[float, float]
    height: tuple[float, float]
    rgba: tuple[float, float, float, float]


_WOOD = ((0.55, 0.38, 0.24, 1.0), (0.45, 0.33, 0.22, 1.0), (0.68, 0.52, 0.36, 1.0), (0.36, 0.25, 0.18, 1.0))
_TOPS = ((0.93, 0.92, 0.88, 1.0), (0.8, 0.8, 0.78, 1.0), (0.35, 0.36, 0.38, 1.0), (0.86, 0.82, 0.74, 1.0))
_STEEL = ((0.9, 0.92, 0.95, 1.0), (0.75, 0.77, 0.8, 1.0), (0.25, 0.26, 0.28, 1.0))


def _spec(kind: str, rng: random.Random) -> _Spec:
    if kind == "counter":
        return _Spec(kind, (1.8, 4.2), (0.55, 0.65), (0.86, 0.94), rng.choice(_TOPS))
    if kind == "island":
        return _Spec(kind, (1.2, 2.0), (0.8, 1.0), (0.86, 0.94), rng.choice(_TOPS))
    if kind == "table":
        return _Spec(kind, (1.2, 1.8), (0.8, 1.0), (0.72, 0.78), rng.choice(_WOOD))
    if kind == "fridge":
        return _Spec(kind, (0.75, 0.9), (0.7, 0.75), (1.75, 1.95), rng.choice(_STEEL))
    if kind == "range":
        return _Spec(kind, (0.6, 0.75), (0.6, 0.65), (0.9, 0.92), rng.choice(_STEEL))
    if kind == "bin":
        return _Spec(kind, (0.3, 0.4), (0.3, 0.4), (0.55, 0.7), rng.choice(_STEEL))
    if kind == "shelf":
        return _Spec(kind, (0.8, 1.4), (0.35, 0.4), (1.5, 1.9), rng.choice(_WOOD))
    raise ValueError(f"unknown furniture kind {kind!r}")


_SURFACES = ("counter", "island", "table")
_WALLS = ("north", "south", "east", "west")


def _name(kind: str, taken: dict[str, str]) -> str:
    if kind not in taken:
        return kind
    if kind == "counter" and "side_counter" not in taken:
        return "side_counter"  # the shipped kitchen's name for a second counter
    n = 2
    while f"{kind}_{n}" in taken:
        n += 1
    return f"{kind}_{n}"


def _draw_sized(spec: _Spec, rng: random.Random) -> tuple[float, float, float]:
    return (_r(rng.uniform(*spec.length)), _r(rng.uniform(*spec.depth)), _r(rng.uniform(*spec.height), 0.01))


class _Furnisher:
    """The room being furnished: what stands where, and what kind each piece is."""

    def __init__(self, half: tuple[float, float], walls: tuple[Box, ...], rng: random.Random) -> None:
        self.half, self.walls, self.rng = half, walls, rng
        self.placed: list[Box] = []
        self.kinds: dict[str, str] = {}
        self.against: dict[str, str] = {}

    def _add(self, box: Box, kind: str, wall: str) -> Box:
        self.kinds[box.name] = kind
        self.against[box.name] = wall
        self.placed.append(box)
        return box

    def wall_piece(self, kind: str, wall: str) -> Box | None:
        """A piece of ``kind`` against ``wall``, or None when none fits after a few draws."""
        spec = _spec(kind, self.rng)
        for _ in range(_TRIES):
            length, depth, height = _draw_sized(spec, self.rng)
            box = _against_wall(
                _name(kind, self.kinds),
                wall=wall,
                length=length,
                depth=depth,
                height=height,
                half=self.half,
                rng=self.rng,
            )
            if box is None or not _fits(box, self.placed, GAP_M):
                continue
            # Free-standing pieces keep a passage; so must a wall piece that comes near one.
            if any(_gap(box, p) < PASSAGE_M for p in self.placed if self.against.get(p.name) == ""):
                continue
            return self._add(replace(box, rgba=spec.rgba, surface=kind in _SURFACES), kind, wall)
        return None

    def free_piece(self, kind: str) -> Box | None:
        """A free-standing piece of ``kind`` with a passage all round, or None when none fits."""
        spec = _spec(kind, self.rng)
        hx, hy = self.half
        for _ in range(_TRIES):
            length, depth, height = _draw_sized(spec, self.rng)
            along_x = self.rng.random() < 0.5 or hx - hy > 1.0
            sx, sy = (length, depth) if along_x else (depth, length)
            lim_x, lim_y = hx - sx / 2 - PASSAGE_M, hy - sy / 2 - PASSAGE_M
            if lim_x < 0 or lim_y < 0:
                continue
            centre = (_r(self.rng.uniform(-lim_x, lim_x)), _r(self.rng.uniform(-lim_y, lim_y)), height / 2)
            box = Box(_name(kind, self.kinds), centre, (sx, sy, height), rgba=spec.rgba, surface=True)
            if _fits(box, self.placed + list(self.walls), PASSAGE_M):
                return self._add(box, kind, "")
        return None


def draw_layout(rng: random.Random, wall_rgba: tuple[float, float, float, float]) -> Layout | None:
    """A furnished room drawn from ``rng``; None when this draw could not be furnished (draw again).

    The room is 6 to 9 m by 5 to 7.5 m. One counter stands against a wall; with probability 0.6 a
    second one against another wall; a fridge always, a range, a bin and a shelf often; then an
    island (probability 0.5) and a table (0.7, always when there is no island).
    """
    half = (_r(rng.uniform(3.0, 4.5)), _r(rng.uniform(2.5, 3.75)))
    walls = _walls(*half, wall_rgba)
    room = _Furnisher(half, walls, rng)
    order = list(_WALLS)
    rng.shuffle(order)
    if room.wall_piece("counter", order[0]) is None:
        return None
    if rng.random() < 0.6:
        room.wall_piece("counter", order[1])
    island = rng.random() < 0.5
    if island:
        room.free_piece("island")
    if not island or rng.random() < 0.7:
        room.free_piece("table")
    for kind, chance in (("fridge", 1.0), ("range", 0.5), ("shelf", 0.6), ("bin", 0.5)):
        if rng.random() < chance:
            room.wall_piece(kind, rng.choice(_WALLS))
    if sum(b.surface for b in room.placed) < 2:
        return None
    return Layout(half, walls, tuple(room.placed), room.kinds, room.against)
