"""Kitchen scenes described as data: static furniture, coloured zones, objects, start segments.

A scene is a YAML file under ``config/scenes/`` (see ``kitchen.yaml``); adding a scene or an
object is a change there, not in code. :func:`load_scene` validates it and reports mistakes by
their place in the file (``objects.bowl.mass: must be > 0``). Everything is in the ``map`` frame,
metres and radians; box ``size`` values are full extents, not half sizes.

The simulator builds its world from a scene; the task layer reads zones and objects from the same
description (valid plan steps, approach poses for the base). A zone may leave its ``approach`` out:
it is derived from the surface, the furniture and the robot's footprint
(:mod:`galley_core.approach`); an optional ``lighting`` entry sets the simulator's lights.
Generated kitchens and the checks a scene must pass are in :mod:`galley_core.scenes`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from galley_core.approach import derive_approach
from galley_core.files import read_yaml

__all__ = [
    "Box",
    "ObjectSpec",
    "Scene",
    "SceneError",
    "Zone",
    "load_scene",
    "parse_scene",
    "scene_path",
]

#: The shapes a manipulable or background object may have, built from primitives.
OBJECT_SHAPES = ("sphere", "box", "cylinder", "bowl", "plate", "fork")


class SceneError(ValueError):
    """A scene file is missing something or holds a value that is not allowed."""


@dataclass(frozen=True)
class Box:
    """A static box: a wall or a piece of furniture.

    Attributes:
        name: unique name (also the simulator's geom name).
        center: (x, y, z) of the box centre, metres.
        size: (length x, width y, height z) full extents, metres.
        yaw: rotation about +z, radians.
        rgba: colour.
        surface: objects may rest on its top face.
    """

    name: str
    center: tuple[float, float, float]
    size: tuple[float, float, float]
    yaw: float = 0.0
    rgba: tuple[float, float, float, float] = (0.7, 0.7, 0.7, 1.0)
    surface: bool = False

    @property
    def top_z(self) -> float:
        """Height of the top face, metres."""
        return self.center[2] + self.size[2] / 2.0


@dataclass(frozen=True)
class Zone:
    """A coloured area on a surface where objects are put, and where the base stands to reach it.

    Attributes:
        name: the colour name used in instructions ("red", "green", ...).
        rgba: colour drawn on the surface.
        surface: name of the :class:`Box` it lies on.
        center: (x, y) of the zone centre, metres.
        size: (length x, width y) of the drawn patch, metres.
        approach: (x, y, yaw) base pose from which the arm reaches the zone; derived from the
            surface, the furniture around it and the robot's footprint when the file leaves it out
            (:func:`galley_core.approach.derive_approach`).
        spawn_radius: objects start and goals are drawn within this radius of the centre, metres.
        z: height of the surface top, metres (filled in from the surface).
    """

    name: str
    rgba: tuple[float, float, float, float]
    surface: str
    center: tuple[float, float]
    size: tuple[float, float]
    approach: tuple[float, float, float]
    spawn_radius: float
    z: float = 0.0


@dataclass(frozen=True)
class ObjectSpec:
    """A manipulable object (or, with ``static``, a background object).

    Attributes:
        name: unique name; its TF frame is ``object/<name>``.
        shape: one of :data:`OBJECT_SHAPES`.
        size: shape parameters, metres: sphere (radius,), box (x, y, z), cylinder (radius, height),
            bowl and plate (radius, height, wall thickness), fork (length, width, thickness).
        mass: kilograms.
        friction: sliding friction coefficient.
        rgba: colour.
        grasp_offset: (x, y, z) where the tool centre point goes for a top-down grasp, in the object
            frame (origin at the object's bottom centre), metres.
        grasp_yaw: direction in the object frame (about z) along which the fingers close, radians.
        place: for background objects only: (x, y, yaw) on the surface ``on``.
        on: surface a background object stands on (``surface:`` in the file; YAML reads ``on`` as true).
    """

    name: str
    shape: str
    size: tuple[float, ...]
    mass: float
    friction: float = 1.0
    rgba: tuple[float, float, float, float] = (0.8, 0.8, 0.8, 1.0)
    grasp_offset: tuple[float, float, float] = (0.0, 0.0, 0.0)
    grasp_yaw: float = 0.0
    place: tuple[float, float, float] | None = None
    on: str = ""

    @property
    def height(self) -> float:
        """Height of the object standing upright, metres."""
        if self.shape == "sphere":
            return 2.0 * self.size[0]
        if self.shape == "box":
            return self.size[2]
        if self.shape in ("cylinder", "bowl", "plate"):
            return self.size[1]
        return self.size[2]  # fork: thickness

    @property
    def symmetric_about_z(self) -> bool:
        """Whether turning the object about its vertical axis leaves it the same (round shapes)."""
        return self.shape in ("sphere", "cylinder", "bowl", "plate")

    @property
    def footprint_radius(self) -> float:
        """Radius of a circle that holds the object seen from above, metres."""
        if self.shape == "box":
            return math.hypot(self.size[0], self.size[1]) / 2.0
        if self.shape == "fork":
            return self.size[0] / 2.0
        return self.size[0]


@dataclass(frozen=True)
class Scene:
    """A kitchen scene. See the module docstring and ``config/scenes/kitchen.yaml``."""

    name: str
    bounds: tuple[float, float, float, float]  # x_min, y_min, x_max, y_max of the map, metres
    boxes: tuple[Box, ...]
    zones: tuple[Zone, ...]
    objects: tuple[ObjectSpec, ...]
    background: tuple[ObjectSpec, ...]
    start_segments: tuple[tuple[tuple[float, float], tuple[float, float]], ...]
    start_yaw_range: tuple[float, float] = (-math.pi, math.pi)
    floor_rgba: tuple[float, float, float, float] = (0.55, 0.5, 0.45, 1.0)
    wall_rgba: tuple[float, float, float, float] = (0.85, 0.85, 0.8, 1.0)
    source: str = ""
    extras: Mapping[str, Any] = field(default_factory=dict)

    def zone(self, name: str) -> Zone:
        """The zone of that colour name; the error lists the valid ones."""
        for z in self.zones:
            if z.name == name:
                return z
        raise SceneError(f"scene {self.name!r} has no zone {name!r}; zones: {', '.join(self.zone_names)}")

    def object(self, name: str) -> ObjectSpec:
        """The manipulable object of that name; the error lists the valid ones."""
        for o in self.objects:
            if o.name == name:
                return o
        raise SceneError(
            f"scene {self.name!r} has no object {name!r}; objects: {', '.join(self.object_names)}"
        )

    def box(self, name: str) -> Box:
        for b in self.boxes:
            if b.name == name:
                return b
        raise SceneError(f"scene {self.name!r} has no furniture or wall {name!r}")

    @property
    def zone_names(self) -> list[str]:
        return [z.name for z in self.zones]

    @property
    def object_names(self) -> list[str]:
        return [o.name for o in self.objects]


def scene_path(name_or_path: str | Path, search_dirs: Sequence[Path] = ()) -> Path:
    """Resolve a scene given by name (``kitchen``) or by path (``config/scenes/kitchen.yaml``).

    Raises:
        SceneError: no such file; the message lists the scenes found.
    """
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml") and path.is_file():
        return path
    for folder in search_dirs:
        candidate = Path(folder) / f"{name_or_path}.yaml"
        if candidate.is_file():
            return candidate
    found = sorted(p.stem for folder in search_dirs for p in Path(folder).glob("*.yaml"))
    raise SceneError(
        f"scene {str(name_or_path)!r} not found (looked in {', '.join(map(str, search_dirs)) or 'nowhere'}); "
        f"scenes: {', '.join(found) or 'none'}"
    )


def load_scene(path: str | Path) -> Scene:
    """Read and validate a scene file.

    Raises:
        SceneError: naming the file, the entry and what is wrong.
    """
    raw = read_yaml(path, what="scene file", error=SceneError)
    if not isinstance(raw, dict):
        raise SceneError(f"scene file {path}: the top level must be a mapping (name, bounds, walls, ...)")
    try:
        return _parse(raw, str(path))
    except SceneError as err:
        raise SceneError(f"scene file {path}: {err}") from None


def parse_scene(document: dict[str, Any], source: str = "") -> Scene:
    """Validate a scene document (the parsed YAML of a scene file, e.g. a generated one).

    Raises:
        SceneError: naming the entry and what is wrong.
    """
    return _parse(document, source)


class _Reader:
    """Typed access to one mapping of the YAML, with errors that name the key path."""

    def __init__(self, data: Any, where: str) -> None:
        if not isinstance(data, dict):
            raise SceneError(f"{where}: expected a mapping, got {data!r}")
        self.data = data
        self.where = where

    def get(self, key: str, default: Any = ...) -> Any:
        if key not in self.data:
            if default is ...:
                raise SceneError(f"{self.where}.{key}: missing")
            return default
        return self.data[key]

    def number(self, key: str, default: Any = ..., *, positive: bool = False) -> float:
        value = self.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise SceneError(f"{self.where}.{key}: {value!r} is not a finite number")
        if positive and value <= 0:
            raise SceneError(f"{self.where}.{key}: {value!r} must be > 0")
        return float(value)

    def vector(
        self, key: str, length: int | Sequence[int], default: Any = ..., *, positive: bool = False
    ) -> tuple[float, ...]:
        value = self.get(key, default)
        lengths = (length,) if isinstance(length, int) else tuple(length)
        if not isinstance(value, (list, tuple)) or len(value) not in lengths:
            raise SceneError(
                f"{self.where}.{key}: expected a list of {' or '.join(map(str, lengths))} numbers, "
                f"got {value!r}"
            )
        out = []
        for v in value:
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise SceneError(f"{self.where}.{key}: {value!r} holds a value that is not a finite number")
            if positive and v <= 0:
                raise SceneError(f"{self.where}.{key}: every value must be > 0, got {value!r}")
            out.append(float(v))
        return tuple(out)

    def rgba(self, key: str, default: Any = ...) -> tuple[float, float, float, float]:
        value = self.vector(key, (3, 4), default)
        if any(not 0.0 <= v <= 1.0 for v in value):
            raise SceneError(f"{self.where}.{key}: colour components must lie in [0, 1], got {value!r}")
        return (value[0], value[1], value[2], value[3] if len(value) == 4 else 1.0)


def _named_items(raw: Any, where: str) -> list[tuple[str, _Reader]]:
    """Accept a mapping name -> entry or a list of entries with ``name``."""
    if isinstance(raw, dict):
        items = [(str(k), _Reader(v, f"{where}.{k}")) for k, v in raw.items()]
    elif isinstance(raw, list):
        items = []
        for i, entry in enumerate(raw):
            reader = _Reader(entry, f"{where}[{i}]")
            items.append((str(reader.get("name")), reader))
    else:
        raise SceneError(f"{where}: expected a mapping or a list, got {raw!r}")
    names = [n for n, _ in items]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise SceneError(f"{where}: names must be unique, repeated: {', '.join(duplicates)}")
    return items


def _box(name: str, r: _Reader, *, surface: bool, rgba: tuple[float, float, float, float]) -> Box:
    return Box(
        name=name,
        center=r.vector("center", 3),  # type: ignore[arg-type]
        size=r.vector("size", 3, positive=True),  # type: ignore[arg-type]
        yaw=r.number("yaw", 0.0),
        rgba=r.rgba("rgba", rgba),
        surface=bool(r.get("surface", surface)),
    )


_SIZES = {"sphere": 1, "box": 3, "cylinder": 2, "bowl": 3, "plate": 3, "fork": 3}


def _object(name: str, r: _Reader, *, static: bool) -> ObjectSpec:
    shape = r.get("shape")
    if shape not in OBJECT_SHAPES:
        raise SceneError(f"{r.where}.shape: {shape!r} is not one of {', '.join(OBJECT_SHAPES)}")
    size = r.vector("size", _SIZES[shape], positive=True)
    if shape in ("bowl", "plate") and size[2] * 2 >= size[0]:
        raise SceneError(f"{r.where}.size: the wall thickness {size[2]} must be less than the radius / 2")
    return ObjectSpec(
        name=name,
        shape=shape,
        size=size,
        mass=r.number("mass", 1.0 if static else ..., positive=True),
        friction=r.number("friction", 1.0, positive=True),
        rgba=r.rgba("rgba", (0.8, 0.8, 0.8, 1.0)),
        grasp_offset=r.vector("grasp_offset", 3, (0.0, 0.0, 0.0)),  # type: ignore[arg-type]
        grasp_yaw=r.number("grasp_yaw", 0.0),
        place=r.vector("place", 3) if static else None,  # type: ignore[arg-type]
        on=str(r.get("surface")) if static else "",
    )


def _lighting(raw: Any) -> dict[str, tuple[float, ...]]:
    """The optional ``lighting`` entry: headlight ambient and diffuse, sun diffuse and direction."""
    r = _Reader(raw, "lighting")
    out = {key: r.vector(key, 3) for key in ("ambient", "diffuse", "sun_diffuse") if key in r.data}
    for key, value in out.items():
        if any(not 0.0 <= v <= 1.0 for v in value):
            raise SceneError(f"lighting.{key}: components must lie in [0, 1], got {list(value)}")
    if "sun_direction" in r.data:
        out["sun_direction"] = r.vector("sun_direction", 3)
        if out["sun_direction"][2] >= 0:
            raise SceneError("lighting.sun_direction: the sun must shine downwards (z < 0)")
    unknown = sorted(set(r.data) - {"ambient", "diffuse", "sun_diffuse", "sun_direction"})
    if unknown:
        known = "ambient, diffuse, sun_diffuse, sun_direction"
        raise SceneError(f"lighting: unknown keys {', '.join(unknown)}; known: {known}")
    return out


def _parse(raw: dict[str, Any], source: str) -> Scene:
    top = _Reader(raw, "scene")
    wall_rgba = top.rgba("wall_rgba", (0.85, 0.85, 0.8, 1.0))
    boxes = [_box(n, r, surface=False, rgba=wall_rgba) for n, r in _named_items(top.get("walls"), "walls")]
    boxes += [
        _box(n, r, surface=True, rgba=(0.6, 0.45, 0.3, 1.0))
        for n, r in _named_items(top.get("furniture"), "furniture")
    ]
    names = [b.name for b in boxes]
    if len(set(names)) != len(names):
        raise SceneError("walls and furniture: names must be unique across both")
    by_name = {b.name: b for b in boxes}

    bounds = top.vector("bounds", 4)
    zones = []
    for name, r in _named_items(top.get("zones"), "zones"):
        surface = str(r.get("surface"))
        if surface not in by_name or not by_name[surface].surface:
            options = ", ".join(b.name for b in boxes if b.surface)
            raise SceneError(
                f"{r.where}.surface: {surface!r} is not a furniture surface; surfaces: {options}"
            )
        center = r.vector("center", 2)
        if "approach" in r.data:
            approach: tuple[float, ...] | None = r.vector("approach", 3)
        else:
            approach = derive_approach(by_name[surface], (center[0], center[1]), boxes, bounds)  # type: ignore[arg-type]
            if approach is None:
                raise SceneError(
                    f"{r.where}: no side of {surface!r} leaves room for the base in front of the zone; "
                    "move the zone or the furniture, or give approach: [x, y, yaw]"
                )
        zones.append(
            Zone(
                name=name,
                rgba=r.rgba("rgba"),
                surface=surface,
                center=center,  # type: ignore[arg-type]
                size=r.vector("size", 2, (0.3, 0.3), positive=True),  # type: ignore[arg-type]
                approach=approach,  # type: ignore[arg-type]
                spawn_radius=r.number("spawn_radius", 0.08, positive=True),
                z=by_name[surface].top_z,
            )
        )
    if not zones:
        raise SceneError("zones: a scene needs at least one zone")
    objects = [_object(n, r, static=False) for n, r in _named_items(top.get("objects"), "objects")]
    background = [
        _object(n, r, static=True) for n, r in _named_items(top.get("background", {}), "background")
    ]
    for obj in background:
        if obj.on not in by_name:
            raise SceneError(f"background.{obj.name}.surface: {obj.on!r} is not a furniture surface")

    start = _Reader(top.get("robot_start"), "robot_start")
    segments_raw = start.get("segments")
    if not isinstance(segments_raw, list) or not segments_raw:
        raise SceneError("robot_start.segments: expected a list of [[x1, y1], [x2, y2]] segments")
    segments = []
    for i, seg in enumerate(segments_raw):
        if not (isinstance(seg, list) and len(seg) == 2):
            raise SceneError(f"robot_start.segments[{i}]: expected [[x1, y1], [x2, y2]], got {seg!r}")
        reader = _Reader({"a": seg[0], "b": seg[1]}, f"robot_start.segments[{i}]")
        segments.append((reader.vector("a", 2), reader.vector("b", 2)))
    yaw_range = start.vector("yaw_range", 2, (-math.pi, math.pi))
    return Scene(
        name=str(top.get("name")),
        bounds=bounds,  # type: ignore[arg-type]
        boxes=tuple(boxes),
        zones=tuple(zones),
        objects=tuple(objects),
        background=tuple(background),
        start_segments=tuple(segments),  # type: ignore[arg-type]
        start_yaw_range=yaw_range,  # type: ignore[arg-type]
        floor_rgba=top.rgba("floor_rgba", (0.55, 0.5, 0.45, 1.0)),
        wall_rgba=wall_rgba,
        source=source,
        extras={k: v for k, v in raw.items() if k == "top_down"}
        | ({"lighting": _lighting(raw["lighting"])} if "lighting" in raw else {}),
    )
