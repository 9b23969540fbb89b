"""An evaluation with and without repair (galley_episodes.repair): every step scored, and whole plans."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from galley_episodes.repair import no_repair_metrics, repair_table, repairs

PLANS = [
    ["move to the red zone", "pick the cup"],
    ["move to the blue zone", "pick the apple"],
    ["move to the green zone", "pick the fork"],
]


def test_the_params_files_say_whether_failed_steps_are_repaired(tmp_path: Path) -> None:
    assert not repairs([])  # config/galley.yaml: a failed step ends the plan
    policy_eval = Path(__file__).parents[2] / "config" / "policy_eval.yaml"
    assert repairs([policy_eval])
    off = tmp_path / "off.yaml"
    off.write_text("task_executor:\n  ros__parameters:\n    teleport_on_failure: false\n")
    assert not repairs([policy_eval, off])  # the last file wins


def test_whole_plans_count_only_episodes_with_every_step_done_and_the_task_succeeded() -> None:
    rows = [
        {"outcomes": [True, True], "success": True},
        {"outcomes": [True, False], "success": False},  # the pick failed: the plan ended there
        {"outcomes": [False, False], "success": False},  # the move failed, the pick never ran
    ]
    metrics = no_repair_metrics(PLANS, rows)
    assert metrics["sr_episode_no_repair"] == pytest.approx(1 / 3)
    extra = metrics["no_repair"]
    assert extra["sr"] == pytest.approx(3 / 6)
    assert extra["sr_by_action"] == {"move": pytest.approx(2 / 3), "pick": pytest.approx(1 / 3)}


def test_the_table_labels_both_runs() -> None:
    metrics = {
        "repair": True,
        "sr_by_action": {"move": 1.0, "pick": 0.5},
        "sr": 0.75,
        "sr_episode": 0.5,
        **no_repair_metrics(PLANS[:2], [{"outcomes": [True, True], "success": True}] * 2),
    }
    lines = repair_table(metrics).splitlines()
    assert "move" in lines[0] and "episodes" in lines[0]
    assert lines[1].lstrip().startswith("every step scored (a failed step teleported past)")
    assert lines[2].lstrip().startswith("whole plans, no teleport") and lines[2].rstrip().endswith("1.00")
    assert repair_table({"sr_by_action": None}) == ""  # planner mode: nothing executed


def test_eval_runs_the_same_plans_again_without_repair(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from galley_cli.main import main

    params = tmp_path / "repair.yaml"  # every step fails at once: repaired, the plan goes on
    params.write_text(
        "task_executor:\n  ros__parameters:\n    teleport_on_failure: true\n    step_time_limit_s: 1.0\n"
        "monitor:\n  ros__parameters:\n    abort_on_failure: false\n"
    )
    out = tmp_path / "eval"
    argv = ["eval", "--mode", "policy", "--episodes", "1", "--steps", "2", "--params", str(params)]
    assert main([*argv, "--out", str(out)]) == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["repair"] is True and metrics["headline"]["metric"] == "sr_episode_no_repair"
    assert metrics["sr_episode_no_repair"] == 0.0 and metrics["no_repair"]["episodes"] == 1
    repaired = next(csv.DictReader((out / "episodes.csv").open()))
    alone = next(csv.DictReader((out / "episodes_no_repair.csv").open()))
    steps = list(csv.DictReader((out / "steps.csv").open()))
    assert len(steps) == 2  # the repaired run teleported past the failed move and ran the pick
    assert repaired["failure"] == alone["failure"]  # the same plan, the same first failure
    assert alone["steps_executed"] == "1"  # without repair the plan ended at its failed move
    assert "exceeded the 1 s step time limit" in alone["failure"]
    assert (out / "no_repair.yaml").exists()
    printed = capsys.readouterr().out
    assert (
        "every step scored (a failed step teleported past)" in printed
        and "whole plans, no teleport" in printed
    )
