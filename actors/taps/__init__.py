"""Attachable, read-only actors ("taps") and the pieces that let them join a live session.

    runtime.py          AttachedTap (the hooks a tap implements) and run_tap (attach, snapshot,
                        follow, keep-alive, drops, reconnect, detach)
    connect.py          reaching a session: its runtime record, ipc or tcp+CURVE sockets
    metrics.py          the metrics tap's aggregation (rates, outcomes, stage latencies, ...)
    metrics_view.py     the metrics tap's outputs: rich dashboard, plain lines, JSONL, Prometheus
    example_counter.py  the "write your own tap" example of docs/attach.md

The supervisor's side lives in ``supervisor/taps.py`` (tap ids, tokens, keep-alive) and
``supervisor/tcp.py`` (the optional tcp:// endpoints, secured with ZeroMQ CURVE).

A tap never writes to the capture: the recorder's stream endpoint only answers ``snapshot``
and ``follow``, and a tap token only allows ``status_request`` and ``detach_request``.
See docs/attach.md.
"""
