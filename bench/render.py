"""The robot cameras' anti-aliasing: MuJoCo's 4x multisampling against 2x2 supersampling, time and accuracy.

    python bench/render.py [--quick] [--image-size WxH ...]

Draws the base and wrist cameras together (as the ``sim`` node does, one read-back per tick) in
the robot's start pose of several random episodes, both ways: with the model's 4x multisampling,
and at twice the width and height without it, averaging each 2x2 block (what galley publishes,
:mod:`galley_sim.rendering`). Reports
milliseconds per camera tick (both cameras, best of three runs), and the accuracy of each against a
reference with 64 samples per pixel (8x8 supersampling): the mean absolute error in grey levels
and the share of pixels off by more than 8 levels in some channel. Also an aliased drawing (one
sample per pixel), to show what anti-aliasing buys. Prints a table and, last, one JSON line.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable

import numpy as np

from galley_core.episode import sample_episode
from galley_episodes import parse_image_size
from galley_runtime.config_files import find_scene
from galley_sim.rendering import SideBySideRenderer
from galley_sim.simulator import KitchenSim, SimOptions

CAMERAS = ["base_camera", "wrist_camera"]
#: name: (supersampling, the model's multisamples)
METHODS = {"multisampled_4x": (1, 4), "supersampled_2x2": (2, 0), "aliased": (1, 0)}
REFERENCE = (8, 0)


def draw(sim: KitchenSim, size: tuple[int, int], supersampling: int, multisamples: int) -> SideBySideRenderer:
    quality = sim.model.vis.quality
    saved, quality.offsamples = quality.offsamples, multisamples
    try:
        return SideBySideRenderer(sim.model, *size, len(CAMERAS), supersampling=supersampling)
    finally:
        quality.offsamples = saved


def ms_per_tick(render: Callable[[], object], ticks: int) -> float:
    best = float("inf")
    for _ in range(3):
        render()
        start = time.perf_counter()
        for _ in range(ticks):
            render()
        best = min(best, (time.perf_counter() - start) / ticks * 1e3)
    return best


def measure(size: tuple[int, int], seeds: int, ticks: int) -> dict[str, dict[str, float]]:
    import mujoco  # after galley_sim, which chooses MuJoCo's headless OpenGL backend  # noqa: PLC0415 (optional: mujoco)

    scene = find_scene("kitchen")
    sim = KitchenSim(scene, SimOptions(image_width=size[0], image_height=size[1]))
    option = mujoco.MjvOption()  # the robot cameras' default view: zones hidden
    renderers = {name: draw(sim, size, *how) for name, how in {**METHODS, "reference": REFERENCE}.items()}
    images: dict[str, list[np.ndarray]] = {name: [] for name in renderers}
    for seed in range(seeds):
        sim.reset(sample_episode(scene, seed))
        for name, renderer in renderers.items():
            images[name] += renderer.render(sim.data, CAMERAS, option)
    reference = np.stack(images.pop("reference")).astype(float)
    results = {}
    for name in METHODS:
        renderer = renderers[name]
        error = np.abs(np.stack(images[name]).astype(float) - reference)
        results[name] = {
            "ms_per_tick": ms_per_tick(lambda r=renderer: r.render(sim.data, CAMERAS, option), ticks),
            "mean_abs_error": float(error.mean()),
            "pixels_off_by_8": float((error.max(axis=-1) > 8).mean()),
        }
    for renderer in renderers.values():
        renderer.close()
    sim.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="2 episodes, 30 ticks (seconds)")
    parser.add_argument(
        "--image-size",
        type=parse_image_size,
        nargs="+",
        default=[(96, 72), (320, 240)],
        help="camera WxH (default: 96x72 320x240)",
    )
    args = parser.parse_args()
    seeds, ticks = (2, 30) if args.quick else (8, 200)
    summary: dict[str, float] = {}
    print(
        f"robot cameras (base and wrist together), {seeds} episodes' start poses, reference 64 samples/pixel"
    )
    print(f"{'size':>8} {'anti-aliasing':>17} {'ms/tick':>8} {'mean abs error':>15} {'pixels off >8':>14}")
    for size in args.image_size:
        results = measure(size, seeds, ticks)
        tag = f"{size[0]}x{size[1]}"
        for name, r in results.items():
            print(
                f"{tag:>8} {name:>17} {r['ms_per_tick']:>8.2f} {r['mean_abs_error']:>15.3f} "
                f"{100 * r['pixels_off_by_8']:>13.2f}%"
            )
        ss, ms = results["supersampled_2x2"], results["multisampled_4x"]
        summary[f"time_ratio_supersampled_to_multisampled_{tag}"] = round(
            ss["ms_per_tick"] / ms["ms_per_tick"], 3
        )
        summary[f"error_ratio_supersampled_to_multisampled_{tag}"] = round(
            ss["mean_abs_error"] / ms["mean_abs_error"], 3
        )
        summary[f"ms_per_tick_supersampled_{tag}"] = round(ss["ms_per_tick"], 2)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
