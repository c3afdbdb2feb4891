"""The recorder actor: the only writer of a session's capture.

    service.py   request handlers (one per request type) and the serving loop
    writer.py    the hash-chained journal writer (exclusive create, resume, fsync)
    index.py     the in-memory session index, rebuilt from rows on resume
    files.py     session directory, observation files, summary, root feeds (flock)
    summary.py   finalization: session_end, session.json, sessions.jsonl
"""
