"""The viewer's ``Host`` check, asked over raw HTTP on a real ``supervisor view`` process: the
request line and headers are written byte for byte, so the ``Host`` header is exactly what a
DNS-rebinding page's browser would send (a foreign name with the viewer's own port), or absent.

Every refused request is paired with the same request under an accepted ``Host``, so a 403
can only come from the name."""

from __future__ import annotations

import socket

import pytest

from .helpers import Viewer, run_session

PATH = "/api/sessions"


@pytest.fixture(scope="module")
def capture(tmp_path_factory) -> str:
    """A capture root holding one session against the built-in game."""
    base = tmp_path_factory.mktemp("host-check")
    run_session(str(base))
    return str(base / "capture")


def ask(port: int, host: str | None, path: str = PATH) -> tuple[int, bytes]:
    """One ``GET`` to 127.0.0.1:``port`` with exactly this ``Host`` header (none when None):
    (status, body)."""
    head = f"GET {path} HTTP/1.1\r\n" + (f"Host: {host}\r\n" if host is not None else "") + "Connection: close\r\n\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(head.encode("latin-1"))
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    status_line, _, rest = data.partition(b"\r\n")
    _headers, _, body = rest.partition(b"\r\n\r\n")
    return int(status_line.split()[1]), body


def port_of(v: Viewer) -> int:
    return int(v.url.rstrip("/").rsplit(":", 1)[1])


def test_a_foreign_name_on_the_viewers_own_port_and_a_missing_host_are_refused(capture):
    v = Viewer(capture)
    try:
        port = port_of(v)
        status, body = ask(port, f"127.0.0.1:{port}")
        assert status == 200 and b"sessions" in body, (status, body[:300])
        assert ask(port, f"localhost:{port}")[0] == 200
        for host in (
            f"evil.example:{port}",
            "evil.example",
            f"EVIL.example:{port}",
            f"127.0.0.1.evil.example:{port}",
            None,
        ):
            for path in (PATH, "/"):
                status, body = ask(port, host, path)
                assert status == 403 and body.startswith(b"refused"), (host, path, status, body[:300])
    finally:
        v.close()


def test_a_name_given_with_allow_host_is_answered_and_no_other(capture):
    v = Viewer(capture, args=("--allow-host", "viewer.example"))
    try:
        port = port_of(v)
        for host in (f"viewer.example:{port}", "viewer.example", f"127.0.0.1:{port}"):
            status, body = ask(port, host)
            assert status == 200 and b"sessions" in body, (host, status, body[:300])
        for host in (f"evil.example:{port}", f"other.viewer.example:{port}", None):
            assert ask(port, host)[0] == 403, host
    finally:
        v.close()
    plain = Viewer(capture)  # without the flag the same name is foreign
    try:
        assert ask(port_of(plain), f"viewer.example:{port_of(plain)}")[0] == 403
    finally:
        plain.close()
