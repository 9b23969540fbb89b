"""One episode on the built-in simulator, recorded, with a report (``galley run "<instruction>"``).

:func:`run_episode` takes the episode's settings as an :class:`~galley_episodes.config.EpisodeConfig`;
the options named here are its fields as ``galley run`` spells them.
The episode is drawn from ``--seed``. The plan is ``--plan`` (steps separated by ";") or, by
default, what the task planner (``task_planner``, backend from config/galley.yaml: galley's own
VLM unless changed) makes of the instruction and the episode's top-down image; EM compares it with
the gold plan when the instruction follows one of the suite's templates. Every node runs in the
embedded host: the simulator, navigation, the arm controller, the monitor, the planner, the task
executor and the recorder. The run shows progress per step and writes to ``--out``:

* ``episode.json``: instruction, plan, per-step results (step, success, duration_s, reason),
  success, EM against the gold plan (null when there is none), and motion metrics;
* ``bag/``: the rosbag2 (mcap) of every topic, with the episode's metadata;
* ``topdown.png``: the top-down image with the planned paths, the executed trajectory, and each
  object's start and end;
* ``video.mp4`` with ``--video``: the base camera at 10 Hz.

``--replan N`` lets the task executor ask the task planner up to N times for what remains after a
failed or aborted step (the planner runs then even with ``--plan``); ``episode.json`` lists each
replan's reason and plan under ``replans``. ``--inject knock|move`` disturbs the episode once
(the ``failure_injector`` node; ``injected`` says what it did).
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from galley_core.episode import sample_episode
from galley_core.scene import Scene
from galley_core.tasks.grammar import InvalidPlanError, parse_plan, validate_plan
from galley_core.tasks.metrics import exact_match, motion_metrics
from galley_core.tasks.suite import plan_for_instruction
from galley_episodes.bringup import Given, build_host, stack_settings
from galley_episodes.config import EpisodeConfig, EpisodeError
from galley_episodes.overrides import Resolved, shown_path
from galley_episodes.replanning import ReplanLog
from galley_episodes.report import TopicLog, top_down_axes
from galley_episodes.scenes import resolve_scene
from galley_learning.policy.shipped import layered_params
from galley_nodes import stack
from galley_runtime import messages
from galley_runtime.embedded import EmbeddedHost
from galley_runtime.msg_constants import ACTION_FAILED, STEP_FAILED, STEP_STARTED, STEP_SUCCEEDED
from galley_runtime.qos import QoS

__all__ = ["EpisodeError", "policy_sees_images", "resolve_plan", "run_episode", "run_settings"]

_TIME_MARGIN_S = 30.0


def resolve_plan(
    instruction: str, scene: Scene, seed: int, plan_text: str
) -> tuple[list[str] | None, list[str] | None]:
    """(the --plan, or None for the planner's; the gold plan, or None) in the episode of ``seed``."""
    if not instruction.strip() and not plan_text:
        raise EpisodeError("the instruction is empty; say what to do, e.g. 'Move the bowl to the green zone'")
    gold: list[str] | None = None
    try:
        _, steps = plan_for_instruction(instruction, scene, sample_episode(scene, seed))
        gold = [str(s) for s in steps]
    except InvalidPlanError:
        pass  # not a suite-style instruction in this episode: no EM, the plan still runs
    if not plan_text:
        return None, gold
    try:
        plan = parse_plan([s for s in (p.strip() for p in plan_text.split(";")) if s])
        validate_plan(plan, scene)
    except InvalidPlanError as err:
        raise EpisodeError(f"--plan: {err}") from None
    if not plan:
        raise EpisodeError("--plan has no steps; separate steps with ';'")
    return [str(s) for s in plan], gold


def policy_sees_images(policy: Path | None) -> bool:
    """Whether the training run ``policy`` needs the cameras rendered.

    An image policy looks through them; a low-dim policy of the ``sensors`` observation reads
    perception's estimates, which the perception node makes from the base camera's depth; other
    low-dim policies need none.
    """
    if policy is None:
        return False
    config = policy / "config.json"
    if not config.exists():
        return True
    saved = json.loads(config.read_text())["policy"]
    return bool(saved.get("cameras", ("base", "wrist"))) or saved.get("observation") == "sensors"


def run_settings(
    scene_value: str,
    seed: int,
    *,
    out_dir: Path | None,
    cameras: bool,
    params: list[Path],
    policy: Path | None = None,
    episode_from: str | None = None,
    perturb: float = 0.0,
    max_replans: int | None = None,
    inject: str = "",
) -> Resolved:
    """The parameters ``galley run`` gives its nodes on top of the params files (module ``overrides``).

    ``scene_value`` is a ``--scene`` value (:func:`galley_episodes.scenes.resolve_scene`: a name or
    a file; the nodes get its ``ref``, and the map beside it). The command owns the episode
    (``--scene``, ``--seed``), the recorder's output (``--out``), a
    policy's run and judging (``--policy``) and, where it needs them (``cameras``: ``--video``, a
    policy, ``galley collect``), the cameras; a ``--params`` file's value wins over the scene's map,
    the oracle's step judging and the cameras being off. Without cameras, the monitor does not watch
    the camera topics' rates (nothing publishes them). ``episode_from`` says where the scene and seed
    come from in the notes (default: ``--scene`` and ``--seed``). The parameters are the stack's
    (galley_nodes.stack) for the mode.
    """
    files = resolve_scene(scene_value)
    scene_from = episode_from or f"--scene ({scene_value})"
    bag = f"--out (this run's bag is {out_dir / 'bag'})" if out_dir is not None else ""
    need = "this run's need of the cameras (--video, --policy)" if cameras else "--video being off"
    given = {
        "scene": Given(files.ref, scene_from),
        "seed": Given(seed, episode_from or f"--seed ({seed})"),
        "cameras": Given(cameras, need, owned=cameras),
        "map": Given(str(files.map), f"the scene's map {shown_path(files.map)}", False),
        "output_dir": Given(str(out_dir), bag),
        "bag_name": Given("bag", bag),
        "policy": Given(str(policy), f"--policy ({policy})"),
        "perturb": Given(perturb, f"--perturb ({perturb:g})"),
        "task_executor.completion": Given(None, "--policy (a policy's steps are judged on ground truth)")
        if policy is not None
        else Given(None, "the oracle nodes' status (completion: status)", owned=False),
        "task_executor.move_with": Given(None, "--policy (a policy follows /goal_pose)")
        if policy is not None
        else Given(None, "the oracle's navigator (move_with: navigate_to_pose)", owned=False),
    }
    if max_replans is not None:
        given["max_replans"] = Given(max_replans, f"--replan ({max_replans})")
    if inject:
        given["inject"] = Given(inject, f"--inject ({inject})")
    mode = stack.Mode(
        driver="oracle" if policy is None else "policy",
        cameras=cameras,
        record=out_dir is not None,
        perturb=perturb > 0,
        inject=bool(inject),
    )
    return stack_settings(mode, given, params)


def run_episode(
    instruction: str,
    config: EpisodeConfig | None = None,
    *,
    out_dir: Path | None = None,
    params: Sequence[Path] = (),
    policy: Path | None = None,
    progress: bool = True,
    **settings: Any,
) -> dict[str, Any]:
    """Run one episode and (with ``out_dir``) write its report; returns the episode summary.

    Args:
        instruction: what to do, e.g. ``"Move the bowl to the green zone"``.
        config: the episode's settings (default: :class:`EpisodeConfig`'s defaults).
        out_dir: where the report goes (``episode.json``, ``bag/``, ``topdown.png``); None: nowhere,
            and nothing is recorded.
        params: ROS 2 params files layered on config/galley.yaml.
        policy: a training run of a learned policy, which then replaces the oracle nodes; its
            ``params.yaml`` (the sensors it was trained with) is layered before ``params``.
        progress: print the notes on ``params`` values (:func:`run_settings`) and each step.
        settings: :class:`EpisodeConfig` fields that replace ``config``'s, e.g. ``seed=3``.

    The robot's cameras render when the run needs them (``cameras``, ``video``, or a ``policy`` that
    looks through them), else where a ``params`` file sets ``sim.cameras_enabled`` (off by default).
    ``perturb`` > 0 puts the perturber between the oracle and the simulator (``galley collect
    --perturb``). ``topdown="failed"`` draws ``topdown.png`` for failed episodes only (``galley
    collect``: the picture costs matplotlib about 0.25 s, and failures are what a person looks at).

    Raises:
        EpisodeError: the instruction or plan cannot be run, or ``out_dir`` holds a bag already.
        ConfigError: a setting is not allowed.
    """
    config = dataclasses.replace(config or EpisodeConfig(), **settings)
    params = layered_params(policy, params)  # the run's sensor settings first: the user's files win
    seed, video, perturb, inject = config.seed, config.video, config.perturb, config.inject
    needed = policy_sees_images(policy) or video or config.cameras
    files = resolve_scene(config.scene, say=(lambda line: print(line, flush=True)) if progress else None)
    scene = files.scene
    plan, gold = resolve_plan(instruction, scene, seed, config.plan)
    if out_dir is not None:  # made by the recorder, once every node's parameters are checked
        if out_dir.exists() and not out_dir.is_dir():
            raise EpisodeError(f"--out {out_dir} is a file; give a folder for the run's report and bag")
        if (out_dir / "bag").exists():
            raise EpisodeError(
                f"{out_dir / 'bag'} exists already; choose another --out (nothing is overwritten)"
            )
    settings = run_settings(
        config.scene,
        seed,
        out_dir=out_dir,
        cameras=needed,
        params=list(params),
        policy=policy,
        perturb=perturb,
        max_replans=config.max_replans,
        inject=inject,
    )
    if progress:
        for note in settings.notes:
            print(note, flush=True)
    mode = stack.Mode(
        driver="oracle" if policy is None else "policy",
        record=out_dir is not None,
        planner=plan is None or bool(config.max_replans),  # a replan needs the planner
        inject=bool(inject),
        perturb=perturb > 0,
    )
    host = build_host(mode, settings, list(params))
    log = TopicLog(host, video=video, top_down=out_dir is not None)  # the picture is drawn only there
    results: list[Any] = []
    planned: list[Any] = []
    planner_status: list[Any] = []
    probe = host.participant("galley_run")
    probe.create_subscription("/task/result", "galley_msgs/msg/EpisodeResult", results.append, QoS.latched())
    probe.create_subscription("/task/plan", "galley_msgs/msg/TaskPlan", planned.append, QoS.latched())
    probe.create_subscription(
        "/task_planner/status", "galley_msgs/msg/ActionStatus", planner_status.append, QoS.latched(10)
    )
    replans = ReplanLog(probe)
    if progress:
        probe.create_subscription(
            "/episode/events", "galley_msgs/msg/EpisodeEvent", _printer(planned), QoS(depth=100)
        )
    objects = _object_positions(probe) if out_dir is not None else {}  # for the picture
    host.run_for(0.5)
    wall = time.perf_counter()
    if plan is not None:
        probe.create_publisher("/task/plan", "galley_msgs/msg/TaskPlan", QoS.latched()).publish(
            messages.new("galley_msgs/msg/TaskPlan", instruction=instruction, steps=plan)
        )
    else:
        plan = _plan_with_planner(host, probe, instruction, planned, planner_status)
    executor: Any = host.node("task_executor").config
    limit = executor.step_time_limit_s * len(plan) * (1 + 2 * executor.max_replans)  # a replan: a plan again
    host.run_until(lambda: bool(results), limit + _TIME_MARGIN_S)
    wall_s = time.perf_counter() - wall
    host.shutdown()
    summary = _summary(
        instruction,
        plan,
        gold,
        results=results,
        log=log,
        scene=scene.name,
        scene_file=str(files.file.resolve()),
        seed=seed,
        sim_s=host.now_s,
        wall_s=wall_s,
    )
    summary |= replans.summary(planned)
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "episode.json").write_text(json.dumps(summary, indent=2) + "\n")
        if config.topdown == "always" or not summary["success"]:
            _plot(log, scene, summary, objects=objects, path=out_dir / "topdown.png")
        if video:
            _write_video(log.frames, out_dir / "video.mp4")
    return summary


def _plan_with_planner(
    host: EmbeddedHost, probe: Any, instruction: str, planned: list[Any], status: list[Any]
) -> list[str]:
    """Send the instruction to the task planner and wait for its plan (the executor gets it too)."""
    probe.create_publisher("/task/instruction", "std_msgs/msg/String", QoS()).publish(
        messages.new("std_msgs/msg/String", data=instruction)
    )
    host.run_until(lambda: bool(planned) or any(m.state == ACTION_FAILED for m in status), _TIME_MARGIN_S)
    if not planned:
        host.shutdown()
        reason = status[-1].reason if status else "no answer"
        raise EpisodeError(f"the task planner made no plan: {reason}")
    return [str(s) for s in planned[-1].steps]


def _object_positions(probe: Any) -> dict[str, list[np.ndarray[Any, Any]]]:
    """Each object's first and latest position (x, y, z) in the map, from the simulator's /tf."""
    seen: dict[str, list[np.ndarray[Any, Any]]] = {}

    def take(msg: Any) -> None:
        for t in msg.transforms:
            if t.child_frame_id.startswith("object/"):
                v = t.transform.translation
                xyz = np.array([v.x, v.y, v.z])
                seen.setdefault(t.child_frame_id.removeprefix("object/"), [xyz, xyz])[1] = xyz

    probe.create_subscription("/tf", "tf2_msgs/msg/TFMessage", take, QoS(depth=100))
    return seen


def _printer(planned: list[Any]) -> Any:
    def show(msg: Any) -> None:
        if msg.kind == STEP_STARTED and msg.step_index == 0 and planned:
            print(f"  plan: {'; '.join(planned[-1].steps)}", flush=True)
        if msg.kind == STEP_STARTED:
            count = len(planned[-1].steps) if planned else "?"
            print(f"  [{msg.step_index + 1}/{count}] {msg.step} ...", flush=True)
        elif msg.kind in (STEP_SUCCEEDED, STEP_FAILED):
            verdict = "succeeded" if msg.kind == STEP_SUCCEEDED else f"FAILED: {msg.reason}"
            print(f"        {verdict}", flush=True)

    return show


def _summary(
    instruction: str,
    plan: list[str],
    gold: list[str] | None,
    *,
    results: list[Any],
    log: TopicLog,
    scene: str,
    scene_file: str,
    seed: int,
    sim_s: float,
    wall_s: float,
) -> dict[str, Any]:
    result = results[-1] if results else None
    steps = []
    if result is not None:
        for i, ok in enumerate(result.step_success):
            steps.append(
                {
                    "step": result.plan[i],
                    "success": bool(ok),
                    "duration_s": float(result.step_duration_s[i]),
                    "reason": result.step_reason[i],
                }
            )
    motion = None
    if len(log.trajectory) >= 2:
        m = motion_metrics(
            np.array(log.trajectory_t), np.array(log.trajectory), collisions=log.contact_events
        )
        motion = {k: (round(v, 4) if isinstance(v, float) else v) for k, v in vars(m).items()}
    return {
        "instruction": instruction,
        "scene": scene,
        "scene_file": scene_file,
        "seed": seed,
        "plan": plan,
        "steps": steps,
        "success": bool(result.success) if result is not None else False,
        "em": exact_match([plan], [gold]) if gold else None,
        "gold_plan": gold,
        "sim_time_s": round(sim_s, 2),
        "wall_time_s": round(wall_s, 2),
        "real_time_factor": round(sim_s / wall_s, 1) if wall_s > 0 else None,
        "motion": motion,
        "timed_out": result is None,
        # ground-truth base positions (x, y) at the start and the end, for goal distances
        "base_start": list(log.trajectory[0]) if log.trajectory else None,
        "base_end": list(log.trajectory[-1]) if log.trajectory else None,
    }


def _plot(
    log: TopicLog,
    scene: Scene,
    summary: dict[str, Any],
    *,
    objects: dict[str, list[np.ndarray[Any, Any]]],
    path: Path,
) -> None:
    import matplotlib.pyplot as plt  # noqa: PLC0415 (deferred: matplotlib)

    if log.top_down is None:
        return
    fig, ax = top_down_axes(log.top_down, scene)
    for i, plan in enumerate(log.plans):
        ax.plot(plan[:, 0], plan[:, 1], "--", color="white", lw=1.2, label="Theta* plans" if i == 0 else None)
    if log.trajectory:
        traj = np.array(log.trajectory)
        ax.plot(traj[:, 0], traj[:, 1], "-", color="black", lw=1.6, label="executed (ground truth)")
    moved = [n for n, (start, end) in objects.items() if np.linalg.norm(end[:2] - start[:2]) > 0.02]
    for name in moved:
        (x0, y0), (x1, y1) = objects[name][0][:2], objects[name][1][:2]
        ax.annotate(
            "", xy=(x1, y1), xytext=(x0, y0), arrowprops={"arrowstyle": "->", "color": "orange", "lw": 1.5}
        )
        ax.plot([x0], [y0], "o", mfc="none", color="orange")
        ax.text(x1, y1 + 0.12, name, fontsize=8, color="black", ha="center")
    verdict = "succeeded" if summary["success"] else "failed"
    ax.set_title(f"galley run: {summary['instruction']!r} (seed {summary['seed']}): {verdict}", fontsize=9)
    ax.legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _write_video(frames: list[np.ndarray[Any, Any]], path: Path, fps: float = 10.0) -> None:
    import cv2  # noqa: PLC0415 (optional: cv2)

    if not frames:
        return
    height, width = frames[0].shape[:2]
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), fps, (width, height))
    for frame in frames:
        writer.write(cv2.cvtColor(frame, cv2.COLOR_RGB2BGR))
    writer.release()
