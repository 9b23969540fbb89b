"""Arm kinematics read from the robot's MJCF file: forward kinematics and Jacobians.

The robot description (galley_description's ``models/galley_mm/robot.xml``) is the one source of truth:
the simulator compiles it with MuJoCo, and :func:`load_arm` parses the same file with
``xml.etree`` (galley_core never imports mujoco). It reads the kinematic chain from a root body
(``base_link``) down to the body that holds the tool-centre-point site (``tcp``): body ``pos`` and
orientation (``quat``, ``euler``, ``axisangle``, ``xyaxes``, ``zaxis``, honouring
``<compiler angle= eulerseq=>``), hinge joints with their ``axis``, ``pos`` and ``range``,
resolving ``<default>`` classes and ``childclass``. Everything is expressed in the root body's
frame (``base_link``), metres and radians.

Collision spheres along the arm (for the obstacle repulsors of RMPflow) are declared as data,
:data:`DEFAULT_SPHERES`: ten spheres on the upper arm, forearm, wrist and palm of galley_mm. The
two spheres around the fingers are marked ``tool``: the pick-and-place machine switches them off
while the gripper works at the object, where the fingers must touch it and come within
millimetres of the surface it stands on (a plate's rim is 16 mm high).
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike, NDArray

from galley_core.manipulation import _kinematics_kernels as K  # noqa: N812
from galley_core.manipulation.poses import matrix_from_quat

__all__ = [
    "DEFAULT_SPHERES",
    "ArmKinematics",
    "CollisionSphere",
    "KinematicsError",
    "load_arm",
]

F64 = NDArray[np.float64]


class KinematicsError(ValueError):
    """The robot description cannot be read as an arm; the message names the element and the fix."""


@dataclass(frozen=True)
class CollisionSphere:
    """A sphere fixed to a body of the arm.

    Attributes:
        body: name of the body (link) it is fixed to.
        center: (x, y, z) of its centre in that body's frame, metres.
        radius: metres.
        tool: a sphere around the fingers: the pick-and-place machine switches these off while the
            gripper works at the object (descend, grasp, lift, release), where touching is the point.
    """

    body: str
    center: tuple[float, float, float]
    radius: float
    tool: bool = False


#: galley_mm's collision spheres: shoulder, two on the upper arm (capsule r 0.03 m, 0.3 m long),
#: elbow, inner forearm, outer forearm, wrist, three over the palm (box 0.04 x 0.11 x 0.044 m),
#: and two tool spheres around the open fingers (pads from 0.045 to 0.125 m along the gripper x
#: axis, the tcp at 0.11 m).
DEFAULT_SPHERES: tuple[CollisionSphere, ...] = (
    CollisionSphere("shoulder_link", (0.0, 0.0, 0.0), 0.045),
    CollisionSphere("shoulder_link", (0.1, 0.0, 0.0), 0.035),
    CollisionSphere("shoulder_link", (0.2, 0.0, 0.0), 0.035),
    CollisionSphere("elbow_link", (0.0, 0.0, 0.0), 0.04),
    CollisionSphere("elbow_link", (0.1, 0.0, 0.0), 0.032),
    CollisionSphere("forearm_link", (0.05, 0.0, 0.0), 0.03),
    CollisionSphere("forearm_link", (0.15, 0.0, 0.0), 0.03),
    CollisionSphere("gripper_link", (0.02, 0.0, 0.0), 0.03),
    CollisionSphere("gripper_link", (0.02, 0.035, 0.0), 0.025),
    CollisionSphere("gripper_link", (0.02, -0.035, 0.0), 0.025),
    CollisionSphere("gripper_link", (0.075, 0.0, 0.0), 0.05, tool=True),
    CollisionSphere("gripper_link", (0.115, 0.0, 0.0), 0.04, tool=True),
)


@dataclass(frozen=True)
class ArmKinematics:
    """A serial chain of hinge joints, in the frame of its root body.

    Link ``k`` is the body moved by joint ``k``; bodies without joints are folded into the fixed
    transform of the next link. Arrays are for the compiled kernels; use the methods.

    Attributes:
        joint_names: the hinge joints from the root outwards.
        lower, upper: (n,) joint limits, radians.
        fixed_rotation: (n, 3, 3) rotation from link k-1 (the root for k = 0) to link k at q_k = 0.
        fixed_translation: (n, 3) origin of link k in link k-1, metres.
        axes: (n, 3) unit joint axes in link k's frame.
        joint_points: (n, 3) a point on each axis in link k's frame, metres.
        tcp_rotation, tcp_translation: the tool centre point in the last link's frame.
        sphere_link: (S,) link index of each collision sphere.
        sphere_center: (S, 3) sphere centres in their link's frame, metres.
        sphere_radius: (S,) radii, metres.
        sphere_tool: (S,) which spheres are tool spheres (see :class:`CollisionSphere`).
        source: the file read.
    """

    joint_names: tuple[str, ...]
    lower: F64
    upper: F64
    fixed_rotation: F64
    fixed_translation: F64
    axes: F64
    joint_points: F64
    tcp_rotation: F64
    tcp_translation: F64
    sphere_link: NDArray[np.int64]
    sphere_center: F64
    sphere_radius: F64
    sphere_tool: NDArray[np.bool_]
    source: str = ""

    @property
    def dof(self) -> int:
        """Number of joints."""
        return len(self.joint_names)

    def _q(self, q: ArrayLike) -> F64:
        arr = np.ascontiguousarray(q, dtype=np.float64)
        if arr.shape != (self.dof,):
            raise ValueError(f"joint vector has shape {arr.shape}; this arm has {self.dof} joints")
        return arr

    def link_frames(self, q: ArrayLike) -> tuple[F64, F64, F64, F64]:
        """Link rotations (n, 3, 3), link origins (n, 3), joint axes (n, 3) and axis points (n, 3)."""
        rot, pos, axes, points = K.link_frames(
            self._q(q),
            self.fixed_rotation,
            self.fixed_translation,
            self.axes,
            self.joint_points,
        )
        return rot, pos, axes, points

    def tcp_pose(self, q: ArrayLike) -> tuple[F64, F64]:
        """Tool centre point: position (3,) in metres and rotation matrix (3, 3), in the root frame."""
        rot, pos, _, _ = self.link_frames(q)
        return pos[-1] + rot[-1] @ self.tcp_translation, rot[-1] @ self.tcp_rotation

    def tcp_jacobian(self, q: ArrayLike) -> F64:
        """(6, n): rows 0-2 the tcp's linear velocity, rows 3-5 its angular velocity, per joint rate."""
        rot, pos, axes, points = self.link_frames(q)
        tcp = pos[-1] + rot[-1] @ self.tcp_translation
        jac: F64 = np.zeros((6, self.dof))
        jac[:3] = K.point_jacobian(tcp, self.dof - 1, axes, points)
        jac[3:] = axes.T
        return jac

    def sphere_centers(self, q: ArrayLike) -> F64:
        """(S, 3) collision sphere centres in the root frame, metres."""
        rot, pos, _, _ = self.link_frames(q)
        link = self.sphere_link
        out: F64 = pos[link] + np.einsum("sij,sj->si", rot[link], self.sphere_center)
        return out

    def sphere_jacobians(self, q: ArrayLike) -> F64:
        """(S, 3, n): linear velocity of each sphere centre per joint rate."""
        _, _, axes, points = self.link_frames(q)
        centers = self.sphere_centers(q)
        return np.stack(
            [
                K.point_jacobian(c, int(k), axes, points)
                for c, k in zip(centers, self.sphere_link, strict=True)
            ]
        )

    def clip(self, q: ArrayLike) -> F64:
        """``q`` clipped to the joint limits."""
        return np.clip(self._q(q), self.lower, self.upper)


# -- reading MJCF ------------------------------------------------------------------------------


def load_arm(  # noqa: PLR0912, PLR0915 - one pass down the chain reads best
    path: str | Path,
    *,
    root_body: str = "base_link",
    tcp_site: str = "tcp",
    spheres: Sequence[CollisionSphere] = DEFAULT_SPHERES,
) -> ArmKinematics:
    """Read the arm from an MJCF robot description.

    Args:
        path: the MJCF file (e.g. ``galley_description.ROBOT_XML``).
        root_body: the body whose frame the kinematics are expressed in; joints of the root body
            itself (the base's planar joints) are not part of the arm.
        tcp_site: the site that marks the tool centre point; the chain ends at its body.
        spheres: collision spheres, on bodies of the chain.

    Raises:
        KinematicsError: unreadable file, missing body or site, unsupported joints or
            orientation attributes; the message names them.
    """
    path = Path(path)
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as err:
        raise KinematicsError(f"robot description {path}: cannot read it ({err})") from None
    parser = _Mjcf(root, str(path))
    base = root.find(f".//body[@name='{root_body}']")
    if base is None:
        raise KinematicsError(f"robot description {path}: no body named {root_body!r} (root_body)")
    chain = _path_to_site(base, tcp_site)
    if chain is None:
        raise KinematicsError(f"robot description {path}: no site {tcp_site!r} under body {root_body!r}")

    names: list[str] = []
    lower, upper, fix_r, fix_p, axes, points = [], [], [], [], [], []
    acc_r: F64 = np.eye(3)  # fixed transform accumulated since the last joint
    acc_p: F64 = np.zeros(3)
    body_in_link: dict[str, tuple[int, F64, F64]] = {}
    childclass = parser.childclass_of(base)
    for body in chain[1:]:
        cls = body.get("childclass", childclass)
        r, p = parser.frame(body, cls)
        acc_p, acc_r = acc_p + acc_r @ p, acc_r @ r
        joints = body.findall("joint")
        if len(joints) > 1:
            raise KinematicsError(
                f"robot description {path}: body {body.get('name')!r} has {len(joints)} joints; "
                "the arm needs at most one hinge per body"
            )
        if joints:
            j = joints[0]
            attrs = parser.attributes(j, cls)
            jname = j.get("name", "")
            if attrs.get("type", "hinge") != "hinge":
                raise KinematicsError(
                    f"robot description {path}: joint {jname!r} is a {attrs['type']} joint; "
                    "the arm kinematics support hinge joints only"
                )
            axis = _vector(attrs.get("axis", "0 0 1"), 3, f"joint {jname!r} axis", path)
            if "range" not in attrs:
                raise KinematicsError(f"robot description {path}: joint {jname!r} has no range")
            lo, hi = _vector(attrs["range"], 2, f"joint {jname!r} range", path) * parser.angle_scale
            names.append(jname)
            lower.append(lo)
            upper.append(hi)
            fix_r.append(acc_r)
            fix_p.append(acc_p)
            axes.append(axis / np.linalg.norm(axis))
            points.append(_vector(attrs.get("pos", "0 0 0"), 3, f"joint {jname!r} pos", path))
            acc_r, acc_p = np.eye(3), np.zeros(3)
        if names:
            body_in_link[body.get("name", "")] = (len(names) - 1, acc_r.copy(), acc_p.copy())
        childclass = cls
    if not names:
        raise KinematicsError(
            f"robot description {path}: no hinge joint between {root_body!r} and {tcp_site!r}"
        )
    site = chain[-1].find(f"site[@name='{tcp_site}']")
    assert site is not None
    site_r, site_p = parser.frame(site, chain[-1].get("childclass", childclass))
    tcp_r, tcp_p = acc_r @ site_r, acc_p + acc_r @ site_p

    sphere_link, sphere_center, sphere_radius, sphere_tool = [], [], [], []
    for s in spheres:
        if s.body not in body_in_link:
            raise KinematicsError(
                f"collision sphere on body {s.body!r}: not a moving body of the arm "
                f"(bodies: {', '.join(body_in_link)})"
            )
        if not s.radius > 0:
            raise KinematicsError(f"collision sphere on body {s.body!r}: radius {s.radius} must be > 0")
        link, r, p = body_in_link[s.body]
        sphere_link.append(link)
        sphere_center.append(p + r @ np.asarray(s.center, dtype=float))
        sphere_radius.append(s.radius)
        sphere_tool.append(s.tool)
    return ArmKinematics(
        joint_names=tuple(names),
        lower=np.array(lower),
        upper=np.array(upper),
        fixed_rotation=np.ascontiguousarray(fix_r, dtype=float),
        fixed_translation=np.ascontiguousarray(fix_p, dtype=float),
        axes=np.ascontiguousarray(axes, dtype=float),
        joint_points=np.ascontiguousarray(points, dtype=float),
        tcp_rotation=np.ascontiguousarray(tcp_r),
        tcp_translation=np.ascontiguousarray(tcp_p),
        sphere_link=np.array(sphere_link, dtype=np.int64).reshape(-1),
        sphere_center=np.ascontiguousarray(sphere_center, dtype=float).reshape(-1, 3),
        sphere_radius=np.array(sphere_radius, dtype=float).reshape(-1),
        sphere_tool=np.array(sphere_tool, dtype=bool).reshape(-1),
        source=str(path),
    )


def _vector(text: str, length: int, what: str, path: Path) -> F64:
    try:
        values = np.array([float(v) for v in text.split()])
    except ValueError:
        values = np.zeros(0)
    if values.shape != (length,) or not np.all(np.isfinite(values)):
        raise KinematicsError(f"robot description {path}: {what} {text!r} is not {length} finite numbers")
    return values


def _path_to_site(body: ET.Element, site: str) -> list[ET.Element] | None:
    """Bodies from ``body`` down to the one holding site ``site``."""
    if body.find(f"site[@name='{site}']") is not None:
        return [body]
    for child in body.findall("body"):
        below = _path_to_site(child, site)
        if below is not None:
            return [body, *below]
    return None


class _Mjcf:
    """Compiler settings and default classes of an MJCF file."""

    def __init__(self, root: ET.Element, where: str) -> None:
        self.where = where
        compiler = root.find("compiler")
        angle = compiler.get("angle", "degree") if compiler is not None else "degree"
        self.angle_scale = 1.0 if angle == "radian" else math.pi / 180.0
        self.eulerseq = compiler.get("eulerseq", "xyz") if compiler is not None else "xyz"
        self.defaults: dict[str, dict[str, dict[str, str]]] = {}
        for top in root.findall("default"):
            self._read_default(top, {})
        self._parents: dict[ET.Element, ET.Element] = {c: p for p in root.iter() for c in p}

    def _read_default(self, element: ET.Element, inherited: dict[str, dict[str, str]]) -> None:
        name = element.get("class", "main")
        own = {tag: dict(attrs) for tag, attrs in inherited.items()}
        for child in element:
            if child.tag != "default":
                own.setdefault(child.tag, {}).update(child.attrib)
        self.defaults[name] = own
        for child in element.findall("default"):
            self._read_default(child, own)

    def childclass_of(self, body: ET.Element) -> str:
        """The class in effect for the children of ``body``, from its ancestors' childclass."""
        node: ET.Element | None = body
        while node is not None:
            if "childclass" in node.attrib:
                return node.attrib["childclass"]
            node = self._parents.get(node)
        return "main"

    def attributes(self, element: ET.Element, childclass: str) -> dict[str, str]:
        """The element's attributes over those of its default class."""
        cls = element.get("class", childclass)
        if cls not in self.defaults and cls != "main":
            raise KinematicsError(f"robot description {self.where}: no default class {cls!r}")
        merged = dict(self.defaults.get("main", {}).get(element.tag, {}))
        merged.update(self.defaults.get(cls, {}).get(element.tag, {}))
        merged.update(element.attrib)
        return merged

    def frame(self, element: ET.Element, childclass: str) -> tuple[F64, F64]:
        """Rotation and position of a body or site in its parent body."""
        attrs = self.attributes(element, childclass) if element.tag == "site" else dict(element.attrib)
        name = element.get("name", element.tag)
        pos = _vector(attrs.get("pos", "0 0 0"), 3, f"{element.tag} {name!r} pos", Path(self.where))
        return self._rotation(attrs, f"{element.tag} {name!r}"), pos

    def _rotation(self, attrs: dict[str, str], what: str) -> F64:
        path = Path(self.where)
        if "quat" in attrs:
            w, x, y, z = _vector(attrs["quat"], 4, f"{what} quat", path)
            return _quat_matrix(np.array([x, y, z, w]))
        if "axisangle" in attrs:
            v = _vector(attrs["axisangle"], 4, f"{what} axisangle", path)
            return _axis_angle(v[:3], v[3] * self.angle_scale)
        if "euler" in attrs:
            angles = _vector(attrs["euler"], 3, f"{what} euler", path) * self.angle_scale
            rot = np.eye(3)
            for axis_name, angle in zip(self.eulerseq, angles, strict=True):
                axis = np.eye(3)["xyz".index(axis_name.lower())]
                step = _axis_angle(axis, float(angle))
                # lower case: axes that move with the frame (intrinsic); upper case: fixed (extrinsic)
                rot = rot @ step if axis_name.islower() else step @ rot
            return rot
        if "xyaxes" in attrs:
            v = _vector(attrs["xyaxes"], 6, f"{what} xyaxes", path)
            x = v[:3] / np.linalg.norm(v[:3])
            y = v[3:] - x * (x @ v[3:])
            y /= np.linalg.norm(y)
            return np.stack([x, y, np.cross(x, y)], axis=1)
        if "zaxis" in attrs:
            z = _vector(attrs["zaxis"], 3, f"{what} zaxis", path)
            z = z / np.linalg.norm(z)
            axis = np.cross([0.0, 0.0, 1.0], z)
            s = float(np.linalg.norm(axis))
            if s < 1e-12:
                return np.eye(3) if z[2] > 0 else np.diag([1.0, -1.0, -1.0])
            return _axis_angle(axis, math.atan2(s, float(z[2])))
        return np.eye(3)


def _quat_matrix(q: F64) -> F64:
    """Rotation matrix of a quaternion (x, y, z, w) as MJCF writes it: not necessarily unit length."""
    return matrix_from_quat(q / np.linalg.norm(q))


def _axis_angle(axis: ArrayLike, angle: float) -> F64:
    a = np.asarray(axis, dtype=float)
    a = a / np.linalg.norm(a)
    return _quat_matrix(np.array([*(a * math.sin(angle / 2.0)), math.cos(angle / 2.0)]))
