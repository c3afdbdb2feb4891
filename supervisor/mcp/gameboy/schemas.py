"""The Game Boy tools the MCP server lists: names, descriptions and input schemas (JSON
Schema; arguments in camelCase: ``romPath``, ``sampleCount``, ``checkpointId``, the recording
options ``maxBytes``...).

The schemas are advisory for the client; :mod:`.tools` checks every argument itself and
refuses unknown fields and wrong kinds with an error naming them.
"""

from __future__ import annotations

_INT = {"type": "integer", "minimum": 0}
_STR = {"type": "string"}
_BUTTONS = {
    "type": "array",
    "items": {"type": "string", "enum": ["a", "b", "start", "select", "up", "down", "left", "right"]},
}
LIMITS = {
    "maxBytes": _INT,
    "maxFrames": _INT,
    "maxWallTimeMs": _INT,
    "recentFrameCount": _INT,
    "sampleEveryFrames": _INT,
}
OUTCOMES = ["passed", "failed", "needs-review", "cancelled"]
RECORDING_ACTIONS = ["status", "export", "stop", "access_diagnostic", "archive", "retrieve", "restore"]


def _obj(properties: dict, required: tuple[str, ...] = ()) -> dict:
    return {"type": "object", "properties": properties, "required": list(required), "additionalProperties": False}


TOOLS: dict[str, tuple[str, dict]] = {
    "emulator_run": (
        "Boot a Game Boy ROM from the workspace in a supervised gamerig session (emulator, recorder, "
        "actuator and policy are separate processes; every step is journalled before it is sent). "
        "`recording: {}` keeps an emulator recording under artifacts/playtests/; `restart: true` "
        "replaces a running session (its recording is cancelled, never deleted).",
        _obj(
            {
                "romPath": _STR,
                "restart": {"type": "boolean"},
                "initialFrames": _INT,
                "recording": _obj({"outputPath": _STR, **LIMITS}),
            },
            ("romPath",),
        ),
    ),
    "emulator_step": (
        "Hold exactly `buttons` (the full held set) for `frames` native frames; `sampleCount` evenly "
        "spaced frames come back as images. Returns the exact `recordingSpan` of the step.",
        _obj({"buttons": _BUTTONS, "frames": {"type": "integer", "minimum": 1}, "sampleCount": _INT}),
    ),
    "emulator_observe": (
        "Read the emulator now (a fresh journalled observation): the frame as an image, memory regions, "
        "held buttons, frame number, branch and action index.",
        _obj({}),
    ),
    "emulator_checkpoint": (
        "`save` a checkpoint (deliver one neutral frame first: emulator_step {buttons: [], frames: 1}) "
        "or `restore` one of this recording by `checkpointId` (a new branch; the old route stays).",
        _obj(
            {"action": {"type": "string", "enum": ["save", "restore"]}, "label": _STR, "checkpointId": _STR},
            ("action",),
        ),
    ),
    "emulator_recording": (
        "Recording evidence and maintenance: `status`, `export` (actionOffset, limit), `stop` (outcome, "
        "reason: finalizes and ends the session), `access_diagnostic` (no other fields), `archive`, "
        "`retrieve`, `restore` (recordingPath only; filesystem only).",
        _obj(
            {
                "action": {"type": "string", "enum": RECORDING_ACTIONS},
                "recordingPath": _STR,
                "actionOffset": _INT,
                "limit": {"type": "integer", "minimum": 1, "maximum": 4096},
                "outcome": {"type": "string", "enum": OUTCOMES},
                "reason": {"type": "string", "maxLength": 1000},
            },
            ("action",),
        ),
    ),
    "emulator_review": (
        "Review (fromActionIndex, toActionIndex] of a recording from its committed inputs and retained "
        "PNGs (copy a step's recordingSpan). Never plays, writes or journals anything; works after close. "
        '`imageLayout: "contact-sheet"` composes the images into one sheet.',
        _obj(
            {
                "recordingPath": _STR,
                "sessionId": _STR,
                "branchId": _STR,
                "fromActionIndex": _INT,
                "toActionIndex": _INT,
                "fromFrame": _INT,
                "toFrame": _INT,
                "prefixPin": _STR,
                "maxImages": {"type": "integer", "minimum": 1, "maximum": 8},
                "includeImages": {"type": "boolean"},
                "imageLayout": {"type": "string", "enum": ["individual", "contact-sheet"]},
            },
            ("recordingPath", "sessionId", "branchId", "fromActionIndex", "toActionIndex"),
        ),
    ),
    "emulator_clip": (
        "Write a GIF of already retained frames (startFrame..endFrame, or ordered `cuts`) to "
        "artifacts/clips/ or inside the recording; no-clobber; never plays or captures. Works on the "
        "running playtest's live recording (its emulator writes the clip) and after stop or close.",
        _obj(
            {
                "recordingPath": _STR,
                "outputPath": _STR,
                "startFrame": _INT,
                "endFrame": _INT,
                "maxFrames": {"type": "integer", "minimum": 1, "maximum": 600},
                "branchId": _STR,
                "cuts": {
                    "type": "array",
                    "items": _obj({"startFrame": _INT, "endFrame": _INT, "branchId": _STR}, ("startFrame", "endFrame")),
                },
            },
            ("recordingPath", "outputPath"),
        ),
    ),
    "emulator_close": (
        "End the session: a live recording is finalized as cancelled (kept, never deleted), the "
        "emulator closes and the session journal is finalized.",
        _obj({}),
    ),
}
