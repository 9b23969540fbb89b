"""The live view of the embedded host: Foxglove WebSocket protocol and a page, on one local port.

``with serve_view(8765): run...`` serves every :class:`~galley_runtime.embedded.EmbeddedHost` made
in this process inside the block at ``ws://127.0.0.1:8765`` (Foxglove: open connection, Foxglove
WebSocket) and ``http://127.0.0.1:8765/`` (the page). See :mod:`galley_runtime.view.live` for the
channels and :mod:`galley_runtime.view.front` for the port. Needs foxglove-sdk (requirements.txt).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from galley_core.scene import Scene

__all__ = ["serve_view"]


@contextmanager
def serve_view(port: int, *, scene: Scene | None = None, announce: bool = True) -> Iterator[object]:
    """Serve the live view on 127.0.0.1:``port`` while the block runs; yields the LiveView.

    Args:
        port: the port of the page and the protocol (0: any free one, see ``view.front.port``).
        scene: drawn where a host runs no simulator node (a replay); else the simulator's.
        announce: print the addresses.

    Raises:
        OSError: the port is taken.
        ImportError: foxglove-sdk is not installed.
    """
    from galley_runtime.embedded.host import watch_hosts  # noqa: PLC0415 (deferred: cycle-free start)
    from galley_runtime.view.front import Front  # noqa: PLC0415 (deferred: only while serving)
    from galley_runtime.view.live import LiveView  # noqa: PLC0415 (optional: foxglove-sdk)

    view = LiveView(scene=scene)
    try:
        front = Front(port, view.port)
    except OSError:
        view.close()
        raise
    view.front = front  # type: ignore[attr-defined]
    stop = watch_hosts(view.attach)
    if announce:
        print(
            f"live view: http://127.0.0.1:{front.port}/ (page), ws://127.0.0.1:{front.port} "
            "(Foxglove: Open connection, Foxglove WebSocket)",
            flush=True,
        )
    try:
        yield view
    finally:
        stop()
        view.close()
        front.close()
