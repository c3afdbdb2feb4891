"""What this installation of gamerig is: its version, the files it carries besides code (the
starting profiles ``supervisor init`` writes, the docs ``supervisor docs`` prints), and whether
another package shares its import names.

**Version.** The one place is ``[project] version`` in ``pyproject.toml``: the wheel's metadata
is built from it, and an installed gamerig reports ``importlib.metadata.version("gamerig")``.
A checkout (an editable install, or ``python -m supervisor`` from a clone) reads
``pyproject.toml`` itself, so a version bump shows without reinstalling.

**Bundled files.** A wheel carries them under ``supervisor/_bundled/`` in the layout of the
repository (``run/profiles/...``, ``docs/...``): ``setup.py`` copies the paths :data:`BUNDLED`
names there at build time. A checkout has no ``_bundled`` folder and reads the same relative
paths from the repository, so the repository's files stay the only copy.

**Import names.** gamerig installs the top-level packages ``supervisor``, ``protocol`` and
``actors``. ``supervisor`` is also the import name of Supervisor (supervisord, on PyPI as
``supervisor``), and ``protocol`` and ``actors`` of smaller PyPI projects: installed in one
environment, two such packages write into one folder, overwrite each other's files, and
uninstalling either removes files of the other. Python packaging has no install-time hook in
a wheel, so :func:`clashes` finds it at start and the command refuses to run
(``supervisor/cli.py``). The names stay because the repository's layout and every import use
them; renaming the installed packages is a repository-wide change of its own.
"""

from __future__ import annotations

import dataclasses
import glob
import importlib.metadata
import os
import tomllib
from pathlib import Path

DIST = "gamerig"
#: gamerig's top-level import packages
TOP_LEVEL = ("supervisor", "protocol", "actors")
#: distributions on PyPI that install one of those import names, and what they are
KNOWN_CLASHES = {
    "supervisor": "Supervisor (supervisord, the process control system)",
    "protocol": "the PyPI project 'protocol'",
    "actors": "the PyPI project 'actors'",
}

PACKAGE = Path(__file__).resolve().parent
PACKAGED = PACKAGE / "_bundled"
CHECKOUT = PACKAGE.parent

#: starting points ``supervisor init`` writes, relative to the repository (and to the folder
#: it writes into: the fleet files name their profile as ``../profiles/...``)
STARTER = (
    "run/profiles/demo.yaml",
    "run/profiles/sts2.yaml",
    "run/profiles/hostile.yaml",
    "run/profiles/pyboy-demo.yaml",
    "run/profiles/model-demo.yaml",
    "run/profiles/agent-demo.yaml",
    "run/profiles/pyboy-agent.yaml",
    "run/fleets/agent-models.yaml",
    "run/fleets/demo-matrix.yaml",
    "run/fleets/pyboy-seeds.yaml",
)
#: the references ``supervisor docs`` prints (globs, relative to the repository)
DOCS = ("README.md", "CHANGELOG.md", "docs/*.md")
#: every path a wheel carries under ``supervisor/_bundled/`` (``setup.py`` reads this)
BUNDLED = STARTER + DOCS


def root() -> Path:
    """Where the bundled files are: the wheel's ``_bundled`` folder, or the checkout."""
    return PACKAGED if PACKAGED.is_dir() else CHECKOUT


def bundled(relpath: str) -> Path:
    """One bundled file (it may not exist: the caller says so)."""
    return root() / relpath


def doc_paths() -> list[Path]:
    """Every bundled doc, in the order of :data:`DOCS`."""
    base = root()
    out: list[Path] = []
    for pattern in DOCS:
        out += sorted(Path(p) for p in glob.glob(str(base / pattern)))
    return out


def version() -> str:
    """gamerig's version: the checkout's ``pyproject.toml``, or the installed metadata."""
    pyproject = CHECKOUT / "pyproject.toml"
    if pyproject.is_file():
        try:
            project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
        except (OSError, tomllib.TOMLDecodeError):
            project = {}
        if project.get("name") == DIST and isinstance(project.get("version"), str):
            return project["version"]
    try:
        return importlib.metadata.version(DIST)
    except importlib.metadata.PackageNotFoundError:
        return "unknown (not installed, and no pyproject.toml beside the package)"


@dataclasses.dataclass(frozen=True)
class Clash:
    """Another package installing one of gamerig's import names."""

    name: str  # the import name: supervisor, protocol or actors
    owner: str  # who else installs it
    where: str  # the folder both write into

    def line(self) -> str:
        return f"'{self.name}' ({self.where}) is also installed by {self.owner}"


def _folder(name: str) -> str:
    return str(PACKAGE.parent / name)


def _other_distribution(name: str) -> str | None:
    try:
        dist = importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        return None
    meta = dist.metadata
    if (meta["Name"] or "").lower() == DIST:
        return None
    return f"{KNOWN_CLASHES.get(name, meta['Name'])}, version {meta['Version']}"


def _foreign_files() -> dict[str, list[str]]:
    """Per import name, the entries of its folder that an installed gamerig wheel did not put
    there (empty for a checkout or an editable install: their folders are the repository's).
    Only an installer's record (``RECORD``) lists a wheel's files: the ``gamerig.egg-info``
    an editable install leaves in a checkout lists the sources of that moment, and a module
    added since is the checkout's own, not another package's."""
    try:
        dist = importlib.metadata.distribution(DIST)
    except importlib.metadata.PackageNotFoundError:
        return {}
    if dist.read_text("RECORD") is None:
        return {}
    files = dist.files or []
    ours = {tuple(Path(f).parts[:2]) for f in files if Path(f).parts and Path(f).parts[0] in TOP_LEVEL}
    if ("supervisor", "installed.py") not in ours:
        return {}
    out: dict[str, list[str]] = {}
    for name in TOP_LEVEL:
        try:
            entries = os.listdir(_folder(name))
        except OSError:
            continue
        foreign = sorted(e for e in entries if e != "__pycache__" and (name, e) not in ours)
        if foreign:
            out[name] = foreign
    return out


def clashes() -> list[Clash]:
    """Other packages installed under gamerig's import names (empty: none)."""
    found = []
    foreign = _foreign_files()
    for name in TOP_LEVEL:
        owner = _other_distribution(name)
        if owner is None and name in foreign:
            shown = ", ".join(foreign[name][:4]) + (", ..." if len(foreign[name]) > 4 else "")
            owner = f"another package (files gamerig did not install: {shown})"
        if owner is not None:
            found.append(Clash(name, owner, _folder(name)))
    return found


def clash_message(found: list[Clash]) -> str:
    """The refusal ``supervisor`` prints when :func:`clashes` finds any."""
    lines = "".join(f"  - {c.line()}\n" for c in found)
    return (
        "error: gamerig shares an import name with another package in this Python environment:\n"
        f"{lines}"
        "Both write into the same folder: each overwrites the other's files, and uninstalling one "
        "removes files the other needs. gamerig refuses to run like this.\n"
        "Install gamerig in an environment of its own:\n"
        "  pipx install <gamerig wheel or clone>    (or: python3 -m venv <dir>, then <dir>/bin/pip install it)\n"
        "and repair this one: pip uninstall gamerig, then reinstall the other package "
        "(pip install --force-reinstall <its name>) to restore its files.\n"
    )
