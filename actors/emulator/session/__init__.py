"""The emulator actor and its PyBoy session: what plays.

    actor        EmulatorActor: one session served over a ROUTER (observe / step / checkpoint /
                 restore / stop / clip), resume after a crash, journal rows through the recorder
    core         EmulatorSession (observe / step / checkpoint / restore / status / export / stop
                 / close), RecordingOptions
    sampling     the frames a step captures: sample_points, FrameSampler (grab, hash on a
                 helper thread, store the PNG, journal the sample row, the recent frames)
    machine      Machine: the PyBoy instance (ROM as bytes, window "null", sound off, CGB resolved)
    checkpoints  the checkpoint container format and its identity checks; a checkpoint stored
                 in a recording and loaded back checked
    battery      BatterySave: battery RAM a session starts from; the battery/ files of a recording
    score        the profile's emulator.score section: parse_section, ScoreSpec (the values read
                 after every step and observe, milestones, game over)
    score_map    what a cartridge offers a score to read: MemoryMap (the Game Boy memory map as
                 the cartridge header fills it), PyBoy's game wrappers; ScoreProblem
    score_tally  ScoreTally: a run's score evidence folded into final / best / milestones /
                 game over (the recorder and supervisor capture count with it)
    buttons      button names and the held-set diff
    resume       resume_from_latest_checkpoint: continue an interrupted recording in a new process
    config       EmulatorConfig: the profile's ``game.rom`` and ``emulator.*`` keys, checked

It owns PyBoy: the only room that imports it. It may import ``actors.emulator.recording``
(it writes recordings) and ``actors.emulator.cartridge``; it never imports
``actors.emulator.tools`` (a live clip is a function the entry point hands to the actor).
"""
