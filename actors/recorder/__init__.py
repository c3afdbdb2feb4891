"""The recorder actor: the only writer of a session's capture.

    rules.py     the domain: the Recorder's state (writer, index, caches), start and resume,
                 ``append``, the ``on_<request>`` handlers and their refusals; no sockets
    serve.py     the serving loop: the writers' and the read-only stream endpoints, group
                 commit, batches, parked follows, and the one place errors become replies
    writer.py    the hash-chained journal writer (exclusive create, resume, fsync, faults)
    index.py     the in-memory session index, rebuilt from rows on resume
    files.py     session directory, observation files, summary, root feeds (flock)
    summary.py   finalization's files: session.json and the sessions.jsonl feed row
    __main__.py  ``python -m actors.recorder``: a RecorderServer around a Recorder
"""
