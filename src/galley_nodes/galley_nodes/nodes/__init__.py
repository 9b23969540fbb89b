"""galley's nodes. Each module declares one node; :mod:`galley_nodes.registry` lists them."""
