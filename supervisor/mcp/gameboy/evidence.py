"""The evidence tools: ``emulator_recording``, ``emulator_review`` and ``emulator_clip``.

They read recordings from disk with the emulator library's readers (no ROM is loaded, no
emulator started; they work after ``emulator_close`` and on archived recordings), except two
that go through the pipeline (an intent, then one request to the emulator actor):
``emulator_recording {"action": "stop"}`` finalizes the live recording
(``emulator_stop_recording``) and then ends the session, so the emulator closes and releases
the recording for maintenance; ``emulator_clip`` of the running playtest's live recording is
made by the emulator that writes it (``emulator_clip``), since the writer owns the byte budget
a clip is charged to.

Every path is checked against the authorized workspace first (:mod:`supervisor.mcp.shared.workspace`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from actors.emulator.recording import lease
from actors.emulator.recording.errors import AccessRefused
from actors.emulator.recording.reader import writer_alive
from actors.emulator.tools import archive as maintenance
from actors.emulator.tools import clips
from actors.emulator.tools.review import review as review_interval

from ..shared.args import Answer, Args
from ..shared.errors import ToolRefused
from .schemas import OUTCOMES

EXPORT_LIMIT = 64
CLIP_TIMEOUT_S = 100.0  # above the actuator's own deadline for a clip (5 s + 60 s)


def _current(tools, a: Args) -> Path:
    """``recordingPath`` if given (checked), else this server's current or last recording."""
    if a.has("recordingPath"):
        return tools.ws.recording(a.get("recordingPath"))
    if tools.last_recording is None:
        raise ToolRefused(
            "no-recording",
            'no recording yet in this server: pass recordingPath, or start one with emulator_run {"recording": {}}',
        )
    return tools.last_recording


def recording(tools, a: Args) -> Answer:
    action = a.text(
        "action", choices=("status", "export", "stop", "access_diagnostic", "archive", "retrieve", "restore")
    )
    if action == "status":
        a.only("action", "recordingPath")
        reader, resolved = maintenance.open_reader(_current(tools, a))
        return Answer(
            {
                **reader.status(),
                "archived": resolved.archived,
                "archivePath": str(resolved.recording_path) if resolved.archived else None,
            }
        )
    if action == "export":
        a.only("action", "recordingPath", "actionOffset", "limit")
        reader, _ = maintenance.open_reader(_current(tools, a))
        return Answer(reader.export(a.integer("actionOffset", 0), a.integer("limit", EXPORT_LIMIT, 1, 4096)))
    if action == "stop":
        return _stop(tools, a)
    if action == "access_diagnostic":
        a.only("action")
        return Answer(lease.access_diagnostic(_current(tools, a)))
    a.only("action", "recordingPath")
    path = tools.ws.recording(a.get("recordingPath"))
    operation = {"archive": maintenance.archive, "retrieve": maintenance.retrieve, "restore": maintenance.restore}
    try:
        return Answer(operation[action](path, tools.ws.root))
    except AccessRefused as exc:
        raise ToolRefused(
            exc.code, f"{exc}; recordingAccessFailure: {json.dumps(lease.SERVICE.last_failure, sort_keys=True)}"
        ) from exc


def _stop(tools, a: Args) -> Answer:
    a.only("action", "outcome", "reason")
    outcome = a.text("outcome", None, tuple(OUTCOMES))
    reason = a.text("reason", None)
    if reason is not None and len(reason) > 1000:
        raise ToolRefused("invalid-argument", f"emulator_recording: reason has {len(reason)} characters; at most 1,000")
    if tools.playtest is None or tools.playtest.recording_path is None:
        raise ToolRefused("no-recording", "no recorded playtest is running (emulator_run with recording: {})")
    rows = tools.act("stop_recording", {"outcome": outcome, "reason": reason}, "emulator_recording")
    journal = tools.journal_of(rows)
    ended = tools.end_session("the recording was stopped", "emulator_recording", cancel=False)
    return Answer({"stopped": rows["result"]["response"]["status"], "journal": journal, **ended})


def review(ws, a: Args) -> Answer:
    body = dict(a.values)
    body["recordingPath"] = str(ws.recording(a.get("recordingPath")))
    result = review_interval(body)
    images = [data for _meta, data in result.images]
    if result.sheet is not None:
        images.append(result.sheet)
    return Answer(result.metadata, images)


def clip(tools, a: Args) -> Answer:
    """A GIF of retained frames. The running playtest's live recording is clipped by its own
    emulator, through the pipeline (an intent, then ``emulator_clip``): the writer reads only
    its committed frames and charges the clip to the byte budget it keeps. Any other recording
    is clipped here, from disk, once no writer holds it."""
    ws = tools.ws
    path = ws.recording(a.get("recordingPath"))
    body = {**a.values, "recordingPath": str(path), "outputPath": str(ws.clip_output(a.get("outputPath"), path))}
    p = tools.playtest
    if (
        p is not None
        and p.alive()
        and p.stopping is None
        and p.recording_path is not None
        and os.path.realpath(p.recording_path) == os.path.realpath(path)
    ):
        request = {k: v for k, v in body.items() if k != "recordingPath"}
        rows = tools.act("clip", {"request": request, "workspace": str(ws.root)}, "emulator_clip", CLIP_TIMEOUT_S)
        return Answer(
            {
                **rows["result"]["response"]["clip"],
                "madeBy": "the live recording's emulator",
                "journal": tools.journal_of(rows),
            }
        )
    if writer_alive(path):
        raise ToolRefused(
            "recording-busy",
            f"{path} is live, written by an emulator that is not this server's "
            "running playtest; only its own session can clip it (or clip it after it stops)",
        )
    return Answer({**clips.clip(body, ws.root), "madeBy": "the MCP server, from the recording on disk"})
