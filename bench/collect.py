"""Episodes per hour of ``galley collect``: one worker against ``--workers`` workers, same episodes.

    python bench/collect.py [--quick] [--episodes N] [--workers K] [--image-size WxH]

Records the same randomised oracle episodes (cameras at 10 Hz, monitor and recorder on) first with
one worker process, then with K (default: the CPU count), and reports episodes per hour, the
speed-up of K workers over one, and the ratio to issue 10's target of 1,000 episodes per hour on
2 CPU cores. Episodes per hour depend on the instructions drawn (plans of 4 to 8 steps), so both
configurations run the same ones. Prints a table and, last, one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from galley_episodes import CollectConfig, collect, parse_image_size

TARGET_EPISODES_PER_HOUR = 1000.0


def run(episodes: int, workers: int, size: tuple[int, int], root: Path) -> dict[str, float]:
    out = root / f"workers_{workers}"
    start = time.perf_counter()
    report = collect(
        CollectConfig(episodes=episodes, workers=workers, image_size=size), out=out, progress=False
    )
    wall_s = time.perf_counter() - start
    sim_s = sum(r["sim_time_s"] or 0.0 for r in report["episodes"].values())
    bag_mb = sum(f.stat().st_size for f in out.rglob("*.mcap")) / 1e6
    shutil.rmtree(out)
    return {
        "workers": workers,
        "episodes": episodes,
        "succeeded": report["episodes_succeeded"],
        "wall_s": wall_s,
        "episodes_per_hour": episodes / wall_s * 3600.0,
        "sim_s_per_episode": sim_s / episodes,
        "bag_mb_per_episode": bag_mb / episodes,
    }


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
    args = parser.parse_args()
    episodes = 2 if args.quick else args.episodes
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
