"""Quality-of-service profiles, with the matching rules of DDS as ROS 2 applies them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["QoS"]

Reliability = Literal["reliable", "best_effort"]
Durability = Literal["volatile", "transient_local"]
History = Literal["keep_last", "keep_all"]


@dataclass(frozen=True)
class QoS:
    """A QoS profile: the subset of ROS 2 QoS policies galley's nodes use.

    Attributes:
        depth: queue length for ``keep_last``: a subscription keeps at most this many undelivered
            messages (older ones are dropped); a transient-local publisher keeps this many for late
            subscribers.
        reliability: ``reliable`` or ``best_effort``.
        durability: ``volatile`` or ``transient_local`` (latched: late subscribers get the history).
        history: ``keep_last`` (bounded by depth) or ``keep_all``.
    """

    depth: int = 10
    reliability: Reliability = "reliable"
    durability: Durability = "volatile"
    history: History = "keep_last"

    def __post_init__(self) -> None:
        if self.history == "keep_last" and self.depth < 1:
            raise ValueError(f"QoS depth = {self.depth} must be >= 1 with keep_last history")
        if self.reliability not in ("reliable", "best_effort"):
            raise ValueError(f"QoS reliability {self.reliability!r}: use 'reliable' or 'best_effort'")
        if self.durability not in ("volatile", "transient_local"):
            raise ValueError(f"QoS durability {self.durability!r}: use 'volatile' or 'transient_local'")
        if self.history not in ("keep_last", "keep_all"):
            raise ValueError(f"QoS history {self.history!r}: use 'keep_last' or 'keep_all'")

    @staticmethod
    def sensor_data(depth: int = 5) -> QoS:
        """rclpy's ``qos_profile_sensor_data``: best effort, volatile, a short queue."""
        return QoS(depth=depth, reliability="best_effort")

    @staticmethod
    def latched(depth: int = 1) -> QoS:
        """Reliable and transient-local: late subscribers receive the last ``depth`` messages."""
        return QoS(depth=depth, durability="transient_local")

    @property
    def queue_limit(self) -> int | None:
        """The queue bound: ``depth`` for keep_last, None (unbounded) for keep_all."""
        return self.depth if self.history == "keep_last" else None

    def incompatibility(self, offered: QoS) -> str | None:
        """Why a subscription requesting ``self`` cannot receive from a publisher offering ``offered``.

        Returns None when they match. The rules are DDS's request-versus-offer rules: a reliable
        request needs a reliable offer, a transient-local request needs a transient-local offer.
        """
        if self.reliability == "reliable" and offered.reliability == "best_effort":
            return "RELIABILITY (subscription requests reliable, publisher offers best_effort)"
        if self.durability == "transient_local" and offered.durability == "volatile":
            return "DURABILITY (subscription requests transient_local, publisher offers volatile)"
        return None
