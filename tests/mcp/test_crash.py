"""Killing the emulator actor mid-session: the agent's next request is refused with a clear
error (the exit and the crash resume, nothing sent), and the next ``emulator_run`` works; a
live clip made before the crash stays charged to the resumed writer's byte budget;
a run past the attempts' 1 GiB of reservations is refused and leaves the session running."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import anyio
import pytest

from actors.emulator.recording.reader import directory_bytes, ledger_outside_bytes
from tests.mcp.agent import Agent, connect, journal, workspace_with_demo

pytestmark = pytest.mark.timeout(60)


def emulator_pid(session_dir: str) -> int:
    return [r for r in journal(session_dir) if r["event"] == "emulator_started"][-1]["pid"]


async def wait_for_exit_row(session_dir: str, pid: int) -> None:
    deadline = time.monotonic() + 10
    while not any(r["event"] == "actor_exit" and r.get("pid") == pid for r in journal(session_dir)):
        assert time.monotonic() < deadline, "no actor_exit row for the killed emulator"
        await anyio.sleep(0.05)


HALF_GIB = 512 * 1024 * 1024  # the largest maxBytes: two such attempts fill artifacts/playtests/ (1 GiB)


async def crash_and_recover(agent: Agent) -> tuple[dict, str, dict]:
    run = (
        await agent.ok(
            "emulator_run", {"romPath": "roms/demo.gb", "initialFrames": 60, "recording": {"maxBytes": HALF_GIB}}
        )
    ).data
    await agent.ok("emulator_step", {"buttons": [], "frames": 1})
    await agent.ok("emulator_checkpoint", {"action": "save", "label": "safe"})
    await agent.ok("emulator_step", {"buttons": ["up"], "frames": 16})
    clip = (
        await agent.ok(
            "emulator_clip",
            {
                "recordingPath": run["recordingPath"],
                "startFrame": 60,
                "endFrame": 76,
                "outputPath": "artifacts/clips/before-the-crash.gif",
            },
        )
    ).data
    run["clipBytes"] = clip["bytes"]  # charged outside the recording: the resumed writer must count it too
    session_dir = run["session"]["sessionDir"]
    pid = emulator_pid(session_dir)
    os.kill(pid, signal.SIGKILL)
    await wait_for_exit_row(session_dir, pid)
    error = await agent.refused(
        "emulator_step",
        {"buttons": ["right"], "frames": 4},
        "emulator-restarted",
        f"pid {pid}",
        "SIGKILL",
        "resumed the recording on branch-0002",
        "Not sent",
        "emulator_run",
    )
    again = await agent.ok(
        "emulator_run", {"romPath": "roms/demo.gb", "restart": True, "recording": {"maxBytes": HALF_GIB}}
    )
    stepped = await agent.ok("emulator_step", {"buttons": ["right"], "frames": 8})
    assert stepped.data["recordingSpan"]["recordingPath"] == again.data["recordingPath"]
    await agent.refused(
        "emulator_run",
        {"romPath": "roms/demo.gb", "restart": True, "recording": {}},
        "admission-refused",
        "reserved bytes 1073741824 + 67108864 > 1073741824",
    )
    await agent.ok("emulator_step", {"buttons": [], "frames": 2})  # the refused run left this session running
    await agent.ok("emulator_close")
    return run, error, again.data


def test_killing_the_emulator_gives_a_clear_error_and_the_next_run_works(tmp_path):
    ws = workspace_with_demo(tmp_path / "ws")

    async def main():
        with open(tmp_path / "server.log", "w") as errlog:
            async with connect(ws, errlog) as agent:
                return await crash_and_recover(agent)

    first, error, second = anyio.run(main)
    assert second["replaced"]["recording"]["status"] == "cancelled"  # kept, never deleted
    assert second["recordingPath"] != first["recordingPath"]
    rows = journal(first["session"]["sessionDir"])
    resumed = [r for r in rows if r["event"] == "emulator_resumed"]
    assert resumed and resumed[0]["branch"]["checkpointId"], resumed
    recording = Path(first["recordingPath"])
    manifest = json.loads((recording / "recording.json").read_text())
    on_disk = directory_bytes(recording) + ledger_outside_bytes(recording)
    assert ledger_outside_bytes(recording) == first["clipBytes"]
    assert abs(manifest["bytesUsed"] - on_disk) < first["clipBytes"] // 2, (manifest["bytesUsed"], on_disk)
    sent_after_kill = [
        r
        for r in rows
        if r["event"] == "proposal"
        and r.get("agent_tool") == "emulator_step"
        and r["parameters"].get("buttons") == ["right"]
    ]
    assert sent_after_kill == []  # the refused step never became a proposal
