"""An evaluation with and without repair: every step scored, and whole plans with no teleport.

Layering ``config/policy_eval.yaml`` repairs a failed step (the task executor's
``teleport_on_failure``: after a failed pick the object is put into the gripper), so that every
later step is scored; that is Kitchen-R's per-step protocol, but an episode that needed a
teleport is not a plan the robot did. ``galley eval`` (``whole_plans``, on by default) then runs
the same plans a second time without repair: no teleport, and the monitor's aborts on (its
``abort_on_failure``, which policy_eval.yaml turns off), as a plain run would. A separate run,
not a reading of the first: the monitor's checks end an unrepaired episode where the repaired
one goes on, so the two runs part at the first failure (and at a failed check that fails no step).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from galley_core.tasks.metrics import success_rates
from galley_episodes.report import sr_by_kind
from galley_runtime.config_files import default_params_files
from galley_runtime.params_file import load_params_files, parameters_for

__all__ = ["NO_REPAIR_YAML", "no_repair_metrics", "repair_table", "repairs", "write_no_repair_params"]

#: Layered last on the user's params files for the run without repair.
NO_REPAIR_YAML = (
    "# galley eval: the same plans without repair (whole plans with no teleport); layered last\n"
    "task_executor:\n  ros__parameters:\n    teleport_on_failure: false\n"
    "monitor:\n  ros__parameters:\n    abort_on_failure: true\n"
)


def repairs(params: Sequence[Path]) -> bool:
    """Whether config/galley.yaml and the ``params`` files turn the executor's teleport_on_failure on."""
    entries = load_params_files([*default_params_files(), *params])
    found = parameters_for(entries, "/task_executor", ["teleport_on_failure"]).get("teleport_on_failure")
    return bool(found[0]) if found is not None else False


def write_no_repair_params(out_dir: Path) -> Path:
    """The params file that turns repair off (``OUT/no_repair.yaml``); its path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "no_repair.yaml"
    path.write_text(NO_REPAIR_YAML)
    return path


def no_repair_metrics(plans: Sequence[Sequence[str]], rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The run without repair: ``sr_episode_no_repair`` and its details (``no_repair``).

    Args:
        plans: each episode's gold plan (the steps it should run).
        rows: the run's episode rows (``outcomes``: each step's success, steps never reached
            failed; ``success``: the task's).
    """
    outcomes = [r["outcomes"] for r in rows]
    sr, sr_episode = success_rates(outcomes)
    whole = sum(bool(r["success"]) and all(o) for r, o in zip(rows, outcomes, strict=True)) / len(rows)
    return {
        "sr_episode_no_repair": whole,
        "no_repair": {
            "counts": "the same plans run again with no teleport and the monitor's aborts on: whole plans "
            "the robot did alone",
            "episodes": len(rows),
            "sr_episode": whole,
            "sr": sr,
            "sr_every_step_succeeded": sr_episode,
            "sr_by_action": sr_by_kind(
                pair for plan, o in zip(plans, outcomes, strict=True) for pair in zip(plan, o, strict=True)
            ),
        },
    }


def repair_table(metrics: dict[str, Any]) -> str:
    """The evaluation's SR by step kind and whole plans, a line per run (repaired or not), labelled.

    Ends with a newline; empty where nothing was executed (planner mode).
    """
    kinds = ("move", "pick", "place")
    runs = []
    if metrics.get("sr_by_action"):
        label = (
            "every step scored (a failed step teleported past)"
            if metrics.get("repair")
            else "as run (no repair: a failed step ends the plan)"
        )
        runs.append((label, metrics["sr_by_action"], metrics["sr"], metrics["sr_episode"]))
    extra = metrics.get("no_repair")
    if extra:
        runs.append(("whole plans, no teleport", extra["sr_by_action"], extra["sr"], extra["sr_episode"]))
    if not runs:
        return ""
    width = max(len(r[0]) for r in runs)
    head = f"  {'run':<{width}}  " + "  ".join(f"{k:>5}" for k in kinds) + "  step SR  episodes"
    lines = [head]
    for label, by_kind, sr, episode in runs:
        cells = "  ".join(f"{by_kind[k]:5.2f}" if k in by_kind else f"{'-':>5}" for k in kinds)
        lines.append(f"  {label:<{width}}  {cells}  {sr:7.2f}  {episode:8.2f}")
    return "\n".join(lines) + "\n"
