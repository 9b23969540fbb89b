"""galley's node runtime: how a node is declared, its messages and QoS, the two hosts that run nodes
(embedded: one process, lockstep simulated clock; ROS 2: rclpy), parameter files, and recording."""

__version__ = "0.1.0"
