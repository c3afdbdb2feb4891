"""Reading captures: the library behind ``supervisor capture SUBCOMMAND PATH``, ``supervisor
view``, the fleet's results and the live supervision. It returns data or raises a
``CaptureError``; printing, exit codes and the command line live in
``supervisor/commands/capture/`` (one module per subcommand). Nothing here imports the
commands, the fleet, the viewer or the command line.

    verify.py     resolve PATH (session, capture root or fleet root), run the checks, the report
    session.py    one session directory: two streaming passes over events.jsonl
    stream.py     the torn-row marks of recorder_resumed rows, file digests
    chain.py      torn rows, common fields, sequences and the hash chain
    links.py      join keys, observation files, after_attempt_id, attempts and results
    summary.py    session.json against the journal (pinned last row, restated counts)
    feeds.py      the root feeds decisions.jsonl and sessions.jsonl
    findings.py   findings, severities, reports, verdicts and the exit codes
    report.py     the verifier's short human summary
    facts.py      what a journal says of its session (``CapturedSession``: runs, wins,
                  scores), as fleet results, the viewer and supervision read it
    modeluse.py   the model's use and cost over a journal (``ModelUse``), costs and tokens in words
    runscore.py   a Slay the Spire 2 run's progress score
    coverage.py   screen variants, action kinds and runs of STS2MCP captures
    audit.py      every stored observation replayed through a fresh policy
    packing.py    observation files <-> observations.pack (protocol/obspack.py)
    frames.py     an emulator recording's retained frames; PATH resolved to its recording
    fleetroot.py  what a capture reader needs of a fleet root: recognise it, its slots' capture roots
    errors.py     CaptureError and its subclasses

The emulator recordings' own tools (review, clips, archive, leases) live in
``actors/emulator/tools/`` and ``actors/emulator/recording/``. The journal format itself
(rows, canonical encoding, GENESIS, the one line reader) lives in ``protocol/journal.py``,
its event kinds in ``protocol/events.py``; docs/journal.md documents schema v1 and the
verifier.
"""
