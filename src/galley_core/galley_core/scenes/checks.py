"""The checks a scene passes before anything runs in it; each problem is one line naming the fix.

:func:`check_scene` runs them all on a loaded :class:`~galley_core.scene.Scene`:

* **names**: zone and object names are words of the plan grammar (lower-case letters, spaces,
  underscores) and no zone shares a name with an object;
* **overlap**: no two pieces of furniture, background objects or zone patches interpenetrate (walls
  may meet at corners, things may stand on one another), no zone patch leaves its surface or lies
  under something standing on the surface;
* **fit**: every object fits every zone: it stands wholly on the surface anywhere within the zone's
  spawn radius, its footprint fits the drawn patch, the gripper closes on it (on a bowl's or a
  plate's rim, the finger pads clear its base and hold enough rim); and episodes can be drawn
  (objects and goals find room in their zones);
* **base**: on the scene's occupancy grid inflated by the footprint (the global planner's Theta*
  with its clearance), every point of the start segments is free and every zone's approach pose
  is reachable from them;
* **arm**: from the approach pose, the arm reaches every object's grasp point, top-down, anywhere
  in the zone's spawn radius, and the approach height above it: a numerical inverse kinematics on
  the robot's arm (:class:`~galley_core.manipulation.kinematics.ArmKinematics`) within joint limits.

The occupancy grid comes from the caller (galley_sim rasterises the scene), and so do the arm and
the planner's configuration, so that the checks judge the scene with what runs in it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from galley_core.approach import box_distance
from galley_core.episode import sample_episode
from galley_core.manipulation.kinematics import ArmKinematics
from galley_core.navigation.grid import OccupancyGrid
from galley_core.navigation.theta_star import ThetaStar, ThetaStarConfig
from galley_core.scene import Box, ObjectSpec, Scene, SceneError, Zone
from galley_core.scenes.catalogue import (
    MAX_GRASP_WIDTH_M,
    PAD_CLEARANCE_M,
    PALM_ABOVE_TCP_M,
    RIM_GRIP_M,
    grasp_width,
    rim_grasp_heights,
)

__all__ = ["EPISODES_CHECKED", "check_names", "check_overlaps", "check_scene", "reaches_top_down"]

#: Episodes drawn to check that objects and goals find room in their zones.
EPISODES_CHECKED = 20
_NAME = re.compile(r"^[a-z][a-z_ ]*[a-z_]$|^[a-z]$")
_OVERLAP_M = 0.005  # interpenetration below this is contact, not overlap
_APPROACH_HEIGHT_M = 0.12  # the pick's approach above the grasp (PickPlaceConfig.approach_height_m)
F64 = NDArray[np.float64]


def check_names(scene: Scene) -> list[str]:
    """Names the plan grammar can carry, and no zone named like an object."""
    problems = []
    for kind, names in (("zone", scene.zone_names), ("object", scene.object_names)):
        for n in names:
            if not _NAME.match(n) or "  " in n:
                problems.append(
                    f"{kind} {n!r}: names are lower-case letters, spaces and underscores "
                    "('red', 'left counter'); rename it"
                )
    for n in sorted(set(scene.zone_names) & set(scene.object_names)):
        problems.append(f"zone {n!r} has the name of an object; rename one of them")
    return problems


def _corners(box: Box) -> F64:
    c, s = math.cos(box.yaw), math.sin(box.yaw)
    hx, hy = box.size[0] / 2, box.size[1] / 2
    local = np.array([[hx, hy], [-hx, hy], [-hx, -hy], [hx, -hy]])
    return np.asarray(local @ np.array([[c, s], [-s, c]]) + np.array(box.center[:2]), dtype=float)


def _penetration(a: Box, b: Box) -> float:
    """How deep two boxes interpenetrate (separating-axis test on the footprints, z apart), metres."""
    z = min(a.center[2] + a.size[2] / 2, b.center[2] + b.size[2] / 2) - max(
        a.center[2] - a.size[2] / 2, b.center[2] - b.size[2] / 2
    )
    if z <= 0:
        return 0.0
    ca, cb = _corners(a), _corners(b)
    depth = z
    for yaw in (a.yaw, a.yaw + math.pi / 2, b.yaw, b.yaw + math.pi / 2):
        axis = np.array([math.cos(yaw), math.sin(yaw)])
        pa, pb = ca @ axis, cb @ axis
        depth = min(depth, min(pa.max(), pb.max()) - max(pa.min(), pb.min()))
        if depth <= 0:
            return 0.0
    return float(depth)


def _object_box(spec: ObjectSpec, scene: Scene) -> Box:
    assert spec.place is not None
    r = spec.footprint_radius
    size = (spec.size[0], spec.size[1]) if spec.shape == "box" else (2 * r, 2 * r)
    bottom = scene.box(spec.on).top_z
    return Box(
        spec.name,
        (spec.place[0], spec.place[1], bottom + spec.height / 2),
        (*size, spec.height),
        spec.place[2],
    )


def _zone_box(zone: Zone) -> Box:
    return Box(f"zone {zone.name}", (zone.center[0], zone.center[1], zone.z + 0.005), (*zone.size, 0.01))


def check_overlaps(scene: Scene) -> list[str]:
    """Furniture, background objects and zones that interpenetrate or leave their surface."""
    problems = []
    furniture = [b for b in scene.boxes if not b.name.startswith("wall")]
    walls = [b for b in scene.boxes if b.name.startswith("wall")]
    things = [(f"furniture {b.name!r}", b) for b in furniture]
    things += [(f"background object {o.name!r}", _object_box(o, scene)) for o in scene.background]
    for i, (name_a, a) in enumerate(things):
        for name_b, b in things[i + 1 :] + [(f"wall {w.name!r}", w) for w in walls]:
            depth = _penetration(a, b)
            if depth > _OVERLAP_M:
                problems.append(f"{name_a} and {name_b} overlap by {depth * 1000:.0f} mm; move one of them")
    for i, zone in enumerate(scene.zones):
        surface = scene.box(zone.surface)
        patch = _zone_box(zone)
        inside = [box_distance(surface, *corner) for corner in _corners(patch)]
        if max(inside) > 1e-6:
            problems.append(
                f"zone {zone.name!r}: its patch leaves the top of {zone.surface!r}; move it inward"
            )
        for other in scene.zones[i + 1 :]:
            if _penetration(patch, _zone_box(other)) > _OVERLAP_M:
                problems.append(f"zones {zone.name!r} and {other.name!r} overlap; move one of them")
        raised = Box(patch.name, (*zone.center, zone.z + 0.02), (*zone.size, 0.02))  # just above the top
        for name, thing in things:
            if thing.name != zone.surface and _penetration(raised, thing) > _OVERLAP_M:
                problems.append(f"zone {zone.name!r} is covered by {name}; move one of them")
    return problems


def _edge_room(zone: Zone, surface: Box) -> float:
    """Distance from the zone centre to the nearest edge of its surface, metres."""
    c, s = math.cos(surface.yaw), math.sin(surface.yaw)
    dx, dy = zone.center[0] - surface.center[0], zone.center[1] - surface.center[1]
    u, v = c * dx + s * dy, -s * dx + c * dy
    return min(surface.size[0] / 2 - abs(u), surface.size[1] / 2 - abs(v))


def _rim_problems(obj: ObjectSpec) -> list[str]:
    """A bowl's or plate's grasp whose finger pads would touch its base or hold too little rim."""
    if obj.shape not in ("bowl", "plate"):
        return []
    _, height, wall = obj.size
    lowest, highest = rim_grasp_heights(height, wall)
    z = obj.grasp_offset[2]
    if z < lowest - 1e-6:
        return [
            f"object {obj.name!r}: at grasp height {z:.3f} m the finger pads' tips "
            f"({z - (lowest - wall - PAD_CLEARANCE_M):.3f} m up) are not {PAD_CLEARANCE_M} m above its "
            f"base ({wall:.3f} m thick) and catch it as they close; raise grasp_offset's z to at "
            f"least {lowest:.3f} m"
        ]
    if z > highest + 1e-6:
        return [
            f"object {obj.name!r}: at grasp height {z:.3f} m less than {RIM_GRIP_M} m of its rim is "
            f"between the finger pads; lower grasp_offset's z to at most {highest:.3f} m"
        ]
    return []


def check_fit(scene: Scene, episodes: int = EPISODES_CHECKED) -> list[str]:
    """Objects too big for a zone or the gripper, and zones without room for an episode's objects."""
    problems = []
    for obj in scene.objects:
        width = grasp_width(obj.shape, obj.size, obj.grasp_yaw)
        if width > MAX_GRASP_WIDTH_M:
            problems.append(
                f"object {obj.name!r}: the gripper closes across {width:.3f} m of it, more than it opens "
                f"({MAX_GRASP_WIDTH_M} m); make it narrower or turn grasp_yaw"
            )
        if obj.grasp_offset[2] + PALM_ABOVE_TCP_M < obj.height + 0.005:
            problems.append(
                f"object {obj.name!r}: at grasp height {obj.grasp_offset[2]:.3f} m the palm "
                f"({PALM_ABOVE_TCP_M} m above the tcp) meets its top ({obj.height:.3f} m); raise "
                "grasp_offset's z"
            )
        problems += _rim_problems(obj)
        too_small = []
        for zone in scene.zones:
            room = _edge_room(zone, scene.box(zone.surface))
            if obj.footprint_radius > min(zone.size) / 2 or obj.footprint_radius + zone.spawn_radius > room:
                too_small.append(zone.name)
        if too_small:
            problems.append(
                f"object {obj.name!r} (radius {obj.footprint_radius:.2f} m) is too big for zone"
                f"{'s' if len(too_small) > 1 else ''} {', '.join(too_small)}: it must fit the zone's patch "
                "and stand wholly on the surface anywhere within the spawn radius; use a smaller object or "
                "move the zone inward"
            )
    if not problems:
        for seed in range(episodes):
            try:
                sample_episode(scene, seed)
            except SceneError as err:
                problems.append(f"episode {seed} cannot be drawn: {err}")
                break
    return problems


def check_base(scene: Scene, grid: OccupancyGrid, config: ThetaStarConfig | None = None) -> list[str]:
    """Start segments free and every zone's approach pose reachable from them (Theta*)."""
    planner = ThetaStar(grid=grid, config=config or ThetaStarConfig())
    starts = []
    for i, (a, b) in enumerate(scene.start_segments):
        n = max(2, math.ceil(math.dist(a, b) / 0.25) + 1)
        for t in np.linspace(0.0, 1.0, n):
            starts.append((i, (a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1]))))
    problems = []
    reference = None
    for i, point in starts:
        if reference is None:
            result = planner.plan(point, point)
            if result.ok:
                reference = point
                continue
        else:
            result = planner.plan(reference, point)
            if result.ok:
                continue
        problems.append(
            f"robot_start.segments[{i}]: the base cannot start at ({point[0]:.2f}, {point[1]:.2f}) "
            f"({result.code}: the base needs {planner.config.clearance_m} m clear); move the segment"
        )
    if reference is None:
        return problems
    for zone in scene.zones:
        x, y, _ = zone.approach
        result = planner.plan(reference, (x, y))
        if not result.ok:
            problems.append(
                f"zone {zone.name!r}: the base cannot reach its approach pose ({x:.2f}, {y:.2f}) from the "
                f"start ({result.code}); make room around {zone.surface!r} or move the zone"
            )
    return problems


def reaches_top_down(arm: ArmKinematics, point: F64, iterations: int = 60) -> bool:
    """Whether the arm puts its tcp at ``point`` (root frame, metres) pointing straight down.

    Damped least squares on the position and the tool axis (the tcp's x axis; the turn about the
    vertical is left free), from a few starting postures, clipped to the joint limits.
    """
    down = np.array([0.0, 0.0, -1.0])
    heading = math.atan2(point[1], point[0])
    seeds = [
        np.array([heading, 0.3, 1.2, 0.0, 1.2, 0.0]),
        np.array([heading, -0.3, 1.8, 0.0, 0.9, 0.0]),
        np.array([heading, 0.8, 0.6, 0.0, 1.0, 0.0]),
    ]
    if arm.dof != len(seeds[0]):
        seeds = [np.zeros(arm.dof)]
    for seed in seeds:
        q = arm.clip(seed)
        for _ in range(iterations):
            tcp, rot = arm.tcp_pose(q)
            axis = rot[:, 0]
            err = np.concatenate([point - tcp, -np.cross(axis, down)])  # drives axis x down to zero
            if np.linalg.norm(err[:3]) < 0.004 and np.linalg.norm(err[3:]) < 0.03:
                return True
            jac = arm.tcp_jacobian(q)
            j_axis = -np.cross(axis, jac[3:].T).T  # d(axis)/dq = omega x axis
            j_err = np.vstack([jac[:3], np.cross(j_axis.T, down).T])
            dq = j_err.T @ np.linalg.solve(j_err @ j_err.T + 1e-3 * np.eye(6), err)
            q = arm.clip(q + np.clip(dq, -0.3, 0.3))
    return False


def _zone_points(zone: Zone) -> list[tuple[float, float]]:
    """The zone centre and eight points on its spawn circle, map frame."""
    r = zone.spawn_radius
    return [zone.center] + [
        (zone.center[0] + r * math.cos(a), zone.center[1] + r * math.sin(a))
        for a in np.linspace(0.0, 2.0 * math.pi, 8, endpoint=False)
    ]


def check_arm(scene: Scene, arm: ArmKinematics) -> list[str]:
    """Every object's grasp point, anywhere in every zone, reachable top-down from the approach pose."""
    problems = []
    for zone in scene.zones:
        x, y, yaw = zone.approach
        c, s = math.cos(yaw), math.sin(yaw)
        missed: list[str] = []
        for obj in scene.objects:
            reach = math.hypot(obj.grasp_offset[0], obj.grasp_offset[1])
            for px, py in _zone_points(zone):
                dx, dy = px - x, py - y
                local = np.array([c * dx + s * dy, -s * dx + c * dy, zone.z + obj.grasp_offset[2]])
                # A round object's grasp turns to the side nearest the arm; another's may lie anywhere.
                near = local.copy()
                horizontal = math.hypot(local[0], local[1])
                if reach > 0 and horizontal > 1e-6:
                    sign = -1.0 if obj.symmetric_about_z else 1.0
                    near[:2] = local[:2] * (1.0 + sign * reach / horizontal)
                targets = [near, near + np.array([0.0, 0.0, _APPROACH_HEIGHT_M])]
                if not all(reaches_top_down(arm, t) for t in targets):
                    missed.append(f"the {obj.name} at ({px:.2f}, {py:.2f})")
                    break
        if missed:
            problems.append(
                f"zone {zone.name!r}: the arm cannot reach {', '.join(missed)} top-down from the approach "
                f"pose ({x:.2f}, {y:.2f}); move the zone nearer the edge the base stands at"
            )
    return problems


def check_scene(
    scene: Scene,
    *,
    grid: OccupancyGrid,
    arm: ArmKinematics,
    planner: ThetaStarConfig | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[str]:
    """Every check of the module docstring; one line per problem, empty when the scene is fine."""
    problems = check_names(scene) + check_overlaps(scene) + check_fit(scene)
    if progress:
        progress("names, overlaps and fit checked")
    problems += check_base(scene, grid, planner)
    problems += check_arm(scene, arm)
    return problems
