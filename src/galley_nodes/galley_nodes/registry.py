"""Every galley node by ROS node name: the single list the CLI, entry points and launch files use.

Entries are import paths, so that listing nodes imports none of them.
"""

from __future__ import annotations

import importlib

from galley_runtime.node import Node

__all__ = ["NODES", "load_node_class"]

NODES: dict[str, str] = {
    "arm_controller": "galley_nodes.nodes.arm_controller:ArmControllerNode",
    "diffusion_policy": "galley_nodes.nodes.diffusion_policy:DiffusionPolicyNode",
    "diff_drive_controller": "galley_nodes.nodes.diff_drive_controller:DiffDriveControllerNode",
    "failure_injector": "galley_nodes.nodes.failure_injector:FailureInjectorNode",
    "global_planner": "galley_nodes.nodes.global_planner:GlobalPlannerNode",
    "map_server": "galley_nodes.nodes.map_server:MapServerNode",
    "monitor": "galley_nodes.nodes.monitor:MonitorNode",
    "navigator": "galley_nodes.nodes.navigator:NavigatorNode",
    "perception": "galley_nodes.nodes.perception:PerceptionNode",
    "perturber": "galley_nodes.nodes.perturber:PerturberNode",
    "recorder": "galley_nodes.nodes.recorder:RecorderNode",
    "scene_markers": "galley_nodes.nodes.scene_markers:SceneMarkersNode",
    "sim": "galley_sim.sim_node:SimNode",
    "square_driver": "galley_nodes.nodes.square_driver:SquareDriverNode",
    "task_executor": "galley_nodes.nodes.task_executor:TaskExecutorNode",
    "task_planner": "galley_nodes.nodes.task_planner:TaskPlannerNode",
    "trajectory_logger": "galley_nodes.nodes.trajectory_logger:TrajectoryLoggerNode",
    "unicycle_base": "galley_nodes.nodes.unicycle_base:UnicycleBaseNode",
}


def load_node_class(name: str) -> type[Node]:
    """The node class registered under ``name``.

    Raises:
        KeyError: no such node; the message lists the known ones.
    """
    try:
        module_name, class_name = NODES[name].split(":")
    except KeyError:
        raise KeyError(f"no galley node {name!r}; known nodes: {', '.join(sorted(NODES))}") from None
    cls = getattr(importlib.import_module(module_name), class_name)
    if not (isinstance(cls, type) and issubclass(cls, Node)):
        raise TypeError(f"{NODES[name]} is not a galley Node class")
    return cls
