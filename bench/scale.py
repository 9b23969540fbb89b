"""Episodes per hour against workers: local processes against Ray tasks on this machine, same episodes.

    python bench/scale.py [--quick] [--episodes N] [--image-size WxH]

Runs the same ``galley collect`` episodes (oracle, one move each, cameras at 10 Hz, monitor and
recorder on, the bag written) four ways, in this order: 1 local worker process, Ray with 1 CPU,
2 local worker processes, Ray with 2 CPUs (a Ray instance started here with that many CPUs). Each
goes through the runner ``galley collect`` uses (galley_episodes.runners.LocalRunner, or
galley_episodes.cluster_ray.RayRunner for ``--cluster``): on Ray every episode's files travel back to
the driver through the object store and are written into the output folder whole, the transport
a real cluster uses.

Start-up is a one-time cost of a command, not of an episode, and is timed apart: Ray's start
(``ray.init``) and the workers' start with their first import of galley (one warm-up task per
worker, which also loads the simulator). The per-episode figures time the episodes alone, from
the first submission to the last episode's files written. One episode runs in this process first,
so that galley's numba kernels are compiled and cached on disk before any configuration (else the
first one pays the compilation). Reports episodes per hour and wall seconds per episode for each,
the ratio Ray/local of the seconds per episode at the same worker count, and the speed-up from 1 to
2 workers of each. As the episodes' own speed follows the load of a shared machine, Ray's overhead
is also given apart: its time per episode outside the episode function beyond the local pool's,
against the episode's length (target: within 5 %). Prints a table and, last, one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from concurrent.futures import wait
from pathlib import Path

import ray

from galley_episodes import CollectConfig
from galley_episodes import parse_image_size as image_size
from galley_episodes.cluster_ray import RayRunner
from galley_episodes.collection import _choose, _params_yaml, _run_one  # the command's own steps
from galley_episodes.runners import EpisodeResources, EpisodeRunner, LocalRunner
from galley_learning.planners.configured import load_suite_entries
from galley_runtime.config_files import find_scene


def _warm(seconds: float) -> int:
    """A worker's start: galley's episode code and the simulator imported; held so every worker gets one."""
    import galley_episodes.collection  # noqa: F401, PLC0415 (deferred: the import is what is timed)
    import galley_sim.simulator  # noqa: F401, PLC0415 (deferred: the import is what is timed)

    time.sleep(seconds)
    return os.getpid()


def run(kind: str, workers: int, episodes: int, size: tuple[int, int], root: Path) -> dict[str, float]:
    """One configuration: ``kind`` ``local`` or ``ray`` with ``workers``; its figures."""
    out = root / f"{kind}_{workers}"
    (out / ".work").mkdir(parents=True)
    config = CollectConfig(episodes=episodes, image_size=size, steps=1)
    params = out / "params.yaml"
    params.write_text(_params_yaml(config))
    scene = find_scene(config.scene)
    entries = [e for e in load_suite_entries(config.suite) if e.split == "train"]
    start = time.perf_counter()
    runner: EpisodeRunner
    if kind == "warm-up":  # one episode in this process
        _run_one(
            **dict(zip(("instruction", "seed", "plan"), _choose(config, 0, entries, scene), strict=True)),
            scene=scene.name,
            work=str(out / ".work" / "ep"),
            params=str(params),
            perturb=0.0,
        )
        shutil.rmtree(out)
        return {}
    if kind == "ray":
        ray.init(address="local", num_cpus=workers, include_dashboard=False, logging_level="ERROR")
        runner = RayRunner("local", workers=workers, resources=EpisodeResources())
    else:
        runner = LocalRunner(workers)
    with runner:
        wait([runner.submit(_warm, seconds=2.0) for _ in range(workers)])
        start_s = time.perf_counter() - start
        start = time.perf_counter()
        futures = []
        for number in range(episodes):
            instruction, seed, plan = _choose(config, number, entries, scene)
            work = str(out / ".work" / f"ep_{number:06d}")
            futures.append(
                runner.submit(
                    _run_one,
                    instruction=instruction,
                    seed=seed,
                    plan=plan,
                    scene=scene.name,
                    work=work,
                    params=str(params),
                    perturb=0.0,
                    output="work",
                    files=("params",),
                )
            )
        summaries = [f.result() for f in futures]
        wall_s = time.perf_counter() - start
    if kind == "ray":
        ray.shutdown()
    bag_mb = sum(f.stat().st_size for f in out.rglob("*.mcap")) / 1e6
    shutil.rmtree(out)
    return {
        "kind": kind,
        "workers": workers,
        "init_s": start_s,
        "wall_s": wall_s,
        "s_per_episode": wall_s / episodes,
        "episodes_per_hour": episodes / wall_s * 3600.0,
        "in_worker_s": sum(s["collect_wall_s"] for s in summaries) / episodes,
        "bag_mb_per_episode": bag_mb / episodes,
        "outcomes": [(s["success"], s["sim_time_s"], s["motion"]) for s in summaries],
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="2 episodes per configuration")
    parser.add_argument("--episodes", type=int, default=8, help="episodes per configuration (default 8)")
    parser.add_argument("--image-size", type=image_size, default=(64, 48), help="camera WxH (default 64x48)")
    args = parser.parse_args()
    episodes = 2 if args.quick else args.episodes
    results: dict[tuple[str, int], dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="galley_bench_scale_") as tmp:
        run("warm-up", 0, 1, args.image_size, Path(tmp))  # compiles and caches the numba kernels
        for workers in (1, 2):
            for kind in ("local", "ray"):
                results[kind, workers] = run(kind, workers, episodes, args.image_size, Path(tmp))
    same = all(results["ray", w]["outcomes"] == results["local", w]["outcomes"] for w in (1, 2))
    w, h = args.image_size
    print(
        f"galley collect --steps 1: {episodes} episodes per configuration, cameras {w}x{h} at 10 Hz, "
        f"{os.cpu_count()} CPUs (load average {os.getloadavg()[0]:.1f} at the end); ray {ray.__version__}; "
        "Ray's workers run at nice 15, which matters only where other processes compete for the CPUs"
    )
    print(
        f"{'runner':>7} {'workers':>8} {'episodes/h':>11} {'s/episode':>10} {'in episode s':>13} "
        f"{'outside s':>10} {'start s':>8} {'bag MB/ep':>10}"
    )
    for r in results.values():
        r["outside_s"] = r["workers"] * r["s_per_episode"] - r["in_worker_s"]
        print(
            f"{r['kind']:>7} {r['workers']:>8} {r['episodes_per_hour']:>11.0f} {r['s_per_episode']:>10.2f} "
            f"{r['in_worker_s']:>13.2f} {r['outside_s']:>10.2f} {r['init_s']:>8.1f} "
            f"{r['bag_mb_per_episode']:>10.2f}"
        )
    print(
        "s/episode: wall / episodes; in episode s: a worker's time in the episode function (simulation,"
        " recording); outside s: workers x s/episode - in episode s, the time a worker spends per episode"
        " on anything else (scheduling, shipping files, idle)"
    )
    ratio = {n: results["ray", n]["s_per_episode"] / results["local", n]["s_per_episode"] for n in (1, 2)}
    # Ray's own cost per episode: its time outside the episode beyond the local pool's, against the
    # episode's length. The wall ratio above also holds how fast the episodes themselves ran, which
    # on a shared machine follows the other processes' load more than the runner.
    extra = {
        n: (results["ray", n]["outside_s"] - results["local", n]["outside_s"])
        / results["ray", n]["in_worker_s"]
        for n in (1, 2)
    }
    scaling = {
        k: results[k, 2]["episodes_per_hour"] / results[k, 1]["episodes_per_hour"] for k in ("local", "ray")
    }
    print(
        f"Ray/local seconds per episode: {ratio[1]:.3f} with 1 worker, {ratio[2]:.3f} with 2 "
        f"(target <= 1.05); 1 -> 2 workers: local x{scaling['local']:.2f}, Ray x{scaling['ray']:.2f}; "
        f"same outcomes episode for episode: {same}"
    )
    print(
        f"Ray's overhead beyond local processes, per episode: {100 * extra[1]:+.1f} % with 1 worker, "
        f"{100 * extra[2]:+.1f} % with 2 (target within 5 %)"
    )
    figures = {
        f"{k}_episodes_per_hour_{n}_workers": round(results[k, n]["episodes_per_hour"], 1)
        for n in (1, 2)
        for k in ("local", "ray")
    }
    figures |= {
        "ray_over_local_s_per_episode_1_worker": round(ratio[1], 3),
        "ray_over_local_s_per_episode_2_workers": round(ratio[2], 3),
        "scaling_1_to_2_workers_local": round(scaling["local"], 2),
        "scaling_1_to_2_workers_ray": round(scaling["ray"], 2),
        "ray_overhead_pct_1_worker": round(100 * extra[1], 2),
        "ray_overhead_pct_2_workers": round(100 * extra[2], 2),
        "ray_outside_episode_s_1_worker": round(results["ray", 1]["outside_s"], 2),
        "local_outside_episode_s_1_worker": round(results["local", 1]["outside_s"], 2),
        "ray_over_local_in_episode_s_1_worker": round(
            results["ray", 1]["in_worker_s"] / results["local", 1]["in_worker_s"], 3
        ),
        "ray_start_s": round(max(results["ray", n]["init_s"] for n in (1, 2)), 1),
        "local_start_s": round(max(results["local", n]["init_s"] for n in (1, 2)), 1),
        "episodes_per_configuration": episodes,
        "same_outcomes": same,
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
