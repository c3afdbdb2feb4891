"""Property-based fuzzing of the parts that read untrusted bytes.

    test_protocol_fuzz.py   the wire decoder: mutated golden frames, type-confused bodies
    test_journal_fuzz.py    the journal readers: protocol.journal.scan_bytes, the verifier,
                            the model replay reader
    test_profile_fuzz.py    the profile loader: raw bytes, random YAML trees, --set overrides

Each property: the reader returns a result or raises its package's one documented error
(with a message naming what was wrong) — never anything else. Example counts are modest so
each property runs in a few seconds.
"""
