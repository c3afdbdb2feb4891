"""The supervisor: command line, profiles, process supervision and control.

cli.py          the ``supervisor`` command, built from ``commands.registry.REGISTRY``
commands/       one module per command (start, status, stop, validate, ...)
profile.py      YAML profiles: defaults, ``--set`` overrides, validation
session.py      one supervised session's lifecycle: start order, exits, restarts, stop
                order, finalization
control.py      the control endpoint: hello/welcome, heartbeats, request_stop, CLI and
                tap requests, pings
restart.py      restart policy (permanent/transient/temporary, intensity, strategies)
children.py     child processes: start, signal, reap, psutil samples
outbox.py       lifecycle events owed to the recorder, never blocking the loop
watch.py        what the journal stream tells the supervisor (progress, end conditions)
progress.py     the live progress line
rundir.py       runtime records and the 0700 socket directory
taps.py         the book of attached taps: ids, tokens, keep-alive, refusals
tcp.py          optional tcp:// endpoints for remote taps, always ZeroMQ CURVE
capture/        reading captures, a library: verify, a journal's runs and costs, coverage,
                audit, packing, a recording's frames (the subcommands: commands/capture/)
fleet/          many sessions from one fleet file (docs/fleet.md)
mcp/            ``supervisor mcp``: the MCP playtest server (docs/mcp.md)
installed.py    this installation: its version, the files a wheel carries besides code
                (``supervisor init``'s profiles, ``supervisor docs``' pages), name clashes
__main__.py     ``python -m supervisor``: the command line
"""
