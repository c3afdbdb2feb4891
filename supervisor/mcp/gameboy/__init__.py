"""The Game Boy server (``supervisor mcp``): playtest a ROM of the workspace.

tools.py      the playing tools (run, step, observe, checkpoint, close), the dispatch and
              the session profile (policy ``mcp_pyboy``)
evidence.py   the evidence tools (recording status/export/stop/maintenance, review, clip)
schemas.py    the tools' names, descriptions and input schemas
"""
