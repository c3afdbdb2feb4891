"""``ModelConfig``: the profile's ``model:`` mapping, validated once, frozen.

``ModelConfig.from_mapping(profile["model"])`` checks every key and raises ``ConfigError``
naming the key and the problem. Unknown keys are errors (a typo must not silently fall back
to a default) unless the caller lists them in ``ignore=`` because it owns them.

The API key is never part of the configuration: ``api_key_env`` is the *name* of an
environment variable, and ``read_api_key()`` reads its value at call time. ``repr(config)``
therefore cannot show the key. A value that looks like a key rather than a name is refused
without being echoed.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable, Mapping
from typing import Any

from .checks import number as _number
from .errors import ConfigError, ModelConfigError
from .price import Price, check_price

STRUCTURED_MODES = ("auto", "json_schema", "off")
MAX_TOKENS_PARAMS = ("max_tokens", "max_completion_tokens")
UNREACHABLE_MODES = ("fallback", "stop")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")


@dataclasses.dataclass(frozen=True)
class ModelConfig:
    """One model server and how to use it. See ``docs/models.md`` for every key."""

    base_url: str
    model: str
    api_key_env: str | None = None
    timeout_s: float = 30.0
    max_concurrent: int = 2
    budget_calls: int | None = 500
    budget_tokens: int | None = 1_000_000
    budget_usd: float | None = None  # known spend per session, in USD (needs price)
    price: Price | None = None  # USD per million tokens; None: every cost is unknown
    max_retries: int = 3
    backoff_s: float = 1.0
    backoff_max_s: float = 30.0
    retry_after_max_s: float = 60.0
    structured: str = "auto"
    confidence_gate: float = 0.6
    vision: bool = False
    temperature: float | None = 0.0
    max_output_tokens: int = 512
    max_tokens_param: str = "max_tokens"
    on_unreachable: str = "fallback"  # or "stop": end the session (model_unreachable) ...
    unreachable_after: int = 3  # ... after this many questions in a row got no answer

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, Any] | None, *, ignore: tuple[str, ...] = ()) -> ModelConfig:
        """Build from the profile's ``model:`` mapping; ``ConfigError`` names the bad key."""
        if not isinstance(mapping, Mapping):
            raise ConfigError("", f"must be a mapping, got {type(mapping).__name__}")
        known = {f.name for f in dataclasses.fields(cls)}
        for key in mapping:
            if key not in known and key not in ignore:
                raise ConfigError(str(key), f"unknown key (known: {', '.join(sorted(known))})")
        values: dict[str, Any] = {}
        for key, check in _CHECKS.items():
            if key in mapping:
                values[key] = check(key, mapping[key])
            elif key in ("base_url", "model"):
                raise ConfigError(key, "required")
        config = cls(**values)
        if config.backoff_max_s < config.backoff_s:
            raise ConfigError(
                "backoff_max_s", f"must be >= backoff_s ({config.backoff_s:g}), got {config.backoff_max_s:g}"
            )
        if config.price is not None and config.price.model != config.model:
            raise ConfigError(
                "price.model",
                f"{config.price.model!r} is not the model in use "
                f"({config.model!r}): a price never follows another model; set "
                "model.price for the model you call, or remove it (its cost is "
                "then unknown)",
            )
        if config.budget_usd is not None and config.price is None:
            raise ConfigError(
                "budget_usd",
                "needs model.price: without a price no call's cost is known, so a money budget could never be enforced",
            )
        return config

    @classmethod
    def from_profile(cls, section: Mapping[str, Any] | None) -> ModelConfig:
        """Like ``from_mapping``, also accepting the keys nested under ``settings:``.

        A key given both at the top level and under ``settings`` is a ``ConfigError``.
        """
        if not isinstance(section, Mapping):
            return cls.from_mapping(section)
        flat = {k: v for k, v in section.items() if k != "settings"}
        nested = section.get("settings") or {}
        if not isinstance(nested, Mapping):
            raise ConfigError("settings", f"must be a mapping, got {type(nested).__name__}")
        for key, value in nested.items():
            if key in flat:
                raise ConfigError(f"settings.{key}", f"also given as model.{key}; keep one")
            flat[key] = value
        try:
            return cls.from_mapping(flat)
        except ConfigError as exc:
            if exc.key.split(".", 1)[0] in nested:  # price.model: where price was given
                raise ConfigError(f"settings.{exc.key}", exc.problem) from None
            raise

    def chat_url(self) -> str:
        return f"{self.base_url.rstrip('/')}/chat/completions"

    def read_api_key(self, environ: Mapping[str, str] | None = None) -> str | None:
        """The key's value, read now; None when no ``api_key_env`` is configured."""
        if self.api_key_env is None:
            return None
        env = os.environ if environ is None else environ
        value = env.get(self.api_key_env)
        if not value:
            raise ModelConfigError(f"environment variable {self.api_key_env} (model.api_key_env) is not set or empty")
        return value

    def to_record(self) -> dict:
        """The settings worth recording with a session (no key: there is none to record)."""
        return dataclasses.asdict(self)


def _integer(low: int, high: int | None = None, *, nullable: bool = False):
    def check(key: str, value: Any) -> int | None:
        if value is None and nullable:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            hint = " or null (unlimited)" if nullable else ""
            raise ConfigError(key, f"must be an integer{hint}, got {type(value).__name__}")
        if value < low or (high is not None and value > high):
            span = f"between {low} and {high}" if high is not None else f">= {low}"
            raise ConfigError(key, f"must be {span}, got {value}")
        return value

    return check


def _base_url(key: str, value: Any) -> str:
    if not isinstance(value, str) or not re.match(r"^https?://[^/\s]+", value):
        raise ConfigError(key, "must be an http:// or https:// URL such as http://localhost:11434/v1")
    if "@" in value.split("://", 1)[1].split("/", 1)[0]:
        raise ConfigError(
            key, "must not carry credentials (user:password@); put the key in the variable named by model.api_key_env"
        )
    return value.rstrip("/")


def _model(key: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(key, "must be a non-empty model name string")
    return value


def _api_key_env(key: str, value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not _ENV_NAME.match(value):
        raise ConfigError(
            key,
            "must be the NAME of an environment variable (for example "
            "OPENAI_API_KEY), not the key itself; the value is not shown",
        )
    return value


def _one_of(choices: tuple[str, ...]):
    def check(key: str, value: Any) -> str:
        if not isinstance(value, str) or value not in choices:
            raise ConfigError(key, f"must be one of {', '.join(choices)}, got {value!r}")
        return value

    return check


def _structured(key: str, value: Any) -> str:
    """``auto``, ``json_schema`` or ``off``; YAML 1.1 reads a bare ``off`` (or ``no``,
    ``false``) as false, which can only mean off. A bare ``on``/``yes``/``true`` names no
    mode and is refused with the spelling to use."""
    if value is False:
        return "off"
    if value is True:
        raise ConfigError(
            key,
            "got true (YAML reads a bare on, yes or true as true), which names no mode; write auto, json_schema or off",
        )
    return _one_of(STRUCTURED_MODES)(key, value)


def _boolean(key: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(key, f"must be true or false, got {value!r}")
    return value


_CHECKS: dict[str, Callable[[str, Any], Any]] = {
    "base_url": _base_url,
    "model": _model,
    "api_key_env": _api_key_env,
    "timeout_s": _number(0, 3600, strict_low=True),
    "max_concurrent": _integer(1, 256),
    "budget_calls": _integer(0, nullable=True),
    "budget_tokens": _integer(0, nullable=True),
    "budget_usd": _number(0, None, nullable=True),
    "price": check_price,
    "max_retries": _integer(0, 10),
    "backoff_s": _number(0, 600),
    "backoff_max_s": _number(0, 3600),
    "retry_after_max_s": _number(0, 3600),
    "structured": _structured,
    "confidence_gate": _number(0, 1),
    "vision": _boolean,
    "temperature": _number(0, 2, nullable=True),
    "max_output_tokens": _integer(1, 1_000_000),
    "max_tokens_param": _one_of(MAX_TOKENS_PARAMS),
    "on_unreachable": _one_of(UNREACHABLE_MODES),
    "unreachable_after": _integer(1, 1000),
}
