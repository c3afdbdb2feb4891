"""Matrix expansion: a fleet file becomes a list of session plans, each checked as a profile.

The cells are every combination of the matrix's values (the first key varies slowest);
``sessions`` sessions take the cells in turn (session i runs cell i mod cells, its
``repeat`` is i div cells). Each distinct cell's effective profile is loaded with the
profile loader before anything starts, so a bad value is refused naming the fleet file and
the matrix key. A session that talks to an outside game (``game.builtin: false``) is tied
to that game: its ``game`` is the base URL, and on Ray it declares the custom resource
``resource`` (one unit per game machine, so one game never gets two sessions).

The fleet file's ``prices`` (model name -> price) become ``model.price`` of every session whose
``model.model`` has an entry, checked by the profile loader like any other value; an entry
no session uses is refused, naming it. Each plan keeps the model and the STS2 character its
profile names (``model``, ``character``): a results row falls back on them for a session that
left no journal to read them from.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import re
import urllib.parse
from typing import Any

from supervisor import profile as prof

from .errors import FleetFileError
from .layout import slot_name
from .spec import FleetSpec

GAME_RESOURCE_PREFIX = "gamerig_game_"


@dataclasses.dataclass(frozen=True)
class SessionPlan:
    index: int
    slot: str  # the slot directory's name under the fleet root
    cell: dict[str, Any]  # matrix key -> this session's value
    cell_id: str  # "game.seed=1 policy.module=sts2" ("-" without a matrix)
    repeat: int  # how many earlier sessions ran the same cell
    profile: str  # the base profile, absolute
    overrides: list[str]  # --set KEY=VALUE for this session (fleet set, then the cell)
    game: str | None  # the outside game's base URL, when the session needs one
    resource: str | None  # its Ray custom resource name
    heartbeat_s: float  # the session's supervisor.heartbeat_s (see ray_backend)
    model: str | None = None  # its profile's model.model, when a model is configured
    character: str | None = None  # its profile's policy.settings.character (STS2), if set

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> SessionPlan:
        return cls(**data)


def cells(spec: FleetSpec) -> list[dict[str, Any]]:
    keys = list(spec.matrix)
    return [dict(zip(keys, combo)) for combo in itertools.product(*(spec.matrix[k] for k in keys))]


def cell_id(cell: dict[str, Any]) -> str:
    return " ".join(f"{k}={_text(v)}" for k, v in cell.items()) or "-"


def expand(spec: FleetSpec) -> list[SessionPlan]:
    """Every session of the fleet, in order; raises ``FleetFileError`` for a bad cell."""
    all_cells = cells(spec)
    checked = [_check_cell(spec, c) for c in all_cells]
    used = {c.model_name for c in checked}
    for name in spec.prices:
        if name not in used:
            raise FleetFileError(
                spec.path,
                f"prices.{name}",
                f"no session of this fleet uses model {name!r}"
                + (f" (its sessions use {', '.join(repr(m) for m in sorted(used - {None}))})" if used - {None} else ""),
            )
    plans = []
    for i in range(spec.sessions):
        k = i % len(all_cells)
        c = checked[k]
        plans.append(
            SessionPlan(
                index=i,
                slot=slot_name(i),
                cell=all_cells[k],
                cell_id=cell_id(all_cells[k]),
                repeat=i // len(all_cells),
                profile=spec.profile,
                overrides=c.overrides,
                game=c.game,
                resource=game_resource(c.game) if c.game else None,
                heartbeat_s=c.heartbeat_s,
                model=c.model,
                character=c.character,
            )
        )
    return plans


def game_resource(base_url: str) -> str:
    """The Ray custom resource of one game machine: ``gamerig_game_<host>_<port>``."""
    netloc = urllib.parse.urlparse(base_url).netloc or base_url
    return GAME_RESOURCE_PREFIX + re.sub(r"[^A-Za-z0-9]+", "_", netloc).strip("_")


@dataclasses.dataclass(frozen=True)
class _Checked:
    overrides: list[str]
    game: str | None
    heartbeat_s: float
    model_name: str | None  # model.model, configured or not (what ``prices`` keys name)
    model: str | None  # model.model when a model is configured (a server or a replay)
    character: str | None


def _check_cell(spec: FleetSpec, cell: dict[str, Any]) -> _Checked:
    overrides = [_override(spec.path, "set", k, v) for k, v in spec.sets.items()]
    overrides += [_override(spec.path, "matrix", k, v) for k, v in cell.items()]
    effective = _load(spec, cell, overrides, None)
    name = effective["model"].get("model")
    price = spec.prices.get(name) if isinstance(name, str) else None
    if price is not None:
        given = [
            f"{section}.{k}"
            for section, keys in (("set", spec.sets), ("matrix", cell))
            for k in keys
            if k == "model.price" or k.startswith("model.price.")
        ]
        if given:
            raise FleetFileError(
                spec.path, f"prices.{name}", f"{given[0]} prices the same sessions (cell {cell_id(cell)}); keep one"
            )
        overrides.append(_override(spec.path, f"prices.{name}", "model.price", {"model": name, **price}))
        effective = _load(spec, cell, overrides, name)
    game = effective["game"]
    url = None
    if game["backend"] == "http" and not game["builtin"]:
        url = game["base_url"].rstrip("/")
    model = effective["model"]
    configured = model.get("base_url") is not None or model.get("replay") is not None
    settings = effective["policy"].get("settings") if isinstance(effective["policy"].get("settings"), dict) else {}
    character = settings.get("character") if game["backend"] != "pyboy" else None
    return _Checked(
        overrides,
        url,
        float(effective["supervisor"]["heartbeat_s"]),
        name if isinstance(name, str) else None,
        name if configured and isinstance(name, str) else None,
        character if isinstance(character, str) and character else None,
    )


def _load(spec: FleetSpec, cell: dict[str, Any], overrides: list[str], priced: str | None) -> dict:
    """The cell's effective profile; a problem is a ``FleetFileError`` naming the fleet file's key
    that set the value (``priced``: the model whose ``prices`` entry set ``model.price``)."""
    try:
        return prof.load(spec.profile, overrides)
    except prof.ProfileError as exc:
        if priced is not None and exc.key and (exc.key == "model.price" or exc.key.startswith("model.price.")):
            key = f"prices.{priced}" + exc.key[len("model.price") :]
        elif exc.key in cell:
            key = f"matrix.{exc.key} (cell {cell_id(cell)})"
        elif exc.key in spec.sets:
            key = f"set.{exc.key}"
        else:
            key = f"profile ({spec.profile})" + (f": {exc.key}" if exc.key else "")
        raise FleetFileError(spec.path, key, exc.problem) from None


def _override(where: str, section: str, key: str, value: Any) -> str:
    try:
        return f"{key}={json.dumps(value)}"
    except (TypeError, ValueError):
        raise FleetFileError(
            where, f"{section}.{key}", f"{value!r}: expected a string, number, boolean, list or mapping"
        ) from None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)
