"""galley run: the README's instruction from plan to placed object, with its report."""

from __future__ import annotations

import json
import subprocess
import sys

import yaml


def galley(*args: str, cwd) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "galley_cli.main", *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=cwd,
    )


def test_the_readme_instruction_is_planned_executed_recorded_and_reported(repo, tmp_path):
    out = tmp_path / "bowl"
    proc = galley("run", "Move the bowl to the green zone", "--seed", "0", "--out", str(out), cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (
        "plan: move to the purple zone; pick the bowl; move to the green zone; place the bowl" in proc.stdout
    )
    episode = json.loads((out / "episode.json").read_text())
    assert episode["success"] and episode["em"] == 1.0
    assert [s["step"] for s in episode["steps"]] == episode["plan"] and all(
        s["success"] for s in episode["steps"]
    )
    assert episode["motion"]["collisions"] == 0 and episode["motion"]["path_length_m"] > 3.0
    metadata = yaml.safe_load((out / "bag" / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    topics = {t["topic_metadata"]["name"] for t in metadata["topics_with_message_count"]}
    assert {"/task/plan", "/cmd_vel", "/arm/joint_command", "/tf", "/episode/events"} <= topics
    assert (out / "topdown.png").stat().st_size > 20_000


def test_run_mistakes_are_one_line(repo, tmp_path):
    bad = galley(
        "run",
        "Move the bowl to the green zone",
        "--plan",
        "move to the orange zone",
        "--out",
        str(tmp_path / "a"),
        cwd=repo,
    )
    assert bad.returncode == 2 and "no zone 'orange'" in bad.stderr and "Traceback" not in bad.stderr
    empty = galley("run", "  ", "--out", str(tmp_path / "b"), cwd=repo)
    assert empty.returncode == 2 and "the instruction is empty" in empty.stderr


def test_an_episode_without_a_report_renders_no_image(monkeypatch):
    """Cameras off and no --out: nothing draws topdown.png, so the simulator renders nothing."""
    from galley_episodes import run_episode
    from galley_sim.simulator import KitchenSim

    rendered: list[str] = []
    render = KitchenSim.render

    def counting_render(self, camera, **kwargs):
        rendered.append(camera)
        return render(self, camera, **kwargs)

    monkeypatch.setattr(KitchenSim, "render", counting_render)
    summary = run_episode(
        "Move the bowl to the green zone", seed=0, plan="move to the purple zone", progress=False
    )
    assert summary["success"] and rendered == []


def test_run_refuses_an_out_of_scope_instruction_and_executes_nothing(repo, tmp_path):
    out = tmp_path / "oos"
    refused = galley("run", "Leave everything as it is.", "--seed", "0", "--out", str(out), cwd=repo)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "made no plan: out_of_scope" in refused.stderr and "'Leave everything as it is.'" in refused.stderr
    assert not (out / "episode.json").exists()  # no step ran, no episode report
