"""Configuration dataclasses: documented, typed, validated fields.

Every algorithm and node in galley is configured by one frozen dataclass. Each field is declared
with :func:`param`, which records a one-line description, a unit and the allowed values, so that

* the dataclass validates itself on construction (``__post_init__``) with an error that names the
  field, the value and what is allowed;
* a host can build the dataclass from untyped values (a ROS 2 params YAML file, a ROS parameter
  update) with :func:`config_from_values`, checking types the way ROS parameters are typed;
* the ROS 2 host can declare one ROS parameter per field with the description and unit attached;
* a command line is built from the fields with :func:`add_arguments` (one option per field, its help
  the doc, unit, bounds and default) and read back with :func:`config_from_arguments`, so that a
  command never writes a default or an allowed range a second time.

Example::

    @dataclass(frozen=True)
    class TalkerConfig(Config):
        rate_hz: float = param(10.0, "publishing rate", unit="Hz", gt=0.0)
        topic: str = param("chatter", "topic to publish on")
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import functools
import math
import re
import typing
from collections.abc import Callable, Container, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

__all__ = [
    "Config",
    "ConfigError",
    "FieldSpec",
    "add_arguments",
    "argument_help",
    "config_from_arguments",
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


def _option(name: str) -> str:
    return "--" + name.replace("_", "-")


def _parse_scalar(tp: type, text: str) -> Any:
    if tp is bool:
        lowered = text.lower()
        if lowered in ("true", "1", "yes", "on"):
            return True
        if lowered in ("false", "0", "no", "off"):
            return False
        raise ValueError(text)
    return tp(text)


def _argument_type(info: FieldInfo, read: Callable[[str], Any] | None = None) -> Any:
    """argparse ``type=`` of one field: reads the text (with ``read`` if given), applies its checks."""
    tp = info.scalar_type

    def parse(text: str) -> Any:
        try:
            value = read(text) if read is not None else _parse_scalar(tp, text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {_type_name(tp)}") from None
        try:
            info.spec.check(info.name, value)
        except ConfigError as err:
            raise argparse.ArgumentTypeError(f"{text} is not allowed: {err.allowed}") from None
        return value

    parse.__name__ = _type_name(tp).split(" ")[-1]  # argparse names the type in its messages
    return parse


def argument_help(info: FieldInfo) -> str:
    """An option's help: the field's doc, what is allowed (with the unit) and the default."""
    spec = info.spec
    text = spec.doc
    if spec.choices is None and spec._restricted():
        text += f"; {spec.allowed()}"
    elif spec.unit:
        text += f" ({spec.unit})"
    default = (",".join(map(str, info.default)) or "none") if info.is_array else info.default
    return f"{text} (default: {default})".replace("%", "%%")


def add_arguments(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup,
    cls: type[Config],
    *,
    only: Sequence[str] | None = None,
    skip: Container[str] = (),
    aliases: Mapping[str, Sequence[str]] | None = None,
    readers: Mapping[str, Callable[[str], Any]] | None = None,
    defaults: Mapping[str, Any] | None = None,
) -> list[str]:
    """Add one command-line option per field of ``cls``: ``--field-name``.

    The option's help, allowed values and default are the field's (:func:`param`), so that a
    command states none of them itself. Booleans take ``--name`` / ``--no-name``; tuples take one
    or more values; a field with ``choices`` lists them. Options are given a default of
    ``argparse.SUPPRESS``: :func:`config_from_arguments` takes only what the user gave, and the
    dataclass supplies the rest.

    Args:
        parser: the parser (or argument group) to add the options to.
        cls: the configuration dataclass.
        only: the fields to add, in this order (default: every field in declaration order).
        skip: fields to leave out (those the command sets itself).
        aliases: field name to further option strings, e.g. ``{"cpu_threads": ["--threads"]}``.
        readers: field name to a function reading the whole value from one word, where the command
            line spells it its own way (``{"image_size": image_size}`` for ``--image-size 96x72``);
            it raises ``ValueError`` or ``argparse.ArgumentTypeError``, and the field's checks
            still apply to what it returns.
        defaults: field name to the command's own default where it has one (a benchmark's network
            preset, say): shown in the help and given to :func:`config_from_arguments` when the user
            gives no value.

    Returns:
        The names of the fields added.

    Raises:
        KeyError: a name in ``only``, ``aliases``, ``readers`` or ``defaults`` is not a field.
        ConfigError: a value in ``defaults`` is not allowed, or is the field's own default (which
            would then be written twice).
    """
    infos = {info.name: info for info in describe_fields(cls)}
    names = list(only) if only is not None else list(infos)
    own = dict(defaults or {})
    unknown = [n for n in [*names, *(aliases or {}), *(readers or {}), *own] if n not in infos]
    if unknown:
        raise KeyError(f"{cls.__name__} has no field {', '.join(unknown)}")
    added = []
    for name in names:
        if name in skip:
            continue
        info = infos[name]
        flags = [_option(name), *((aliases or {}).get(name, ()))]
        kwargs: dict[str, Any] = {"dest": name, "default": argparse.SUPPRESS, "help": argument_help(info)}
        if name in own:
            kwargs["default"] = _own_default(info, own[name])
            kwargs["help"] = argument_help(dataclasses.replace(info, default=own[name]))
        if info.type is bool:
            kwargs["action"] = argparse.BooleanOptionalAction
        else:
            read = (readers or {}).get(name)
            kwargs["type"] = _argument_type(info, read)
            if info.is_array and read is None:
                kwargs["nargs"] = "+"
            if info.spec.choices is not None:
                kwargs["choices"] = tuple(info.spec.choices)
            kwargs["metavar"] = _metavar(info)
        parser.add_argument(*flags, **kwargs)
        added.append(name)
    return added


def _own_default(info: FieldInfo, value: Any) -> Any:
    """A command's own default for a field, checked: allowed, and not the field's default."""
    _check_type(info.name, value, info.type)
    info.spec.check(info.name, value)
    if value == info.default:
        raise ConfigError(
            info.name, value, f"a default of the command's own, not the field's ({info.default!r})"
        )
    return value


def _metavar(info: FieldInfo) -> str | None:
    if info.spec.choices is not None:
        return "{" + ",".join(map(str, info.spec.choices)) + "}"
    return info.name.upper()


def config_from_arguments(
    cls: type[C],
    args: argparse.Namespace,
    *,
    base: C | None = None,
    fields: Container[str] | None = None,
    **values: Any,
) -> C:
    """The configuration from parsed options (:func:`add_arguments`) and ``values`` a command sets.

    Fields the user did not give keep ``base``'s value, or the default; ``values`` override both.
    ``fields`` limits the options read to those fields: pass what :func:`add_arguments` returned
    when one parser holds the options of several configurations with a field name in common.

    Raises:
        ConfigError: the dataclass's own checks reject the combination.
    """
    names = {f.name for f in dataclasses.fields(cls) if fields is None or f.name in fields}
    given = {name: value for name, value in vars(args).items() if name in names}
    given.update(values)
    given = {k: tuple(v) if isinstance(v, list) else v for k, v in given.items()}
    if base is not None:
        return dataclasses.replace(base, **given)
    return cls(**given)
