"""rclpy message classes behind :func:`galley_runtime.messages.new`.

rclpy's generated setters are strict: ``float64`` fields take only Python floats, unbounded
numeric sequences take lists or ``array.array`` of the right typecode (not numpy arrays), fixed
arrays take numpy arrays of the right dtype, ``byte`` fields take one-byte ``bytes``.
:class:`RclpyMessages` converts what nodes pass (numpy scalars and arrays, ints for bytes, dicts for
nested messages) into those forms, once per field.

Classes are found by importing ``<package>.msg``, as ``rosidl_runtime_py.get_message`` does (PyPI's
ROS 2 wheels have no rosidl_runtime_py).
"""

from __future__ import annotations

import array
import importlib
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from galley_runtime.message_backend import UnknownMessageTypeError, byte_value

__all__ = ["RclpyMessages"]

_FLOAT = {"float", "double"}
_INT = {"int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "char", "octet", "byte"}
_SEQUENCE = re.compile(r"^sequence<([^,>]+)(?:,\s*\d+)?>$")
_ARRAY = re.compile(r"^(.+)\[(\d+)\]$")


def _full_name(slot_type: str) -> str:
    """``geometry_msgs/msg/Vector3`` for rosidl's ``geometry_msgs/Vector3``."""
    package, name = slot_type.split("/")
    return f"{package}/msg/{name}"


#: An action's parts as rclpy names them: ``Name_Goal`` is ``Name.Goal``, and so on.
_ACTION_PART = re.compile(r"^(?P<name>[A-Za-z0-9]+?)_(?P<part>Goal|Result|Feedback|FeedbackMessage)$")


def _action_part(type_name: str) -> type:
    """The rclpy class of ``pkg/action/Name_Goal`` (``_Result``, ``_Feedback``, ``_FeedbackMessage``)."""
    package, _, rest = type_name.split("/")
    match = _ACTION_PART.match(rest)
    if match is None:
        raise TypeError(f"action message type {type_name!r} is not 'pkg/action/Name_Goal' (or _Result, ...)")
    try:
        action = getattr(importlib.import_module(f"{package}.action"), match["name"])
    except (AttributeError, ModuleNotFoundError) as err:
        raise TypeError(f"unknown action type of {type_name!r}: {err} (is the package installed?)") from None
    part = match["part"]
    return action.Impl.FeedbackMessage if part == "FeedbackMessage" else getattr(action, part)


class RclpyMessages:
    """Message classes of rclpy, resolved by type name with rosidl_runtime_py."""

    def __init__(self) -> None:
        self._classes: dict[str, type] = {}
        self._converters: dict[str, dict[str, Callable[[Any], Any]]] = {}

    def get_class(self, type_name: str) -> type:
        cls = self._classes.get(type_name)
        if cls is None:
            package, kind, name = [*type_name.split("/"), "", ""][:3]
            if kind == "action":
                cls = self._classes[type_name] = _action_part(type_name)
                return cls
            if kind != "msg" or not package or not name:
                raise TypeError(f"message type {type_name!r} is not of the form 'package/msg/Name'")
            try:
                cls = self._classes[type_name] = getattr(importlib.import_module(f"{package}.msg"), name)
            except (AttributeError, ModuleNotFoundError) as err:
                raise UnknownMessageTypeError(
                    f"unknown message type {type_name!r}: {err} (is the package built and sourced?)"
                ) from None
        return cls

    def new(self, type_name: str, /, **fields: Any) -> Any:
        converters = self._converters.get(type_name)
        if converters is None:
            converters = self._converters[type_name] = self._make_converters(type_name)
        for key in fields:
            if key not in converters:
                raise TypeError(f"{type_name} has no field {key!r}; its fields: {', '.join(converters)}")
        return self.get_class(type_name)(**{k: converters[k](v) for k, v in fields.items()})

    def _make_converters(self, type_name: str) -> dict[str, Callable[[Any], Any]]:
        cls = self.get_class(type_name)
        default = cls()
        field_types: dict[str, str] = cls.get_fields_and_field_types()
        return {name: self._converter(slot, getattr(default, name)) for name, slot in field_types.items()}

    def _converter(self, slot: str, default: Any) -> Callable[[Any], Any]:
        if slot in _FLOAT:
            return float
        if slot in _INT and not isinstance(default, bytes):
            return int
        if slot == "boolean":
            return bool
        if "/" in slot and not slot.startswith("sequence<") and not _ARRAY.match(slot):
            nested = _full_name(slot)
            return lambda v: self.new(nested, **v) if isinstance(v, dict) else v
        element = (m := _SEQUENCE.match(slot) or _ARRAY.match(slot)) and m.group(1)
        if element and "/" in element:
            nested = _full_name(element)
            return lambda v: [self.new(nested, **e) if isinstance(e, dict) else e for e in v]
        if isinstance(default, array.array):
            typecode = default.typecode
            dtype = np.dtype(typecode)

            def to_array(v: Any) -> array.array[Any]:
                if isinstance(v, array.array) and v.typecode == typecode:
                    return v
                out = array.array(typecode)
                out.frombytes(np.ascontiguousarray(v, dtype=dtype).tobytes())
                return out

            return to_array
        if isinstance(default, np.ndarray):
            dtype = default.dtype
            return lambda v: np.asarray(v, dtype=dtype)
        if isinstance(default, bytes):  # a byte field: an int (as rosbags holds it) or one byte
            return lambda v: v if isinstance(v, bytes) else bytes([byte_value(v)])
        return lambda v: v
