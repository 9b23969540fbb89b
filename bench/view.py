"""What the live view costs the simulation: the same episode without the view, with it, and watched.

    python bench/view.py [--quick]

Runs one oracle episode as ``galley run`` does (every node, the recorder writing its bag, cameras
off) in three configurations, interleaved so that a busy machine slows them alike: ``off`` (no
view), ``view`` (``--view``: the server and its bus observer, nobody connected) and ``watched``
(``--view`` with a protocol client subscribed to every channel and decoding every message, in its
own process as a browser or Foxglove is: ``python -m galley_runtime.view.client``).
Each round runs the three in a rotated order. Reports each configuration's real-time factor
(simulated / wall seconds) as the best of the rounds, as noise only ever slows a run, and, as the
spread, the ratio to ``off`` within each round (median, least, most): on a shared machine a
neighbour's job lands on one run of a round, not on all. Also the CPU seconds of the episode's
process (every thread: the simulation, the view's worker, the SDK's server; the least of the
rounds), with the ratios to ``off``, and the CPU seconds of its threads other than the
simulation's (the median): the view's own work, apart from its bus observer, which runs on the
simulation's thread. And that observer's own time (``observer``: the share of the episode's
wall time that the simulation's thread spent in it, the median): with the other threads' CPU beside
``off``'s, the view's cost measured directly, where the real-time factors of runs a few seconds
long swing by 10 % or more on a shared machine. Issue 36's target: the view costs < 10 %.
--quick: one round of a 40 s step; else five (--repeats). Prints a table and, last, one JSON line.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from galley_episodes import run_episode
from galley_runtime.view import serve_view

INSTRUCTION = "Move the bowl to the green zone"
PLAN = "move to the blue zone"


def episode(out: Path, view: bool, watched: bool) -> dict[str, Any]:
    """One episode; returns its summary plus the messages a client decoded and the CPU it took.

    ``cpu_s`` is the process's (every thread), ``other_threads_cpu_s`` all but this, the
    simulation's thread: the view's worker and servers (and, in every configuration, the renderer's
    few threads).
    """
    cpu, main = time.process_time(), time.thread_time()
    summary = _episode(out, view, watched)
    cpu, main = time.process_time() - cpu, time.thread_time() - main
    return summary | {"cpu_s": cpu, "other_threads_cpu_s": cpu - main}


def _episode(out: Path, view: bool, watched: bool) -> dict[str, Any]:
    if not view:
        return run_episode(INSTRUCTION, plan=PLAN, out_dir=out, progress=False) | {
            "decoded": 0,
            "observer_share": 0.0,
        }
    with serve_view(0, announce=False) as live:
        observer_s = _time_observer(live)
        client = None
        if watched:
            url = f"ws://127.0.0.1:{live.front.port}"  # type: ignore[attr-defined]
            client = subprocess.Popen(
                [sys.executable, "-m", "galley_runtime.view.client", url, "--seconds", "3600"],
                stdout=subprocess.PIPE,
                text=True,
            )
            tf = live._channels["/tf"].channel  # type: ignore[attr-defined]
            deadline = time.monotonic() + 30.0
            while not tf.has_sinks() and time.monotonic() < deadline:  # watched from the start
                time.sleep(0.05)
        summary = run_episode(INSTRUCTION, plan=PLAN, out_dir=out, progress=False)
    decoded = 0
    if client is not None:  # the server has stopped: the client prints its counts and ends
        out_text = client.communicate(timeout=60)[0]
        decoded = sum(int(line.split()[-2]) for line in out_text.splitlines() if line.endswith(" messages"))
    wall_s = summary["sim_time_s"] / summary["real_time_factor"]
    return summary | {
        "decoded": decoded,
        "dropped": live.dropped,  # type: ignore[attr-defined]
        "observer_share": observer_s[0] / wall_s,
    }


def _time_observer(live: Any) -> list[float]:
    """Time the view's bus observer: what it takes from the simulation's thread (seconds, summed).

    The observer is bound when a host is attached, after this, so the timed one is what runs.
    Returns the one-element list the sum accumulates in.
    """
    total = [0.0]
    observe, clock = live._observe, time.perf_counter

    def timed(topic: str, type_name: str, msg: Any) -> None:
        t0 = clock()
        observe(topic, type_name, msg)
        total[0] += clock() - t0

    live._observe = timed
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one round (within about a minute)")
    parser.add_argument("--repeats", type=int, default=5, help="rounds of the three configurations")
    args = parser.parse_args()
    logging.getLogger().setLevel(logging.ERROR)
    repeats = 1 if args.quick else args.repeats
    configs = {"off": (False, False), "view": (True, False), "watched": (True, True)}
    results: dict[str, list[dict[str, Any]]] = {name: [] for name in configs}
    with tempfile.TemporaryDirectory() as tmp:
        run_episode(INSTRUCTION, plan=PLAN, out_dir=Path(tmp) / "warm-up", progress=False)  # imports, caches
        for r in range(repeats):
            names = list(configs)[r % 3 :] + list(configs)[: r % 3]  # no configuration always first
            for name in names:
                view, watched = configs[name]
                results[name].append(episode(Path(tmp) / f"{name}-{r}", view, watched))
    rtf = {name: max(s["real_time_factor"] for s in runs) for name, runs in results.items()}
    cpu = {name: min(s["cpu_s"] for s in runs) for name, runs in results.items()}
    others = {
        name: statistics.median(s["other_threads_cpu_s"] for s in runs) for name, runs in results.items()
    }
    observer = {name: statistics.median(s["observer_share"] for s in runs) for name, runs in results.items()}
    rounds = {
        name: sorted(
            s["real_time_factor"] / o["real_time_factor"] for s, o in zip(runs, results["off"], strict=True)
        )
        for name, runs in results.items()
    }
    print(f"live view cost, one {results['off'][0]['sim_time_s']:.0f} s episode, {repeats} round(s)")
    widths = {"configuration": -14, "best RTF": 9, "vs off": 7, "round median": 13, "range": 10}
    widths |= {"CPU s": 6, "CPU vs off": 11, "not sim thread": 15, "observer": 9, "decoded": 8}
    print(" ".join(f"{h:{'<' if w < 0 else '>'}{abs(w)}s}" for h, w in widths.items()))
    for name, runs in results.items():
        ratios = rounds[name]
        spread = f"{ratios[0]:.2f}-{ratios[-1]:.2f}"
        print(
            f"{name:14s} {rtf[name]:9.2f} {rtf[name] / rtf['off']:7.3f} {statistics.median(ratios):13.3f} "
            f"{spread:>10s} {cpu[name]:6.2f} {cpu[name] / cpu['off']:11.3f} "
            f"{others[name]:15.2f} {observer[name]:9.2%} {runs[-1]['decoded']:8d}"
        )
    figures = {
        "rtf_off": rtf["off"],
        "rtf_view": rtf["view"],
        "rtf_watched": rtf["watched"],
        "rtf_ratio_view_vs_off": round(rtf["view"] / rtf["off"], 3),
        "rtf_ratio_watched_vs_off": round(rtf["watched"] / rtf["off"], 3),
        "round_ratio_view_median": round(statistics.median(rounds["view"]), 3),
        "round_ratio_watched_median": round(statistics.median(rounds["watched"]), 3),
        "round_ratio_watched_min": round(rounds["watched"][0], 3),
        "round_ratio_watched_max": round(rounds["watched"][-1], 3),
        "cpu_s_off": round(cpu["off"], 2),
        "cpu_ratio_view_vs_off": round(cpu["view"] / cpu["off"], 3),
        "cpu_ratio_watched_vs_off": round(cpu["watched"] / cpu["off"], 3),
        "other_threads_cpu_s_off": round(others["off"], 3),
        "other_threads_cpu_s_view": round(others["view"], 3),
        "other_threads_cpu_s_watched": round(others["watched"], 3),
        "observer_share_view": round(observer["view"], 4),
        "observer_share_watched": round(observer["watched"], 4),
        "messages_decoded_watched": results["watched"][-1]["decoded"],
        "messages_dropped_watched": results["watched"][-1]["dropped"],
        "repeats": repeats,
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
