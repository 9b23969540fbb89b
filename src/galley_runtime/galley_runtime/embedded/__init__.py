"""The embedded host: all nodes in one process, on a lockstep simulated clock, without ROS 2."""

from galley_runtime.embedded.host import EmbeddedHost, EmbeddedNodeHost

__all__ = ["EmbeddedHost", "EmbeddedNodeHost"]
