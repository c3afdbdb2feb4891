"""ModelConfig.from_mapping: defaults, and errors that name the key and the problem."""

from __future__ import annotations

import pytest

from actors.model_client import ConfigError, ModelConfig, ModelConfigError
from actors.model_client.settings import ModelSettings
from supervisor.profile import ProfileError, load

BASE = {"base_url": "http://localhost:11434/v1/", "model": "qwen2.5:7b"}


def test_minimal_mapping_gets_defaults_and_a_normalised_url():
    config = ModelConfig.from_mapping(BASE)
    assert config.base_url == "http://localhost:11434/v1"
    assert config.chat_url() == "http://localhost:11434/v1/chat/completions"
    assert (config.api_key_env, config.structured, config.vision) == (None, "auto", False)
    assert config.max_concurrent >= 1 and config.timeout_s > 0


def test_every_key_is_accepted():
    mapping = dict(
        BASE,
        api_key_env="OPENAI_API_KEY",
        timeout_s=12,
        max_concurrent=4,
        budget_calls=None,
        budget_tokens=5000,
        max_retries=0,
        backoff_s=0.5,
        backoff_max_s=4,
        retry_after_max_s=10,
        structured="json_schema",
        confidence_gate=0.75,
        vision=True,
        temperature=None,
        max_output_tokens=64,
        max_tokens_param="max_completion_tokens",
    )
    config = ModelConfig.from_mapping(mapping)
    assert config.to_record()["budget_calls"] is None
    assert config.temperature is None and config.timeout_s == 12.0


@pytest.mark.parametrize(
    "change, key, words",
    [
        ({"base_url": None}, "base_url", "http:// or https://"),
        ({"base_url": "localhost:8000"}, "base_url", "http:// or https://"),
        ({"base_url": "https://user:pw@api.example.com/v1"}, "base_url", "credentials"),
        ({"model": ""}, "model", "non-empty"),
        ({"timeout_s": 0}, "timeout_s", "> 0"),
        ({"timeout_s": "30"}, "timeout_s", "must be a number, got str"),
        ({"max_concurrent": 0}, "max_concurrent", "between 1 and 256, got 0"),
        ({"max_concurrent": True}, "max_concurrent", "integer, got bool"),
        ({"budget_calls": -1}, "budget_calls", ">= 0, got -1"),
        ({"budget_tokens": 1.5}, "budget_tokens", "integer or null"),
        ({"max_retries": 11}, "max_retries", "between 0 and 10"),
        ({"structured": "yes"}, "structured", "auto, json_schema, off"),
        ({"confidence_gate": 1.2}, "confidence_gate", "<= 1"),
        ({"vision": "true"}, "vision", "true or false"),
        ({"backoff_s": 5, "backoff_max_s": 1}, "backoff_max_s", ">= backoff_s"),
        ({"max_tokens_param": "tokens"}, "max_tokens_param", "max_tokens, max_completion_tokens"),
        ({"modle": "x"}, "modle", "unknown key"),
    ],
)
def test_bad_values_name_key_and_problem(change, key, words):
    with pytest.raises(ConfigError) as info:
        ModelConfig.from_mapping({**BASE, **change})
    assert info.value.key == key
    assert f"model.{key}" in str(info.value) and words in str(info.value)


def test_required_keys():
    for key in ("base_url", "model"):
        mapping = dict(BASE)
        del mapping[key]
        with pytest.raises(ConfigError, match=f"model.{key}: required"):
            ModelConfig.from_mapping(mapping)


def test_not_a_mapping():
    with pytest.raises(ConfigError, match="must be a mapping"):
        ModelConfig.from_mapping(["base_url"])


def test_a_key_pasted_into_api_key_env_is_refused_without_echo():
    pasted = "sk-proj-abcdef0123456789"
    with pytest.raises(ConfigError) as info:
        ModelConfig.from_mapping({**BASE, "api_key_env": pasted})
    assert "NAME of an environment variable" in str(info.value)
    assert pasted not in str(info.value)


def test_keys_owned_by_the_caller_can_be_ignored():
    config = ModelConfig.from_mapping({**BASE, "decisions": ["card_reward"]}, ignore=("decisions",))
    assert config.model == "qwen2.5:7b"


def test_read_api_key():
    config = ModelConfig.from_mapping({**BASE, "api_key_env": "MY_KEY"})
    assert config.read_api_key({"MY_KEY": "sk-1"}) == "sk-1"
    with pytest.raises(ModelConfigError, match="MY_KEY"):
        config.read_api_key({})
    with pytest.raises(ModelConfigError):
        config.read_api_key({"MY_KEY": ""})
    assert ModelConfig.from_mapping(BASE).read_api_key({}) is None


def test_config_is_frozen():
    config = ModelConfig.from_mapping(BASE)
    with pytest.raises(AttributeError):
        config.model = "other"  # type: ignore[misc]


def test_from_profile_flattens_settings():
    config = ModelConfig.from_profile({**BASE, "api_key_env": None, "settings": {"timeout_s": 9, "vision": True}})
    assert (config.timeout_s, config.vision) == (9.0, True)
    with pytest.raises(ConfigError, match="model.settings.model: also given"):
        ModelConfig.from_profile({**BASE, "settings": {"model": "x"}})
    with pytest.raises(ConfigError, match="model.settings.timeout_s: must be > 0"):
        ModelConfig.from_profile({**BASE, "settings": {"timeout_s": -1}})


def test_structured_off_written_unquoted_in_yaml_means_off(tmp_path):
    """YAML 1.1 reads a bare ``off`` as false (found against a LiteLLM proxy): it means off,
    in a profile file and in ``--set``; a bare ``on`` names no mode and says how to write it."""
    path = tmp_path / "p.yaml"
    path.write_text("model:\n  base_url: http://127.0.0.1:9/v1\n  model: m\n  structured: off\n")
    profile = load(str(path))
    assert ModelSettings.from_profile(profile["model"]).config.structured == "off"
    overridden = load(str(path), ["model.structured=no"])
    assert ModelSettings.from_profile(overridden["model"]).config.structured == "off"
    assert ModelConfig.from_mapping({**BASE, "structured": False}).structured == "off"
    with pytest.raises(ProfileError, match="model.structured: got true .*write auto, json_schema or off"):
        load(str(path), ["model.structured=on"])
