"""Configuration dataclasses: documented, typed, validated fields.

Every algorithm and node in galley is configured by one frozen dataclass. Each field is declared
with :func:`param`, which records a one-line description, a unit and the allowed values, so that

* the dataclass validates itself on construction (``__post_init__``) with an error that names the
  field, the value and what is allowed;
* a host can build the dataclass from untyped values (a ROS 2 params YAML file, a ROS parameter
  update) with :func:`config_from_values`, checking types the way ROS parameters are typed;
* the ROS 2 host can declare one ROS parameter per field with the description and unit attached;
* a command line is built from the fields (:mod:`galley_core.arguments`), so that a command never
  writes a default or an allowed range a second time.

Example::

    @dataclass(frozen=True)
    class TalkerConfig(Config):
        rate_hz: float = param(10.0, "publishing rate", unit="Hz", gt=0.0)
        topic: str = param("chatter", "topic to publish on")
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import math
import re
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

__all__ = [
    "Config",
    "ConfigError",
    "FieldSpec",
    "config_from_values",
    "describe_fields",
    "param",
    "sub_config",
]

C = TypeVar("C", bound="Config")

#: Scalar types a field may have; tuples of them are the array types (ROS *_array parameters).
SCALAR_TYPES: tuple[type, ...] = (bool, int, float, str)


class ConfigError(ValueError):
    """A configuration value is not allowed.

    Attributes:
        field: name of the offending field ("" when the error concerns several fields).
        value: the rejected value.
        allowed: a human-readable statement of what is allowed.
    """

    def __init__(self, field: str, value: Any, allowed: str) -> None:
        self.field = field
        self.value = value
        self.allowed = allowed
        super().__init__(f"{field} = {value!r} is not allowed: {allowed}")


def param(
    default: Any,
    doc: str,
    *,
    unit: str = "",
    ge: float | None = None,
    gt: float | None = None,
    le: float | None = None,
    lt: float | None = None,
    choices: Sequence[Any] | None = None,
    finite: bool = True,
    pattern: str | None = None,
) -> Any:
    """Declare a configuration field.

    Args:
        default: default value; use tuples, not lists, for sequences (the dataclass is frozen).
        doc: one-line description, shown in errors, ``galley`` help and ROS parameter descriptors.
        unit: SI unit of the value (REP-103), e.g. ``"m/s"``; empty for unitless values.
        ge, gt, le, lt: inclusive / exclusive bounds for numbers (for tuples: for every element).
        choices: the only values allowed.
        finite: reject NaN and infinities for numbers (default True).
        pattern: a regular expression every string (each element of a tuple) must match as a whole,
            for values too many to list, e.g. ``"cpu|cuda(:[0-9]+)?"``.
    """
    spec = FieldSpec(
        doc=doc, unit=unit, ge=ge, gt=gt, le=le, lt=lt, choices=choices, finite=finite, pattern=pattern
    )
    return dataclasses.field(default=default, metadata={"galley": spec})


@dataclass(frozen=True)
class FieldSpec:
    """What :func:`param` records about a field."""

    doc: str
    unit: str = ""
    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    lt: float | None = None
    choices: Sequence[Any] | None = None
    finite: bool = True
    pattern: str | None = None

    def allowed(self) -> str:
        """The allowed values in words, e.g. ``"a number > 0 (Hz)"``."""
        if self.choices is not None:
            return "one of " + ", ".join(repr(c) for c in self.choices)
        if self.pattern is not None:
            return f"text matching {self.pattern}"
        bounds = [
            f"{op} {bound:g}"
            for op, bound in ((">=", self.ge), (">", self.gt), ("<=", self.le), ("<", self.lt))
            if bound is not None
        ]
        text = " and ".join(bounds) if bounds else "any value"
        return text + (f" ({self.unit})" if self.unit else "")

    def check(self, name: str, value: Any) -> None:
        """Raise :class:`ConfigError` unless ``value`` (or each element of a tuple) is allowed."""
        values = value if isinstance(value, tuple) else (value,)
        for v in values:
            if self.choices is not None:
                if v not in self.choices:
                    raise ConfigError(name, value, self.allowed())
                continue
            if self.pattern is not None and isinstance(v, str):
                if not re.fullmatch(self.pattern, v):
                    raise ConfigError(name, value, self.allowed())
                continue
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                continue
            if self.finite and not math.isfinite(v):
                raise ConfigError(name, value, self.allowed() if self._bounded() else "a finite number")
            if (
                (self.ge is not None and not v >= self.ge)
                or (self.gt is not None and not v > self.gt)
                or (self.le is not None and not v <= self.le)
                or (self.lt is not None and not v < self.lt)
            ):
                raise ConfigError(name, value, self.allowed())

    def _bounded(self) -> bool:
        return any(b is not None for b in (self.ge, self.gt, self.le, self.lt))

    def _restricted(self) -> bool:
        """Whether the values allowed are fewer than the type's (choices, a pattern or bounds)."""
        return self.choices is not None or self.pattern is not None or self._bounded()


@dataclass(frozen=True)
class Config:
    """Base class of configuration dataclasses: validates every :func:`param` field on creation.

    Subclasses that need cross-field checks override ``__post_init__``, call
    ``super().__post_init__()`` first and raise :class:`ConfigError` themselves.
    """

    def __post_init__(self) -> None:
        hints = _type_hints(type(self))
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            _check_type(f.name, value, hints[f.name])
            spec = f.metadata.get("galley")
            if spec is not None:
                spec.check(f.name, value)


@dataclass(frozen=True)
class FieldInfo:
    """A field of a configuration dataclass, as a host needs it to declare a parameter."""

    name: str
    type: Any  # bool, int, float, str, or tuple[<scalar>, ...]
    default: Any
    spec: FieldSpec

    @property
    def scalar_type(self) -> type:
        """The element type for tuples, the type itself otherwise."""
        return _element_type(self.type) if _is_tuple(self.type) else self.type

    @property
    def is_array(self) -> bool:
        return _is_tuple(self.type)

    def description(self) -> str:
        """One line for a ROS parameter descriptor: the doc, the unit and what is allowed."""
        spec = self.spec
        if spec._restricted():
            return f"{spec.doc}; allowed: {spec.allowed()}"
        return f"{spec.doc} ({spec.unit})" if spec.unit else spec.doc


def describe_fields(cls: type[Config]) -> list[FieldInfo]:
    """The fields of a configuration dataclass, in declaration order."""
    hints = _type_hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        spec = f.metadata.get("galley") or FieldSpec(doc=f.name)
        out.append(FieldInfo(f.name, hints[f.name], f.default, spec))
    return out


def sub_config(cls: type[C], config: Config) -> C:
    """The ``cls`` part of a configuration that has all of ``cls``'s fields (a node's, say).

    A node's configuration extends its algorithm's (``class ArmControllerConfig(RmpFlowConfig,
    PickPlaceConfig)``) or is combined from parts; the algorithm takes only its own fields.

    Raises:
        AttributeError: ``config`` lacks one of ``cls``'s fields.
        ConfigError: ``cls``'s own checks reject the values.
    """
    return cls(**{f.name: getattr(config, f.name) for f in dataclasses.fields(cls)})


def config_from_values(cls: type[C], values: Mapping[str, Any], *, base: C | None = None) -> C:
    """Build a configuration from untyped values (parsed YAML, ROS parameter values).

    Types follow ROS parameter typing, with one convenience: an integer is accepted for a float.
    Sequences become tuples. Unknown names are errors that list close matches.

    Args:
        cls: the configuration dataclass.
        values: field name to value; fields not given keep their default (or ``base``'s value).
        base: an existing configuration to update instead of the defaults.

    Raises:
        ConfigError: an unknown name, a wrong type or a value outside what is allowed.
    """
    infos = {info.name: info for info in describe_fields(cls)}
    kwargs: dict[str, Any] = {}
    for name, raw in values.items():
        info = infos.get(name)
        if info is None:
            close = difflib.get_close_matches(name, infos, n=3)
            hint = f"did you mean {', '.join(close)}? " if close else ""
            known = ", ".join(infos) or "(this node has no parameters)"
            raise ConfigError(name, raw, f"no such parameter; {hint}known: {known}")
        kwargs[name] = _coerce(name, raw, info.type)
    if base is not None:
        return dataclasses.replace(base, **kwargs)
    return cls(**kwargs)


@functools.cache
def _type_hints_cached(cls: Any) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _type_hints(cls: type) -> dict[str, Any]:
    return _type_hints_cached(cls)  # classes are hashable; mypy sees the dataclass __hash__


def _is_tuple(tp: Any) -> bool:
    return typing.get_origin(tp) is tuple


def _element_type(tp: Any) -> type:
    args = typing.get_args(tp)
    if len(args) != 2 or args[1] is not Ellipsis or args[0] not in SCALAR_TYPES:
        raise TypeError(f"configuration tuples must be tuple[<bool|int|float|str>, ...], got {tp}")
    return typing.cast(type, args[0])


def _type_name(tp: Any) -> str:
    if _is_tuple(tp):
        return f"a list of {_element_type(tp).__name__}"
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string"}.get(tp, str(tp))


def _scalar_ok(value: Any, tp: type) -> bool:
    if tp is bool:
        return isinstance(value, bool)
    if tp is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if tp is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, tp)


def _check_type(name: str, value: Any, tp: Any) -> None:
    if _is_tuple(tp):
        elem = _element_type(tp)
        if not isinstance(value, tuple) or not all(_scalar_ok(v, elem) for v in value):
            raise ConfigError(name, value, _type_name(tp))
    elif tp in SCALAR_TYPES and not _scalar_ok(value, tp):
        raise ConfigError(name, value, _type_name(tp))


def _coerce(name: str, value: Any, tp: Any) -> Any:
    if _is_tuple(tp):
        elem = _element_type(tp)
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
            raise ConfigError(name, value, _type_name(tp))
        return tuple(_coerce(name, v, elem) for v in value)
    if not _scalar_ok(value, tp):
        raise ConfigError(name, value, _type_name(tp))
    return float(value) if tp is float else value
