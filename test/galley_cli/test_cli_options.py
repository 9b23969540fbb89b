"""Every command's --help, and the cheap commands' options, through the public entry point only.

``galley_cli.main.main`` as a user calls it (and the ``galley`` executable once), so that these hold
whatever module the commands' code lives in. Each test runs in a few seconds.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from galley_cli.main import main

REPO = Path(__file__).resolve().parents[2]

#: Every command, in the order ``galley --help`` lists them.
COMMANDS = (
    "doctor",
    "demo",
    "run",
    "eval",
    "map",
    "scene",
    "nodes",
    "topics",
    "suite",
    "replay",
    "bag",
    "plan",
    "train-planner",
    "eval-planner",
    "collect",
    "train",
    "export-lerobot",
)


def test_the_top_level_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    listed = re.findall(r"^    (\S+)\s", out, flags=re.MULTILINE)
    assert tuple(listed) == COMMANDS, "a command was added or removed: update COMMANDS"


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help_with_its_usage(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([command, "--help"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith(f"usage: galley {command} ") and captured.err == ""
    assert "-h, --help" in captured.out


def test_bag_repair_has_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bag", "repair", "--help"]) == 0
    assert capsys.readouterr().out.startswith("usage: galley bag repair ")


def test_no_command_is_one_line_naming_the_commands(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "the following arguments are required: COMMAND" in err


def test_an_unknown_command_names_it_and_the_commands(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plna", "x"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "invalid choice: 'plna'" in err and "'plan'" in err


#: The console script beside this interpreter (a venv's bin/, which need not be on PATH), else on PATH.
GALLEY = next(
    (str(p) for p in (Path(sys.executable).parent / "galley",) if p.is_file()), shutil.which("galley")
)


@pytest.mark.skipif(GALLEY is None, reason="the galley console script is not installed")
def test_the_galley_executable_runs_main_and_exits_2_on_a_mistake() -> None:
    proc = subprocess.run(
        [str(GALLEY), "nodes", "nosuch"], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("galley nodes: no galley node 'nosuch'; known nodes: ")
    assert proc.stderr.count("\n") == 1


def test_nodes_lists_every_node_with_units_and_bounds(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["nodes"]) == 0
    out = capsys.readouterr().out
    for node in ("sim", "task_executor", "arm_controller", "monitor", "recorder", "task_planner"):
        assert re.search(rf"^{node}\b", out, flags=re.MULTILINE), f"{node} is not listed"
    assert re.search(r"max_replans = 0 .*allowed: >= 0", out)
    assert "(Hz)" in out and "(m/s)" in out


def test_topics_lists_producers_and_consumers_and_follows_the_mode(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["topics"]) == 0
    oracle = capsys.readouterr().out
    cmd_vel = next(line for line in oracle.splitlines() if line.split()[:1] == ["/cmd_vel"])
    assert "geometry_msgs/msg/Twist" in cmd_vel and "diff_drive_controller" in cmd_vel and "sim" in cmd_vel
    assert main(["topics", "--mode", "policy"]) == 0
    policy = capsys.readouterr().out
    assert "diffusion_policy" in policy and "diffusion_policy" not in oracle
    assert main(["topics", "--no-cameras"]) == 0
    blind = capsys.readouterr().out
    assert "/camera/wrist/image_raw" in oracle and "/camera/" not in blind.replace("/camera/top_down/", "")
    assert "/camera/top_down/image_raw" in blind  # the planner's picture stays


def test_plan_json_is_one_object_with_the_plan(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("torch", reason="galley's planner runs on torch")
    assert main(["plan", "Put the cup in the red zone, please", "--seed", "0", "--json"]) == 0
    answer = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert answer["plan"][-2:] == ["move to the red zone", "place the cup"]


def test_suite_phrasing_writes_the_held_out_splits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "phrasing.yaml"
    assert main(["suite", "--phrasing", "--out", str(out)]) == 0
    assert str(out) in capsys.readouterr().out
    assert out.read_bytes() == (REPO / "config" / "suites" / "kitchen_phrasing_v1.yaml").read_bytes()


def test_map_writes_the_scene_map_at_the_resolution_asked(tmp_path: Path) -> None:
    assert main(["map", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "kitchen.pgm").read_bytes() == (REPO / "maps" / "kitchen.pgm").read_bytes()
    shipped = yaml.safe_load((REPO / "maps" / "kitchen.yaml").read_text())
    assert yaml.safe_load((tmp_path / "kitchen.yaml").read_text()) == shipped
    coarse = tmp_path / "coarse"
    assert main(["map", "--resolution", "0.1", "--out", str(coarse)]) == 0
    layout = yaml.safe_load((coarse / "kitchen.yaml").read_text())
    assert layout["resolution"] == 0.1 and layout["origin"] == shipped["origin"]
    fine, rough = ((p / "kitchen.pgm").read_bytes() for p in (tmp_path, coarse))
    assert len(rough) < len(fine) / 3  # about a quarter of the cells
