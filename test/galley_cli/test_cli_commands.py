"""Every command of README's table, run as a user runs it, on the real output of the commands before it.

Where each command is tested through the CLI:

* ``run``: test_run.py (the README's instruction) and here (a one-step ``--plan`` with a
  ``--params`` file, whose bag ``replay`` then plays);
* ``replay``: here, on that ``galley run`` bag; test_replay.py on a recorded fall;
* ``eval``: here (``--mode planner``); test_policy_pipeline.py (``--mode policy --policy RUN``);
* ``plan``, ``suite``, ``train-planner``, ``eval-planner`` (on the weights just trained): here;
* ``collect``, ``train``: test_policy_pipeline.py (its collection and run are made by the CLI);
* ``export-lerobot``: test_lerobot_export.py;
* ``demo``, ``nodes``, ``doctor``: test_cli.py; ``map``: test_galley_sim/test_map_export.py.

Bad arguments of every command end with one line naming the argument and what is allowed, and
exit status 2.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from galley_cli.main import main
from galley_core.tasks.suite import load_suite
from galley_nodes.nodes.monitor import watched_rates
from galley_nodes.registry import load_node_class
from galley_runtime.params_file import config_for_node, load_params_files, parameters_for

REPO = Path(__file__).resolve().parents[2]


def galley(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "galley_cli.main", *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=cwd,
    )


@dataclass(frozen=True)
class Run:
    """A finished ``galley run``: its folder, what it printed, and the --params file it was given."""

    out: Path
    proc: subprocess.CompletedProcess[str]
    params: Path
    user_map: Path


@pytest.fixture(scope="session")
def short_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """``galley run`` of one navigation step, with a --params file that sets three values the command
    sets too: the map (the user's wins), the seed and the recorder's folder (the command's win)."""
    tmp = tmp_path_factory.mktemp("short_run")
    user_map = tmp / "my_kitchen.yaml"
    layout = yaml.safe_load((REPO / "maps" / "kitchen.yaml").read_text())
    layout["image"] = str(REPO / "maps" / layout["image"])  # the same grid, from the user's file
    user_map.write_text(yaml.safe_dump(layout))
    params = tmp / "mine.yaml"
    params.write_text(
        f"map_server:\n  ros__parameters:\n    yaml_filename: {user_map}\n"
        "sim:\n  ros__parameters:\n    seed: 5\n"
        f"recorder:\n  ros__parameters:\n    output_dir: {tmp / 'elsewhere'}\n"
    )
    out = tmp / "run"
    proc = galley(
        "run", "Move to the green zone", "--plan", "move to the green zone", "--seed", "0",
        "--out", str(out), "--params", str(params),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return Run(out, proc, params, user_map)


def test_run_reports_which_params_file_values_it_kept_and_which_it_replaced(short_run: Run) -> None:
    lines = short_run.proc.stdout.splitlines()
    notes = [line for line in lines if line.startswith("note: ")]
    assert notes == [
        f"note: sim.seed = 5 from {short_run.params} is replaced: the command sets it from --seed (0)",
        f"note: map_server.yaml_filename = '{short_run.user_map}' from {short_run.params} is used instead "
        "of the scene's map maps/kitchen.yaml",
        f"note: recorder.output_dir = '{short_run.out.parent / 'elsewhere'}' from {short_run.params} is "
        f"replaced: the command sets it from --out (this run's bag is {short_run.out / 'bag'})",
    ]
    # ... and did so: the user's map was served, the episode is seed 0, the bag is in --out.
    assert f"[/map_server]: published {short_run.user_map}:" in short_run.proc.stderr
    assert "[/sim]: episode of 'kitchen', seed 0:" in short_run.proc.stderr
    assert (short_run.out / "bag" / "metadata.yaml").exists()
    assert not (short_run.out.parent / "elsewhere").exists()
    episode = json.loads((short_run.out / "episode.json").read_text())
    assert episode["success"] and episode["seed"] == 0 and episode["plan"] == ["move to the green zone"]


def test_params_precedence_for_cameras_rates_and_eval(tmp_path: Path) -> None:
    """Without --video a file's cameras win (and the monitor then watches them); with --video or a
    policy the command's win; the monitor watches the camera topics' rates where the cameras are on."""
    from galley_episodes.episode import run_settings

    on = tmp_path / "on.yaml"
    on.write_text("sim:\n  ros__parameters:\n    cameras_enabled: true\n")
    kept = run_settings("kitchen", 0, out_dir=None, cameras=False, params=[on])
    assert kept.values["sim", "cameras_enabled"] is True and "cameras_enabled" not in kept.parameters["sim"]
    assert kept.notes == [f"note: sim.cameras_enabled = True from {on} is used instead of --video being off"]
    assert kept.parameters["monitor"]["cameras_enabled"] is True  # the monitor follows the cameras in effect

    off = tmp_path / "off.yaml"
    off.write_text(
        "sim:\n  ros__parameters:\n    cameras_enabled: false\n"
        "monitor:\n  ros__parameters:\n    rate_rules: [/odom 40, /camera/base/image_raw 8]\n"
    )
    video = run_settings("kitchen", 3, out_dir=None, cameras=True, params=[off])
    assert video.parameters["sim"]["cameras_enabled"] is True
    assert video.notes == [
        f"note: sim.cameras_enabled = False from {off} is replaced: the command sets it from "
        "this run's need of the cameras (--video, --policy)"
    ]
    quiet = run_settings(
        "kitchen", 3, out_dir=None, cameras=False, params=[off], episode_from="the suite entry"
    )
    # the user's rate rules stand; the monitor leaves out the camera topics itself (both hosts)
    assert quiet.parameters["monitor"] == {"scene": "kitchen", "cameras_enabled": False}
    assert quiet.notes == []
    monitor = load_node_class("monitor")
    declared = [f.name for f in dataclasses.fields(monitor.Config)]
    values = parameters_for(load_params_files([off]), "/monitor", declared)
    values.update({k: (v, "the command") for k, v in quiet.parameters["monitor"].items()})
    assert watched_rates(config_for_node(monitor.Config, "/monitor", values)) == {"/odom": 40.0}
    seed = tmp_path / "seed.yaml"
    seed.write_text("/**:\n  ros__parameters:\n    seed: 9\n")  # a wildcard names the value as well
    assert run_settings(
        "kitchen", 3, out_dir=None, cameras=False, params=[seed], episode_from="the suite entry"
    ).notes == [f"note: sim.seed = 9 from {seed} is replaced: the command sets it from the suite entry"]


def test_run_help_states_which_value_wins() -> None:
    proc = galley("run", "--help")
    assert proc.returncode == 0
    assert "A value set explicitly in a --params file wins over one the command derives" in " ".join(
        proc.stdout.split()
    )


def test_replay_of_a_run_bag_prints_the_monitors_verdicts(short_run: Run) -> None:
    """The README's replay command on what `galley run` wrote: the verdicts of the live run, exit 0."""
    proc = galley("replay", str(short_run.out / "bag"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    out = proc.stdout.replace("\r", "\n")
    # The live monitor's verdict (logged by the run) is the replayed monitor's verdict.
    live = re.findall(r"\[/monitor\]: pass \(move_goal\): (.*)", short_run.proc.stderr)
    assert len(live) == 1 and live[0].startswith("step 0 'move to the green zone': base ")
    assert "the monitor's verdicts: 1\n" in out
    assert re.search(rf"^ +\d+\.\d\d s  pass  move_goal: {re.escape(live[0])}$", out, re.MULTILINE), out
    # The run had no cameras: their empty topics are not judged (no ABORT after one rate window).
    assert "ABORT" not in out
    assert (
        "note: the monitor does not watch the rate of /camera/base/image_raw, /camera/wrist/image_raw: "
        "the bag has none of them" in out
    )
    assert re.search(r"replayed \d+ messages on \d+ topics, \d+\.\d s of bag time", out)


def test_eval_planner_mode_writes_its_metrics(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "--mode", "planner", "--episodes", "2", "--out", str(tmp_path / "eval")]) == 0
    metrics = json.loads((tmp_path / "eval" / "metrics.json").read_text())
    assert metrics["mode"] == "planner" and metrics["episodes"] == 2 and metrics["em"] == 1.0  # gold plans
    printed = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert printed["mode"] == "planner" and printed["em"] == metrics["em"]


def test_plan_answers_the_readme_instruction(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("torch", reason="galley's planner runs on torch")
    assert main(["plan", "Move the bowl to the green zone", "--seed", "0", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["plan"]
    assert plan == ["move to the purple zone", "pick the bowl", "move to the green zone", "place the bowl"]


def test_suite_regenerates_the_committed_suite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["suite", "--out", str(tmp_path / "suite.yaml")]) == 0
    assert "wrote 580 instructions" in capsys.readouterr().out
    assert (tmp_path / "suite.yaml").read_bytes() == (
        REPO / "config" / "suites" / "kitchen_v1.yaml"
    ).read_bytes()


def test_suite_draws_a_fresh_shuffled_suite_with_a_seed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, shipped = load_suite(REPO / "config" / "suites" / "kitchen_v1.yaml")
    for seed in (5843, 5843, 17):
        assert main(["suite", "--seed", str(seed), "--out", str(tmp_path / f"{seed}.yaml")]) == 0
    assert "wrote 580 instructions" in capsys.readouterr().out
    _, fresh = load_suite(tmp_path / "5843.yaml")
    _, other = load_suite(tmp_path / "17.yaml")
    assert len(fresh) == len(shipped) == len(other)
    pairs = {(e.seed, e.instruction) for e in shipped}
    assert not [e for e in fresh if (e.seed, e.instruction) in pairs]  # episodes nobody tuned on
    assert [e.seed for e in fresh] != [e.seed for e in other]
    assert len({e.template for e in fresh[:20]}) > 10  # shuffled: the first entries mix templates
    assert main(["suite", "--phrasing", "--seed", "3"]) == 2
    assert "--seed draws a fresh instruction suite" in capsys.readouterr().err


def test_train_planner_then_eval_planner_on_its_weights(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The smallest training `galley train-planner` allows; eval-planner reads the weights it wrote."""
    pytest.importorskip("torch", reason="galley's planner trains with torch")
    weights = tmp_path / "w.pt"
    args = ["--episodes", "10", "--instructions", "10", "--epochs", "1", "--out", str(weights)]
    assert main(["train-planner", *args]) == 0
    out = capsys.readouterr().out
    assert f"saved {weights}" in out and f"evaluate with: galley eval-planner --weights {weights}" in out
    report = tmp_path / "em.json"
    assert (
        main(
            [
                "eval-planner",
                "--weights",
                str(weights),
                "--splits",
                "test",
                "--limit",
                "1",
                "--out",
                str(report),
            ]
        )
        == 0
    )
    figures = json.loads(report.read_text())
    assert figures["count_test"] == 1 and 0.0 <= figures["em_test"] <= 1.0


#: The command line, and what its one line of error says after "galley <command>: ".
BAD_ARGUMENTS = """
run x --seed -1 --out {tmp}/o                      | argument --seed: -1 is not allowed: at least 0
run x --seed one --out {tmp}/o                     | argument --seed: 'one' is not a whole number (at least 0)
run x --params {missing} --out {tmp}/o             | argument --params: {missing} does not exist
run x --replan -1 --out {tmp}/o                    | argument --replan: -1 is not allowed: at least 0
demo --seed -3 --out {tmp}/o                       | argument --seed: -3 is not allowed: at least 0
eval --mode planner --episodes -1 --out {tmp}/o    | argument --episodes: -1 is not allowed: at least 0
eval --mode policy --workers 0 --out {tmp}/o       | argument --workers: 0 is not allowed: at least 1
eval --mode planner --params {missing}             | argument --params: {missing} does not exist
plan x --seed -2                                   | argument --seed: -2 is not allowed: at least 0
eval-planner --limit -1 --out {tmp}/em.json        | argument --limit: -1 is not allowed: at least 0
train-planner --epochs 0 --out {tmp}/w.pt          | argument --epochs: 0 is not allowed: >= 1
train-planner --episodes 9 --out {tmp}/w.pt        | argument --episodes: 9 is not allowed: >= 10
train-planner --threads 0 --out {tmp}/w.pt         | argument --threads: 0 is not allowed: >= 1
collect --episodes 0 --out {tmp}/c                 | argument --episodes: 0 is not allowed: at least 1
collect --episodes 1 --workers 0 --out {tmp}/c     | argument --workers: 0 is not allowed: at least 1
collect --episodes 1 --seed -5 --out {tmp}/c       | argument --seed: -5 is not allowed: at least 0
collect --episodes 1 --camera-rate -1 --out {tmp}/c | argument --camera-rate: -1 is not allowed: a number > 0
collect --out {tmp}/c                              | the following arguments are required: --episodes
train --data {tmp} --out {tmp}/r --steps 0         | argument --steps: 0 is not allowed: >= 1
train --data {tmp} --out {tmp}/r --batch-size 0    | argument --batch-size: 0 is not allowed: >= 1
train --data {tmp} --out {tmp}/r --lr nan          | argument --lr: nan is not allowed: > 0
train --data {tmp} --out {tmp}/r --workers 0       | argument --workers: 0 is not allowed: at least 1
train --data {tmp} --out {tmp}/r --image-size 4x4  | argument --image-size: 4x4 is not allowed: >= 8 (px)
train --data {tmp} --out {tmp}/r --threads -1      | argument --cpu-threads/--threads: -1 is not allowed: >= 0
map --resolution 0 --out {tmp}/m                   | argument --resolution: 0 is not allowed: a number > 0
map --resolution -1 --out {tmp}/m                  | argument --resolution: -1 is not allowed: a number > 0
replay {tmp} --rate 0                              | argument --rate: 0 is not allowed: a number > 0
replay {tmp} --params {missing}                    | argument --params: {missing} does not exist
"""
CASES = [tuple(part.strip() for part in line.split("|")) for line in BAD_ARGUMENTS.strip().splitlines()]
CASES += [  # messages with a "|" in them, or too long for the table
    (
        "train --data {tmp} --out {tmp}/r --device tpu",
        "argument --device: tpu is not allowed: text matching auto|cpu|cuda(:[0-9]+)?",
    ),
    (
        "train --data {tmp} --out {tmp}/r --move-done-heading 4",
        "argument --move-done-rad/--move-done-heading: 4 is not allowed: > 0 and <= 3.14159 (rad)",
    ),
]


@pytest.mark.parametrize(("command", "message"), CASES, ids=[c for c, _ in CASES])
def test_bad_arguments_are_one_line_and_exit_2(
    command: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fill = {"tmp": str(tmp_path), "missing": str(tmp_path / "missing.yaml")}
    argv = [a.format(**fill) for a in shlex.split(command)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err == f"galley {argv[0]}: {message.format(**fill)} (see galley {argv[0]} --help)\n"
    assert not list(tmp_path.iterdir())  # nothing was started


def test_replanning_needs_a_mode_that_executes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "--mode", "planner", "--inject", "knock", "--out", str(tmp_path / "e")]) == 2
    err = capsys.readouterr().err
    assert "--replan and --inject execute steps; use them with --mode policy or joint" in err
    assert not list(tmp_path.iterdir())


def test_replay_names_the_nodes_it_can_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(tmp_path), "--node", "monitr"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        "galley replay: argument --node: no galley node 'monitr'; known nodes: arm_controller"
    )
    assert err.count("\n") == 1 and " monitor," in err
