"""``MemoryFollower``: the Follower interface over rows held in memory.

    follower = MemoryFollower()
    follower.append({"event": "observation", "observation_id": "o-000001", ...}, state={...})
    actor = SomeJournalActor(follower, ...)   # reads them as it would read the recorder's stream

It numbers the rows it is given (``sequence`` 1, 2, ...) unless they carry one, keeps the
states a ``follow(with_states=True)`` reply would attach, and answers at once: ``next_rows``
never blocks, so a test drives an actor step by step without processes or sleeping. It has no
socket (``socket`` is None, ``ensure_request`` returns None).
"""

from __future__ import annotations


class MemoryFollower:
    def __init__(self, rows: list[dict] | None = None, *, max_rows: int = 256):
        self.rows: list[dict] = []
        self.states: dict[str, dict] = {}
        self.cursor = 0
        self.max_rows = max_rows
        self.pace_s = 0.0
        self.wake = None  # (answers at once whatever the kinds: nothing is held in memory)
        self.socket = None
        self.closed = False
        for row in rows or []:
            self.append(row)

    def append(self, row: dict, state: dict | None = None) -> dict:
        """Add a row at the end of the journal (numbered if it has no ``sequence``), and the
        state of an observation row; returns the row as followers will see it."""
        row = dict(row)
        expected = len(self.rows) + 1
        if row.setdefault("sequence", expected) != expected:
            raise ValueError(f"row {row!r} has sequence {row['sequence']}, the journal expects {expected}")
        if not isinstance(row.get("event"), str):
            raise ValueError(f"row {expected} has no event name: {row!r}")
        self.rows.append(row)
        if state is not None:
            self.states[row["observation_id"]] = state
        return row

    @property
    def last_known(self) -> int:
        return len(self.rows)

    @property
    def caught_up(self) -> bool:
        return self.cursor >= len(self.rows)

    def ensure_request(self) -> None:
        return None

    def idle_s(self) -> float:
        return 0.0

    def pump(self) -> list[dict]:
        """The rows after the cursor (up to ``max_rows``), in order."""
        out = self.rows[self.cursor : self.cursor + self.max_rows]
        self.cursor += len(out)
        return out

    def next_rows(self, timeout_s: float) -> list[dict]:
        return self.pump()

    def take_state(self, observation_id: str) -> dict | None:
        return self.states.pop(observation_id, None)

    def close(self) -> None:
        self.closed = True
