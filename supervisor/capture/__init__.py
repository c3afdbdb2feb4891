"""Capture tools: the logic behind ``supervisor capture SUBCOMMAND PATH``.

One module per subcommand, each defining its ``Command`` class next to its entry function
(``supervisor/commands/capture.py`` lists them); the rest are the verifier's parts.

    verify.py     ``capture verify``: resolve PATH (session or capture root), run the checks,
                  exit 0 / 3 incomplete / 4 damaged / 2 usage
    recordings.py ``capture archive|retrieve|restore|diagnose``: emulator recording maintenance
                  (actors/emulator/tools/archive.py, lease.py); exit 0 / 1 refused / 3 interrupted
    frames.py     ``capture frames``: a recording's retained frames, checkpoints and branches
    review.py     ``capture review``: an interval of an emulator recording (actors/emulator/tools/review.py)
    clip.py       ``capture clip``: a GIF from a recording's retained frames (actors/emulator/tools/clips.py)
    packing.py    ``capture pack|unpack``: observation files <-> observations.pack (protocol/obspack.py)
    audit.py      ``capture audit``: every stored observation replayed through a fresh policy
    coverage.py   ``capture coverage``: screen variants, action kinds and runs of STS2MCP captures
    evidence.py   what review and clip share: PATH resolution, errors, exit 0 / 1 refused / 2 usage / 4 damaged
    session.py    one session directory: two streaming passes over events.jsonl
    stream.py     the torn-row marks of recorder_resumed rows, file digests
    chain.py      torn rows, common fields, sequences and the hash chain
    links.py      join keys, observation files, after_attempt_id, attempts and results
    summary.py    session.json against the journal (pinned last row, restated counts)
    feeds.py      the root feeds decisions.jsonl and sessions.jsonl
    findings.py   findings, severities, reports, verdicts and the exit codes
    report.py     the short human summary
    errors.py     CaptureError and its subclasses

The journal format itself (rows, canonical encoding, GENESIS, the one line reader) lives in
``protocol/journal.py``, its event kinds in ``protocol/events.py``; docs/journal.md
documents schema v1 and the verifier.
"""
