"""The small runtime shared by every actor and by the supervisor.

    actor.py      run_actor / ActorContext: handshake, heartbeats, stop, exit codes
    transport.py  ZeroMQ sockets, envelopes, the Lazy Pirate request client and its errors
    recorder_client.py  RecorderClient: every request to the recorder, built and sent here
    follow.py     following the recorder's journal stream by sequence number
    memory.py     MemoryFollower: the Follower interface over rows in memory (for tests)
    journal_actor.py  JournalActor: the one journal-driven loop (hooks, pacing, max_steps)
    steps.py      step bookkeeping every journal follower shares (StepTracker)
    bounded.py    BoundedDict: per-step bookkeeping that forgets its oldest entries
    hoplog.py     GAMERIG_HOPLOG: every frame encoded or decoded, timed (bench/step_timeline.py)

Nothing here imports an actor package or the supervisor: they import this.
"""
