"""Real-time factor of the built-in simulator, cameras off and on, against MuJoCo's raw step rate.

    python bench/sim.py [--quick]

Runs the ``sim`` node in the embedded host with ``square_driver`` commanding the base (so the
robot moves and the TF tree changes) and, with cameras, a subscriber on each image topic (the
node renders only images someone receives), for a number of simulated seconds after a warm-up
(model compilation, GL context), and divides simulated by wall-clock time. The ceiling is MuJoCo's own
``mj_step`` loop on the same compiled model with the same objects resting, no sensors and no
messages. Targets (issue 3): >= 30x with cameras off, >= 5x with both cameras at 10 Hz.
Prints a table and, last, one JSON line.
"""

from __future__ import annotations

import argparse
import json
import time

from galley_core.episode import sample_episode
from galley_nodes.nodes.square_driver import SquareDriverNode
from galley_runtime.config_files import find_scene
from galley_runtime.embedded import EmbeddedHost
from galley_runtime.qos import QoS
from galley_sim.sim_node import SimNode
from galley_sim.simulator import KitchenSim

#: The camera images, each with a subscriber: the sim node renders only what someone receives.
CAMERA_TOPICS = ("/camera/base/image_raw", "/camera/base/depth/image_raw", "/camera/wrist/image_raw")


def node_rtf(sim_seconds: float, **params: object) -> float:
    """Simulated seconds per wall second of the sim node (with square_driver) in the embedded host.

    With cameras, every image topic has a subscriber (as when recording), so all three are rendered.
    """
    host = EmbeddedHost()
    if params.get("cameras_enabled"):
        consumer = host.participant("camera_consumer")
        for topic in CAMERA_TOPICS:
            consumer.create_subscription(topic, "sensor_msgs/msg/Image", lambda _: None, QoS(depth=1))
    host.add_node(SimNode, parameters={"seed": 1, **params})
    host.add_node(SquareDriverNode, parameters={"side_m": 1.0, "speed_mps": 0.18, "laps": 5})
    host.run_for(1.0)  # warm-up: GL context, first renders, caches
    start = time.perf_counter()
    host.run_for(sim_seconds)
    wall = time.perf_counter() - start
    host.shutdown()
    return sim_seconds / wall


def raw_rtf(steps: int) -> float:
    """MuJoCo's own step loop on the same model and episode: the ceiling."""
    import mujoco  # after galley_sim, which chooses the headless GL backend  # noqa: PLC0415 (optional: mujoco)

    scene = find_scene("kitchen")
    sim = KitchenSim(scene)
    sim.reset(sample_episode(scene, 1))
    sim.data.ctrl[sim.model.actuator("base_x").id] = 0.1
    mujoco.mj_step(sim.model, sim.data, nstep=500)
    start = time.perf_counter()
    mujoco.mj_step(sim.model, sim.data, nstep=steps)
    wall = time.perf_counter() - start
    return steps * sim.model.opt.timestep / wall


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="short runs (well under a minute)")
    args = parser.parse_args()
    seconds = 5.0 if args.quick else 20.0

    ceiling = raw_rtf(5_000 if args.quick else 20_000)
    off = node_rtf(seconds, cameras_enabled=False)
    on = node_rtf(seconds / 2.5, cameras_enabled=True)
    rows = [
        ("mujoco mj_step only (ceiling)", ceiling, None),
        ("sim node, cameras off", off, 30.0),
        ("sim node, base RGB-D + wrist RGB at 10 Hz", on, 5.0),
    ]
    print(f"{'configuration':45s} {'real-time factor':>16s} {'of ceiling':>10s} {'target':>8s}")
    for name, rtf, target in rows:
        mark = "" if target is None else (f">= {target:g}x " + ("ok" if rtf >= target else "MISSED"))
        print(f"{name:45s} {rtf:15.1f}x {rtf / ceiling:10.0%} {mark:>8s}")
    print(
        json.dumps(
            {
                "rtf_mujoco_ceiling": round(ceiling, 1),
                "rtf_cameras_off": round(off, 1),
                "rtf_cameras_on": round(on, 1),
                "ratio_cameras_off_to_ceiling": round(off / ceiling, 3),
                "ratio_cameras_on_to_ceiling": round(on / ceiling, 3),
            }
        )
    )


if __name__ == "__main__":
    main()
