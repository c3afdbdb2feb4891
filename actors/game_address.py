"""A game's address (``game.base_url``) taken apart and checked: ``parse_base_url``.

Light on purpose: the profile check (``supervisor.profile``) calls it on every ``supervisor``
command, without loading the HTTP client that uses it (``actors.sts2mcp``).
"""

from __future__ import annotations

import dataclasses
import re
import urllib.parse

UNSAFE = re.compile(r"[\x00-\x20\x7f]")  # in a host or path, http.client refuses the request


@dataclasses.dataclass(frozen=True)
class BaseUrl:
    scheme: str
    host: str
    port: int
    prefix: str  # a path the API sits under ("" for the mod's own address)


def parse_base_url(url: str) -> BaseUrl:
    """``http://host:port[/prefix]`` (or https); ``ValueError`` naming what is wrong."""
    try:
        parts = urllib.parse.urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"{url!r} is not a valid address ({exc})") from None
    if parts.scheme not in ("http", "https"):
        raise ValueError(f"{url!r} is not an http:// or https:// address")
    if not parts.hostname:
        raise ValueError(f"{url!r} names no host")
    if port == 0:
        raise ValueError(f"{url!r}: port 0 is not an address to connect to")
    if parts.query or parts.fragment or parts.username is not None or parts.password is not None:
        raise ValueError(f"{url!r}: a game address has no query, fragment or credentials")
    if UNSAFE.search(parts.hostname) or UNSAFE.search(parts.path):
        raise ValueError(f"{url!r}: a space or control character in the host or the path")
    return BaseUrl(
        parts.scheme,
        parts.hostname,
        port if port is not None else (443 if parts.scheme == "https" else 80),
        parts.path.rstrip("/"),
    )
