"""Min-max normalisation of states and actions to [-1, 1], as Diffusion Policy does.

A dimension that barely varies in the data (range below ``EPS``: 1 cm, 0.01 rad, 1 % of the
gripper) is only centred. Stretching its own range would turn the arm's millimetre of jitter, constant in
the training data of a move, into a full-scale signal when it differs a little in closed loop
(measured: with a 1e-6 threshold the end-effector's 1 mm offset became a normalised value near 10
and the low-dim policy circled instead of driving to its goal).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["Normalizer"]

EPS = 1e-2


class Normalizer:
    """Normalise and unnormalise with a dataset's statistics (``{"state": {...}, "action": {...}}``)."""

    def __init__(self, stats: dict[str, dict[str, list[float]]]) -> None:
        self.stats = stats
        self._params = {k: self._fit(v) for k, v in stats.items()}

    @staticmethod
    def _fit(stats: dict[str, list[float]]) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
        lo, hi = np.asarray(stats["min"], np.float32), np.asarray(stats["max"], np.float32)
        span = hi - lo
        scale = np.where(span > EPS, 2.0 / np.maximum(span, EPS), 1.0).astype(np.float32)
        offset = np.where(span > EPS, -1.0 - lo * scale, -lo).astype(np.float32)
        return scale, offset

    def _apply(self, key: str, values: Any) -> NDArray[np.float32]:
        scale, offset = self._params[key]
        return (np.asarray(values, np.float32) * scale + offset).astype(np.float32)

    def state(self, values: Any) -> NDArray[np.float32]:
        return self._apply("state", values)

    def action(self, values: Any) -> NDArray[np.float32]:
        return self._apply("action", values)

    def unnormalize_action(self, values: Any) -> NDArray[np.float32]:
        """Actions in physical units, within the range the data hold (never beyond what was shown)."""
        scale, offset = self._params["action"]
        actions = (np.asarray(values, np.float32) - offset) / scale
        lo, hi = (np.asarray(self.stats["action"][k], np.float32) for k in ("min", "max"))
        return np.clip(actions, lo, hi).astype(np.float32)
