"""Run a session in the foreground with a live progress line.

Example:
  supervisor start run/profiles/demo.yaml
  supervisor start run/profiles/demo.yaml --max-steps 50 --dry-run
  supervisor start run/profiles/demo.yaml --set game.builtin=false \\
      --set game.base_url=http://127.0.0.1:15526 --set capture.root=/data/capture

Exit codes: 0 the session ended normally (run ended, max steps, stop command), 1 it failed
(startup failure, restart intensity exceeded, an actor gone, journal failure, stuck),
2 bad profile or arguments (for pyboy also a missing or broken game.rom,
game.start_checkpoint or game.battery_save, as ``supervisor validate`` reports it), or a
system gamerig cannot run on (docs/platforms.md), 130 SIGINT, 143 SIGTERM.
"""

from __future__ import annotations

import sys

from supervisor import profile as prof
from supervisor.platform import PlatformUnsupported, note, require_supported
from supervisor.session import Supervisor

from .base import Command
from .validate import check_emulator_inputs


class Start(Command):
    name = "start"

    def add_arguments(self, p) -> None:
        p.add_argument("profile", help="a YAML profile, e.g. run/profiles/demo.yaml")
        p.add_argument(
            "--set",
            dest="overrides",
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help="override any profile value by dotted key (repeatable); the value is YAML",
        )
        p.add_argument("--dry-run", action="store_true", help="record proposals without acting")
        p.add_argument(
            "--max-steps",
            type=int,
            metavar="N",
            help="stop after N steps (observations; decisions when the policy pipelines its steps)",
        )

    def run(self, args) -> int:
        extra = {}
        if args.dry_run:
            extra["session.dry_run"] = True
        if args.max_steps is not None:
            extra["session.max_steps"] = args.max_steps
        try:
            require_supported()
        except PlatformUnsupported as exc:
            sys.stderr.write(f"error: {exc}\n")
            return 2
        untested = note()
        if untested:
            sys.stderr.write(untested + "\n")
        try:
            profile = prof.load(args.profile, args.overrides, extra)
            check_emulator_inputs(profile, args.profile)  # a missing/broken ROM: refused before any process
        except prof.ProfileError as exc:
            sys.stderr.write(f"error: {exc}\n")
            if exc.problem == prof.NO_SUCH_PROFILE:
                sys.stderr.write("(supervisor init writes starting profiles into a folder: run/profiles/*.yaml)\n")
            return 2
        sup = Supervisor(profile)
        sys.stderr.write(f"session {sup.session_id}\ncapture {sup.session_dir}\n")
        code = sup.run()
        s = sup.summary
        if s:
            r = s["action_results"]
            decisions = sum(s.get("dispositions", {}).values())
            steps = (
                f"{decisions} steps ({s['steps']} observations: pipelined)"
                if decisions > s["steps"]
                else f"{s['steps']} steps"
            )
            sys.stderr.write(
                f"session ended: {s['reason']} (exit {code}); {steps}, "
                f"{r['accepted']} accepted, {r['rejected']} rejected, {r['unknown']} unknown\n"
                f"journal: {sup.session_dir}/events.jsonl\n"
            )
        else:
            sys.stderr.write(
                f"session ended: {sup.stop_reason} (exit {code}); the session "
                "summary could not be written — the journal is incomplete evidence\n"
            )
        model = sup.watch.model
        if model.asked:  # with tokens and cost, per run when runs ended
            sys.stderr.write(model.line(runs=len(sup.watch.facts.runs)) + "\n")
            if model.never_answered:
                sys.stderr.write(
                    "warning: the model never answered: every decision it was asked for was made "
                    "by the policy's heuristic instead. Is the server at model.base_url running? "
                    "(model.on_unreachable: stop ends such a session; docs/models.md)\n"
                )
        if sup.stop_detail:
            sys.stderr.write(f"detail: {sup.stop_detail}\n")
        if (s or {}).get("reason", sup.stop_reason) == "stuck":  # the last line says where
            sys.stderr.write(sup.watch.stuck_line() + "\n")
        return code
