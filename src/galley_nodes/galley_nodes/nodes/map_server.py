"""``map_server``: publishes /map from a nav2 map_server YAML file, transient-local, like nav2's.

A missing or malformed map is logged with the file, the entry and the fix, and nothing is
published; setting ``yaml_filename`` again (``ros2 param set``) loads and publishes the new map.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from galley_core.config import Config, param
from galley_core.navigation.grid import MapFileError, OccupancyGrid, load_map_yaml
from galley_runtime.conversions import occupancy_grid_msg
from galley_runtime.node import Node, Publishes
from galley_runtime.qos import QoS


@dataclass(frozen=True)
class MapServerConfig(Config):
    yaml_filename: str = param("", "nav2 map YAML file (image paths relative to its folder)")
    frame_id: str = param("map", "frame the map is expressed in")


class MapServerNode(Node):
    name = "map_server"
    Config = MapServerConfig
    publishes = (Publishes("map", "nav_msgs/msg/OccupancyGrid", QoS.latched()),)

    def __init__(self, host: Any, config: MapServerConfig) -> None:
        super().__init__(host, config)
        self.grid: OccupancyGrid | None = None
        #: Why no map is published ("" once one is).
        self.error = ""
        self._load()

    def on_config_change(self, config: MapServerConfig) -> None:
        self.config = config
        self._load()

    def _load(self) -> None:
        c = self.config
        if not c.yaml_filename:
            self.error = "no map: set the yaml_filename parameter to a nav2 map YAML file"
            self.log.error(self.error)
            return
        try:
            self.grid = load_map_yaml(c.yaml_filename)
        except MapFileError as err:
            self.error = f"{err} (no map published)"
            self.log.error(self.error)
            return
        self.error = ""
        self.publish("map", occupancy_grid_msg(self.grid, c.frame_id, self.now_ns()))
        self.log.info(
            f"published {c.yaml_filename}: {self.grid.width} x {self.grid.height} cells "
            f"at {self.grid.resolution} m"
        )
