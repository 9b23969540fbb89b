"""What the recorder learns about an episode from the topics it records: the bag's metadata.

Sources: ``/sim/preflight`` (the simulator's latched preflight report: scene, seed, the episode),
``/task/plan`` (the plan), ``/episode/events`` (steps started, succeeded, failed; the monitor's
ABORT), ``/monitor/events`` (the monitor's verdicts) and ``/task/result`` (the executor's outcome).

With replanning, the executor's requests on ``/task/replan`` (a PlanContext as JSON) and the plans
answering them on ``/task/plan`` are the episode's ``replans`` (reason, context, plan, and the
monitor's ABORT of the failed step, which then does not fail the episode); ``steps`` go on across
plans, each with the number of the plan it belongs to (0: the first).
"""

from __future__ import annotations

import json
from importlib import metadata as importlib_metadata
from typing import Any

from galley_runtime.msg_constants import ABORT, EPISODE_DONE, STEP_FAILED, STEP_STARTED, STEP_SUCCEEDED

__all__ = ["EpisodeInfo", "custom_data_of", "software_version"]

_KINDS = {STEP_SUCCEEDED: "succeeded", STEP_FAILED: "failed"}


def software_version() -> str:
    """galley's version: the installed galley_nodes distribution's."""
    try:
        return f"galley_nodes {importlib_metadata.version('galley_nodes')}"
    except importlib_metadata.PackageNotFoundError:
        return "galley_nodes (not installed)"


class EpisodeInfo:
    """The episode metadata, updated message by message (see the module docstring)."""

    def __init__(self, **recording: Any) -> None:
        self.scene = ""
        self.seed: int | None = None
        self.episode: dict[str, Any] | None = None
        self.instruction = ""
        self.plan: list[str] = []
        self.steps: dict[int, dict[str, Any]] = {}
        self.verdicts: list[dict[str, Any]] = []
        self.abort: dict[str, Any] | None = None
        self.result: dict[str, Any] | None = None
        self.done = False
        self.replans: list[dict[str, Any]] = []
        self._awaiting = False  # a replan was asked for and its plan has not come
        self._offset = 0  # index in ``steps`` of the current plan's first step
        self.recording: dict[str, Any] = dict(recording)
        self.changed = True

    def note(self, topic: str, msg: Any) -> None:
        """Learn from a recorded message (other topics are ignored)."""
        handler = {
            "/sim/preflight": self._preflight,
            "/task/plan": self._plan,
            "/episode/events": self._event,
            "/monitor/events": self._verdict,
            "/task/result": self._result,
            "/task/replan": self._replan,
        }.get(topic)
        if handler is not None:
            handler(msg)
            self.changed = True

    def _preflight(self, msg: Any) -> None:
        for status in msg.status:
            values = {str(kv.key): str(kv.value) for kv in status.values}
            self.scene = values.get("scene", self.scene)
            if "seed" in values:
                self.seed = int(values["seed"])
            if "episode" in values:
                self.episode = json.loads(values["episode"])

    def _plan(self, msg: Any) -> None:
        if self._awaiting:
            self.replans[-1]["plan"] = [str(s) for s in msg.steps]
            self._awaiting = False
            return
        self.instruction = str(msg.instruction)
        self.plan = [str(s) for s in msg.steps]

    def _replan(self, msg: Any) -> None:
        try:
            context = json.loads(str(msg.data))
        except ValueError:
            context = {"unreadable": str(msg.data)}
        entry = {"reason": context.get("failure", ""), "context": context, "plan": [], "abort": self.abort}
        self.replans.append(entry)
        self.abort, self._awaiting = None, True  # the abort of the failed step ends a plan, not the episode
        self._offset = max(self.steps, default=-1) + 1

    def _event(self, msg: Any) -> None:
        kind, index = int(msg.kind), int(msg.step_index)
        at, plan = index + self._offset if index >= 0 else index, len(self.replans)
        if kind == STEP_STARTED:
            self.steps[at] = {"index": index, "step": str(msg.step), "result": "started"}
            if plan:
                self.steps[at]["plan"] = plan
        elif kind in _KINDS:
            entry = self.steps.setdefault(at, {"index": index, "step": str(msg.step)})
            entry.update(result=_KINDS[kind], reason=str(msg.reason))
        elif kind == ABORT and self._awaiting and self.replans[-1]["abort"] is None:
            self.replans[-1]["abort"] = {"rule": str(msg.rule), "reason": str(msg.reason)}
        elif kind == ABORT and self.abort is None and not self._awaiting:
            self.abort = {
                "rule": str(msg.rule),
                "reason": str(msg.reason),
                "step_index": index,
                "step": str(msg.step),
            }
        elif kind == EPISODE_DONE:
            self.done = True

    def _verdict(self, msg: Any) -> None:
        passed = int(msg.kind) == STEP_SUCCEEDED
        self.verdicts.append(
            {
                "rule": str(msg.rule),
                "passed": passed,
                "reason": str(msg.reason),
                "step_index": int(msg.step_index),
            }
        )

    def _result(self, msg: Any) -> None:
        self.result = {
            "instruction": str(msg.instruction),
            "plan": [str(s) for s in msg.plan],
            "step_success": [bool(b) for b in msg.step_success],
            "step_duration_s": [float(d) for d in msg.step_duration_s],
            "step_reason": [str(r) for r in msg.step_reason],
            "success": bool(msg.success),
        }

    @property
    def aborted(self) -> bool:
        return self.abort is not None

    @property
    def success(self) -> bool:
        """Succeeded: not aborted, and the executor's result says so (or every step succeeded)."""
        if self.abort is not None:
            return False
        if self.result is not None:
            return bool(self.result["success"])
        steps = self.steps.values()
        return self.done and bool(self.steps) and all(s.get("result") == "succeeded" for s in steps)

    def to_dict(self) -> dict[str, Any]:
        """Everything, as plain JSON values."""
        return {
            "scene": self.scene,
            "seed": self.seed,
            "episode": self.episode,
            "instruction": self.instruction,
            "plan": self.plan,
            "steps": [self.steps[i] for i in sorted(self.steps)],
            "monitor_verdicts": self.verdicts,
            "abort": self.abort,
            "result": self.result,
            "episode_done": self.done,
            "replans": self.replans,
            "replan_count": len(self.replans),
            "success": self.success,
            "software_version": software_version(),
            "recording": self.recording,
        }

    def custom_data(self) -> dict[str, str]:
        """The bag's ``custom_data``: strings, the structured values as JSON."""
        return custom_data_of(self.to_dict())


def custom_data_of(record: dict[str, Any]) -> dict[str, str]:
    """The bag's ``custom_data`` for an episode record (:meth:`EpisodeInfo.to_dict`, episode.json)."""
    return {
        f"galley.{key}": value if isinstance(value, str) else json.dumps(value, sort_keys=True)
        for key, value in record.items()
    }
