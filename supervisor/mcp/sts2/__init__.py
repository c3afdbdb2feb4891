"""The Slay the Spire 2 server (``supervisor mcp --game sts2|builtin``): the STS2MCP mod's tools,
each call a step of a supervised session.

    tools.py      the tools (acting, reads, waiting, multiplayer refused), the session that
                  keeps the policy's memory, and the session profile (policy ``mcp_sts2``)
    schemas.py    the mod's tools with their names, parameters and defaults (each naming the
                  function of the mod's ``mcp/server.py`` it follows), plus the waiting tools
"""
