"""The answers and refusals of ``supervisor mcp --game``.

:func:`mod_text` puts the game's reply in the words of the STS2MCP mod server (``mcp/server.py``
in ``Gennadiyev/STS2MCP``); :func:`refusal` is the tool
error of a proposal the pipeline did not execute (refused, a guarded duplicate, or not
executed), each naming the step's journal ids; :data:`MULTIPLAYER` is the refusal of every
``mp_*`` tool (nothing sent).
"""

from __future__ import annotations

import json

from ..shared.errors import ToolRefused

MULTIPLAYER = (
    "mp-refused: gamerig does not drive multiplayer runs: its built-in game has no multiplayer, "
    "and no multiplayer flow (votes, bids, the end-turn barrier) was checked against the mod. "
    "Nothing was sent. Use the mod's own MCP server for co-op runs."
)


def mod_text(status: int | None, text: str) -> str:
    """An answer in the mod server's words: the body of a 2xx answer as it is; ``Error: HTTP
    <status> — <body>`` otherwise (its ``_handle_error``); no answer at all is its connect error."""
    if status is None:
        return f"Error: Cannot connect to STS2_MCP mod. Is the game running with the mod enabled? ({text})"
    if 200 <= status < 300:
        return text
    return f"Error: HTTP {status} — {text}"


def refusal(prop: dict, status: str, ids: dict) -> ToolRefused:
    """The tool error of a proposal the pipeline did not execute."""
    if prop.get("refused"):
        return ToolRefused(prop["refused"]["code"], f"{prop['refused']['detail']}. Journal: {json.dumps(ids)}")
    guard = prop.get("guard")
    if guard:
        when = f" (attempt {guard['attempt_id']})" if guard.get("attempt_id") else ""
        lapse = guard.get("lapses_after") or {}
        return ToolRefused(
            "duplicate-refused",
            (
                f"not sent: {guard['pending_action']} {json.dumps(guard['pending_parameters'])} was accepted{when} on "
                f"this very state, which has not changed since, and still awaits its effect ('ok' means queued). It is "
                f"released by {guard['released_by']}; or, if nothing changes, after {lapse.get('reads')} reads over "
                f"{lapse.get('seconds')} s it may be sent again. Wait with wait_for_change or wait_until_actionable. "
                f"Journal: {json.dumps(ids)}"
            ),
        )
    return ToolRefused(
        "not-executed",
        f"the proposal was not executed ({status}: "
        f"{prop.get('reason') or 'no reason recorded'}). Journal: {json.dumps(ids)}",
    )
