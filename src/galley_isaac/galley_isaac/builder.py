"""Creating the graphs in Isaac Sim: one ``og.Controller.edit`` call per graph description.

Only :func:`build` needs Isaac Sim (``omni.graph.core`` and ``usdrt``, imported when it is called);
:func:`galley_isaac.graph.edit_spec` gives the same arguments as plain data for tests.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from galley_isaac.graph import Graph, Targets, edit_spec

__all__ = ["build"]


def build(graphs: Iterable[Graph], version: str) -> list[Any]:
    """Create every graph on the open stage with Isaac Sim ``version``'s node type names.

    An existing prim at a graph's path is removed first, so that running the bridge twice on
    one stage gives one set of publishers. Returns the ``og.Graph`` objects.

    Raises:
        ImportError: not running inside Isaac Sim (its python.sh or a SimulationApp script).
    """
    try:
        import omni.graph.core as og  # noqa: PLC0415 (optional: Isaac Sim)
        import omni.usd  # noqa: PLC0415 (optional: Isaac Sim)
        import usdrt.Sdf  # noqa: PLC0415 (optional: Isaac Sim)
    except ImportError as err:
        raise ImportError(
            f"galley_isaac.builder.build needs Isaac Sim ({err.name} is missing): run it with Isaac "
            "Sim's python.sh, e.g. ./python.sh -m galley_isaac.run_isaac --config config/isaac/kitchen.yaml"
        ) from None
    keys = og.Controller.Keys
    key_of = {"create_nodes": keys.CREATE_NODES, "set_values": keys.SET_VALUES, "connect": keys.CONNECT}
    stage = omni.usd.get_context().get_stage()
    built = []
    for graph in graphs:
        if stage.GetPrimAtPath(graph.path).IsValid():
            stage.RemovePrim(graph.path)
        spec, edits = edit_spec(graph, version)
        edits["set_values"] = [
            (attr, [usdrt.Sdf.Path(p) for p in value.paths] if isinstance(value, Targets) else value)
            for attr, value in edits["set_values"]
        ]
        og_graph, _, _, _ = og.Controller.edit(spec, {key_of[k]: v for k, v in edits.items()})
        built.append(og_graph)
    return built
