"""Reading a bag's messages so that one message that cannot be read does not end the reading.

Every reader of bags (replay, the dataset readers, the LeRobot export) decodes through
:class:`MessageDecoder`: a message whose bytes are not its type (a truncated write, a type
definition that changed, a DDS implementation's layout that :func:`deserialize` does not accept)
is skipped and recorded as an :class:`Unreadable` (topic, index on its topic, type, why), for the
caller to report, and the rest of the bag is read.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from rosbags.serde import SerdeError

from galley_runtime.rosbags_messages import deserialize

__all__ = ["MessageDecoder", "Unreadable"]


@dataclass(frozen=True)
class Unreadable:
    """A message of a bag that could not be read."""

    topic: str
    index: int  # its place among the messages read of its topic, from 0
    type: str
    reason: str

    def __str__(self) -> str:
        return f"{self.topic} message {self.index} ({self.type}): {self.reason}"


class MessageDecoder:
    """Decodes the messages of a bag in order; those that cannot be read are kept in ``unreadable``."""

    def __init__(self) -> None:
        self.unreadable: list[Unreadable] = []
        self._read: Counter[str] = Counter()

    def decode(self, topic: str, raw: bytes | memoryview, type_name: str) -> Any | None:
        """The message, or None when it cannot be read (then recorded in :attr:`unreadable`)."""
        index = self._read[topic]
        self._read[topic] += 1
        try:
            return deserialize(raw, type_name)
        except SerdeError as err:
            self.unreadable.append(Unreadable(topic, index, type_name, str(err)))
            return None

    def summary(self, limit: int = 5) -> list[str]:
        """Lines for a user: how many were skipped, and the first ``limit`` of them."""
        if not self.unreadable:
            return []
        lines = [f"skipped {len(self.unreadable)} message(s) that could not be read:"]
        lines += [f"  {u}" for u in self.unreadable[:limit]]
        if len(self.unreadable) > limit:
            lines.append(f"  ... and {len(self.unreadable) - limit} more")
        return lines
