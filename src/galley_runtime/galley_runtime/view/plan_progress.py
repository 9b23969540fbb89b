"""The task plan with each step's state and verdict, from the executor's and the monitor's events.

What the live view sends on /view/plan (schema ``galley.PlanProgress``)::

    {"timestamp": {"sec", "nsec"}, "instruction": str, "current": int (-1: none),
     "steps": [{"step": str, "state": "pending" | "running" | "succeeded" | "failed",
                "verdict": "" | "pass" | "FAIL", "rule": str, "reason": str}],
     "aborted": str (the abort's reason, "" while none)}

``state`` is the task executor's (/episode/events), ``verdict`` the monitor's check at the end of
the step (/monitor/events). A new /task/plan (a replan) starts the list again.
"""

from __future__ import annotations

from typing import Any

from galley_runtime.msg_constants import ABORT, STEP_FAILED, STEP_STARTED, STEP_SUCCEEDED

__all__ = ["PlanProgress"]

_STATES = {STEP_STARTED: "running", STEP_SUCCEEDED: "succeeded", STEP_FAILED: "failed"}


class PlanProgress:
    """Folds /task/plan, /episode/events and /monitor/events into the plan's progress."""

    def __init__(self) -> None:
        self.instruction = ""
        self.steps: list[dict[str, str]] = []
        self.current = -1
        self.aborted = ""

    def update(self, topic: str, msg: Any) -> bool:
        """Take one message; returns whether the progress changed."""
        if topic == "/task/plan":
            self.instruction = str(msg.instruction)
            self.steps = [
                {"step": str(s), "state": "pending", "verdict": "", "rule": "", "reason": ""}
                for s in msg.steps
            ]
            self.current = -1
            return True
        kind, index = int(msg.kind), int(msg.step_index)
        if kind == ABORT:
            self.aborted = str(msg.reason)
            return True
        if not 0 <= index < len(self.steps):
            return False
        step = self.steps[index]
        if topic == "/monitor/events" and kind in (STEP_SUCCEEDED, STEP_FAILED):
            step.update(
                verdict="pass" if kind == STEP_SUCCEEDED else "FAIL", rule=msg.rule, reason=msg.reason
            )
            return True
        if topic == "/episode/events" and kind in _STATES:
            step["state"] = _STATES[kind]
            if kind == STEP_STARTED:
                self.current = index
            elif msg.reason and not step["reason"]:
                step["reason"] = str(msg.reason)
            return True
        return False

    def as_dict(self, time_ns: int) -> dict[str, Any]:
        """The message sent on /view/plan."""
        return {
            "timestamp": {"sec": time_ns // 1_000_000_000, "nsec": time_ns % 1_000_000_000},
            "instruction": self.instruction,
            "current": self.current,
            "steps": self.steps,
            "aborted": self.aborted,
        }
