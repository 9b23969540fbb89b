"""A time-indexed tree of coordinate frames with the look-up semantics of tf2.

Each frame has one parent. Dynamic transforms are kept for ``cache_time_ns`` and interpolated
between stamps (linear translation, spherical-linear rotation); static transforms hold for all
times. ``lookup(target, source)`` returns ``T_target_source``, which maps points expressed in
``source`` into ``target`` (tf2's ``lookupTransform(target_frame, source_frame, time)``), and with
no time it uses the latest time at which every transform on the path is known, as tf2 does for
``Time(0)``. Stamps are integer nanoseconds of ROS time.

The tree keeps and composes transforms as tuples of Python floats (:data:`TransformValues`), not
as :class:`~galley_core.geometry.Transform` objects: a TF stream brings thousands of transforms
per simulated second, look-ups compose chains of ten of them, and for vectors of three and four
numbers plain float arithmetic is several times faster than numpy's.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from galley_core.geometry import Transform

__all__ = [
    "ConnectivityError",
    "ExtrapolationError",
    "FrameNotFoundError",
    "TransformError",
    "TransformTree",
    "TransformValues",
    "transform_of_values",
    "values_of_transform",
]


class TransformError(Exception):
    """A transform could not be looked up."""


class FrameNotFoundError(TransformError):
    """A frame named in a look-up has never been published."""


class ConnectivityError(TransformError):
    """Two frames exist but belong to different trees."""


class ExtrapolationError(TransformError):
    """The requested time lies outside the buffered stamps of a transform on the path."""


#: A rigid transform as Python floats: (tx, ty, tz, qx, qy, qz, qw), metres and a unit quaternion.
TransformValues = tuple[float, float, float, float, float, float, float]

_IDENTITY: TransformValues = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)


def _compose(a: TransformValues, b: TransformValues) -> TransformValues:
    """``a * b``: translation ``ta + R(qa) tb``, rotation the Hamilton product ``qa qb``."""
    atx, aty, atz, ax, ay, az, aw = a
    btx, bty, btz, bx, by, bz, bw = b
    # R(q) v = v + 2 w (u x v) + 2 u x (u x v), u the vector part of q.
    cx, cy, cz = 2.0 * (ay * btz - az * bty), 2.0 * (az * btx - ax * btz), 2.0 * (ax * bty - ay * btx)
    return (
        atx + btx + aw * cx + (ay * cz - az * cy),
        aty + bty + aw * cy + (az * cx - ax * cz),
        atz + btz + aw * cz + (ax * cy - ay * cx),
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    )


def _inverse(a: TransformValues) -> TransformValues:
    """``a⁻¹``: rotation the conjugate, translation ``-R(q)ᵀ t``."""
    tx, ty, tz, x, y, z, w = a
    return _compose((0.0, 0.0, 0.0, -x, -y, -z, w), (-tx, -ty, -tz, 0.0, 0.0, 0.0, 1.0))


def _interpolate(a: TransformValues, b: TransformValues, fraction: float) -> TransformValues:
    """Linear in translation, spherical-linear (shorter arc) in rotation; ``fraction`` 0 gives ``a``."""
    keep = 1.0 - fraction
    qa, qb = a[3:], b[3:]
    dot = sum(p * q for p, q in zip(qa, qb, strict=True))
    sign = 1.0
    if dot < 0.0:  # the shorter arc: towards -qb
        sign, dot = -1.0, -dot
    if dot > 0.9995:  # nearly parallel: linear interpolation is exact enough and stable
        wa, wb = keep, fraction
    else:
        theta = math.acos(dot)
        s = math.sin(theta)
        wa, wb = math.sin(keep * theta) / s, math.sin(fraction * theta) / s
    wb *= sign
    q = [wa * p + wb * r for p, r in zip(qa, qb, strict=True)]
    norm = math.sqrt(sum(v * v for v in q))
    tx, ty, tz = (keep * p + fraction * r for p, r in zip(a[:3], b[:3], strict=True))
    return (tx, ty, tz, q[0] / norm, q[1] / norm, q[2] / norm, q[3] / norm)


def transform_of_values(values: TransformValues) -> Transform:
    """The :class:`~galley_core.geometry.Transform` of :data:`TransformValues`."""
    return Transform.trusted(np.array(values[:3]), np.array(values[3:]))


def values_of_transform(transform: Transform) -> TransformValues:
    """:data:`TransformValues` of a :class:`~galley_core.geometry.Transform`."""
    tx, ty, tz = transform.translation.tolist()
    qx, qy, qz, qw = transform.rotation.tolist()
    return (tx, ty, tz, qx, qy, qz, qw)


@dataclass
class _Edge:
    parent: str
    static: bool
    stamps: list[int] = field(default_factory=list)
    transforms: list[TransformValues] = field(default_factory=list)

    def at(self, time_ns: int, child: str) -> TransformValues:
        if self.static:
            return self.transforms[-1]
        i = bisect.bisect_left(self.stamps, time_ns)
        if i < len(self.stamps) and self.stamps[i] == time_ns:
            return self.transforms[i]
        if i == 0 or i == len(self.stamps):
            raise ExtrapolationError(
                f"transform {self.parent} -> {child} is known for t in "
                f"[{self.stamps[0] * 1e-9:.3f}, {self.stamps[-1] * 1e-9:.3f}] s, "
                f"not at {time_ns * 1e-9:.3f} s"
            )
        t0, t1 = self.stamps[i - 1], self.stamps[i]
        return _interpolate(self.transforms[i - 1], self.transforms[i], (time_ns - t0) / (t1 - t0))


def _clean(frame: str) -> str:
    return frame.lstrip("/")


class TransformTree:
    """Frames and their transforms over time.

    Args:
        cache_time_ns: how long dynamic transforms are kept behind the newest one (tf2: 10 s).
    """

    def __init__(self, cache_time_ns: int = 10_000_000_000) -> None:
        self.cache_time_ns = cache_time_ns
        self._edges: dict[str, _Edge] = {}
        self._children: dict[str, int] = {}  # per parent frame: how many edges hang from it

    def frames(self) -> list[str]:
        """Every frame known, sorted."""
        names = set(self._edges) | {e.parent for e in self._edges.values()}
        return sorted(names)

    def set_transform(
        self,
        parent: str,
        child: str,
        stamp_ns: int,
        transform: Transform | TransformValues,
        *,
        static: bool = False,
    ) -> None:
        """Insert ``T_parent_child`` at ``stamp_ns``. A static transform replaces the edge's history.

        ``transform`` is a :class:`~galley_core.geometry.Transform` or its :data:`TransformValues`
        (finite, with a unit quaternion: the caller checks them, as a Transform's constructor does).

        Raises:
            TransformError: the frame names are empty or equal.
        """
        values = values_of_transform(transform) if isinstance(transform, Transform) else transform
        parent, child = parent.lstrip("/"), child.lstrip("/")
        if not parent or not child or parent == child:
            raise TransformError(
                f"invalid transform {parent!r} -> {child!r}: frames must differ and be named"
            )
        edge = self._edges.get(child)
        if edge is None or edge.parent != parent or edge.static != static:
            if edge is not None:
                self._children[edge.parent] -= 1
            self._children[parent] = self._children.get(parent, 0) + 1
            edge = self._edges[child] = _Edge(parent, static)
        if static:
            edge.stamps[:] = [stamp_ns]
            edge.transforms[:] = [values]
            return
        stamps = edge.stamps
        if not stamps or stamp_ns > stamps[-1]:  # the usual case: a newer stamp, appended
            stamps.append(stamp_ns)
            edge.transforms.append(values)
            if stamps[0] < stamp_ns - self.cache_time_ns:
                cutoff = bisect.bisect_left(stamps, stamp_ns - self.cache_time_ns)
                del stamps[:cutoff], edge.transforms[:cutoff]
            return
        i = bisect.bisect_left(edge.stamps, stamp_ns)
        if i < len(edge.stamps) and edge.stamps[i] == stamp_ns:
            edge.transforms[i] = values
        else:
            edge.stamps.insert(i, stamp_ns)
            edge.transforms.insert(i, values)
        cutoff = bisect.bisect_left(edge.stamps, edge.stamps[-1] - self.cache_time_ns)
        if cutoff:
            del edge.stamps[:cutoff], edge.transforms[:cutoff]

    def set_transforms(
        self, entries: Iterable[tuple[str, str, TransformValues]], stamp_ns: int
    ) -> list[tuple[str, str, TransformError]]:
        """:meth:`set_transform` of dynamic (parent, child, values) entries all stamped ``stamp_ns``.

        One broadcaster's message: the usual case (a known edge, a newer stamp) is appended here
        without a call per entry. Returns the entries refused, with why; the others are in.
        """
        edges, oldest_ns = self._edges, stamp_ns - self.cache_time_ns
        refused = []
        for parent, child, values in entries:
            edge = edges.get(child)
            stamps = None if edge is None or edge.parent != parent or edge.static else edge.stamps
            if edge is None or not stamps or stamp_ns <= stamps[-1]:
                try:
                    self.set_transform(parent, child, stamp_ns, values)
                except TransformError as err:
                    refused.append((parent, child, err))
                continue
            stamps.append(stamp_ns)
            edge.transforms.append(values)
            if stamps[0] < oldest_ns:
                cutoff = bisect.bisect_left(stamps, oldest_ns)
                del stamps[:cutoff], edge.transforms[:cutoff]
        return refused

    def _chain(self, frame: str) -> list[str]:
        """The frame and its ancestors, up to the root."""
        chain = [frame]
        while (edge := self._edges.get(chain[-1])) is not None:
            if edge.parent in chain:
                raise TransformError(f"frames form a loop: {' -> '.join([*chain, edge.parent])}")
            chain.append(edge.parent)
        return chain

    def _require(self, frame: str) -> None:
        if frame not in self._edges and not self._children.get(frame):
            known = ", ".join(self.frames()) or "none yet"
            raise FrameNotFoundError(f"frame {frame!r} does not exist (known frames: {known})")

    def lookup(self, target: str, source: str, time_ns: int | None = None) -> tuple[Transform, int]:
        """``T_target_source`` at ``time_ns`` (None: the latest common time).

        Returns:
            The transform and the stamp it holds for (0 when only static transforms are involved).

        Raises:
            FrameNotFoundError, ConnectivityError, ExtrapolationError.
        """
        values, stamp = self.lookup_values(target, source, time_ns)
        return transform_of_values(values), stamp

    def lookup_values(
        self, target: str, source: str, time_ns: int | None = None
    ) -> tuple[TransformValues, int]:
        """:meth:`lookup` as :data:`TransformValues`, for callers that need the numbers only."""
        target, source = _clean(target), _clean(source)
        self._require(target)
        self._require(source)
        if target == source:
            return _IDENTITY, time_ns or 0
        up_source, up_target = self._chain(source), self._chain(target)
        in_target = set(up_target)
        common = next((f for f in up_source if f in in_target), None)
        if common is None:
            raise ConnectivityError(
                f"frames {target!r} and {source!r} are not connected: their roots are "
                f"{up_target[-1]!r} and {up_source[-1]!r}"
            )
        path_source = up_source[: up_source.index(common)]
        path_target = up_target[: up_target.index(common)]
        dynamic = [self._edges[f] for f in path_source + path_target if not self._edges[f].static]
        if time_ns is None:
            time_ns = min((e.stamps[-1] for e in dynamic), default=0)
        common_from_source = self._compose(path_source, time_ns)
        if not path_target:
            return common_from_source, time_ns
        return _compose(_inverse(self._compose(path_target, time_ns)), common_from_source), time_ns

    def can_transform(self, target: str, source: str, time_ns: int | None = None) -> bool:
        """Whether :meth:`lookup` would succeed."""
        try:
            self.lookup_values(target, source, time_ns)
        except TransformError:
            return False
        return True

    def _compose(self, path: list[str], time_ns: int) -> TransformValues:
        """``T_top_frame`` for ``path = [frame, parent, grandparent, ...]`` below the top."""
        if not path:
            return _IDENTITY
        result = self._edges[path[0]].at(time_ns, path[0])
        for child in path[1:]:
            result = _compose(self._edges[child].at(time_ns, child), result)
        return result
