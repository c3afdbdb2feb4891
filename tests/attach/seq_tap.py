"""A test tap for ``supervisor attach --module tests.attach.seq_tap``: writes the snapshot's
sequence and then every row's sequence, one per line, to ``$SEQ_TAP_FILE``."""

import os

from actors.taps.runtime import AttachedTap


class Tap(AttachedTap):
    name = "seq-tap"

    def __init__(self):
        self.fh = open(os.environ["SEQ_TAP_FILE"], "a", encoding="utf-8")

    def on_attach(self, info):
        self.fh.write(f"attach {info['tap_id']}\n")
        self.fh.flush()

    def on_snapshot(self, last_sequence, summary):
        self.fh.write(f"snapshot {last_sequence}\n")
        self.fh.flush()

    def on_row(self, row):
        self.fh.write(f"row {row['sequence']}\n")
        self.fh.flush()

    def on_detach(self, reason):
        self.fh.write(f"detach {reason}\n")
        self.fh.close()
