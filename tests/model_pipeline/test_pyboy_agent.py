"""The Game Boy agent (``policy.module: pyboy_llm``) in whole sessions: real processes, real
PyBoy on our demo cartridge, and the scriptable fake speaking OpenAI's wire format on loopback.
Every step is the model's first press; the question carries the frame the emulator stored and
the last presses with what they changed; an unusable answer is never sent, is recorded, is asked
again with its reason, and then the seeded exploration input decides, marked."""

from __future__ import annotations

import base64
import hashlib
import json
import os

import pytest

from actors.emulator.cartridge import build_rom
from actors.emulator.session.core import EmulatorSession
from actors.model_client.answers import envelope_schema
from actors.model_client.config import ModelConfig
from actors.model_client.questions import build_questions
from actors.model_client.schema import validate
from actors.model_client.standin import answer
from actors.model_client.wire import build_body
from actors.policy.pyboy import ExplorationInputs
from supervisor import cli
from tests.fakes.openai_server import FakeOpenAIServer, Reply, completion_body
from tests.harness import REPO

from .conftest import KEY_ENV, SECRET

pytestmark = pytest.mark.timeout(120)
PYBOY_AGENT = os.path.join(REPO, "run", "profiles", "pyboy-agent.yaml")
FRAMES = 12  # the profile's policy.settings.frames


@pytest.fixture
def agent_session(session_factory, monkeypatch):
    """``agent_session(server, *sets)``: ``supervisor start`` of pyboy-agent.yaml against ``server``."""
    monkeypatch.setenv(KEY_ENV, SECRET)

    def start(server, *sets: str, name: str = "gb"):
        keys = {
            "base_url": server.base_url,
            "model": "fake-model",
            "api_key_env": KEY_ENV,
            "timeout_s": 5,
            "max_retries": 1,
            "backoff_s": 0.05,
            "backoff_max_s": 0.2,
        }
        return session_factory(
            *[f"model.{k}={json.dumps(v)}" for k, v in keys.items()], *sets, profile=PYBOY_AGENT, name=name
        )

    return start


def user_parts(request) -> tuple[str, list[bytes]]:
    """The question's text and the images, as the server received them."""
    content = request.body["messages"][1]["content"]
    text = "".join(p["text"] for p in content if p["type"] == "text")
    images = [base64.b64decode(p["image_url"]["url"].split(",", 1)[1]) for p in content if p["type"] == "image_url"]
    return text, images


def walker(request) -> dict:
    """Press ``a`` while the cartridge boots (its magic byte unset), then walk right: two presses
    each time, of which only the first may be carried out."""
    text, _ = user_parts(request)
    presses = ["right", "b"] if '"magic": "5a"' in text else ["a", "right"]
    return completion_body(json.dumps({"q0": {"buttons": presses, "confidence": 0.9, "reason": "fake walker"}}))


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sent_answer(raw: bytes) -> list[str]:
    return json.loads(json.loads(raw)["choices"][0]["message"]["content"])["q0"]["buttons"]


def executed_proposals(rows: list[dict]) -> list[dict]:
    proposals = {r["proposal_id"]: r for r in rows if r["event"] == "proposal"}
    return [proposals[r["proposal_id"]] for r in rows if r["event"] == "action_attempt"]


def test_every_step_is_the_models_first_press_on_the_frame_it_was_shown(agent_session):
    """Ten steps, each one call: the image the server received is the frame file the observation
    row names; the step holds the answer's first press; later questions list the last three presses
    with what they changed (the player's move included); each call's cost is the price of the usage
    the server reported."""
    price = "model.price={model: fake-model, input_per_mtok: 1.0, output_per_mtok: 2.0}"
    with FakeOpenAIServer(default=Reply(body=walker)) as server:
        s = agent_session(server, "session.max_steps=10", "policy.settings.memory=3", price)
        assert s.wait() == 0, s.stderr[-3000:]
        requests, sent = list(server.requests), list(server.sent)
    rows = s.rows()
    assert rows[-1]["event"] == "session_end" and rows[-1]["reason"] == "max_steps"
    assert not [r for r in rows if r["event"] == "model_error"]
    executed = executed_proposals(rows)
    assert len(executed) == 10 and {p["source"] for p in executed} == {"model"}
    assert len(requests) == len(sent) == 10  # one call per step, none elsewhere
    observations = {r["observation_id"]: r for r in rows if r["event"] == "observation"}
    for n, p in enumerate(executed):
        text, (png,) = user_parts(requests[n])
        with open(os.path.join(s.capture, observations[p["observation_id"]]["path"]), encoding="utf-8") as fh:
            state = json.load(fh)
        with open(os.path.join(s.capture, state["frame_png"]), "rb") as fh:
            stored = fh.read()
        assert sha(png) == sha(stored), n
        (evidence,) = p["model_evidence"]
        assert evidence["request"]["questions"][0]["screenshot"]["sha256"] == sha(stored)
        answer = sent_answer(sent[n])
        assert p["parameters"] == {"buttons": [answer[0]], "frames": FRAMES, "samples": 0}
        assert p["agent"]["presses"] == answer and p["agent"]["outcome"] == "chosen"
        assert p["agent"]["template"]["name"] == "builtin:buttons"
        usage = json.loads(sent[n])["usage"]
        assert evidence["usage"]["cost_usd"] == pytest.approx(
            (usage["prompt_tokens"] * 1.0 + usage["completion_tokens"] * 2.0) / 1e6
        )
    texts = [user_parts(r)[0] for r in requests]
    assert "(none yet)" in texts[0]
    pressed = [p["parameters"]["buttons"][0] for p in executed]
    for n in range(1, len(texts)):
        lines = [line for line in texts[n].splitlines() if line.startswith("- frame ")]
        assert len(lines) == min(n, 3), (n, lines)
        assert f"press(buttons={pressed[n - 1]}, frames={FRAMES}, by=you) -> accepted; changed: " in lines[-1]
    assert pressed[0] == "a" and pressed[-1] == "right"
    assert any("player_x 04 -> 05" in t for t in texts), "the walk right shows in a later question's memory"


def test_unusable_answers_are_never_sent_asked_again_then_exploration_decides(agent_session):
    """A button the question does not offer, then five presses where four are allowed: two
    ``off_schema`` rows on the first observation, the second question carrying the first one's
    problem; then the seeded exploration input decides, marked; the next decision is the model's."""
    turbo = Reply.answer({"q0": {"buttons": ["up", "turbo"], "confidence": 0.9, "reason": "turbo!"}})
    five = Reply.answer({"q0": {"buttons": ["up"] * 5, "confidence": 0.9, "reason": "keep going"}})
    with FakeOpenAIServer(default=Reply(body=walker)) as server:
        server.script(turbo, five)
        s = agent_session(server, "session.max_steps=3", "policy.settings.invalid_retries=1", name="bad")
        assert s.wait() == 0, s.stderr[-3000:]
        requests = list(server.requests)
    rows = s.rows()
    errors = [r for r in rows if r["event"] == "model_error"]
    assert [e["kind"] for e in errors] == ["off_schema", "off_schema"]
    executed = executed_proposals(rows)
    fell = executed[0]
    assert {e["observation_id"] for e in errors} == {fell["observation_id"]}
    assert "'turbo'" in " ".join(errors[0]["schema_problems"])
    assert "item count 5 is above the maximum 4" in " ".join(errors[1]["schema_problems"])
    texts = [user_parts(r)[0] for r in requests]
    assert "could not be used" not in texts[0]
    assert "could not be used" in texts[1] and "'turbo'" in texts[1]
    assert "could not be used" not in texts[2]  # a new decision starts without feedback
    assert "'turbo'" in errors[1]["request"]["questions"][0]["feedback"][0]  # recorded as asked
    assert fell["source"] == "heuristic_fallback" and fell["agent_fallback"].startswith("off_schema")
    assert fell["agent"]["outcome"] == "fallback" and fell["agent"]["fallback"] == "heuristic"
    assert [a["error_kind"] for a in fell["agent"]["attempts"]] == ["off_schema", "off_schema"]
    assert not fell.get("model_evidence")
    buttons, _ = next(ExplorationInputs(1, frame_choices=(FRAMES,)))  # game.seed 1: the stream's first input
    assert fell["parameters"] == {"buttons": sorted(buttons), "frames": FRAMES, "samples": 0}
    assert (fell["seed"], fell["input_index"]) == (1, 1)
    attempts = [r for r in rows if r["event"] == "action_attempt"]
    assert attempts[0]["parameters"] == fell["parameters"]
    assert [p["source"] for p in executed[1:]] == ["model", "model"]
    assert s.summary()["model_usage"]["errors"] == 2


def test_validate_refuses_what_the_game_boy_agent_cannot_use_naming_the_key(capsys):
    cases = {
        "model.base_url=null": "model.base_url: the pyboy_llm policy needs a model",
        "model.vision=false": "model.vision: the pyboy_llm policy shows the model the screen",
        "game.backend=http": "game.backend: the pyboy_llm policy plays Game Boy cartridges",
        "emulator.record=false": "emulator.record:",
        "actors={recorder: {}, emulator: {}, policy: {}, actuator: {}, observer: {}}": "actors.model_client:",
        "policy.settings.goal=": "policy.settings.goal: the pyboy_llm policy needs a goal",
        "policy.settings.max_presses=0": "policy.settings.max_presses: expected a whole number 1..16",
        "policy.settings.frames=0": "policy.settings.frames: expected a whole number",
        "policy.settings.buttons=[a, turbo]": "policy.settings.buttons:",
        "policy.settings.fallback=guess": "policy.settings.fallback: expected one of heuristic, wait",
        "policy.settings.prompt_template=mine.txt": "policy.settings.prompt_template: the pyboy_llm policy",
        "policy.settings.pipeline_depth=8": "policy.settings.pipeline_depth: not a setting of the pyboy_llm",
    }
    for setting, said in cases.items():
        code = cli.main(["validate", PYBOY_AGENT, "--set", setting])
        err = capsys.readouterr().err
        assert code == 2 and said in err, (setting, err)
    assert cli.main(["validate", PYBOY_AGENT]) == 0, capsys.readouterr().err


def test_the_stand_in_answers_the_buttons_question_from_its_schema_alone():
    """``make pyboy-agent-demo``'s server: a real frame of the demo cartridge, memory and feedback
    in the question, and an answer valid against the schema (1..max_presses offered buttons)."""
    session = EmulatorSession(build_rom())
    try:
        session.step([], 90)
        png = session.observe().png
    finally:
        session.close()
    questions = build_questions(
        "buttons",
        [
            {
                "screenshot_png": png,
                "goal": "reach the key",
                "buttons": ["up", "a"],
                "max_presses": 2,
                "memory": ["frame 0: press(buttons=a) -> accepted"],
                "feedback": ["buttons[0]: must be one of ['up', 'a'], got 'turbo'"],
            }
        ],
    )
    schema = envelope_schema(questions)
    body = build_body(ModelConfig(base_url="http://127.0.0.1:9/v1", model="m", vision=True), questions, schema, True)
    for seed in range(1, 6):
        content = json.loads(answer(body, seed)["choices"][0]["message"]["content"])
        assert validate(content, schema) == [] and 1 <= len(content["q0"]["buttons"]) <= 2
