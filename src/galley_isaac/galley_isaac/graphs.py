"""galley's action graphs: the topics, types and frames of the MuJoCo simulator, from Isaac Sim.

:func:`bridge_graphs` turns a :class:`~galley_isaac.config.BridgeConfig` into the graphs
:mod:`galley_isaac.builder` creates in Isaac Sim. Kitchen-R publishes through five graphs (camera,
IMU, LiDAR, TF, odometry); galley adds the clock, the joint states and the command side:

========================  ========================================================================
``/Galley/Clock``         OnPlaybackTick -> ROS2PublishClock (/clock, simulation time)
``/Galley/Cameras``       render products of the base, wrist and top-down cameras ->
                          ROS2CameraHelper (rgb; base depth) and ROS2CameraInfoHelper; the top-down
                          image is transient-local (latched) through a ROS2QoSProfile
``/Galley/Imu``           OnPhysicsStep -> IsaacSimulationGate -> IsaacReadIMU -> ROS2PublishImu
``/Galley/Lidar``         render product of the RTX 2D lidar -> ROS2RtxLidarHelper (laser_scan)
``/Galley/TF``            ROS2PublishTransformTree: robot links (/tf), sensor, camera and optical
                          frames (/tf_static), objects ``object/<name>`` in map (/tf)
``/Galley/Odometry``      IsaacComputeOdometry -> ROS2PublishOdometry (/odom) and
                          ROS2PublishRawTransformTree odom -> base_link and map -> odom (/tf)
``/Galley/JointStates``   ROS2PublishJointState (/joint_states)
``/Galley/Commands``      ROS2SubscribeTwist (/cmd_vel) -> BreakVector3 -> DifferentialController ->
                          IsaacArticulationController (wheels); ROS2SubscribeJointState
                          (/arm/joint_command) -> IsaacArticulationController (arm, fingers)
========================  ========================================================================

Frame names on TF come from the prims' ``isaac:nameOverride`` attributes, which the run script
sets from :meth:`BridgeConfig.frame_prims`. Isaac's odometry starts at the robot's pose when
playback starts, so ``map -> odom`` is that pose (``map_to_odom``); Isaac's odometry does not drift,
so map -> odom -> base_link is the ground-truth base pose, as in the MuJoCo simulator.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from galley_isaac.config import BridgeConfig, yaw_quaternion_xyzw
from galley_isaac.graph import Connection, Graph, GraphNode, Targets

__all__ = ["GRAPH_ROOT", "Pose3", "bridge_graphs", "start_pose_of"]

GRAPH_ROOT = "/Galley"
#: A pose: translation (x, y, z) in m and rotation quaternion (x, y, z, w).
Pose3 = tuple[tuple[float, float, float], tuple[float, float, float, float]]

BRIDGE = "isaacsim.ros2.bridge."
CORE = "isaacsim.core.nodes."
TICK = "omni.graph.action.OnPlaybackTick"
BREAK3 = "omni.graph.nodes.BreakVector3"


def start_pose_of(config: BridgeConfig) -> Pose3:
    """The robot's configured start pose (``robot.start_pose``) as a 3-D pose in map."""
    x, y, yaw = config.robot.start_pose
    return (x, y, 0.0), yaw_quaternion_xyzw(yaw)


def bridge_graphs(config: BridgeConfig, map_to_odom: Pose3 | None = None) -> tuple[Graph, ...]:
    """Every graph of the bridge for ``config``.

    Args:
        config: the bridge configuration.
        map_to_odom: the base link's pose in map when playback starts (where Isaac's odometry
            starts); default: ``robot.start_pose``. The run script reads it from the stage.
    """
    b = _Builder(config)
    return (
        b.clock(),
        b.cameras(),
        b.imu(),
        b.lidar(),
        b.tf(),
        b.odometry(map_to_odom or start_pose_of(config)),
        b.joint_states(),
        b.commands(),
    )


class _Builder:
    """Builds the graphs; every ROS node gets the namespace, a ROS2Context and simulation time."""

    def __init__(self, config: BridgeConfig) -> None:
        self.c = config

    # -- shared pieces ------------------------------------------------------------------------

    def _ros(self, name: str, kind: str, **values: Any) -> GraphNode:
        return GraphNode(name, BRIDGE + kind, {"nodeNamespace": self.c.namespace, **values})

    @staticmethod
    def _common(graph_nodes: Sequence[GraphNode], *, stamped: bool = True) -> list[Connection]:
        """Context (and simulation time) into every ROS node that takes them."""
        connections = []
        for n in graph_nodes:
            if (
                n.type.startswith(BRIDGE)
                and n.type != BRIDGE + "ROS2Context"
                and n.type != BRIDGE + "ROS2QoSProfile"
            ):
                connections.append(Connection("context.outputs:context", f"{n.name}.inputs:context"))
                if stamped and n.type.rpartition(".")[2] in _STAMPED:
                    connections.append(
                        Connection("sim_time.outputs:simulationTime", f"{n.name}.inputs:timeStamp")
                    )
        return connections

    def _graph(
        self,
        name: str,
        nodes: list[GraphNode],
        connections: list[Connection],
        name_overrides: dict[str, str] | None = None,
    ) -> Graph:
        heads = [
            GraphNode("context", BRIDGE + "ROS2Context", {"useDomainIDEnvVar": True}),
            GraphNode("sim_time", CORE + "IsaacReadSimulationTime", {"resetOnStop": True}),
        ]
        all_nodes = [*heads, *nodes]
        return Graph(
            f"{GRAPH_ROOT}/{name}",
            tuple(all_nodes),
            tuple(connections + self._common(all_nodes)),
            name_overrides=name_overrides or {},
        )

    def _gate(self, name: str, step: int) -> GraphNode:
        return GraphNode(name, CORE + "IsaacSimulationGate", {"step": step})

    # -- graphs --------------------------------------------------------------------------------

    def clock(self) -> Graph:
        nodes = [GraphNode("tick", TICK), self._ros("publish_clock", "ROS2PublishClock", topicName="/clock")]
        return self._graph("Clock", nodes, [Connection("tick.outputs:tick", "publish_clock.inputs:execIn")])

    def cameras(self) -> Graph:
        c, rates = self.c, self.c.rates
        nodes: list[GraphNode] = [
            GraphNode("tick", TICK),
            GraphNode("one_frame", CORE + "OgnIsaacRunOneSimulationFrame"),
        ]
        connections = [Connection("tick.outputs:tick", "one_frame.inputs:execIn")]
        for name, camera in c.cameras.items():
            skip = rates.every("top_down_hz" if name == "top_down" else "camera_hz") - 1
            render = f"{name}_render"
            nodes.append(
                GraphNode(
                    render,
                    CORE + "IsaacCreateRenderProduct",
                    {
                        "cameraPrim": Targets((c.robot_prim(camera.prim),)),
                        "width": camera.width,
                        "height": camera.height,
                    },
                )
            )
            connections.append(Connection("one_frame.outputs:step", f"{render}.inputs:execIn"))
            helpers = [
                (f"{name}_rgb", "ROS2CameraHelper", {"type": "rgb", "topicName": f"camera/{name}/image_raw"}),
                (f"{name}_info", "ROS2CameraInfoHelper", {"topicName": f"camera/{name}/camera_info"}),
            ]
            if camera.depth:
                helpers.append(
                    (
                        f"{name}_depth",
                        "ROS2CameraHelper",
                        {"type": "depth", "topicName": f"camera/{name}/depth/image_raw"},
                    )
                )
            for helper, kind, values in helpers:
                if name == "top_down" and kind == "ROS2CameraInfoHelper":
                    continue  # the simulator publishes the top-down image alone
                nodes.append(
                    self._ros(
                        helper,
                        kind,
                        frameId=camera.frame,
                        frameSkipCount=skip,
                        resetSimulationTimeOnStop=True,
                        **values,
                    )
                )
                connections += [
                    Connection(f"{render}.outputs:execOut", f"{helper}.inputs:execIn"),
                    Connection(f"{render}.outputs:renderProductPath", f"{helper}.inputs:renderProductPath"),
                ]
        # The top-down image is latched, as the simulator's: transient local, the last image kept.
        nodes.append(
            GraphNode(
                "latched_qos",
                BRIDGE + "ROS2QoSProfile",
                # Setting a policy switches createProfile to "Custom" (OgnROS2QoSProfile.py).
                {
                    "history": "keepLast",
                    "depth": 1,
                    "reliability": "reliable",
                    "durability": "transientLocal",
                },
            )
        )
        connections.append(Connection("latched_qos.outputs:qosProfile", "top_down_rgb.inputs:qosProfile"))
        return self._graph("Cameras", nodes, connections)

    def imu(self) -> Graph:
        c = self.c
        nodes = [
            GraphNode("physics_step", CORE + "OnPhysicsStep"),
            self._gate("gate", c.rates.every("imu_hz", "physics_hz")),
            GraphNode(
                "read_imu",
                "isaacsim.sensors.physics.IsaacReadIMU",
                {"imuPrim": Targets((c.robot_prim(c.robot.imu_prim),)), "readGravity": True},
            ),
            self._ros("publish_imu", "ROS2PublishImu", topicName="imu/data", frameId=c.frames.imu),
        ]
        connections = [
            Connection("physics_step.outputs:step", "gate.inputs:execIn"),
            Connection("gate.outputs:execOut", "read_imu.inputs:execIn"),
            Connection("read_imu.outputs:execOut", "publish_imu.inputs:execIn"),
            Connection("read_imu.outputs:angVel", "publish_imu.inputs:angularVelocity"),
            Connection("read_imu.outputs:linAcc", "publish_imu.inputs:linearAcceleration"),
            Connection("read_imu.outputs:orientation", "publish_imu.inputs:orientation"),
        ]
        return self._graph("Imu", nodes, connections)

    def lidar(self) -> Graph:
        c = self.c
        nodes = [
            GraphNode("tick", TICK),
            GraphNode("one_frame", CORE + "OgnIsaacRunOneSimulationFrame"),
            # An RTX lidar renders through a render product like a camera (1x1: the lidar ignores it).
            GraphNode(
                "lidar_render",
                CORE + "IsaacCreateRenderProduct",
                {"cameraPrim": Targets((c.robot_prim(c.robot.lidar_prim),)), "width": 1, "height": 1},
            ),
            self._ros(
                "publish_scan",
                "ROS2RtxLidarHelper",
                type="laser_scan",
                topicName="scan",
                frameId=c.frames.laser,
                resetSimulationTimeOnStop=True,
            ),
        ]
        connections = [
            Connection("tick.outputs:tick", "one_frame.inputs:execIn"),
            Connection("one_frame.outputs:step", "lidar_render.inputs:execIn"),
            Connection("lidar_render.outputs:execOut", "publish_scan.inputs:execIn"),
            Connection("lidar_render.outputs:renderProductPath", "publish_scan.inputs:renderProductPath"),
        ]
        return self._graph("Lidar", nodes, connections)

    def tf(self) -> Graph:
        c = self.c
        prims = c.frame_prims()
        nodes: list[GraphNode] = [GraphNode("tick", TICK), self._gate("gate", c.rates.every("state_hz"))]
        connections = [Connection("tick.outputs:tick", "gate.inputs:execIn")]

        def tree(name: str, parent: str, children: Sequence[str], static: bool) -> None:
            nodes.append(
                self._ros(
                    name,
                    "ROS2PublishTransformTree",
                    topicName="tf_static" if static else "tf",
                    staticPublisher=static,
                    parentPrim=Targets((prims[parent],)),
                    targetPrims=Targets(tuple(prims[ch] for ch in children)),
                )
            )
            connections.append(Connection("gate.outputs:execOut", f"{name}.inputs:execIn"))

        for static, links in ((False, c.links), (True, c.static_links)):
            by_parent: dict[str, list[str]] = {}
            for link in links:
                by_parent.setdefault(link.parent, []).append(link.frame)
            for i, (parent, children) in enumerate(by_parent.items()):
                tree(f"{'static' if static else 'links'}_{i}", parent, children, static)
        optical: dict[str, list[str]] = {
            cam.parent_frame: [] for cam in c.cameras.values() if cam.parent_frame
        }
        for cam in c.cameras.values():
            if cam.parent_frame:
                optical[cam.parent_frame].append(cam.frame)
                prims[cam.frame] = c.robot_prim(cam.prim) + "/" + OPTICAL_PRIM
        for i, (parent, children) in enumerate(optical.items()):
            tree(f"optical_{i}", parent, children, True)
        if c.objects:
            tree("objects", c.frames.map, [f"object/{name}" for name in c.objects], False)
        used = {path for n in nodes for path in _target_paths(n)}
        overrides = {prim: frame for frame, prim in prims.items() if prim in used}
        return self._graph("TF", nodes, connections, overrides)

    def odometry(self, map_to_odom: Pose3) -> Graph:
        c = self.c
        translation, rotation = map_to_odom
        nodes = [
            GraphNode("tick", TICK),
            self._gate("gate", c.rates.every("state_hz")),
            GraphNode(
                "compute_odom", CORE + "IsaacComputeOdometry", {"chassisPrim": Targets((c.base_link_prim,))}
            ),
            self._ros(
                "publish_odom",
                "ROS2PublishOdometry",
                topicName="odom",
                odomFrameId=c.frames.odom,
                chassisFrameId=c.frames.base_link,
                publishRawVelocities=False,
                robotFront=[1.0, 0.0, 0.0],
            ),
            self._ros(
                "publish_odom_tf",
                "ROS2PublishRawTransformTree",
                topicName="tf",
                parentFrameId=c.frames.odom,
                childFrameId=c.frames.base_link,
                staticPublisher=False,
            ),
            self._ros(
                "publish_map_tf",
                "ROS2PublishRawTransformTree",
                topicName="tf",
                parentFrameId=c.frames.map,
                childFrameId=c.frames.odom,
                staticPublisher=False,
                translation=list(translation),
                rotation=list(rotation),
            ),
        ]
        connections = [
            Connection("tick.outputs:tick", "gate.inputs:execIn"),
            Connection("gate.outputs:execOut", "compute_odom.inputs:execIn"),
            Connection("compute_odom.outputs:execOut", "publish_odom.inputs:execIn"),
            Connection("compute_odom.outputs:execOut", "publish_odom_tf.inputs:execIn"),
            Connection("gate.outputs:execOut", "publish_map_tf.inputs:execIn"),
        ]
        for output, target in (
            ("position", "position"),
            ("orientation", "orientation"),
            ("linearVelocity", "linearVelocity"),
            ("angularVelocity", "angularVelocity"),
        ):
            connections.append(Connection(f"compute_odom.outputs:{output}", f"publish_odom.inputs:{target}"))
        connections += [
            Connection("compute_odom.outputs:position", "publish_odom_tf.inputs:translation"),
            Connection("compute_odom.outputs:orientation", "publish_odom_tf.inputs:rotation"),
        ]
        return self._graph("Odometry", nodes, connections)

    def joint_states(self) -> Graph:
        c = self.c
        nodes = [
            GraphNode("tick", TICK),
            self._gate("gate", c.rates.every("state_hz")),
            self._ros(
                "publish_joints",
                "ROS2PublishJointState",
                topicName="joint_states",
                targetPrim=Targets((c.articulation_prim,)),
            ),
        ]
        connections = [
            Connection("tick.outputs:tick", "gate.inputs:execIn"),
            Connection("gate.outputs:execOut", "publish_joints.inputs:execIn"),
        ]
        return self._graph("JointStates", nodes, connections)

    def commands(self) -> Graph:
        c, robot = self.c, self.c.robot
        articulation = Targets((c.articulation_prim,))
        nodes = [
            GraphNode("tick", TICK),
            self._ros("cmd_vel", "ROS2SubscribeTwist", topicName="cmd_vel"),
            GraphNode("linear", BREAK3),
            GraphNode("angular", BREAK3),
            GraphNode(
                "diff_drive",
                "isaacsim.robot.wheeled_robots.DifferentialController",
                {
                    "wheelRadius": robot.wheel_radius_m,
                    "wheelDistance": robot.wheel_distance_m,
                    "maxLinearSpeed": robot.max_linear_speed_mps,
                    "maxAngularSpeed": robot.max_angular_speed_rps,
                    "maxWheelSpeed": robot.max_linear_speed_mps / robot.wheel_radius_m
                    + robot.max_angular_speed_rps * robot.wheel_distance_m / (2.0 * robot.wheel_radius_m),
                },
            ),
            GraphNode(
                "wheels",
                CORE + "IsaacArticulationController",
                {"targetPrim": articulation, "jointNames": list(robot.wheel_joints)},
            ),
            self._ros("joint_command", "ROS2SubscribeJointState", topicName="arm/joint_command"),
            GraphNode("arm", CORE + "IsaacArticulationController", {"targetPrim": articulation}),
        ]
        connections = [
            Connection("tick.outputs:tick", "cmd_vel.inputs:execIn"),
            Connection("tick.outputs:tick", "wheels.inputs:execIn"),
            Connection("cmd_vel.outputs:execOut", "diff_drive.inputs:execIn"),
            Connection("cmd_vel.outputs:linearVelocity", "linear.inputs:tuple"),
            Connection("cmd_vel.outputs:angularVelocity", "angular.inputs:tuple"),
            Connection("linear.outputs:x", "diff_drive.inputs:linearVelocity"),
            Connection("angular.outputs:z", "diff_drive.inputs:angularVelocity"),
            Connection("diff_drive.outputs:velocityCommand", "wheels.inputs:velocityCommand"),
            Connection("tick.outputs:tick", "joint_command.inputs:execIn"),
            Connection("joint_command.outputs:execOut", "arm.inputs:execIn"),
            Connection("joint_command.outputs:jointNames", "arm.inputs:jointNames"),
            Connection("joint_command.outputs:positionCommand", "arm.inputs:positionCommand"),
            Connection("joint_command.outputs:velocityCommand", "arm.inputs:velocityCommand"),
            Connection("joint_command.outputs:effortCommand", "arm.inputs:effortCommand"),
        ]
        return self._graph("Commands", nodes, connections)


def _target_paths(node: GraphNode) -> list[str]:
    return [p for key in ("parentPrim", "targetPrims") for p in node.value(key, Targets(())).paths]


#: The prim name of the optical frame the run script creates under each camera prim: a USD camera
#: looks along -z with +y up; a ROS optical frame looks along +z with +y down (180 degrees about x).
OPTICAL_PRIM = "galley_optical"
OPTICAL_ROTATION_XYZW = (1.0, 0.0, 0.0, 0.0)
#: ROS nodes whose messages carry the timeStamp input (the helpers stamp their own messages).
_STAMPED = frozenset(
    {
        "ROS2PublishClock",
        "ROS2PublishImu",
        "ROS2PublishOdometry",
        "ROS2PublishRawTransformTree",
        "ROS2PublishTransformTree",
        "ROS2PublishJointState",
    }
)
