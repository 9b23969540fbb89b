"""Command lines built from configuration dataclasses: one option per :func:`~galley_core.config.param` field.

:func:`add_arguments` adds ``--field-name`` for each field of a :class:`~galley_core.config.Config`,
its help the field's doc, unit, bounds and default, its values checked by the parser with the
field's own checks; :func:`config_from_arguments` reads the dataclass back from what the user gave,
the dataclass supplying the rest. A command, a bench or a library's CLI then states no default, no
choice list and no bound of its own (LeRobot builds its command line from its configs the same way).
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Container, Mapping, Sequence
from typing import Any, TypeVar

from galley_core.config import Config, ConfigError, FieldInfo, _check_type, _type_name, describe_fields

__all__ = ["add_arguments", "argument_help", "config_from_arguments"]

C = TypeVar("C", bound=Config)


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
