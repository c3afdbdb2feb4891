"""The Slay the Spire 2 server (``supervisor mcp --game sts2|builtin``): the STS2MCP mod's tools,
each call a step of a supervised session.

    tools.py      the tools (acting, reads journalled as ``agent_read`` rows, waiting,
                  multiplayer refused) and their dispatch: each action a step of the session
    session.py    the session that keeps the policy's memory, the session profile (policy
                  ``mcp_sts2``), and when the agent can act on a state
    replies.py    the answers in the mod server's words and the refusals (not executed, a
                  guarded duplicate, multiplayer)
    arguments.py  a call's arguments checked against its tool's parameters, the defaults filled in
    schemas.py    the mod's tools with their names, parameters and defaults (each naming the
                  function of the mod's ``mcp/server.py`` it follows), plus the waiting tools
"""
