"""A real MCP client (the SDK's stdio client) playtests our demo cartridge through
``supervisor mcp``: run → step → observe → checkpoint save/restore → review (contact sheet) →
clip (of the live recording, made by its emulator) → stop → clip (from disk) → close; then the
session journal, the emulator recording and its quota ledger are checked."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from actors.emulator.recording.reader import RecordingReader
from actors.emulator.session import checkpoints as ck
from tests.harness import REPO
from tests.mcp.agent import Agent, connect, journal, workspace_with_demo

pytestmark = pytest.mark.timeout(60)
PNG = b"\x89PNG\r\n\x1a\n"


async def play(agent: Agent, ws) -> dict:
    run = (
        await agent.ok(
            "emulator_run", {"romPath": "roms/demo.gb", "initialFrames": 120, "recording": {"maxFrames": 1000}}
        )
    ).data
    assert run["frame"] == 120 and run["recording"]["status"] == "live"
    assert run["recordingPath"].startswith(str(ws / "artifacts" / "playtests")), run["recordingPath"]
    step = await agent.ok("emulator_step", {"buttons": ["right"], "frames": 8, "sampleCount": 2})
    span = step.data["recordingSpan"]
    assert step.data["pressed"] == ["right"] and step.data["frame"] == 128
    assert (span["fromFrame"], span["toFrame"], span["fromActionIndex"], span["toActionIndex"]) == (120, 128, 1, 2)
    assert set(span) == {
        "recordingPath",
        "sessionId",
        "branchId",
        "fromActionIndex",
        "toActionIndex",
        "fromFrame",
        "toFrame",
        "prefixPin",
    }
    assert step.images and base64.b64decode(step.images[0].data).startswith(PNG)
    seen = await agent.ok("emulator_observe")
    assert seen.data["frame"] == 128 and seen.data["memory"]["player_x"] == "05" and seen.images
    await agent.refused("emulator_checkpoint", {"action": "save"}, "checkpoint-not-neutral")
    await agent.ok("emulator_step", {"buttons": [], "frames": 1})
    saved = (await agent.ok("emulator_checkpoint", {"action": "save", "label": "before the second move"})).data
    await refuse_a_stale_checkpoint(agent, run["recordingPath"])
    moved = await agent.ok("emulator_step", {"buttons": ["right"], "frames": 12})
    assert moved.data["observation"]["memory"]["player_x"] != "05"
    back = await agent.ok(
        "emulator_checkpoint", {"action": "restore", "checkpointId": saved["checkpoint"]["checkpointId"]}
    )
    assert back.data["branch"]["branchId"] == "branch-0002"
    assert back.data["observation"]["frame"] == 129 and back.data["observation"]["memory"]["player_x"] == "05"
    await agent.refused(
        "emulator_checkpoint", {"action": "restore", "checkpointId": "cp-9999-nope"}, "checkpoint-not-found"
    )
    await agent.refused("emulator_step", {"buttons": [], "frames": 900}, "limit-exceeded", "maxFrames")
    return {"run": run, "span": span, "saved": saved}


async def refuse_a_stale_checkpoint(agent: Agent, recording: str) -> None:
    """A checkpoint whose worker identity differs (a rebuilt worker) is refused, naming why."""
    other = (await agent.ok("emulator_checkpoint", {"action": "save", "label": "to be made stale"})).data
    path = Path(recording) / other["checkpoint"]["path"]
    original = path.read_bytes()
    header, state = ck.decode(original, path)
    header["identity"]["implementationHash"] = "0" * 64  # as if written by another worker build
    path.write_bytes(ck.encode(header, state))
    await agent.refused(
        "emulator_checkpoint",
        {"action": "restore", "checkpointId": other["checkpoint"]["checkpointId"]},
        "checkpoint-stale",
        "implementationHash",
        "start from boot",
        "recorded rejected",
    )
    path.write_bytes(original)  # the archive later verifies every checkpoint against its journal hash


async def review_clip_stop(agent: Agent, ws, span: dict) -> dict:
    review = await agent.ok("emulator_review", {**span, "maxImages": 8, "imageLayout": "contact-sheet"})
    assert review.data["contactSheet"]["tiles"] and len(review.images) == 1
    assert review.data["semanticValidity"] == "not-adjudicated"
    assert [i["actionIndex"] for i in review.data["inputs"]] == [2]
    clip = {
        "recordingPath": span["recordingPath"],
        "outputPath": "artifacts/clips/first-move.gif",
        "startFrame": 120,
        "endFrame": 128,
        "branchId": "branch-0001",
    }
    live_clip = (await agent.ok("emulator_clip", clip)).data  # the live recording: its emulator writes it
    assert live_clip["madeBy"] == "the live recording's emulator" and live_clip["sourceImages"] == 3
    assert live_clip["journal"]["outcome"] == "accepted"  # an intent, then emulator_clip
    gif = ws / "artifacts" / "clips" / "first-move.gif"
    assert gif.read_bytes()[:6] == b"GIF89a" and live_clip["ledger"]["bytes"] == gif.stat().st_size
    await agent.refused("emulator_clip", clip, "output-refused", "already exists", "recorded rejected")
    await agent.refused(
        "emulator_clip",
        {**clip, "outputPath": "artifacts/clips/odd.gif", "startFrame": 121},
        "interval-refused",
        "nearest retained frames",
    )
    live = (await agent.ok("emulator_recording", {"action": "access_diagnostic"})).data
    assert live["observation"]["state"] == "present" and live["observation"]["claim"]["holder"] == "emulator"
    await agent.refused(
        "emulator_recording",
        {"action": "archive", "recordingPath": span["recordingPath"]},
        "access-refused",
        "leased by emulator",
        "recordingAccessFailure",
    )
    stop = await agent.ok(
        "emulator_recording",
        {"action": "stop", "outcome": "failed", "reason": "The player walks but the key never appears."},
    )
    assert stop.data["recording"]["status"] == "failed" and stop.data["endedBy"] == "stop_command"
    await agent.refused("emulator_step", {"buttons": [], "frames": 1}, "no-session", "emulator_run")
    again = (await agent.ok("emulator_review", {**span, "maxImages": 2})).data  # after the emulator closed
    assert again["recordingStatus"] == "failed" and again["inputs"] == review.data["inputs"]
    page = (await agent.ok("emulator_recording", {"action": "export", "limit": 1})).data
    assert (page["actionCount"], page["nextActionOffset"], page["actions"][0]["frames"]) == (4, 1, 120)  # 120, 8, 1, 12
    after = {**clip, "outputPath": "artifacts/clips/after-stop.gif"}
    made = (await agent.ok("emulator_clip", after)).data  # works after the emulator closed, from disk
    assert made["madeBy"].startswith("the MCP server") and made["sourceImages"] == 3  # frames 120, 124, 128
    assert (ws / "artifacts" / "clips" / "after-stop.gif").read_bytes() == gif.read_bytes()
    await agent.refused("emulator_clip", after, "already exists")
    status = await agent.ok("emulator_recording", {"action": "status"})
    await maintain(agent, ws, span["recordingPath"])
    closed = await agent.ok("emulator_close")
    assert closed.data["closed"] is False  # the stop had ended the session already
    return {"stop": stop.data, "status": status.data}


async def maintain(agent: Agent, ws, recording: str) -> None:
    """access_diagnostic, archive, status through the mapping, retrieve, restore: filesystem only."""
    diagnosed = (await agent.ok("emulator_recording", {"action": "access_diagnostic"})).data
    assert diagnosed["observation"]["state"] == "absent" and diagnosed["recoveryAuthorized"] is False
    archived = (await agent.ok("emulator_recording", {"action": "archive", "recordingPath": recording})).data
    assert archived["archivePath"].startswith(str(ws / "artifacts" / "recording-archives"))
    status = (await agent.ok("emulator_recording", {"action": "status", "recordingPath": recording})).data
    assert status["archived"] is True and status["status"] == "failed"
    assert (await agent.ok("emulator_recording", {"action": "retrieve", "recordingPath": recording})).data[
        "archivePath"
    ] == archived["archivePath"]
    await agent.ok("emulator_recording", {"action": "restore", "recordingPath": recording})


def test_an_agent_playtests_the_demo_cartridge_through_the_pipeline(tmp_path):
    ws = workspace_with_demo(tmp_path / "ws")

    async def main():
        with open(tmp_path / "server.log", "w") as errlog:
            async with connect(ws, errlog) as agent:
                played = await play(agent, ws)
                return played, await review_clip_stop(agent, ws, played["span"])

    played, ended = anyio.run(main)
    session_dir = played["run"]["session"]["sessionDir"]
    rows = journal(session_dir)
    agent_rows = [r for r in rows if r["event"] == "proposal" and r.get("agent_request")]
    tools = [r["agent_tool"] for r in agent_rows]
    assert tools == [
        "emulator_run",
        "emulator_step",
        "emulator_observe",
        "emulator_checkpoint",
        "emulator_step",
        "emulator_checkpoint",
        "emulator_checkpoint",
        "emulator_checkpoint",  # save, save, stale
        "emulator_step",
        "emulator_checkpoint",
        "emulator_checkpoint",
        "emulator_step",
        "emulator_clip",
        "emulator_clip",
        "emulator_clip",
        "emulator_recording",
        "emulator_recording",
    ], tools  # last: the end
    assert [r["agent_tool"] for r in agent_rows if r.get("read_now")] == ["emulator_observe"]  # read at once
    seq = {r["attempt_id"]: r["sequence"] for r in rows if r["event"] == "action_attempt"}
    results = [r for r in rows if r["event"] == "action_result"]
    assert results and all(seq[r["attempt_id"]] < r["sequence"] for r in results)  # intent first, always
    actions = [r["action"] for r in rows if r["event"] == "action_attempt"]
    assert actions == [
        "step",
        "step",
        "checkpoint",
        "step",
        "checkpoint",
        "checkpoint",
        "restore",
        "step",
        "restore",
        "restore",
        "step",
        "clip",
        "clip",
        "clip",
        "stop_recording",
    ], actions
    outcomes = {r["attempt_id"]: r["outcome"] for r in results}
    # not neutral, stale, an unknown id, past maxFrames, a clip that exists, a clip endpoint not retained
    assert sorted(outcomes.values()).count("rejected") == 6
    reader = RecordingReader(played["span"]["recordingPath"])
    status = reader.status()
    assert (status["status"], status["outcome"], status["branchCount"]) == ("failed", "failed", 2)
    assert status["actionCount"] == sum(
        1 for r in results if r["outcome"] == "accepted" and r["response"].get("recording_span")
    )
    assert reader.verify_frames() == [] and ended["status"]["status"] == "failed"
    ledger = [json.loads(line) for line in open(Path(played["span"]["recordingPath"]) / "quota-ledger.jsonl")]
    assert [(e["kind"], Path(e["path"]).name) for e in ledger] == [
        ("derived", "first-move.gif"),
        ("derived", "after-stop.gif"),
    ]
    verified = subprocess.run(
        [sys.executable, "-m", "supervisor", "capture", "verify", session_dir],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert verified.returncode == 0 and "INTACT" in verified.stdout, verified.stdout + verified.stderr
