"""Kitchen-R's three evaluation modes over the instruction suite (Sec. IV, VII); ``galley eval``.

:func:`evaluate` takes an :class:`~galley_episodes.config.EvalConfig`; the options named here are its
fields as ``galley eval`` spells them.

* ``--mode planner``: the planner predicts a plan for each instruction (from the top-down image of
  its episode); EM (eq. 1) and the LCS ratio against the gold plans. Nothing is executed.
* ``--mode policy``: the gold plan of each instruction is executed on the simulator by the oracle
  (Theta* + Kitchen-R's controller + the RMPflow pick-and-place state machine); SR per step and per
  episode, motion metrics.
* ``--mode joint``: the planner's plan is scored by EM, the gold plan is executed (Kitchen-R
  executes the gold plan so that planning errors do not hide execution errors); EM, SR and M (3).

Writes ``metrics.json`` (keys ``episodes``, ``em``, ``sr``, ``sr_episode``, ``m``, ``p`` — null where
the mode does not define one — and the motion metrics), ``episodes.csv`` (one row per episode) and
``metrics.png``; in policy and joint modes ``steps.csv`` too (one row per executed step: the
episode's id and seed, the step's index and text, success, duration and the failure's reason)
and ``metrics.json`` the key ``sr_executed_by_action``: SR per kind over the steps that ran, where
``sr_by_action`` also counts as failed the steps an episode's end leaves unrun (its first failure
without ``teleport_on_failure``, or a monitor's abort). P (2) needs a learned
policy's action errors and is null for the oracle.

``--workers K`` runs the episodes in K simulator processes at once (policy and joint modes); each
episode is the same as when run alone.

``--policy RUN`` (policy and joint modes) executes with a trained diffusion policy
(``galley train``) in place of the oracle, and reports ``mse``: the MSE between its sampled action
chunks and the expert's on the run's held-out episodes (eq. 2's second term); in joint mode
``p`` = 1/EM + MSE (eq. 2). By default an episode ends at its first failed step, so the later
steps count as failed too; to score every step, layer ``--params config/policy_eval.yaml`` (the
task executor's ``teleport_on_failure``, the monitor's ``abort_on_failure``; after a failed pick
the object is put into the gripper, the arm tucked). The run's own ``params.yaml`` (the cameras it
was trained with) comes first, under every ``--params`` file; RUN may be a shipped policy's name.

``--steps N`` executes the first N steps of each gold plan (``--steps 1``: the first move alone).
Where every plan is a single move, ``metrics.json`` also has ``goal_dist_start_m`` and
``goal_dist_end_m``: the base centre's mean distance from its goal at the start and at the end,
so that a policy that does not arrive still shows whether it drove towards the goal.

``--replan N`` (policy and joint modes) lets the executor replan up to N times per episode after a
failed step (MORE); ``--inject knock|move`` disturbs every episode once on purpose (an object
knocked out of the gripper during transport, or the next object moved while the robot drives).
With either, ``metrics.json`` adds ``sr_episode_replan`` (episodes that succeeded),
``sr_episode_no_replan`` (those that succeeded without a replan: what a run without replanning
gets, episodes being deterministic), ``replans``, ``recovered`` and ``injected``, and
``episodes.csv`` the columns ``replans`` and ``injected``; ``sr`` and ``sr_episode`` then score the
first plan's steps.
``--scene NAME|FILE`` evaluates in that scene on its own suite (made where missing,
:mod:`galley_episodes.scenes`). ``--scenes unseen`` (``train``, or a comma list of names and files)
evaluates in each scene on its own suite, ``--episodes`` of each, all episodes in one pool;
``metrics.json``'s figures are then pooled over every episode, and its ``scenes`` block holds each
scene's (:func:`galley_episodes.eval_metrics.scene_metrics`: ``episodes``, ``em``, ``sr``,
``sr_episode``, ``m``, the failed episodes); ``episodes.csv`` and ``steps.csv`` name each row's scene
and ``scenes.png`` draws each scene's episode SR (EM in planner mode) against the overall.
Where the params files repair failed steps (``teleport_on_failure``, as policy_eval.yaml does),
``--whole-plans`` (the default) runs the same plans again without repair (galley_episodes.repair):
``metrics.json`` then has ``repair`` (true: ``sr``, ``sr_by_action`` and ``sr_episode`` are of the
repaired run, every step scored), ``sr_episode_no_repair`` (whole plans with no teleport at all)
and ``no_repair`` (that run's SR by step kind), ``episodes_no_repair.csv`` its rows, and the
command prints both runs in one table.
``headline`` names the figure that leads (``sr_episode_replan`` with replanning, ``sr_episode``
without, ``em`` in planner mode) and what it counts; ``galley eval`` prints it last.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from galley_core.tasks.metrics import lcs_ratio, step_matches
from galley_core.tasks.suite import SuiteEntry, load_suite
from galley_episodes.cluster import policy_resources, run_episodes
from galley_episodes.cluster_files import EpisodeJournal
from galley_episodes.config import EVAL_MODES, EpisodeConfig, EvalConfig
from galley_episodes.episode import policy_sees_images, run_episode, run_settings
from galley_episodes.eval_metrics import headline, replan_metrics, scene_metrics, summary_metrics
from galley_episodes.repair import no_repair_metrics, repair_table, repairs, write_no_repair_params
from galley_episodes.report import goal_distances, plot_eval, plot_scenes, sr_by_kind, write_csv
from galley_episodes.scenes import SceneFiles, outside_configuration, resolve_scene, resolve_scenes
from galley_learning.planners.evaluate import predict_suite_plans
from galley_learning.policy.shipped import layered_params
from galley_runtime.config_files import config_dirs

__all__ = ["evaluate", "predict_plans", "scene_groups"]


def _newest_suite() -> Path:
    found = [p for d in config_dirs() for p in sorted((d / "suites").glob("*.yaml"))]
    if not found:
        raise FileNotFoundError("no suite file in config/suites/; write one with: galley suite")
    return found[-1]


def _entries(path: Path, split: str, count: int, steps: int = 0) -> tuple[str, list[SuiteEntry]]:
    scene, entries = load_suite(path)
    chosen = [e for e in entries if split in ("all", e.split)]
    if not chosen:
        raise FileNotFoundError(
            f"suite {path} has no instructions in split {split!r} (train, test, unseen, all)"
        )
    chosen = chosen[:count] if count > 0 else chosen
    if steps > 0:
        chosen = [dataclasses.replace(e, plan=tuple(e.plan[:steps])) for e in chosen]
    return scene, chosen


def scene_groups(config: EvalConfig) -> list[tuple[SceneFiles, list[SuiteEntry]]]:
    """The scenes of an evaluation, each with its suite entries (``--episodes`` of each).

    ``--scenes``: every scene of the list, each with its own suite; ``--scene``: that scene, with
    ``--suite`` or its own; neither: the scene of ``--suite`` (default: config/suites/<newest>.yaml).

    Raises:
        ValueError: ``--scenes`` with ``--scene`` or ``--suite``, or a suite of another scene.
        SceneError: a scene is missing, invalid or fails a check.
    """
    say = lambda line: print(f"  {line}", flush=True)  # noqa: E731
    if config.scenes:
        if config.scene or config.suite:
            raise ValueError("--scenes evaluates each scene on its own suite: leave out --scene and --suite")
        found = resolve_scenes(config.scenes, say=say)
        return [
            (files, _entries(files.suite, config.split, config.episodes, config.steps)[1]) for files in found
        ]
    if config.scene:
        files = resolve_scene(config.scene, say=say)
        suite = Path(config.suite) if config.suite else files.suite
    else:
        suite = Path(config.suite) if config.suite else _newest_suite()
    name, entries = _entries(suite, config.split, config.episodes, config.steps)
    if not config.scene:
        files = resolve_scene(name, say=say)
    elif name != files.name:
        raise ValueError(
            f"--suite {suite} is scene {name!r}'s, not {files.name!r}'s: give the scene's own suite"
        )
    return [(files, entries)]


def predict_plans(planner: str, entries: list[SuiteEntry], scene: str) -> list[list[str]]:
    """Plans the planner ``planner`` predicts for the entries; ``gold`` returns the gold plans."""
    if planner == "gold":
        return [list(e.plan) for e in entries]

    return predict_suite_plans(planner, entries, scene)


def evaluate(
    config: EvalConfig,
    *,
    out_dir: Path,
    policy: Path | None = None,
    params: Sequence[Path] = (),
) -> dict[str, Any]:
    """Run an evaluation, write its report into ``out_dir`` and return the metrics.

    Args:
        config: what to evaluate and how (mode, episodes, split, workers...).
        out_dir: the report's folder (metrics.json, episodes.csv, steps.csv, metrics.png).
        policy: a trained diffusion policy's run to execute instead of the oracle (policy, joint).
        params: extra ROS 2 params files layered on config/galley.yaml for every episode.

    Raises:
        ValueError: the options do not go together (a policy in planner mode, say).
        FileNotFoundError: no suite, no instructions in the split, or no policy.pt in ``policy``.
    """
    mode, workers, inject, max_replans = config.mode, config.workers, config.inject, config.max_replans
    params = list(params)
    replanning = max_replans is not None or bool(inject)
    _check_options(mode, policy, replanning)
    groups = scene_groups(config)
    entries = [e for _, chosen in groups for e in chosen]
    scene_of = [files for files, chosen in groups for _ in chosen]
    _check_places(config, [f for f, _ in groups], out_dir)
    if mode in ("policy", "joint") and entries:  # what every episode does with the --params values
        settings = run_settings(
            scene_of[0].ref,
            entries[0].seed,
            out_dir=None,
            cameras=policy_sees_images(policy),
            params=layered_params(policy, params),
            policy=policy,
            episode_from="the suite entry's episode",
            max_replans=max_replans,
            inject=inject,
        )
        for note in settings.notes:
            print(note, flush=True)
    predicted = (
        [p for files, chosen in groups for p in predict_plans(config.planner, chosen, files.ref)]
        if mode in ("planner", "joint")
        else None
    )
    wall_start = time.perf_counter()
    executed: list[dict[str, Any] | None] = (
        _execute(
            entries,
            [(files.ref, files.name) for files in scene_of],
            policy=policy,
            params=params,
            workers=workers,
            start=wall_start,
            replan=(max_replans, inject) if replanning else None,
            cluster=config.cluster or None,
            journal=EpisodeJournal(out_dir / "episodes", resume=config.resume),
        )
        if mode in ("policy", "joint")
        else [None for _ in entries]
    )
    rows, step_success, step_em, step_rows = _rows(
        entries, [f.name for f in scene_of], predicted, executed, wall_start
    )
    metrics = summary_metrics(
        mode,
        entries,
        predicted=predicted,
        rows=rows,
        step_success=step_success,
        step_em=step_em,
        wall_s=time.perf_counter() - wall_start,
    )
    if step_success:
        scenes = [(files.ref, files.name) for files in scene_of]
        metrics |= _execution_metrics(config, entries, scenes, policy, params, out_dir, rows, replanning)
    if step_rows:
        metrics["sr_executed_by_action"] = sr_by_kind((r["step"], r["success"]) for r in step_rows)
    if policy is not None:
        from galley_learning.policy.train import heldout_mse  # noqa: PLC0415 (deferred: torch)

        metrics["policy"] = str(policy)
        metrics["mse"] = heldout_mse(policy)
        if metrics["em"]:
            metrics["p"] = 1.0 / metrics["em"] + metrics["mse"]
    metrics["headline"] = headline(metrics, replanning)
    if len(groups) > 1:
        indices = [(f.name, [i for i, g in enumerate(scene_of) if g is f]) for f, _ in groups]
        metrics["scenes"] = scene_metrics(
            mode, indices, entries, predicted=predicted, rows=rows, step_success=step_success, step_em=step_em
        )
    out_dir.mkdir(parents=True, exist_ok=True)  # once the planner and the episodes have run
    (out_dir / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    print(repair_table(metrics), end="", flush=True)  # nothing in planner mode
    write_csv(out_dir / "episodes.csv", rows, sorted({k for r in rows for k in r}))
    if step_rows:
        write_csv(out_dir / "steps.csv", step_rows, list(step_rows[0]))
    plot_eval(mode, rows, metrics, out_dir / "metrics.png")
    if "scenes" in metrics:
        plot_scenes(metrics, out_dir / "scenes.png")
    return metrics


def _execution_metrics(  # noqa: PLR0917 (the evaluation's context, passed on)
    config: EvalConfig,
    entries: list[SuiteEntry],
    scenes: list[tuple[str, str]],
    policy: Path | None,
    params: list[Path],
    out_dir: Path,
    rows: list[dict[str, Any]],
    replanning: bool,
) -> dict[str, Any]:
    """Replanning's metrics (with ``replanning``), ``repair``, and the whole plans without repair.

    Where the run repaired failed steps and ``whole_plans`` is on (and no replanning), the same plans
    run again without repair (galley_episodes.repair), writing episodes_no_repair.csv. ``scenes``:
    each entry's (scene reference, name), as :func:`_execute` takes them.
    """
    out = (replan_metrics(rows) if replanning else {}) | {"repair": repairs(params)}
    if not out["repair"] or not config.whole_plans or replanning:
        return out
    print("galley eval: the same plans again without repair (whole plans, no teleport)", flush=True)
    unrepaired = _execute(
        entries,
        scenes,
        policy=policy,
        params=[*params, write_no_repair_params(out_dir)],
        workers=config.workers,
        start=time.perf_counter(),
        cluster=config.cluster or None,
        journal=EpisodeJournal(out_dir / "episodes_no_repair", resume=config.resume),
    )
    table = [
        {"scene": name, "id": e.id, "seed": e.seed, "steps_executed": len(r["step_rows"])}
        | {k: v for k, v in r.items() if k not in ("step_rows", "outcomes")}
        for (_, name), e, r in zip(scenes, entries, unrepaired, strict=True)
    ]
    write_csv(out_dir / "episodes_no_repair.csv", table, sorted({k for r in table for k in r}))
    return out | no_repair_metrics([e.plan for e in entries], unrepaired)


def _check_places(config: EvalConfig, scenes: list[SceneFiles], out_dir: Path) -> None:
    if config.cluster and (elsewhere := outside_configuration(scenes)):
        raise ValueError(
            f"--cluster ships the configuration folder, and {', '.join(elsewhere)} lie outside it: "
            "copy the scene files (and their maps and suites) into config/, or leave out --cluster"
        )
    if out_dir.exists() and not out_dir.is_dir():
        raise ValueError(f"--out {out_dir} is a file; give a folder for the report")


def _rows(
    entries: list[SuiteEntry],
    names: list[str],
    predicted: list[list[str]] | None,
    executed: list[dict[str, Any] | None],
    wall_start: float,
) -> tuple[list[dict[str, Any]], list[list[bool]], list[list[bool]], list[dict[str, Any]]]:
    """(episodes.csv's rows, step outcomes, step matches, steps.csv's rows) of the entries."""
    rows: list[dict[str, Any]] = []
    step_success: list[list[bool]] = []
    step_em: list[list[bool]] = []
    step_rows: list[dict[str, Any]] = []  # every executed step, for steps.csv
    for i, (entry, episode) in enumerate(zip(entries, executed, strict=True)):
        row: dict[str, Any] = {
            "scene": names[i],
            "id": entry.id,
            "instruction": entry.instruction,
            "seed": entry.seed,
        }
        if predicted is not None:
            matches = step_matches(predicted[i], entry.plan)
            step_em.append(matches)
            row |= {"em": sum(matches) / len(entry.plan), "lcs": lcs_ratio(predicted[i], entry.plan)}
        if episode is not None:
            row |= episode
            step_success.append(row.pop("outcomes"))
            step_rows += [
                {"scene": names[i], "id": entry.id, "seed": entry.seed, "index": k} | s
                for k, s in enumerate(row.pop("step_rows"))
            ]
        rows.append(row)
        if episode is None:
            _progress(i + 1, len(entries), wall_start, rows)
    return rows, step_success, step_em, step_rows


def _check_options(mode: str, policy: Path | None, replanning: bool) -> None:
    if mode not in EVAL_MODES:
        raise ValueError(f"mode {mode!r}: use one of {', '.join(EVAL_MODES)}")
    if policy is not None and mode == "planner":
        raise ValueError("--policy executes steps; use it with --mode policy or joint")
    if replanning and mode == "planner":
        raise ValueError("--replan and --inject execute steps; use them with --mode policy or joint")
    if policy is not None and not (policy / "policy.pt").exists():
        raise FileNotFoundError(
            f"{policy / 'policy.pt'} missing: train a policy with `galley train --out {policy}`"
        )


def _execute_one(
    entry: SuiteEntry,
    scene_name: str,
    policy: Path | None,
    params: list[Path],
    replan: tuple[int | None, str] | None = None,
) -> dict[str, Any]:
    """Execute one suite entry's gold plan; the episode's columns of its row, with ``outcomes``.

    With ``replan`` (max_replans, inject), the row has ``replans`` and ``injected`` too, and
    ``outcomes`` are the first plan's.
    """
    max_replans, inject = replan or (None, "")
    episode = EpisodeConfig(
        seed=entry.seed,
        scene=scene_name,
        plan="; ".join(entry.plan),
        replan=-1 if max_replans is None else max_replans,
        inject=inject,
    )
    summary = run_episode(entry.instruction, episode, progress=False, policy=policy, params=params)
    replans = summary["replans"]
    first = replans[0]["steps_done"] if replans else len(summary["steps"])
    outcomes = [s["success"] for s in summary["steps"][:first]]
    distances = goal_distances(entry.plan, summary, scene_name)
    outcomes += [False] * (len(entry.plan) - len(outcomes))  # steps never reached fail
    motion = summary["motion"] or {}
    return {
        "outcomes": outcomes,
        "step_rows": summary["steps"],
        "success": summary["success"],
        "steps_succeeded": sum(outcomes),
        "steps": len(outcomes),
        "sim_time_s": summary["sim_time_s"],
        "wall_time_s": summary["wall_time_s"],
        "path_length_m": motion.get("path_length_m"),
        "collisions": motion.get("collisions"),
        "failure": next((s["reason"] for s in summary["steps"] if not s["success"]), ""),
        **distances,
    } | ({"replans": len(replans), "injected": (summary["injected"] or {}).get("kind", "")} if replan else {})


def _execute(
    entries: list[SuiteEntry],
    scenes: list[tuple[str, str]],
    *,
    policy: Path | None,
    params: list[Path],
    workers: int,
    start: float,
    journal: EpisodeJournal,
    replan: tuple[int | None, str] | None = None,
    cluster: str | None = None,
) -> list[dict[str, Any]]:
    """Execute every entry (in ``workers`` processes, or on ``cluster``) with progress, via ``journal``."""
    several = len(set(scenes)) > 1  # a journal of one scene reads as before; names survive a moved folder
    return run_episodes(
        _execute_one,
        [
            dict(entry=e, scene_name=scene[0], policy=policy, params=params, replan=replan)
            for e, scene in zip(entries, scenes, strict=True)
        ],
        keys=[
            {"id": e.id, "seed": e.seed, "plan": list(e.plan)} | ({"scene": scene[1]} if several else {})
            for e, scene in zip(entries, scenes, strict=True)
        ],
        journal=journal,
        workers=workers,
        cluster=cluster,
        files=("policy", "params"),
        resources=policy_resources(policy, layered_params(policy, params)),
        progress=lambda done: _progress(len(done), len(entries), start, list(done.values())),
    )


def _progress(done: int, total: int, start: float, rows: list[dict[str, Any]]) -> None:
    width = 30
    filled = round(width * done / total)
    elapsed = time.perf_counter() - start
    eta = elapsed / done * (total - done)
    extra = ""
    if "success" in rows[-1]:
        replanned = " (replans allowed)" if "replans" in rows[-1] else ""
        extra = f"  episodes succeeded{replanned} {sum(r['success'] for r in rows)}/{done}"
    if "em" in rows[-1]:
        extra += f"  EM so far {np.mean([r['em'] for r in rows]):.3f}"
    print(
        f"  [{'#' * filled}{'.' * (width - filled)}] {done}/{total}  {elapsed:5.0f} s, "
        f"~{eta:4.0f} s left{extra}",
        flush=True,
    )
