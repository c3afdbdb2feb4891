"""Unit tests of the supervisor's modules, in-process (real ZeroMQ sockets, real child
processes, a real recorder in a thread); the whole-session tests stay in tests/spine and
tests/attach.

    test_control.py   supervisor/control.py: hello/welcome/refused, heartbeats, request_stop,
                      CLI and tap requests, pings
    test_children.py  supervisor/children.py: start, exit codes and signals, samples
    test_restart.py   supervisor/restart.py: restart modes, intensity, backoff, strategies
    test_taps.py      supervisor/taps.py: lost taps, missing transports
    test_outbox.py    supervisor/outbox.py: ordered, keyed, exactly-once lifecycle events
    idle.py           a child process for these tests
"""
