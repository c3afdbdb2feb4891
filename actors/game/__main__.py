"""``python -m actors.game``: the built-in game.

Started by the supervisor (``GAMERIG_CONTROL`` is set) it runs as the ``game`` actor: it
serves on the port of ``game.base_url`` with ``game.seed`` and ``game.knobs``, and checks every
action POST against the session's journal on disk (the intent check). Run by hand, it is the
standalone server: ``python -m actors.game --port 15526 --seed 1 [knobs]`` (see docs/game.md).
"""

from __future__ import annotations

import json
import logging
import os
import sys
import urllib.parse

from actors.runtime.actor import run_actor
from actors.runtime.transport import RequestFailed
from protocol.events import BuiltinGameStats

from .cli import main
from .http import start_server
from .knobs import Knobs


def actor_main(ctx) -> int:
    url = urllib.parse.urlparse(ctx.setting("game.base_url"))
    knobs = Knobs.from_mapping(dict(ctx.setting("game.knobs") or {}))
    server = start_server(
        url.hostname or "127.0.0.1",
        url.port,
        int(ctx.setting("game.seed", 1)),
        knobs,
        journal_path=os.path.join(ctx.session_dir, "events.jsonl"),
    )
    try:
        while not ctx.wait(0.5) and not server.quit_event.is_set():  # quit: the game closed
            ctx.status["stats"] = {k: v for k, v in server.stats().items() if isinstance(v, int)}
    finally:
        server.shutdown()
        _report_stats(ctx, server.stats())
    return 0


def _report_stats(ctx, stats: dict) -> None:
    """Leave the intent check's verdict where tests and users can read it: one line in the
    game's log, and a ``builtin_game_stats`` journal row when the recorder is reachable."""
    logging.getLogger("game").info("GAME_STATS %s", json.dumps(stats, sort_keys=True))
    client = ctx.recorder()
    try:
        client.record(BuiltinGameStats(stats=stats), f"game-stats-{ctx.start_count}-{os.getpid()}", deadline_s=2)
    except RequestFailed:
        pass
    finally:
        client.close()


if __name__ == "__main__":
    if os.environ.get("GAMERIG_CONTROL"):
        run_actor("game", actor_main)
    else:
        sys.exit(main())
