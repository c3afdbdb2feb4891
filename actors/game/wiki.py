"""``GET /api/v1/wiki``: a fuzzy search over the cards and relics the active profile has
discovered, as McpMod.Wiki.cs ``HandleGetWiki`` / ``BuildWikiSearch`` answer it (the same
scores: exact name or id 1000, contained 850, else token similarity × 700 + 35 per strong
token, kept from 300).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .content import CARDS, RELICS
from .model import Card
from .views import card_info, hover_tips

if TYPE_CHECKING:
    from .engine import Game

DEFAULT_LIMIT = 10
MAX_LIMIT = 50
NO_QUERY = "query is required; wiki search does not return the full profile catalog."
BAD_TYPE = "item_type must be one of: all, card, relic."
SCOPE = "active_profile_discovered_cards_and_relics"
POLICY = (
    "Searches only cards and relics discovered by the active profile, then returns the "
    "best fuzzy matches instead of exposing the full catalog."
)
TYPES = {"": "all", "all": "all", "any": "all", "card": "card", "cards": "card", "relic": "relic", "relics": "relic"}


def search(game: Game, query: dict[str, str]) -> tuple[int, dict]:
    """``HandleGetWiki``: 400 without a query; a 200 error for a bad item type."""
    text = query.get("query") or query.get("q") or ""
    item_type = query.get("type") or query.get("item_type") or "all"
    limit = _limit(query.get("limit"))
    if not text.strip():
        return 400, {"error": NO_QUERY}
    kind = TYPES.get(item_type.strip().lower())
    if kind is None:
        return 200, {"status": "error", "error": BAD_TYPE}
    p = game.profile
    candidates = []
    if kind in ("all", "card"):
        candidates += [
            ("card", cid, CARDS[cid].name, f"card {cid} {CARDS[cid].name} {CARDS[cid].type} {CARDS[cid].rarity}")
            for cid in p.cards
            if cid in CARDS
        ]
    if kind in ("all", "relic"):
        candidates += [
            ("relic", rid, RELICS[rid].name, f"relic {rid} {RELICS[rid].name} {RELICS[rid].rarity}")
            for rid in p.relics
            if rid in RELICS
        ]
    scored = [(score(text, c), c) for c in candidates]
    scored = sorted([x for x in scored if x[0] > 0], key=lambda x: (-x[0], x[1][2].lower()))
    results = [_result(c, s) for s, c in scored[:limit]]
    return 200, {
        "status": "ok",
        "profile_id": p.profile_id,
        "query": text,
        "item_type": kind,
        "limit": limit,
        "scope": SCOPE,
        "selection_policy": POLICY,
        "counts": {
            "discovered_cards": len(p.cards),
            "discovered_relics": len(p.relics),
            "searched": len(candidates),
            "returned": len(results),
        },
        "results": results,
    }


def _limit(raw: str | None) -> int:
    try:
        value = int(raw) if raw is not None else DEFAULT_LIMIT
    except ValueError:
        value = DEFAULT_LIMIT
    return max(1, min(MAX_LIMIT, value))


def _result(candidate: tuple[str, str, str, str], value: float) -> dict:
    kind, xid, name, _ = candidate
    if kind == "relic":
        r = RELICS[xid]
        return {
            "item_type": "relic",
            "id": xid,
            "name": name,
            "score": round(value, 3),
            "rarity": r.rarity,
            "description": r.description,
            "keywords": hover_tips(r.keywords),
        }
    d = CARDS[xid]
    upgradable = d.type not in ("Status", "Curse")
    return {
        "item_type": "card",
        "id": xid,
        "name": name,
        "score": round(value, 3),
        "rarity": d.rarity,
        "type": d.type,
        "is_upgradable": upgradable,
        "current_upgrade_level": 0,
        "max_upgrade_level": 1 if upgradable else 0,
        "base": _variant(xid, False, upgradable),
        "upgraded": _variant(xid, True, upgradable) if upgradable else None,
    }


def _variant(cid: str, upgraded: bool, upgradable: bool) -> dict:
    info = card_info(Card(0, cid, upgraded))
    return {
        "variant": "upgraded" if upgraded else "base",
        "id": info["id"],
        "name": info["name"],
        "type": info["type"],
        "rarity": info["rarity"],
        "cost": info["cost"],
        "star_cost": info["star_cost"],
        "description": info["description"],
        "is_upgraded": upgraded,
        "is_upgradable": upgradable and not upgraded,
        "current_upgrade_level": 1 if upgraded else 0,
        "max_upgrade_level": 1 if upgradable else 0,
        "keywords": info["keywords"],
    }


# ----- ScoreWikiCandidate ---------------------------------------------------------------
def _normal(value: str) -> str:
    return re.sub(r"[^0-9a-z]+", " ", value.lower()).strip()


def _compact(value: str) -> str:
    return _normal(value).replace(" ", "")


def score(query: str, candidate: tuple[str, str, str, str]) -> float:
    """``ScoreWikiCandidate``: 0 for no match."""
    _, xid, name, search_text = candidate
    q, text = _normal(query), _normal(search_text)
    if not q or not text:
        return 0.0
    qc = _compact(q)
    if qc in (_compact(name), _compact(xid)):
        return 1000.0
    if qc in _compact(name) or qc in _compact(xid):
        return 850.0
    q_tokens = list(dict.fromkeys(q.split()))
    c_tokens = list(dict.fromkeys(text.split()))
    best = [max(_similarity(a, b) for b in c_tokens) for a in q_tokens]
    value = sum(best) / len(best) * 700 + 35 * sum(1 for b in best if b >= 0.72)
    return value if value >= 300 else 0.0


def _similarity(a: str, b: str) -> float:
    if a == b:
        return 1.0
    if len(b) >= 3 and (a in b or b in a):
        return 0.88
    longest = max(len(a), len(b))
    return 0.0 if longest == 0 else 1.0 - _levenshtein(a, b) / longest


def _levenshtein(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(current[j - 1] + 1, previous[j] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]
