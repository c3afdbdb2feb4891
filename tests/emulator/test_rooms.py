"""The emulator's three rooms import downwards only (actors/emulator/__init__.py): ``recording``
imports neither ``session`` nor ``tools``; ``session`` and ``tools`` never import each other."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.harness import REPO

EMULATOR = Path(REPO) / "actors" / "emulator"
FORBIDDEN = {"recording": {"session", "tools"}, "session": {"tools"}, "tools": {"session"}}


def imported_rooms(path: Path, room: str) -> set[str]:
    """The rooms a module of ``room`` imports (absolute or relative)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level == 0 and (node.module or "").startswith("actors.emulator."):
                out.add(node.module.split(".")[2])
            elif node.level == 1:
                out.add(room)
            elif node.level == 2:
                target = (node.module or "").split(".")[0]
                out.add(target) if target else out.update(a.name for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name.split(".")[2] for a in node.names if a.name.startswith("actors.emulator."))
    return out


def test_every_room_imports_only_downwards_and_says_what_it_owns():
    seen = {}
    for room, banned in FORBIDDEN.items():
        modules = sorted((EMULATOR / room).glob("*.py"))
        assert len(modules) > 3, room
        doc = ast.get_docstring(ast.parse((EMULATOR / room / "__init__.py").read_text(encoding="utf-8")))
        assert doc and "import" in doc, f"{room}/__init__.py must say what it may import"
        for path in modules:
            wrong = imported_rooms(path, room) & banned
            assert not wrong, f"actors/emulator/{room}/{path.name} imports the {', '.join(sorted(wrong))} room"
            seen[f"{room}/{path.name}"] = imported_rooms(path, room)
    assert "recording" in seen["session/core.py"] and "recording" in seen["tools/clips.py"]
