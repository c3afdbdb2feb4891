"""Your own attachable actor: count journal events and print a line per action result.

    supervisor attach --module actors.taps.example_counter

``supervisor attach --module pkg.mod`` imports ``pkg.mod`` and runs its ``Tap`` class.
"""

import collections

from actors.taps.runtime import AttachedTap
from protocol.events import ActionResult


class Tap(AttachedTap):
    name = "example-counter"

    def on_snapshot(self, last_sequence, summary):
        self.counts = collections.Counter(summary["events"])  # the counters so far
        print(f"attached at #{last_sequence}: {summary['steps']} steps", flush=True)

    def on_row(self, row):  # every later row, in order, exactly once
        self.counts[row["event"]] += 1
        if row["event"] == ActionResult.KIND:
            print(f"#{row['sequence']} {row['outcome']}: {self.counts[ActionResult.KIND]} results", flush=True)

    def on_detach(self, reason):
        print(f"detached ({reason}) after {sum(self.counts.values())} events", flush=True)
