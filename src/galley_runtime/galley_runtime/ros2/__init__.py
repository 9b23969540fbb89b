"""The ROS 2 host: each galley node as its own rclpy process.

Importing this package needs no ROS 2; its modules ``host`` and ``messages`` import rclpy.
"""
