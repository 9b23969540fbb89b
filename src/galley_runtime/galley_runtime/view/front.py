"""One port for the live view: the page over HTTP, the Foxglove WebSocket protocol by upgrade.

foxglove-sdk's server speaks only WebSocket (a plain HTTP GET is refused), so the view's port is
this small asyncio server on 127.0.0.1: a request that asks to upgrade to WebSocket is passed,
bytes unchanged in both directions, to the SDK's server on its own local port (Foxglove and the
page then talk to the SDK itself, subprotocol ``foxglove.websocket.v1``); any other GET is
answered with a file of the page (``static/``: plain HTML and JavaScript, no CDN).

It runs in a process of its own (this file, run by path: it imports nothing of galley's), so
that forwarding each message costs the simulation's process nothing: as a thread of it, the
proxy took the GIL for every frame a client was sent, and on a busy machine each hand-over of
the GIL is a wait for the scheduler. :class:`Front` binds the port here (a port in use fails
here, as ``OSError``), hands the listening socket over, and ends the process on :meth:`close`
(or when this process ends: it watches a pipe).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
from pathlib import Path

__all__ = ["Front"]

_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript", ".css": "text/css"}
_MAX_HEAD = 16384
_STATIC = Path(__file__).with_name("static")


class Front:
    """Serves ``http://127.0.0.1:port/`` and forwards WebSocket upgrades to ``ws_port``.

    Args:
        port: the port to listen on (0: any free one; see :attr:`port`).
        ws_port: the SDK server's port on 127.0.0.1.

    Raises:
        OSError: the port is taken.
    """

    def __init__(self, port: int, ws_port: int) -> None:
        with socket.socket() as listener:
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind(("127.0.0.1", port))
            listener.listen(64)  # connections wait here until the process accepts them
            self.port = int(listener.getsockname()[1])
            alive_r, self._alive = os.pipe()  # the process ends when this end closes
            try:
                args = ["--fd", str(listener.fileno()), "--ws-port", str(ws_port), "--alive", str(alive_r)]
                self._process = subprocess.Popen(
                    [sys.executable, __file__, *args], pass_fds=(listener.fileno(), alive_r)
                )
            finally:
                os.close(alive_r)

    def close(self) -> None:
        """Stop serving: the process closes its connections and ends."""
        if self._alive >= 0:
            os.close(self._alive)
            self._alive = -1
        try:
            self._process.wait(timeout=5.0)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()


class _Server:
    """The front's process: the page, and the WebSocket upgrades forwarded to the SDK's server."""

    def __init__(self, ws_port: int) -> None:
        self._ws_port = ws_port

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            writer.close()
            return
        lines = head.decode("latin-1").split("\r\n")
        headers = {
            k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)
        }
        if headers.get("upgrade", "").lower() == "websocket":
            await self._forward(head, reader, writer)
            return
        method, _, rest = lines[0].partition(" ")
        path = rest.split(" ")[0].split("?")[0]
        name = "index.html" if path in ("/", "/index.html") else path.lstrip("/")
        page = _STATIC / name
        if method != "GET" or "/" in name or not page.is_file():
            body, status, kind = b"not found\n", "404 Not Found", "text/plain"
        else:
            body, status = page.read_bytes(), "200 OK"
            kind = _TYPES.get("." + name.rsplit(".", 1)[-1], "application/octet-stream")
        writer.write(
            f"HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {len(body)}\r\n"
            f"Cache-Control: no-store\r\nConnection: close\r\n\r\n".encode()
            + body
        )
        await writer.drain()
        writer.close()

    async def _forward(self, head: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self._ws_port)
        except OSError:
            writer.write(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            writer.close()
            return
        up_writer.write(head)

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while chunk := await src.read(65536):
                    dst.write(chunk)
                    await dst.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                dst.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))


async def _serve_until_closed(fd: int, ws_port: int, alive: int) -> None:
    server = _Server(ws_port)
    listener = socket.socket(fileno=fd)
    loop = asyncio.get_running_loop()
    ended = loop.create_future()
    loop.set_exception_handler(_quiet_cancel)
    loop.add_reader(alive, lambda: ended.done() or ended.set_result(None))  # EOF: the view closed
    async with await asyncio.start_server(server._serve, sock=listener):
        await ended
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def _quiet_cancel(loop: asyncio.AbstractEventLoop, context: dict[str, object]) -> None:
    """Connections cancelled at the end are no error (Python 3.11's streams report them as one)."""
    if not isinstance(context.get("exception"), asyncio.CancelledError):
        loop.default_exception_handler(context)


def main(argv: list[str] | None = None) -> int:
    """The front's process (started by :class:`Front`)."""
    p = argparse.ArgumentParser(description="the live view's page and WebSocket forwarding")
    p.add_argument("--fd", type=int, required=True, help="the listening socket, handed over")
    p.add_argument("--ws-port", type=int, required=True, help="the SDK server's port on 127.0.0.1")
    p.add_argument("--alive", type=int, required=True, help="a pipe whose end closing stops this")
    args = p.parse_args(argv)
    asyncio.run(_serve_until_closed(args.fd, args.ws_port, args.alive))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
