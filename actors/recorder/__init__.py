"""The recorder actor: the only writer of a session's capture.

rules.py     the domain: the ``on_<request>`` handlers and their refusals; no sockets
state.py     the Recorder's state (writer, index, caches), start and resume, ``append``,
             the work after a group, rows read back, observation files made durable
serve.py     the serving loop: the writers' and the read-only stream endpoints, group
             commit, batches, parked follows, and the one place errors become replies
writer.py    the hash-chained journal writer (exclusive create, resume, fsync, faults)
index.py     the in-memory session index (bounded), rebuilt from rows on resume
checkpoint.py  the index persisted every few thousand rows, so a resume reads only the
             journal's tail (a checkpoint that does not match the journal is ignored)
files.py     session directory, observation files, summary, root feeds (flock)
summary.py   finalization's files: session.json and the sessions.jsonl feed row
__main__.py  ``python -m actors.recorder``: a RecorderServer around a Recorder
"""
