"""A topic's message rate over a sliding window of simulated time, counted on the messages' stamps."""

from __future__ import annotations

from bisect import bisect_right, insort

__all__ = ["SlidingWindowRate"]

_NS = 1_000_000_000


class SlidingWindowRate:
    """Counts a topic's messages by their stamps over the last ``window_s`` seconds of simulated time.

    The rate is the number of stamps in ``(end - window, end]`` divided by the window, where ``end``
    is the newest stamp seen: the rate at which the topic was published, however late its messages
    arrive. Counting arrivals at the monitor's clock instead undercounts whenever delivery lags
    behind simulated time, as on a loaded machine under ROS 2 (/tf published at 50 Hz, counted at
    38 Hz). A topic whose newest stamp is a whole window old is silent: its rate is 0.

    It is only meaningful once a whole window lies after :meth:`start` (see :meth:`ready`): a topic
    that has not had the time to deliver a window's worth is not judged.

    Args:
        window_s: window length, seconds (> 0).
    """

    def __init__(self, window_s: float) -> None:
        if not window_s > 0.0:
            raise ValueError(f"window_s = {window_s} must be > 0 (seconds)")
        self.window_ns = round(window_s * _NS)
        self._stamps: list[int] = []  # sorted: several publishers, or DDS, may deliver out of order
        self._start_ns: int | None = None
        self.total = 0

    def start(self, time_ns: int) -> None:
        """Begin (or restart) measuring at ``time_ns``; earlier stamps are forgotten and ignored."""
        self._start_ns = time_ns
        self._stamps.clear()

    def add(self, stamp_ns: int) -> None:
        """Record a message stamped ``stamp_ns``, in any order (one stamped before :meth:`start`: ignored)."""
        self.total += 1
        if self._start_ns is None or stamp_ns > self._start_ns:
            insort(self._stamps, stamp_ns)

    def _end(self, now_ns: int) -> int:
        """The newest stamp, or ``now_ns`` where there is none within the last window."""
        if self._stamps and self._stamps[-1] > now_ns - self.window_ns:
            return self._stamps[-1]
        return now_ns

    def ready(self, now_ns: int) -> bool:
        """Whether a whole window lies between :meth:`start` and the window's end."""
        return self._start_ns is not None and self._end(now_ns) - self._start_ns >= self.window_ns

    def rate_hz(self, now_ns: int) -> float:
        """Messages per second stamped in ``(end - window, end]`` (see the class)."""
        end, stamps = self._end(now_ns), self._stamps
        del stamps[: bisect_right(stamps, end - self.window_ns)]  # older than any later window
        return bisect_right(stamps, end) * _NS / self.window_ns
