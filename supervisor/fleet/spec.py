"""Fleet files: loading and validation, with errors that name the file, the key and the problem.

A fleet file (``run/fleets/*.yaml``, documented in docs/fleet.md) names a base profile, the
``--set`` values every session gets, a matrix of profile keys whose combinations are the
cells, how many sessions to run, where fleet roots go, and the local and Ray settings.
Paths in a fleet file are relative to the fleet file's own directory.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
from typing import Any

from supervisor.profile import read_yaml

from .errors import FleetFileError

#: Profile keys the fleet sets itself for every session (each session's own capture root,
#: runtime directory and progress lines), so a fleet file may not set them.
FLEET_OWNED = ("capture.root", "supervisor.runtime_dir", "supervisor.progress")
KEYS = (
    "name",
    "description",
    "profile",
    "set",
    "matrix",
    "sessions",
    "capture_root",
    "concurrency",
    "session_timeout_s",
    "ray",
    "prices",
)
RAY_KEYS = {"num_cpus": 1.0, "memory_mb": None, "node_retries": 1}


@dataclasses.dataclass(frozen=True)
class RaySettings:
    num_cpus: float = 1.0  # CPUs each session declares
    memory_mb: int | None = None  # memory each session declares (Ray's logical resource)
    node_retries: int = 1  # re-runs of a session lost with its node, no action in flight


@dataclasses.dataclass(frozen=True)
class FleetSpec:
    path: str  # the fleet file, absolute
    name: str
    description: str | None
    profile: str  # the base profile, absolute
    sets: dict[str, Any]  # dotted profile key -> value, for every session
    matrix: dict[str, list]  # dotted profile key -> values (file order)
    sessions: int
    capture_root: str  # absolute; fleet roots are made under it
    capture_root_given: str  # as the file says it (or the default)
    concurrency: int | None  # None: derived from cores and memory
    session_timeout_s: float | None
    ray: RaySettings
    #: model name -> its price (``model.price`` without ``model``), set on every session of
    #: that ``model.model`` (``matrix.expand``); the profile loader checks the figures
    prices: dict[str, dict] = dataclasses.field(default_factory=dict)

    @property
    def cells(self) -> int:
        n = 1
        for values in self.matrix.values():
            n *= len(values)
        return n


def load(path: str) -> FleetSpec:
    """Read and check a fleet file; raises ``FleetFileError``."""
    data = _read(path)
    where = path
    for key in data:
        if key not in KEYS:
            raise _unknown(where, str(key), KEYS)
    here = os.path.dirname(os.path.abspath(path))
    profile = _path(where, "profile", data.get("profile"), here, must_exist=True)
    sets = _sets(where, data.get("set"))
    matrix = _matrix(where, data.get("matrix"))
    cells = 1
    for values in matrix.values():
        cells *= len(values)
    sessions = _count(where, "sessions", data.get("sessions", cells), minimum=1)
    if sessions < cells:
        raise FleetFileError(
            where,
            "sessions",
            f"{sessions} is fewer than the {cells} matrix cells; every cell needs at least one session",
        )
    concurrency = data.get("concurrency", "auto")
    if concurrency != "auto":
        concurrency = _count(where, "concurrency", concurrency, minimum=1)
    return FleetSpec(
        path=os.path.abspath(path),
        name=_name(where, data.get("name"), path),
        description=data.get("description"),
        profile=profile,
        sets=sets,
        matrix=matrix,
        sessions=sessions,
        capture_root=_path(where, "capture_root", data.get("capture_root", "../capture/fleets"), here),
        capture_root_given=str(data.get("capture_root", "../capture/fleets")),
        concurrency=None if concurrency == "auto" else concurrency,
        session_timeout_s=_seconds(where, "session_timeout_s", data.get("session_timeout_s")),
        ray=_ray(where, data.get("ray")),
        prices=_prices(where, data.get("prices")),
    )


def _read(path: str) -> dict:
    data = read_yaml(path, FleetFileError, "fleet")
    if not isinstance(data, dict):
        raise FleetFileError(path, "", "a fleet file must be a mapping at the top level")
    return data


def _unknown(where: str, key: str, known) -> FleetFileError:
    hint = difflib.get_close_matches(key, list(known), n=1)
    extra = f" (did you mean {hint[0]!r}?)" if hint else f" (known: {', '.join(known)})"
    return FleetFileError(where, key, "unknown key" + extra)


def _name(where: str, value: Any, path: str) -> str:
    if value is None:
        return os.path.splitext(os.path.basename(path))[0]
    if not isinstance(value, str) or not value or not all(c.isalnum() or c in "-_." for c in value):
        raise FleetFileError(where, "name", f"expected letters, digits, '-', '_' or '.', got {value!r}")
    return value


def _path(where: str, key: str, value: Any, here: str, must_exist: bool = False) -> str:
    if not isinstance(value, str) or not value:
        raise FleetFileError(where, key, f"expected a path, got {value!r}")
    full = os.path.normpath(os.path.join(here, os.path.expanduser(value)))
    if must_exist and not os.path.isfile(full):
        raise FleetFileError(
            where, key, f"{value!r} (resolved against the fleet file's directory: {full}) is not a file"
        )
    return full


def _inside(path: str, base: str) -> bool:
    base = os.path.realpath(base)
    real = os.path.realpath(path)
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


def check_capture_root(spec: FleetSpec) -> None:
    """Refuse a relative ``capture_root`` (the default ``../capture/fleets`` too) that
    resolves outside both the current folder and the user's home: it is what a fleet file
    copied elsewhere does by accident. An absolute one is a choice. ``fleet start`` asks this
    before it makes anything."""
    given = os.path.expanduser(spec.capture_root_given)
    if (
        os.path.isabs(given)
        or _inside(spec.capture_root, os.getcwd())
        or _inside(spec.capture_root, os.path.expanduser("~"))
    ):
        return
    raise FleetFileError(
        spec.path,
        "capture_root",
        f"{spec.capture_root_given!r} resolves (against the fleet "
        f"file's directory) to {spec.capture_root}, outside this folder and your home; give "
        "an absolute capture_root to write there, or move the fleet file",
    )


def _owned(where: str, section: str, key: str) -> None:
    if key in FLEET_OWNED:
        raise FleetFileError(
            where,
            f"{section}.{key}",
            "set by the fleet for every session (each session "
            "gets its own directory under the fleet root); use capture_root",
        )


def _sets(where: str, value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise FleetFileError(where, "set", f"expected a mapping of dotted profile keys to values, got {value!r}")
    for key in value:
        if not isinstance(key, str) or not key:
            raise FleetFileError(where, "set", f"expected dotted profile keys, got {key!r}")
        _owned(where, "set", key)
    return dict(value)


def _matrix(where: str, value: Any) -> dict[str, list]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise FleetFileError(
            where, "matrix", f"expected a mapping of dotted profile keys to lists of values, got {value!r}"
        )
    out = {}
    for key, values in value.items():
        if not isinstance(key, str) or not key:
            raise FleetFileError(where, "matrix", f"expected dotted profile keys, got {key!r}")
        _owned(where, "matrix", key)
        if not isinstance(values, list) or not values:
            raise FleetFileError(where, f"matrix.{key}", f"expected a non-empty list of values, got {values!r}")
        seen = []
        for i, v in enumerate(values):
            if v in seen:
                raise FleetFileError(where, f"matrix.{key}[{i}]", f"{v!r} is listed twice")
            seen.append(v)
        out[key] = list(values)
    return out


def _prices(where: str, value: Any) -> dict[str, dict]:
    """``prices:``: model name -> ``{input_per_mtok, output_per_mtok, cached_input_per_mtok}``.
    The figures are checked as ``model.price`` by the profile loader (``matrix.expand``), which
    also refuses an entry no session uses."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise FleetFileError(
            where,
            "prices",
            "expected a mapping of model names to prices "
            f"({{input_per_mtok: ..., output_per_mtok: ...}}), got {value!r}",
        )
    out = {}
    for name, price in value.items():
        if not isinstance(name, str) or not name:
            raise FleetFileError(where, "prices", f"expected model names as keys, got {name!r}")
        if not isinstance(price, dict):
            raise FleetFileError(
                where,
                f"prices.{name}",
                f"expected a mapping ({{input_per_mtok: ..., output_per_mtok: ...}}), got {price!r}",
            )
        if price.get("model", name) != name:
            raise FleetFileError(
                where,
                f"prices.{name}.model",
                f"{price['model']!r} differs from the entry's key {name!r} (the key names the model; leave model out)",
            )
        out[name] = {k: v for k, v in price.items() if k != "model"}
    return out


def _count(where: str, key: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise FleetFileError(where, key, f"expected a whole number >= {minimum}, got {value!r}")
    return value


def _seconds(where: str, key: str, value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise FleetFileError(where, key, f"expected a positive number of seconds, got {value!r}")
    return float(value)


def _ray(where: str, value: Any) -> RaySettings:
    if value is None:
        return RaySettings()
    if not isinstance(value, dict):
        raise FleetFileError(where, "ray", f"expected a mapping, got {value!r}")
    for key in value:
        if key not in RAY_KEYS:
            raise _unknown(where, f"ray.{key}", [f"ray.{k}" for k in RAY_KEYS])
    cpus = value.get("num_cpus", 1.0)
    if isinstance(cpus, bool) or not isinstance(cpus, (int, float)) or cpus <= 0:
        raise FleetFileError(where, "ray.num_cpus", f"expected a positive number, got {cpus!r}")
    memory = value.get("memory_mb")
    if memory is not None:
        memory = _count(where, "ray.memory_mb", memory, minimum=1)
    retries = _count(where, "ray.node_retries", value.get("node_retries", 1), minimum=0)
    return RaySettings(num_cpus=float(cpus), memory_mb=memory, node_retries=retries)
