"""The httpx boundary: every httpx exception maps to a ModelError."""

from __future__ import annotations

import inspect

import httpx
import pytest

from actors.model_client import ModelError, ModelTimeout, ModelTransportError
from actors.model_client.transport import WRAPPED_ERRORS, map_httpx_error

REQUEST = httpx.Request("POST", "http://127.0.0.1:1/v1/chat/completions")


def httpx_exceptions():
    return [cls for _, cls in inspect.getmembers(httpx, inspect.isclass) if issubclass(cls, Exception)]


def instantiate(cls):
    if issubclass(cls, httpx.HTTPStatusError):
        return cls("boom", request=REQUEST, response=httpx.Response(500, request=REQUEST))
    if issubclass(cls, httpx.RequestError):
        return cls("boom", request=REQUEST)
    try:
        return cls("boom")
    except TypeError:  # the stream errors take no message
        return cls()


def test_there_are_exceptions_to_map():
    assert len(httpx_exceptions()) > 20


@pytest.mark.parametrize("cls", httpx_exceptions(), ids=lambda c: c.__name__)
def test_every_httpx_exception_is_mapped(cls):
    assert issubclass(cls, WRAPPED_ERRORS), f"post_json would let {cls.__name__} escape"
    mapped = map_httpx_error(instantiate(cls), 3.0)
    assert isinstance(mapped, ModelError)
    if issubclass(cls, httpx.TimeoutException):
        assert isinstance(mapped, ModelTimeout) and "3s" in str(mapped)
    else:
        assert isinstance(mapped, ModelTransportError)
        assert mapped.to_record()["transport_error"] == cls.__name__


def test_timeout_phases():
    phases = {
        cls: map_httpx_error(instantiate(cls), 1).details["timeout_phase"]
        for cls in (httpx.ConnectTimeout, httpx.ReadTimeout, httpx.WriteTimeout, httpx.PoolTimeout)
    }
    assert list(phases.values()) == ["connect", "read", "write", "pool"]


def test_nothing_outside_transport_imports_httpx():
    import pathlib

    import actors.model_client as package

    root = pathlib.Path(package.__file__).parent
    importers = sorted(p.name for p in root.glob("*.py") if "import httpx" in p.read_text())
    assert importers == ["transport.py"]


def test_a_request_on_a_closed_transport_is_a_transport_error():
    from actors.model_client.transport import HttpTransport

    transport = HttpTransport(1.0, 1)
    transport.close()
    with pytest.raises(ModelTransportError, match="closed"):
        transport.post_json("http://127.0.0.1:1/v1/chat/completions", {}, {})
