"""Reading the project's YAML files with errors that name the file and what is wrong; writing files whole."""

from __future__ import annotations

import copy
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

__all__ = ["read_yaml", "replacing"]

#: libyaml's parser where PyYAML was built with it (same documents, several times faster: a node
#: start reads the scene file several times), else the pure-Python one.
_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

#: Parsed documents by (path, modification time, size). Building the stack reads the scene file
#: once per node that needs it, in every episode of an eval or a collection; a copy of the parsed
#: document costs a tenth of parsing it again. An edited file has a new key and is read again.
_PARSED: dict[tuple[str, int, int], Any] = {}
_PARSED_MAX = 64


def read_yaml(path: str | Path, *, what: str, error: type[Exception], hint: str = "") -> Any:
    """The parsed YAML document of ``path``.

    Args:
        path: the file.
        what: what the file is, for messages ("scene file", "parameter file", "map file").
        error: the exception class to raise.
        hint: appended to the message when the file cannot be read, e.g. which setting names it.

    Raises:
        error: the file cannot be read or is not valid YAML.
    """
    path = Path(path)
    try:
        stat = path.stat()
        key = (str(path.resolve()), stat.st_mtime_ns, stat.st_size)
        if key not in _PARSED:
            if len(_PARSED) >= _PARSED_MAX:
                _PARSED.clear()
            _PARSED[key] = yaml.load(path.read_text(), Loader=_LOADER)
        return copy.deepcopy(_PARSED[key])
    except FileNotFoundError:
        raise error(f"{what} {path} does not exist{hint}") from None
    except OSError as err:
        raise error(f"cannot read {what} {path}: {err.strerror}{hint}") from None
    except yaml.YAMLError as err:
        raise error(f"{what} {path} is not valid YAML: {err}") from None


@contextmanager
def replacing(path: Path) -> Iterator[Path]:
    """A temporary file beside ``path`` to write, moved onto ``path`` when the block ends without error.

    Whoever reads ``path`` meanwhile (a bench reusing a collection, ``ros2 bag info`` during a
    recording, the policy node loading a run) sees the old file or the new one, never half of one.
    """
    tmp = path.with_name(path.name + ".tmp")
    yield tmp
    os.replace(tmp, path)
