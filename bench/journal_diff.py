"""Compare two session journals row by row, with what legitimately differs between two runs
of the same profile and seed masked: timestamps, durations, hashes, process ids, random ids,
ports and the session id.

    python bench/journal_diff.py A/events.jsonl B/events.jsonl [--show 5]

Exit 0 when the masked journals are identical, 1 with the first differences otherwise. Used
to check that a refactor changed no behaviour (docs/architecture.md): record a demo and a
hostile session with the same seeds before and after, and compare.
"""
from __future__ import annotations

import argparse
import json
import re
import sys

from protocol.events import ActorStart
from protocol.journal import scan_file

#: keys whose values differ between two runs of the same session by nature
MASKED_KEYS = {"recorded_at", "ts", "prev_sha256", "pid", "read_id", "requester", "session",
               "capture_root", "last_sha256", "started_at", "ended_at", "wall_s"}
PORT = re.compile(r"127\.0\.0\.1:\d+")


def masked(value, names: dict[str, str]):
    """``value`` with masked keys blanked and run-specific strings (``names``) replaced."""
    if isinstance(value, dict):
        return {k: ("<masked>" if k in MASKED_KEYS or k.endswith("_ms") else masked(v, names))
                for k, v in value.items()}
    if isinstance(value, list):
        return [masked(v, names) for v in value]
    if isinstance(value, str):
        for text, name in names.items():
            value = value.replace(text, name)
        return PORT.sub("127.0.0.1:<port>", value)
    return value


def masked_rows(path: str) -> list[dict]:
    rows = scan_file(path).rows
    first = rows[0] if rows else {}
    names = {str(first[k]): f"<{k}>" for k in ("session", "capture_root") if first.get(k)}
    names.update((f"-{row['pid']}", "-<pid>") for row in rows
                 if row.get("event") == ActorStart.KIND and isinstance(row.get("pid"), int))
    return [masked(row, names) for row in rows]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--show", type=int, default=5, help="differences to print (default 5)")
    args = ap.parse_args(argv)
    a, b = masked_rows(args.a), masked_rows(args.b)
    diffs = [n for n in range(max(len(a), len(b)))
             if n >= len(a) or n >= len(b) or a[n] != b[n]]
    for n in diffs[:args.show]:
        left = json.dumps(a[n], sort_keys=True) if n < len(a) else "(absent)"
        right = json.dumps(b[n], sort_keys=True) if n < len(b) else "(absent)"
        print(f"row {n + 1}:\n  A {left[:600]}\n  B {right[:600]}")
    print(f"{len(a)} rows vs {len(b)} rows; {len(diffs)} differ after masking")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
