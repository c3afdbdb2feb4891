"""Unit tests of the recorder's modules (actors/recorder/), in-process on real files under
tmp_path; the whole-process recorder tests stay in tests/journal and tests/chaos.

    test_rules.py       actors/recorder/rules.py: every refusal code, idempotent repeats, never
                        two attempts per proposal, after_attempt_id, finalization, resume, rows
                        from cache and disk
    test_serve.py       actors/recorder/serve.py: the one place errors become replies, group
                        commit, batches, the read-only stream endpoint, parked follows
    test_checkpoint.py  actors/recorder/checkpoint.py (and index.py's bounds): a resume from a
                        checkpoint rebuilds the index a full scan would
    test_files.py       actors/recorder/files.py: the observation file's bytes are json.dumps's
    test_writer.py      actors/recorder/writer.py: a row's recorded_at and ts
    conftest.py         a real Recorder on tmp files; a real RecorderServer on loopback
"""
