"""A small Foxglove WebSocket protocol client (``foxglove.websocket.v1``), for tests, the bench and a look.

It lists the channels the server advertises, subscribes to the topics asked for and decodes each
message (JSON, as the live view sends every channel). ``python -m galley_runtime.view.client
[ws://127.0.0.1:8765] [--seconds S]`` prints the channels and how many messages came on each.
Needs the ``websockets`` package (requirements.txt).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import struct
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Received", "listen"]

#: foxglove-sdk 0.30 speaks "foxglove.sdk.v1" (the framing of the foxglove.websocket.v1 spec); others v1.
SUBPROTOCOLS = ["foxglove.sdk.v1", "foxglove.websocket.v1"]
_MESSAGE_DATA, _TIME = 0x01, 0x02


@dataclass
class Received:
    """What a client saw: the channels by topic and, per topic, (log time ns, wall s, message)."""

    channels: dict[str, dict[str, Any]] = field(default_factory=dict)
    messages: dict[str, list[tuple[int, float, Any]]] = field(default_factory=dict)
    server_time_ns: int = 0
    server_info: dict[str, Any] = field(default_factory=dict)


async def listen(
    url: str,
    seconds: float,
    topics: Iterable[str] | None = None,
    *,
    until: Callable[[Received], bool] | None = None,
    read_delay_s: float = 0.0,
) -> Received:
    """Connect to ``url``, subscribe to ``topics`` (None: all) and collect for ``seconds``.

    Tries to connect until ``seconds`` have passed (a server still starting refuses).

    Args:
        until: stop early once this holds.
        read_delay_s: sleep this long after each frame (a slow client, for tests and the bench).
    """
    import websockets  # noqa: PLC0415 (optional: websockets)

    got = Received()
    wanted = None if topics is None else set(topics)
    by_sub: dict[int, str] = {}
    end = time.monotonic() + seconds
    async with await _connect(url, end) as ws:
        while (left := end - time.monotonic()) > 0 and not (until and until(got)):
            try:
                frame = await asyncio.wait_for(ws.recv(), timeout=min(left, 0.5))
            except asyncio.TimeoutError:
                continue
            except websockets.ConnectionClosed:
                break  # the command ended
            if isinstance(frame, str):
                subs = _take_text(json.loads(frame), got, wanted, by_sub)
                if subs:
                    await ws.send(json.dumps({"op": "subscribe", "subscriptions": subs}))
            elif frame[0] == _MESSAGE_DATA:
                sub_id, log_time = struct.unpack_from("<IQ", frame, 1)
                topic = by_sub.get(sub_id)
                if topic is not None:
                    message = json.loads(frame[13:])
                    got.messages.setdefault(topic, []).append((log_time, time.monotonic(), message))
            elif frame[0] == _TIME:
                (got.server_time_ns,) = struct.unpack_from("<Q", frame, 1)
            if read_delay_s:
                await asyncio.sleep(read_delay_s)
    return got


async def _connect(url: str, end: float) -> Any:
    """Connect, trying again until ``end`` (monotonic s): the server may not be up yet."""
    import websockets  # noqa: PLC0415 (optional: websockets)

    while True:
        try:
            return await websockets.connect(url, subprotocols=SUBPROTOCOLS, max_size=None)  # type: ignore[arg-type]
        except OSError:
            if time.monotonic() > end:
                raise
            await asyncio.sleep(0.1)


def _take_text(
    op: dict[str, Any], got: Received, wanted: set[str] | None, by_sub: dict[int, str]
) -> list[Any]:
    """A JSON frame: server info, or channels advertised; returns the subscriptions to send."""
    subs: list[Any] = []
    if op.get("op") == "serverInfo":
        got.server_info = op
    elif op.get("op") == "advertise":
        for ch in op["channels"]:
            got.channels[ch["topic"]] = ch
            if wanted is None or ch["topic"] in wanted:
                sub_id = len(by_sub) + 1
                by_sub[sub_id] = ch["topic"]
                subs.append({"id": sub_id, "channelId": ch["id"]})
    return subs


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="list a live view's channels and count its messages")
    p.add_argument("url", nargs="?", default="ws://127.0.0.1:8765")
    p.add_argument("--seconds", type=float, default=5.0)
    args = p.parse_args(argv)
    got = asyncio.run(listen(args.url, args.seconds))
    for topic, ch in sorted(got.channels.items()):
        n = len(got.messages.get(topic, []))
        print(f"{topic:32s} {ch['schemaName']:38s} {n:6d} messages")
    print(f"server time {got.server_time_ns / 1e9:.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
