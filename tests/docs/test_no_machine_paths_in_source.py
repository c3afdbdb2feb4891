"""No source, test, profile, script or build file names a path of the machine it was written on:
the code must run from any clone, as any user. The sibling of ``test_no_machine_paths.py`` (docs
and help text) for everything else: ``actors/``, ``supervisor/``, ``protocol/``, ``bench/``,
``tests/``, ``run/``, ``.ci/`` and the ``Makefile``, comments and docstrings included.

A machine path is one below a machine's own folders (``/home``, ``/root``, ``/Users``, ``/work``,
``/tmp``, ``/var``, ``/opt``, ``/mnt``, ``/srv``: the docs test's pattern), also inside a URL
(``ipc:///tmp/<name>``, ``file:///home/<user>``), or a Windows drive path (``C:\\Users\\<name>``).
Code that needs a temporary place asks ``tempfile``; a test that needs an address where nothing
listens uses a relative one (``ipc://gamerig-test-no-recorder.sock``).

Allowed, each for its reason:

* a ``<placeholder>`` part, as in the docs;
* a bare folder with no name below it, such as ``dir="/tmp"`` in ``supervisor/fleet/ray_head.py``
  (Ray's socket paths must stay short: AF_UNIX allows 107 bytes, and ``tempfile``'s folder can
  be long);
* paths that are the same on every machine and outside those folders: ``/dev/null``, ``/proc``,
  ``/usr/bin/...``, ``/nonexistent``;
* recorded journal rows (``*.jsonl`` fixtures): copied byte for byte from real sessions and
  chained by digest, their ``capture_root`` is recorded data, not a path the code opens;
* third-party files kept as they ship (``supervisor/view/static/vendor/``).

Generated folders (``run/capture``, ``run/runtime``, ``artifacts``, caches) are not source and
are not read.
"""

from __future__ import annotations

import os
import re

from tests.docs.test_no_machine_paths import BELOW, MACHINE
from tests.harness import REPO

ROOTS = ["actors", "supervisor", "protocol", "bench", "tests", "run", ".ci", "Makefile", "setup.py", "pyproject.toml"]
#: the docs' pattern also after ``scheme://`` (``ipc:///tmp/<name>``: there the path follows a slash)
IN_URL = re.compile(r"(?<=://)" + BELOW)
WINDOWS = re.compile(r"(?<![\w\\])[A-Z]:\\{1,2}[A-Za-z][^\s)`\"',;]*")
GENERATED = {"run/capture", "run/runtime", "artifacts", "tests/artifacts"}
CACHES = {"__pycache__", ".pytest_cache", ".hypothesis"}
THIRD_PARTY = {"supervisor/view/static/vendor"}
RECORDED = (".jsonl",)


def machine_paths(line: str) -> list[str]:
    found = [m.group(0) for pattern in (MACHINE, IN_URL, WINDOWS) for m in pattern.finditer(line)]
    return [path for path in found if "<" not in path]


def source_files() -> list[str]:
    """Every text file under ROOTS, as a path relative to the repository."""
    out = []
    for root in ROOTS:
        top = os.path.join(REPO, root)
        if os.path.isfile(top):
            out.append(root)
            continue
        for folder, dirs, files in os.walk(top):
            rel_folder = os.path.relpath(folder, REPO).replace(os.sep, "/")
            dirs[:] = sorted(
                d
                for d in dirs
                if d not in CACHES
                and not d.endswith(".egg-info")
                and f"{rel_folder}/{d}" not in GENERATED | THIRD_PARTY
            )
            out += [f"{rel_folder}/{f}" for f in sorted(files) if not f.endswith(RECORDED)]
    return out


def offences(rel: str) -> list[str]:
    with open(os.path.join(REPO, rel), "rb") as fh:
        data = fh.read()
    if b"\0" in data:
        return []  # a binary file (a cartridge, an image): not text anyone copies from
    text = data.decode("utf-8", errors="replace")
    return [f"{rel}:{n}: {path}" for n, line in enumerate(text.splitlines(), 1) for path in machine_paths(line)]


def test_the_pattern_finds_machine_paths_in_code_and_spares_what_is_allowed():
    # the samples are built from pieces, so that this file holds no machine path itself
    home, tmp, users = "/" + "home/me/x.py", "/" + "tmp/gamerig-test.sock", "C:" + "\\\\Users\\\\me"
    assert machine_paths(f'open("{home}")  # and ipc:/' + f'/{tmp}, r"{users}"') == [home, tmp, users]
    assert machine_paths('connect("ipc:/' + f'/{tmp}")') == [tmp]
    assert (
        machine_paths(
            'mkdtemp(dir="/tmp"), "/dev/null", "/proc/1/stat", "/usr/bin/chromium", '
            '"/nonexistent", "ipc:///tmp/gamerig-<uid>/r.sock", "https://example.org/home/x"'
        )
        == []
    )
    assert machine_paths(r'f"{timeout}s:\n", re.compile(r"\d\d:\d\d")') == []


def test_the_scan_reads_the_source_and_skips_what_is_generated():
    files = set(source_files())
    assert {
        "Makefile",
        ".ci/run",
        "supervisor/cli.py",
        "run/profiles/demo.yaml",
        "tests/docs/test_no_machine_paths_in_source.py",
    } <= files
    assert len(files) > 400
    assert not any(
        f.startswith(("run/capture/", "run/runtime/", "supervisor/view/static/vendor/"))
        or "__pycache__" in f
        or f.endswith(".jsonl")
        for f in files
    )


def test_no_source_names_a_machine_path():
    found = [o for rel in source_files() for o in offences(rel)]
    assert found == [], (
        "absolute paths of a machine (use tempfile, a relative path or a <placeholder>):\n  " + "\n  ".join(found)
    )
