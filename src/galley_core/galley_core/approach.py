"""Approach poses derived from a zone's surface, the furniture around it and the robot's footprint.

A ``move to the <zone> zone`` step drives the base to the zone's approach pose, from which the arm
reaches the zone. :func:`derive_approach` finds it: for each side of the zone's surface (a box,
possibly turned about z) the base would stand in front of that side, facing it, on the line through
the zone's centre perpendicular to the edge, ``standoff_m`` out from the edge. A side is usable when
the disc the global planner keeps clear around the base (:attr:`ApproachConfig.keep_clear_m`) meets
no wall, furniture or background object that reaches into the base's height band, and stays inside
the scene's bounds. Of the usable sides the one nearest the zone centre wins (the arm reaches least
far), ties going to the side listed first (+x, -x, +y, -y in the surface's frame).

Why the standoff is what it is: Theta* (galley_core.navigation.theta_star) accepts a cell whose
centre lies at least ``clearance_m + resolution / sqrt(2)`` from every obstacle cell centre, an
obstacle cell's centre may lie half a cell outside the furniture's edge, and the goal's own cell
centre half a cell nearer. So a base ``clearance_m + resolution * (1 + 1 / sqrt(2))`` out is free
on any grid alignment; :attr:`ApproachConfig.standoff_m` adds ``margin_m`` to that.

The scene loader uses this when a zone leaves ``approach`` out; the scene generator always does.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from galley_core.config import Config, param

__all__ = ["BASE_BAND_M", "ApproachConfig", "box_distance", "derive_approach", "side_edges"]

#: Heights the base occupies (metres): things entirely above or below it do not block the base
#: (the same band the occupancy map is rasterised in, galley_sim.map_export).
BASE_BAND_M = (0.02, 0.40)


class Box(Protocol):
    """What the derivation reads of a box (:class:`galley_core.scene.Box`, which imports this module)."""

    @property
    def name(self) -> str: ...
    @property
    def center(self) -> tuple[float, float, float]: ...
    @property
    def size(self) -> tuple[float, float, float]: ...
    @property
    def yaw(self) -> float: ...


@dataclass(frozen=True)
class ApproachConfig(Config):
    """How far from a surface's edge the base stands; every distance in metres."""

    clearance_m: float = param(
        0.4,
        "the global planner's clearance R (global_planner.clearance_m): the base's approach pose must "
        "be a free cell of its inflated map",
        unit="m",
        gt=0.0,
    )
    map_resolution_m: float = param(0.05, "cell size of the scene's occupancy map", unit="m", gt=0.0)
    margin_m: float = param(0.005, "added to the least standoff that is free on any grid", unit="m", ge=0.0)

    @property
    def keep_clear_m(self) -> float:
        """Radius around the approach position that must be free of obstacles, metres."""
        # An obstacle cell's centre half a cell outside the obstacle, the base's cell centre up to
        # half a diagonal off the base, and Theta*'s own half diagonal: free on any grid.
        return self.clearance_m + self.map_resolution_m * (0.5 + math.sqrt(2.0)) + self.margin_m

    @property
    def standoff_m(self) -> float:
        """Distance of the base centre from the surface's edge, metres."""
        return self.clearance_m + self.map_resolution_m * (1.0 + 1.0 / math.sqrt(2.0)) + self.margin_m


def _local(box: Box, x: float, y: float) -> tuple[float, float]:
    c, s = math.cos(box.yaw), math.sin(box.yaw)
    dx, dy = x - box.center[0], y - box.center[1]
    return c * dx + s * dy, -s * dx + c * dy


def _world(box: Box, u: float, v: float) -> tuple[float, float]:
    c, s = math.cos(box.yaw), math.sin(box.yaw)
    return box.center[0] + c * u - s * v, box.center[1] + s * u + c * v


def box_distance(box: Box, x: float, y: float) -> float:
    """Distance from the point (x, y) to the box's footprint seen from above (0 inside), metres."""
    u, v = _local(box, x, y)
    du = max(abs(u) - box.size[0] / 2.0, 0.0)
    dv = max(abs(v) - box.size[1] / 2.0, 0.0)
    return math.hypot(du, dv)


def in_base_band(box: Box) -> bool:
    """Whether the box reaches into the heights the base occupies."""
    bottom = box.center[2] - box.size[2] / 2.0
    top = box.center[2] + box.size[2] / 2.0
    return top >= BASE_BAND_M[0] and bottom <= BASE_BAND_M[1]


def side_edges(surface: Box, center: tuple[float, float]) -> list[tuple[float, tuple[float, float], float]]:
    """The sides of ``surface`` as seen from a zone at ``center``.

    For each side (+x, -x, +y, -y in the surface's frame): the centre's distance from that edge
    (metres), the point of the edge nearest the centre, and the edge's outward normal (radians).
    """
    u, v = _local(surface, *center)
    hx, hy = surface.size[0] / 2.0, surface.size[1] / 2.0
    sides = [
        (hx - u, (hx, v), 0.0),
        (u + hx, (-hx, v), math.pi),
        (hy - v, (u, hy), math.pi / 2),
        (v + hy, (u, -hy), -math.pi / 2),
    ]
    return [(depth, _world(surface, *edge), normal + surface.yaw) for depth, edge, normal in sides]


def derive_approach(
    surface: Box,
    center: tuple[float, float],
    obstacles: Sequence[Box],
    bounds: tuple[float, float, float, float],
    config: ApproachConfig | None = None,
) -> tuple[float, float, float] | None:
    """The base pose (x, y, yaw; metres, radians) from which the arm reaches a zone at ``center``.

    Args:
        surface: the box the zone lies on.
        center: the zone centre (x, y), metres.
        obstacles: walls, furniture and background objects' boxes; those outside the base's height
            band are ignored, and so is ``surface`` itself.
        bounds: x_min, y_min, x_max, y_max of the scene.
        config: the standoff (see the module docstring).

    Returns:
        The approach pose, facing the surface, or None when no side leaves room for the base.
    """
    c = config or ApproachConfig()
    x0, y0, x1, y1 = bounds
    best: tuple[float, tuple[float, float, float]] | None = None
    for depth, (ex, ey), normal in side_edges(surface, center):
        x = ex + c.standoff_m * math.cos(normal)
        y = ey + c.standoff_m * math.sin(normal)
        room = c.keep_clear_m
        if not (x0 + room <= x <= x1 - room and y0 + room <= y <= y1 - room):
            continue
        blocked = any(
            box_distance(b, x, y) < room for b in obstacles if b.name != surface.name and in_base_band(b)
        )
        if blocked:
            continue
        yaw = math.atan2(math.sin(normal + math.pi), math.cos(normal + math.pi))
        if best is None or depth < best[0] - 1e-9:
            best = (depth, (round(x, 4), round(y, 4), round(yaw, 4)))
    return None if best is None else best[1]
