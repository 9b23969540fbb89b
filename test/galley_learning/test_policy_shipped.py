"""Shipped policies: what a ``--policy`` value names, the run's own params first, what installs.

These need no trained network (a run folder is recognised by its ``policy.pt``); the shipped policy
acting in the simulator, with its params.yaml reaching the simulator, is in test_policy_pipeline.py.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from galley_cli.main import main
from galley_learning.policy import shipped
from galley_learning.policy.shipped import PolicyNotFoundError, layered_params, resolve_policy, run_params

REPO = Path(__file__).resolve().parents[2]


def _run_folder(path: Path, *, params: bool = True) -> Path:
    path.mkdir(parents=True)
    for name in ("policy.pt", "config.json", "stats.json"):
        (path / name).write_text("{}")
    if params:
        (path / "params.yaml").write_text("sim:\n  ros__parameters:\n    image_width: 64\n")
    return path


@pytest.fixture
def weights(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty shipped-weights folder in place of galley's own."""
    folder = tmp_path / "weights"
    folder.mkdir()
    monkeypatch.setattr(shipped, "WEIGHTS", folder)
    return folder


def test_a_name_is_a_shipped_policy_and_anything_else_a_path(weights: Path, tmp_path: Path) -> None:
    toy = _run_folder(weights / "toy")
    mine = _run_folder(tmp_path / "runs" / "mine")
    assert shipped.shipped_policies() == ["toy"]
    assert resolve_policy("toy") == toy
    assert resolve_policy(str(mine)) == mine and resolve_policy(mine) == mine
    # a shipped name wins over a folder of that name here; a path spelled as one does not
    _run_folder(tmp_path / "toy")
    assert resolve_policy("toy") == toy
    assert resolve_policy(str(tmp_path / "toy")) == tmp_path / "toy"


def test_a_missing_policy_says_what_to_do(weights: Path, tmp_path: Path) -> None:
    with pytest.raises(PolicyNotFoundError, match=r"^no shipped policy 'default' in this galley: train one"):
        resolve_policy("default")
    _run_folder(weights / "toy")
    with pytest.raises(PolicyNotFoundError, match=r"\(shipped: toy\).*or give a run folder"):
        resolve_policy("default")
    (tmp_path / "empty").mkdir()
    with pytest.raises(PolicyNotFoundError, match=r"policy\.pt missing: train a policy with galley train"):
        resolve_policy(str(tmp_path / "empty"))
    with pytest.raises(PolicyNotFoundError, match="no such run folder"):
        resolve_policy(str(tmp_path / "nowhere"))


def test_the_runs_params_come_first_and_the_users_win(tmp_path: Path) -> None:
    run = _run_folder(tmp_path / "run")
    user = tmp_path / "user.yaml"
    assert run_params(run) == [run / "params.yaml"] and run_params(None) == []
    assert layered_params(run, [user]) == [run / "params.yaml", user]
    assert layered_params(run, layered_params(run, [user])) == [run / "params.yaml", user]  # not twice
    assert layered_params(_run_folder(tmp_path / "old", params=False), [user]) == [user]
    assert layered_params(None, [user]) == [user]


COMMANDS = [["eval", "--mode", "policy"], ["run", "Move the bowl to the green zone"]]


@pytest.mark.parametrize("command", COMMANDS)
def test_the_cli_names_a_missing_shipped_policy_in_one_line(
    weights: Path, tmp_path: Path, command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*command, "--policy", "default", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert "no shipped policy 'default' in this galley: train one with galley train" in err
    assert "or give a run folder" in err
    assert not (tmp_path / "out").exists()


def test_the_policy_node_takes_a_shipped_name(weights: Path) -> None:
    pytest.importorskip("torch")
    from galley_core.config import ConfigError
    from galley_nodes.registry import load_node_class
    from galley_runtime.embedded import EmbeddedHost

    host = EmbeddedHost([])
    with pytest.raises(ConfigError, match="no shipped policy 'default'"):
        host.add_node(load_node_class("diffusion_policy"), parameters={"run": "default"})


def test_an_installed_galley_learning_holds_the_shipped_policies(tmp_path: Path) -> None:
    """setup.py's package data: each shipped run folder's files install, its training state does not."""
    source = tmp_path / "galley_learning"
    shutil.copytree(
        REPO / "src" / "galley_learning",
        source,
        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__", "*.pt"),
    )
    toy = source / "galley_learning" / "policy" / "weights" / "toy"
    toy.mkdir(parents=True)
    shipped_files = ["policy.pt", "config.json", "stats.json", "params.yaml", "report.json", "TRAINING.md"]
    for name in [*shipped_files, "checkpoint.pt", "loss.png"]:
        (toy / name).write_text("x")
    (toy / "dataset").mkdir()
    (toy / "dataset" / "meta.json").write_text("{}")
    out = tmp_path / "lib"
    subprocess.run(
        [sys.executable, "setup.py", "-q", "build_py", "--build-lib", str(out)],
        cwd=source,
        check=True,
        capture_output=True,
    )
    installed = out / "galley_learning" / "policy" / "weights"
    assert (installed / "README.md").is_file()
    assert sorted(p.name for p in (installed / "toy").iterdir()) == sorted([*shipped_files, "loss.png"])


def test_the_default_policy_ships_and_acts_from_what_the_robot_senses() -> None:
    """weights/default: the ``sensors`` observation, ``anchor`` actions, its cameras in params.yaml."""
    import numpy as np
    import yaml

    from galley_learning.policy.runtime import PolicyRunner

    run = resolve_policy("default")
    assert (run / "TRAINING.md").is_file() and "default" in shipped.shipped_policies()
    runner = PolicyRunner(run)
    assert runner.config.observation == "sensors" and runner.config.actions == "anchor"
    assert runner.config.cameras == ()  # low-dimensional: no image enters it
    sim = yaml.safe_load((run / "params.yaml").read_text())["sim"]["ros__parameters"]
    assert (sim["image_width"], sim["image_height"], sim["camera_rate_hz"]) == (160, 120, 5.0)
    state = np.zeros((runner.config.obs_horizon, runner.config.state_dim), dtype=np.float32)
    chunk = runner.act({}, state, "pick the cup")
    assert chunk.shape == (runner.config.horizon, runner.config.action_dim) and np.all(np.isfinite(chunk))
