"""Show running sessions: steps, action results, and each actor's pid, RSS, CPU and starts.

Example:
  supervisor status
  supervisor status --json
"""

from __future__ import annotations

from protocol.cli_to_supervisor import StatusRequest
from supervisor.rundir import find_sessions

from .base import Command, RequestFailed, add_runtime_dir, control_request, emit


class Status(Command):
    name = "status"

    def add_arguments(self, p) -> None:
        add_runtime_dir(p)
        p.add_argument("--json", action="store_true", help="machine-readable output")

    def run(self, args) -> int:
        recs, looked = find_sessions(args.runtime_dir)
        if args.session:
            recs = [r for r in recs if r["session_id"].startswith(args.session)]
        out, lines = [], []
        for rec in recs:
            try:
                st = control_request(rec, StatusRequest(token=rec["token"])).status
            except RequestFailed as exc:
                st = {"session_id": rec["session_id"], "error": str(exc)}
            out.append(st)
            lines.append(_human(st))
        emit(
            args,
            {"sessions": out, "looked_in": looked},
            "\n".join(lines) if lines else f"no running sessions (looked in {' and '.join(looked)})",
        )
        return 0


def _human(st: dict) -> str:
    if "error" in st:
        return f"{st['session_id']}: unreachable ({st['error']})"
    r = st["action_results"]
    head = (
        f"{st['session_id']}  profile {st['profile']}  steps {st['steps']}  "
        f"accepted {r['accepted']} rejected {r['rejected']} unknown {r['unknown']}  "
        f"elapsed {st['elapsed_s']}s" + (f"  STOPPING ({st['stopping']})" if st["stopping"] else "")
    )
    rows = [
        f"  {n:<13} pid {a['pid'] or '-':<8} {'up' if a['alive'] else 'down':<5} "
        f"starts {a['starts']}  rss {a.get('rss_bytes', 0) // 1048576} MiB  "
        f"cpu {a.get('cpu_percent', 0):.0f}%"
        for n, a in st["actors"].items()
    ]
    return "\n".join([head, *rows])
