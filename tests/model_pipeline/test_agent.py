"""The agent policy (``policy.module: llm``) in whole sessions: real processes, the built-in game,
and a model server on loopback (the stand-in, or the scriptable fake speaking OpenAI's wire
format). The model chooses every in-run decision; an answer that cannot be used is never
sent, is recorded, and is asked again with its reason; then the heuristic decides, marked."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import pytest

from supervisor import cli
from tests.fakes.openai_server import FakeOpenAIServer, Reply, completion_body
from tests.harness import REPO

from .conftest import schema_of

pytestmark = pytest.mark.timeout(120)
AGENT = os.path.join(REPO, "run", "profiles", "agent-demo.yaml")
TEMPLATE = os.path.join(REPO, "actors", "policy", "prompts", "sts2_agent.txt")
NO_DECISION = ("menu", "game_over")


def rows_of(capture: str) -> list[dict]:
    sessions = os.path.join(capture, "sessions")
    (sid,) = os.listdir(sessions)
    with open(os.path.join(sessions, sid, "events.jsonl"), encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def options(request) -> list[dict]:
    q0 = schema_of(request)["properties"]["q0"]
    return q0.get("anyOf", [q0])


def legal_answer(request, last: bool = False) -> dict:
    """A valid answer: the first (or last) alternative, each argument's first allowed value."""
    option = options(request)[-1 if last else 0]
    answer = {name: prop["enum"][0] for name, prop in option["properties"].items() if "enum" in prop}
    return {"q0": {**answer, "confidence": 0.9, "reason": "fake: first legal"}}


def legal_reply() -> Reply:
    return Reply(body=lambda request: completion_body(json.dumps(legal_answer(request))))


def bad_index_reply() -> Reply:
    """Valid JSON whose argument names a value the screen does not list."""

    def body(request):
        answer = legal_answer(request)
        for key in answer["q0"]:
            if key not in ("action", "confidence", "reason"):
                answer["q0"][key] = 97
                break
        else:
            answer["q0"]["index"] = 97
        return completion_body(json.dumps(answer))

    return Reply(body=body)


def wrong_action_reply() -> Reply:
    return Reply(
        body=lambda request: completion_body(
            json.dumps({"q0": {"action": "fly_to_the_boss", "confidence": 1.0, "reason": "why not"}})
        )
    )


def in_run(row: dict) -> bool:
    return row.get("state_type") not in NO_DECISION


def test_the_model_plays_a_whole_run_from_the_main_menu_to_the_game_over(tmp_path):
    """``make agent-demo``'s command: the stand-in server answers every question; every in-run
    action sent is the model's or the screen's only legal one, within the legal actions the
    question listed; screens needing no decision asked nothing."""
    capture = str(tmp_path / "capture")
    cmd = [
        sys.executable,
        "-m",
        "actors.model_client.standin",
        "--port",
        "0",
        "--run",
        sys.executable,
        "-m",
        "supervisor",
        "start",
        AGENT,
        "--set",
        "model.base_url={url}",
        "--set",
        f"capture.root={capture}",
        "--set",
        f"supervisor.runtime_dir={tmp_path / 'rt'}",
        "--set",
        "supervisor.progress=plain",
    ]
    done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=110)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = rows_of(capture)
    assert rows[-1]["event"] == "session_end" and rows[-1]["reason"] == "run_ended"
    assert any(r["event"] == "observation" and r.get("state_type") == "game_over" for r in rows)
    assert not [r for r in rows if r["event"] == "model_error"]
    proposals = {r["proposal_id"]: r for r in rows if r["event"] == "proposal"}
    sent = [proposals[r["proposal_id"]] for r in rows if r["event"] == "action_attempt"]
    played = [p for p in sent if in_run(p)]
    assert len(played) > 10
    assert {p["source"] for p in played} <= {"model", "only_choice"}, sorted(
        {(p["source"], p["state_type"]) for p in played}
    )
    by_model = [p for p in played if p["source"] == "model"]
    assert by_model and any(p["state_type"] in ("monster", "elite", "boss") for p in by_model)
    template_sha = hashlib.sha256(open(TEMPLATE, "rb").read()).hexdigest()
    for p in by_model:
        (evidence,) = p["model_evidence"]
        question = evidence["request"]["questions"][0]
        assert question["template"] == {"name": "builtin:sts2_agent.txt", "sha256": template_sha}
        assert p["agent"]["template"]["sha256"] == template_sha and p["agent"]["outcome"] == "chosen"
        listed = [
            a
            for a in question["actions"]
            if a["action"] == p["action"]
            and set(a["args"]) == set(p["parameters"])
            and all(p["parameters"][k] in v for k, v in a["args"].items())
        ]
        assert listed, (p["action"], p["parameters"], question["actions"])
    for p in proposals.values():  # no call where nothing was to be decided
        if p.get("model_evidence"):
            assert in_run(p), p
        if p["source"] == "only_choice":
            assert not p.get("model_evidence")
    decided = [p for p in proposals.values() if p.get("model_evidence")]
    assert len(decided) == len(by_model)  # one answered call per model decision, none elsewhere
    results = {r["attempt_id"]: r for r in rows if r["event"] == "action_result"}
    assert all(r["outcome"] == "accepted" for r in results.values()), [
        r for r in results.values() if r["outcome"] != "accepted"
    ][:3]
    assert "model " in done.stderr and "answers" in done.stderr


def test_unusable_answers_are_never_sent_asked_again_then_the_heuristic_decides(model_session):
    """Prose, an index the screen does not list and an action it does not allow: three
    ``model_error`` rows, each question after the first carrying the previous problem, then
    the heuristic's choice marked ``heuristic_fallback``; a timeout is not asked again."""
    with FakeOpenAIServer(default=legal_reply()) as server:
        server.script(
            Reply.text("I would play the Strike, probably."),
            bad_index_reply(),
            wrong_action_reply(),
            Reply.answer({}).slow(3),
            legal_reply(),
        )
        s = model_session(server, "policy.module=llm", "session.max_steps=40", timeout_s=1, name="agent")
        assert s.wait() == 0, s.stderr[-3000:]
        requests = list(server.requests)
    rows = s.rows()
    errors = [r for r in rows if r["event"] == "model_error"]
    assert [e["kind"] for e in errors] == ["malformed", "off_schema", "off_schema", "timeout"]
    first, second = errors[0]["observation_id"], errors[3]["observation_id"]
    assert errors[1]["observation_id"] == errors[2]["observation_id"] == first != second
    assert "97" in " ".join(errors[1]["schema_problems"])
    assert "fly_to_the_boss" in " ".join(errors[2]["schema_problems"])
    asks = [json.loads(json.dumps(r.body))["messages"][1]["content"] for r in requests[:4]]
    assert "could not be used" not in asks[0]
    assert "could not be used" in asks[1] and "could not be used" in asks[2]
    assert "97" in asks[2] and "fly_to_the_boss" not in asks[1]
    assert "could not be used" not in asks[3]  # a new decision starts without feedback
    proposals = [r for r in rows if r["event"] == "proposal"]
    fell = [p for p in proposals if p["observation_id"] in (first, second)]
    assert [p["source"] for p in fell] == ["heuristic_fallback", "heuristic_fallback"]
    assert [a["error_kind"] for a in fell[0]["agent"]["attempts"]] == ["malformed", "off_schema", "off_schema"]
    assert [a["error_kind"] for a in fell[1]["agent"]["attempts"]] == ["timeout"]
    assert fell[0]["agent_fallback"].startswith("off_schema") and fell[1]["agent_fallback"].startswith("timeout")
    # nothing the bad answers named was sent: one attempt per executed proposal, none with 97
    attempts = [r for r in rows if r["event"] == "action_attempt"]
    executed = {r["proposal_id"] for r in rows if r["event"] == "proposal_status" and r["status"] == "execute"}
    assert {a["proposal_id"] for a in attempts} <= executed and len(attempts) == len(
        {a["proposal_id"] for a in attempts}
    )
    assert not [a for a in attempts if 97 in (a.get("parameters") or {}).values()]
    later = [p for p in proposals if p["source"] == "model"]
    assert later, "the model decides again once it answers"
    summary = s.summary()
    assert summary["model_usage"]["errors"] == 4
    assert "2 fallbacks" in s.stderr, s.stderr[-600:]


def test_a_server_that_refuses_schemas_is_answered_in_text_and_still_decides(model_session):
    with FakeOpenAIServer(default=legal_reply(), reject_response_format=True) as server:
        s = model_session(server, "policy.module=llm", "session.max_steps=25", name="text")
        assert s.wait() == 0, s.stderr[-3000:]
        bodies = [r.body for r in server.requests]
    assert "response_format" in bodies[0] and all("response_format" not in b for b in bodies[1:])
    chosen = [r for r in s.events("proposal") if r["source"] == "model"]
    assert chosen and all(
        p["model_evidence"][0]["request"]["parameters"]["response_format"] == "none (text parsed)" for p in chosen
    )
    assert not s.events("model_error")


def test_validate_refuses_bad_agent_settings_naming_the_key(tmp_path, capsys):
    bad_template = tmp_path / "bad.txt"
    bad_template.write_text("Screen: $screen\nYou have $5 and $wallet\n", encoding="utf-8")
    cases = {
        "policy.settings.prompt_template="
        + str(tmp_path / "missing.txt"): "policy.settings.prompt_template: no such file",
        "policy.settings.prompt_template=" + str(bad_template): "policy.settings.prompt_template:",
        "policy.settings.invalid_retries=-1": "policy.settings.invalid_retries: expected a whole number",
        "policy.settings.fallback=guess": "policy.settings.fallback: expected one of heuristic, wait",
        "policy.settings.consult_model=false": "policy.settings.consult_model:",
        "model.base_url=null": "model.base_url: the llm policy needs a model",
    }
    for setting, said in cases.items():  # the command itself, in this process
        code = cli.main(["validate", AGENT, "--set", setting])
        err = capsys.readouterr().err
        assert code == 2 and said in err, (setting, err)
    good = tmp_path / "mine.txt"
    good.write_text("$screen_type\n$screen\n$memory\n$actions\n$feedback\nCosts $$0.\n", encoding="utf-8")
    assert cli.main(["validate", AGENT, "--set", f"policy.settings.prompt_template={good}"]) == 0, (
        capsys.readouterr().err
    )


def test_every_call_is_priced_from_the_servers_own_counts_and_a_spent_budget_sends_nothing(model_session):
    """Each reply reports its own usage (the fake server makes it up per request and the test
    keeps it); the journal's costs equal price x those counts; once the known spend reaches
    ``budget_usd`` no request reaches the server and the agent falls back, marked."""
    price = {"model": "fake-model", "input_per_mtok": 3.0, "output_per_mtok": 15.0, "cached_input_per_mtok": 0.3}
    sent: list[dict] = []

    def body(request):
        n = len(sent)
        usage = {
            "prompt_tokens": 20_000 + 1_000 * n,
            "completion_tokens": 300 + n,
            "prompt_tokens_details": {"cached_tokens": 4_000 * (n % 2)},
        }
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        sent.append(usage)
        return completion_body(json.dumps(legal_answer(request)), usage=usage)

    def cost(u: dict) -> float:
        cached = u["prompt_tokens_details"]["cached_tokens"]
        return ((u["prompt_tokens"] - cached) * 3.0 + cached * 0.3 + u["completion_tokens"] * 15.0) / 1e6

    with FakeOpenAIServer(default=Reply(body=body)) as server:
        s = model_session(
            server, "policy.module=llm", "session.max_steps=40", name="budget", price=price, budget_usd=0.25
        )
        assert s.wait() == 0, s.stderr[-3000:]
        served = len(server.requests)
    rows = s.rows()
    evidence = [e for r in rows if r["event"] == "proposal" for e in r.get("model_evidence") or []]
    assert len(evidence) == served == len(sent) >= 2
    for e, u in zip(evidence, sent):
        assert e["usage"]["prompt_tokens"] == u["prompt_tokens"]
        assert e["usage"]["cost_usd"] == pytest.approx(cost(u), rel=1e-9)
    spent = sum(cost(u) for u in sent)
    assert sum(cost(u) for u in sent[:-1]) < 0.25 <= spent  # the call that crossed the budget was the last
    refused = [r for r in rows if r["event"] == "model_error"]
    assert refused and {r["kind"] for r in refused} == {"budget_exhausted"}
    assert all(r["attempts"] == 0 for r in refused)
    after = [r for r in rows if r["event"] == "proposal" and r.get("agent_fallback")]
    assert len(after) == len(refused) and all(r["source"] == "heuristic_fallback" for r in after)
    assert all(r["agent"]["attempts"][0]["error_kind"] == "budget_exhausted" for r in after)
    usage = s.summary()["model_usage"]
    assert usage["cost_usd"] == pytest.approx(spent, rel=1e-9)
    assert usage["prompt_tokens"] == sum(u["prompt_tokens"] for u in sent)
