"""galley's nodes: the stack's planners, controllers, monitor, recorder and task executor.

They are declared with :mod:`galley_runtime.node` and run in either of its hosts.
"""

__version__ = "0.1.0"
