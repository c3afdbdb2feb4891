"""``supervisor mcp``: an MCP server that lets a coding agent playtest a Game Boy ROM through
the pipeline (docs/mcp.md).

    server.py     the official ``mcp`` SDK over stdio (the only module importing the SDK)
    schemas.py    the tools' names, descriptions and input schemas (the seed's argument shapes)
    tools.py      the playing tools (run, step, observe, checkpoint, close) and the dispatch
    evidence.py   the evidence tools (recording status/export/stop/maintenance, review, clip)
    session.py    one playtest: a supervised session started for the agent, followed by journal
    bridge.py     the local socket between the server and the session's policy (AgentPolicy)
    workspace.py  the authorized workspace: where ROMs are read and artifacts written
    args.py       argument checking and the answer shape
    errors.py     the refusals (each a tool error with a stable code)

This package's ``__init__`` imports nothing, so the policy actor can load
``supervisor.mcp.bridge:AgentPolicy`` without the SDK installed.
"""
