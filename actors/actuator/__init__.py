"""The actuator actor: turns an executed proposal into exactly one request to the game.

For each ``proposal_status: execute`` it asks the recorder to record the intent and waits for
the acknowledgement, which the recorder sends only after the ``action_attempt`` row is
fsynced. No acknowledgement, no request — ever. Then it sends exactly one request and
records the result (accepted, rejected, unknown); a transport failure is ``unknown`` and is
never retried.

After a restart it catches up from the journal: an attempt that has no result was held by
the actuator that died, so its outcome is recorded as ``unknown`` (the request may or may not
have been sent) and it is not sent again.

    __main__.py  Actuator (a JournalActor: queue, intents, results, orphans) and main
    sink.py      where it sends actions: the HTTP game or the emulator actor
"""
