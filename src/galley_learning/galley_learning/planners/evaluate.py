"""Planner evaluation: Kitchen-R's EM (eq. 1) on the suite's splits, generalisation, the Table II ablation.

:func:`evaluate_planner` plans every entry of a split with the entry's rendered top-down image and
compares with the gold plan; a failure counts as an empty plan (EM 0 for that entry).
:func:`plan_entries` keeps every entry's outcome (a plan, or a refusal: any
:class:`~galley_core.language.planning.PlanningError`), and :func:`generalisation_figures` turns the
outcomes into the figures of issue 21: on the ``phrasing`` split (:mod:`galley_core.language.phrasings`)
EM and whole-plan accuracy per phrasing kind and overall, the false refusal rate on the in-scope
splits (``test``, ``unseen``, ``phrasing``) and the false acceptance rate on the ``out_of_scope``
set per kind; :func:`format_comparison` sets them side by side for several backends, as Table II does.
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

from galley_core.language.phrase_grammar import OUT_OF_SCOPE_KINDS, PHRASING_KINDS
from galley_core.language.phrasings import phrasing_kind
from galley_core.language.planning import Planner, PlanningError, PromptConfig
from galley_core.scene import Scene
from galley_core.tasks.metrics import exact_match
from galley_core.tasks.suite import SuiteEntry
from galley_learning.planners.configured import planner_from_params
from galley_learning.planners.images import TopDownRenderer, blank_like
from galley_runtime.config_files import find_scene

__all__ = [
    "ABLATION_ROWS",
    "IN_SCOPE_SPLITS",
    "Outcome",
    "SplitResult",
    "ablation",
    "evaluate_planner",
    "evaluate_plans",
    "format_ablation",
    "format_comparison",
    "generalisation_figures",
    "plan_entries",
    "predict_suite_plans",
    "spread",
]

#: Splits whose instructions have a plan: refusing one of them is a false refusal.
IN_SCOPE_SPLITS = ("test", "unseen", "phrasing")

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


@dataclass(frozen=True)
class Outcome:
    """What a planner answered for one entry: its steps, or a refusal (``steps`` None) with the kind."""

    entry: SuiteEntry
    steps: tuple[str, ...] | None
    failure: str = ""
    reason: str = ""
    seconds: float = 0.0

    @property
    def refused(self) -> bool:
        return self.steps is None


def spread(entries: Sequence[SuiteEntry], limit: int) -> list[SuiteEntry]:
    """At most ``limit`` of ``entries`` (0: all), taken evenly across them (so every kind keeps a share)."""
    if not limit or len(entries) <= limit:
        return list(entries)
    return [entries[round(i * len(entries) / limit)] for i in range(limit)]


def _plan_part(
    planner: Planner, scene: Scene, part: Sequence[SuiteEntry], images: list[Any]
) -> list[Outcome]:
    """Outcomes of ``part`` through ``plan_batch``; a failing batch is halved until its refusals stand alone.

    A batch raises for its first failing entry only, so halving finds every refusal in about
    log2(batch) batch calls each instead of planning the whole batch one by one.
    """
    if len(part) == 1:
        t0 = time.monotonic()
        try:
            steps = planner.plan(part[0].instruction, images[0], scene).steps
        except PlanningError as err:
            return [Outcome(part[0], None, err.kind, err.reason, time.monotonic() - t0)]
        return [Outcome(part[0], steps, seconds=time.monotonic() - t0)]
    t0 = time.monotonic()
    try:
        plans = planner.plan_batch([e.instruction for e in part], images, scene)  # type: ignore[attr-defined]
    except PlanningError:
        half = len(part) // 2
        return _plan_part(planner, scene, part[:half], images[:half]) + _plan_part(
            planner, scene, part[half:], images[half:]
        )
    each = (time.monotonic() - t0) / len(part)
    return [Outcome(e, p.steps, seconds=each) for e, p in zip(part, plans, strict=True)]


def plan_entries(
    planner: Planner,
    scene: Scene,
    entries: Sequence[SuiteEntry],
    *,
    renderer: TopDownRenderer | None = None,
    blank_image: bool = False,
    progress: Progress = _silent,
    label: str = "",
) -> list[Outcome]:
    """Plan every entry on its episode's top-down image; a PlanningError is a refusal, kept with its kind.

    Backends with ``plan_batch`` plan 64 at a time (a failing batch is halved until each refusal is
    planned alone, so that every refusal is counted where it happened); others one by one.
    """
    renderer = renderer or TopDownRenderer(scene)
    outcomes: list[Outcome] = []
    started = time.monotonic()
    batch = 64 if hasattr(planner, "plan_batch") else 1
    for start in range(0, len(entries), batch):
        part = entries[start : start + batch]
        images: list[Any] = [renderer.render(e.seed) for e in part]
        if blank_image:
            images = [blank_like(i) for i in images]
        outcomes += _plan_part(planner, scene, part, images)
        progress(f"{label}{len(outcomes)}/{len(entries)} planned ({time.monotonic() - started:.0f} s)")
    return outcomes


def _rates(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """EM, whole-plan accuracy and refusal rate of in-scope outcomes."""
    predicted = [o.steps or () for o in outcomes]
    gold = [o.entry.plan for o in outcomes]
    return {
        "count": len(outcomes),
        "em": round(exact_match(predicted, gold), 4),
        "accuracy": round(sum(p == g for p, g in zip(predicted, gold, strict=True)) / len(outcomes), 4),
        "false_refusal": round(sum(o.refused for o in outcomes) / len(outcomes), 4),
    }


def generalisation_figures(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """The figures of issue 21 from the outcomes of any mix of splits.

    Returns a dict with, where the outcomes have them: ``splits`` (per in-scope split: count, EM,
    whole-plan accuracy, false refusal rate), ``phrasing_by_kind`` (the same per phrasing kind),
    ``false_refusal_in_scope`` (pooled over the in-scope splits), ``false_acceptance`` (share of
    the out-of-scope set given a plan) and ``false_acceptance_by_kind``, ``refusal_kinds`` (how
    often each PlanningError kind was answered, per split) and ``seconds_per_instruction``.
    """
    figures: dict[str, Any] = {"splits": {}}
    in_scope = [o for o in outcomes if o.entry.split in IN_SCOPE_SPLITS]
    for split in IN_SCOPE_SPLITS:
        chosen = [o for o in outcomes if o.entry.split == split]
        if chosen:
            figures["splits"][split] = _rates(chosen)
    phrasing = [o for o in outcomes if o.entry.split == "phrasing"]
    if phrasing:
        figures["phrasing_by_kind"] = {
            kind: _rates(chosen)
            for kind in PHRASING_KINDS
            if (chosen := [o for o in phrasing if phrasing_kind(o.entry) == kind])
        }
    if in_scope:
        figures["false_refusal_in_scope"] = round(sum(o.refused for o in in_scope) / len(in_scope), 4)
    out = [o for o in outcomes if o.entry.split == "out_of_scope"]
    if out:
        figures["count_out_of_scope"] = len(out)
        figures["false_acceptance"] = round(sum(not o.refused for o in out) / len(out), 4)
        by_kind = {}
        for kind in OUT_OF_SCOPE_KINDS:
            chosen = [o for o in out if phrasing_kind(o.entry) == kind]
            if chosen:
                by_kind[kind] = round(sum(not o.refused for o in chosen) / len(chosen), 4)
        figures["false_acceptance_by_kind"] = by_kind
    kinds: dict[str, dict[str, int]] = {}
    for o in outcomes:
        if o.refused:
            split = kinds.setdefault(o.entry.split, {})
            split[o.failure] = split.get(o.failure, 0) + 1
    figures["refusal_kinds"] = kinds
    if outcomes:
        figures["seconds_per_instruction"] = round(sum(o.seconds for o in outcomes) / len(outcomes), 3)
    return figures


def _cell(value: Any, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def format_comparison(results: dict[str, dict[str, Any] | str]) -> str:
    """Table II-style comparison of backends (``results``: backend -> figures, or why it was skipped).

    Three tables: the summary (EM on every in-scope split, whole-plan accuracy on the phrasing
    split, false refusal on the in-scope splits, false acceptance on the out-of-scope set, seconds
    per instruction), EM and whole-plan accuracy per phrasing kind, false acceptance per kind.
    """
    ran = {name: f for name, f in results.items() if not isinstance(f, str)}
    lines = ["Planner generalisation (issue 21), Table II style; refusal = any PlanningError (no plan)"]
    head = ("EM test", "EM unseen", "EM phrase", "acc phrase", "false ref", "false acc", "s/instr")
    lines.append(f"{'backend':<14}" + "".join(f"{h:>11}" for h in head))
    for name, f in results.items():
        if isinstance(f, str):
            lines.append(f"{name:<14}  skipped: {f}")
            continue
        splits = f.get("splits", {})
        row = (
            splits.get("test", {}).get("em"),
            splits.get("unseen", {}).get("em"),
            splits.get("phrasing", {}).get("em"),
            splits.get("phrasing", {}).get("accuracy"),
            f.get("false_refusal_in_scope"),
            f.get("false_acceptance"),
            f.get("seconds_per_instruction"),
        )
        lines.append(f"{name:<14}" + "".join(f"{_cell(v):>11}" for v in row))
    if not ran:
        return "\n".join(lines)
    names = list(ran)
    lines += ["", "Phrasing split per kind: EM / whole-plan accuracy (count)"]
    lines.append(f"{'kind':<14}" + "".join(f"{n:>22}" for n in names))
    for kind in PHRASING_KINDS:
        cells = []
        for n in names:
            r = ran[n].get("phrasing_by_kind", {}).get(kind)
            cells.append("-" if r is None else f"{r['em']:.3f} / {r['accuracy']:.3f} ({r['count']})")
        lines.append(f"{kind:<14}" + "".join(f"{c:>22}" for c in cells))
    lines += ["", "False refusal per in-scope split"]
    lines.append(f"{'split':<14}" + "".join(f"{n:>22}" for n in names))
    for split in IN_SCOPE_SPLITS:
        cells = [_cell(ran[n].get("splits", {}).get(split, {}).get("false_refusal")) for n in names]
        lines.append(f"{split:<14}" + "".join(f"{c:>22}" for c in cells))
    lines += ["", "Out-of-scope set: false acceptance (share planned) per kind"]
    lines.append(f"{'kind':<14}" + "".join(f"{n:>22}" for n in names))
    for kind in OUT_OF_SCOPE_KINDS:
        cells = [_cell(ran[n].get("false_acceptance_by_kind", {}).get(kind)) for n in names]
        lines.append(f"{kind:<14}" + "".join(f"{c:>22}" for c in cells))
    return "\n".join(lines)


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
        chosen = spread([e for e in entries if e.split == split], limit)
        if not chosen:
            continue
        started = time.monotonic()
        outcomes = plan_entries(
            planner,
            scene,
            chosen,
            renderer=renderer,
            blank_image=blank_image,
            progress=progress,
            label=f"{split}: ",
        )
        failures: dict[str, int] = {}
        for o in outcomes:
            if o.refused:
                failures[o.failure] = failures.get(o.failure, 0) + 1
        em = exact_match([o.steps or () for o in outcomes], [e.plan for e in chosen])
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
    made, _, _ = planner_from_params(planner, None)
    the_scene = find_scene(scene)
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
