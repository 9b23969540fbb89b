"""What the Theta* planner hands out: a :class:`PlanResult` (or :class:`PathPlanningError`), waypoints.

:func:`resample_polyline` turns a path into the controller's waypoints; :func:`clearance_from_footprint`
gives the clearance R a robot of a given footprint needs (see :mod:`galley_core.navigation.theta_star`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from galley_core.navigation._path_kernels import resample

__all__ = ["PathPlanningError", "PlanResult", "clearance_from_footprint", "resample_polyline"]


class PathPlanningError(RuntimeError):
    """A plan failed; ``code`` says how (see :class:`PlanResult`) and the message says why."""

    def __init__(self, code: str, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


@dataclass(frozen=True)
class PlanResult:
    """The outcome of :meth:`~galley_core.navigation.theta_star.ThetaStar.plan`.

    Attributes:
        ok: whether a path was found.
        code: ``"ok"`` or one of ``"invalid_input"``, ``"start_outside_map"``, ``"goal_outside_map"``,
            ``"start_blocked"``, ``"goal_blocked"``, ``"no_path"``, ``"canceled"``, ``"timeout"``,
            ``"too_many_waypoints"``.
        reason: why it failed, naming the input and the fix; empty when ok.
        path: ``(N, 2)`` polyline vertices (x, y) in the map frame, metres, start first; every
            segment keeps the clearance. Empty ``(0, 2)`` on failure.
        waypoints: ``path`` resampled for the controller: every vertex kept, long segments divided,
            at most ``max_waypoints`` points.
        length_m: length of ``path``, metres.
        expansions: cells expanded by the search.
        planning_time_s: wall-clock time of the call, seconds.
        start_snapped, goal_snapped: whether the start or goal was moved to a free cell.
    """

    ok: bool
    code: str
    reason: str = ""
    path: NDArray[np.float64] = field(default_factory=lambda: np.zeros((0, 2)))
    waypoints: NDArray[np.float64] = field(default_factory=lambda: np.zeros((0, 2)))
    length_m: float = math.inf
    expansions: int = 0
    planning_time_s: float = 0.0
    start_snapped: bool = False
    goal_snapped: bool = False

    def unwrap(self) -> NDArray[np.float64]:
        """The path, or :class:`PathPlanningError` for callers that prefer exceptions."""
        if not self.ok:
            raise PathPlanningError(self.code, self.reason)
        return self.path


def clearance_from_footprint(footprint: ArrayLike, padding_m: float = 0.0) -> float:
    """Circumscribed radius of a footprint polygon ``(N, 2)`` about the base origin plus padding, metres."""
    points = np.asarray(footprint, dtype=float).reshape(-1, 2)
    if points.size == 0 or not np.all(np.isfinite(points)):
        raise ValueError("footprint must be a non-empty list of finite (x, y) points in metres")
    return float(np.max(np.hypot(points[:, 0], points[:, 1]))) + padding_m


def resample_polyline(path: ArrayLike, max_points: int, spacing: float) -> NDArray[np.float64]:
    """Keep every vertex and divide each segment so that points are at most ``spacing`` apart.

    When that would give more than ``max_points`` points the spacing grows until it does not.
    A path with more vertices than ``max_points`` is returned unchanged (dropping a vertex could
    cut a corner into an obstacle).
    """
    pts: NDArray[np.float64] = np.array(path, dtype=float).reshape(-1, 2)
    if len(pts) < 2 or len(pts) >= max_points:
        return pts
    out: NDArray[np.float64] = resample(pts, int(max_points), float(spacing))
    return out
