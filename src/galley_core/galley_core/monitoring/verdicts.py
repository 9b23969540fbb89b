"""What the monitor's rules conclude: small immutable records, no behaviour."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from galley_core.tasks.grammar import Step

__all__ = ["ActiveStep", "Level", "Verdict"]


class Level(IntEnum):
    """Severity, with the values of ``diagnostic_msgs/msg/DiagnosticStatus``."""

    OK = 0
    WARN = 1
    ERROR = 2
    STALE = 3


@dataclass(frozen=True)
class ActiveStep:
    """The plan step being executed.

    Attributes:
        index: the step's index in the plan (0-based).
        text: the step's text in the plan grammar, e.g. ``"pick the bowl"``.
        step: the parsed step.
        started_ns: when it started, nanoseconds of simulated (ROS) time.
        zone: the zone the base was last sent to (a move's target), "" before any move; a place
            puts the object down there.
    """

    index: int
    text: str
    step: Step
    started_ns: int
    zone: str = ""

    def describe(self) -> str:
        """``step 2 'pick the bowl'``: how reasons name a step."""
        return f"step {self.index} {self.text!r}"


@dataclass(frozen=True)
class Verdict:
    """One rule's conclusion.

    Attributes:
        rule: the rule's name, e.g. ``"time_limit"``, ``"fallen_object"``, ``"topic_rate"``.
        passed: whether the check passed.
        reason: a sentence naming what was checked (the topic, object or step) and the measured
            value against the threshold, with units.
        abort: whether the episode must stop (a failed check while ``abort_on_failure``).
        step_index: the step the verdict is about, -1 when it is about none.
        step: that step's text, "" when none.
        time_ns: when the verdict was reached, nanoseconds of simulated time.
    """

    rule: str
    passed: bool
    reason: str
    abort: bool = False
    step_index: int = -1
    step: str = ""
    time_ns: int = 0

    @property
    def level(self) -> Level:
        """ERROR for a failed check, OK otherwise."""
        return Level.OK if self.passed else Level.ERROR
