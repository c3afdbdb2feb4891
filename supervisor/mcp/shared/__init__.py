"""What both MCP servers use.

server.py     the official ``mcp`` SDK over stdio, serving one toolset (the only module
              importing the SDK)
session.py    one session run for an agent: started, followed by journal, ended
              (``Playtest``); the server's private directory
bridge.py     the server's side of the local socket to the session's policy (``Bridge``;
              the messages: ``protocol.mcp_bridge``)
workspace.py  the authorized workspace: where ROMs are read and artifacts written
args.py       argument checking and the answer shape
errors.py     the refusals (each a tool error with a stable code)
"""
