"""mkdocs hook: the reference pages, generated from the code at build time.

A page asks for generated text with a marker line of its own (the whole line)::

    <!-- galley:topics oracle -->     the topic table of a stack mode (galley topics; oracle, policy, ...)
    <!-- galley:modes -->             which node runs in which mode (galley_nodes.stack.NODES)
    <!-- galley:nodes -->             every node: topics, actions, timers, parameters (galley nodes)
    <!-- galley:commands -->          every command's --help (galley_cli.main's parser)

Everything is read from the code when the site is built, never from a copy: the topic table is
``galley topics``' own ``topic_table``, the parameters come from each node's Config dataclass through
``galley_core.config.describe_fields`` (doc, unit, bounds, choices), and the help is the argparse
parser's. A node, a parameter or a command added to the code is on the next build's pages. An
unknown marker fails the build.

The nav tolerates pages coming and going, so that ``mkdocs build --strict`` passes with and without
them: an OPTIONAL_PAGES page that does not exist is left out of the nav and a link to it reads as
plain text; a page the nav does not list (a docs/<topic>.md that other work added) joins Guides.
"""

from __future__ import annotations

import argparse
import html
import inspect
import os
import re
from pathlib import Path
from typing import Any

from galley_cli.main import _build_parser  # the galley command's parser, as `galley --help` builds it
from galley_cli.topics import topic_table
from galley_core.config import describe_fields
from galley_nodes import stack
from galley_nodes.registry import NODES, load_node_class

#: Pages written by other work, which the nav and links tolerate missing.
OPTIONAL_PAGES = ("scenes.md", "perception.md")

#: The nav section that takes pages the nav does not list (docs/<topic>.md written by other work).
GUIDES = "Guides"

#: The modes the topics marker knows, as galley_nodes.stack.Mode keyword arguments.
MODES: dict[str, dict[str, Any]] = {
    "oracle": {},
    "policy": {"driver": "policy"},
    "oracle-no-cameras": {"cameras": False},
    "isaac": {"simulator": "isaac"},
}

_MARKER = re.compile(r"^<!-- galley:(\w+)(?: ([\w-]+))? -->$", re.MULTILINE)
_HELP_COLUMNS = "100"  # argparse wraps help to $COLUMNS; fixed, so that pages do not depend on a terminal


# -- mkdocs events --------------------------------------------------------------------------------


def on_config(config: Any) -> Any:
    """Leave optional pages that do not exist out of the nav; add pages it does not list to Guides."""
    docs = Path(config["docs_dir"])
    nav = config.get("nav")
    if not nav:
        return config
    missing = {p for p in OPTIONAL_PAGES if not (docs / p).is_file()}
    nav = _without(nav, missing)
    listed = set(_pages(nav))
    pages = sorted(p.relative_to(docs).as_posix() for p in docs.rglob("*.md"))
    unlisted = [p for p in pages if p not in listed and not p.startswith("hooks/")]
    if unlisted:
        guides = next((item for item in nav if isinstance(item, dict) and GUIDES in item), None)
        if guides is None:
            guides = {GUIDES: []}
            nav.append(guides)
        guides[GUIDES] += unlisted  # titled by each page's first heading
    config["nav"] = nav
    return config


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Replace each marker with its generated text; unlink missing optional pages."""
    docs = Path(config["docs_dir"])
    missing = [p for p in OPTIONAL_PAGES if not (docs / p).is_file()]
    for name in missing:
        link = re.compile(r"\[([^\]]+)\]\((?:\.\./)*" + re.escape(name) + r"(?:#[\w-]+)?\)")
        markdown = link.sub(r"\1 (a page still being written)", markdown)
    return _MARKER.sub(lambda m: _generate(m.group(1), m.group(2), page.file.src_uri), markdown)


# -- generators -----------------------------------------------------------------------------------


def _generate(kind: str, arg: str | None, where: str) -> str:
    generators = {"topics": _topics, "modes": _modes, "nodes": _nodes, "commands": _commands}
    if kind not in generators:
        raise ValueError(f"{where}: unknown marker galley:{kind}; known: {', '.join(generators)}")
    return generators[kind](arg, where)


def _topics(arg: str | None, where: str) -> str:
    if arg not in MODES:
        raise ValueError(f"{where}: galley:topics needs a mode, one of {', '.join(MODES)}; got {arg!r}")
    mode = stack.Mode(**MODES[arg])
    outside = stack.unproduced(mode)
    rows = ["| topic | type | producers | consumers |", "|---|---|---|---|"]
    for r in topic_table(mode):
        producers = ", ".join(r.producers) or ("*" if r.topic in outside else "(none)")
        rows.append(f"| `{r.topic}` | `{r.type}` | {producers} | {', '.join(r.consumers) or '-'} |")
    notes = [f"\\* `{t}`: {_cell(why)}" for t, why in outside.items()]
    return "\n".join(rows) + ("\n\n" + "  \n".join(notes) if notes else "")


def _modes(arg: str | None, where: str) -> str:
    rows = ["| node | graphs | runs when |", "|---|---|---|"]
    for n in stack.NODES:
        rows.append(f"| [{n.name}](nodes.md#{n.name}) | {', '.join(n.graphs)} | {n.when or 'always'} |")
    return "\n".join(rows)


def _nodes(arg: str | None, where: str) -> str:
    out = []
    for name in sorted(NODES):
        cls = load_node_class(name)
        out += [f"## {name}", "", f"`{NODES[name]}`", ""]
        doc = cls.__dict__.get("__doc__")  # the node's own, not the Node base class's
        if doc:
            out += [inspect.cleandoc(doc).split("\n\n")[0].replace("\n", " "), ""]
        lines = [f"- publishes `{p.topic}` `{p.type}` ({_qos(p.qos)})" for p in cls.publishes]
        lines += [f"- subscribes `{s.topic}` `{s.type}` ({_qos(s.qos)})" for s in cls.subscribes]
        lines += [f"- serves the action `{a.action}` `{a.type}`" for a in cls.serves]
        lines += [f"- calls the action `{a.action}` `{a.type}`" for a in cls.calls]
        lines += [f"- timer `{t.callback}`, {_period(t.period_s)}" for t in cls.timers]
        if cls.uses_tf:
            lines.append("- reads TF")
        out += [*(lines or ["- no topics"]), ""]
        fields = describe_fields(cls.Config)
        if not fields:
            out += ["No parameters.", ""]
            continue
        out += [
            f"Parameters ({cls.Config.__name__}):",
            "",
            "| parameter | default | unit | allowed | what |",
            "|---|---|---|---|---|",
        ]
        for info in fields:
            spec = info.spec
            allowed = spec.allowed() if spec.choices is not None or spec._bounded() else "any"
            if spec.unit and allowed.endswith(f" ({spec.unit})"):
                allowed = allowed[: -len(spec.unit) - 3]
            out.append(
                f"| `{info.name}` | {_code(info.default)} | {_cell(spec.unit) or '-'} | {_cell(allowed)} "
                f"| {_cell(spec.doc)} |"
            )
        out.append("")
    return "\n".join(out)


def _commands(arg: str | None, where: str) -> str:
    columns = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = _HELP_COLUMNS
    try:
        return "\n".join(_help(_build_parser(), "galley", 2))
    finally:
        if columns is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = columns


def _help(parser: Any, prog: str, level: int) -> list[str]:
    """``prog --help`` and, below it, each subcommand's, recursively (``galley bag repair``)."""
    out = ["#" * level + f" {prog}", "", "```text", parser.format_help().rstrip(), "```", ""]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, command in action.choices.items():
                # the commands are siblings of ``galley`` on the page; a command's own below it
                out += _help(command, f"{prog} {name}", level + (prog != "galley"))
    return out


# -- helpers ----------------------------------------------------------------------------------------


def _without(nav: list[Any], missing: set[str]) -> list[Any]:
    out = []
    for item in nav:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        if isinstance(value, list):
            out.append({next(iter(item)): _without(value, missing)})
        elif value not in missing:
            out.append(item)
    return out


def _pages(nav: list[Any]) -> list[str]:
    out = []
    for item in nav:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        out += _pages(value) if isinstance(value, list) else [value]
    return out


def _qos(qos: Any) -> str:
    parts = [qos.reliability, qos.durability]
    parts.append(f"depth {qos.depth}" if qos.history == "keep_last" else "keep all")
    return ", ".join(parts)


def _period(period: Any) -> str:
    if callable(period):
        return "period from the configuration"
    return f"every {period:g} s"


def _cell(text: str) -> str:
    return html.escape(str(text), quote=False).replace("|", "&#124;").replace("\n", " ")


def _code(value: Any) -> str:
    return "<code>" + _cell(repr(value)) + "</code>"
