"""What the galley commands record from the topics of a run, and the top-down picture they draw."""

from __future__ import annotations

import csv
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from galley_core.tasks.executor import move_goal
from galley_core.tasks.grammar import parse_step
from galley_runtime.config_files import find_scene
from galley_runtime.embedded import EmbeddedHost
from galley_runtime.qos import QoS

__all__ = [
    "TopicLog",
    "goal_distances",
    "plot_eval",
    "plot_scenes",
    "sr_by_kind",
    "top_down_axes",
    "write_csv",
]


class TopicLog:
    """Subscribes to what a report needs, like any other subscriber of the graph.

    Attributes:
        plans: every non-empty /plan, as (N, 2) arrays in the map frame.
        trajectory: ground-truth base positions (x, y) from /sim/ground_truth/base_pose.
        contacts: (robot geom, obstacle geom) pairs seen on /sim/contacts.
        top_down: the latched top-down image (H, W, 3), once the simulator has published it; only
            with ``top_down`` set (the simulator renders it only for a subscriber: about 0.1 s).
        frames: base camera images (H, W, 3) when ``video`` is set.
    """

    def __init__(self, host: EmbeddedHost, *, video: bool = False, top_down: bool = True) -> None:
        probe = host.participant("galley_report")
        self.plans: list[np.ndarray[Any, Any]] = []
        self.trajectory: list[tuple[float, float]] = []
        self.trajectory_t: list[float] = []
        self.contacts: set[tuple[str, str]] = set()
        self.contact_events = 0
        self._touching = False
        self.top_down: np.ndarray[Any, Any] | None = None
        self.frames: list[np.ndarray[Any, Any]] = []
        self._host = host
        probe.create_subscription("/plan", "nav_msgs/msg/Path", self._on_plan, QoS())
        probe.create_subscription(
            "/sim/ground_truth/base_pose", "geometry_msgs/msg/PoseStamped", self._on_pose, QoS()
        )
        probe.create_subscription(
            "/sim/contacts", "galley_msgs/msg/Contacts", self._on_contacts, QoS(depth=100)
        )
        if top_down:
            probe.create_subscription(
                "/camera/top_down/image_raw", "sensor_msgs/msg/Image", self._on_top, QoS.latched()
            )
        if video:
            probe.create_subscription(
                "/camera/base/image_raw", "sensor_msgs/msg/Image", self._on_frame, QoS(depth=10)
            )

    def _on_plan(self, msg: Any) -> None:
        if msg.poses:
            self.plans.append(np.array([[p.pose.position.x, p.pose.position.y] for p in msg.poses]))

    def _on_pose(self, msg: Any) -> None:
        self.trajectory.append((msg.pose.position.x, msg.pose.position.y))
        self.trajectory_t.append(msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9)

    def _on_contacts(self, msg: Any) -> None:
        pairs = set(zip(msg.robot_geoms, msg.obstacle_geoms, strict=True))
        if pairs and not self._touching:
            self.contact_events += 1  # a collision is a new contact, not every sample of it
        self._touching = bool(pairs)
        self.contacts |= pairs

    def _on_top(self, msg: Any) -> None:
        self.top_down = np.asarray(msg.data).reshape(msg.height, msg.width, 3)

    def _on_frame(self, msg: Any) -> None:
        self.frames.append(np.asarray(msg.data).reshape(msg.height, msg.width, 3).copy())


def top_down_axes(
    image: np.ndarray[Any, Any], scene: Any, *, size: tuple[float, float] = (8, 6)
) -> tuple[Any, Any]:
    """A matplotlib figure and axes showing the top-down image in map coordinates (metres)."""
    import matplotlib  # noqa: PLC0415 (optional: matplotlib)

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415 (optional: matplotlib)

    x0, y0, x1, y1 = scene.bounds
    height, width = image.shape[:2]
    # The top-down camera is orthographic and centred on the bounds (galley_sim.mjcf.scene_xml).
    view_h = max(y1 - y0, (x1 - x0) * height / width)
    view_w = view_h * width / height
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    fig, ax = plt.subplots(figsize=size, dpi=110)
    ax.imshow(image, extent=(cx - view_w / 2, cx + view_w / 2, cy - view_h / 2, cy + view_h / 2))
    ax.set_xlim(x0, x1)
    ax.set_ylim(y0, y1)
    ax.set_xlabel("x (m, map)")
    ax.set_ylabel("y (m, map)")
    return fig, ax


def goal_distances(plan: Any, summary: dict[str, Any], scene_name: str) -> dict[str, float]:
    """The base centre's distance from its goal at the start and the end (m), for a one-move plan.

    Empty for any other plan: a move among other steps starts and ends elsewhere than the episode.
    """
    if len(plan) != 1 or not summary.get("base_start"):
        return {}
    step = parse_step(plan[0])
    if step.action != "move":
        return {}
    goal = move_goal(find_scene(scene_name), step.target)
    out = {}
    for key in ("start", "end"):
        x, y = summary[f"base_{key}"]
        out[f"goal_dist_{key}_m"] = round(float(np.hypot(x - goal.x, y - goal.y)), 4)
    return out


def sr_by_kind(outcomes: Iterable[tuple[str, bool]]) -> dict[str, float]:
    """SR per step kind (move, pick, place) of (step text, success) pairs.

    Over a suite's plans with every step's outcome, a step that never ran (after a failure with no
    teleport, or a monitor's abort) counting as failed: ``sr_by_action``; over the rows of
    ``steps.csv``, the steps that ran: ``sr_executed_by_action``.
    """
    by_kind: dict[str, list[bool]] = {}
    for step, ok in outcomes:
        by_kind.setdefault(step.split()[0], []).append(bool(ok))
    return {k: sum(v) / len(v) for k, v in sorted(by_kind.items())}


def write_csv(path: Path, rows: list[dict[str, Any]], columns: list[str]) -> None:
    """``rows`` as a CSV file with a header of ``columns``."""
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)


def plot_eval(mode: str, rows: list[dict[str, Any]], metrics: dict[str, Any], path: Path) -> None:
    """Kitchen-R's figures of a ``galley eval`` run: SR by step kind, episode times, EM."""
    import matplotlib  # noqa: PLC0415 (optional: matplotlib)

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415 (optional: matplotlib)

    panels = []
    if metrics.get("sr_by_action"):
        panels.append("sr")
        panels.append("time")
    if metrics["em"] is not None:
        panels.append("em")
    if not panels:
        return
    fig, axes = plt.subplots(1, len(panels), figsize=(4.5 * len(panels), 3.6), dpi=110, squeeze=False)
    for ax, panel in zip(axes[0], panels, strict=True):
        if panel == "sr":
            names = list(metrics["sr_by_action"])
            ax.bar(names, [metrics["sr_by_action"][n] for n in names], color="tab:green")
            ax.set_ylim(0, 1.05)
            ax.set_title(f"success rate by step (SR {metrics['sr']:.3f})", fontsize=9)
        elif panel == "time":
            ax.hist([r["sim_time_s"] for r in rows], bins=15, color="tab:blue")
            ax.set_xlabel("simulated time per episode (s)")
            ax.set_title(f"episodes ({metrics['real_time_factor']}x real time)", fontsize=9)
        else:
            ax.hist([r["em"] for r in rows], bins=np.linspace(0, 1, 11), color="tab:purple")
            ax.set_xlabel("per-plan exact match")
            ax.set_title(f"EM {metrics['em']:.3f}", fontsize=9)
    fig.suptitle(f"galley eval --mode {mode}: {metrics['episodes']} episodes", fontsize=10)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def plot_scenes(metrics: dict[str, Any], path: Path) -> None:
    """``galley eval --scenes``: the headline figure per scene as bars, with the overall value as a line.

    Episode SR where episodes ran (``sr_episode``), else EM; each bar is labelled with its counts.
    """
    import matplotlib  # noqa: PLC0415 (optional: matplotlib)

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415 (optional: matplotlib)

    key = "sr_episode" if metrics.get("sr_episode") is not None else "em"
    scenes = metrics["scenes"]
    names = list(scenes)
    values = [scenes[n][key] or 0.0 for n in names]
    fig, ax = plt.subplots(figsize=(max(4.5, 0.42 * len(names) + 1.5), 3.8), dpi=110)
    colours = ["tab:green" if v >= metrics[key] else "tab:orange" for v in values]
    ax.bar(names, values, color=colours)
    ax.axhline(metrics[key], color="black", lw=1, ls="--", label=f"overall {metrics[key]:.3f}")
    if key == "sr_episode":
        for i, n in enumerate(names):
            failed = len(scenes[n].get("failed", []))
            ok = scenes[n]["episodes"] - failed
            ax.text(i, values[i] + 0.02, f"{ok}/{scenes[n]['episodes']}", ha="center", fontsize=7)
    ax.set_ylim(0, 1.12)
    ax.set_ylabel("episode success rate" if key == "sr_episode" else "exact match (EM)")
    ax.tick_params(axis="x", labelrotation=60, labelsize=7)
    ax.legend(fontsize=8, loc="lower right")
    ax.set_title(
        f"galley eval --mode {metrics['mode']}: {metrics['episodes']} episodes in {len(names)} scenes",
        fontsize=9,
    )
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
