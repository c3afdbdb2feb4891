"""Run many sessions from one fleet file, locally or on a Ray cluster (docs/fleet.md).

Example:
  supervisor fleet start run/fleets/demo-matrix.yaml
  supervisor fleet start run/fleets/demo-matrix.yaml --concurrency 4
  supervisor fleet start run/fleets/demo-matrix.yaml --ray-address auto
  supervisor fleet start --resume FLEET_ROOT     (after its driver died: see docs/fleet.md)
  supervisor fleet status                 (or: supervisor fleet status FLEET_ROOT --json; a fleet
                                          whose driver died is "interrupted", with its resume command)
  supervisor fleet stop                   (every session gets SIGTERM and finalizes)
  supervisor fleet report [FLEET_ROOT]    (a table per matrix cell, and per model when the fleet used
                                          several: runs, wins, tokens, cost, cost per run and per win;
                                          --json for the rows; default: the running fleet, else the
                                          newest under run/capture/fleets)
  supervisor fleet report FLEET_ROOT --compare model.model
                                          (two arms of a matrix key: paired by seed when they
                                          played the same seeds, else unpaired; KEY=A,B picks two
                                          of several values)
  supervisor capture verify FLEET_ROOT    (every session of the fleet)

Ctrl-C or SIGTERM to ``fleet start`` interrupts the fleet: its running sessions stop at once
and it prints the command that finishes it (``--resume``); ``fleet stop`` ends it for good.

Exit codes of start: 0 every session ended normally (or was stopped on request), 1 some
session failed, timed out or needs review, 2 a bad fleet file or arguments, a fleet whose
driver still runs, or Ray unavailable (``--ray-address`` without Ray installed, unreachable,
or missing a resource), 130 / 143 interrupted by SIGINT / SIGTERM (finish it with --resume).
"""

from __future__ import annotations

import argparse
import sys

from supervisor.fleet import compare, control, driver
from supervisor.fleet.errors import FleetError, NotAFleet
from supervisor.fleet.report import cell_rows, model_groups, table
from supervisor.fleet.results import read_fleet, read_rows, totals

from .base import Command, emit

RUNTIME_HELP = "where running fleets publish their records (default: run/runtime)"


class Fleet(Command):
    name = "fleet"

    def add_arguments(self, p) -> None:
        sub = p.add_subparsers(dest="fleet_command", metavar="SUBCOMMAND")
        sub.required = True
        s = sub.add_parser("start", help="run every session of a fleet file; prints a live fleet line")
        s.add_argument("fleet_file", metavar="FLEET.yaml", nargs="?")
        s.add_argument(
            "--resume",
            metavar="FLEET_ROOT",
            help="finish a fleet whose driver died: wait for its sessions still stopping, keep "
            "those that ended, run again those it stopped or cut short with no action in "
            "flight and those never started; one that may have had an action in flight "
            "needs_review",
        )
        s.add_argument(
            "--concurrency",
            type=_positive,
            metavar="N",
            help="sessions at once (default: from CPUs and memory; on Ray: all, as resources allow)",
        )
        s.add_argument(
            "--ray-address",
            metavar="ADDR|auto",
            help="run on this Ray cluster, each session a Ray task (needs gamerig[ray])",
        )
        s.add_argument("--fleet-root", metavar="DIR", help="use this new directory as the fleet root")
        s.add_argument("--runtime-dir", default="run/runtime", help=RUNTIME_HELP)
        s.add_argument(
            "--progress",
            choices=("auto", "line", "plain", "off"),
            default="auto",
            help="the live fleet line: redrawn, a line every 5 s, or none",
        )
        for name, text in (
            ("status", "how many sessions of a fleet are done, running, failed"),
            ("stop", "stop every session of a fleet (SIGTERM; each one finalizes)"),
            ("report", "a table per matrix cell (and per model) of a fleet's results: wins, tokens, cost"),
        ):
            q = sub.add_parser(name, help=text)
            q.add_argument("root", nargs="?", metavar="FLEET_ROOT")
            if name == "report":
                q.add_argument(
                    "--compare",
                    metavar="KEY[=A,B]",
                    help="compare two arms of a matrix key (paired by seed where they can be)",
                )
                q.add_argument(
                    "--fleets",
                    default=control.DEFAULT_FLEETS,
                    metavar="DIR",
                    help="without FLEET_ROOT and no fleet running: the newest fleet under DIR "
                    f"(default: {control.DEFAULT_FLEETS})",
                )
            q.add_argument("--runtime-dir", default="run/runtime", help=RUNTIME_HELP)
            q.add_argument("--json", action="store_true", help="machine-readable output")
            if name == "stop":
                q.add_argument(
                    "--timeout",
                    type=float,
                    default=120.0,
                    help="seconds to wait for the sessions to finalize (default 120)",
                )

    def run(self, args) -> int:
        try:
            return getattr(self, "_" + args.fleet_command)(args)
        except FleetError as exc:
            sys.stderr.write(f"error: {exc}\n")
            return 2

    def _start(self, args) -> int:
        if (args.fleet_file is None) == (args.resume is None):
            sys.stderr.write("error: fleet start takes a FLEET.yaml to start, or --resume FLEET_ROOT (not both)\n")
            return 2
        if args.resume and args.fleet_root:
            sys.stderr.write("error: --fleet-root is for a new fleet; --resume names the fleet root itself\n")
            return 2
        try:
            return driver.start(
                args.fleet_file,
                concurrency=args.concurrency,
                ray_address=args.ray_address,
                root=args.fleet_root,
                runtime_dir=args.runtime_dir,
                progress=args.progress,
                resume=args.resume,
            )
        except KeyboardInterrupt:  # before any session started (a resume taking over)
            sys.stderr.write("interrupted before any session started\n")
            return 130

    def _status(self, args) -> int:
        roots = (
            [control.pick_root(args.root, args.runtime_dir)]
            if args.root
            else [r["root"] for r in control.running_fleets(args.runtime_dir)]
            + control.interrupted_fleets(args.runtime_dir)
        )
        out = [control.status(r) for r in roots]
        lines = [_status_line(s) for s in out] or ["no running fleet"]
        emit(args, {"fleets": out}, "\n".join(lines))
        return 0

    def _stop(self, args) -> int:
        root = control.pick_root(args.root, args.runtime_dir)
        pids = control.request_stop(root)
        done = control.wait_stopped(root, args.timeout)
        st = control.status(root)
        emit(
            args,
            {"root": root, "signalled": pids, "stopped": done, "status": st},
            f"stop requested: SIGTERM to {len(pids)} running session(s) here\n"
            + _status_line(st)
            + ("" if done else f"\nstill running after {args.timeout:.0f}s"),
        )
        return 0 if done else 1

    def _report(self, args) -> int:
        if args.root or control.running_fleets(args.runtime_dir):
            root = control.pick_root(args.root, args.runtime_dir)
        else:  # none named and none running: the newest fleet, as a user means it
            root = control.newest_root(args.fleets)
            if root is None:
                raise NotAFleet(args.fleets, "no fleet root here and no running fleet; name a fleet root")
            sys.stderr.write(f"newest fleet: {root}\n")
        rows = read_rows(root)
        fleet = read_fleet(root)
        compared = _compare(args.compare, rows, fleet) if args.compare else None
        key, models = model_groups(rows)
        st = control.status(root)
        text = table(rows) + (f"\n{_interrupted(st)}" if st["resume_command"] else "")
        if compared is not None:
            text += "\n\n" + "\n".join(compare.lines(compared))
        emit(
            args,
            {
                "fleet": fleet,
                "cells": cell_rows(rows),
                "model_key": key,
                "models": models,
                "totals": totals(rows),
                "rows": rows,
                "state": st["state"],
                "resume_command": st["resume_command"],
                "compare": compared,
            },
            text,
        )
        return 0


def _compare(spec: str, rows: list[dict], fleet: dict) -> dict:
    """``--compare KEY`` (a matrix key with two values) or ``KEY=A,B``; a bad one is a
    ``FleetError`` naming it."""
    matrix = list((fleet or {}).get("matrix") or {})
    key, _, picked = spec.partition("=")
    if key not in matrix:
        raise FleetError(
            f"--compare {spec}: {key!r} is not a matrix key of this fleet "
            f"(its matrix keys: {', '.join(matrix) or 'none'})"
        )
    values = compare.arm_values(rows, key)
    arms = [v.strip() for v in picked.split(",")] if picked else values
    if len(arms) != 2:
        raise FleetError(
            f"--compare {spec}: name two values to compare as {key}=A,B "
            f"({key} takes {len(values)} values here: {', '.join(values)})"
        )
    try:
        return compare.compare(rows, key, arms[0], arms[1], matrix)
    except compare.CompareError as exc:
        raise FleetError(f"--compare {spec}: {exc}") from None


def _status_line(st: dict) -> str:
    o = st["outcomes"]
    return (
        f"{st['name']} ({st['backend']}, {st['state']}): done {st['done']}/{st['sessions']}  "
        f"running here {st['running_here']}  ok {o['ok']}  failed {o['failed'] + o['timed_out']}  "
        f"needs review {o['needs_review']}  stopped {o['stopped'] + o['not_run']}  steps {st['steps']}"
        f"{'  (stop requested)' if st['stop_requested'] else ''}\n  {st['root']}"
        + (f"\n  {_interrupted(st)}" if st["resume_command"] else "")
    )


def _interrupted(st: dict) -> str:
    return (
        f"its driver (pid {st['driver_pid']} on {st['driver_host']}) is gone with {st['done']} of "
        f"{st['sessions']} sessions done; finish it with: {st['resume_command']}"
    )


def _positive(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {n}")
    return n
