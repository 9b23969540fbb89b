"""``galley demo``: three nodes in the embedded host drive a base around a square.

``square_driver`` publishes /cmd_vel, ``unicycle_base`` integrates it into /odom and TF, and
``trajectory_logger`` follows ``base_link`` through TF. The run shows progress and ends with a
report in the output folder: ``summary.json`` (figures), ``trajectory.csv`` and
``trajectory.png`` (the driven path over the commanded square). The tasks issue replaces this
with the main job, ``galley run``.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path
from typing import Any

from galley_core.kinematics import square_lap_s
from galley_nodes.embedded import EmbeddedHost
from galley_nodes.nodes.square_driver import SquareDriverNode
from galley_nodes.nodes.trajectory_logger import TrajectoryLoggerNode
from galley_nodes.nodes.unicycle_base import UnicycleBaseNode

__all__ = ["add_parser", "run_demo"]


def run_demo(params_files: list[Path], out_dir: Path, *, progress: bool = True) -> dict[str, Any]:
    """Run the demo and write its report; returns the summary."""
    out_dir.mkdir(parents=True, exist_ok=True)
    csv_path = out_dir / "trajectory.csv"
    host = EmbeddedHost(params_files)
    # The logger is added first so that it shuts down last (see EmbeddedHost.shutdown).
    logger = host.add_node(TrajectoryLoggerNode, parameters={"output_csv": str(csv_path)})
    base = host.add_node(UnicycleBaseNode)
    driver = host.add_node(SquareDriverNode)
    d = driver.config
    duration_s = d.laps * square_lap_s(d.side_m, d.speed_mps, d.turn_rate_rps) + 2.0

    wall_start = time.perf_counter()
    chunks = 10
    for i in range(1, chunks + 1):
        host.run_for(duration_s / chunks)
        if progress:
            p = base.pose
            bar = "#" * i + "." * (chunks - i)
            print(
                f"  [{bar}] t = {host.now_s:6.1f} / {duration_s:.1f} s   base at ({p.x:+.2f}, {p.y:+.2f}) m",
                flush=True,
            )
    wall_s = time.perf_counter() - wall_start
    stats = host.bus.statistics()
    host.shutdown()

    start = (base.config.initial_x_m, base.config.initial_y_m)
    summary = {
        "sim_time_s": round(host.now_s, 6),
        "wall_time_s": round(wall_s, 3),
        "real_time_factor": round(host.now_s / wall_s, 1) if wall_s > 0 else None,
        "laps": d.laps,
        "side_m": d.side_m,
        "distance_m": round(logger.distance_m, 4),
        "expected_distance_m": round(4 * d.side_m * d.laps, 4),
        "closure_error_m": round(math.hypot(base.pose.x - start[0], base.pose.y - start[1]), 6),
        "final_pose": {"x_m": base.pose.x, "y_m": base.pose.y, "yaw_rad": base.pose.theta},
        "topics": stats,
    }
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    _plot(logger, base.config, d, out_dir / "trajectory.png", summary)
    return summary


def _plot(logger: TrajectoryLoggerNode, base_cfg: Any, d: Any, path: Path, summary: dict[str, Any]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x0, y0, yaw = base_cfg.initial_x_m, base_cfg.initial_y_m, base_cfg.initial_yaw_rad
    corners = [(0, 0), (d.side_m, 0), (d.side_m, d.side_m), (0, d.side_m), (0, 0)]
    c, s = math.cos(yaw), math.sin(yaw)
    square = [(x0 + c * u - s * v, y0 + s * u + c * v) for u, v in corners]
    fig, ax = plt.subplots(figsize=(5, 5), dpi=120)
    ax.plot([p[0] for p in square], [p[1] for p in square], "--", color="0.6", label="commanded square")
    xs = [p.x for _, p in logger.samples]
    ys = [p.y for _, p in logger.samples]
    ax.plot(xs, ys, "-", color="tab:blue", lw=2, label="driven (TF odom → base_link)")
    ax.plot([x0], [y0], "o", color="tab:green", label="start")
    ax.set_aspect("equal")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    ax.set_title(
        f"galley demo: {summary['distance_m']:.2f} m in {summary['sim_time_s']:.0f} s sim, "
        f"closure {summary['closure_error_m'] * 1000:.2f} mm",
        fontsize=9,
    )
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="center")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _run(args: argparse.Namespace) -> int:
    print(
        "galley demo: square_driver -> unicycle_base -> trajectory_logger in the embedded host; "
        f"report in {args.out}/"
    )
    summary = run_demo(list(args.params), args.out)
    print(json.dumps({k: v for k, v in summary.items() if k != "topics"}))
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser("demo", help="run three nodes in the embedded host and report with a picture")
    p.add_argument(
        "--params",
        type=Path,
        action="append",
        default=[],
        metavar="FILE",
        help="ROS 2 params YAML file (repeat to layer several)",
    )
    p.add_argument("--out", type=Path, default=Path("runs/demo"), help="output folder (default: runs/demo)")
    p.set_defaults(run=_run)
