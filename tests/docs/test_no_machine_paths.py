"""No doc, example or help text names a path of the machine it was written on: copy-paste must
work from any clone. A path under a machine's own folders (``/tmp``, ``/home``, ``/work`` ...)
is allowed only as a clearly marked placeholder: with a ``<name>`` part, or ``/path/to/...``."""

from __future__ import annotations

import argparse
import glob
import os
import re

import pytest

from supervisor.cli import build_parser
from tests.harness import REPO

#: a path below one of a machine's own folders (the name below it included)
BELOW = r"/(?:tmp|work|home|root|Users|var|opt|mnt|srv)/[^\s)`\"',;]*"
MACHINE = re.compile(r"(?<![\w.<>/~-])" + BELOW)
DOCS = [
    "README.md",
    "CONTRIBUTING.md",
    "CHANGELOG.md",
    "docs/*.md",
    "run/profiles/*.yaml",
    "run/fleets/*.yaml",
    "vendor/*/README.md",
    "actors/emulator/cartridge/README.md",
]


def machine_paths(text: str) -> list[str]:
    return [m.group(0) for m in MACHINE.finditer(text) if "<" not in m.group(0)]


def test_the_pattern_finds_machine_paths_and_spares_placeholders():
    play, gif = "/" + "tmp/play", "/" + "home/me/x.gif"  # in pieces: no source names a machine path
    assert machine_paths(f"run it in {play} and {gif}") == [play, gif]
    assert machine_paths("`/tmp/gamerig-<uid>/`, /path/to/gamerig, <workspace>/roms, run/capture") == []


@pytest.mark.parametrize(
    "path",
    sorted({p for pattern in DOCS for p in glob.glob(os.path.join(REPO, pattern))}),
    ids=lambda p: os.path.relpath(p, REPO),
)
def test_a_doc_names_no_machine_path(path):
    with open(path, encoding="utf-8") as fh:
        found = machine_paths(fh.read())
    assert found == [], f"{os.path.relpath(path, REPO)} names {found[:5]}: use a relative path or a <placeholder>"


def _parsers(parser: argparse.ArgumentParser):
    """The parser and every sub-command's, depth first (as ``--help`` prints each)."""
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from _parsers(sub)


def test_no_help_text_names_a_machine_path():
    helps = [p.format_help() for p in _parsers(build_parser())]
    assert len(helps) > 20 and any("supervisor view" in h for h in helps)  # every command, built in-process
    for text in helps:
        assert machine_paths(text) == [], machine_paths(text)
