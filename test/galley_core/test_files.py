"""read_yaml: errors that name the file, and parsed documents kept without going stale."""

from __future__ import annotations

import os

import pytest

from galley_core.files import read_yaml


class DocError(ValueError):
    pass


def test_a_document_read_twice_is_an_independent_copy(tmp_path):
    path = tmp_path / "doc.yaml"
    path.write_text("a: [1, 2]\n")
    first = read_yaml(path, what="test file", error=DocError)
    first["a"].append(3)
    assert read_yaml(path, what="test file", error=DocError) == {"a": [1, 2]}


def test_an_edited_file_is_read_again(tmp_path):
    path = tmp_path / "doc.yaml"
    path.write_text("a: 1\n")
    assert read_yaml(path, what="test file", error=DocError) == {"a": 1}
    path.write_text("a: 2\n")
    stat = path.stat()  # the same size; a coarse clock could give the same time: move it on
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert read_yaml(path, what="test file", error=DocError) == {"a": 2}


def test_errors_name_the_file_and_the_problem(tmp_path):
    with pytest.raises(DocError, match=r"test file .*missing.yaml does not exist; see --x"):
        read_yaml(tmp_path / "missing.yaml", what="test file", error=DocError, hint="; see --x")
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [1, 2\n")
    with pytest.raises(DocError, match=r"test file .*bad.yaml is not valid YAML"):
        read_yaml(bad, what="test file", error=DocError)
