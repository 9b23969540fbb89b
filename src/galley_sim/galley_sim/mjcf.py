"""MJCF of a kitchen scene: the robot file (galley_description) included into a world built from a scene.

Geom groups and collision bits (what sees and touches what):

=========  =====  =======  ===========  ================================================
group      bits   type     who          notes
=========  =====  =======  ===========  ================================================
0          1/1    static   walls, furniture, background objects: the LiDAR and the map see them
1          1/0    robot    robot (from robot.xml): touches group 0 and objects, not floor/itself
2          3/3    objects  manipulable objects: touch everything, the floor included
3          0/0    zones    coloured patches, drawn only; hidden from robot cameras on request
floor      2/2             touches objects only
=========  =====  =======  ===========  ================================================

The model is compiled once per scene; what varies per episode (robot start, object poses,
colours) is set on the compiled model and data at reset (:mod:`galley_sim.scene_model`).
"""

from __future__ import annotations

import math
from xml.sax.saxutils import quoteattr

from galley_core.scene import Box, ObjectSpec, Scene
from galley_description import ROBOT_XML

__all__ = ["object_body_name", "scene_xml"]

STATIC_GROUP, ROBOT_GROUP, OBJECT_GROUP, ZONE_GROUP = 0, 1, 2, 3
_RIM_SEGMENTS = 16


def object_body_name(name: str) -> str:
    """MuJoCo body (and TF frame) name of a manipulable object."""
    return f"object/{name}"


def _f(*values: float) -> str:
    return " ".join(f"{v:.6g}" for v in values)


def _geom(
    name: str, kind: str, pos: tuple[float, ...], size: tuple[float, ...], attrs: str, *, yaw: float = 0.0
) -> str:
    rotation = f' euler="0 0 {yaw:.6g}"' if yaw else ""
    return (
        f'<geom name={quoteattr(name)} type="{kind}" pos="{_f(*pos)}" size="{_f(*size)}"{rotation} {attrs}/>'
    )


def _box_geom(box: Box) -> str:
    attrs = f'rgba="{_f(*box.rgba)}" group="{STATIC_GROUP}" contype="1" conaffinity="1"'
    return _geom(box.name, "box", box.center, tuple(s / 2.0 for s in box.size), attrs, yaw=box.yaw)


def _shape_geoms(spec: ObjectSpec, prefix: str, attrs: str) -> list[str]:
    """Geoms of an object in its own frame: origin at the bottom centre, z up."""
    s = spec.size
    attrs = f'rgba="{_f(*spec.rgba)}" {attrs}'
    if spec.shape == "sphere":
        return [_geom(prefix, "sphere", (0, 0, s[0]), (s[0],), attrs)]
    if spec.shape == "box":
        return [_geom(prefix, "box", (0, 0, s[2] / 2), tuple(v / 2 for v in s), attrs)]
    if spec.shape == "cylinder":
        return [_geom(prefix, "cylinder", (0, 0, s[1] / 2), (s[0], s[1] / 2), attrs)]
    if spec.shape in ("bowl", "plate"):
        radius, height, wall = s
        base_radius = radius - (wall if spec.shape == "bowl" else 0.0)
        geoms = [_geom(f"{prefix}/base", "cylinder", (0, 0, wall / 2), (base_radius, wall / 2), attrs)]
        ring = radius - wall / 2.0
        half_len = math.pi * ring / _RIM_SEGMENTS * 1.08
        # The rim starts just above the base so that only the base touches the surface below.
        rim_half = (height - wall) / 2.0
        for i in range(_RIM_SEGMENTS):
            a = 2.0 * math.pi * i / _RIM_SEGMENTS
            pos = (ring * math.cos(a), ring * math.sin(a), wall + rim_half + 0.0005)
            geoms.append(_geom(f"{prefix}/rim{i}", "box", pos, (wall / 2, half_len, rim_half), attrs, yaw=a))
        return geoms
    if spec.shape == "fork":
        length, width, thickness = s
        handle = 0.62 * length
        head = length - handle
        return [
            _geom(
                f"{prefix}/handle",
                "box",
                (-length / 2 + handle / 2, 0, thickness / 2),
                (handle / 2, 0.55 * width / 2, thickness / 2),
                attrs,
            ),
            _geom(
                f"{prefix}/head",
                "box",
                (length / 2 - head / 2, 0, thickness * 0.35),
                (head / 2, width / 2, thickness * 0.35),
                attrs,
            ),
        ]
    raise ValueError(f"object {spec.name!r}: unknown shape {spec.shape!r}")


def _inertial(spec: ObjectSpec) -> str:
    """A solid-box approximation of the object's inertia, centred at half height."""
    r = spec.footprint_radius
    h = spec.height
    m = spec.mass
    ixx = m * (3 * r * r + h * h) / 12.0
    izz = m * r * r / 2.0
    return f'<inertial pos="0 0 {h / 2:.6g}" mass="{m:.6g}" diaginertia="{_f(ixx, ixx, izz)}"/>'


def _object_body(spec: ObjectSpec) -> str:
    name = object_body_name(spec.name)
    # A ball rolls: without rolling friction (condim 6) an apple set down rolled off the table.
    condim = 6 if spec.shape == "sphere" else 4
    attrs = (
        f'group="{OBJECT_GROUP}" contype="3" conaffinity="3" condim="{condim}" '
        f'friction="{spec.friction:.6g} 0.01 0.0005" solref="0.005 1" solimp="0.95 0.99 0.001"'
    )
    geoms = "\n      ".join(_shape_geoms(spec, name, attrs))
    # Parked below the floor until an episode places it (see simulator.reset).
    return (
        f'<body name="{name}" pos="0 0 -1">\n      <freejoint name="{name}"/>\n      {_inertial(spec)}\n'
        f"      {geoms}\n    </body>"
    )


def _background(spec: ObjectSpec, scene: Scene) -> list[str]:
    assert spec.place is not None
    x, y, yaw = spec.place
    z = scene.box(spec.on).top_z
    attrs = f'group="{STATIC_GROUP}" contype="1" conaffinity="1"'
    geoms = _shape_geoms(spec, f"background/{spec.name}", attrs)
    return [
        f'<body name="background/{spec.name}" pos="{_f(x, y, z)}" euler="0 0 {yaw:.6g}">',
        *geoms,
        "</body>",
    ]


def scene_xml(
    scene: Scene, *, image_width: int = 640, image_height: int = 480, timestep_s: float = 0.002
) -> str:
    """The MJCF text of ``scene`` with the robot included.

    Args:
        scene: the scene description.
        image_width, image_height: the largest image any camera renders (offscreen buffer size).
        timestep_s: physics time step, seconds.
    """
    x0, y0, x1, y1 = scene.bounds
    cx, cy = (x0 + x1) / 2.0, (y0 + y1) / 2.0
    top = scene.extras.get("top_down", {})
    top_w, top_h = int(top.get("width_px", 640)), int(top.get("height_px", 480))
    # The orthographic top-down camera frames the whole map (fovy is the visible height in metres).
    fovy = max(y1 - y0, (x1 - x0) * top_h / top_w)
    width, height = max(image_width, top_w), max(image_height, top_h)
    zones = [
        f'<geom name="zone/{z.name}" type="box" pos="{_f(z.center[0], z.center[1], z.z + 0.0008)}" '
        f'size="{_f(z.size[0] / 2, z.size[1] / 2, 0.0007)}" rgba="{_f(*z.rgba)}" group="{ZONE_GROUP}" '
        'contype="0" conaffinity="0"/>'
        for z in scene.zones
    ]
    background = [line for spec in scene.background for line in _background(spec, scene)]
    light = scene.extras.get("lighting", {})  # a scene's own lighting (generated kitchens draw one)
    ambient, diffuse = light.get("ambient", (0.3, 0.3, 0.3)), light.get("diffuse", (0.3, 0.3, 0.3))
    sun, sun_dir = light.get("sun_diffuse", (0.45, 0.45, 0.45)), light.get("sun_direction", (0.2, 0.3, -1))
    lines = [
        f"<mujoco model={quoteattr('galley_' + scene.name)}>",
        '  <compiler angle="radian" autolimits="true"/>',
        f'  <option timestep="{timestep_s:.6g}" integrator="implicitfast" cone="elliptic" impratio="10">',
        # Resting objects sleep (MuJoCo skips them until something touches them): 3x faster steps.
        '    <flag sleep="enable"/>',
        "  </option>",
        "  <visual>",
        f'    <global offwidth="{width}" offheight="{height}"/>',
        # No light is specular, so lighting is constant across a flat face: subdividing box faces
        # (numquads) or the floor (its grid spacing, the plane's third size) for lighting hardly
        # changes the images (0.001 grey levels on average, 0.005 % of pixels by more than 2), and
        # software OpenGL pays for every vertex: 1 quad per face and a 1 m floor grid draw the
        # robot cameras in about a third less time than MuJoCo's 4 and this scene's 0.1 m did.
        '    <quality shadowsize="0" numquads="1"/>',
        f'    <headlight ambient="{_f(*ambient)}" diffuse="{_f(*diffuse)}" specular="0 0 0"/>',
        "  </visual>",
        f"  <include file={quoteattr(str(ROBOT_XML))}/>",
        "  <worldbody>",
        f'    <light name="sun" pos="{_f(cx, cy, 5)}" dir="{_f(*sun_dir)}" directional="true" '
        f'castshadow="false" diffuse="{_f(*sun)}" specular="0 0 0"/>',
        "    "
        + _geom(
            "floor",
            "plane",
            (cx, cy, 0),
            ((x1 - x0) / 2, (y1 - y0) / 2, 1.0),
            f'rgba="{_f(*scene.floor_rgba)}" group="{STATIC_GROUP}" contype="2" conaffinity="2"',
        ),
        *(f"    {_box_geom(b)}" for b in scene.boxes),
        *(f"    {z}" for z in zones),
        *(f"    {line}" for line in background),
        *(f"    {_object_body(o)}" for o in scene.objects),
        f'    <camera name="top_down" projection="orthographic" fovy="{fovy:.6g}" pos="{_f(cx, cy, 6)}" '
        'xyaxes="1 0 0 0 1 0"/>',
        "  </worldbody>",
        "</mujoco>",
    ]
    return "\n".join(lines) + "\n"
