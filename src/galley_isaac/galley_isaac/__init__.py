"""galley's Isaac Sim bridge: ROS 2 action graphs that publish the MuJoCo simulator's topics.

Importable without Isaac Sim: the graph descriptions (:mod:`galley_isaac.graphs`), the topic
contract (:mod:`galley_isaac.contract`), the node catalogue check (:mod:`galley_isaac.catalogue`)
and the configuration (:mod:`galley_isaac.config`) are plain Python. Only
:func:`galley_isaac.builder.build` and :mod:`galley_isaac.run_isaac` need Isaac Sim.
"""

__version__ = "0.1.0"
