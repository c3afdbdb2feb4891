"""Read gamerig's documentation, which travels with it: list the pages, print one.

  supervisor docs                       every page, with its title
  supervisor docs TOPIC[#SECTION]       one page (through $PAGER on a terminal), or one section of it
  supervisor docs TOPIC --path          where the page's file is (open it in an editor or viewer)

TOPIC is a page's name: quickstart, profiles, fleet, ..., readme, changelog. A help text or an
error that names docs/NAME.md means 'supervisor docs NAME'; a link NAME.md#SECTION inside a
page means 'supervisor docs NAME#SECTION' (docs/NAME.md#SECTION is accepted as it is).

Exit codes: 0 printed, 2 no such page or section (the pages are listed).

Example:
  supervisor docs quickstart
  supervisor docs models#trying-it-without-a-model-the-stand-in-server
"""

from __future__ import annotations

import pydoc
import re
import sys
from pathlib import Path

from supervisor import installed

from .base import Command


def topic_name(path: Path) -> str:
    """The name a page is asked for by: docs/fleet.md -> fleet, README.md -> readme."""
    return path.stem.lower()


def pages() -> dict[str, Path]:
    return {topic_name(p): p for p in installed.doc_paths()}


def title(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            return line.lstrip("#").strip()
    return ""


def normalize(topic: str) -> tuple[str, str]:
    """'docs/models.md#a-b' -> ('models', 'a-b')."""
    name, _, section = topic.partition("#")
    name = name.strip().rstrip("/")
    name = name.rsplit("/", 1)[-1]
    if name.lower().endswith(".md"):
        name = name[:-3]
    return name.lower(), section.strip().lower()


def slug(heading: str) -> str:
    """A heading's anchor, as GitHub makes it."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def headings(text: str) -> list[tuple[int, int, str]]:
    """(line index, level, anchor) of every heading outside code blocks."""
    out, fenced = [], False
    for i, line in enumerate(text.splitlines()):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced and (m := re.match(r"(#{1,6})\s+(.*)", line)):
            out.append((i, len(m.group(1)), slug(m.group(2))))
    return out


def section_of(text: str, anchor: str) -> str | None:
    """The section under the heading whose anchor is ``anchor``, to the next heading of its
    level or above; None when no heading has that anchor."""
    lines = text.splitlines()
    found = headings(text)
    for n, (i, level, name) in enumerate(found):
        if name == anchor:
            end = next((j for j, lv, _ in found[n + 1 :] if lv <= level), len(lines))
            return "\n".join(lines[i:end]).rstrip() + "\n"
    return None


class Docs(Command):
    name = "docs"

    def add_arguments(self, p) -> None:
        p.add_argument(
            "topic",
            nargs="?",
            metavar="TOPIC[#SECTION]",
            help="a page (quickstart, profiles, ...; docs/NAME.md works too); none: list them",
        )
        p.add_argument("--path", action="store_true", help="print where the page's file is instead")

    def run(self, args) -> int:
        found = pages()
        if not args.topic:
            width = max(map(len, found))
            print("gamerig's documentation ('supervisor docs TOPIC' prints one page):")
            for name, path in found.items():
                print(f"  {name.ljust(width)}  {title(path)}")
            return 0
        name, section = normalize(args.topic)
        if name not in found:
            sys.stderr.write(f"error: no page {args.topic!r}; the pages are: {', '.join(found)}\n")
            return 2
        path = found[name]
        if args.path:
            print(path)
            return 0
        text = path.read_text(encoding="utf-8")
        if section:
            part = section_of(text, section)
            if part is None:
                anchors = ", ".join(a for _, _, a in headings(text))
                sys.stderr.write(f"error: {name} has no section {section!r}; its sections are: {anchors}\n")
                return 2
            text = part
        if sys.stdout.isatty():
            pydoc.pager(text)
        else:
            sys.stdout.write(text)
        return 0
