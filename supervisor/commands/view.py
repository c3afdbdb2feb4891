"""See what happened: a read-only web app over captures, sessions and fleets.

  supervisor view [PATH ...] [--host 127.0.0.1] [--port N] [--open]
  supervisor view --bundle OUT PATH ...

PATH is a capture root, a session directory or a fleet root (default: run/capture). The
server prints its address and serves on loopback unless --host says otherwise; it only
reads: nothing is written into a capture, and no file outside the given paths is served.
Sessions still running appear and update within 2 s. --bundle writes the same pages as a
static folder (open OUT/index.html from disk, or serve it with any static server).

Exit codes: 0 stopped (Ctrl-C) or bundle written; 2 a PATH that is not a capture, a port
in use, or a bad --bundle folder.

Example:
  supervisor view run/capture --open
  supervisor view run/capture/fleets/demo-matrix-20260101T000000Z-abc123 --port 8765
  supervisor view --bundle report/ run/capture
"""

from __future__ import annotations

import sys
import webbrowser

from supervisor.capture.errors import NotACapture
from supervisor.view.bundle import DEFAULT_MAX_STEPS, BundleError, tty_progress, write
from supervisor.view.catalog import Catalog
from supervisor.view.server import ViewServer, is_loopback

from .base import Command


class View(Command):
    name = "view"

    def add_arguments(self, p) -> None:
        p.add_argument(
            "paths",
            nargs="*",
            metavar="PATH",
            help="capture roots, session directories or fleet roots (default: run/capture)",
        )
        p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
        p.add_argument("--port", type=int, default=8765, help="port (default: 8765; 0 picks a free one)")
        p.add_argument("--open", action="store_true", help="open the page in the default browser")
        p.add_argument(
            "--allow-host",
            action="append",
            default=[],
            metavar="NAME",
            help="also answer requests addressed to NAME (a host name the viewer is reached by)",
        )
        p.add_argument("--bundle", metavar="OUT", help="write the pages as a static folder OUT and exit")
        p.add_argument(
            "--bundle-max-steps",
            type=int,
            default=DEFAULT_MAX_STEPS,
            metavar="N",
            help=f"step details kept per session in a bundle (default: {DEFAULT_MAX_STEPS})",
        )

    def run(self, args) -> int:
        try:
            catalog = Catalog(args.paths or ["run/capture"])
        except NotACapture as exc:
            sys.stderr.write(f"error: {exc}\n")
            return 2
        if args.bundle:
            return self._bundle(args, catalog)
        try:
            server = ViewServer(catalog, args.host, args.port, args.allow_host)
        except OSError as exc:
            sys.stderr.write(f"error: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}\n")
            return 2
        if not is_loopback(args.host):
            sys.stderr.write(
                f"warning: listening on {args.host}: anyone who can reach this address can read these captures\n"
            )
        server.start_background()
        print(
            f"gamerig view: {server.url}  ({len(catalog.all_tracks())} sessions, {len(catalog.fleets)} fleets; "
            "Ctrl-C stops)",
            flush=True,
        )
        if args.open:
            webbrowser.open(server.url)
        try:
            server.serve_forever(poll_interval=0.2)
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()
        return 0

    def _bundle(self, args, catalog: Catalog) -> int:
        try:
            done = write(args.bundle, catalog=catalog, max_steps=args.bundle_max_steps, progress=tty_progress())
        except BundleError as exc:
            sys.stderr.write(f"\nerror: {exc}\n")
            return 2
        sys.stderr.write("\r\x1b[K" if sys.stderr.isatty() else "")
        print(
            f"bundle: {done['out']}/index.html  ({done['sessions']} sessions, {done['fleets']} fleets, "
            f"{done['answers']} answers, {done['frames']} frames, {done['bytes'] / 1e6:.1f} MB)"
        )
        return 0
