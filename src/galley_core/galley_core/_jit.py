"""numba's ``njit`` where numba is installed, else plain Python: one switch for every kernel module.

Kernels are compiled with ``cache=True`` (a process pays the compile time once per machine) and
``nogil=True``; where numba is not installed the same functions run as plain Python, correct but
far slower. ``NUMBA_DISABLE_JIT=1`` runs the plain-Python path with numba installed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_numba_njit: Callable[..., Any] | None
try:
    from numba import njit as _numba_njit
except ImportError:  # pragma: no cover - exercised only where numba is missing
    _numba_njit = None

__all__ = ["HAVE_NUMBA", "njit", "njit_inline"]

HAVE_NUMBA = _numba_njit is not None


def njit(func: Callable[..., Any]) -> Any:
    """``func`` compiled (cached, without the GIL), or ``func`` itself without numba."""
    if _numba_njit is None:
        return func
    return _numba_njit(cache=True, nogil=True)(func)


def njit_inline(func: Callable[..., Any]) -> Any:
    """A helper of the kernels, inlined where it is called (numba's IR inlining)."""
    if _numba_njit is None:
        return func
    return _numba_njit(cache=True, nogil=True, inline="always")(func)
