"""``ModelSettings``: the profile's ``model:`` section as the pipeline reads it.

``ModelConfig`` describes one HTTP server. The pipeline adds one key of its own:

    model.replay   an earlier session's ``events.jsonl``, or its session directory: answer
                   every question from that capture's evidence (``ReplayBackend``) and call
                   no server. ``base_url`` may then be null; when it is set it is ignored.

``ModelSettings.from_profile(section)`` raises ``ConfigError`` naming the key and the
problem. ``configured`` is False when neither ``base_url`` nor ``replay`` is set: the actor
then answers ``no_model_configured`` and the built-in policy does not ask.

    settings = ModelSettings.from_profile(profile["model"])
    backend = open_backend(settings, stop_event)   # backends.py: ModelClient or ReplayBackend

This module imports no HTTP client (the profile loader checks ``model:`` with it); opening a
backend lives in ``backends.py``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .config import _CHECKS, ModelConfig
from .errors import ConfigError

#: keys of ``model:`` owned by the pipeline rather than by ``ModelConfig``.
PIPELINE_KEYS = ("replay",)
DEFAULT_GATE = ModelConfig.confidence_gate


@dataclasses.dataclass(frozen=True)
class ModelSettings:
    """What the model-client actor and the policy need from ``model:``."""

    config: ModelConfig | None = None
    replay: Path | None = None
    replay_gate: float | None = None  # the profile's gate for replay; None: the recorded one
    confidence_gate: float = DEFAULT_GATE
    max_concurrent: int = ModelConfig.max_concurrent
    timeout_s: float = ModelConfig.timeout_s

    @property
    def configured(self) -> bool:
        return self.config is not None or self.replay is not None

    @property
    def backend_name(self) -> str:
        return "replay" if self.replay is not None else "http" if self.config else "none"

    @classmethod
    def from_profile(cls, section: Mapping[str, Any] | None) -> ModelSettings:
        section = dict(section or {})
        replay = section.pop("replay", None)
        if replay is not None:
            return cls._for_replay(replay_path(replay), section)
        if section.get("base_url") is None:
            return cls()
        config = ModelConfig.from_profile(section)
        return cls(
            config=config,
            confidence_gate=config.confidence_gate,
            max_concurrent=config.max_concurrent,
            timeout_s=config.timeout_s,
        )

    @classmethod
    def _for_replay(cls, path: Path, section: dict) -> ModelSettings:
        if section.get("base_url") is not None:  # validated, then ignored
            ModelConfig.from_profile(section)
        flat = {**section, **(section.get("settings") or {})}
        gate = flat.get("confidence_gate")
        if gate is not None:
            gate = _CHECKS["confidence_gate"]("confidence_gate", gate)
        workers = _CHECKS["max_concurrent"]("max_concurrent", flat.get("max_concurrent", cls.max_concurrent))
        return cls(
            replay=path,
            replay_gate=gate,
            confidence_gate=DEFAULT_GATE if gate is None else gate,
            max_concurrent=workers,
        )


def replay_path(value: Any) -> Path:
    """The ``events.jsonl`` that ``model.replay`` names (a file, or a session directory)."""
    if not isinstance(value, (str, Path)) or not str(value).strip():
        raise ConfigError(
            "replay", f"must be the path of an earlier session's events.jsonl or session directory, got {value!r}"
        )
    path = Path(value).expanduser()
    if path.is_dir():
        path = path / "events.jsonl"
    if not path.is_file():
        raise ConfigError("replay", f"no events.jsonl at {str(value)!r}")
    return path.resolve()
