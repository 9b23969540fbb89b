"""Perception against ground truth: position error per object kind and distance, detection rate, latency.

    python bench/perception.py [--quick] [--episodes N] [--views N]

Runs episodes in the embedded host with the simulator's cameras on and two ``perception`` nodes
side by side on the same frames: the shape fit (the default) and the baseline that takes each
matched cluster's centroid (``fit_model: false``). In each episode the base is teleported
(``/sim/teleport``) to views of every zone: the zone's approach pose, backed off, shifted sideways
and turned at random, so that objects are seen from about 0.5 to 3 m; last, an object is
handed into the gripper (``gripper/<name>``) and a few views are taken again, so that held
objects are measured too.

After each view, an object counts as *visible* when at least ``--min-pixels`` of its pixels show
in a segmentation rendering of the base camera (ground truth, the bench's only use of it besides
the poses). Per object kind and per band of distance from the camera (the object's centre):
the detection rate (visible objects detected in that frame) and the median and 90th-percentile
error of the detected positions against ``object/<name>``; the fork's yaw error too. Latency is
each node's wall-clock time per frame. Prints a table and, last, one JSON line.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from collections import defaultdict
from typing import Any

import numpy as np

import galley_sim  # noqa: F401  (chooses MuJoCo's headless OpenGL before mujoco is imported)
from galley_core.geometry import normalize_angle
from galley_nodes.registry import load_node_class
from galley_runtime import messages
from galley_runtime.conversions import image_from_msg
from galley_runtime.embedded import EmbeddedHost
from galley_runtime.qos import QoS

BANDS = ((0.0, 0.75, "<0.75 m"), (0.75, 1.5, "0.75-1.5 m"), (1.5, 99.0, ">1.5 m"))
NODES = {"fit": {}, "centroid": {"fit_model": False, "frame_prefix": "baseline/"}}


def band(distance: float) -> str:
    return next(name for lo, hi, name in BANDS if lo <= distance < hi)


def views(scene: Any, rng: np.random.Generator, per_zone: int) -> list[tuple[float, float, float]]:
    """Base poses (x, y, yaw) looking at the zones from various distances, clear of the furniture."""
    out = []
    for zone in scene.zones:
        ax, ay, ayaw = zone.approach
        found = 0
        for _ in range(200):
            if found == per_zone:
                break
            back, side, turn = rng.uniform(0.0, 1.6), rng.uniform(-0.5, 0.5), rng.uniform(-0.6, 0.6)
            x = ax - back * math.cos(ayaw) - side * math.sin(ayaw)
            y = ay - back * math.sin(ayaw) + side * math.cos(ayaw)
            if _clear(scene, x, y):
                out.append((x, y, ayaw + turn))
                found += 1
    return out


def _clear(scene: Any, x: float, y: float, radius: float = 0.45) -> bool:
    x0, y0, x1, y1 = scene.bounds
    if not (x0 + radius < x < x1 - radius and y0 + radius < y < y1 - radius):
        return False
    for box in scene.boxes:
        (cx, cy, _), (sx, sy, _) = box.center, box.size
        if abs(x - cx) < sx / 2 + radius and abs(y - cy) < sy / 2 + radius:
            return False
    return True


NOISY_DEPTH = "/bench/depth/image_raw"
FALSE_M = 0.05  # a detection further than this from the truth counts as false
NOISE_M, NOISE_PER_M2 = 0.001, 0.0025


def noisy_depth(msg: Any, rng: np.random.Generator) -> Any:
    """The depth image as a consumer RGB-D sensor would give it: noise growing with range, dropouts.

    Gaussian noise of standard deviation 1 mm + 2.5 mm per m^2 (about 3.5 mm at 1 m, 11 mm at 2 m,
    the order of structured-light and time-of-flight cameras) and 2 % of the pixels without a return.
    The perception nodes are told the noise model (``depth_noise_m``, ``depth_noise_per_m2``) and
    filter the depth with a 3x3 median (``depth_median_px``).
    """
    depth = image_from_msg(msg)
    noisy = depth + rng.normal(size=depth.shape).astype(np.float32) * (NOISE_M + NOISE_PER_M2 * depth**2)
    noisy[rng.uniform(size=depth.shape) < 0.02] = np.nan
    noisy = noisy.astype(np.float32)
    return messages.new(
        "sensor_msgs/msg/Image",
        header=msg.header,
        height=msg.height,
        width=msg.width,
        encoding="32FC1",
        is_bigendian=0,
        step=msg.step,
        data=noisy.view(np.uint8).reshape(-1),
    )


class Episode:
    """One episode's host: the simulator, the two perception nodes, a teleporting probe."""

    def __init__(self, seed: int, width: int, height: int, *, noisy: bool) -> None:
        self.host = EmbeddedHost()
        self.sim = self.host.add_node(
            load_node_class("sim"), parameters={"seed": seed, "image_width": width, "image_height": height}
        )
        remap = {"/camera/base/depth/image_raw": NOISY_DEPTH} if noisy else {}
        sensor = (
            {"depth_noise_m": NOISE_M, "depth_noise_per_m2": NOISE_PER_M2, "depth_median_px": 3}
            if noisy
            else {}
        )
        self.nodes = {
            name: self.host.add_node(
                load_node_class("perception"),
                name=f"perception_{name}",
                parameters={**params, **sensor},
                remappings={"/perception/objects": f"/perception_{name}/objects", **remap},
            )
            for name, params in NODES.items()
        }
        self.latest: dict[str, Any] = {}
        probe = self.host.participant("bench")
        if noisy:
            relay = probe.create_publisher(NOISY_DEPTH, "sensor_msgs/msg/Image", QoS())
            rng = np.random.default_rng(seed)
            probe.create_subscription(
                "/camera/base/depth/image_raw",
                "sensor_msgs/msg/Image",
                lambda msg: relay.publish(noisy_depth(msg, rng)),
                QoS(),
            )
        for name in NODES:
            probe.create_subscription(
                f"/perception_{name}/objects",
                "galley_msgs/msg/PerceivedObjects",
                lambda msg, name=name: self.latest.__setitem__(name, msg),
                QoS(),
            )
        self.teleport = probe.create_publisher("/sim/teleport", "geometry_msgs/msg/PoseStamped", QoS())
        self.host.run_for(0.3)
        import mujoco  # noqa: PLC0415 (optional: mujoco, after galley_sim's OpenGL choice)

        self._mujoco = mujoco
        sim = self.sim.sim
        self._segmenter = mujoco.Renderer(sim.model, height, width)
        self._segmenter.enable_segmentation_rendering()
        self._body_of = {name: sim.model.body(f"object/{name}").id for name in sim.object_poses()}

    def send(self, frame: str, x: float = 0.0, y: float = 0.0, yaw: float = 0.0) -> None:
        pose = messages.new(
            "geometry_msgs/msg/PoseStamped",
            header={"frame_id": frame},
            pose={
                "position": {"x": x, "y": y},
                "orientation": {"z": math.sin(yaw / 2), "w": math.cos(yaw / 2)},
            },
        )
        self.teleport.publish(pose)

    def visible_pixels(self) -> dict[str, int]:
        """Pixels of each object in the base camera now (segmentation rendering: ground truth)."""
        sim = self.sim.sim
        self._segmenter.update_scene(sim.data, camera="base_camera")
        seg = self._segmenter.render()
        geoms = seg[:, :, 0][seg[:, :, 1] == int(self._mujoco.mjtObj.mjOBJ_GEOM)]
        bodies = sim.model.geom_bodyid[geoms]
        return {name: int(np.sum(bodies == body)) for name, body in self._body_of.items()}

    def close(self) -> None:
        self._segmenter.close()
        self.host.shutdown()


def view_records(ep: Episode, min_pixels: int) -> list[dict[str, Any]]:
    """Per object after a view: distance, whether it shows and is held, each method's errors."""
    scene, truth = ep.sim.scene, ep.sim.sim.object_poses()
    cam = ep.host.tf.lookup("map", "base_camera_optical", None)[0].translation
    pixels, held = ep.visible_pixels(), set(ep.sim.sim.held_objects())
    rows = []
    for spec in scene.objects:
        t = truth[spec.name]
        centre = t.translation + np.array([0.0, 0.0, spec.height / 2])
        row = {
            "name": spec.name,
            "distance": float(np.linalg.norm(centre - cam)),
            "pixels": pixels[spec.name],
            "visible": pixels[spec.name] >= min_pixels,
            "held": spec.name in held,
        }
        for method in NODES:
            msg = ep.latest.get(method)
            found = [o for o in (msg.objects if msg else []) if o.name == spec.name and o.age == 0.0]
            if found:
                p = found[0].pose
                estimate = np.array([p.position.x, p.position.y, p.position.z])
                row[f"{method}_error"] = float(np.linalg.norm(estimate - t.translation))
                est_yaw = 2 * math.atan2(p.orientation.z, p.orientation.w)
                row[f"{method}_yaw_error"] = abs(normalize_angle(est_yaw - t.yaw()))
        rows.append(row)
    return rows


def describe(rows: list[dict[str, Any]]) -> str:
    """``apple 1.06 m: 0.0 cm, plate held 0.63 m: missed``: what showed or was found, and how well."""
    out = []
    for r in rows:
        if r["visible"] or "fit_error" in r:
            state = (" held" if r["held"] else "") + ("" if r["visible"] else " unseen")
            error = f"{100 * r['fit_error']:.1f} cm" if "fit_error" in r else "missed"
            out.append(f"{r['name']}{state} {r['distance']:.2f} m: {error}")
    return ", ".join(out) or "nothing in view"


def run(args: argparse.Namespace) -> dict[str, Any]:
    rng = np.random.default_rng(args.seed)
    records: list[dict[str, Any]] = []
    latency: dict[str, list[float]] = defaultdict(list)
    frames = 0
    for episode_index in range(args.episodes):
        seed = args.seed + episode_index
        ep = Episode(seed, args.width, args.height, noisy=args.noisy_depth)
        scene = ep.sim.scene
        poses = views(scene, rng, args.views)
        # Last, one object handed into the gripper, seen from a few of the same views: the object
        # it replaces in the gripper would fall anywhere, so there is one per episode.
        held_from = len(poses)
        poses += [poses[int(i)] for i in rng.choice(len(poses), size=args.held_views, replace=False)]
        for k, (x, y, yaw) in enumerate(poses):
            if k == held_from:
                ep.send(f"gripper/{scene.objects[int(rng.integers(len(scene.objects)))].name}")
                ep.host.run_for(0.1)
            ep.send("base_link", x, y, yaw)
            ep.host.run_for(0.2)  # two camera frames: the second sees the new view at rest
            frames += 1
            rows = view_records(ep, args.min_pixels)
            records += [{"episode": seed, "view": k, **r} for r in rows]
            print(
                f"episode {seed} view {k + 1}/{len(poses)} at ({x:.2f}, {y:.2f}, {yaw:.2f}): {describe(rows)}"
            )
        for method, node in ep.nodes.items():
            latency[method].extend(node.frame_seconds)
            latency[f"{method}_cpu"].extend(node.frame_cpu_seconds)
        ep.close()
    return {"records": records, "latency": latency, "frames": frames}


def summarise(records: list[dict[str, Any]], method: str) -> dict[str, Any]:
    visible = [r for r in records if r["visible"]]
    errors = [r[f"{method}_error"] for r in visible if f"{method}_error" in r]
    return {
        "visible": len(visible),
        "detection_rate": len(errors) / len(visible) if visible else float("nan"),
        "median_cm": float(np.median(errors)) * 100 if errors else float("nan"),
        "p90_cm": float(np.percentile(errors, 90)) * 100 if errors else float("nan"),
    }


def _key(kind: str, band_name: str) -> str:
    """``apple_0p75_1p5_m`` for ("apple", "0.75-1.5 m"): a JSON figure's name."""
    text = band_name.replace("<", "under_").replace(">", "over_").replace("-", "_").replace(".", "p")
    return f"{kind}_{text.replace(' m', '_m')}"


def accuracy_table(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Print detection rate and error per kind and distance band, the baseline beside; the figures."""
    header = (
        f"{'kind':8s} {'distance':11s} {'vis':>4s} {'det':>5s} {'med cm':>7s} {'p90 cm':>7s} "
        f"{'centroid med':>13s} {'centroid p90':>13s}"
    )
    print(header)
    print("-" * len(header))
    figures: dict[str, Any] = {}
    kinds = sorted({r["name"] for r in records})
    bands: list[tuple[str, list[dict[str, Any]]]] = []
    for kind in [*kinds, "all"]:
        for _, _, name in BANDS:
            rows = [r for r in records if kind in ("all", r["name"]) and band(r["distance"]) == name]
            bands.append((f"{kind:8s} {name:11s}", [r for r in rows if not r["held"]]))
            fit = summarise(bands[-1][1], "fit")
            if fit["visible"]:
                figures[f"{_key(kind, name)}_median_error_cm"] = round(fit["median_cm"], 3)
                figures[f"{_key(kind, name)}_detection_rate"] = round(fit["detection_rate"], 3)
    bands.append((f"{'held':8s} {'any':11s}", [r for r in records if r["held"]]))
    for label, rows in bands:
        fit, base = summarise(rows, "fit"), summarise(rows, "centroid")
        if fit["visible"]:
            print(
                f"{label} {fit['visible']:4d} {fit['detection_rate']:5.2f} {fit['median_cm']:7.2f} "
                f"{fit['p90_cm']:7.2f} {base['median_cm']:13.2f} {base['p90_cm']:13.2f}"
            )
    held = summarise(bands[-1][1], "fit")
    figures["held_detection_rate"] = round(held["detection_rate"], 3)
    figures["held_median_error_cm"] = round(held["median_cm"], 3)
    near = [r for r in records if r["distance"] < 1.5 and not r["held"]]
    for method in NODES:
        per_kind = [summarise([r for r in near if r["name"] == k], method)["median_cm"] for k in kinds]
        figures[f"near_worst_kind_median_error_cm_{method}"] = round(float(np.nanmax(per_kind)), 3)
    for method in NODES:
        # a detection of an object that does not show at all, or more than 5 cm off: a false one
        found = [r for r in records if f"{method}_error" in r]
        false = [r for r in found if r["pixels"] == 0 or r[f"{method}_error"] > FALSE_M]
        figures[f"false_detections_{method}"] = len(false)
        figures[f"detections_{method}"] = len(found)
    forks = [r["fit_yaw_error"] for r in records if r["name"] == "fork" and "fit_yaw_error" in r]
    if forks:
        figures["fork_yaw_median_error_deg"] = round(math.degrees(float(np.median(forks))), 2)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="2 episodes, 2 views per zone (about a minute)")
    parser.add_argument("--episodes", type=int, default=8, help="episodes (seeds seed..seed+N-1)")
    parser.add_argument("--views", type=int, default=4, help="views per zone and episode")
    parser.add_argument("--seed", type=int, default=100, help="first episode seed (and the views' draw)")
    parser.add_argument(
        "--held-views", type=int, default=3, help="views per episode with an object in the gripper"
    )
    parser.add_argument(
        "--min-pixels", type=int, default=20, help="pixels an object must show to count as visible"
    )
    parser.add_argument(
        "--noisy-depth",
        action="store_true",
        help="corrupt the depth images as a real sensor would (noisy_depth)",
    )
    parser.add_argument("--width", type=int, default=320, help="camera image width, px")
    parser.add_argument("--height", type=int, default=240, help="camera image height, px")
    args = parser.parse_args()
    if args.quick:
        args.episodes, args.views = 2, 2
    started = time.perf_counter()
    out = run(args)
    load = os.getloadavg()[0]
    print(
        f"\n{out['frames']} views, {args.width}x{args.height}, {time.perf_counter() - started:.0f} s, "
        f"load average {load:.1f} on {os.cpu_count()} CPUs"
        + (", noisy depth" if args.noisy_depth else ", the simulator's exact depth")
    )
    figures = accuracy_table(out["records"])
    for method in NODES:
        print(
            f"false detections ({method}): {figures[f'false_detections_{method}']} of "
            f"{figures[f'detections_{method}']} (of an object not in the image, or > {FALSE_M * 100:.0f} cm "
            "off)"
        )
    if "fork_yaw_median_error_deg" in figures:
        print(f"fork yaw error: median {figures['fork_yaw_median_error_deg']:.1f} deg")
    for method, seconds in out["latency"].items():
        ms = np.array(seconds) * 1e3
        median, p90 = float(np.median(ms)), float(np.percentile(ms, 90))
        print(f"latency {method:12s}: median {median:.1f} ms, p90 {p90:.1f} ms per frame ({len(ms)} frames)")
        figures[f"latency_{method}_median_ms"] = round(median, 2)
        figures[f"latency_{method}_p90_ms"] = round(p90, 2)
    worst = figures["near_worst_kind_median_error_cm_fit"]
    print(f"within 1.5 m, the worst kind's median error: {worst:.2f} cm (target <= 1.5 cm)")
    figures["views"] = out["frames"]
    figures["load_average"] = round(load, 1)
    print(
        json.dumps({k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in figures.items()})
    )


if __name__ == "__main__":
    main()
