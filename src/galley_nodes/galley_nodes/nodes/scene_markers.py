"""``scene_markers``: the kitchen and the robot as rviz markers, from the scene file.

Publishes one latched ``visualization_msgs/msg/MarkerArray`` on /markers: furniture and walls as
boxes, the coloured zones as flat patches with their names, and the robot's base and arm links as
simple shapes attached to their TF frames (base_link, shoulder_link, ...), so rviz2 draws the
robot wherever TF puts it. It reads only the scene file, so it works the same with the MuJoCo
simulator and with Isaac Sim.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from galley_core.config import Config, param
from galley_core.geometry import quaternion_from_yaw
from galley_runtime.config_files import find_scene
from galley_runtime.node import Node, Publishes
from galley_runtime.qos import QoS

CUBE, CYLINDER, TEXT = 1, 3, 9
#: Robot shapes in their link frames, after robot.xml: (frame, type, centre xyz, size xyz), metres.
ROBOT_SHAPES = (
    ("base_link", CUBE, (0.0, 0.0, 0.2), (0.6, 0.5, 0.3)),
    ("base_link", CUBE, (0.2, 0.0, 0.675), (0.1, 0.12, 0.65)),
    ("base_link", CUBE, (-0.08, 0.0, 0.9), (0.06, 0.06, 1.1)),
    ("shoulder_link", CUBE, (0.165, 0.0, 0.0), (0.33, 0.06, 0.06)),
    ("elbow_link", CUBE, (0.0825, 0.0, 0.0), (0.165, 0.054, 0.054)),
    ("forearm_link", CUBE, (0.0825, 0.0, 0.0), (0.165, 0.05, 0.05)),
    ("gripper_link", CUBE, (0.02, 0.0, 0.0), (0.04, 0.11, 0.044)),
    ("left_finger_link", CUBE, (0.045, 0.006, 0.0), (0.08, 0.012, 0.024)),
    ("right_finger_link", CUBE, (0.045, -0.006, 0.0), (0.08, 0.012, 0.024)),
)


@dataclass(frozen=True)
class SceneMarkersConfig(Config):
    scene: str = param("kitchen", "scene name (config/scenes/<name>.yaml) or path")
    map_frame: str = param("map", "frame of the scene's furniture and zones")
    robot: bool = param(True, "also draw the robot's links in their TF frames")


class SceneMarkersNode(Node):
    name = "scene_markers"
    Config = SceneMarkersConfig
    publishes = (Publishes("markers", "visualization_msgs/msg/MarkerArray", QoS.latched()),)

    def __init__(self, host: Any, config: SceneMarkersConfig) -> None:
        super().__init__(host, config)
        scene = find_scene(config.scene)
        markers = []
        for box in scene.boxes:
            markers.append(
                self._marker(
                    "furniture",
                    config.map_frame,
                    CUBE,
                    centre=box.center,
                    size=box.size,
                    rgba=box.rgba,
                    yaw=box.yaw,
                )
            )
        for zone in scene.zones:
            centre = (zone.center[0], zone.center[1], zone.z + 0.002)
            markers.append(
                self._marker(
                    "zones", config.map_frame, CUBE, centre=centre, size=(*zone.size, 0.004), rgba=zone.rgba
                )
            )
            label = self._marker(
                "zone_names",
                config.map_frame,
                TEXT,
                centre=(centre[0], centre[1], zone.z + 0.15),
                size=(0.0, 0.0, 0.12),
                rgba=(1.0, 1.0, 1.0, 1.0),
            )
            label.text = zone.name
            markers.append(label)
        if config.robot:
            for frame, kind, centre, size in ROBOT_SHAPES:
                markers.append(
                    self._marker("robot", frame, kind, centre=centre, size=size, rgba=(0.75, 0.77, 0.8, 1.0))
                )
        for i, marker in enumerate(markers):
            marker.id = i
        self.publish("markers", self.msg("visualization_msgs/msg/MarkerArray", markers=markers))
        self.count = len(markers)

    def _marker(
        self,
        ns: str,
        frame: str,
        kind: int,
        *,
        centre: tuple[float, ...],
        size: tuple[float, ...],
        rgba: tuple[float, ...],
        yaw: float = 0.0,
    ) -> Any:
        q = quaternion_from_yaw(yaw)
        return self.msg(
            "visualization_msgs/msg/Marker",
            header={"stamp": {"sec": 0, "nanosec": 0}, "frame_id": frame},
            ns=ns,
            type=kind,
            action=0,
            pose={
                "position": dict(zip("xyz", map(float, centre), strict=True)),
                "orientation": dict(zip("xyzw", map(float, q), strict=True)),
            },
            scale=dict(zip("xyz", map(float, size), strict=True)),
            color=dict(zip("rgba", map(float, rgba), strict=True)),
            frame_locked=True,
        )
