"""Question construction, states, schemas and answer parsing."""

from __future__ import annotations

import json

import pytest

from actors.model_client import (
    QUESTION_KINDS,
    ButtonsQuestion,
    CardRewardQuestion,
    EventOptionQuestion,
    MapNodeQuestion,
    OffSchemaAnswer,
    QuestionError,
)
from actors.model_client.answers import envelope_schema, parse_answers
from actors.model_client.schema import check_schema

from .conftest import CARDS, tiny_png


def all_questions():
    return [
        CardRewardQuestion(cards=CARDS, evidence={"deck": ["Strike"] * 5}),
        EventOptionQuestion(
            event={"name": "Big Fish"},
            options=[
                {"index": 0, "title": "Banana"},
                {"index": 1, "title": "Donut", "is_locked": True},
                {"index": 2, "title": "Box"},
            ],
        ),
        MapNodeQuestion(next_options=[{"index": 0, "type": "Monster", "col": 1, "row": 2}]),
        ButtonsQuestion(screenshot_png=tiny_png(), goal="open the menu"),
    ]


def test_registry_knows_every_kind():
    assert set(QUESTION_KINDS) == {"card_reward", "event_option", "map_node", "buttons", "agent_action"}


@pytest.mark.parametrize("question", all_questions(), ids=lambda q: q.kind)
def test_state_is_json_and_schema_is_in_the_subset(question):
    state = question.state()
    assert json.loads(json.dumps(state)) == state
    check_schema(question.answer_schema())
    assert question.prompt()
    assert question.answer_schema()["required"] == [question.choice_field, "confidence", "reason"]


def test_locked_event_options_cannot_be_chosen():
    question = all_questions()[1]
    assert question.answer_schema()["properties"]["option_index"]["enum"] == [0, 2]
    with pytest.raises(OffSchemaAnswer):
        parse_answers({"q0": {"option_index": 1, "confidence": 0.9, "reason": ""}}, [question], 0.5)


def test_card_reward_skip_only_when_allowed():
    with pytest.raises(OffSchemaAnswer):
        parse_answers(
            {"q0": {"card_index": None, "confidence": 0.9, "reason": ""}},
            [CardRewardQuestion(cards=CARDS, can_skip=False)],
            0.5,
        )
    [answer] = parse_answers(
        {"card_index": None, "confidence": 0.9, "reason": ""}, [CardRewardQuestion(cards=CARDS)], 0.5
    )  # bare answer tolerated
    assert answer.choice is None and answer.gated is False


def test_gate_is_strictly_below():
    question = MapNodeQuestion(next_options=[{"index": 3}])
    [at] = parse_answers({"q0": {"node_index": 3, "confidence": 0.5, "reason": ""}}, [question], 0.5)
    [below] = parse_answers({"q0": {"node_index": 3, "confidence": 0.49, "reason": ""}}, [question], 0.5)
    assert (at.gated, below.gated) == (False, True)
    assert below.to_record()["answer_gate_scope"] == "default_helper_not_policy_gate"


def test_options_without_index_use_their_position_and_are_copied():
    options = [{"type": "Shop"}, {"type": "Elite"}]
    question = MapNodeQuestion(next_options=options)
    options[0]["type"] = "changed later"
    assert [o["index"] for o in question.next_options] == [0, 1]
    assert question.state()["next_options"][0]["type"] == "Shop"


def test_screenshot_state_is_a_hash_not_bytes():
    png = tiny_png()
    state = ButtonsQuestion(screenshot_png=png).state()
    assert set(state["screenshot"]) == {"sha256", "bytes", "media_type"}
    assert "\\x89PNG" not in repr(ButtonsQuestion(screenshot_png=png))  # repr hides bytes


@pytest.mark.parametrize(
    "build, fragment",
    [
        (lambda: CardRewardQuestion(cards=[]), "at least one option"),
        (lambda: CardRewardQuestion(cards=["Strike"]), "must be a mapping"),
        (lambda: CardRewardQuestion(cards=[{"index": 0}, {"index": 0}]), "duplicate indices"),
        (lambda: CardRewardQuestion(cards=[{"index": "0"}]), "must be an integer"),
        (lambda: CardRewardQuestion(cards=[{"index": 0}], evidence={"x": object()}), "JSON-serializable"),
        (lambda: EventOptionQuestion(options=[{"locked": True}]), "every event option is locked"),
        (lambda: ButtonsQuestion(screenshot_png=b"GIF89a"), "PNG"),
        (lambda: ButtonsQuestion(screenshot_png=tiny_png(), buttons=("x",)), "subset"),
        (lambda: ButtonsQuestion(screenshot_png=tiny_png(), max_presses=0), "max_presses"),
    ],
)
def test_unaskable_questions_raise_question_error(build, fragment):
    with pytest.raises(QuestionError, match=fragment):
        build()


def test_envelope_has_one_property_per_question():
    questions = all_questions()[:1] * 3
    schema = envelope_schema(questions)
    assert schema["required"] == ["q0", "q1", "q2"]
    assert schema["additionalProperties"] is False


def test_build_questions_from_plain_mappings():
    from actors.model_client import build_questions

    png = tiny_png()
    [card] = build_questions("card_reward", [{"cards": CARDS, "can_skip": False}])
    assert card == CardRewardQuestion(cards=CARDS, can_skip=False)
    shots = build_questions("buttons", [{"goal": "a"}, {"goal": "b", "image": 0}], [png, png])
    assert [q.screenshot_png for q in shots] == [png, png]
    for kind, items, images, fragment in [
        ("poker", [{}], [], "unknown question kind 'poker'"),
        ("map_node", [{"next_options": [{"index": 0}], "colour": 1}], [], "unknown fields"),
        ("map_node", ["x"], [], "must be a mapping"),
        ("buttons", [{"goal": "a"}], [], "no image 0 among 0 images"),
    ]:
        with pytest.raises(QuestionError, match=fragment):
            build_questions(kind, items, images)


def test_buttons_memory_and_feedback_are_shown_and_recorded():
    question = ButtonsQuestion(
        screenshot_png=tiny_png(),
        goal="open the door",
        memory=["frame 12: press(buttons=up) -> accepted; changed: the picture"],
        feedback=["buttons[0]: must be one of ['a'], got 'turbo'"],
    )
    state = question.state()
    assert state["memory"] == ["frame 12: press(buttons=up) -> accepted; changed: the picture"]
    assert state["feedback"] == ["buttons[0]: must be one of ['a'], got 'turbo'"]
    prompt = question.prompt()
    assert "- frame 12: press(buttons=up)" in prompt and "could not be used" in prompt and "'turbo'" in prompt
    bare = ButtonsQuestion(screenshot_png=tiny_png()).prompt()
    assert "(none yet)" in bare and "could not be used" not in bare
    with pytest.raises(QuestionError, match="memory must be a list of text lines"):
        ButtonsQuestion(screenshot_png=tiny_png(), memory="frame 12")
