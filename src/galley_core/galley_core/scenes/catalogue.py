"""The catalogue of manipulable objects a generated kitchen draws from.

Every kind is built from the scene format's primitive shapes (:data:`galley_core.scene.OBJECT_SHAPES`)
and carries its grasp in the same form as ``config/scenes/kitchen.yaml``: ``grasp_offset``, the tool
centre point in the object frame (origin at the bottom centre, metres), and ``grasp_yaw``, the
direction in the object frame along which the fingers close (radians). The five objects of the
shipped kitchen keep exactly their values there; the others follow the same rules:

* round things (sphere, cylinder) are grasped on the axis, a sphere at its centre, a cylinder at
  two thirds of its height (the cup's 0.06 m of 0.09 m), a tall one (a bottle) higher, so that the
  palm stays :data:`PALM_CLEARANCE_M` above its top;
* rimmed things (bowl, plate, pan) on the rim, at the ring's radius (radius - wall / 2), 80 % up,
  but never so low that the finger pads' tips come within :data:`PAD_CLEARANCE_M` of the base
  (as thick as the wall), nor so high that less than :data:`RIM_GRIP_M` of the rim lies between
  the pads (:func:`rim_grasp_heights`). The pads reach 15 mm below the tcp
  (:data:`~galley_core.manipulation.gripper.GALLEY_MM_GRIPPER`): a plate's 20 mm rim is grasped
  22 mm up, a bowl's 50 mm one 40 mm up;
* long or flat things (box, fork) across their narrow side (``grasp_yaw`` pi / 2 when the object is
  longer in x), at 60 % of their height but never so low that the pads' tips come within
  :data:`PAD_CLEARANCE_M` of the surface below them (16 mm up), nor so low that the palm meets
  the top; the fork's grasp is moved back along the handle as in the kitchen.

The gripper opens 0.08 m: every grasped width is at most :data:`MAX_GRASP_WIDTH_M`.
Sizes and colours of a kind vary per scene by :func:`draw_object`.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from galley_core.manipulation.gripper import GALLEY_MM_GRIPPER as _GRIPPER

__all__ = [
    "CATALOGUE",
    "MAX_GRASP_WIDTH_M",
    "PAD_CLEARANCE_M",
    "PALM_ABOVE_TCP_M",
    "PALM_CLEARANCE_M",
    "RIM_GRIP_M",
    "Kind",
    "draw_object",
    "grasp_of",
    "grasp_width",
    "rim_grasp_heights",
]

#: The widest thing the gripper takes between its fingers (fully open, less 4 mm), metres.
MAX_GRASP_WIDTH_M = round(_GRIPPER.opening_m - 0.004, 4)
#: The least gap between the finger pads' tips and what lies below them at a grasp (the surface, a
#: plate's base), metres. A plate grasped 16 mm up would put the tips 5 mm into its 6 mm base: the
#: descent stopped on the base, and the outer pad, closing from beyond the rim where the base
#: reaches out as far, caught the base's edge and flipped the plate out (training kitchen_7,
#: episode 844132). Level with the base (21 mm up) the plate was held.
PAD_CLEARANCE_M = 0.001
#: The lowest tcp height above the surface below the object, metres.
_LOWEST_TCP_M = round(_GRIPPER.pad_reach_m + PAD_CLEARANCE_M, 4)
#: How far the palm's underside is above the tcp of a top-down grasp, metres.
PALM_ABOVE_TCP_M = _GRIPPER.palm_above_tcp_m
#: The least gap between the palm and an object's top at the grasp, metres.
PALM_CLEARANCE_M = 0.02
#: The least height of rim between the finger pads at a grasp, metres. A plate held by 11 mm of
#: its rim (grasped 24 mm up) slid 30 mm in the fingers as it was carried (the shipped kitchen,
#: episode 464197); by 12 mm or more it was carried.
RIM_GRIP_M = 0.012


@dataclass(frozen=True)
class Kind:
    """One kind of object.

    Attributes:
        name: the object's name in the scene (and in instructions).
        shape: a scene shape (sphere, box, cylinder, bowl, plate, fork).
        size: its nominal shape parameters, metres (see :class:`galley_core.scene.ObjectSpec`).
        mass: kilograms.
        rgba: nominal colour; scenes vary it.
        scale: sizes are drawn within this factor either way of ``size`` (0: exactly ``size``).
        shipped: the kind is one of the shipped kitchen's five: drawn at its exact size and grasp.
    """

    name: str
    shape: str
    size: tuple[float, ...]
    mass: float
    rgba: tuple[float, float, float, float]
    scale: float = 0.08
    shipped: bool = False


CATALOGUE: tuple[Kind, ...] = (
    Kind("apple", "sphere", (0.037,), 0.15, (0.75, 0.12, 0.1, 1), shipped=True),
    Kind("bowl", "bowl", (0.065, 0.05, 0.006), 0.2, (0.85, 0.9, 0.95, 1), shipped=True),
    Kind("cup", "cylinder", (0.032, 0.09), 0.12, (0.2, 0.55, 0.75, 1), shipped=True),
    Kind("fork", "fork", (0.18, 0.022, 0.012), 0.04, (0.7, 0.7, 0.72, 1), shipped=True),
    Kind("plate", "plate", (0.09, 0.02, 0.006), 0.25, (0.96, 0.96, 0.94, 1), shipped=True),
    Kind("orange", "sphere", (0.036,), 0.14, (0.95, 0.5, 0.05, 1)),
    Kind("mug", "cylinder", (0.036, 0.095), 0.2, (0.8, 0.25, 0.2, 1)),
    Kind("can", "cylinder", (0.033, 0.12), 0.2, (0.75, 0.1, 0.15, 1)),
    Kind("bottle", "cylinder", (0.034, 0.2), 0.3, (0.2, 0.6, 0.3, 1), scale=0.05),
    Kind("spoon", "fork", (0.17, 0.03, 0.012), 0.03, (0.75, 0.75, 0.78, 1)),
    Kind("box", "box", (0.12, 0.06, 0.09), 0.15, (0.85, 0.7, 0.35, 1)),
    Kind("banana", "box", (0.18, 0.036, 0.035), 0.12, (0.95, 0.85, 0.2, 1)),
    Kind("sponge", "box", (0.1, 0.065, 0.035), 0.03, (0.95, 0.85, 0.15, 1)),
    Kind("pan", "bowl", (0.1, 0.045, 0.006), 0.4, (0.2, 0.2, 0.22, 1), scale=0.05),
)

#: The shipped kitchen's grasps, kept exactly (found on that kitchen; see kitchen.yaml). The bowl
#: and the plate follow the rim rule, which gives the kitchen's values.
_SHIPPED_GRASPS: dict[str, tuple[tuple[float, float, float], float]] = {
    "apple": ((0.0, 0.0, 0.037), 0.0),
    "cup": ((0.0, 0.0, 0.06), 0.0),
    "fork": ((-0.03, 0.0, 0.018), 1.5708),
}


def rim_grasp_heights(height: float, wall: float) -> tuple[float, float]:
    """(lowest, highest) tcp height of a top-down grasp on a rim ``height`` tall, metres.

    A bowl's or plate's base is ``wall`` thick. At the lowest height the finger pads' tips stay
    :data:`PAD_CLEARANCE_M` above the base; at the highest, :data:`RIM_GRIP_M` of the rim is
    still between the pads. The lowest exceeds the highest where the rim is too low to hold.
    """
    return wall + _GRIPPER.pad_reach_m + PAD_CLEARANCE_M, height + _GRIPPER.pad_reach_m - RIM_GRIP_M


def grasp_of(name: str, shape: str, size: tuple[float, ...]) -> tuple[tuple[float, float, float], float]:
    """The grasp (offset in the object frame, metres; closing yaw, radians) of an object of ``shape``.

    The shipped five keep the kitchen's values when drawn at their nominal size.
    """
    if name in _SHIPPED_GRASPS and size == next(k.size for k in CATALOGUE if k.name == name):
        return _SHIPPED_GRASPS[name]
    if shape == "sphere":
        return (0.0, 0.0, round(size[0], 4)), 0.0
    highest_top = PALM_ABOVE_TCP_M - PALM_CLEARANCE_M  # the top may stand this far above the tcp
    if shape == "cylinder":
        return (0.0, 0.0, round(max(2.0 * size[1] / 3.0, size[1] - highest_top), 4)), 0.0
    if shape in ("bowl", "plate"):
        radius, height, wall = size
        lowest, highest = rim_grasp_heights(height, wall)
        if lowest > highest:
            raise ValueError(
                f"object {name!r}: its rim ({height:.3f} m, base {wall:.3f} m) is too low for the finger "
                f"pads to hold {RIM_GRIP_M} m of it clear of the base; make it at least "
                f"{wall + PAD_CLEARANCE_M + RIM_GRIP_M:.3f} m tall"
            )
        return (round(radius - wall / 2.0, 4), 0.0, round(max(0.8 * height, lowest), 4)), 0.0
    if shape == "fork":
        length, _, thickness = size
        return (round(-length / 6.0, 4), 0.0, round(max(thickness + 0.006, _LOWEST_TCP_M), 4)), 1.5708
    if shape == "box":
        z = round(max(0.6 * size[2], _LOWEST_TCP_M, size[2] - highest_top), 4)
        return (0.0, 0.0, z), (1.5708 if size[0] > size[1] else 0.0)
    raise ValueError(f"object {name!r}: unknown shape {shape!r}")


def grasp_width(shape: str, size: tuple[float, ...], grasp_yaw: float) -> float:
    """The width between the fingers when they close on the object, metres."""
    if shape == "sphere":
        return 2.0 * size[0]
    if shape == "cylinder":
        return 2.0 * size[0]
    if shape in ("bowl", "plate"):
        return size[2]  # the rim's wall
    if shape == "fork":
        return 0.55 * size[1]  # the handle (galley_sim.mjcf)
    across_x = abs(math.cos(grasp_yaw)) > 0.5
    return size[0] if across_x else size[1]


def _jitter_rgba(rgba: tuple[float, ...], rng: random.Random) -> tuple[float, float, float, float]:
    scale = rng.uniform(0.85, 1.1)
    r, g, b = (min(1.0, max(0.0, round(c * scale * rng.uniform(0.93, 1.07), 3))) for c in rgba[:3])
    return (r, g, b, 1.0)


def draw_object(kind: Kind, rng: random.Random) -> dict[str, object]:
    """A scene-file entry (``objects.<name>``) of ``kind``: size and colour drawn, grasp derived."""
    if kind.shipped or kind.scale == 0:
        size = kind.size
    else:
        factor = rng.uniform(1.0 - kind.scale, 1.0 + kind.scale)
        nominal = grasp_width(kind.shape, kind.size, grasp_of(kind.name, kind.shape, kind.size)[1])
        if kind.shape not in ("bowl", "plate"):  # a rim's wall keeps its thickness (below)
            factor = min(factor, MAX_GRASP_WIDTH_M / nominal)  # never wider than the gripper opens
        size = tuple(math.floor(v * factor * 1e4) / 1e4 for v in kind.size)
        if kind.shape in ("bowl", "plate"):
            size = (size[0], size[1], kind.size[2])  # the wall stays what the fingers close on
    offset, yaw = grasp_of(kind.name, kind.shape, size)
    rgba = kind.rgba if kind.shipped else _jitter_rgba(kind.rgba, rng)
    mass = kind.mass if kind.shipped else round(kind.mass * (size[0] / kind.size[0]) ** 3, 4)
    entry: dict[str, object] = {
        "shape": kind.shape,
        "size": list(size),
        "mass": mass,
        "friction": 1.0,
        "rgba": list(rgba),
        "grasp_offset": list(offset),
    }
    if yaw or kind.shape in ("bowl", "plate", "fork", "box"):
        entry["grasp_yaw"] = yaw
    return entry
