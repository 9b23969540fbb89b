"""Record randomised oracle episodes for training, in parallel, with progress (``galley collect``).

:func:`collect` takes a :class:`~galley_episodes.config.CollectConfig`; the options named here are
its fields as ``galley collect`` spells them.

Each episode draws a new random episode (robot start, object placement, colours; seed ``--seed``
+ its number) and a training-split suite instruction whose gold plan fits it, and runs the whole
stack with the robot's cameras on, the monitor watching and the recorder writing a bag — exactly
what ``galley run --plan`` does. ``--out`` ends up holding:

* ``episodes/ep_NNNNNN/``: successful episodes: ``bag/`` (rosbag2, mcap, with the recorder's
  ``episode.json``), ``episode.json`` (the run's report);
* ``failed/ep_NNNNNN/``: failed episodes, kept for inspection and never mixed into training data,
  with ``topdown.png`` (the paths, the trajectory and the objects from above, as ``galley run``
  draws them) to see what went wrong;
* ``params.yaml``: the parameters the episodes ran with (image size, depth) on top of
  config/galley.yaml; ``collection.json``: the settings, every episode's outcome, and the rate.

The bags hold every topic but /clock: each message's timestamp is already the simulated time it
was received at, and /clock at 100 Hz would be a fifth of the messages. ``galley replay`` runs
its own clock; ``ros2 bag play --clock`` publishes one from the timestamps.

``--scenes train`` (or a comma list of scene names and files) draws episodes across kitchens:
episode k runs in scene k mod their number, on its own suite's train split; each record of
``collection.json`` names its scene, as each bag's ``episode.json`` does, and ``scenes/<name>.yaml``
keeps a copy of every scene file, where the dataset reader looks first for a bag's scene.

Episodes already in ``--out`` are kept: running again with a larger ``--episodes`` adds the rest.

``--perturb SCALE`` collects demonstrations with recoveries (DART, Laskey et al. 2017): the
``perturber`` node adds noise to the oracle's /cmd_vel and arm commands in short spells before the
simulator follows them, while the bag's actions stay what the oracle commanded, so the data show
how the oracle comes back from where the noise pushed the robot. SCALE multiplies the perturber's
standard deviations (0.06 m/s, 0.35 rad/s, 0.08 rad per arm joint at 1: the perturber's defaults,
which a params file's ``perturber`` section changes, as the spells' timing). ``--steps N`` keeps
the first N steps of each gold plan (``--steps 1``: one move per episode).
"""

from __future__ import annotations

import json
import random
import re
import shutil
import time
from concurrent.futures import FIRST_COMPLETED, Future, wait
from pathlib import Path
from typing import Any

import yaml

from galley_core.config import ConfigError
from galley_core.episode import sample_episode
from galley_core.files import replacing
from galley_core.monitoring import parse_rate_rules
from galley_core.scene import SceneError
from galley_core.tasks.grammar import InvalidPlanError
from galley_core.tasks.suite import SuiteEntry, plan_for_instruction
from galley_episodes.cluster import episode_runner
from galley_episodes.config import CollectConfig, EpisodeConfig
from galley_episodes.episode import run_episode
from galley_episodes.scenes import SceneFiles, outside_configuration, resolve_scene, resolve_scenes
from galley_learning.planners.configured import load_suite_entries
from galley_nodes.stack import CAMERA_TOPICS
from galley_runtime.config_files import default_params_files
from galley_runtime.params_file import ParameterError
from galley_sim.sim_config import SimConfig

__all__ = ["CollectConfig", "CollectError", "collect", "parse_image_size"]


class CollectError(ValueError):
    """A mistake in the inputs that every episode would repeat: collection stops."""


def _user_errors() -> tuple[type[Exception], ...]:

    return (ConfigError, ParameterError, SceneError, InvalidPlanError)


def parse_image_size(text: str) -> tuple[int, int]:
    """(width, height) in pixels from ``WxH`` (e.g. ``96x72``), as ``--image-size`` takes it.

    Raises:
        ValueError: not of that form.
    """
    match = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", text)
    if not match:
        raise ValueError(f"{text!r} is not WxH, e.g. 96x72")
    return int(match[1]), int(match[2])


def _excluded(config: CollectConfig) -> list[str]:
    """Topics the bags leave out: /clock, and the depth image unless ``--depth`` (about 3 MB/s)."""
    return ["/clock"] if config.depth else ["/clock", "/camera/base/depth/image_raw"]


def _params_yaml(config: CollectConfig) -> str:
    w, h = config.image_size
    return (
        "# galley collect: the simulator's camera settings for this collection (on top of galley.yaml)\n"
        "sim:\n  ros__parameters:\n"
        f"    image_width: {w}\n    image_height: {h}\n"
        "    depth_enabled: true  # perception's input: its estimates are recorded (/perception/objects)\n"
        f"    camera_rate_hz: {config.camera_rate_hz}\n"
        "# An interrupted episode is recorded again, never kept: one bag file per episode, no splits.\n"
        "# /clock repeats the bag's own timestamps (one message in five): play with --clock instead.\n"
        "recorder:\n  ros__parameters:\n    split_period_s: 3600.0\n"
        f"    exclude_topics: [{', '.join(_excluded(config))}]\n"
        "# The oracle drives to /goal_pose along the planner's /plan, the topics a learned policy's\n"
        "# `goal` observation reads (galley_learning.policy.observations), not by navigate_to_pose.\n"
        "task_executor:\n  ros__parameters:\n    move_with: goal_pose\n"
        f"{_camera_rate_rules(config.camera_rate_hz)}"
    )


def _camera_rate_rules(camera_rate_hz: float) -> str:
    """The monitor's rate rules with the camera topics' minimum scaled to ``camera_rate_hz``.

    galley.yaml's rules hold for the simulator's default rates; a collection's other camera rate
    (``--camera-rate 5``) keeps their margin, or the monitor aborts every episode on the rate rule.
    Empty where galley.yaml is not found or the rate is the default.
    """
    default_hz = SimConfig().camera_rate_hz
    files = default_params_files()
    if camera_rate_hz == default_hz or not files:
        return ""
    monitor = yaml.safe_load(files[0].read_text()).get("monitor", {}).get("ros__parameters", {})
    rules = []
    for topic, min_hz in parse_rate_rules(monitor.get("rate_rules", ())).items():
        scaled = min_hz * camera_rate_hz / default_hz if topic in CAMERA_TOPICS else min_hz
        rules.append(f"{topic} {scaled:g}")
    return (
        f"# the monitor's camera rules at {camera_rate_hz:g} Hz (galley.yaml's are for {default_hz:g} Hz)\n"
        f"monitor:\n  ros__parameters:\n    rate_rules: [{', '.join(rules)}]\n"
    )


def _choose(config: CollectConfig, number: int, entries: list[Any], scene: Any) -> tuple[str, int, list[str]]:
    """(instruction, episode seed, gold plan) for episode ``number``.

    The instruction is the first suite instruction, in a seeded order, with a gold plan in that
    episode.
    """
    seed = config.seed + number
    episode = sample_episode(scene, seed)
    rng = random.Random(seed)
    for entry in rng.sample(entries, len(entries)):
        try:
            _, steps = plan_for_instruction(entry.instruction, scene, episode)
        except InvalidPlanError:
            continue
        plan = [str(s) for s in steps]
        return entry.instruction, seed, plan[: config.steps] if config.steps > 0 else plan
    raise ValueError(f"no suite instruction has a plan in episode seed {seed}")


def _run_one(
    *, instruction: str, seed: int, plan: list[str], scene: str, work: str, params: str, perturb: float
) -> dict[str, Any]:
    """One episode into ``work`` (a worker process); returns its summary."""
    start = time.perf_counter()
    episode = EpisodeConfig(
        seed=seed, scene=scene, plan="; ".join(plan), cameras=True, topdown="failed", perturb=perturb
    )
    summary = run_episode(instruction, episode, out_dir=Path(work), params=[Path(params)], progress=False)
    summary["collect_wall_s"] = round(time.perf_counter() - start, 2)
    return summary


def collect(config: CollectConfig, *, out: Path, progress: bool = True) -> dict[str, Any]:
    """Collect ``config.episodes`` episodes into ``out``; returns what collection.json holds.

    Episodes already in ``out`` are kept; a larger ``episodes`` adds the rest.

    Raises:
        CollectError: a mistake every episode would repeat (a parameter, the scene); nothing more
            is recorded.
        ValueError: no train-split instructions, or ``out`` holds episodes of other camera settings.
    """
    kitchens = _kitchens(config, progress)
    done = _prepare(out)
    _keep_scene_files(out, [files for files, _ in kitchens])
    params = out / "params.yaml"
    if done and params.exists() and params.read_text() != _params_yaml(config):
        raise ValueError(
            f"{out} holds {len(done)} episodes recorded with other camera settings ({params}); "
            "collect on with the same --image-size, --depth and --camera-rate, or into another --out"
        )
    if not (done and params.exists()):  # else the same, checked above: left unwritten for its readers
        with replacing(params) as tmp:
            tmp.write_text(_params_yaml(config))
    todo = [n for n in range(config.episodes) if f"ep_{n:06d}" not in done]
    records = _load_records(out, done)
    start = time.perf_counter()
    finished = 0
    if progress:
        print(
            f"galley collect: {len(todo)} episodes to record ({len(done)} already in {out}), "
            f"{config.workers} worker(s), cameras {config.image_size[0]}x{config.image_size[1]} at "
            f"{config.camera_rate_hz:g} Hz",
            flush=True,
        )
    user_errors = _user_errors()
    announce = (lambda line: print(f"galley collect: {line}", flush=True)) if progress else None
    with episode_runner(config.workers, config.cluster or None, announce=announce) as pool:
        pending: dict[Future[dict[str, Any]], str] = {}
        queue = list(todo)
        while queue or pending:
            while queue and len(pending) < pool.slots:
                number = queue.pop(0)
                files, entries = kitchens[number % len(kitchens)]
                instruction, seed, plan = _choose(config, number, entries, files.scene)
                name = f"ep_{number:06d}"
                pending[
                    pool.submit(
                        _run_one,
                        instruction=instruction,
                        seed=seed,
                        plan=plan,
                        scene=files.ref,
                        work=str(out / ".work" / name),
                        params=str(params),
                        perturb=config.perturb,
                        output="work",
                        files=("params",),
                    )
                ] = name
            finished_now, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished_now:
                name = pending.pop(future)
                try:
                    summary = future.result()
                except user_errors as err:  # a bad parameter or scene: every episode would fail alike
                    for other in pending:
                        other.cancel()
                    shutil.rmtree(out / ".work", ignore_errors=True)
                    raise CollectError(f"{name}: {err}; nothing more was recorded") from None
                except Exception as err:  # a crashed episode is recorded as failed, the rest go on
                    summary = {"success": False, "error": f"{type(err).__name__}: {err}"}
                records[name] = _file(out, name, summary)
                ok = records[name]["success"]
                finished += 1
                rate = finished / (time.perf_counter() - start) * 3600.0
                if progress:
                    verdict = "ok    " if ok else "FAILED"
                    print(
                        f"  [{finished}/{len(todo)}] {name} {verdict} {records[name]['instruction']!r} "
                        f"({records[name]['sim_time_s']} s simulated); {rate:.0f} episodes/h, "
                        f"~{(len(todo) - finished) / rate * 3600.0:.0f} s left",
                        flush=True,
                    )
                _write_records(out, config, records, time.perf_counter() - start, finished)
    shutil.rmtree(out / ".work", ignore_errors=True)
    return _write_records(out, config, records, time.perf_counter() - start, finished)


def _kitchens(config: CollectConfig, progress: bool) -> list[tuple[SceneFiles, list[SuiteEntry]]]:
    """The scenes episodes are drawn in (``--scenes``, else ``--scene``), each with its train-split entries.

    Raises:
        ValueError: ``--scenes`` with ``--suite``, or a suite without train-split instructions.
        SceneError: a scene is missing, invalid or fails a check.
    """
    say = (lambda line: print(f"galley collect: {line}", flush=True)) if progress else None
    if config.scenes and config.suite:
        raise ValueError("--scenes draws each scene's episodes from its own suite: leave out --suite")
    if config.scenes:
        scenes = resolve_scenes(config.scenes, say=say)
    else:
        scenes = [resolve_scene(config.scene, say=say)]
    if config.cluster and (elsewhere := outside_configuration(scenes)):
        raise ValueError(
            f"--cluster ships the configuration folder, and {', '.join(elsewhere[:3])}"
            f"{' ...' if len(elsewhere) > 3 else ''} lie outside it: copy the scene files (with their maps "
            "and suites) into config/, or leave out --cluster"
        )
    kitchens = []
    for files in scenes:
        suite = config.suite or str(files.suite)
        entries = [e for e in load_suite_entries(suite) if e.split == "train"]
        if not entries:
            raise ValueError(
                f"suite {suite!r} has no train-split instructions; generate it with: galley suite"
            )
        kitchens.append((files, entries))
    return kitchens


def _keep_scene_files(out: Path, scenes: list[SceneFiles]) -> None:
    """Copy the scene files into ``out/scenes/``: the dataset reader finds each bag's scene there."""
    folder = out / "scenes"
    folder.mkdir(exist_ok=True)
    for files in scenes:
        target = folder / f"{files.name}.yaml"
        if not target.exists() or target.read_bytes() != files.file.read_bytes():
            with replacing(target) as tmp:
                tmp.write_bytes(files.file.read_bytes())


def _prepare(out: Path) -> set[str]:
    """Make the collection's folders (an empty .work/); the names of the episodes already there."""
    for sub in ("episodes", "failed"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    shutil.rmtree(out / ".work", ignore_errors=True)
    (out / ".work").mkdir()
    return {p.name for sub in ("episodes", "failed") for p in (out / sub).iterdir() if (p / "bag").is_dir()}


def _file(out: Path, name: str, summary: dict[str, Any]) -> dict[str, Any]:
    """Move a finished episode to episodes/ or failed/; its record for collection.json."""
    ok = bool(summary.get("success"))
    work = out / ".work" / name
    if work.exists():
        shutil.move(str(work), str(out / ("episodes" if ok else "failed") / name))
    return {
        "success": ok,
        "scene": summary.get("scene"),
        "instruction": summary.get("instruction"),
        "seed": summary.get("seed"),
        "plan": summary.get("plan"),
        "sim_time_s": summary.get("sim_time_s"),
        "wall_time_s": summary.get("collect_wall_s"),
        "failure": summary.get("error")
        or next((s["reason"] for s in summary.get("steps", []) if not s["success"]), ""),
        "ran_on": summary.get("ran_on"),
    }


def _load_records(out: Path, done: set[str]) -> dict[str, dict[str, Any]]:
    """collection.json's records, and those of episodes filed by a driver killed before writing it."""
    path = out / "collection.json"
    records = dict(json.loads(path.read_text()).get("episodes", {})) if path.exists() else {}
    for name in sorted(done - records.keys()):
        folder = next(out / sub / name for sub in ("episodes", "failed") if (out / sub / name).is_dir())
        records[name] = _file(out, name, json.loads((folder / "episode.json").read_text()))
    return records


def _write_records(
    out: Path, config: CollectConfig, records: dict[str, dict[str, Any]], wall_s: float, finished: int
) -> dict[str, Any]:
    ok = sum(r["success"] for r in records.values())
    report = {
        "settings": {
            "workers": config.workers,
            "seed": config.seed,
            "image_size": list(config.image_size),
            "depth": config.depth,
            "camera_rate_hz": config.camera_rate_hz,
            "suite": config.suite,
            "scene": config.scene,
            "scenes": config.scenes,
            "perturb": config.perturb,
            "steps": config.steps,
            "cluster": config.cluster or None,
        },
        "episodes_total": len(records),
        "episodes_succeeded": ok,
        "episodes_failed": len(records) - ok,
        "this_run": {
            "episodes": finished,
            "wall_s": round(wall_s, 1),
            "episodes_per_hour": round(finished / wall_s * 3600.0, 1) if wall_s > 0 and finished else None,
        },
        "episodes": dict(sorted(records.items())),
    }
    with replacing(out / "collection.json") as tmp:  # whole: a bench may read it meanwhile
        tmp.write_text(json.dumps(report, indent=1) + "\n")
    return report
