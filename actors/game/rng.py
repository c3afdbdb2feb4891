"""Named, seeded random streams.

Every random choice of the game comes from ``stream(seed, label...)``, a fresh
``random.Random`` seeded by a string (hashed with SHA-512 by CPython, so it does not depend
on PYTHONHASHSEED). No module touches the global ``random`` state.
"""

from __future__ import annotations

import random


def stream(seed: int | str, *labels: object) -> random.Random:
    """A deterministic random stream for ``seed`` and the given labels."""
    key = ":".join(str(x) for x in (seed, *labels))
    return random.Random(key)
