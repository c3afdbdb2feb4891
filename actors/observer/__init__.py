"""The observer actor: reads game state and hands it to the recorder, one step at a time.

It reads when the previous step is resolved (see ``actors.runtime.steps``), after
``game.poll_interval_s`` when the policy chose to wait (at once when the wait's proposal says
``read_now``), and never beyond ``session.max_steps``. While pipelined steps are in flight it
reads once per pipeline's worth of results (``actors.runtime.steps.StepTracker.read_due``). A
failed read is recorded as ``observation_error`` and retried with backoff; it never invents an
observation.

    __main__.py  Observer (a JournalActor: when to read, storing, failed reads) and main
    source.py    where it reads from: the HTTP game or the emulator actor
"""
