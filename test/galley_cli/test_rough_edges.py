"""Three mistakes a new user made, each one clear line and exit 2, and one figure that leads an evaluation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from galley_cli.main import main


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    return err


def test_run_refuses_an_out_that_is_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report.txt"
    out.write_text("mine\n")
    assert main(["run", "Move the bowl to the green zone", "--out", str(out)]) == 2
    assert f"--out {out} is a file; give a folder" in _one_line(capsys)
    assert out.read_text() == "mine\n"


def test_eval_refuses_an_out_that_is_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report.txt"
    out.write_text("mine\n")
    assert main(["eval", "--mode", "planner", "--planner", "gold", "--episodes", "1", "--out", str(out)]) == 2
    assert f"--out {out} is a file" in _one_line(capsys)


def test_a_map_file_that_does_not_exist_is_named_before_the_episode(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    params = tmp_path / "map.yaml"
    params.write_text("map_server:\n  ros__parameters:\n    yaml_filename: /nowhere/kitchen.yaml\n")
    out = tmp_path / "run"
    assert main(["run", "Move the bowl to the green zone", "--params", str(params), "--out", str(out)]) == 2
    line = _one_line(capsys)
    assert "map_server.yaml_filename = '/nowhere/kitchen.yaml': no such file" in line
    assert not out.exists()  # nothing started, nothing recorded


def test_an_evaluation_with_replanning_leads_with_the_figure_that_counts_replans(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "eval"
    argv = [
        "eval",
        "--mode",
        "policy",
        "--episodes",
        "1",
        "--replan",
        "1",
        "--inject",
        "knock",
        "--out",
        str(out),
    ]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    metrics = json.loads((out / "metrics.json").read_text())
    headline = metrics["headline"]
    assert headline["metric"] == "sr_episode_replan" and headline["value"] == metrics["sr_episode_replan"]
    assert (
        f"galley eval: sr_episode_replan = {headline['value']:.3f}: episodes whose task succeeded" in printed
    )
    assert "episodes succeeded (replans allowed) " in printed
