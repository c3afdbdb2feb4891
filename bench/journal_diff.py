"""Compare two session journals row by row, with what legitimately differs between two runs
of the same profile and seed masked: timestamps, durations, hashes, process ids, random ids,
ports and the session id (an observation's digest is taken over its file with those masked).

    python bench/journal_diff.py A/events.jsonl B/events.jsonl [--show 5]

Exit 0 when the masked journals are identical, 1 with the first differences otherwise. Used
to check that a refactor changed no behaviour (docs/architecture.md): record a demo and a
hostile session with the same seeds before and after, and compare.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys

from protocol import obspack
from protocol.events import ActorStart
from protocol.journal import scan_file

#: keys whose values differ between two runs of the same session by nature
MASKED_KEYS = {
    "recorded_at",
    "ts",
    "prev_sha256",
    "pid",
    "read_id",
    "requester",
    "session",
    "capture_root",
    "last_sha256",
    "started_at",
    "ended_at",
    "wall_s",
    # a model call's id is a random uuid (the stand-in's answers themselves are seeded)
    "call_id",
    # an emulator recording's hash chain pins (over rows that name the session), and the
    # emulator's own clocks
    "prefixPin",
    "fromPrefixPin",
    "sessionId",
    "emulation_s",
    "cpu_s",
    "busy_s",
    "busy_percent",
}
PORT = re.compile(r"127\.0\.0\.1:\d+")


def masked(value, names: dict[str, str]):
    """``value`` with masked keys blanked and run-specific strings (``names``) replaced."""
    if isinstance(value, dict):
        return {
            k: ("<masked>" if k in MASKED_KEYS or k.endswith("_ms") else masked(v, names)) for k, v in value.items()
        }
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
    names.update(
        (f"-{row['pid']}", "-<pid>")
        for row in rows
        if row.get("event") == ActorStart.KIND and isinstance(row.get("pid"), int)
    )
    for row in rows:  # the emulator's event keys name its pid and its recording's random session id
        if row.get("event") == "emulator_started":
            if isinstance(row.get("pid"), int):
                names[f":{row['pid']}"] = ":<pid>"
            if isinstance(row.get("event_key"), str):
                names[row["event_key"]] = "<recording-session>"
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(path))))
    return [masked(_observed(row, root, names), names) for row in rows]


def _observed(row: dict, root: str, names: dict[str, str]) -> dict:
    """An observation row's ``sha256`` replaced by the digest of its file with the run's names
    masked: an emulator observation names its session in the paths it holds, so its raw digest
    differs between any two runs (the file is compared, not its run-bound bytes)."""
    if row.get("event") != "observation" or not isinstance(row.get("path"), str):
        return row
    try:
        text = obspack.read_bytes(root, row["path"]).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return row
    for name, mask in names.items():
        text = text.replace(name, mask)
    return {**row, "sha256": "masked:" + hashlib.sha256(text.encode()).hexdigest()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--show", type=int, default=5, help="differences to print (default 5)")
    args = ap.parse_args(argv)
    a, b = masked_rows(args.a), masked_rows(args.b)
    diffs = [n for n in range(max(len(a), len(b))) if n >= len(a) or n >= len(b) or a[n] != b[n]]
    for n in diffs[: args.show]:
        left = json.dumps(a[n], sort_keys=True) if n < len(a) else "(absent)"
        right = json.dumps(b[n], sort_keys=True) if n < len(b) else "(absent)"
        print(f"row {n + 1}:\n  A {left[:600]}\n  B {right[:600]}")
    print(f"{len(a)} rows vs {len(b)} rows; {len(diffs)} differ after masking")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
