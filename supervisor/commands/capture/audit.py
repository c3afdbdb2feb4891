"""``supervisor capture audit PATH [--policy NAME] [--json]``: replay a capture through a
fresh policy (``supervisor.capture.audit``) and print what it found.

Exit codes: 0 no exception, 1 at least one exception, 2 PATH is not a capture (or the
policy cannot be loaded).
"""

from __future__ import annotations

import os
import sys

from actors.policy.registry import PolicyNotFound
from supervisor.capture.audit import audit_session, sessions_to_audit
from supervisor.capture.errors import NotACapture
from supervisor.commands.base import Command, emit


class Audit(Command):
    """Replay a capture's observations through the policy: exceptions and decisions per screen."""

    name = "audit"

    def add_arguments(self, p) -> None:
        p.add_argument("path", help="a session directory or a capture root")
        p.add_argument("--policy", help="audit this policy instead of the recorded policy.module")
        p.add_argument("--json", action="store_true", help="machine-readable report")

    def run(self, args) -> int:
        try:
            root, sessions = sessions_to_audit(args.path)
        except NotACapture as exc:
            sys.stderr.write(f"error: {exc}\n")
            return 2
        reports = []
        tty = sys.stderr.isatty()
        for i, sd in enumerate(sessions, 1):
            if tty:
                sys.stderr.write(f"\raudit {i}/{len(sessions)} {os.path.basename(sd)}")
            try:
                reports.append(audit_session(sd, root, args.policy))
            except PolicyNotFound as exc:
                sys.stderr.write(f"\nerror: {exc}\n")
                return 2
            except OSError as exc:
                reports.append({"session": os.path.basename(sd), "error": str(exc), "exceptions": []})
        if tty:
            sys.stderr.write("\n")
        failed = sum(len(r["exceptions"]) for r in reports)
        emit(args, {"sessions": reports, "exceptions": failed}, _human(reports, failed))
        return 1 if failed else 0


def _human(reports: list[dict], failed: int) -> str:
    lines = []
    for r in reports:
        if "error" in r:
            lines.append(f"{r['session']}: unreadable: {r['error']}")
            continue
        lines.append(
            f"{r['session']}: {r['observations']} observations, policy {r['policy']}, "
            f"{len(r['exceptions'])} exceptions, {r['divergences']} divergent decisions"
        )
        for screen, counts in r["by_screen"].items():
            lines.append(f"  {screen:<15} " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
        if r.get("model", {}).get("errors"):
            lines.append(
                f"  MODEL: {r['model_line']}" + ("; the model never answered" if r["model"]["never_answered"] else "")
            )
        for e in r["exceptions"][:20]:
            lines.append(f"  EXCEPTION at {e['observation_id']} ({e['state_type']}): {e['error']}")
    lines.append(f"{'no exceptions' if not failed else f'{failed} exceptions'} in {len(reports)} sessions")
    return "\n".join(lines)
