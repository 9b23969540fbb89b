"""galley's nodes and the two hosts that run them: embedded (one process) and ROS 2 (rclpy)."""

__version__ = "0.1.0"
