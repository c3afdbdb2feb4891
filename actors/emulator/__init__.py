"""The emulator: one headless PyBoy session with recordings and checkpoints, in three rooms.

    session/     the actor and its PyBoy session: what plays (actor, core: EmulatorSession,
                 machine, checkpoints, battery, buttons, resume, config)
    recording/   the recording format: what a recording directory holds and how it is written
                 and read (writer, reader, journal, retained frames, frames, limits, results,
                 errors, ROM identity, the access lease, the implementation identity)
    tools/       the maintenance tools: what reads recordings after (or beside) the play
                 (review, clips, contact sheets, archive / retrieve / restore, diagnose,
                 derived outputs, sources)
    cartridge/   the demo cartridge we own: assembler, game source, ROM builder
    __main__     ``python -m actors.emulator``: the supervised actor, with the tools' live clip
                 wired in

The rooms import downwards only: ``session`` and ``tools`` may import ``recording``;
``recording`` imports neither; ``session`` never imports ``tools`` (the actor's live clip is
given to it by ``__main__``). Each room's ``__init__`` says what it owns.

Names are imported lazily so that ``reader``/``journal`` users never import PyBoy.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "EmulatorSession": "session.core", "RecordingOptions": "session.core", "sample_points": "session.core",
    "resume_from_latest_checkpoint": "session.resume", "Machine": "session.machine", "RomIdentity": "recording.rom",
    "RecordingReader": "recording.reader", "RecordingLimits": "recording.limits", "BUTTONS": "session.buttons",
    "PROTOCOL_VERSION": "recording.identity", "implementation_hash": "recording.identity",
    "DEMO_REGIONS": "cartridge.layout", "is_demo_cartridge": "cartridge.layout",
    "EmulatorError": "recording.errors",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
