"""Generated kitchens: a seed in, a scene document (the scene file's YAML, as a dict) out.

:func:`draw_scene` furnishes a room (:mod:`galley_core.scenes.layout`), lays 3 to 7 zones on the
surfaces, draws 3 to 6 objects from :data:`galley_core.scenes.catalogue.CATALOGUE`, background
objects and decor (a sink, a hob) on the surfaces away from the zones, the floor's, the walls' and
the zones' colours, the lighting, and the segments the robot starts on. The document is what a
person would write (``config/scenes/kitchen.yaml``) except that zones leave ``approach`` out: the
loader derives it (:func:`galley_core.approach.derive_approach`), as the generator did to
choose where zones go.

Zones lie :func:`zone_depth` in from an edge the base can stand at, so that every object of the scene
stands wholly on the surface anywhere within the zone's spawn radius, and at least
:data:`ZONE_SPACING_M` apart, approach poses too (a place puts the object down at the zone whose
approach pose is nearest the base). Zones are named by colour, or in about half of the scenes by
the furniture they sit on ("island", "left counter"), where that names every zone uniquely.

A draw can fail (the room leaves too little room); :func:`draw_scene` returns None then, and the
caller draws again from the next sub-seed (:func:`galley_core.scenes.splits` documents the seeds).
The checks (:mod:`galley_core.scenes.checks`) run on the loaded scene.
"""

from __future__ import annotations

import math
import random
from typing import Any

from galley_core.approach import (
    ApproachConfig,
    box_distance,
    derive_approach,
    in_base_band,
    side_edges,
)
from galley_core.scene import Box
from galley_core.scenes.catalogue import CATALOGUE, draw_object
from galley_core.scenes.layout import Layout, draw_layout

__all__ = ["SPAWN_RADIUS_M", "ZONE_COLOURS", "ZONE_SIZE_M", "ZONE_SPACING_M", "draw_scene", "zone_depth"]

#: Objects start and goals are drawn within this radius of a zone's centre (the kitchen's), metres.
SPAWN_RADIUS_M = 0.08
#: The drawn patch of a zone, metres.
ZONE_SIZE_M = 0.3
#: Least distance between two zones' centres and between their approach positions, metres.
ZONE_SPACING_M = 0.7
#: Colour names of zones and their colours (the kitchen's five first).
ZONE_COLOURS: dict[str, tuple[float, float, float, float]] = {
    "red": (0.85, 0.1, 0.1, 1.0),
    "green": (0.1, 0.7, 0.15, 1.0),
    "blue": (0.1, 0.25, 0.85, 1.0),
    "yellow": (0.95, 0.85, 0.1, 1.0),
    "purple": (0.55, 0.15, 0.7, 1.0),
    "orange": (0.95, 0.5, 0.05, 1.0),
    "pink": (0.95, 0.45, 0.7, 1.0),
    "cyan": (0.1, 0.8, 0.85, 1.0),
    "brown": (0.45, 0.25, 0.1, 1.0),
}
_BACKGROUND = (
    ("kettle", "cylinder", (0.08, 0.22)),
    ("bread_box", "box", (0.35, 0.22, 0.18)),
    ("vase", "cylinder", (0.05, 0.25)),
    ("tray", "box", (0.3, 0.2, 0.03)),
    ("toaster", "box", (0.28, 0.16, 0.2)),
    ("jar", "cylinder", (0.06, 0.16)),
)
_FLOORS = ((0.62, 0.56, 0.48), (0.45, 0.42, 0.4), (0.75, 0.72, 0.66), (0.55, 0.4, 0.3), (0.3, 0.32, 0.35))
_WALL_COLOURS = (
    (0.88, 0.87, 0.82),
    (0.8, 0.85, 0.88),
    (0.9, 0.84, 0.75),
    (0.85, 0.88, 0.8),
    (0.95, 0.95, 0.95),
)
_SIDE_WORDS = {2: ("left", "right"), 3: ("left", "middle", "right")}


def zone_depth(footprint_m: float, spawn_radius_m: float = SPAWN_RADIUS_M) -> float:
    """How far in from the edge a zone's centre lies, metres.

    Far enough that an object of ``footprint_m`` (radius) stands wholly on the surface anywhere
    within the spawn radius, with 1 cm to spare, and that the patch lies on the surface.
    """
    return round(max(spawn_radius_m + footprint_m + 0.01, ZONE_SIZE_M / 2 + 0.01), 3)


def _rgb(values: tuple[float, ...], rng: random.Random, spread: float = 0.06) -> list[float]:
    return [round(min(1.0, max(0.0, v + rng.uniform(-spread, spread))), 3) for v in values[:3]] + [1.0]


def _candidates(layout: Layout, depth: float, config: ApproachConfig) -> list[dict[str, Any]]:
    """Zone centres on every surface's reachable sides, every 0.1 m along each side."""
    obstacles = layout.walls + layout.furniture
    out = []
    for surface in layout.furniture:
        if not surface.surface:
            continue
        hx, hy = surface.size[0] / 2, surface.size[1] / 2
        margin = ZONE_SIZE_M / 2 + 0.05
        for side, (u_fixed, v_fixed) in enumerate(
            ((hx - depth, None), (-hx + depth, None), (None, hy - depth), (None, -hy + depth))
        ):
            span = hy - margin if u_fixed is not None else hx - margin
            if (
                span < 0
                or (u_fixed is not None and abs(u_fixed) > hx)
                or (v_fixed is not None and abs(v_fixed) > hy)
            ):
                continue
            steps = int(span / 0.1)
            for k in range(-steps, steps + 1):
                u = u_fixed if u_fixed is not None else k * 0.1
                v = v_fixed if v_fixed is not None else k * 0.1
                centre = (round(surface.center[0] + u, 4), round(surface.center[1] + v, 4))
                approach = derive_approach(surface, centre, obstacles, layout.bounds, config)
                if approach is None:
                    continue
                _, _, normal = side_edges(surface, centre)[side]
                facing = abs(math.remainder(approach[2] - (normal + math.pi), 2 * math.pi)) < 1e-3
                if not facing:  # the derived approach is from a nearer side: that side's candidate
                    continue
                out.append({"surface": surface.name, "center": centre, "approach": approach, "side": side})
    return out


def _choose_zones(
    candidates: list[dict[str, Any]], count: int, rng: random.Random, *, by_furniture: bool
) -> list[dict[str, Any]]:
    """Up to ``count`` candidates at least ZONE_SPACING_M apart, spread over the surfaces.

    ``by_furniture``: zones will be named by their furniture, so each surface holds at most three,
    all on one side (its "left", "middle" and "right" as seen from there).
    """
    rng.shuffle(candidates)
    if by_furniture:
        sides: dict[str, int] = {}
        for c in candidates:
            sides.setdefault(c["surface"], c["side"])  # the side of a random candidate
        candidates = [c for c in candidates if c["side"] == sides[c["surface"]]]
    # Surfaces in turn, so that zones spread over the furniture before doubling up on one piece.
    by_surface: dict[str, list[dict[str, Any]]] = {}
    for c in candidates:
        by_surface.setdefault(c["surface"], []).append(c)
    chosen: list[dict[str, Any]] = []
    queues = list(by_surface.values())
    while len(chosen) < count and any(queues):
        for queue in queues:
            while queue:
                c = queue.pop()
                if by_furniture and sum(z["surface"] == c["surface"] for z in chosen) >= 3:
                    queue.clear()
                    break
                if all(
                    math.dist(c["center"], z["center"]) >= ZONE_SPACING_M
                    and math.dist(c["approach"][:2], z["approach"][:2]) >= ZONE_SPACING_M
                    for z in chosen
                ):
                    chosen.append(c)
                    break
            if len(chosen) >= count:
                break
    return chosen


def _furniture_names(zones: list[dict[str, Any]], layout: Layout) -> list[str] | None:
    """Zone names from the furniture they sit on, or None when that does not name them uniquely."""
    names: list[str] = [""] * len(zones)
    groups: dict[str, list[int]] = {}
    for i, z in enumerate(zones):
        groups.setdefault(z["surface"], []).append(i)
    for surface, members in groups.items():
        base = surface.replace("_", " ")
        if any(ch.isdigit() for ch in base):  # a second counter: "counter 2" is no name for a place
            return None
        if len(members) == 1:
            names[members[0]] = base
            continue
        if len(members) not in _SIDE_WORDS or len({zones[i]["side"] for i in members}) != 1:
            return None
        # Left to right as seen by the robot standing at the zones, facing the surface.
        yaw = zones[members[0]]["approach"][2]
        right_x, right_y = math.sin(yaw), -math.cos(yaw)
        members.sort(key=lambda i: zones[i]["center"][0] * right_x + zones[i]["center"][1] * right_y)
        for word, i in zip(_SIDE_WORDS[len(members)], members, strict=True):
            names[i] = f"{word} {base}"
    if len(set(names)) != len(names):
        return None
    return names


def _free_spot(
    surface: Box,
    size: tuple[float, float],
    keep_out: list[tuple[float, float, float]],
    placed: list[Box],
    rng: random.Random,
) -> tuple[float, float, tuple[float, float]] | None:
    """A place on ``surface`` for a footprint of ``size``, or None.

    The footprint is turned to lie along the surface's longer side and kept away from the keep-out
    discs (x, y, radius) and the boxes placed. Returns (x, y, size as turned).
    """
    if (size[0] > size[1]) != (surface.size[0] > surface.size[1]):
        size = (size[1], size[0])
    room_u = surface.size[0] / 2 - size[0] / 2 - 0.03
    room_v = surface.size[1] / 2 - size[1] / 2 - 0.03
    if room_u < 0 or room_v < 0:
        return None
    for _ in range(40):
        x = round(surface.center[0] + rng.uniform(-room_u, room_u), 3)
        y = round(surface.center[1] + rng.uniform(-room_v, room_v), 3)
        probe = Box("probe", (x, y, 0.0), (size[0], size[1], 0.1))
        if all(box_distance(probe, kx, ky) >= kr for kx, ky, kr in keep_out) and all(
            box_distance(p, x, y) >= max(size) / 2 + 0.05 for p in placed
        ):
            return x, y, size
    return None


def _start_segments(layout: Layout, config: ApproachConfig) -> list[list[list[float]]]:
    """The two longest stretches of free floor along x, at rows 0.25 m apart (base fully clear)."""
    obstacles = [b for b in layout.walls + layout.furniture if in_base_band(b)]
    hx, hy = layout.half
    room = config.keep_clear_m + 0.05
    pieces: list[tuple[float, float, float]] = []
    for j in range(int(2 * hy / 0.25) + 1):
        y = round(-hy + j * 0.25, 3)
        run_start = None
        xs = [round(-hx + i * 0.05, 3) for i in range(int(2 * hx / 0.05) + 1)]
        for x in [*xs, None]:
            free = x is not None and all(box_distance(b, x, y) >= room for b in obstacles)
            if free and run_start is None:
                run_start = x
            elif not free and run_start is not None:
                end = round(x - 0.05, 3) if x is not None else xs[-1]
                if end - run_start >= 0.8:
                    pieces.append((y, run_start, end))
                run_start = None
    pieces.sort(key=lambda p: p[2] - p[1], reverse=True)
    chosen: list[tuple[float, float, float]] = []
    for p in pieces:
        if all(abs(p[0] - c[0]) >= 1.0 for c in chosen):
            chosen.append(p)
        if len(chosen) == 2:
            break
    return [[[x0, y], [x1, y]] for y, x0, x1 in chosen]


def _decor(layout: Layout, keep_out: list[tuple[float, float, float]], rng: random.Random) -> list[Box]:
    """A sink and a hob (flat boxes, no surface) on the counters, each with probability 0.6."""
    decor: list[Box] = []
    for surface in [b for b in layout.furniture if b.surface and layout.kinds[b.name] == "counter"]:
        for part, size, rgba in (
            ("sink", (0.6, 0.4), (0.55, 0.58, 0.62, 1.0)),
            ("hob", (0.55, 0.45), (0.12, 0.12, 0.13, 1.0)),
        ):
            if rng.random() < 0.6:
                spot = _free_spot(surface, size, keep_out, decor, rng)
                if spot is not None:
                    decor_name = f"{part}_{surface.name}" if part in {d.name for d in decor} else part
                    x, y, (sx, sy) = spot
                    decor.append(Box(decor_name, (x, y, surface.top_z + 0.005), (sx, sy, 0.01), rgba=rgba))
    return decor


def _background(
    layout: Layout, keep_out: list[tuple[float, float, float]], decor: list[Box], rng: random.Random
) -> dict[str, Any]:
    """One to four background objects on the surfaces, clear of the zones and the decor."""
    background: dict[str, Any] = {}
    surfaces = [b for b in layout.furniture if b.surface]
    taken = list(decor)
    for bg_name, shape, bg_size in rng.sample(_BACKGROUND, rng.randint(1, 4)):
        surface = rng.choice(surfaces)
        # Any yaw: the square that holds the object turned any way.
        extent = (math.hypot(bg_size[0], bg_size[1]) if shape == "box" else 2 * bg_size[0]) + 0.02
        spot = _free_spot(surface, (extent, extent), keep_out, taken, rng)
        if spot is None:
            continue
        x, y, _ = spot
        taken.append(Box(bg_name, (x, y, 0.0), (extent, extent, 0.1)))
        background[bg_name] = {
            "shape": shape,
            "size": list(bg_size),
            "surface": surface.name,
            "place": [x, y, round(rng.uniform(-math.pi, math.pi), 3)],
            "rgba": _rgb((0.5, 0.5, 0.5), rng, 0.3),
        }
    return background


def draw_scene(name: str, rng: random.Random) -> dict[str, Any] | None:
    """A kitchen scene document drawn from ``rng``, or None when this draw failed (draw again)."""
    config = ApproachConfig()
    wall_rgba = tuple(_rgb(rng.choice(_WALL_COLOURS), rng, 0.03))
    layout = draw_layout(rng, wall_rgba)  # type: ignore[arg-type]
    if layout is None:
        return None
    kinds = rng.sample(CATALOGUE, rng.randint(3, 6))
    objects = {k.name: draw_object(k, rng) for k in kinds}
    footprint = max(_footprint(o) for o in objects.values())
    depth = zone_depth(footprint)
    by_furniture = rng.random() < 0.5
    zones = _choose_zones(
        _candidates(layout, depth, config), rng.randint(3, 7), rng, by_furniture=by_furniture
    )
    if len(zones) < 3:
        return None
    objects = dict(list(objects.items())[: len(zones)])  # at most one object per zone at the start
    names = _furniture_names(zones, layout) if by_furniture else None
    palette = [c for c in ZONE_COLOURS if c not in objects]
    colours = rng.sample(palette, len(zones))
    names = names or colours
    keep_out = [(z["center"][0], z["center"][1], ZONE_SIZE_M / 2 + footprint + 0.1) for z in zones]
    decor = _decor(layout, keep_out, rng)
    background = _background(layout, keep_out, decor, rng)
    segments = _start_segments(layout, config)
    if not segments:
        return None
    furniture_doc = {b.name: _box_doc(b) for b in layout.furniture}
    furniture_doc |= {d.name: _box_doc(d) | {"surface": False} for d in decor}
    return {
        "name": name,
        "bounds": list(layout.bounds),
        "floor_rgba": _rgb(rng.choice(_FLOORS), rng, 0.04),
        "wall_rgba": list(wall_rgba),
        "lighting": _lighting(rng),
        "walls": {b.name: {"center": list(b.center), "size": list(b.size)} for b in layout.walls},
        "furniture": furniture_doc,
        "zones": {
            n: {"surface": z["surface"], "center": list(z["center"]), "rgba": list(ZONE_COLOURS[c])}
            for n, c, z in zip(names, colours, zones, strict=True)
        },
        "objects": objects,
        "background": background,
        "robot_start": {"segments": segments, "yaw_range": [-3.14159, 3.14159]},
        "top_down": {"width_px": 640, "height_px": 480},
    }


def _footprint(entry: dict[str, Any]) -> float:
    size = entry["size"]
    if entry["shape"] == "box":
        return math.hypot(size[0], size[1]) / 2
    return float(size[0]) / (2.0 if entry["shape"] == "fork" else 1.0)


def _box_doc(box: Box) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "center": [round(v, 4) for v in box.center],
        "size": [round(v, 4) for v in box.size],
    }
    doc["rgba"] = list(box.rgba)
    if not box.surface:
        doc["surface"] = False
    return doc


def _lighting(rng: random.Random) -> dict[str, Any]:
    """Lights of a scene: the headlight's and the sun's intensity, a warm or cool tint, the sun's way."""
    tint = rng.uniform(-0.04, 0.04)
    ambient, diffuse, sun = rng.uniform(0.22, 0.38), rng.uniform(0.22, 0.38), rng.uniform(0.3, 0.6)
    return {
        "ambient": [round(ambient + tint, 3), round(ambient, 3), round(ambient - tint, 3)],
        "diffuse": [round(diffuse + tint, 3), round(diffuse, 3), round(diffuse - tint, 3)],
        "sun_diffuse": [round(sun, 3)] * 3,
        "sun_direction": [round(rng.uniform(-0.4, 0.4), 3), round(rng.uniform(-0.4, 0.4), 3), -1.0],
    }
