"""``supervisor mcp``: MCP servers that let a coding agent play a game through the supervised
pipeline (docs/mcp.md). Every state-changing tool call becomes the session policy's proposal,
so it is journalled, its intent fsynced, and its result recorded before the agent is answered.

Two servers, one per game, and what they share:

    gameboy/   ``supervisor mcp``: playtest a Game Boy ROM of the workspace (emulator_run,
               emulator_step, ..., the recordings' evidence tools); the session's policy is
               ``mcp_pyboy`` (``actors.policy.mcp_pyboy``)
    sts2/      ``supervisor mcp --game sts2|builtin``: play Slay the Spire 2 with the STS2MCP
               mod's own tools (its names and arguments) plus two waiting tools; the
               session's policy is ``mcp_sts2`` (``actors.policy.mcp_sts2``)
    shared/    the SDK server over stdio (the only module importing the SDK), the bridge to the
               session's policy, one session's lifecycle, the authorized workspace, argument
               checking and the answer shape, the refusals

Neither this package's ``__init__`` nor any of its rooms' imports anything: the command line
and the policy actor never load the optional SDK.
"""
