"""A time-indexed tree of coordinate frames with the look-up semantics of tf2.

Each frame has one parent. Dynamic transforms are kept for ``cache_time_ns`` and interpolated
between stamps (linear translation, spherical-linear rotation); static transforms hold for all
times. ``lookup(target, source)`` returns ``T_target_source``, which maps points expressed in
``source`` into ``target`` (tf2's ``lookupTransform(target_frame, source_frame, time)``), and with
no time it uses the latest time at which every transform on the path is known, as tf2 does for
``Time(0)``. Stamps are integer nanoseconds of ROS time.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass, field

from galley_core.geometry import Transform

__all__ = [
    "ConnectivityError",
    "ExtrapolationError",
    "FrameNotFoundError",
    "TransformError",
    "TransformSource",
    "TransformTree",
]


class TransformError(Exception):
    """A transform could not be looked up."""


class FrameNotFoundError(TransformError):
    """A frame named in a look-up has never been published."""


class ConnectivityError(TransformError):
    """Two frames exist but belong to different trees."""


class ExtrapolationError(TransformError):
    """The requested time lies outside the buffered stamps of a transform on the path."""


#: A transform, or a function that builds it when a look-up first needs it.
TransformSource = Transform | Callable[[], Transform]


@dataclass
class _Edge:
    parent: str
    static: bool
    stamps: list[int] = field(default_factory=list)
    transforms: list[TransformSource] = field(default_factory=list)

    def _get(self, i: int) -> Transform:
        transform = self.transforms[i]
        if not isinstance(transform, Transform):
            transform = self.transforms[i] = transform()
        return transform

    def at(self, time_ns: int, child: str) -> Transform:
        if self.static:
            return self._get(-1)
        i = bisect.bisect_left(self.stamps, time_ns)
        if i < len(self.stamps) and self.stamps[i] == time_ns:
            return self._get(i)
        if i == 0 or i == len(self.stamps):
            raise ExtrapolationError(
                f"transform {self.parent} -> {child} is known for t in "
                f"[{self.stamps[0] * 1e-9:.3f}, {self.stamps[-1] * 1e-9:.3f}] s, "
                f"not at {time_ns * 1e-9:.3f} s"
            )
        t0, t1 = self.stamps[i - 1], self.stamps[i]
        return self._get(i - 1).interpolate(self._get(i), (time_ns - t0) / (t1 - t0))


_IDENTITY = Transform.identity()


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
        transform: TransformSource,
        *,
        static: bool = False,
    ) -> None:
        """Insert ``T_parent_child`` at ``stamp_ns``. A static transform replaces the edge's history.

        ``transform`` may be a function that builds it: it is called on the first look-up that
        needs this stamp, so transforms that are never looked up (most of a 50 Hz TF stream) cost
        nothing to convert.

        Raises:
            TransformError: the frame names are empty or equal.
        """
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
            edge.transforms[:] = [transform]
            return
        stamps = edge.stamps
        if not stamps or stamp_ns > stamps[-1]:  # the usual case: a newer stamp, appended
            stamps.append(stamp_ns)
            edge.transforms.append(transform)
            if stamps[0] < stamp_ns - self.cache_time_ns:
                cutoff = bisect.bisect_left(stamps, stamp_ns - self.cache_time_ns)
                del stamps[:cutoff], edge.transforms[:cutoff]
            return
        i = bisect.bisect_left(edge.stamps, stamp_ns)
        if i < len(edge.stamps) and edge.stamps[i] == stamp_ns:
            edge.transforms[i] = transform
        else:
            edge.stamps.insert(i, stamp_ns)
            edge.transforms.insert(i, transform)
        cutoff = bisect.bisect_left(edge.stamps, edge.stamps[-1] - self.cache_time_ns)
        if cutoff:
            del edge.stamps[:cutoff], edge.transforms[:cutoff]

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
        target, source = _clean(target), _clean(source)
        self._require(target)
        self._require(source)
        if target == source:
            return Transform.identity(), time_ns or 0
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
        common_from_target = self._compose(path_target, time_ns)
        return common_from_target.inverse() * common_from_source, time_ns

    def can_transform(self, target: str, source: str, time_ns: int | None = None) -> bool:
        """Whether :meth:`lookup` would succeed."""
        try:
            self.lookup(target, source, time_ns)
        except TransformError:
            return False
        return True

    def _compose(self, path: list[str], time_ns: int) -> Transform:
        """``T_top_frame`` for ``path = [frame, parent, grandparent, ...]`` below the top.

        An empty path gives a shared identity: callers only compose with it, never hand it out.
        """
        result = _IDENTITY
        for child in path:
            result = self._edges[child].at(time_ns, child) * result
        return result
