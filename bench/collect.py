"""Episodes per hour of ``galley collect``: one worker against ``--workers`` workers, same episodes.

    python bench/collect.py [--quick] [--episodes N] [--workers K] [--image-size WxH]

Records the same randomised oracle episodes (cameras at 10 Hz, monitor and recorder on) first with
one worker process, then with K (default: the CPU count), and reports episodes per hour, the
speed-up of K workers over one, and the ratio to issue 10's target of 1,000 episodes per hour on
2 CPU cores. Episodes per hour depend on the instructions drawn (plans of 4 to 8 steps), so both
configurations run the same ones. Prints a table and, last, one JSON line.

    python bench/collect.py --baseline [REF] [--episodes N] [--workers K] [--repeats R]

collects the same episodes with K workers on the code of git commit REF (default: the commit
issue 35's episode work started from) and on this tree's, alternately, each in its own process
(see ``bench/_side_by_side.py``), and prints both rates (median over repeats), the ratio new/old
(issue 35: >= 1.3) and whether every episode's record (success, steps, simulated time) matches,
exiting 1 if one differs; ``--outcomes-may-differ`` reports them instead, for a REF from before a
change of the oracle's behaviour (see ``bench/episode.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _side_by_side import (  # bench/, beside this script
    DEFAULT_BASELINE,
    REPO,
    checkout,
    comparable,
    run_worker,
)

from galley_episodes import CollectConfig, collect, parse_image_size

TARGET_EPISODES_PER_HOUR = 1000.0


#: Fields of an episode's record about the machine (its speed, the worker's pid), not the episode.
WALL_FIELDS = ("wall_time_s", "real_time_factor", "wall_s", "ran_on")


def run(episodes: int, workers: int, size: tuple[int, int], root: Path) -> dict[str, Any]:
    out = root / f"workers_{workers}"
    start = time.perf_counter()
    report = collect(
        CollectConfig(episodes=episodes, workers=workers, image_size=size), out=out, progress=False
    )
    wall_s = time.perf_counter() - start
    sim_s = sum(r["sim_time_s"] or 0.0 for r in report["episodes"].values())
    bag_mb = sum(f.stat().st_size for f in out.rglob("*.mcap")) / 1e6
    shutil.rmtree(out)
    outcomes = {name: comparable(record, WALL_FIELDS) for name, record in sorted(report["episodes"].items())}
    return {
        "outcomes": outcomes,
        "workers": workers,
        "episodes": episodes,
        "succeeded": report["episodes_succeeded"],
        "wall_s": wall_s,
        "episodes_per_hour": episodes / wall_s * 3600.0,
        "sim_s_per_episode": sim_s / episodes,
        "bag_mb_per_episode": bag_mb / episodes,
    }


def side_by_side(ref: str, args: argparse.Namespace, episodes: int, repeats: int) -> None:
    """Episodes per hour of REF's code and this tree's, interleaved; matching records checked."""
    w, h = args.image_size
    worker_args = ["--episodes", str(episodes), "--workers", str(args.workers), "--image-size", f"{w}x{h}"]
    rates: dict[str, list[float]] = {"old": [], "new": []}
    outcomes: dict[str, Any] = {}
    with checkout(ref) as old_root:
        for repeat in range(repeats):
            for side, root in (("old", old_root), ("new", REPO)):
                result = run_worker(Path(__file__).resolve(), root, worker_args)
                rates[side].append(result["episodes_per_hour"])
                outcomes.setdefault(side, result["outcomes"])
                print(
                    f"  repeat {repeat + 1} {side}: {result['episodes_per_hour']:.0f} episodes/h", flush=True
                )
    same = outcomes["old"] == outcomes["new"]
    for name, record in outcomes["old"].items():
        if record != outcomes["new"].get(name):
            print(f"  {name} differs: old {record}, new {outcomes['new'].get(name)}")
    median = {side: statistics.median(v) for side, v in rates.items()}
    print(
        f"galley collect side by side: {episodes} episodes, {args.workers} workers, cameras {w}x{h}, "
        f"{repeats} repeats, old = {ref}, new = this tree"
    )
    for side in ("old", "new"):
        print(f"{side:4s} {median[side]:8.0f} episodes/h (median), best {max(rates[side]):.0f}")
    ratio = median["new"] / median["old"]
    print(f"new/old: {ratio:.2f} (issue 35: >= 1.3); records {'identical' if same else 'DIFFERENT'}")
    print(
        json.dumps(
            {
                "baseline": ref,
                "episodes": episodes,
                "workers": args.workers,
                "episodes_per_hour_old_median": round(median["old"], 1),
                "episodes_per_hour_new_median": round(median["new"], 1),
                "ratio_median": round(ratio, 2),
                "records_identical": same,
            }
        )
    )
    if not same and not args.outcomes_may_differ:
        sys.exit(1)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="2 episodes per configuration (about a minute)")
    parser.add_argument("--episodes", type=int, default=10, help="episodes per configuration (default 10)")
    parser.add_argument(
        "--workers", type=int, default=os.cpu_count() or 2, help="parallel workers (default: CPUs)"
    )
    parser.add_argument(
        "--image-size", type=parse_image_size, default=(320, 240), help="camera WxH (default 320x240)"
    )
    parser.add_argument(
        "--baseline",
        nargs="?",
        const="DEFAULT",
        metavar="REF",
        help="side by side with the code of git commit REF (default: issue 35's start)",
    )
    parser.add_argument("--repeats", type=int, default=3, help="side-by-side repeats (default 3)")
    parser.add_argument(
        "--outcomes-may-differ",
        action="store_true",
        help="with --baseline: report the episodes whose records differ, not fail (REF behaves otherwise)",
    )
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    episodes = 2 if args.quick else args.episodes
    if args.baseline is not None:
        ref = DEFAULT_BASELINE if args.baseline == "DEFAULT" else args.baseline
        side_by_side(ref, args, episodes, 1 if args.quick else args.repeats)
        return
    if args.worker:
        with tempfile.TemporaryDirectory(prefix="galley_bench_collect_") as tmp:
            # Untimed: a fresh checkout compiles numba's kernels into its cache once; then the
            # timed run's workers load them, as they do on a checkout that has run before.
            run(1, 1, args.image_size, Path(tmp) / "warm_up")
            result = run(episodes, args.workers, args.image_size, Path(tmp))
        print(json.dumps(result))
        return
    with tempfile.TemporaryDirectory(prefix="galley_bench_collect_") as tmp:
        one = run(episodes, 1, args.image_size, Path(tmp))
        many = run(episodes, args.workers, args.image_size, Path(tmp))
    w, h = args.image_size
    print(
        f"galley collect: {episodes} oracle episodes per configuration, cameras {w}x{h} at 10 Hz, "
        f"{os.cpu_count()} CPUs"
    )
    print(
        f"{'workers':>8} {'episodes/h':>11} {'wall s':>8} {'sim s/episode':>14} "
        f"{'bag MB/episode':>15} {'succeeded':>10}"
    )
    for r in (one, many):
        print(
            f"{r['workers']:>8} {r['episodes_per_hour']:>11.0f} {r['wall_s']:>8.1f} "
            f"{r['sim_s_per_episode']:>14.1f} {r['bag_mb_per_episode']:>15.1f} "
            f"{r['succeeded']:>7}/{r['episodes']}"
        )
    print(
        json.dumps(
            {
                "episodes_per_hour_1_worker": round(one["episodes_per_hour"], 1),
                f"episodes_per_hour_{args.workers}_workers": round(many["episodes_per_hour"], 1),
                "speedup_workers": round(many["episodes_per_hour"] / one["episodes_per_hour"], 2),
                "ratio_to_target_1000_per_hour": round(
                    many["episodes_per_hour"] / TARGET_EPISODES_PER_HOUR, 3
                ),
                "sim_s_per_episode": round(many["sim_s_per_episode"], 1),
                "bag_mb_per_episode": round(many["bag_mb_per_episode"], 1),
            }
        )
    )


if __name__ == "__main__":
    main()
