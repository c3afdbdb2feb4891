"""Shared bits of the command modules."""

from __future__ import annotations

import argparse
import json
import sys

import zmq

from actors.runtime.transport import Client, Counters, RequestFailed
from supervisor.rundir import find_sessions


class Command:
    name = ""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        pass

    def run(self, args: argparse.Namespace) -> int:
        raise NotImplementedError


def emit(args, data, human: str) -> None:
    if getattr(args, "json", False):
        json.dump(data, sys.stdout, indent=2, sort_keys=True, default=str)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(human + ("\n" if not human.endswith("\n") else ""))


def add_runtime_dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--runtime-dir",
        default=None,
        help="look only here for running sessions (default: ./run/runtime and every session "
        "of yours started from any folder)",
    )
    parser.add_argument("--session", help="session id (needed when several sessions run)")


def pick_session(args) -> dict | None:
    recs, looked = find_sessions(args.runtime_dir)
    if args.session:
        recs = [r for r in recs if r["session_id"].startswith(args.session)]
    if not recs:
        sys.stderr.write(
            "no running session found"
            + (f" matching {args.session!r}" if args.session else "")
            + f" (looked in {' and '.join(looked)})\n"
        )
        return None
    if len(recs) > 1:
        sys.stderr.write(
            "several sessions are running; pick one with --session:\n" + "".join(f"  {r['session_id']}\n" for r in recs)
        )
        return None
    return recs[0]


def control_request(rec: dict, body, deadline_s: float = 5.0):
    zctx = zmq.Context.instance()
    client = Client(zctx, rec["control"], session=rec["session_id"], sender="cli", counters=Counters())
    try:
        return client.request(body, deadline_s=deadline_s, try_s=deadline_s)
    finally:
        client.close()


__all__ = ["Command", "emit", "add_runtime_dir", "pick_session", "control_request", "RequestFailed"]
