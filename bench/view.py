"""What the live view costs the simulation: the same episode without the view, with it, and watched.

    python bench/view.py [--quick]

Runs one oracle episode as ``galley run`` does (every node, the recorder writing its bag, cameras
off) in three configurations, interleaved so that a busy machine slows them alike: ``off`` (no
view), ``view`` (``--view``: the server and its bus observer, nobody connected) and ``watched``
(``--view`` with a protocol client subscribed to every channel and decoding every message, in its
own process as a browser or Foxglove is: ``python -m galley_runtime.view.client``).
Reports each configuration's real-time factor (simulated / wall seconds, the best of the repeats,
as noise only ever slows a run) and the CPU seconds of the episode's process (every thread: the
simulation, the view's worker, the SDK's server; the least of the repeats), with the ratios to
``off``; issue 36's target: the view costs < 10 %.
--quick: one repeat of a 40 s step; else three repeats. Prints a table and, last, one JSON line.
"""

from __future__ import annotations

import argparse
import json
import logging
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
    """One episode; returns its summary plus the messages a client decoded and the CPU it took."""
    cpu = time.process_time()
    summary = _episode(out, view, watched)
    return summary | {"cpu_s": time.process_time() - cpu}


def _episode(out: Path, view: bool, watched: bool) -> dict[str, Any]:
    if not view:
        return run_episode(INSTRUCTION, plan=PLAN, out_dir=out, progress=False) | {"decoded": 0}
    with serve_view(0, announce=False) as live:
        client = None
        if watched:
            url = f"ws://127.0.0.1:{live.front.port}"  # type: ignore[attr-defined]
            client = subprocess.Popen(
                [sys.executable, "-m", "galley_runtime.view.client", url, "--seconds", "3600"],
                stdout=subprocess.PIPE,
                text=True,
            )
        summary = run_episode(INSTRUCTION, plan=PLAN, out_dir=out, progress=False)
    decoded = 0
    if client is not None:  # the server has stopped: the client prints its counts and ends
        out_text = client.communicate(timeout=60)[0]
        decoded = sum(int(line.split()[-2]) for line in out_text.splitlines() if line.endswith(" messages"))
    return summary | {"decoded": decoded, "dropped": live.dropped}  # type: ignore[attr-defined]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one repeat (within about a minute)")
    args = parser.parse_args()
    logging.getLogger().setLevel(logging.ERROR)
    repeats = 1 if args.quick else 3
    configs = {"off": (False, False), "view": (True, False), "watched": (True, True)}
    results: dict[str, list[dict[str, Any]]] = {name: [] for name in configs}
    with tempfile.TemporaryDirectory() as tmp:
        run_episode(INSTRUCTION, plan=PLAN, out_dir=Path(tmp) / "warm-up", progress=False)  # imports, caches
        for r in range(repeats):
            for name, (view, watched) in configs.items():
                results[name].append(episode(Path(tmp) / f"{name}-{r}", view, watched))
    rtf = {name: max(s["real_time_factor"] for s in runs) for name, runs in results.items()}
    cpu = {name: min(s["cpu_s"] for s in runs) for name, runs in results.items()}
    print(f"live view cost, one {results['off'][0]['sim_time_s']:.0f} s episode, best of {repeats}")
    head = ("configuration", "real-time factor", "vs off", "CPU s", "vs off", "decoded")
    print(f"{head[0]:14s} {head[1]:>17s} {head[2]:>8s} {head[3]:>7s} {head[4]:>8s} {head[5]:>8s}")
    for name, runs in results.items():
        print(
            f"{name:14s} {rtf[name]:17.2f} {rtf[name] / rtf['off']:8.3f} {cpu[name]:7.2f} "
            f"{cpu[name] / cpu['off']:8.3f} {runs[-1]['decoded']:8d}"
        )
    figures = {
        "rtf_off": rtf["off"],
        "rtf_view": rtf["view"],
        "rtf_watched": rtf["watched"],
        "rtf_ratio_view_vs_off": round(rtf["view"] / rtf["off"], 3),
        "rtf_ratio_watched_vs_off": round(rtf["watched"] / rtf["off"], 3),
        "cpu_s_off": round(cpu["off"], 2),
        "cpu_ratio_view_vs_off": round(cpu["view"] / cpu["off"], 3),
        "cpu_ratio_watched_vs_off": round(cpu["watched"] / cpu["off"], 3),
        "messages_decoded_watched": results["watched"][-1]["decoded"],
        "messages_dropped_watched": results["watched"][-1]["dropped"],
        "repeats": repeats,
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
