"""Planner evaluation: Kitchen-R's EM (eq. 1) on the suite's splits, and its Table II ablation.

:func:`evaluate_planner` plans every entry of a split with the entry's rendered top-down image and
compares with the gold plan; a failure counts as an empty plan (EM 0 for that entry).
:func:`ablation` reproduces Table II for a text backend by switching prompt parts on in turn:
vanilla (instruction and image only), + valid steps, + in-context examples, + constrained decoding.
For the ``galley`` model prompts do not exist (it has no system text, examples or step list to
drop), so only the unconstrained and constrained rows are measured and the others say so.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from galley_core.scene import Scene
from galley_core.tasks.metrics import exact_match
from galley_core.tasks.planning import Planner, PlanningError, PromptConfig
from galley_core.tasks.suite import SuiteEntry
from galley_learning.planners.images import TopDownRenderer, blank_like

__all__ = [
    "ABLATION_ROWS",
    "SplitResult",
    "ablation",
    "evaluate_planner",
    "evaluate_plans",
    "format_ablation",
    "predict_suite_plans",
]

Progress = Callable[[str], None]


def _silent(_: str) -> None:
    pass


@dataclass
class SplitResult:
    """EM of one split, with the failures by kind."""

    split: str
    count: int
    em: float
    failures: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0


def evaluate_planner(
    planner: Planner,
    scene: Scene,
    entries: Sequence[SuiteEntry],
    *,
    splits: Sequence[str] = ("test", "unseen"),
    renderer: TopDownRenderer | None = None,
    blank_image: bool = False,
    limit: int = 0,
    progress: Progress = _silent,
) -> dict[str, SplitResult]:
    """EM of ``planner`` on each split.

    Args:
        blank_image: give the planner a uniform grey image instead of the episode's.
        limit: at most this many entries per split (0: all), taken evenly across the split.
    """
    renderer = renderer or TopDownRenderer(scene)
    results = {}
    for split in splits:
        chosen = [e for e in entries if e.split == split]
        if limit and len(chosen) > limit:
            chosen = [chosen[round(i * len(chosen) / limit)] for i in range(limit)]
        if not chosen:
            continue
        started = time.monotonic()
        predicted: list[tuple[str, ...]] = []
        failures: dict[str, int] = {}
        batch = 64 if hasattr(planner, "plan_batch") else 1
        for start in range(0, len(chosen), batch):
            part = chosen[start : start + batch]
            images: list[Any] = [renderer.render(e.seed) for e in part]
            if blank_image:
                images = [blank_like(i) for i in images]
            if batch > 1:
                try:
                    predicted += [
                        p.steps for p in planner.plan_batch([e.instruction for e in part], images, scene)
                    ]  # type: ignore[attr-defined]
                    continue
                except PlanningError:
                    pass  # plan one by one to count each failure
            for entry, image in zip(part, images, strict=True):
                try:
                    predicted.append(planner.plan(entry.instruction, image, scene).steps)
                except PlanningError as err:
                    failures[err.kind] = failures.get(err.kind, 0) + 1
                    predicted.append(())
            progress(f"{split}: {len(predicted)}/{len(chosen)} planned ({time.monotonic() - started:.0f} s)")
        em = exact_match(predicted, [e.plan for e in chosen])
        results[split] = SplitResult(split, len(chosen), em, failures, round(time.monotonic() - started, 1))
    return results


#: Table II rows: (label, prompt parts switched on).
ABLATION_ROWS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("vanilla", {"valid_steps": False, "examples": 0, "constrained": False}),
    ("+ valid steps", {"valid_steps": True, "examples": 0, "constrained": False}),
    ("+ in-context examples", {"valid_steps": True, "constrained": False}),
    ("+ constrained decoding", {"valid_steps": True, "constrained": True}),
)


def ablation(
    make: Callable[[PromptConfig], Planner],
    scene: Scene,
    entries: Sequence[SuiteEntry],
    *,
    base: PromptConfig | None = None,
    split: str = "test",
    galley: bool = False,
    limit: int = 0,
    progress: Progress = _silent,
) -> list[tuple[str, float | None, str]]:
    """Table II rows (label, EM or None, note) on ``split``; ``make`` builds a planner for a prompt."""
    base = base or PromptConfig()
    renderer = TopDownRenderer(scene)
    rows: list[tuple[str, float | None, str]] = []
    for label, parts in ABLATION_ROWS:
        if galley and label in ("+ valid steps", "+ in-context examples"):
            rows.append((label, None, "not applicable: galley's model reads no prompt"))
            continue
        prompt = replace(base, **parts)
        progress(f"ablation row {label!r}")
        result = evaluate_planner(
            make(prompt), scene, entries, splits=(split,), renderer=renderer, limit=limit, progress=progress
        )[split]
        note = ", ".join(f"{n} {k}" for k, n in sorted(result.failures.items()))
        if galley and label == "vanilla":
            note = "unconstrained: every step of the model's vocabulary allowed" + (
                f"; {note}" if note else ""
            )
        rows.append((label, result.em, note))
    return rows


def format_ablation(rows: Sequence[tuple[str, float | None, str]], backend: str, split: str) -> str:
    """Table II as text."""
    lines = [f"Table II ablation, backend {backend}, split {split}", f"{'method':<26}{'EM':>7}  note"]
    for label, em, note in rows:
        lines.append(f"{label:<26}{'n/a' if em is None else f'{em:.3f}':>7}  {note}")
    return "\n".join(lines)


def predict_suite_plans(planner: str, entries: Sequence[SuiteEntry], scene: str) -> list[list[str]]:
    """Plans of backend ``planner`` (configured by config/galley.yaml) for suite entries of scene ``scene``.

    Each entry is planned on the top-down image of its episode; a failure gives an empty plan.
    This is what ``galley eval --mode planner|joint`` calls.
    """
    from galley_core.scene import load_scene, scene_path
    from galley_nodes.cli.plan import planner_from_params
    from galley_nodes.config_files import config_dirs

    made, _, _ = planner_from_params(planner, None)
    the_scene = load_scene(scene_path(scene, [d / "scenes" for d in config_dirs()]))
    return [list(p) for p in evaluate_plans(made, the_scene, entries)]


def evaluate_plans(
    planner: Planner, scene: Scene, entries: Sequence[SuiteEntry], renderer: TopDownRenderer | None = None
) -> list[tuple[str, ...]]:
    """The plan of each entry on its episode's top-down image; () where planning failed."""
    renderer = renderer or TopDownRenderer(scene)
    plans: list[tuple[str, ...]] = []
    for entry in entries:
        try:
            plans.append(planner.plan(entry.instruction, renderer.render(entry.seed), scene).steps)
        except PlanningError:
            plans.append(())
    return plans
