"""The emulator: one headless PyBoy session with recordings and checkpoints, in three rooms.

    session/     the actor and its PyBoy session: what plays (actor, core: EmulatorSession,
                 sampling, machine, checkpoints, battery, buttons, resume, config, the score:
                 score, score_map, score_tally; the emulator policies)
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
"""
