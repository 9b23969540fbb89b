"""The README and the documentation site: README stays short and keeps its two commands and a row
for every command; the site builds with ``mkdocs build --strict``; its hook generates the reference
from the code and tolerates pages that come and go (docs/hooks/reference.py).
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
RUN_COMMAND = (
    'scripts/setup.sh && .venv/bin/galley run "Move the bowl to the green zone" --seed 0 '
    "--out runs/bowl && .venv/bin/galley doctor"
)
TEST_COMMAND = "scripts/test.sh"


def _has_mkdocs() -> bool:
    return importlib.util.find_spec("mkdocs") is not None and importlib.util.find_spec("material") is not None


def _hook() -> ModuleType:
    path = REPO / "docs" / "hooks" / "reference.py"
    spec = importlib.util.spec_from_file_location("galley_docs_hook", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_readme_is_at_most_300_lines_and_keeps_both_commands() -> None:
    text = README.read_text()
    assert len(text.splitlines()) <= 300, f"README.md has {len(text.splitlines())} lines; at most 300"
    blocks = re.findall(r"```bash\n(.*?)```", text, re.DOTALL)
    lines = [line.strip() for block in blocks for line in block.splitlines()]
    assert RUN_COMMAND in lines, "README.md lost the first command (set up, run, doctor)"
    assert TEST_COMMAND in lines, "README.md lost the second command (scripts/test.sh)"


def test_readme_command_table_has_a_row_for_every_command() -> None:
    from galley_cli.main import _build_parser  # the parser `galley --help` prints

    parser = _build_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices
    rows = [line for line in README.read_text().splitlines() if line.startswith("| `galley ")]
    missing = [name for name in commands if not any(row.startswith(f"| `galley {name}") for row in rows)]
    assert not missing, f"README.md's command table has no row for: galley {', galley '.join(missing)}"


def test_readme_and_site_links_point_at_files() -> None:
    targets = re.findall(r"\]\(((?:docs|src)/[^)#\s]+)", README.read_text())
    assert targets, "README.md links to no documentation page"
    missing = [t for t in targets if not (REPO / t).exists()]
    assert not missing, f"README.md links to missing files: {missing}"


def test_nav_leaves_out_missing_optional_pages_and_lists_unlisted_ones(tmp_path: Path) -> None:
    hook = _hook()
    (tmp_path / "index.md").write_text("# Home\n")
    (tmp_path / "perception.md").write_text("# Perception\n")
    (tmp_path / "live-view.md").write_text("# Live view\n")  # a page other work added, not in the nav
    nav = [{"Home": "index.md"}, {"Guides": [{"Scenes": "scenes.md"}, {"Perception": "perception.md"}]}]
    config = hook.on_config({"docs_dir": str(tmp_path), "nav": nav})
    assert config["nav"] == [
        {"Home": "index.md"},
        {"Guides": [{"Perception": "perception.md"}, "live-view.md"]},
    ]


def test_links_to_a_missing_optional_page_read_as_text(tmp_path: Path) -> None:
    hook = _hook()
    page = type("Page", (), {"file": type("File", (), {"src_uri": "tutorials/x.md"})()})()
    config = {"docs_dir": str(tmp_path)}
    text = hook.on_page_markdown("See [Scenes](../scenes.md#formats) now.", page, config, None)
    assert text == "See Scenes (a page still being written) now."
    (tmp_path / "scenes.md").write_text("# Scenes\n")
    assert hook.on_page_markdown("[Scenes](../scenes.md)", page, config, None) == "[Scenes](../scenes.md)"
    with pytest.raises(ValueError, match="unknown marker galley:nonsense"):
        hook.on_page_markdown("<!-- galley:nonsense -->", page, config, None)


def test_generated_reference_holds_every_parameter_topic_and_command() -> None:
    from galley_cli.main import _build_parser
    from galley_cli.topics import topic_table
    from galley_core.config import describe_fields
    from galley_nodes import stack
    from galley_nodes.registry import NODES, load_node_class

    hook = _hook()
    nodes = hook._generate("nodes", None, "test")
    for name in NODES:
        assert f"## {name}\n" in nodes
        for info in describe_fields(load_node_class(name).Config):
            assert f"| `{info.name}` |" in nodes, f"{name}.{info.name} missing from the parameters page"
    # a parameter with a unit and a bound: the unit and the bound each in their column
    assert "| `approach_height_m` | <code>0.12</code> | m | &gt; 0 |" in nodes
    topics = hook._generate("topics", "oracle", "test")
    assert all(f"| `{row.topic}` |" in topics for row in topic_table(stack.Mode()))
    commands = hook._generate("commands", None, "test")
    sub = next(a for a in _build_parser()._actions if a.dest == "command")
    assert all(f"## galley {name}\n" in commands for name in sub.choices)
    assert "### galley bag repair\n" in commands


@pytest.mark.skipif(not _has_mkdocs(), reason="mkdocs-material is not installed (requirements-docs.txt)")
def test_mkdocs_build_strict_passes(tmp_path: Path) -> None:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    # not --quiet: it hides the warnings that --strict fails on
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "site" / "reference" / "nodes" / "index.html").is_file()
