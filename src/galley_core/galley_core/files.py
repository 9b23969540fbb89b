"""Reading the project's YAML files with errors that name the file and what is wrong."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

__all__ = ["read_yaml"]

#: libyaml's parser where PyYAML was built with it (same documents, several times faster: a node
#: start reads the scene file several times), else the pure-Python one.
_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


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
        return yaml.load(path.read_text(), Loader=_LOADER)
    except FileNotFoundError:
        raise error(f"{what} {path} does not exist{hint}") from None
    except OSError as err:
        raise error(f"cannot read {what} {path}: {err.strerror}{hint}") from None
    except yaml.YAMLError as err:
        raise error(f"{what} {path} is not valid YAML: {err}") from None
