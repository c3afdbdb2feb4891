"""Profiles: YAML files that describe a session. Loading, defaults, ``--set`` overrides and
validation with errors that name the key and the problem.

The keys listed in ``docs/profiles.md`` as public (``game.backend``, ``game.base_url``,
``game.builtin``, ``game.rom``, ``game.seed``, ``policy.module``, ``capture.root``,
``session.*``, ``model.*``, ``actors.<name>.restart|max_restarts|period_s``) keep their names.
"""

from __future__ import annotations

import copy
import difflib
import math
import os
from typing import Any

import yaml

from actors.game_address import parse_base_url
from actors.model_client.errors import ConfigError
from actors.model_client.settings import ModelSettings
from actors.policy import llm as llm_policy
from actors.policy import pyboy_llm as pyboy_agent
from actors.policy.agent import AgentSettingError

ANY = object()
NUM = (int, float)
#: agent policies (``policy.module``) and their settings' check (``_check_agent``)
AGENT_SETTINGS = {"llm": llm_policy.check_settings, "pyboy_llm": pyboy_agent.check_settings}


NO_SUCH_PROFILE = "no such profile file"


class ProfileError(Exception):
    """A profile that cannot be used; the message names the file, the key and the problem."""

    def __init__(self, where: str, key: str, problem: str):
        super().__init__(f"{where}: {key}: {problem}" if key else f"{where}: {problem}")
        self.where, self.key, self.problem = where, key, problem


def _actor(restart: str = "permanent", max_restarts: int = 3, period_s: float = 30.0) -> dict:
    return {
        "restart": (str, restart, ("permanent", "transient", "temporary")),
        "max_restarts": (int, max_restarts, None),
        "period_s": (NUM, period_s, None),
        "module": ((str, type(None)), None, None),
        "args": (list, [], None),
    }


ACTOR_NAMES = ("recorder", "game", "model_client", "policy", "actuator", "observer", "emulator")

#: key -> (type(s), default, allowed values or None); nested dicts are sections.
SCHEMA: dict[str, Any] = {
    "name": ((str, type(None)), None, None),
    "description": ((str, type(None)), None, None),
    "game": {
        "backend": (str, "http", ("http", "pyboy")),
        "base_url": ((str, type(None)), None, None),
        "builtin": (bool, True, None),
        "seed": (int, 1, None),
        "rom": ((str, type(None)), None, None),
        "start_checkpoint": ((str, type(None)), None, None),  # pyboy: a .ckpt file or a recording dir
        "battery_save": ((str, type(None)), None, None),  # pyboy: battery RAM (.ram) to start from
        "battery_mode": (str, "load", ("load", "load-and-keep")),
        "knobs": (dict, {}, None),
        "timeout_s": (NUM, 5.0, None),
        "poll_interval_s": (NUM, 0.05, None),
        "identity": (bool, True, None),
    },
    "policy": {
        "module": (str, "sts2", None),
        "settings": (dict, {}, None),
    },
    "model": "MODEL",  # validated by actors.model_client.config (see docs/models.md)
    "capture": {
        "root": (str, "run/capture", None),
        "outcome_dir": ((str, type(None)), None, None),
    },
    "session": {
        "max_steps": ((int, type(None)), None, None),
        "dry_run": (bool, False, None),
        "stop_on_run_end": (bool, True, None),
        "stuck_seconds": (NUM, 20.0, None),
    },
    "supervisor": {
        "heartbeat_s": (NUM, 0.5, None),
        "strategy": (str, "one_for_one", ("one_for_one", "rest_for_one", "one_for_all")),
        "runtime_dir": (str, "run/runtime", None),
        "stop_timeout_s": (NUM, 5.0, None),
        "startup_timeout_s": (NUM, 20.0, None),
        "progress": (str, "auto", ("auto", "line", "plain", "off")),
        "dedicated_cpu": ((str, type(None)), None, None),  # an actor that gets a CPU to itself
        "taps": {  # attached taps (docs/attach.md)
            "keepalive_s": (NUM, 2.0, None),  # a tap silent for 4 of these is declared lost
        },
        "tcp": {  # tcp:// endpoints for taps on another host, always CURVE (docs/attach.md)
            "enabled": (bool, False, None),
            "host": (str, "127.0.0.1", None),
            "control_port": (int, 0, None),  # 0: a free port, published in the runtime record
            "stream_port": (int, 0, None),
            "server_key_file": ((str, type(None)), None, None),  # ZeroMQ secret cert; None: per session
            "clients_dir": ((str, type(None)), None, None),  # authorized client public certs
        },
    },
    "recorder": {
        "inject_failure": ((dict, type(None)), None, None),
    },
    "emulator": {  # the pyboy backend (see docs/emulator.md); checked again by the actor
        "record": (bool, True, None),
        "sound": (bool, False, None),
        "cgb": ((bool, type(None)), None, None),
        "checkpoint_every_frames": ((int, type(None)), 3600, None),
        "frames_per_step": ((int, type(None)), None, None),
        "samples_per_step": (int, 0, None),
        "memory_regions": (dict, {}, None),
        "score": ((dict, type(None)), None, None),  # values, score, milestones, game_over, wrapper
        "recording_limits": (dict, {}, None),
        "fsync_inputs": (bool, False, None),
        "step_timeout_s": (NUM, 5.0, None),
    },
    "actors": "ACTORS",
}

DEFAULT_ACTORS = ["recorder", "game", "model_client", "policy", "actuator", "observer"]


def _check_leaf(where: str, key: str, spec: tuple, value: Any) -> Any:
    types, _default, allowed = spec
    if isinstance(value, bool) and allowed and {"on", "off"} & set(allowed):
        value = "on" if value else "off"  # YAML 1.1 reads a bare off/on as a boolean
    if types is NUM or (isinstance(types, tuple) and float in types):
        if isinstance(value, bool) or not isinstance(value, types):
            raise ProfileError(where, key, f"expected a number, got {value!r}")
        if isinstance(value, float) and not math.isfinite(value):
            raise ProfileError(where, key, f"expected a finite number, got {value!r}")
    elif types is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise ProfileError(where, key, f"expected a whole number, got {value!r}")
    elif not isinstance(value, types) or (
        bool not in _as_tuple(types) and isinstance(value, bool) and int in _as_tuple(types)
    ):
        names = " or ".join("null" if t is type(None) else t.__name__ for t in _as_tuple(types))
        raise ProfileError(where, key, f"expected {names}, got {value!r}")
    if allowed and value not in allowed:
        raise ProfileError(where, key, f"{value!r} is not one of {', '.join(allowed)}")
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0:
        raise ProfileError(where, key, f"must not be negative, got {value!r}")
    return value


def _as_tuple(t: Any) -> tuple:
    return t if isinstance(t, tuple) else (t,)


def _unknown(where: str, key: str, known: list[str]) -> ProfileError:
    hint = difflib.get_close_matches(key.rsplit(".", 1)[-1], known, n=1)
    extra = f" (did you mean {hint[0]!r}?)" if hint else f" (known: {', '.join(known)})"
    return ProfileError(where, key, "unknown key" + extra)


def _validate_section(where: str, prefix: str, schema: dict, data: Any) -> dict:
    if not isinstance(data, dict):
        raise ProfileError(where, prefix.rstrip(".") or "<top>", f"expected a mapping, got {data!r}")
    out: dict[str, Any] = {}
    for key in data:
        if not isinstance(key, str) or key not in schema:
            raise _unknown(where, f"{prefix}{key}", list(schema))
    for key, spec in schema.items():
        full = f"{prefix}{key}"
        if spec == "ACTORS":
            out[key] = _validate_actors(where, data.get(key))
        elif spec == "MODEL":
            out[key] = _validate_model(where, data.get(key))
        elif isinstance(spec, dict):
            out[key] = _validate_section(where, full + ".", spec, data.get(key) or {})
        elif key in data:
            out[key] = _check_leaf(where, full, spec, data[key])
        else:
            out[key] = copy.deepcopy(spec[1])
    return out


def _validate_actors(where: str, data: Any) -> dict:
    if data is None:
        data = {name: {} for name in DEFAULT_ACTORS}
    if not isinstance(data, dict) or not data:
        raise ProfileError(where, "actors", "expected a mapping of actor name to settings")
    out = {}
    for name, settings in data.items():
        if settings is not None and not isinstance(settings, dict):
            raise ProfileError(where, f"actors.{name}", f"expected a mapping, got {settings!r}")
        if not isinstance(name, str) or (name not in ACTOR_NAMES and not (settings or {}).get("module")):
            raise ProfileError(
                where,
                f"actors.{name}",
                f"unknown actor; built-in actors are {', '.join(ACTOR_NAMES)} (a user actor needs 'module')",
            )
        defaults = {"recorder": _actor(max_restarts=5), "model_client": _actor("transient")}
        out[name] = _validate_section(where, f"actors.{name}.", defaults.get(name, _actor()), settings or {})
    if next(iter(out)) != "recorder":
        raise ProfileError(where, "actors", "the recorder must be the first actor (it owns the capture)")
    return out


def _validate_model(where: str, data: Any) -> dict:
    """The ``model`` section: checked by the model client's own settings when a server or a
    replay capture is set (``model.replay`` is resolved to an absolute ``events.jsonl``)."""
    data = {} if data is None else data
    if not isinstance(data, dict):
        raise ProfileError(where, "model", f"expected a mapping, got {data!r}")
    out = {"base_url": None, "model": None, "api_key_env": None, "replay": None, **data}
    try:
        settings = ModelSettings.from_profile(out)
    except ConfigError as exc:
        raise ProfileError(where, f"model.{exc.key}" if exc.key else "model", exc.problem) from None
    if settings.replay is not None:
        out["replay"] = str(settings.replay)
    return out


def parse_override(text: str) -> tuple[str, Any]:
    if "=" not in text:
        raise ProfileError("--set", text, "expected dotted.key=value")
    key, raw = text.split("=", 1)
    try:
        value = yaml.safe_load(raw) if raw != "" else ""
    except yaml.YAMLError:
        value = raw
    return key.strip(), value


def apply_override(data: dict, key: str, value: Any) -> None:
    parts = key.split(".")
    node = data
    for i, part in enumerate(parts[:-1]):
        if node.get(part) is None:
            node[part] = {}
        if not isinstance(node[part], dict):
            raise ProfileError("--set", ".".join(parts[: i + 1]), "is not a section")
        node = node[part]
    node[parts[-1]] = value


def load(path: str, overrides: list[str] = (), extra: dict | None = None) -> dict:
    """Read, override and validate a profile; return the effective profile (all defaults)."""
    data = read_yaml(path)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ProfileError(path, "", "the profile must be a mapping at the top level")
    for text in overrides:
        key, value = parse_override(text)
        apply_override(data, key, value)
    for key, value in (extra or {}).items():
        apply_override(data, key, value)
    profile = _validate_section(path, "", SCHEMA, data)
    _cross_checks(path, profile)
    profile["name"] = profile["name"] or os.path.splitext(os.path.basename(path))[0]
    return profile


def read_yaml(path: str, error: type = ProfileError, what: str = "profile") -> Any:
    """The file's YAML document; every way it can fail is an ``error(path, "", problem)``
    (``ProfileError`` for a profile; the fleet loader passes its own)."""
    try:
        with open(path, encoding="utf-8") as fh:
            return yaml.safe_load(fh)
    except FileNotFoundError:
        raise error(path, "", NO_SUCH_PROFILE if what == "profile" else f"no such {what} file") from None
    except OSError as exc:  # a directory, no permission, ...
        raise error(path, "", f"cannot be read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise error(path, "", f"is not UTF-8 text (byte {exc.object[exc.start]:#04x} at offset {exc.start})") from None
    except RecursionError:
        raise error(path, "", f"nests too deeply to be a {what}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise error(path, "", f"not valid YAML{at}: {getattr(exc, 'problem', exc)}") from None


def _cross_checks(where: str, p: dict) -> None:
    game = p["game"]
    if game["backend"] == "http" and not game["builtin"] and not game["base_url"]:
        raise ProfileError(where, "game.base_url", "required when game.builtin is false")
    if not 0 < game["timeout_s"] <= 3600:
        raise ProfileError(
            where, "game.timeout_s", f"must be more than 0 and at most 3600 s, got {game['timeout_s']!r}"
        )
    if game["backend"] == "http" and game["base_url"]:
        try:
            parse_base_url(game["base_url"])
        except ValueError as exc:
            raise ProfileError(where, "game.base_url", str(exc)) from None
    if game["backend"] == "pyboy" and not game["rom"] and not game["builtin"]:
        raise ProfileError(where, "game.rom", "required for the pyboy backend unless game.builtin is true")
    if p["session"]["max_steps"] is not None and p["session"]["max_steps"] < 1:
        raise ProfileError(where, "session.max_steps", "must be at least 1")
    if p["supervisor"]["heartbeat_s"] < 0.05:
        raise ProfileError(where, "supervisor.heartbeat_s", "must be at least 0.05")
    _check_agent(where, p)
    dedicated = p["supervisor"]["dedicated_cpu"]
    if dedicated is not None and dedicated not in p["actors"]:
        raise ProfileError(
            where,
            "supervisor.dedicated_cpu",
            f"{dedicated!r} is not an actor of this profile ({', '.join(p['actors'])})",
        )


def _check_agent(where: str, p: dict) -> None:
    """An agent policy's settings (the llm policy's prompt template read and rendered) and its
    model; the Game Boy agent's also its backend, a vision model, the model-client actor and the
    recording its screenshots come from."""
    module = p["policy"]["module"]
    if module not in AGENT_SETTINGS:
        return
    if module == "pyboy_llm" and p["game"]["backend"] != "pyboy":
        raise ProfileError(
            where,
            "game.backend",
            "the pyboy_llm policy plays Game Boy cartridges: set "
            "game.backend: pyboy (policy.module: llm plays Slay the Spire 2)",
        )
    try:
        AGENT_SETTINGS[module](p["policy"]["settings"])
    except (AgentSettingError, ValueError) as exc:
        key, _, problem = str(exc).partition(": ")
        raise ProfileError(where, key, problem) from None
    model = p.get("model") or {}
    if not model.get("base_url") and not model.get("replay"):
        raise ProfileError(
            where,
            "model.base_url",
            f"the {module} policy needs a model to ask: set model.base_url "
            "(or model.replay to answer from a recorded session)",
        )
    if module != "pyboy_llm":
        return
    if not {**model, **(model.get("settings") or {})}.get("vision"):
        raise ProfileError(
            where,
            "model.vision",
            "the pyboy_llm policy shows the model the screen: set model.vision: true (with a vision-capable model)",
        )
    if "model_client" not in p["actors"]:
        raise ProfileError(
            where, "actors.model_client", "the pyboy_llm policy asks the model_client actor: add it to actors"
        )
    if not p["emulator"]["record"]:
        raise ProfileError(
            where,
            "emulator.record",
            "the pyboy_llm policy sends the model the frame the emulator records: keep emulator.record true",
        )


def get(profile: dict, dotted: str, default: Any = None) -> Any:
    node: Any = profile
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return default
        node = node[part]
    return node
