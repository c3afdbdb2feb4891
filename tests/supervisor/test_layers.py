"""The supervisor's layers: every module imports only its own layer and the layers below it.

Bottom-up (a module may import a module of its own layer or of any layer listed before it):

    root        the ``supervisor`` package and its helpers that import nothing of gamerig's
                supervisor: platform, rundir, profile, outbox, tcp, installed
    capture     ``supervisor/capture/``: reading captures (verify, facts, coverage, audit,
                packing, frames, a fleet root's capture roots), a library
    fleet       ``supervisor/fleet/``: many sessions from one fleet file; reads captures
    supervision one session's supervision: session, control, children, taps, restart, watch,
                progress; reads the journal through capture
    apps        ``supervisor/view/`` (the web app over captures and fleets) and
                ``supervisor/mcp/`` (the MCP playtest server)
    commands    ``supervisor/commands/``: one module per command, argument parsing and printing
    cli         ``cli.py`` and ``__main__.py``: the command line built from the registry

Every module under ``supervisor/`` must sit in one layer (a new module is placed in LAYERS).
Imports are read with ``ast`` (those inside functions too), so a test fails on the import
line, not on an import error. Nothing under ``actors/`` or ``protocol/`` imports ``supervisor``:
the actors and the wire format stand below the whole supervisor.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.harness import REPO

ROOT = Path(REPO)

#: bottom-up; a name is a package under supervisor/ or a module of supervisor/ itself
LAYERS: list[tuple[str, set[str]]] = [
    ("root", {"supervisor", "platform", "rundir", "profile", "outbox", "tcp", "installed"}),
    ("capture", {"capture"}),
    ("fleet", {"fleet"}),
    ("supervision", {"session", "control", "children", "taps", "restart", "watch", "progress"}),
    ("apps", {"view", "mcp"}),
    ("commands", {"commands"}),
    ("cli", {"cli", "__main__"}),
]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def exists(module: str) -> bool:
    base = ROOT.joinpath(*module.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import in the file, relative ones resolved; ``from P import x``
    names ``P.x`` when x is a module, else ``P``."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.append((node.lineno, sub if exists(sub) else base))
    return list(dict.fromkeys(found))


def layer_of(module: str) -> int | None:
    """The index in LAYERS of a ``supervisor`` module, None when no layer names it."""
    parts = module.split(".")
    key = parts[1] if len(parts) > 1 else "supervisor"
    return next((i for i, (_, names) in enumerate(LAYERS) if key in names), None)


def supervisor_files() -> list[Path]:
    return sorted((ROOT / "supervisor").rglob("*.py"))


def test_every_supervisor_module_sits_in_a_layer():
    unplaced = [str(p.relative_to(ROOT)) for p in supervisor_files() if layer_of(module_name(p)) is None]
    assert unplaced == [], f"modules in no layer (add them to LAYERS in {__file__}): {unplaced}"


def upward_imports(files: list[Path]) -> list[str]:
    """``file:line: X (layer) imports Y (layer) which sits above it`` for each offending import."""
    found = []
    for path in files:
        me = module_name(path)
        mine = layer_of(me)
        for line, target in imports(path):
            if target.split(".")[0] != "supervisor":
                continue
            theirs = layer_of(target)
            if mine is not None and theirs is not None and theirs > mine:
                found.append(
                    f"{path.relative_to(ROOT)}:{line}: {me} ({LAYERS[mine][0]}) imports {target} "
                    f"({LAYERS[theirs][0]}) which sits above it"
                )
    return found


def test_no_supervisor_module_imports_a_layer_above_its_own():
    offending = upward_imports(supervisor_files())
    assert offending == [], "\n" + "\n".join(offending)


def test_actors_and_protocol_import_nothing_of_the_supervisor():
    offending = [
        f"{path.relative_to(ROOT)}:{line}: {module_name(path)} imports {target}"
        for top in ("actors", "protocol")
        for path in sorted((ROOT / top).rglob("*.py"))
        for line, target in imports(path)
        if target.split(".")[0] == "supervisor"
    ]
    assert offending == [], "\n" + "\n".join(offending)


def test_the_reader_sees_the_imports_the_layers_are_built_on():
    """The checks above pass vacuously if ``imports`` reads nothing: it must see relative and
    absolute imports, name the module of ``from P import module``, and order the layers."""
    seen = {target for _, target in imports(ROOT / "supervisor" / "fleet" / "layout.py")}
    assert "supervisor.capture.fleetroot" in seen, seen
    seen = {target for _, target in imports(ROOT / "supervisor" / "commands" / "capture" / "packing.py")}
    assert {"supervisor.capture.packing", "supervisor.capture.errors"} <= seen, seen
    files = [ROOT / "supervisor" / "capture" / "verify.py", ROOT / "supervisor" / "cli.py"]
    edges = [(module_name(p), t) for p in files for _, t in imports(p)]
    assert any(m == "supervisor.cli" and t.startswith("supervisor.commands") for m, t in edges), edges
    assert layer_of("supervisor.cli") > layer_of("supervisor.commands.capture") > layer_of("supervisor.capture.verify")
