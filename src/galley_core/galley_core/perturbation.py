"""DART-style perturbations of a demonstrator's commands: noise in short spells (Laskey et al., CoRL 2017).

The executed command is the demonstrator's plus an offset that is drawn afresh for each spell and
held through it; between spells the command passes unchanged. The demonstrator keeps acting on the
state the perturbed commands lead to, so a recording of its own (unperturbed) commands shows how to
come back from where noise pushed the robot. Deterministic for a seed: the schedule depends on time
alone, never on the commands.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["SpellNoise", "SpellNoiseConfig"]


@dataclass(frozen=True)
class SpellNoiseConfig:
    """Sizes at ``scale`` 1 and the spells' timing."""

    scale: float = 0.0  # multiplies every standard deviation below; 0: no perturbation
    linear_mps: float = 0.06  # std of the forward-speed offset, m/s
    angular_rps: float = 0.35  # std of the yaw-rate offset, rad/s
    joint_rad: float = 0.08  # std of each arm joint's position offset, rad
    spell_s: float = 1.0  # how long a spell lasts, s
    gap_s: float = 3.0  # mean time from a spell's end to the next one's start (exponential), s
    seed: int = 0  # seed of the spells and offsets

    def __post_init__(self) -> None:
        for name in ("scale", "linear_mps", "angular_rps", "joint_rad"):
            if not getattr(self, name) >= 0.0:
                raise ValueError(f"{name} = {getattr(self, name)} must be >= 0")
        if not (self.spell_s > 0.0 and self.gap_s > 0.0):
            raise ValueError(f"spell_s = {self.spell_s} and gap_s = {self.gap_s} must be > 0 s")


class SpellNoise:
    """The offsets in effect at a time: ``(dv, dω, joint offsets)``; zeros between spells."""

    def __init__(self, config: SpellNoiseConfig, joints: int) -> None:
        self.config = config
        self.joints = joints
        self._rng = np.random.default_rng(config.seed)
        self._start = self._rng.exponential(config.gap_s) if config.scale > 0 else math.inf
        self._offset = self._draw()

    def _draw(self) -> NDArray[np.float64]:
        c = self.config
        std = np.r_[c.linear_mps, c.angular_rps, np.full(self.joints, c.joint_rad)] * c.scale
        offset: NDArray[np.float64] = self._rng.normal(0.0, 1.0, 2 + self.joints) * std
        return offset

    def at(self, t_s: float) -> tuple[float, float, NDArray[np.float64]]:
        """Offsets at time ``t_s`` (s, non-decreasing between calls)."""
        c = self.config
        while t_s >= self._start + c.spell_s:  # spells that are over: schedule the next
            self._start += c.spell_s + self._rng.exponential(c.gap_s)
            self._offset = self._draw()
        if t_s < self._start:
            return 0.0, 0.0, np.zeros(self.joints)
        return float(self._offset[0]), float(self._offset[1]), self._offset[2:].copy()
