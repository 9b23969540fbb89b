"""One port for the live view: the page over HTTP, the Foxglove WebSocket protocol by upgrade.

foxglove-sdk's server speaks only WebSocket (a plain HTTP GET is refused), so the view's port is
this small asyncio server on 127.0.0.1: a request that asks to upgrade to WebSocket is passed,
bytes unchanged in both directions, to the SDK's server on its own local port (Foxglove and the
page then talk to the SDK itself, subprotocol ``foxglove.websocket.v1``); any other GET is
answered with a file of the page (``static/``: plain HTML and JavaScript, no CDN). It runs in its
own thread, apart from the simulation.
"""

from __future__ import annotations

import asyncio
import threading
from importlib import resources

__all__ = ["Front"]

_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript", ".css": "text/css"}
_MAX_HEAD = 16384


class Front:
    """Serves ``http://127.0.0.1:port/`` and forwards WebSocket upgrades to ``ws_port``.

    Args:
        port: the port to listen on (0: any free one; see :attr:`port`).
        ws_port: the SDK server's port on 127.0.0.1.

    Raises:
        OSError: the port is taken.
    """

    def __init__(self, port: int, ws_port: int) -> None:
        self._ws_port = ws_port
        self._loop = asyncio.new_event_loop()
        self._server = self._loop.run_until_complete(
            asyncio.start_server(self._serve, "127.0.0.1", port, reuse_address=True)
        )
        self.port = int(self._server.sockets[0].getsockname()[1])
        self._thread = threading.Thread(target=self._loop.run_forever, name="galley-view-front", daemon=True)
        self._thread.start()

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
        page = resources.files("galley_runtime.view") / "static" / name
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

    def close(self) -> None:
        """Stop serving: open connections are closed, then the thread ends."""

        async def stop() -> None:
            self._server.close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        if self._thread.is_alive():
            try:
                asyncio.run_coroutine_threadsafe(stop(), self._loop).result(timeout=5.0)
            finally:
                self._loop.call_soon_threadsafe(self._loop.stop)
                self._thread.join(timeout=5.0)
