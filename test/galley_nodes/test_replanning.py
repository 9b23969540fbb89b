"""Replanning in the embedded host: an object knocked out of the gripper is recovered by a replan.

The whole stack of ``galley run`` (simulator, navigation, arm controller, monitor, task planner with
galley's backend, task executor, recorder) with the ``failure_injector`` node knocking the bowl out
of the gripper while the robot carries it. With ``max_replans`` 0 the place fails and the episode
ends, as before; with 1 the executor sends the world state on /task/replan, the planner answers
with what remains, and the episode succeeds; the recorder keeps recording through the ABORT.
"""

from __future__ import annotations

import json

import pytest

from galley_episodes import run_episode

INSTRUCTION = "Move the bowl to the red zone"
PLAN = "move to the green zone; pick the bowl; move to the red zone; place the bowl"  # seed 3


@pytest.mark.parametrize("max_replans", [0, 1])
def test_an_injected_knock_is_recovered_only_with_a_replan(tmp_path, max_replans):
    summary = run_episode(
        INSTRUCTION,
        seed=3,
        plan=PLAN,
        out_dir=tmp_path,
        progress=False,
        replan=max_replans,
        inject="knock",
    )
    assert summary["injected"]["kind"] == "knock" and summary["injected"]["object"] == "bowl"
    knocked_to = summary["injected"]["to"]
    first = [(s["step"], s["success"]) for s in summary["steps"][:4]]
    assert first == [(s, ok) for s, ok in zip(PLAN.split("; "), [True, True, True, False], strict=True)]
    recorded = json.loads((tmp_path / "bag" / "episode.json").read_text())
    if max_replans == 0:
        assert not summary["success"] and summary["replans"] == [] and len(summary["steps"]) == 4
        assert recorded["abort"]["rule"] == "step_failed" and not recorded["success"]
        return
    [replan] = summary["replans"]
    assert "bowl" in replan["reason"] and replan["steps_done"] == 4
    assert replan["plan"] == [
        f"move to the {knocked_to} zone",
        "pick the bowl",
        "move to the red zone",
        "place the bowl",
    ]
    assert summary["success"] and all(s["success"] for s in summary["steps"][4:])
    # the recorder: the replan with its context, the abort of the failed plan, the steps of both plans
    assert recorded["success"] and recorded["abort"] is None and recorded["replan_count"] == 1
    entry = recorded["replans"][0]
    assert entry["plan"] == replan["plan"] and entry["abort"]["rule"] == "step_failed"
    assert entry["context"]["objects"]["bowl"] == knocked_to and entry["context"]["held"] == ""
    assert [s.get("plan", 0) for s in recorded["steps"]] == [0] * 4 + [1] * 4
    assert recorded["recording"]["stop_reason"] == "shutdown"  # not the abort: the episode went on
