"""The figures of an evaluation (metrics.json): overall, per scene, and the headline.

:func:`summary_metrics` computes Kitchen-R's figures over a set of episodes (all of them, or one
scene's); :func:`scene_metrics` gives an evaluation over several scenes (``galley eval --scenes``)
one block per scene, with the episodes that failed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from galley_core.tasks.metrics import exact_match, m_metric, success_rates
from galley_core.tasks.suite import SuiteEntry
from galley_episodes.report import sr_by_kind

__all__ = ["headline", "replan_metrics", "scene_metrics", "summary_metrics"]


def headline(metrics: dict[str, Any], replanning: bool) -> dict[str, Any]:
    """The one figure a reader takes away, with what it counts (metrics.json's ``headline``)."""
    if metrics.get("sr_episode") is None:
        return {"metric": "em", "value": metrics.get("em"), "counts": "plans' steps matching the gold plan"}
    if metrics.get("sr_episode_no_repair") is not None:
        return {
            "metric": "sr_episode_no_repair",
            "value": metrics["sr_episode_no_repair"],
            "counts": "whole plans done with no teleport (sr_by_action: every step scored, with repair)",
        }
    if replanning:
        return {
            "metric": "sr_episode_replan",
            "value": metrics["sr_episode_replan"],
            "counts": "episodes whose task succeeded, replans allowed (sr_episode: their first plan alone)",
        }
    return {"metric": "sr_episode", "value": metrics["sr_episode"], "counts": "episodes whose task succeeded"}


def replan_metrics(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """SR over episodes with and without replanning, replans and recoveries (--replan, --inject)."""
    n = len(rows)
    return {
        "sr_episode_replan": sum(r["success"] for r in rows) / n,
        "sr_episode_no_replan": sum(r["success"] and not r["replans"] for r in rows) / n,
        "replans": int(sum(r["replans"] for r in rows)),
        "recovered": int(sum(r["success"] and r["replans"] > 0 for r in rows)),
        "injected": int(sum(bool(r["injected"]) for r in rows)),
    }


def summary_metrics(
    mode: str,
    entries: list[SuiteEntry],
    *,
    predicted: list[list[str]] | None,
    rows: list[dict[str, Any]],
    step_success: list[list[bool]],
    step_em: list[list[bool]],
    wall_s: float,
) -> dict[str, Any]:
    gold = [list(e.plan) for e in entries]
    metrics: dict[str, Any] = {
        "mode": mode,
        "episodes": len(entries),
        "em": exact_match(predicted, gold) if predicted is not None else None,
        "lcs_ratio": float(np.mean([r["lcs"] for r in rows])) if predicted is not None else None,
        "sr": None,
        "sr_episode": None,
        "m": None,
        "p": None,
        "wall_time_s": round(wall_s, 1),
    }
    if step_success:
        metrics["sr"], metrics["sr_episode"] = success_rates(step_success)
        sim_s = sum(r["sim_time_s"] for r in rows)
        metrics |= {
            "sim_time_s": round(sim_s, 1),
            "real_time_factor": round(sim_s / sum(r["wall_time_s"] for r in rows), 1),
            "mean_path_length_m": float(np.mean([r["path_length_m"] or 0.0 for r in rows])),
            "collisions": int(sum(r["collisions"] or 0 for r in rows)),
        }
        metrics["sr_by_action"] = sr_by_kind(
            pair
            for entry, outcomes in zip(entries, step_success, strict=True)
            for pair in zip(entry.plan, outcomes, strict=True)
        )
        if rows and all("goal_dist_end_m" in r for r in rows):
            for key in ("goal_dist_start_m", "goal_dist_end_m"):
                metrics[key] = round(float(np.mean([r[key] for r in rows])), 4)
    if step_em and step_success:
        metrics["m"] = m_metric(step_em, step_success)
    return metrics


#: The keys of a scene's block in metrics.json's ``scenes`` (and the figures of the printed table).
SCENE_KEYS = ("episodes", "em", "lcs_ratio", "sr", "sr_episode", "m", "sr_episode_replan", "collisions")


def scene_metrics(
    mode: str,
    groups: list[tuple[str, list[int]]],
    entries: list[SuiteEntry],
    *,
    predicted: list[list[str]] | None,
    rows: list[dict[str, Any]],
    step_success: list[list[bool]],
    step_em: list[list[bool]],
) -> dict[str, dict[str, Any]]:
    """One block per scene (name, the indices of its episodes): its figures and its failed episodes.

    ``step_success`` and ``step_em`` are aligned with ``entries`` where the mode fills them.
    """
    blocks: dict[str, dict[str, Any]] = {}
    for name, indices in groups:
        figures = summary_metrics(
            mode,
            [entries[i] for i in indices],
            predicted=[predicted[i] for i in indices] if predicted is not None else None,
            rows=[rows[i] for i in indices],
            step_success=[step_success[i] for i in indices] if step_success else [],
            step_em=[step_em[i] for i in indices] if step_em else [],
            wall_s=0.0,
        )
        if step_success and "replans" in rows[indices[0]]:
            figures |= replan_metrics([rows[i] for i in indices])
        block = {k: figures[k] for k in SCENE_KEYS if k in figures}
        if step_success:
            block["failed"] = [
                {"id": rows[i]["id"], "seed": rows[i]["seed"], "failure": rows[i].get("failure", "")}
                for i in indices
                if not rows[i]["success"]
            ]
        blocks[name] = block
    return blocks
