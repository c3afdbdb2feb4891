"""Attach a read-only tap to a running session: a snapshot, then the live journal stream.

Example:
  supervisor attach metrics-tap
  supervisor attach metrics-tap --prometheus 127.0.0.1:9464 --jsonl run/metrics.jsonl
  supervisor attach --module actors.taps.example_counter
  supervisor attach metrics-tap --tcp --record copy-of-the-runtime-record.json

The tap first gets the session's counters as of a sequence, then every later row in order
(no gap, no duplicate, also across reconnects). Several taps may attach at once; Ctrl-C
detaches and the session goes on. Taps are read-only: they cannot stop or steer the session.
The metrics tap redraws a dashboard on a terminal and prints plain lines otherwise.
See docs/attach.md.

Exit codes: 0 detached or the session ended, 1 could not attach or the session vanished,
2 bad arguments.
"""

from __future__ import annotations

import importlib
import signal
import sys
import threading

from actors.runtime.transport import RequestFailed
from actors.taps import metrics_view as mv
from actors.taps.connect import AttachError, access_from_record, read_record
from actors.taps.metrics import Metrics
from actors.taps.runtime import TapRunner

from .base import Command, add_runtime_dir, pick_session

BUILTIN = {"metrics-tap": "actors.taps.metrics:MetricsTap"}


class Attach(Command):
    name = "attach"

    def add_arguments(self, p) -> None:
        p.add_argument("tap", nargs="?", choices=sorted(BUILTIN), help="a built-in tap")
        p.add_argument(
            "--module", metavar="PKG.MOD[:CLASS]", help="your own tap: a module defining Tap (an AttachedTap subclass)"
        )
        add_runtime_dir(p)
        p.add_argument(
            "--record", metavar="FILE", help="a runtime record to use as is (e.g. a copy on another host, with --tcp)"
        )
        p.add_argument(
            "--tcp", action="store_true", help="connect over the session's tcp endpoints with CURVE (supervisor.tcp)"
        )
        p.add_argument(
            "--client-key",
            metavar="FILE",
            help="a ZeroMQ secret certificate to use instead of the session's client key",
        )
        g = p.add_argument_group("metrics-tap")
        g.add_argument("--prometheus", metavar="HOST:PORT", help="serve /metrics for Prometheus")
        g.add_argument("--jsonl", metavar="FILE", help="append a JSON sample every interval")
        g.add_argument(
            "--interval",
            type=float,
            default=2.0,
            metavar="S",
            help="seconds between plain lines and JSONL samples (default 2)",
        )
        g.add_argument("--plain", action="store_true", help="plain lines even on a terminal")

    def run(self, args) -> int:
        if bool(args.tap) == bool(args.module):
            sys.stderr.write("error: name a built-in tap (metrics-tap) or --module, not both\n")
            return 2
        try:
            rec = read_record(args.record) if args.record else pick_session(args)
            if rec is None:
                return 1
            access = access_from_record(rec, "tcp" if args.tcp else "ipc", args.client_key)
            stop = threading.Event()
            tap = self._make_tap(args, stop)
        except (AttachError, ImportError, AttributeError, ValueError, OSError) as exc:
            sys.stderr.write(f"error: {exc}\n")
            return 1
        old = {s: signal.signal(s, lambda *_: stop.set()) for s in (signal.SIGINT, signal.SIGTERM)}
        runner = TapRunner(tap, access, stop)
        try:
            reason = runner.run()
        except RequestFailed as exc:
            sys.stderr.write(f"error: {exc}\n")
            return 1
        finally:
            for s, h in old.items():
                signal.signal(s, h)
        sys.stderr.write(
            f"{runner.tap_id} detached: {reason}"
            + (f"; {runner.dropped} rows dropped" if runner.dropped else "")
            + "\n"
        )
        return 1 if reason == "session_gone" else 0

    def _make_tap(self, args, stop: threading.Event):
        target = BUILTIN.get(args.tap) or args.module
        mod_name, _, cls_name = target.partition(":")
        cls = getattr(importlib.import_module(mod_name), cls_name or "Tap")
        if args.tap != "metrics-tap":
            return cls()
        return _metrics_tap(cls, args, stop)


def _metrics_tap(cls, args, stop: threading.Event):
    metrics, outs = Metrics(), []
    if args.prometheus:
        host, _, port = args.prometheus.rpartition(":")
        prom = mv.Prometheus(metrics, host or "127.0.0.1", int(port))
        sys.stderr.write(f"prometheus: http://{prom.host}:{prom.port}/metrics\n")
        outs.append(prom)
    if args.jsonl:
        outs.append(mv.JsonlSink(args.jsonl, args.interval))
    if sys.stdout.isatty() and not args.plain:
        outs.append(mv.Dashboard())
    else:
        outs.append(mv.PlainLines(sys.stdout, args.interval, on_gone=stop.set))  # `| head`: detach
    return cls(outputs=outs, metrics=metrics)
