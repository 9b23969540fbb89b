"""Wall time and real-time factor of whole oracle episodes, cameras off and on.

    python bench/episode.py [--quick]

Runs suite instructions (split ``test``) with their gold plans through the full stack in the
embedded host — simulator, Theta* + Kitchen-R's controller, RMPflow pick-and-place, monitor, task
executor; no recorder, as in ``galley eval`` — first with the robot's cameras off, then with the
base RGB-D and wrist RGB cameras at 10 Hz, then the same with a subscriber on every camera image.
The simulator renders only the images someone receives: in the second configuration the monitor
watches both RGB topics and the report keeps the base RGB frames (as ``galley run --video``), and
nothing receives the depth image; the third renders all three, as when a recorder runs. Reports
wall seconds per episode and the real-time factor (simulated / wall seconds) of a warm process: one
untimed episode first pays for what a process does once (imports, numba's cached kernels), which
is reported apart as ``first_episode_extra_s`` (an ``eval`` of 50 episodes pays it once). The baseline is
Kitchen-R's own figure: about 60 s of wall time per oracle episode in Isaac Sim on an RTX 3060 Ti.
Targets (issue 7): >= 30x real time with cameras off, >= 5x with cameras on. Prints a table and,
last, one JSON line.

    python bench/episode.py --baseline [REF] [--episodes N] [--repeats R]

runs the cameras-off episodes side by side with the code of git commit REF (default: the commit
issue 35's episode work started from): each repeat runs one process on REF's code and one on this
tree's, alternately (see ``bench/_side_by_side.py``), each a warm-up episode then the N episodes.
It prints both real-time factors (median and best over repeats) and both medians per CPU second
(simulated seconds per second of the worker's CPU time: what a core-hour buys, and less moved by
whatever else the machine runs), their ratios new/old (issue 35: >= 1.5), and checks that every
episode's summary (steps, success, EM, sim time, motion metrics, start and end base positions;
everything but the wall time) is identical on both: the physics and the oracle did not change,
only what is around them. Against a REF from before a change of the oracle's behaviour (the
default's picks ended 0.5 s sooner, for one) they differ: ``--outcomes-may-differ`` then reports
which fields differ instead of failing.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from _side_by_side import (  # bench/, beside this script
    DEFAULT_BASELINE,
    REPO,
    checkout,
    comparable,
    run_worker,
)

import galley_episodes.episode as episode_module
from galley_learning.planners.configured import load_suite_entries
from galley_runtime.qos import QoS

KITCHEN_R_WALL_S_PER_EPISODE = 60.0


#: Every camera image of the robot; in ``galley eval`` / ``galley run --video`` without a recorder
#: nothing receives the depth image, so the simulator does not render it.
CAMERA_TOPICS = ("/camera/base/image_raw", "/camera/base/depth/image_raw", "/camera/wrist/image_raw")


@contextmanager
def every_image_received() -> Iterator[None]:
    """Episodes built meanwhile get a subscriber on every camera image, as a recorder would be."""
    original = episode_module.build_host

    def build_host(*args: Any, **kwargs: Any) -> Any:
        host = original(*args, **kwargs)
        consumer = host.participant("camera_consumer")
        for topic in CAMERA_TOPICS:
            consumer.create_subscription(topic, "sensor_msgs/msg/Image", lambda _: None, QoS(depth=1))
        return host

    episode_module.build_host = build_host
    try:
        yield
    finally:
        episode_module.build_host = original


#: Summary fields that depend on the machine's speed, not on what happened in the episode.
WALL_FIELDS = ("wall_time_s", "real_time_factor")


def run(entries: list, cameras: bool) -> dict[str, Any]:
    sim_s = 0.0
    walls = []
    succeeded = 0
    outcomes = []
    cpu_start = time.process_time()
    for entry in entries:
        start = time.perf_counter()
        summary = episode_module.run_episode(
            entry.instruction, seed=entry.seed, plan="; ".join(entry.plan), video=cameras, progress=False
        )
        walls.append(time.perf_counter() - start)
        sim_s += summary["sim_time_s"]
        succeeded += summary["success"]
        outcomes.append(comparable(summary, WALL_FIELDS))
    wall_s = sum(walls)
    return {
        "cpu_s": time.process_time() - cpu_start,
        "outcomes": outcomes,
        "walls": walls,
        "episodes": len(entries),
        "succeeded": succeeded,
        "wall_s_per_episode": wall_s / len(entries),
        "sim_s_per_episode": sim_s / len(entries),
        "rtf": sim_s / wall_s,
    }


def worker(chosen: list) -> None:
    """One side of a side-by-side run: a warm-up episode, then the episodes; JSON on stdout."""
    run(chosen[:1], cameras=False)
    off = run(chosen, cameras=False)
    cpu_rtf = off["sim_s_per_episode"] * off["episodes"] / off["cpu_s"]
    print(json.dumps({"rtf": off["rtf"], "cpu_rtf": cpu_rtf, "outcomes": off["outcomes"]}))


def side_by_side(ref: str, episodes: int, repeats: int, suite: str, may_differ: bool) -> None:
    """Cameras-off RTF of REF's code and this tree's, interleaved; identical outcomes checked."""
    args = ["--episodes", str(episodes), "--suite", suite]
    rtfs: dict[str, list[float]] = {"old": [], "new": []}
    cpu: dict[str, list[float]] = {"old": [], "new": []}
    outcomes: dict[str, list[Any]] = {}
    with checkout(ref) as old_root:
        for repeat in range(repeats):
            for side, root in (("old", old_root), ("new", REPO)):
                result = run_worker(Path(__file__).resolve(), root, args)
                rtfs[side].append(result["rtf"])
                cpu[side].append(result["cpu_rtf"])
                outcomes.setdefault(side, result["outcomes"])
                if result["outcomes"] != outcomes[side]:
                    sys.exit(f"{side} code gave different outcomes in repeat {repeat + 1}: not deterministic")
                print(
                    f"  repeat {repeat + 1} {side}: {result['rtf']:.1f}x real time, "
                    f"{result['cpu_rtf']:.1f}x per CPU second",
                    flush=True,
                )
    same = outcomes["old"] == outcomes["new"]
    differing = {
        o["seed"]: sorted(k for k in o.keys() | n.keys() if o.get(k) != n.get(k))
        for o, n in zip(outcomes["old"], outcomes["new"], strict=True)
        if o != n
    }
    median = {side: statistics.median(v) for side, v in rtfs.items()}
    cpu_median = {side: statistics.median(v) for side, v in cpu.items()}
    best = {side: max(v) for side, v in rtfs.items()}
    print(f"cameras off, {episodes} episodes x {repeats} repeats, old = {ref}, new = this tree")
    print(f"{'code':6s} {'median RTF':>11s} {'best RTF':>9s} {'median per CPU s':>17s}")
    for side in ("old", "new"):
        print(f"{side:6s} {median[side]:10.1f}x {best[side]:8.1f}x {cpu_median[side]:16.1f}x")
    print(
        f"new/old: median {median['new'] / median['old']:.2f}, best {best['new'] / best['old']:.2f}, "
        f"per CPU second {cpu_median['new'] / cpu_median['old']:.2f} (issue 35: >= 1.5)"
    )
    succeeded = sum(o["success"] for o in outcomes["new"])
    print(
        f"outcomes: {'identical' if same else 'DIFFERENT (seeds ' + str(differing) + ')'} "
        f"episode for episode ({succeeded}/{episodes} succeeded)"
    )
    print(
        json.dumps(
            {
                "baseline": ref,
                "episodes": episodes,
                "repeats": repeats,
                "rtf_cameras_off_old_median": round(median["old"], 1),
                "rtf_cameras_off_new_median": round(median["new"], 1),
                "rtf_ratio_median": round(median["new"] / median["old"], 2),
                "rtf_ratio_best": round(best["new"] / best["old"], 2),
                "cpu_rtf_ratio_median": round(cpu_median["new"] / cpu_median["old"], 2),
                "outcomes_identical": same,
            }
        )
    )
    if not same and not may_differ:
        sys.exit(1)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="one episode per configuration (under a minute)")
    parser.add_argument("--episodes", type=int, default=5, help="episodes per configuration (default 5)")
    parser.add_argument("--suite", default="kitchen_v1", help="suite of the episodes (default kitchen_v1)")
    parser.add_argument(
        "--baseline",
        nargs="?",
        const="DEFAULT",
        metavar="REF",
        help="cameras off, side by side with the code of git commit REF (default: issue 35's start)",
    )
    parser.add_argument("--repeats", type=int, default=3, help="side-by-side repeats (default 3)")
    parser.add_argument(
        "--outcomes-may-differ",
        action="store_true",
        help="with --baseline: report the episodes whose outcomes differ, not fail (REF behaves otherwise)",
    )
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    episodes = 1 if args.quick else args.episodes
    if args.baseline is not None:
        ref = DEFAULT_BASELINE if args.baseline == "DEFAULT" else args.baseline
        side_by_side(ref, episodes, 1 if args.quick else args.repeats, args.suite, args.outcomes_may_differ)
        return
    entries = load_suite_entries(args.suite)
    chosen = [e for e in entries if e.split == "test"][:episodes]
    if args.worker:
        worker(chosen)
        return
    cold = run(chosen[:1], cameras=False)  # the warm-up: a process's one-time costs
    off = run(chosen, cameras=False)
    on = run(chosen, cameras=True)
    with every_image_received():
        rgbd = run(chosen, cameras=True)
    print(
        f"{'configuration':28s} {'episodes':>8s} {'ok':>4s} {'sim s/ep':>9s} {'wall s/ep':>10s} "
        f"{'RTF':>7s}  target"
    )
    for name, r, target in (
        ("cameras off", off, 30.0),
        ("cameras on (eval, --video)", on, 5.0),
        ("every image received", rgbd, 5.0),
    ):
        mark = "ok" if r["rtf"] >= target else "MISSED"
        print(
            f"{name:28s} {r['episodes']:8d} {r['succeeded']:4d} {r['sim_s_per_episode']:9.1f} "
            f"{r['wall_s_per_episode']:10.1f} {r['rtf']:6.1f}x  >= {target:g}x {mark}"
        )
    print(
        f"Kitchen-R (Isaac Sim, RTX 3060 Ti): about {KITCHEN_R_WALL_S_PER_EPISODE:.0f} s "
        "of wall time per episode"
    )
    print(
        json.dumps(
            {
                "episodes": off["episodes"],
                "wall_s_per_episode_cameras_off": round(off["wall_s_per_episode"], 2),
                "wall_s_per_episode_cameras_on": round(on["wall_s_per_episode"], 2),
                "rtf_cameras_off": round(off["rtf"], 1),
                "rtf_cameras_on": round(on["rtf"], 1),
                "wall_s_per_episode_every_image": round(rgbd["wall_s_per_episode"], 2),
                "rtf_every_image": round(rgbd["rtf"], 1),
                "speedup_vs_kitchen_r_wall_cameras_on": round(
                    KITCHEN_R_WALL_S_PER_EPISODE / on["wall_s_per_episode"], 1
                ),
                "success_rate_cameras_off": off["succeeded"] / off["episodes"],
                "first_episode_extra_s": round(cold["walls"][0] - off["walls"][0], 2),
            }
        )
    )


if __name__ == "__main__":
    main()
