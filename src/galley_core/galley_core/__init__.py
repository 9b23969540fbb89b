"""galley's algorithms and data types: plain Python, importable without ROS 2 or a simulator."""

__version__ = "0.1.0"
