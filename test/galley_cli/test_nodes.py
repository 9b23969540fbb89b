"""``galley nodes --effective``: each parameter's value in effect and the layer it came from."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from galley_cli.main import main

REPO = Path(__file__).resolve().parents[2]


def effective(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, dict[str, tuple[str, str]]]:
    """node -> parameter -> (value as printed, layer) from ``galley nodes --effective ARGS``."""
    assert main(["nodes", "--effective", *args]) == 0
    out: dict[str, dict[str, tuple[str, str]]] = {}
    node = ""
    for line in capsys.readouterr().out.splitlines():
        if row := re.fullmatch(r"  (\w+)\s+= (.*)  \[(.*)\]", line):
            out[node][row[1]] = (row[2], row[3])
        elif not line.startswith(("  ", "note:")):
            node = line.split()[0]
            out[node] = {}
    return out


@pytest.fixture
def user_file(tmp_path: Path) -> Path:
    path = tmp_path / "mine.yaml"
    path.write_text(
        "monitor:\n  ros__parameters:\n    abort_on_failure: false\n"
        "map_server:\n  ros__parameters:\n    yaml_filename: my_map.yaml\n"
        "sim:\n  ros__parameters:\n    seed: 9\n"
    )
    return path


def test_every_layer_is_named(capsys, user_file, monkeypatch):
    monkeypatch.chdir(REPO)  # config/galley.yaml shown as the user reads it
    shown = effective(capsys, "monitor", "map_server", "sim", "task_executor", "--params", str(user_file))
    monitor = shown["monitor"]
    assert monitor["check_rate_hz"] == ("10.0", "code default")
    assert monitor["rate_rules"][1] == "config/galley.yaml"
    assert monitor["abort_on_failure"] == ("False", f"--params {user_file}")
    assert monitor["scene"] == ("'kitchen'", "command: --scene (kitchen)")
    assert monitor["cameras_enabled"] == ("False", "command: --video being off")
    # a value the command only derives gives way to the user's file; one it owns replaces it
    assert shown["map_server"]["yaml_filename"] == ("'my_map.yaml'", f"--params {user_file}")
    assert shown["sim"]["seed"] == ("0", "command: --seed (0)")
    assert shown["task_executor"]["completion"] == (
        "'status'",
        "stack: the oracle nodes' status (completion: status)",
    )
    # every declared parameter is listed once
    assert len(shown["monitor"]) == len(set(shown["monitor"])) and "tcp_offset_m" in shown["monitor"]


def test_the_options_choose_the_bring_up(capsys, tmp_path):
    run = tmp_path / "run"  # a run folder: --policy is checked for one before anything is shown
    run.mkdir()
    (run / "policy.pt").write_bytes(b"")
    shown = effective(
        capsys,
        "task_executor",
        "sim",
        "recorder",
        "--policy",
        str(run),
        "--seed",
        "4",
        "--out",
        str(tmp_path),
    )
    assert shown["task_executor"]["completion"] == (
        "'criteria'",
        "stack: --policy (a policy's steps are judged on ground truth)",
    )
    assert shown["sim"]["cameras_enabled"] == (
        "True",
        "command: this run's need of the cameras (--video, --policy)",
    )
    assert shown["sim"]["seed"] == ("4", "command: --seed (4)")
    assert shown["recorder"]["output_dir"][0] == repr(str(tmp_path))


def test_the_notes_say_which_user_value_won(capsys, user_file):
    assert main(["nodes", "--effective", "sim", "--params", str(user_file)]) == 0
    out = capsys.readouterr().out
    assert f"note: sim.seed = 9 from {user_file} is replaced: the command sets it from --seed (0)" in out
    assert "note: map_server.yaml_filename = 'my_map.yaml'" in out


def test_a_node_outside_the_mode_is_said_so(capsys):
    assert main(["nodes", "--effective", "diffusion_policy"]) == 0
    assert "where it does not run" in capsys.readouterr().out.splitlines()[0]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["no_such_node"], r"--effective: no node no_such_node; one of arm_controller, "),
        ([], r"--effective: name a node; one of "),
        (["monitor", "--scene", "nowhere"], r"scene 'nowhere' not found"),
        (["monitor", "--params", "BAD"], r"--params: BAD does not exist"),
        (
            ["monitor", "--params", "RATES"],
            r"node '/monitor': parameter 'rate_rules' .*'TOPIC MIN_HZ' entries",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_status_2(capsys, tmp_path, args, message):
    bad = tmp_path / "rates.yaml"
    bad.write_text("monitor:\n  ros__parameters:\n    rate_rules: [/odom]\n")
    args = [str(bad) if a == "RATES" else a for a in args]
    assert main(["nodes", "--effective", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and re.search(message, err), err
