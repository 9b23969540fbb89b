"""Run galley's kitchen in Isaac Sim: load the scene, build the ROS 2 bridge graphs, play.

Run it with Isaac Sim's Python (galley_core and galley_isaac installed into it, see
docs/guides/isaac-sim.md)::

    ./python.sh -m galley_isaac.run_isaac --config /path/to/galley/config/isaac/kitchen.yaml

It starts a SimulationApp, enables the ROS 2 bridge, references the scene USD at its scale and the
robot USD at its start pose, creates galley's map frame and the cameras' optical frames, sets the
``isaac:nameOverride`` of every prim on TF to its galley frame name, sets the physics and render
rates, builds the graphs of :mod:`galley_isaac.graphs` and plays until the window closes (or for
``--duration-s``). Then ``ros2 launch launch/kitchen_isaac.launch.py`` runs galley's nodes on it.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import Any

from galley_isaac.builder import build
from galley_isaac.config import BridgeConfig, BridgeConfigError, load_bridge_config
from galley_isaac.graph import SUPPORTED_VERSIONS
from galley_isaac.graphs import OPTICAL_PRIM, OPTICAL_ROTATION_XYZW, Pose3, bridge_graphs

__all__ = ["main", "missing_files"]

DEFAULT_CONFIG = Path(__file__).resolve().parents[3] / "config" / "isaac" / "kitchen.yaml"
NAME_OVERRIDE = "isaac:nameOverride"


def missing_files(config: BridgeConfig) -> list[str]:
    """Messages for the scene and robot USD files that do not exist (URLs are not checked)."""
    problems = []
    for key, path in (("scene.usd_path", config.scene.usd_path), ("robot.usd_path", config.robot.usd_path)):
        if key == "scene.usd_path" and not path:
            problems.append(f"{config.source}: scene.usd_path is empty; fix: set it to the scene's USD file")
        elif path and "://" not in path and not Path(path).is_file():
            problems.append(
                f"{config.source}: {key} = {path} does not exist; fix: point it at the USD file "
                "(absolute, relative to the config file, or an omniverse:// URL)"
            )
    return problems


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    parser = argparse.ArgumentParser(prog="run_isaac", description=__doc__.splitlines()[0])
    parser.add_argument("--config", default=str(DEFAULT_CONFIG), help="bridge config YAML")
    parser.add_argument("--headless", action="store_true", help="no window (rendering still runs)")
    parser.add_argument(
        "--isaac-version", default="auto", choices=("auto", *SUPPORTED_VERSIONS), help="node type names"
    )
    parser.add_argument(
        "--duration-s", type=float, default=0.0, help="stop after this much wall time; 0: never"
    )
    args = parser.parse_args(argv)
    try:
        config = load_bridge_config(args.config)
    except BridgeConfigError as err:
        print(f"run_isaac: {err}", file=sys.stderr)
        return 2
    problems = missing_files(config)
    if problems:
        print("run_isaac: " + "\nrun_isaac: ".join(problems), file=sys.stderr)
        return 2

    from isaacsim import SimulationApp  # only inside Isaac Sim; starts Kit  # noqa: PLC0415 (optional: Isaac Sim)

    app = SimulationApp({"headless": args.headless})
    try:
        version = _isaac_version() if args.isaac_version == "auto" else args.isaac_version
        print(f"run_isaac: Isaac Sim {version}, config {config.source}")
        _enable_bridge(version)
        app.update()
        stage = _load_stage(config)
        _set_rates(stage, config)
        app.update()

        graphs = bridge_graphs(config, _map_to_odom(stage, config))
        _name_frames(stage, graphs)
        build(graphs, version)
        print(f"run_isaac: built {len(graphs)} graphs under /Galley; playing")
        import omni.timeline  # noqa: PLC0415 (optional: Isaac Sim)

        omni.timeline.get_timeline_interface().play()
        start = time.monotonic()
        while app.is_running() and (args.duration_s <= 0 or time.monotonic() - start < args.duration_s):
            app.update()
    finally:
        app.close()
    return 0


def _isaac_version() -> str:
    """``major.minor`` of the running Isaac Sim, mapped to a supported version."""
    try:
        from isaacsim.core.version import get_version  # noqa: PLC0415 (optional: Isaac Sim)

        major, minor = get_version()[2], get_version()[3]
    except ImportError:
        return "4.5"
    version = f"{major}.{minor}"
    if version not in SUPPORTED_VERSIONS:
        newest = SUPPORTED_VERSIONS[-1]
        print(f"run_isaac: Isaac Sim {version} is not one galley checked; using {newest}'s node types")
        return newest
    return version


def _enable_bridge(version: str) -> None:
    import omni.kit.app  # noqa: PLC0415 (optional: Isaac Sim)

    name = "omni.isaac.ros2_bridge" if version.startswith("4.") else "isaacsim.ros2.bridge"
    omni.kit.app.get_app().get_extension_manager().set_extension_enabled_immediate(name, True)


def _load_stage(config: BridgeConfig) -> Any:
    """A new stage in metres, z up, with the scene, the robot and galley's map frame."""
    import omni.usd  # noqa: PLC0415 (optional: Isaac Sim)
    from pxr import Gf, UsdGeom  # noqa: PLC0415 (optional: Isaac Sim)

    context = omni.usd.get_context()
    context.new_stage()
    stage = context.get_stage()
    UsdGeom.SetStageMetersPerUnit(stage, 1.0)
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z)
    UsdGeom.Xform.Define(stage, "/World")
    scene = UsdGeom.Xform.Define(stage, config.scene.prim_path)
    scene.GetPrim().GetReferences().AddReference(config.scene.usd_path)
    s = config.scene.scale
    _set_pose(scene, (0.0, 0.0, 0.0), 0.0, scale=(s, s, s))
    if config.robot.usd_path:
        robot = UsdGeom.Xform.Define(stage, config.robot.prim_path)
        robot.GetPrim().GetReferences().AddReference(config.robot.usd_path)
        x, y, yaw = config.robot.start_pose
        _set_pose(robot, (x, y, 0.0), yaw)
    UsdGeom.Xform.Define(stage, config.scene.map_prim_path)  # identity: map is the world frame
    for camera in config.cameras.values():
        if camera.parent_frame:
            optical = UsdGeom.Xform.Define(stage, f"{config.robot_prim(camera.prim)}/{OPTICAL_PRIM}")
            x, y, z, w = OPTICAL_ROTATION_XYZW
            optical.ClearXformOpOrder()
            optical.AddOrientOp(UsdGeom.XformOp.PrecisionDouble).Set(Gf.Quatd(w, x, y, z))
    for key, path in _required_prims(config).items():
        if not stage.GetPrimAtPath(path).IsValid():
            raise SystemExit(
                f"run_isaac: {config.source}: {key} = {path} is not a prim of the stage; fix: correct the "
                "path (robot parts are relative to robot.prim_path, objects to scene.prim_path)"
            )
    return stage


def _required_prims(config: BridgeConfig) -> dict[str, str]:
    prims = {
        "robot.base_link": config.base_link_prim,
        "robot.lidar_prim": config.robot_prim(config.robot.lidar_prim),
        "robot.imu_prim": config.robot_prim(config.robot.imu_prim),
    }
    prims |= {f"cameras.{n}.prim": config.robot_prim(c.prim) for n, c in config.cameras.items()}
    prims |= {f"robot_links.{k.frame}": k.prim for k in config.links}
    prims |= {f"static_links.{k.frame}": k.prim for k in config.static_links}
    prims |= {f"objects.{name}": prim for name, prim in config.objects.items()}
    return prims


def _set_pose(
    xform: Any, translation: tuple[float, float, float], yaw: float, scale: tuple[float, ...] = ()
) -> None:
    from pxr import Gf  # noqa: PLC0415 (optional: Isaac Sim)

    xform.ClearXformOpOrder()  # ops from a referenced asset would otherwise compose with ours
    xform.AddTranslateOp().Set(Gf.Vec3d(*translation))
    xform.AddRotateZOp().Set(math.degrees(yaw))
    if scale:
        xform.AddScaleOp().Set(Gf.Vec3f(*scale))


def _set_rates(stage: Any, config: BridgeConfig) -> None:
    """Physics at ``rates.physics_hz``, one rendered frame (OnPlaybackTick) per ``1 / render_hz``."""
    import carb.settings  # noqa: PLC0415 (optional: Isaac Sim)
    import omni.timeline  # noqa: PLC0415 (optional: Isaac Sim)
    from pxr import PhysxSchema, UsdPhysics  # noqa: PLC0415 (optional: Isaac Sim)

    rates = config.rates
    path = config.scene.physics_scene_path
    prim = stage.GetPrimAtPath(path)
    if not prim.IsValid():
        prim = UsdPhysics.Scene.Define(stage, path).GetPrim()
    PhysxSchema.PhysxSceneAPI.Apply(prim).CreateTimeStepsPerSecondAttr().Set(round(rates.physics_hz))
    stage.SetTimeCodesPerSecond(rates.render_hz)
    timeline = omni.timeline.get_timeline_interface()
    timeline.set_time_codes_per_second(rates.render_hz)
    timeline.set_target_framerate(rates.render_hz)
    settings = carb.settings.get_settings()
    settings.set_bool("/app/runLoops/main/rateLimitEnabled", True)  # real time: /clock follows the wall clock
    settings.set_int("/app/runLoops/main/rateLimitFrequency", round(rates.render_hz))


def _map_to_odom(stage: Any, config: BridgeConfig) -> Pose3:
    """The base link's pose in map before playback: where Isaac's odometry will start."""
    from pxr import Usd, UsdGeom  # noqa: PLC0415 (optional: Isaac Sim)

    cache = UsdGeom.XformCache(Usd.TimeCode.Default())
    world = cache.GetLocalToWorldTransform(stage.GetPrimAtPath(config.base_link_prim))
    world.Orthonormalize()
    t = world.ExtractTranslation()
    q = world.ExtractRotationQuat()
    i, j, k = q.GetImaginary()
    return (t[0], t[1], t[2]), (i, j, k, q.GetReal())


def _name_frames(stage: Any, graphs: Any) -> None:
    """Set ``isaac:nameOverride`` on every prim the TF graphs publish, to its galley frame name."""
    from pxr import Sdf  # noqa: PLC0415 (optional: Isaac Sim)

    for graph in graphs:
        for path, frame in graph.name_overrides.items():
            prim = stage.GetPrimAtPath(path)
            attribute = prim.GetAttribute(NAME_OVERRIDE) or prim.CreateAttribute(
                NAME_OVERRIDE, Sdf.ValueTypeNames.String
            )
            attribute.Set(frame)


if __name__ == "__main__":
    sys.exit(main())
