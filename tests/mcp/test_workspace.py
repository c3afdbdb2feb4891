"""The authorized workspace: paths outside it, symlinks out of it and ``..`` are refused as
tool errors naming the argument and the reason, and the server keeps serving."""

from __future__ import annotations

import os

import anyio
import pytest

from supervisor.mcp.shared.errors import PathRefused
from supervisor.mcp.shared.workspace import Workspace
from tests.mcp.agent import connect, workspace_with_demo

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def ws(tmp_path):
    root = workspace_with_demo(tmp_path / "ws")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "evil.gb").write_bytes((root / "roms" / "demo.gb").read_bytes())
    os.symlink(outside / "evil.gb", root / "roms" / "link.gb")
    os.symlink(outside, root / "roms" / "elsewhere")
    (root / "artifacts").mkdir()
    os.symlink(outside, root / "artifacts" / "playtests")  # a redirected attempt directory
    os.symlink(outside, root / "artifacts" / "clips")  # a redirected clip directory
    return root


ESCAPES = [
    ("emulator_run", {"romPath": "../outside/evil.gb"}, "'..' components"),
    ("emulator_run", {"romPath": "roms/../../outside/evil.gb"}, "'..' components"),
    ("emulator_run", {"romPath": "{outside}/evil.gb"}, "not inside the workspace"),
    ("emulator_run", {"romPath": "/etc/hostname"}, "not inside the workspace"),
    ("emulator_run", {"romPath": "roms/link.gb"}, "is a symlink"),
    ("emulator_run", {"romPath": "roms/elsewhere/evil.gb"}, "is a symlink"),
    ("emulator_run", {"romPath": "roms/missing.gb"}, "does not exist"),
    ("emulator_run", {"romPath": "roms/demo.gb", "recording": {}}, "is a symlink"),
    (
        "emulator_run",
        {"romPath": "roms/demo.gb", "recording": {"outputPath": "roms/attempt"}},
        "artifacts/playtests/ may receive it",
    ),
    (
        "emulator_review",
        {
            "recordingPath": "{outside}",
            "sessionId": "x",
            "branchId": "branch-0001",
            "fromActionIndex": 0,
            "toActionIndex": 0,
        },
        "not inside the workspace",
    ),
    (
        "emulator_clip",
        {"recordingPath": "roms/elsewhere", "outputPath": "artifacts/clips/a.gif", "startFrame": 0, "endFrame": 4},
        "is a symlink",
    ),
    (
        "emulator_clip",
        {"recordingPath": "roms", "outputPath": "artifacts/clips/a.gif", "startFrame": 0, "endFrame": 4},
        "is a symlink",
    ),
    (
        "emulator_clip",
        {"recordingPath": "roms", "outputPath": "artifacts/clips/../../../x.gif", "startFrame": 0, "endFrame": 4},
        "'..' components",
    ),
    (
        "emulator_clip",
        {"recordingPath": "roms", "outputPath": "artifacts/x.gif", "startFrame": 0, "endFrame": 4},
        "artifacts/clips/ may receive it",
    ),
    ("emulator_recording", {"action": "archive", "recordingPath": "/tmp"}, "not inside the workspace"),
    ("emulator_recording", {"action": "status", "recordingPath": "../outside"}, "'..' components"),
]


def test_paths_out_of_the_workspace_are_refused_and_the_server_keeps_serving(ws, tmp_path):
    outside = str(tmp_path / "outside")

    async def main():
        with open(tmp_path / "server.log", "w") as errlog:
            async with connect(ws, errlog) as agent:
                for tool, args, why in ESCAPES:
                    args = {k: v.replace("{outside}", outside) if isinstance(v, str) else v for k, v in args.items()}
                    text = await agent.refused(tool, args, "path-refused", why)
                    assert text.startswith("path-refused: "), text
                await agent.refused("emulator_step", {"buttons": ["right"]}, "no-session", "emulator_run")
                await agent.refused("emulator_step", {"frames": "8"}, "invalid-argument", "frames")
                await agent.refused(
                    "emulator_run", {"romPath": "roms/demo.gb", "bogus": 1}, "invalid-argument", "'bogus'"
                )
                await agent.refused(
                    "emulator_recording",
                    {"action": "access_diagnostic", "limit": 3},
                    "invalid-argument",
                    "accepts no 'limit'",
                )
                await agent.refused(
                    "emulator_run",
                    {"romPath": "roms/demo.gb", "recording": {"maxBytes": 1}},
                    "invalid-option",
                    "maxBytes=1",
                    "65536..536870912",
                )  # maxBytes: 64 KiB..512 MiB
                await agent.refused(
                    "emulator_run",
                    {"romPath": "roms/demo.gb", "recording": {"maxFrames": 216_001}},
                    "invalid-option",
                    "maxFrames",
                    "1..216000",
                )
                await agent.refused(
                    "emulator_run",
                    {"romPath": "roms/demo.gb", "recording": {"fps": 60}},
                    "invalid-argument",
                    "recording.fps is not a recording option",
                )
                await agent.refused(
                    "emulator_recording",
                    {"action": "stop", "reason": "x" * 1001},
                    "invalid-argument",
                    "1001 characters; at most 1,000",
                )
                await agent.refused(
                    "emulator_recording",
                    {"action": "stop", "outcome": "great"},
                    "invalid-argument",
                    "outcome must be one of passed, failed, needs-review",
                )
                await agent.refused("emulator_recording", {"action": "stop"}, "no-recording")
                return await agent.session.list_tools()

    listed = anyio.run(main)
    assert len(listed.tools) == 8
    assert not (tmp_path / "outside" / "attempt").exists() and sorted(os.listdir(tmp_path / "outside")) == ["evil.gb"]


@pytest.mark.parametrize(
    "value, why",
    [("", "non-empty"), ("a/../b", "'..'"), ("/", "not inside"), (".", "not inside"), ("x\x00y", "non-empty")],
)
def test_workspace_resolve_refuses(tmp_path, value, why):
    with pytest.raises(PathRefused, match=why):
        Workspace(tmp_path).resolve("romPath", value)


def test_clip_outputs_go_to_artifacts_clips_or_the_recording(tmp_path):
    ws = Workspace(tmp_path)
    recording = tmp_path / "artifacts" / "playtests" / "a" / "recording"
    assert ws.clip_output("artifacts/clips/x.gif", recording) == tmp_path / "artifacts" / "clips" / "x.gif"
    assert ws.clip_output(str(recording / "clips" / "y.gif"), recording) == recording / "clips" / "y.gif"
    with pytest.raises(PathRefused, match="artifacts/clips/ may receive it"):
        ws.clip_output("artifacts/x.gif", recording)


def test_the_workspace_defaults_to_the_current_directory(tmp_path):
    ws = workspace_with_demo(tmp_path / "ws")

    async def main():
        with open(tmp_path / "server.log", "w") as errlog:
            async with connect(None, errlog, cwd=ws) as agent:
                return await agent.refused(
                    "emulator_run",
                    {"romPath": str(tmp_path / "elsewhere.gb")},
                    "path-refused",
                    f"not inside the workspace {ws}",
                )

    anyio.run(main)
    assert "workspace " + str(ws) in (tmp_path / "server.log").read_text()
