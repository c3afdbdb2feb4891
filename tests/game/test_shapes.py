"""The shape comparator (tests/game/shapes.py) and the sample classifier (variants.py)."""

from __future__ import annotations

import json

import pytest

from .shapes import (
    SAMPLES,
    Variance,
    compare,
    entity_id_mismatches,
    index_mismatches,
    load_variance_file,
    skeleton,
    variance_for,
)
from .variants import classify, coverage_table, required_samples, sample_names

SAMPLE = {
    "state_type": "monster",
    "run": {"act": 1, "floor": 2},
    "player": {
        "hp": 5,
        "counter": None,
        "potions": [{"id": "A", "slot": 0}],
        "items": [{"category": "card", "card_id": "X"}, {"category": "card_removal"}],
    },
}


def doc(**changes):
    """A deep copy of SAMPLE whose player block is updated with ``changes``."""
    copy = json.loads(json.dumps(SAMPLE))
    copy["player"].update(changes)
    return copy


def test_identical_shapes_have_no_mismatch_and_values_do_not_matter():
    other = doc(hp=70, potions=[{"id": "B", "slot": 2}, {"id": "C", "slot": 1}])
    assert compare(other, SAMPLE) == []


def test_a_missing_key_is_named_by_its_path():
    actual = doc()
    del actual["run"]["floor"]
    assert compare(actual, SAMPLE) == ["$.run.floor: missing key"]


def test_an_extra_key_is_named_by_its_path():
    actual = doc(energy=3)
    assert compare(actual, SAMPLE) == ["$.player.energy: extra key (the sample has no 'energy' here)"]


def test_null_and_absent_are_different():
    absent = doc()
    del absent["player"]["counter"]
    assert compare(absent, SAMPLE) == ["$.player.counter: missing key"]
    assert compare(doc(hp=None), SAMPLE) == ["$.player.hp: null, the sample has integer (not nullable here)"]
    assert compare(doc(counter=3), SAMPLE) == ["$.player.counter: integer, the sample has null"]


def test_a_wrong_type_is_reported_and_booleans_are_not_integers():
    assert compare(doc(hp="5"), SAMPLE) == ["$.player.hp: string, the sample has integer"]
    assert compare(doc(hp=True), SAMPLE) == ["$.player.hp: boolean, the sample has integer"]
    assert compare(doc(hp=5.5), SAMPLE) == ["$.player.hp: number, the sample has integer"]
    assert compare(doc(potions={}), SAMPLE) == ["$.player.potions: object, the sample has array"]


def test_every_list_element_is_checked_and_named_by_its_index():
    actual = doc(potions=[{"id": "A", "slot": 0}, {"id": "B", "slot": "1"}, {"id": "C"}])
    assert compare(actual, SAMPLE) == [
        "$.player.potions[1].slot: string, the sample has integer",
        "$.player.potions[2].slot: missing key",
    ]


def test_list_elements_match_one_of_the_samples_kinds_else_the_closest_is_reported():
    fine = doc(items=[{"category": "card_removal"}, {"category": "card", "card_id": "Y"}])
    assert compare(fine, SAMPLE) == []
    bad = doc(items=[{"category": "card", "card_id": 7}])
    assert compare(bad, SAMPLE) == ["$.player.items[0].card_id: integer, the sample has string"]


def test_an_empty_sample_list_only_matches_an_empty_list():
    expected = {"items": []}
    assert compare({"items": []}, expected) == []
    assert compare({"items": [1]}, expected) == ["$.items: 1 element(s), the sample's list is always empty"]


def test_variance_allows_exactly_the_declared_absences_and_nulls():
    variance = Variance(
        conditional=("$.player.potions[].slot",), nullable=(("$.player.counter", "integer"), ("*.id", "string"))
    )
    actual = doc(counter=4, potions=[{"id": None}])
    assert compare(actual, SAMPLE, variance) == []
    assert compare(doc(counter="4"), SAMPLE, variance) == [
        "$.player.counter: string, the sample has null (nullable integer)"
    ]
    no_floor = doc()
    del no_floor["run"]["floor"]
    assert compare(no_floor, SAMPLE, variance) == ["$.run.floor: missing key"]


def test_the_variance_file_is_well_formed_and_names_existing_paths():
    document = load_variance_file()
    assert document["mod_commit"] == "2fb53908301a108dac9bf665e88be7a5db12ee4c"
    for name in document["not_required_of_builtin"]:
        assert (SAMPLES / f"{name}.json").exists(), name
    assert "$.player.stars" in variance_for("monster", document).conditional
    assert "$.player.hand" not in variance_for("monster", document).conditional
    assert "$.player.hand" in variance_for("card_select__choose", document).conditional


@pytest.mark.parametrize("name", sample_names("state"))
def test_each_state_sample_classifies_as_itself(name):
    assert classify(json.loads((SAMPLES / f"{name}.json").read_text())) == name


def test_skeleton_keeps_types_and_list_kinds():
    assert skeleton({"a": [1, 2, "x"], "b": None}) == {"a": ["array", ['"integer"', '"string"']], "b": "null"}


# The only lists the source always builds empty (vendor/sts2mcp/README.md): any other empty
# list in a sample would wrongly forbid elements (an empty sample list matches only []).
ALWAYS_EMPTY = {
    ("fake_merchant__fight_started", "$.fake_merchant.shop.items"),
    ("fake_merchant__not_ready", "$.fake_merchant.shop.items"),
    ("map__start", "$.map.visited"),
    ("shop__not_ready", "$.shop.items"),
}


def empty_lists(value, path="$"):
    if isinstance(value, dict):
        for key, item in value.items():
            yield from empty_lists(item, f"{path}.{key}")
    elif isinstance(value, list):
        if not value:
            yield path
        for item in value:
            yield from empty_lists(item, path + "[]")


def test_samples_hold_an_element_in_every_list_the_source_can_fill():
    found = {
        (p.stem, path)
        for p in SAMPLES.glob("*.json")
        if p.stem != "variance"
        for path in empty_lists(json.loads(p.read_text()))
    }
    assert found == ALWAYS_EMPTY


# Lists whose elements legitimately come in several shapes (an element of a real list must
# match one of them); in every other list all sample elements share one shape, so a stray
# key in one sample element cannot silently become an accepted alternative.
KINDED_LISTS = {
    "$.crystal_sphere.cells": "hidden cells have no item_type/is_good (SB 2187-2191)",
    "$.event.options": "relic_name/relic_description only for an option with a relic (SB 1388)",
    "$.map.nodes": "the boss node carries id/name (SB 1728-1730)",
    "$.player.hand": "unplayable_reason is null for a playable card (SB 1266)",
    "$.player.relics": "counter is null unless the relic shows one (SB 1195)",
    "$.rewards.items": "gold and potion rewards add fields (SB 1809-1816)",
    "$.shop.items": "each category has its own fields (SB 1548-1630)",
}


def kinded_lists(value, path="$"):
    if isinstance(value, dict):
        for key, item in value.items():
            yield from kinded_lists(item, f"{path}.{key}")
    elif isinstance(value, list):
        if len({json.dumps(skeleton(v), sort_keys=True) for v in value}) > 1:
            yield path
        for item in value:
            yield from kinded_lists(item, path + "[]")


def test_only_the_declared_lists_hold_elements_of_several_shapes():
    found = {
        path for p in SAMPLES.glob("*.json") if p.stem != "variance" for path in kinded_lists(json.loads(p.read_text()))
    }
    assert found == set(KINDED_LISTS)


def test_indexes_must_be_list_positions():
    state = {
        "map": {"next_options": [{"index": 0, "leads_to": [{"col": 1}]}, {"index": 2}]},
        "bundles": [{"index": 0, "cards": [{"index": 1}]}],
    }
    assert index_mismatches(state) == [
        "$.map.next_options[1].index: 2, its position is 1",
        "$.bundles[0].cards[0].index: 1, its position is 0",
    ]


@pytest.mark.parametrize("name", sample_names("state"))
def test_samples_number_their_lists_from_zero(name):
    assert index_mismatches(json.loads((SAMPLES / f"{name}.json").read_text())) == []


def test_entity_ids_count_living_enemies_per_monster_id():
    def battle(*ids):
        return {"battle": {"enemies": [{"entity_id": i} for i in ids]}}

    assert entity_id_mismatches(battle("GNAT_0", "SLIME_0", "GNAT_1")) == []
    assert entity_id_mismatches(battle("GNAT_1")) == [
        "$.battle.enemies[0].entity_id: 'GNAT_1', the source numbers it 'GNAT_0'"
    ]
    assert entity_id_mismatches({"state_type": "map"}) == []


def test_the_coverage_table_marks_missing_samples_and_unknown_names():
    table = coverage_table({"map": 3, "card_select__NDeckEnchantSelectScreen": 1}, ["map", "rest_site"]).splitlines()
    assert [line.split() for line in table] == [
        ["map", "3"],
        ["rest_site", "never"],
        ["card_select__NDeckEnchantSelectScreen", "1", "(no", "sample)"],
    ]
    assert "reply__http_409_singleplayer" not in required_samples()
    assert "menu__main" in required_samples()
