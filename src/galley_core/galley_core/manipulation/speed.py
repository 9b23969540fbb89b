"""The tool centre point's speed, measured over a window of joint-state stamps.

Used by the pick-and-place state machine (:mod:`galley_core.manipulation.pick_place`) to tell a
stalled or resting tcp from a moving one. Measured over a window of measurement stamps, not from one
controller step to the next: the controller steps faster than the joint states come (100 Hz and
50 Hz), and a step that sees no new measurement read as a stop (a descent still moving at 4 cm/s
counted as stalled); late or bunched joint states carry the time they were measured, not the time
they arrived.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["TcpSpeed"]

F64 = np.ndarray[Any, np.dtype[np.float64]]


class TcpSpeed:
    """Speed (m/s) of a point over the last ``window_s`` seconds of measurement stamps.

    Args:
        window_s: the window, s; a gap of more than three windows between two measurements (a
            pause) starts a new window without a speed.
    """

    def __init__(self, window_s: float) -> None:
        self.window_s = window_s
        self.mps = math.inf  # unknown until one window has passed
        self._from: tuple[float, F64] | None = None  # (stamp s, position m) where the window began

    def reset(self) -> None:
        """Forget every measurement (a new goal)."""
        self.mps, self._from = math.inf, None

    def update(self, position: F64, measured_s: float) -> float:
        """Add the position (m) measured at ``measured_s`` (s); the speed, m/s (inf: not known yet)."""
        if self._from is None or measured_s < self._from[0]:
            self._from = (measured_s, position)
            return self.mps
        start_s, start = self._from
        elapsed = measured_s - start_s
        if elapsed >= self.window_s:
            if elapsed <= 3.0 * self.window_s:  # not across a pause
                self.mps = float(np.linalg.norm(position - start)) / elapsed
            self._from = (measured_s, position)
        return self.mps
