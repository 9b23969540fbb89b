"""The task executor's ``/task/execute`` action (``galley_msgs/action/ExecuteInstruction``).

A goal carries an instruction. The executor publishes it on /task/instruction, as a user would,
and the task planner's plan for it comes back on /task/plan like any other; so the action is the
topic interface with a goal's guarantees: nothing is lost (a goal is accepted or rejected), every
step reports, and the end is a result. Feedback: the plan with step_index -1 once it arrives,
then each step RUNNING when it starts and SUCCEEDED or FAILED when it is judged. Result: success,
the steps run (replans included), each one's verdict, and the reason of a failure: the failing
step's, the planner's (``unknown_name: ...``), a rejected plan's, or no plan within the step
time limit. A new goal, or a plan for another instruction on /task/plan, preempts the goal (it
aborts). Cancel stops the robot: the executor cancels the running move (navigate_to_pose) and
sends the arm a STOP, ends the plan there and the goal CANCELED.

This module keeps the goal and builds its messages; the executor calls it at each event.
"""

from __future__ import annotations

from typing import Any

from galley_runtime.msg_constants import STEP_FAILED, STEP_STARTED, STEP_SUCCEEDED
from galley_runtime.node import ServerGoal, Serves

__all__ = ["EXECUTE", "EXECUTE_SERVES", "TaskAction"]

EXECUTE = "galley_msgs/action/ExecuteInstruction"
EXECUTE_SERVES = Serves("task/execute", EXECUTE, goal="on_execute", cancel="on_execute_cancel")
RUNNING, SUCCEEDED, FAILED = 0, 1, 2  # ExecuteInstruction feedback: verdict
_VERDICTS = {STEP_STARTED: RUNNING, STEP_SUCCEEDED: SUCCEEDED, STEP_FAILED: FAILED}


class TaskAction:
    """The one /task/execute goal the executor runs (see the module docstring).

    Args:
        node: the task executor (publishes ``task/instruction``; ``msg``, ``now_ns``, ``log``).
    """

    def __init__(self, node: Any) -> None:
        self.node = node
        self.goal: ServerGoal | None = None
        self.instruction = ""
        self.planned = False  # its plan has come
        self.plan: list[str] = []
        self._canceled_instruction = ""  # canceled while planning: its plan, if it comes, is not run

    def accept(self, handle: ServerGoal) -> str | None:
        """Take a new goal (None) or say why not; the previous goal aborts, preempted."""
        instruction = str(handle.request.instruction).strip()
        if not instruction:
            return "the instruction is empty; give one, e.g. 'move the bowl to the green zone'"
        self.end(False, f"preempted by the instruction {instruction!r}")
        self.goal, self.instruction, self.planned, self.plan = handle, instruction, False, []
        self._canceled_instruction = ""
        self.node.publish("task/instruction", self.node.msg("std_msgs/msg/String", data=instruction))
        self._feedback(-1, "", RUNNING, "planning")
        return None

    @property
    def planning(self) -> bool:
        """Whether a goal waits for its plan."""
        return self.goal is not None and not self.planned

    @property
    def waiting_s(self) -> float:
        """How long the goal has waited for its plan, seconds (0 once planned or without a goal)."""
        if self.goal is None or self.planned:
            return 0.0
        return (self.node.now_ns() - self.goal.accepted_ns) * 1e-9

    def ignores_plan(self, instruction: str) -> bool:
        """Whether a plan on /task/plan is for a goal canceled while planning (and is not to run)."""
        if instruction.strip() and instruction.strip() == self._canceled_instruction:
            self._canceled_instruction = ""
            return True
        return False

    def on_plan(self, instruction: str, steps: list[str], *, replan: bool) -> None:
        """A plan the executor runs: the goal's (feedback), or another's (the goal aborts)."""
        if self.goal is None:
            return
        if not replan and (self.planned or instruction.strip() != self.instruction):
            self.end(False, f"preempted by a plan for {instruction!r} on /task/plan")
            return
        self.planned, self.plan = True, list(steps)
        self._feedback(-1, "", RUNNING, "replanned" if replan else "")

    def on_event(self, kind: int, index: int, step: str, reason: str) -> None:
        """A step event of the executor: feedback with the step's verdict."""
        if self.goal is not None and self.planned and kind in _VERDICTS:
            self._feedback(index, step, _VERDICTS[kind], reason)

    def finish(self, outcomes: list[tuple[str, bool, float, str]], success: bool) -> None:
        """The plan has ended: the result, from each step run as (step, success, duration_s, reason)."""
        if self.goal is None or not self.planned:
            return
        failed = [reason or f"{step!r} failed" for step, ok, _, reason in outcomes if not ok]
        reason = "" if success else (failed[-1] if failed else "the plan ended early")
        if self.goal.cancel_requested:
            reason = "canceled by the client"
        self._end(success, reason, [o[0] for o in outcomes], [o[1] for o in outcomes])

    def end(self, success: bool, reason: str) -> None:
        """End the goal, if one runs, with no steps run (planning failed, preempted, canceled)."""
        if self.goal is not None:
            self._end(success, reason, [], [])

    def cancel_idle(self, handle: ServerGoal) -> None:
        """A cancel while no step runs (before the plan came): its plan, when it comes, is not run."""
        if handle is self.goal:
            self._canceled_instruction = self.instruction
            self.end(False, "canceled by the client before the plan came")
        elif handle.active:
            handle.canceled(self.node.msg(f"{EXECUTE}_Result", reason="canceled by the client"))

    # -- messages ------------------------------------------------------------------------------

    def _feedback(self, index: int, step: str, verdict: int, reason: str) -> None:
        assert self.goal is not None
        self.goal.publish_feedback(
            self.node.msg(
                f"{EXECUTE}_Feedback",
                plan=self.plan,
                step_index=index,
                step=step,
                verdict=verdict,
                reason=reason,
            )
        )

    def _end(self, success: bool, reason: str, steps: list[str], verdicts: list[bool]) -> None:
        goal, self.goal = self.goal, None
        if goal is None or not goal.active:
            return
        result = self.node.msg(
            f"{EXECUTE}_Result", success=success, steps=steps, step_success=verdicts, reason=reason
        )
        if goal.cancel_requested:
            goal.canceled(result)
        elif success:
            goal.succeed(result)
        else:
            self.node.log.warning(f"/task/execute {self.instruction!r}: {reason}")
            goal.abort(result)
