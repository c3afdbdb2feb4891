"""``BoundedDict``: a dict that forgets its oldest entries past ``limit``.

Sessions run for days; per-step bookkeeping (idempotency keys, recent proposals, attempts)
must not grow without bound. Entries are only ever needed for recent steps — a retry of a
request comes within seconds — so keeping the newest ``limit`` is enough. What must never be
forgotten (e.g. attempts still without a result) is kept apart by the caller.
"""

from __future__ import annotations

import collections
from typing import Any

RECENT = 4_096  # steps' worth of bookkeeping kept in memory by default (minutes of play;
#                 seconds of a pipelined emulator, still far beyond any retry's window)


class BoundedDict(collections.OrderedDict):
    def __init__(self, limit: int = RECENT):
        super().__init__()
        self.limit = limit

    def __setitem__(self, key: Any, value: Any) -> None:
        if key in self:
            self.move_to_end(key)
        super().__setitem__(key, value)
        while len(self) > self.limit:
            self.popitem(last=False)
