"""ROS 2 names in the embedded host: namespaces and topic resolution, as rcl resolves them."""

from __future__ import annotations

import re

__all__ = ["check_namespace", "resolve_name"]

_NAMESPACE = re.compile(r"^(/[A-Za-z_][A-Za-z0-9_]*)*/?$")


def check_namespace(namespace: str) -> None:
    """Raise ValueError naming ``namespace`` unless it is a valid ROS namespace."""
    if not _NAMESPACE.match(namespace):
        raise ValueError(f"namespace {namespace!r} is not a valid ROS namespace (e.g. '/robot')")


def resolve_name(name: str, namespace: str, node_name: str) -> str:
    """Resolve a topic name as ROS 2 does: absolute, ``~/`` private, or relative to the namespace."""
    namespace = namespace.rstrip("/")
    if name.startswith("/"):
        return name
    if name == "~" or name.startswith("~/"):
        return f"{namespace}/{node_name}{name[1:]}".rstrip("/")
    return f"{namespace}/{name}"
