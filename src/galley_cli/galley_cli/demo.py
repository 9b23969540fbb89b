"""``galley demo``: a tour of the kitchen's zones on the built-in simulator, with a picture.

Runs the sim, map_server, global_planner and diff_drive_controller nodes in the embedded host on
an episode drawn from ``--seed``, and sends the base to the approach pose of each zone in turn
(what the task executor will do for ``move to the <zone> zone`` steps). Shows progress per goal
and ends with a report in the output folder: ``summary.json`` (per goal: outcome, simulated time,
final distance and heading error against ground truth, contacts) and ``tour.png`` (the top-down
image with the planned paths and the driven trajectory). The tasks issue replaces this with
``galley run``.

The graph is the stack's ``tour`` (galley_nodes.stack). The command gives the simulator ``--scene``
and ``--seed`` (a ``--params`` file's values there are replaced, with a note); a ``--params`` file's
map (``map_server.yaml_filename``) and, without ``--cameras``, ``sim.cameras_enabled`` win over the
command's, with a note (:mod:`galley_episodes.overrides`).
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path
from typing import Any

import numpy as np

from galley_cli import SCENE_HELP, add_params_option, seed_number
from galley_core.geometry import Pose2D, normalize_angle
from galley_episodes.bringup import Given, build_host, stack_settings
from galley_episodes.overrides import PRECEDENCE_HELP, shown_path
from galley_episodes.report import TopicLog, top_down_axes
from galley_episodes.scenes import resolve_scene
from galley_nodes import stack
from galley_runtime import messages
from galley_runtime.conversions import pose_msg
from galley_runtime.msg_constants import ACTION_FAILED, ACTION_SUCCEEDED
from galley_runtime.qos import QoS

__all__ = ["add_parser", "run_tour"]

GOAL_TIMEOUT_S = 120.0


def run_tour(
    *,
    scene_name: str,
    seed: int,
    zones: list[str] | None,
    params_files: list[Path],
    out_dir: Path,
    cameras: bool,
) -> dict[str, Any]:
    """Run the tour and write its report; returns the summary."""
    files = resolve_scene(scene_name, say=lambda line: print(f"galley demo: {line}", flush=True))
    map_file = files.map
    mode = stack.Mode(graph="tour")
    given = {
        "scene": Given(files.ref, f"--scene ({scene_name})"),
        "seed": Given(seed, f"--seed ({seed})"),
        "cameras": Given(
            cameras, "--cameras" if cameras else "the cameras being off without --cameras", owned=cameras
        ),
        "map": Given(str(map_file), f"the scene's map {shown_path(map_file)}", owned=False),
    }
    settings = stack_settings(mode, given, params_files)
    for note in settings.notes:
        print(note, flush=True)
    host = build_host(mode, settings, params_files)
    sim_node: Any = host.node("sim")
    recorder = TopicLog(host)
    goals = host.participant("galley_demo").create_publisher(
        "/goal_pose", "geometry_msgs/msg/PoseStamped", QoS()
    )
    status: list[Any] = []
    host.participant("galley_demo_status").create_subscription(
        "/navigation/status", "galley_msgs/msg/ActionStatus", status.append, QoS.latched(10)
    )
    scene = sim_node.scene
    zones = zones or scene.zone_names
    for name in zones:
        scene.zone(name)  # an unknown zone fails before anything runs, listing the valid ones
    out_dir.mkdir(parents=True, exist_ok=True)  # only once every input has been checked
    host.run_for(1.0)

    wall_start = time.perf_counter()
    results = []
    for i, name in enumerate(zones, 1):
        x, y, yaw = scene.zone(name).approach
        status.clear()
        start_s = host.now_s
        goals.publish(
            messages.new(
                "geometry_msgs/msg/PoseStamped",
                header={"frame_id": "map", "stamp": messages.time_msg(host.time_ns)},
                pose=pose_msg(Pose2D(x, y, yaw)),
            )
        )
        done = host.run_until(
            lambda: any(m.state in (ACTION_SUCCEEDED, ACTION_FAILED) for m in status), GOAL_TIMEOUT_S
        )
        truth = sim_node.sim.base_pose()
        outcome = "timeout"
        reason = f"no result within {GOAL_TIMEOUT_S:.0f} s"
        if done:
            last = status[-1]
            outcome, reason = ("succeeded", "") if last.state == ACTION_SUCCEEDED else ("failed", last.reason)
        result = {
            "zone": name,
            "goal": [x, y, yaw],
            "outcome": outcome,
            "reason": reason,
            "sim_time_s": round(host.now_s - start_s, 2),
            "final_distance_m": round(math.hypot(truth.x - x, truth.y - y), 4),
            "final_heading_error_rad": round(abs(normalize_angle(truth.theta - yaw)), 4),
        }
        results.append(result)
        print(
            f"  [{i}/{len(zones)}] {name:7s} zone: {outcome:9s} in {result['sim_time_s']:6.1f} s sim, "
            f"{result['final_distance_m']:.3f} m and {result['final_heading_error_rad']:.3f} rad "
            "from the goal" + (f"  ({reason})" if reason else ""),
            flush=True,
        )
    wall_s = time.perf_counter() - wall_start
    host.shutdown()
    summary = {
        "scene": scene.name,
        "seed": seed,
        "goals": results,
        "succeeded": sum(r["outcome"] == "succeeded" for r in results),
        "sim_time_s": round(host.now_s, 2),
        "wall_time_s": round(wall_s, 2),
        "real_time_factor": round((host.now_s - 1.0) / wall_s, 1) if wall_s > 0 else None,
        "contacts": sorted(f"{a}/{b}" for a, b in recorder.contacts),
    }
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    _plot(recorder, scene, summary, out_dir / "tour.png")
    return summary


def _plot(recorder: TopicLog, scene: Any, summary: dict[str, Any], path: Path) -> None:
    import matplotlib.pyplot as plt  # noqa: PLC0415 (deferred: matplotlib)

    fig, ax = top_down_axes(recorder.top_down, scene)
    for i, plan in enumerate(recorder.plans):
        ax.plot(plan[:, 0], plan[:, 1], "--", color="white", lw=1.2, label="Theta* plans" if i == 0 else None)
    if recorder.trajectory:
        traj = np.array(recorder.trajectory)
        ax.plot(traj[:, 0], traj[:, 1], "-", color="black", lw=1.6, label="driven (ground truth)")
        ax.plot(*traj[0], "o", color="black", label="start")
    for result in summary["goals"]:
        x, y, yaw = result["goal"]
        ok = result["outcome"] == "succeeded"
        ax.annotate(
            "",
            xy=(x + 0.35 * math.cos(yaw), y + 0.35 * math.sin(yaw)),
            xytext=(x, y),
            arrowprops={"arrowstyle": "->", "color": "lime" if ok else "red", "lw": 2},
        )
        ax.text(x, y - 0.3, result["zone"], color="black", fontsize=8, ha="center")
    ax.set_title(
        f"galley demo: {scene.name}, seed {summary['seed']}: "
        f"{summary['succeeded']}/{len(summary['goals'])} zones reached in {summary['sim_time_s']:.0f} s sim "
        f"({summary['real_time_factor']}x real time)",
        fontsize=9,
    )
    ax.legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _run(args: argparse.Namespace) -> int:
    zones = [z.strip() for z in args.zones.split(",")] if args.zones else None
    print(f"galley demo: a tour of the {args.scene} zones on the built-in simulator; report in {args.out}/")
    summary = run_tour(
        scene_name=args.scene,
        seed=args.seed,
        zones=zones,
        params_files=list(args.params),
        out_dir=args.out,
        cameras=args.cameras,
    )
    print(json.dumps({k: v for k, v in summary.items() if k != "goals"}))
    return 0 if summary["succeeded"] == len(summary["goals"]) else 1


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "demo",
        help="drive to every zone of the kitchen on the built-in simulator, with a picture",
        description="Drive to every zone of the kitchen on the built-in simulator, with a picture. "
        + PRECEDENCE_HELP,
    )
    p.add_argument("--scene", default="kitchen", help=SCENE_HELP + " (default: kitchen)")
    p.add_argument(
        "--seed", type=seed_number, default=0, help="episode seed: start pose, objects, colours (default: 0)"
    )
    p.add_argument("--zones", default="", help="comma-separated zones to visit in order (default: all)")
    p.add_argument("--cameras", action="store_true", help="render the robot's cameras too (slower)")
    add_params_option(p)
    p.add_argument("--out", type=Path, default=Path("runs/demo"), help="output folder (default: runs/demo)")
    p.set_defaults(run=_run)
