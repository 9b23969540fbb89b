"""Replanning with execution feedback (MORE): injected failures, recovered or not.

    python bench/replan.py [--episodes 20] [--inject knock|move|both] [--workers 1] [--quick]

Runs the same suite episodes (split ``unseen``: instructions and seeds nothing was tuned on; their
gold plans, executed by the oracle stack in the embedded host) in four configurations:

* ``inject``: one failure injected per episode (``galley eval --inject``), no replanning;
* ``inject_replan``: the same failure, up to ``--replan`` replans (default 1);
* ``replan``: no injection, replanning on;
* ``plain``: no injection, no replanning (the reference for ``replan``).

``--inject both`` alternates knock and move over the episodes. An episode is *recoverable* when it
failed in ``inject`` after its injection fired (the injector leaves the object in a zone, so a fresh
plan can succeed); *recovered* when the same episode succeeded in ``inject_replan``. In episodes
without a failure (those ``plain`` runs through) ``replan`` must change nothing: the same plans and
the same step outcomes, episode by episode; ``plain``'s own failures, if any, are counted apart
with how many a replan recovered. ``--summarise FILE`` prints the figures of a saved ``--out``.
Prints SR per configuration, the recovered / recoverable counts, and last one JSON line.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from concurrent.futures import as_completed
from pathlib import Path
from typing import Any

from galley_episodes import episode_pool, run_episode
from galley_learning.planners.configured import load_suite_entries

CONFIGS = {  # name -> (max_replans or None for the replan count asked, injected)
    "inject": (0, True),
    "inject_replan": (None, True),
    "replan": (None, False),
    "plain": (0, False),
}


def one(entry: Any, max_replans: int, inject: str) -> dict[str, Any]:
    """One episode's outcome: success, plan, step outcomes, replans, what was injected."""
    logging.basicConfig(level=logging.ERROR)
    summary = run_episode(
        entry.instruction,
        seed=entry.seed,
        plan="; ".join(entry.plan),
        progress=False,
        replan=-1 if max_replans is None else max_replans,
        inject=inject,
    )
    return {
        "id": entry.id,
        "success": summary["success"],
        "plan": summary["plan"],
        "steps": [(s["step"], s["success"]) for s in summary["steps"]],
        "replans": len(summary["replans"]),
        "replan_plans": [r["plan"] for r in summary["replans"]],
        "injected": summary["injected"],
        "failure": next((s["reason"] for s in summary["steps"] if not s["success"]), ""),
        "wall_s": summary["wall_time_s"],
    }


def run_config(entries: list[Any], kinds: list[str], max_replans: int, workers: int) -> list[dict[str, Any]]:
    done: dict[int, dict[str, Any]] = {}
    start = time.perf_counter()
    with episode_pool(workers) as pool:
        futures = {
            pool.submit(one, e, max_replans, k): i
            for i, (e, k) in enumerate(zip(entries, kinds, strict=True))
        }
        for future in as_completed(futures):
            done[futures[future]] = future.result()
            ok = sum(r["success"] for r in done.values())
            elapsed = time.perf_counter() - start
            print(f"    {len(done)}/{len(entries)} episodes, {ok} succeeded, {elapsed:.0f} s", flush=True)
    return [done[i] for i in range(len(entries))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=20, help="episodes per configuration")
    parser.add_argument("--inject", choices=("knock", "move", "both"), default="both")
    parser.add_argument("--replan", type=int, default=1, help="max replans per episode when replanning")
    parser.add_argument("--split", default="unseen", help="suite split of the episodes")
    parser.add_argument("--offset", type=int, default=0, help="skip this many episodes of the split first")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--suite", type=Path, default=Path("config/suites/kitchen_v1.yaml"))
    parser.add_argument("--quick", action="store_true", help="2 episodes per configuration")
    parser.add_argument("--out", type=Path, default=None, help="write every episode's outcome here (JSON)")
    parser.add_argument("--summarise", type=Path, default=None, help="only summarise a saved --out file")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    if args.summarise is not None:
        saved = json.loads(args.summarise.read_text())
        report(saved, len(saved["plain"]))
        return 0
    count = 2 if args.quick else args.episodes
    entries = [e for e in load_suite_entries(str(args.suite)) if e.split == args.split]
    entries = entries[args.offset : args.offset + count]
    if len(entries) < count:
        sys.exit(f"--split {args.split} has {len(entries)} episodes, fewer than {count}")
    kinds = [("knock", "move")[i % 2] if args.inject == "both" else args.inject for i in range(count)]
    results: dict[str, list[dict[str, Any]]] = {}
    for name, (replans, injected) in CONFIGS.items():
        print(f"  {name}: {count} episodes", flush=True)
        max_replans = args.replan if replans is None else replans
        results[name] = run_config(entries, kinds if injected else [""] * count, max_replans, args.workers)
    if args.out is not None:
        args.out.write_text(json.dumps(results, indent=1))
    report(results, count)
    return 0


def report(results: dict[str, list[dict[str, Any]]], count: int) -> None:
    figures = summarise(results, count)
    print(f"\n  {'configuration':<16} {'SR':>6} {'replans':>8} {'injected':>9}")
    for name, rows in results.items():
        sr = sum(r["success"] for r in rows) / count
        injected = sum(bool(r["injected"]) for r in rows)
        print(f"  {name:<16} {sr:6.3f} {sum(r['replans'] for r in rows):8d} {injected:9d}")
    print(
        f"\n  recovered {figures['recovered']} of {figures['recoverable']} recoverable failed episodes "
        f"({figures['recovered_fraction']}); in the {figures['episodes_without_failures']} episodes without "
        f"failures replanning changed {figures['changed_without_failures']}; of plain's "
        f"{figures['native_failures']} own failures it recovered {figures['native_recovered']}"
    )
    print(json.dumps(figures))


def summarise(results: dict[str, list[dict[str, Any]]], count: int) -> dict[str, Any]:
    inject, fixed = results["inject"], results["inject_replan"]
    recoverable = [i for i, r in enumerate(inject) if not r["success"] and r["injected"]]
    recovered = [i for i in recoverable if fixed[i]["success"]]
    pairs = list(zip(results["replan"], results["plain"], strict=True))
    clean = [(a, b) for a, b in pairs if b["success"]]  # no failure in the episode
    changed = [
        a
        for a, b in clean
        if (a["plan"], a["steps"], a["success"], a["replans"]) != (b["plan"], b["steps"], True, 0)
    ]
    native = [(a, b) for a, b in pairs if not b["success"]]
    return {
        "episodes_per_config": count,
        **{f"sr_{name}": sum(r["success"] for r in rows) / count for name, rows in results.items()},
        "replans_inject_replan": sum(r["replans"] for r in fixed),
        "replans_replan_no_injection": sum(r["replans"] for r in results["replan"]),
        "recoverable": len(recoverable),
        "recovered": len(recovered),
        "recovered_fraction": round(len(recovered) / len(recoverable), 3) if recoverable else None,
        "episodes_without_failures": len(clean),
        "changed_without_failures": len(changed),
        "native_failures": len(native),
        "native_recovered": sum(a["success"] for a, _ in native),
        "wall_s_per_episode": round(sum(r["wall_s"] for rs in results.values() for r in rs) / (4 * count), 1),
    }


if __name__ == "__main__":
    raise SystemExit(main())
