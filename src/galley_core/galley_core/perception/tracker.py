"""Object estimates kept across frames: the latest detection, its confidence decaying when unseen.

An object detected in a frame takes that detection. One not detected keeps its last estimate, and
its confidence decays: slowly (a half-life) while its place is out of the camera's view or hidden
behind something nearer, fast (a factor per frame) when the camera sees its place and it is not
there, since then it has most likely been moved.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from galley_core.perception.config import PerceptionConfig
from galley_core.perception.detector import DepthView, Detection

__all__ = ["ObjectEstimate", "ObjectTracker"]


@dataclass(frozen=True)
class ObjectEstimate:
    """What perception believes about one object.

    Attributes:
        name: the scene object.
        position: (3,) its frame's origin (bottom centre) in the map, metres.
        yaw: radians (0 for shapes of revolution, whose yaw cannot be seen).
        confidence: 0..1.
        rms_m: residual of the fit that gave the estimate, metres.
        points: points that supported it.
        last_seen_s: time of that detection, seconds.
        seen_now: detected in the latest frame.
    """

    name: str
    position: NDArray[np.float64]
    yaw: float
    confidence: float
    rms_m: float
    points: int
    last_seen_s: float
    seen_now: bool


class ObjectTracker:
    """The estimates of a scene's objects over frames (see the module docstring).

    Args:
        config: decay rates and the confidence below which an estimate is dropped.
        heights: each object's height (m), for the point whose visibility is checked (its centre).
    """

    def __init__(self, config: PerceptionConfig, heights: dict[str, float]) -> None:
        self.config = config
        self.heights = heights
        self._estimates: dict[str, ObjectEstimate] = {}
        self._updated_s: dict[str, float] = {}

    @property
    def estimates(self) -> list[ObjectEstimate]:
        """The current estimates, by object name."""
        return [self._estimates[n] for n in sorted(self._estimates)]

    def reset(self) -> None:
        """Forget everything (a new episode)."""
        self._estimates.clear()
        self._updated_s.clear()

    def update(
        self, stamp_s: float, detections: Iterable[Detection], view: DepthView | None
    ) -> list[ObjectEstimate]:
        """Take one frame's detections at ``stamp_s`` (s); ``view`` decides what was in sight."""
        c = self.config
        seen = set()
        for d in detections:
            seen.add(d.name)
            self._estimates[d.name] = ObjectEstimate(
                d.name, d.position, d.yaw, d.confidence, d.rms_m, d.points, stamp_s, True
            )
            self._updated_s[d.name] = stamp_s
        for name in [n for n in self._estimates if n not in seen]:
            estimate = self._estimates[name]
            dt = max(0.0, stamp_s - self._updated_s[name])
            self._updated_s[name] = stamp_s
            if view is not None and self._in_sight(estimate, view):
                factor = c.missed_in_view_decay
            else:
                factor = 0.5 ** (dt / c.out_of_view_half_life_s)
            confidence = estimate.confidence * factor
            if confidence < c.min_confidence:
                del self._estimates[name], self._updated_s[name]
            else:
                self._estimates[name] = replace(estimate, confidence=confidence, seen_now=False)
        return self.estimates

    def _in_sight(self, estimate: ObjectEstimate, view: DepthView) -> bool:
        """Whether the camera saw the estimate's centre: in the image, and nothing nearer before it."""
        centre = estimate.position + np.array([0.0, 0.0, self.heights.get(estimate.name, 0.0) / 2.0])
        u, v, z = view.intrinsics.project(view.camera_from_map.apply(centre[None, :]))
        h, w = view.depth.shape
        if not (np.isfinite(u[0]) and 0 <= u[0] <= w - 1 and 0 <= v[0] <= h - 1):
            return False
        seen = float(view.depth[round(v[0]), round(u[0])])
        return not (math.isfinite(seen) and 0 < seen < z[0] - self.config.occlusion_margin_m)
