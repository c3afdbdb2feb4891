"""The agent's question (``agent_action``): one schema alternative per legal action, arguments
limited to the listed values, errors that name the answer's own choice, a template that renders
or is refused, and the stand-in answering it legally."""

from __future__ import annotations

import random

import pytest

from actors.model_client.answers import envelope_schema, parse_answers
from actors.model_client.errors import OffSchemaAnswer, QuestionError
from actors.model_client.questions import build_questions, template_problem
from actors.model_client.schema import check_schema, validate
from actors.model_client.standin import example

TEMPLATE = {"name": "t", "sha256": "0" * 64, "text": "$screen_type\n$screen\n$memory\n$actions\n$feedback"}
ACTIONS = [
    {"action": "play_card", "args": {"card_index": [0, 2], "target": ["JAW_WORM_0"]}},
    {"action": "play_card", "args": {"card_index": [1]}},
    {"action": "end_turn", "args": {}},
]


def question(**kw):
    item = {
        "screen": '{"state_type":"monster"}',
        "screen_type": "monster",
        "actions": ACTIONS,
        "memory": ["map: choose_map_node(index=0) -> accepted; changed: screen map->monster"],
        "template": TEMPLATE,
        **kw,
    }
    return build_questions("agent_action", [item])


def answer(**value):
    return {"q0": {**value, "confidence": 0.5, "reason": "r"}}


def test_each_legal_action_is_one_alternative_and_only_listed_values_pass():
    qs = question()
    schema = envelope_schema(qs)
    check_schema(schema)
    assert len(schema["properties"]["q0"]["anyOf"]) == 3
    ok = [
        answer(action="play_card", card_index=2, target="JAW_WORM_0"),
        answer(action="play_card", card_index=1),
        answer(action="end_turn"),
    ]
    for payload in ok:
        assert validate(payload, schema) == [], payload
        assert parse_answers(payload, qs, 0.6)[0].value["action"] == payload["q0"]["action"]
    bad = {
        "$.q0.card_index: must be one of [0, 2], got 7": answer(action="play_card", card_index=7, target="JAW_WORM_0"),
        "$.q0.action: must be one of ['play_card', 'end_turn'], got 'fly'": answer(action="fly"),
        "$.q0: unexpected property 'target'": answer(action="end_turn", target="JAW_WORM_0"),
    }
    for said, payload in bad.items():
        with pytest.raises(OffSchemaAnswer) as err:
            parse_answers(payload, qs, 0.6)
        assert said in str(err.value), str(err.value)
    # an untargeted card with a target matches neither play_card alternative
    with pytest.raises(OffSchemaAnswer):
        parse_answers(answer(action="play_card", card_index=1, target="JAW_WORM_0"), qs, 0.6)


def test_the_prompt_renders_the_template_and_the_state_names_it_by_hash():
    (q,) = question(feedback=["$.card_index: must be one of [0, 2], got 7"])
    text = q.prompt()
    assert "monster" in text and '- play_card: card_index one of [0, 2], target one of ["JAW_WORM_0"]' in text
    assert "could not be used" in text and "got 7" in text and "choose_map_node" in text
    state = q.state()
    assert state["template"] == {"name": "t", "sha256": "0" * 64} and "text" not in state["template"]
    assert state["feedback"] and state["actions"][2]["action"] == "end_turn"


def test_templates_that_do_not_render_and_questions_without_actions_are_refused():
    assert template_problem("$screen $nonsense").startswith("does not render: unknown placeholder $nonsense")
    assert "does not render" in template_problem("costs $5")
    assert template_problem("   ") == "the template is empty"
    assert template_problem("costs $$5 on $screen") is None
    with pytest.raises(QuestionError, match="at least one legal action"):
        question(actions=[])
    with pytest.raises(QuestionError, match="non-empty list"):
        question(actions=[{"action": "play_card", "args": {"card_index": []}}])
    with pytest.raises(QuestionError, match="template 't': does not render"):
        question(template={**TEMPLATE, "text": "$wallet"})


def test_the_stand_in_answers_every_alternative_legally():
    qs = question()
    schema = envelope_schema(qs)
    seen = set()
    for seed in range(40):
        value = example(schema, random.Random(seed))
        assert validate(value, schema) == []
        seen.add(value["q0"]["action"])
    assert seen == {"play_card", "end_turn"}
