"""``--view [PORT]`` of ``galley run``, ``galley eval`` and ``galley replay``: the live view.

The option serves what the command runs at http://127.0.0.1:PORT/ (the page) and
ws://127.0.0.1:PORT (Foxglove WebSocket) while it runs (:func:`galley_runtime.view.serve_view`).
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator
from typing import Any

from galley_cli.errors import UsageError

__all__ = ["DEFAULT_PORT", "add_view_option", "viewing"]

#: Foxglove's usual port for its WebSocket protocol.
DEFAULT_PORT = 8765


def _port(text: str) -> int:
    """argparse type of --view: a TCP port."""
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port (0 to 65535; 0: any free one)")
    return port


def add_view_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--view",
        nargs="?",
        type=_port,
        const=DEFAULT_PORT,
        default=None,
        metavar="PORT",
        help=f"serve a live view on 127.0.0.1:PORT (default {DEFAULT_PORT}) while it runs: open "
        "http://localhost:PORT/ in a browser, or connect Foxglove to ws://localhost:PORT "
        "(layout: config/foxglove/galley_layout.json)",
    )


@contextlib.contextmanager
def viewing(port: int | None, scene: Any = None) -> Iterator[None]:
    """The live view on ``port`` around the block (nothing when ``port`` is None)."""
    if port is None:
        yield
        return
    try:
        from galley_runtime.view import serve_view  # noqa: PLC0415 (optional: foxglove-sdk)

        context = serve_view(port, scene=scene)
        context.__enter__()
    except ImportError as err:
        raise UsageError(f"--view needs foxglove-sdk ({err}); pip install -r requirements.txt") from None
    except OSError as err:
        raise UsageError(
            f"--view {port}: cannot listen on 127.0.0.1:{port} ({err.strerror}); give another port"
        ) from None
    try:
        yield
    finally:
        context.__exit__(None, None, None)
