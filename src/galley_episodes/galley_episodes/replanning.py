"""The replans' log of an episode: what the executor asked for and what was injected.

``replan`` (``--replan N``) gives the task executor and the recorder ``max_replans``; ``inject``
(``--inject knock|move``) adds the ``failure_injector`` node. :class:`ReplanLog` collects the
executor's requests on /task/replan and what the injector did, for the episode's summary.
"""

from __future__ import annotations

import json
from typing import Any

from galley_runtime.qos import QoS

__all__ = ["ReplanLog"]


class ReplanLog:
    """The replans asked for on /task/replan and the failure injected, for the summary."""

    def __init__(self, probe: Any) -> None:
        self.asked: list[Any] = []
        self.injected: list[Any] = []
        probe.create_subscription("/task/replan", "std_msgs/msg/String", self.asked.append, QoS(depth=10))
        probe.create_subscription(
            "/failure_injector/injected", "std_msgs/msg/String", self.injected.append, QoS.latched()
        )

    def summary(self, planned: list[Any]) -> dict[str, Any]:
        """``replans`` (reason, steps done before, plan) and ``injected`` (or None)."""
        asked = [json.loads(r.data) for r in self.asked]  # each the executor's PlanContext
        answers = [*planned[1:], *[None] * len(asked)]  # the plans after the first answer the replans
        return {
            "replans": [
                {"reason": c["failure"], "steps_done": len(c["steps"]), "plan": list(p.steps) if p else None}
                for c, p in zip(asked, answers, strict=False)
            ],
            "injected": json.loads(self.injected[-1].data) if self.injected else None,
        }
