"""The maintenance tools: what reads (and moves) recordings beside or after the play.

    review         review(): an interval (fromActionIndex, toActionIndex] of one session and
                   branch, read-only: inputs, physical events, verified frames, coverage, prefix pins
    contact_sheet  the same verified PNGs composed into one labelled sheet with its tile mapping
    clips          clip(): a GIF from retained frames (one interval or ordered cuts), native
                   timing; clip_live() for the writer of a running recording
    archive        archive / retrieve / restore of finalized recordings; resolve_recording
    maintenance    their shared checks: workspace paths, full inventory, finalized-recording integrity
    derived        derived-output locations (no-clobber), quota-ledger charges
    sources        locate the recording directory a review or clip request names

The tools read the format: they may import ``actors.emulator.recording``, never
``actors.emulator.session`` (they never play). The supervisor's ``capture`` commands and the
MCP tools import them from here.
"""
