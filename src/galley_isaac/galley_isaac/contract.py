"""What the graphs publish and subscribe, read from the graph descriptions themselves.

The topic contract of galley: the Isaac Sim graphs and the MuJoCo simulator node
(``galley_sim.sim_node.SimNode``) publish and subscribe the same topics, with the same message
types and the same frames, so that no other node can tell the simulators apart. This module reads
topics, types, header frames, QoS durability and TF edges off the ROS nodes of the graphs (their
``topicName``, ``type``, ``frameId`` ... values and, for ROS2PublishTransformTree, the prims'
frame-name overrides), so that a test can compare them with the simulator node's declaration and
with what it really publishes.

Three topics of the MuJoCo simulator are evaluation extras that the graphs do not publish
(:data:`MUJOCO_ONLY`); each has the reason and what to use under Isaac Sim instead.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from galley_isaac.graph import Graph, GraphNode, Targets

__all__ = [
    "MUJOCO_ONLY",
    "MUJOCO_ONLY_SUBSCRIPTIONS",
    "Endpoint",
    "TfEdge",
    "endpoints",
    "resolve_topic",
    "tf_edges",
]

#: Topics only the MuJoCo simulator publishes: topic -> why, and what carries the same under Isaac Sim.
MUJOCO_ONLY = {
    "/sim/ground_truth/base_pose": (
        "evaluation extra: no Isaac Sim node publishes a PoseStamped without the generic ROS2Publisher, "
        "whose inputs exist only at run time. Isaac's odometry does not drift, so TF map -> odom -> "
        "base_link is the ground-truth base pose under Isaac Sim"
    ),
    "/sim/contacts": (
        "evaluation extra: galley_msgs/Contacts (robot against walls and furniture) is MuJoCo's contact "
        "list; Isaac Sim has no node that lists contacts between arbitrary bodies"
    ),
    "/sim/preflight": (
        "the MuJoCo simulator's check of its own model (collision geometry, masses, interpenetration); "
        "the bridge does not check the USD scene, so nothing is published, and the monitor, which acts "
        "only on a failed preflight, never aborts for it"
    ),
}

#: Topics only the MuJoCo simulator subscribes to: topic -> why.
MUJOCO_ONLY_SUBSCRIPTIONS = {
    "/sim/teleport": (
        "evaluation extra: the task executor's teleport_on_failure puts the base or an object where a "
        "failed step should have left it (after a failed pick: the object into the gripper, which the "
        "diffusion policy also hears); the bridge has no teleport, so that option needs the MuJoCo "
        "simulator"
    ),
    "/sim/render_top_down": (
        "replanning extra: the task planner asks for a fresh top-down image before it plans again; "
        "under Isaac Sim it plans on the next image the bridge's top-down camera publishes"
    ),
}

TF_TYPE = "tf2_msgs/msg/TFMessage"
_PUBLISHERS = {
    "ROS2PublishClock": "rosgraph_msgs/msg/Clock",
    "ROS2PublishOdometry": "nav_msgs/msg/Odometry",
    "ROS2PublishImu": "sensor_msgs/msg/Imu",
    "ROS2PublishJointState": "sensor_msgs/msg/JointState",
    "ROS2CameraInfoHelper": "sensor_msgs/msg/CameraInfo",
    "ROS2PublishTransformTree": TF_TYPE,
    "ROS2PublishRawTransformTree": TF_TYPE,
}
#: Helpers whose message type depends on their ``type`` input.
_BY_TYPE = {
    "ROS2CameraHelper": {
        "rgb": "sensor_msgs/msg/Image",
        "depth": "sensor_msgs/msg/Image",
        "depth_pcl": "sensor_msgs/msg/PointCloud2",
    },
    "ROS2RtxLidarHelper": {
        "laser_scan": "sensor_msgs/msg/LaserScan",
        "point_cloud": "sensor_msgs/msg/PointCloud2",
    },
}
_SUBSCRIBERS = {
    "ROS2SubscribeTwist": "geometry_msgs/msg/Twist",
    "ROS2SubscribeJointState": "sensor_msgs/msg/JointState",
}


@dataclass(frozen=True)
class Endpoint:
    """A topic a graph node publishes or subscribes.

    Attributes:
        topic: the resolved, absolute topic name.
        type: the ROS message type name, e.g. ``sensor_msgs/msg/Image``.
        publishes: True for a publisher, False for a subscription.
        frame: the messages' ``header.frame_id``; None for messages without a header and for TF.
        child_frame: ``child_frame_id`` of odometry, else None.
        latched: transient-local durability (late subscribers get the last message).
        where: ``<graph path>/<node name>``, for messages.
    """

    topic: str
    type: str
    publishes: bool
    frame: str | None
    child_frame: str | None
    latched: bool
    where: str


@dataclass(frozen=True)
class TfEdge:
    """A transform a graph publishes: parent frame, child frame, and whether on /tf_static."""

    parent: str
    child: str
    static: bool


def resolve_topic(topic: str, namespace: str) -> str:
    """The absolute name of ``topic`` in ``namespace`` (absolute names stay as they are)."""
    if topic.startswith("/"):
        return topic
    return "/" + "/".join(part for part in (namespace.strip("/"), topic) if part)


def endpoints(graphs: Iterable[Graph]) -> list[Endpoint]:
    """Every topic endpoint of every ROS node in ``graphs``.

    Raises:
        ValueError: a ROS node lacks its topicName or has a ``type`` galley does not know.
    """
    out = []
    for graph in graphs:
        for node in graph.nodes:
            kind = node.type.rpartition(".")[2]
            message = _message_type(graph, node, kind)
            if message is None:
                continue
            topic = node.value("topicName")
            if not isinstance(topic, str) or not topic:
                raise ValueError(f"{graph.path}/{node.name}: a ROS node needs a topicName value")
            frame = _header_frame(node, kind, message)
            out.append(
                Endpoint(
                    topic=resolve_topic(topic, node.value("nodeNamespace", "")),
                    type=message,
                    publishes=kind not in _SUBSCRIBERS,
                    frame=frame,
                    child_frame=node.value("chassisFrameId") if kind == "ROS2PublishOdometry" else None,
                    latched=_latched(graph, node),
                    where=f"{graph.path}/{node.name}",
                )
            )
    return out


def tf_edges(graphs: Iterable[Graph]) -> set[TfEdge]:
    """Every (parent, child, static) transform the graphs publish.

    ROS2PublishTransformTree publishes each target prim relative to the parent prim, named by the
    prims' ``isaac:nameOverride`` (the graph's ``name_overrides``); ROS2PublishRawTransformTree
    names its frames in ``parentFrameId`` and ``childFrameId``.

    Raises:
        ValueError: a transform-tree prim has no frame name in the graph's ``name_overrides``.
    """
    edges = set()
    for graph in graphs:
        for node in graph.nodes:
            kind = node.type.rpartition(".")[2]
            static = bool(node.value("staticPublisher", False))
            if kind == "ROS2PublishRawTransformTree":
                edges.add(
                    TfEdge(
                        node.value("parentFrameId", "odom"), node.value("childFrameId", "base_link"), static
                    )
                )
            elif kind == "ROS2PublishTransformTree":
                parent = _frame_of(graph, node, node.value("parentPrim", Targets(())))
                for prim in node.value("targetPrims", Targets(())).paths:
                    edges.add(TfEdge(parent, _frame_of(graph, node, Targets((prim,))), static))
    return edges


def _message_type(graph: Graph, node: GraphNode, kind: str) -> str | None:
    if kind in _PUBLISHERS:
        return _PUBLISHERS[kind]
    if kind in _SUBSCRIBERS:
        return _SUBSCRIBERS[kind]
    if kind in _BY_TYPE:
        data = node.value("type")
        if data not in _BY_TYPE[kind]:
            raise ValueError(
                f"{graph.path}/{node.name}: type {data!r}; galley knows {sorted(_BY_TYPE[kind])}"
            )
        return _BY_TYPE[kind][data]
    return None


def _header_frame(node: GraphNode, kind: str, message: str) -> str | None:
    """``header.frame_id`` of the node's messages; None where there is no header (or TF, Clock)."""
    if message == TF_TYPE or kind == "ROS2PublishClock" or kind in _SUBSCRIBERS:
        return None
    if kind == "ROS2PublishJointState":
        return ""  # the bridge leaves JointState's frame_id empty, as the simulator does
    frame = node.value("odomFrameId" if kind == "ROS2PublishOdometry" else "frameId")
    return str(frame) if frame is not None else None


def _latched(graph: Graph, node: GraphNode) -> bool:
    if node.value("staticPublisher", False):
        return True
    for source, _ in graph.sources_of(node.name, "qosProfile"):
        if source.type.endswith("ROS2QoSProfile") and source.value("durability") == "transientLocal":
            return True
    return False


def _frame_of(graph: Graph, node: GraphNode, prims: Targets) -> str:
    if not prims.paths:
        return "world"  # ROS2PublishTransformTree's frame for an unset parent prim
    prim = prims.paths[0]
    try:
        return graph.name_overrides[prim]
    except KeyError:
        raise ValueError(
            f"{graph.path}/{node.name}: prim {prim} has no frame name (name_overrides)"
        ) from None
