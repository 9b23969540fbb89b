"""galley's node runtime: node declaration, messages, QoS, both hosts, parameter files, recording.

The two hosts run the same nodes: embedded (one process, lockstep simulated clock) and ROS 2 (rclpy).
"""

__version__ = "0.1.0"
