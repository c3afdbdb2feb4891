"""Open the backend a session's ``ModelSettings`` names: a ``ModelClient`` (HTTP) or a
``ReplayBackend``. Apart from ``settings.py`` so that checking a profile's ``model:``
section imports no HTTP client."""

from __future__ import annotations

import threading

from .backend import ModelBackend
from .client import ModelClient
from .replay import ReplayBackend
from .settings import ModelSettings


def open_backend(settings: ModelSettings, stop_event: threading.Event | None = None) -> ModelBackend:
    """The backend to answer with (the caller closes it); ``OSError`` if replay is gone."""
    if settings.replay is not None:
        return ReplayBackend.from_events(settings.replay, gate=settings.replay_gate)
    if settings.config is None:
        raise ValueError("no model is configured (model.base_url and model.replay unset)")
    return ModelClient(settings.config, stop_event=stop_event)
