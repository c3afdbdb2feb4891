"""A user policy in under 60 lines (docs/policy.md, tests/policy): the first thing offered
on every screen. Its memory (what was refused on this screen) lives in the hooks, so the
journal rebuilds it after a crash. ``--set policy.module=actors.policy.example_first_choice``"""
from actors.policy.base import Policy, PolicyObservation, Proposal

FIRST = {"map": ("next_options", "choose_map_node", "index"), "rewards": ("items", "claim_reward", "index"),
         "card_reward": ("cards", "select_card_reward", "card_index"),
         "event": ("options", "choose_event_option", "index"), "card_select": ("cards", "select_card", "index"),
         "hand_select": ("cards", "combat_select_card", "card_index"),
         "rest_site": ("options", "choose_rest_option", "index"),
         "relic_select": ("relics", "select_relic", "index"), "bundle_select": ("bundles", "select_bundle", "index"),
         "treasure": ("relics", "claim_treasure_relic", "index")}
CONFIRM = {"card_select": "confirm_selection", "hand_select": "combat_confirm_selection",
           "bundle_select": "confirm_bundle_selection"}
LEAVE = {"crystal_sphere": "crystal_sphere_proceed", "relic_select": "skip_relic_selection"}


class FirstChoice(Policy):
    def __init__(self, settings: dict, session: dict):
        super().__init__(settings, session)
        self.refused, self.seen = set(), None

    def observe(self, obs: PolicyObservation) -> None:
        if obs.state != self.seen:  # anything changed: old refusals no longer apply
            self.seen, self.refused = obs.state, set()

    def record_result(self, proposal: dict, result: dict) -> None:
        if result["outcome"] == "rejected":
            self.refused.add(repr((proposal["action"], proposal["parameters"])))

    def decide(self, obs: PolicyObservation) -> Proposal:
        for p in self.candidates(obs.state_type, obs.state):
            if repr((p.action, p.parameters)) not in self.refused:
                return p
        return Proposal.wait("everything here was refused; waiting for a change")

    def candidates(self, kind: str, st: dict):
        block = st if kind == "menu" else st.get(kind) or {}  # menus: fields at the top level
        if block.get("can_confirm") and kind in CONFIRM:
            yield Proposal(CONFIRM[kind], {}, "confirm")
        if kind in ("monster", "elite", "boss"):
            for enemy in (st.get("battle") or {}).get("enemies", [])[:1]:
                for card in (c for c in st["player"]["hand"] if c.get("can_play")):
                    yield Proposal("play_card", {"card_index": card["index"], "target": enemy["entity_id"]}, "play")
                yield Proposal("end_turn", {}, "nothing to play")
        names = [o if isinstance(o, str) else o["name"] for o in block.get("options", [])
                 if kind in ("menu", "game_over") and (isinstance(o, str) or o.get("enabled"))]
        if kind == "menu" and block.get("characters"):  # pick the first character, then embark
            names = ["embark"] if "embark" in names else [block["characters"][0]["id"]]
        for name in (n for n in names if n not in ("back", "yes")):
            yield Proposal("menu_select", {"option": name}, "first option",
                           then_stop="run_ended" if kind == "game_over" else None)
        if block.get("in_dialogue"):  # events open in dialogue
            yield Proposal("advance_dialogue", {}, "read on")
        if kind in FIRST:
            key, action, param = FIRST[kind]
            for item in block.get(key, [])[:1]:
                yield Proposal(action, {param: item.get("index", 0)}, f"first of {key}")
        yield Proposal(LEAVE.get(kind, "proceed"), {}, "move on")
