"""The embedded host's message classes: the rosbags type store with galley_msgs registered.

``rosbags`` (Ternaris) provides dataclasses for every ROS 2 Jazzy message and CDR (de)serialisers
that read and write the bytes rosbag2 stores. galley_msgs' ``.msg`` files are registered from the
same files ``rosidl`` builds under ROS 2, so there is one source of truth; so are the message types
of the actions galley serves (galley_msgs' and nav2_msgs', from their ``.action`` text; see
:mod:`galley_runtime.action_definitions`).
"""

from __future__ import annotations

import os
import struct
import sys
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from rosbags.interfaces import Nodetype
from rosbags.serde import SerdeError
from rosbags.typesys import Stores, get_types_from_msg, get_typestore
from rosbags.typesys.store import Typestore

from galley_runtime.action_definitions import action_files, action_message_texts
from galley_runtime.message_backend import MessageError, byte_value, type_name_of

__all__ = [
    "RosbagsMessages",
    "deserialize",
    "fast_dds_length",
    "find_galley_msg_dir",
    "find_unconverted_sequence",
    "iter_galley_types",
    "message_definition",
    "serialize",
    "typestore",
]

#: Fields whose .msg definition gives a default other than zero. rosbags' type store does not keep
#: default values, and rclpy fills them, so the embedded host must too: an identity quaternion.
_NONZERO_DEFAULTS: dict[str, dict[str, Any]] = {"geometry_msgs/msg/Quaternion": {"w": 1.0}}

#: numpy dtype names of ROS primitive types, as rosbags' CDR deserialiser produces them.
_NUMPY_DTYPES = {"bool": "bool_", "char": "uint8"}
_STRING_TYPES = ("string", "wstring")


def find_galley_msg_dir() -> Path:
    """The folder holding galley_msgs' ``.msg`` files.

    Looked up in order: ``$GALLEY_MSGS_DIR``; the source checkout next to this package (an
    editable install, always current); ``share/galley_msgs/msg`` under each prefix of
    ``$AMENT_PREFIX_PATH`` (a colcon install) and under ``sys.prefix`` (a pip install of
    src/galley_msgs).
    """
    candidates: list[Path] = []
    if env := os.environ.get("GALLEY_MSGS_DIR"):
        candidates.append(Path(env))
    candidates.append(Path(__file__).resolve().parents[2] / "galley_msgs" / "msg")
    prefixes = [p for p in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep) if p]
    candidates += [Path(p) / "share" / "galley_msgs" / "msg" for p in [*prefixes, sys.prefix]]
    for path in candidates:
        if path.is_dir() and any(path.glob("*.msg")):
            return path
    tried = "\n  ".join(str(p) for p in candidates)
    raise FileNotFoundError(
        "galley_msgs' .msg files were not found; tried:\n  "
        + tried
        + "\nFix: `pip install src/galley_msgs` (or set GALLEY_MSGS_DIR to the msg/ folder)."
    )


@cache
def typestore() -> Typestore:
    """The ROS 2 Jazzy type store with galley_msgs registered (built once per process)."""
    store = get_typestore(Stores.ROS2_JAZZY)
    types: dict[str, Any] = {}
    for path in sorted(find_galley_msg_dir().glob("*.msg")):
        types.update(get_types_from_msg(path.read_text(), f"galley_msgs/msg/{path.stem}"))
    galley_actions = find_galley_msg_dir().parent / "action"  # beside msg/, in source and in share/
    actions = {f"galley_msgs/action/{p.stem}": p for p in sorted(galley_actions.glob("*.action"))}
    for action, path in {**action_files(), **actions}.items():  # not in the rosbags store
        for name, text in action_message_texts(action, path.read_text()).items():
            types.update(get_types_from_msg(text, name))
    store.register(types)
    return store


def message_definition(type_name: str) -> str:
    """The ``ros2msg`` definition text of a type, as rosbag2 stores it with a topic.

    rosbags writes it for ``pkg/msg/`` types only; for an action's messages (``pkg/action/X_...``)
    it is built here in the same layout: the type's fields, then each nested type under a
    ``MSG: <name>`` header.
    """
    store = typestore()
    if "/action/" not in type_name:
        return store.generate_msgdef(type_name, ros_version=2)[0]
    nested: dict[str, str] = {}

    def text_of(name: str) -> str:
        lines = []
        for field, (kind, spec) in store.fielddefs[name][1]:
            if kind == Nodetype.BASE:
                lines.append(f"{spec[0]} {field}")
                continue
            if kind == Nodetype.NAME:
                sub, suffix = spec, ""
            else:
                (sub_kind, sub), length = spec
                suffix = f"[{length}]" if kind == Nodetype.ARRAY else "[]"
                if sub_kind == Nodetype.BASE:
                    lines.append(f"{sub[0]}{suffix} {field}")
                    continue
            if sub not in nested:
                nested[sub] = ""
                nested[sub] = text_of(sub)
            lines.append(f"{sub}{suffix} {field}")
        return "\n".join(lines) + "\n"

    top = text_of(type_name)
    return top + "".join(f"{'=' * 80}\nMSG: {name}\n{text}" for name, text in nested.items())


def _numpy_dtype(ros_type: str) -> np.dtype[Any]:
    return np.dtype(_NUMPY_DTYPES.get(ros_type, ros_type))


class RosbagsMessages:
    """Message classes from a ``rosbags`` type store, with rclpy-like constructors."""

    def __init__(self, store: Typestore | None = None) -> None:
        self.store = store or typestore()
        self._factories: dict[str, Callable[..., Any]] = {}

    def get_class(self, type_name: str) -> type:
        try:
            return self.store.types[type_name]
        except KeyError:
            raise MessageError(_unknown_type(type_name, self.store.fielddefs)) from None

    def new(self, type_name: str, /, **fields: Any) -> Any:
        return self.factory(type_name)(fields)

    def factory(self, type_name: str) -> Callable[[dict[str, Any]], Any]:
        """The constructor of ``type_name`` that takes its fields as one dict (built once per type)."""
        factory = self._factories.get(type_name)
        if factory is None:
            factory = self._factories[type_name] = self._make_factory(type_name)
        return factory

    def _make_factory(self, type_name: str) -> Callable[[dict[str, Any]], Any]:
        cls = self.get_class(type_name)
        _, fielddefs = self.store.fielddefs[type_name]
        # (name, coercer or None for plain values, default maker), in field order.
        overrides = _NONZERO_DEFAULTS.get(type_name, {})
        plan = [
            (
                name,
                self._coercer(type_name, name, desc),
                (lambda v=overrides[name]: v) if name in overrides else self._default(desc),
            )
            for name, desc in fielddefs
        ]
        names = frozenset(name for name, _, _ in plan)

        def unknown_field(given: dict[str, Any]) -> None:
            unknown = sorted(given.keys() - names)[0]
            fields = ", ".join(n for n, _, _ in plan) or "none"
            raise MessageError(f"{type_name} has no field {unknown!r}; its fields: {fields}")

        # Straight-line code per type (as rosbags does for its serialisers): messages are built
        # thousands of times per simulated second, and a loop over fields costs twice as much.
        env: dict[str, Any] = {"cls": cls, "names": names, "unknown_field": unknown_field}
        args = []
        for i, (name, coerce, make) in enumerate(plan):
            env[f"c{i}"], env[f"m{i}"] = coerce, make
            value = f"g[{name!r}]" if coerce is None else f"c{i}(g[{name!r}])"
            args.append(f"{value} if {name!r} in g else m{i}()")
        source = (
            "def factory(g):\n"
            "    if not names.issuperset(g):\n"
            "        unknown_field(g)\n"
            f"    return cls({', '.join(args)})\n"
        )
        exec(source, env)  # generated from the type store's field names only
        factory: Callable[[dict[str, Any]], Any] = env["factory"]
        return factory

    def _default(self, desc: Any) -> Callable[[], Any]:
        kind, spec = desc
        if kind == Nodetype.BASE:
            ros_type = spec[0]
            if ros_type in _STRING_TYPES:
                return str
            value = _numpy_dtype(ros_type).type(0).item()
            return lambda: value
        if kind == Nodetype.NAME:
            nested = self.factory(spec)  # message types do not nest recursively
            return lambda: nested({})
        (sub_kind, sub_spec), length = spec
        if kind == Nodetype.ARRAY:
            if sub_kind == Nodetype.BASE and sub_spec[0] not in _STRING_TYPES:
                dtype = _numpy_dtype(sub_spec[0])
                return lambda: np.zeros(length, dtype=dtype)
            element = self._default((sub_kind, sub_spec))
            return lambda: [element() for _ in range(length)]
        if sub_kind == Nodetype.BASE and sub_spec[0] not in _STRING_TYPES:
            dtype = _numpy_dtype(sub_spec[0])
            return lambda: np.zeros(0, dtype=dtype)
        return list

    def _coercer(self, type_name: str, field: str, desc: Any) -> Callable[[Any], Any] | None:
        """How a given value becomes the field's value; None when it is taken as it is."""
        kind, spec = desc
        if kind == Nodetype.NAME:
            nested = self.factory(spec)  # message types do not nest recursively
            return lambda value: nested(value) if isinstance(value, dict) else value
        if kind == Nodetype.BASE:
            # A byte field may be given as rclpy holds it (b"\x02"): rosbags holds the int.
            return byte_value if spec[0] == "byte" else None
        (sub_kind, sub_spec), length = spec
        fixed = kind == Nodetype.ARRAY
        if sub_kind == Nodetype.BASE and sub_spec[0] not in _STRING_TYPES:
            dtype = _numpy_dtype(sub_spec[0])

            def to_array(value: Any) -> Any:
                if isinstance(value, (bytes, bytearray, memoryview)):
                    array = np.frombuffer(value, dtype=dtype).copy()
                else:
                    array = np.asarray(value, dtype=dtype)
                if array.ndim != 1 or (fixed and array.shape[0] != length):
                    shape = f"({length},)" if fixed else "(N,)"
                    raise MessageError(f"{type_name}.{field} needs shape {shape}, got {array.shape}")
                return array

            return to_array
        element = self._coercer(type_name, field, (sub_kind, sub_spec))
        if element is None:
            return list
        return lambda value: [element(v) for v in value]


def _unknown_type(type_name: str, known: Any) -> str:
    package = type_name.split("/", maxsplit=1)[0]
    same = sorted(k for k in known if k.startswith(package + "/"))
    hint = f"; {package} has: {', '.join(same)}" if same else f"; no package {package!r} is known"
    return f"unknown message type {type_name!r}{hint}"


def serialize(msg: Any) -> bytes:
    """CDR bytes of a rosbags message (as rosbag2 stores them)."""
    return bytes(typestore().serialize_cdr(msg, type_name_of(msg)))


def deserialize(raw: bytes | memoryview, type_name: str) -> Any:
    """A rosbags message from CDR bytes, as rclpy's Fast DDS and Cyclone DDS write them.

    The fields are read by the CDR rules (each aligned to its size from the start of the payload,
    after the 4-byte encapsulation header), and the message ends where its last field ends. The
    length recorded may go past that end by padding only, and how much padding is computed from
    the message, not guessed: up to the next multiple of 4 (the CDR rule, as Cyclone DDS and
    rosbags write), or up to the length Fast DDS gives it (:func:`fast_dds_length`), which aligns
    every primitive sequence's elements even when the sequence is empty and does not write the
    bytes it so reserves (a JointState without efforts: 4 bytes more; a ParameterEvent: 8).

    Raises:
        SerdeError: not CDR, fields that cannot be read, or more bytes than the message and its
            padding (the bytes are not a ``type_name``).
    """
    store = typestore()
    if len(raw) < 4 or bytes(raw[:2]) not in (b"\x00\x00", b"\x00\x01"):
        raise SerdeError(f"{type_name}: not a CDR message (encapsulation {bytes(raw[:2]).hex() or 'empty'})")
    msgdef = store.get_msgdef(type_name)
    read = msgdef.deserialize_cdr_le if raw[1] else msgdef.deserialize_cdr_be
    try:
        message, end = read(raw[4:], 0, msgdef.cls, store)
    except (SerdeError, struct.error, UnicodeDecodeError, ValueError, IndexError) as exc:
        raise SerdeError(f"{type_name}: its fields cannot be read from {len(raw)} bytes ({exc})") from exc
    if len(raw) <= 4 + _align(end, 4):  # the message padded by the CDR rule: no Fast DDS size needed
        return message
    longest = 4 + max(_align(end, 4), _align(fast_dds_length(message, type_name), 4))
    if len(raw) > longest:
        raise SerdeError(
            f"{type_name}: {len(raw)} bytes, where the message and its padding take at most {longest} "
            f"(CDR message size mismatch): the bytes are not a {type_name}"
        )
    return message


def _align(position: int, size: int) -> int:
    return position + (-position) % size


#: Bytes of each CDR primitive type.
_PRIMITIVE_SIZES = {
    **dict.fromkeys(("bool", "byte", "char", "int8", "uint8", "octet"), 1),
    **dict.fromkeys(("int16", "uint16"), 2),
    **dict.fromkeys(("int32", "uint32", "float32"), 4),
    **dict.fromkeys(("int64", "uint64", "float64"), 8),
}


def fast_dds_length(msg: Any, type_name: str, position: int = 0) -> int:
    """Where Fast DDS's serialised size of ``msg`` ends, from ``position`` in the payload.

    rosidl_typesupport_fastrtps sizes a primitive sequence or array as its elements plus the
    alignment to the element's size, counted even for an empty sequence; strings and nested
    messages as CDR writes them.
    """
    for name, (kind, spec) in typestore().fielddefs[type_name][1]:
        value = getattr(msg, name)
        if kind == Nodetype.BASE:
            position = _primitive_end(spec[0], value, position)
        elif kind == Nodetype.NAME:
            position = fast_dds_length(value, spec, position)
        else:
            (sub_kind, sub_spec), _ = spec
            if kind == Nodetype.SEQUENCE:
                position = _align(position, 4) + 4  # the element count
            if sub_kind == Nodetype.BASE and sub_spec[0] in _PRIMITIVE_SIZES:
                size = _PRIMITIVE_SIZES[sub_spec[0]]
                position = _align(position, size) + size * len(value)
            elif sub_kind == Nodetype.BASE:
                for item in value:
                    position = _primitive_end(sub_spec[0], item, position)
            else:
                for item in value:
                    position = fast_dds_length(item, sub_spec, position)
    return position


def _primitive_end(type_name: str, value: Any, position: int) -> int:
    if type_name in _STRING_TYPES:
        text = value.encode("utf-8") if isinstance(value, str) else bytes(value)
        width = 4 if type_name == "wstring" else 1
        return _align(position, 4) + 4 + (len(text) + 1) * width
    size = _PRIMITIVE_SIZES[type_name]
    return _align(position, size) + size


@cache
def _sequence_plan(type_name: str) -> tuple[tuple[str, ...], tuple[tuple[str, str, bool], ...]]:
    """Numeric sequence fields of a type, and nested message fields that contain some."""
    numeric: list[str] = []
    nested: list[tuple[str, str, bool]] = []  # (field, type, is_list)
    for name, (kind, spec) in typestore().fielddefs[type_name][1]:
        if kind == Nodetype.NAME:
            if any(_sequence_plan(spec)):
                nested.append((name, spec, False))
        elif kind in (Nodetype.ARRAY, Nodetype.SEQUENCE):
            (sub_kind, sub_spec), _ = spec
            if sub_kind == Nodetype.BASE and sub_spec[0] not in _STRING_TYPES:
                numeric.append(name)
            elif sub_kind == Nodetype.NAME and any(_sequence_plan(sub_spec)):
                nested.append((name, sub_spec, True))
    return tuple(numeric), tuple(nested)


def find_unconverted_sequence(msg: Any) -> str | None:
    """The path of a numeric sequence field of a rosbags message that is not a numpy array.

    Such a message cannot be serialised (recorded); :func:`new` never produces one, assigning a
    list to the field afterwards does. Returns None when every such field is an array.
    """
    type_name = getattr(msg, "__msgtype__", None)
    if type_name is None:
        return None
    numeric, nested = _sequence_plan(type_name)
    for name in numeric:
        if not isinstance(getattr(msg, name), np.ndarray):
            return name
    for name, _, is_list in nested:
        value = getattr(msg, name)
        for i, item in enumerate(value if is_list else [value]):
            if (inner := find_unconverted_sequence(item)) is not None:
                return f"{name}[{i}].{inner}" if is_list else f"{name}.{inner}"
    return None


def iter_galley_types() -> Iterator[str]:
    """The type names of galley_msgs' messages."""
    return (f"galley_msgs/msg/{p.stem}" for p in sorted(find_galley_msg_dir().glob("*.msg")))
