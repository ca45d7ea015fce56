"""What one seat may see, as JSON (pure: no Django). The hidden-information rules of the play page:
the opponent's hand and both libraries are hidden; a log entry of the opponent that names a hidden
object is replaced by a neutral text; a text naming a hidden card (a name not public anywhere) is
redacted; seat numbers read "you" / "the AI" from the person's side.
"""
from __future__ import annotations

import re

_SKIP_KEYS = ("player", "index", "count", "amount", "mode", "number")


def object_ids(data, key: str = "") -> set[int]:
    """Object ids named in an action's data (numbers under keys that are not players, indexes or counts)."""
    if isinstance(data, bool):
        return set()
    if isinstance(data, int):
        return set() if key == "x" or any(s in key for s in _SKIP_KEYS) else {data}
    if isinstance(data, dict):
        return set().union(*(object_ids(v, str(k).lower()) for k, v in data.items())) if data else set()
    if isinstance(data, (list, tuple)):
        return set().union(*(object_ids(v, key) for v in data)) if data else set()
    return set()


def hidden_ids(state: dict, seat: int) -> set[int]:
    st = state["state"]
    out = set()
    for p in st["players"]:
        out.update(p.get("library") or [])
        if p["id"] != seat:
            out.update(p.get("hand") or [])
    return out


def hidden_names(state: dict, seat: int, observation: dict | None = None) -> set[str]:
    """Names of the cards ``seat`` cannot see (opponent's hand, both libraries) that it cannot see
    anywhere else either (a name also on the battlefield, in a graveyard, in exile, on the stack or in
    its own hand is public). Advice texts naming one of these are redacted."""
    objects = state["state"]["objects"]
    hidden = {(objects.get(str(o)) or {}).get("name") for o in hidden_ids(state, seat)}
    visible = set()
    if observation is not None:
        for p in observation["players"]:
            for zone in ("graveyard", "battlefield", "hand"):
                visible.update(c["name"] for c in p.get(zone) or [])
        visible.update(c["name"] for c in observation.get("exile") or [])
        visible.update(e["name"] for e in observation.get("stack") or [])
    return {n for n in hidden if n} - visible


_PLAYER_TARGET = re.compile(r"\bplayer ([01])\b")
_OWNED_ALONE = re.compile(r"\(player ([01])'s(?=[,)])")  # "(player 1's)", "(player 0's, 2/2)"
_OWNED = re.compile(r"\bplayer ([01])'s\b")


def humanize(text: str, seat: int) -> str:
    """Seat numbers in a label -> "you" / "the AI", from the person's side: "Target Novice Inspector (player 1's)"
    reads "(the AI's)", "(player 0's, 2/2)" reads "(yours, 2/2)", "player 0's graveyard" reads "your graveyard"."""
    text = _OWNED_ALONE.sub(lambda m: "(yours" if int(m.group(1)) == seat else "(the AI's", text)
    text = _OWNED.sub(lambda m: "your" if int(m.group(1)) == seat else "the AI's", text)
    return _PLAYER_TARGET.sub(lambda m: "you" if int(m.group(1)) == seat else "the AI", text)


def redact_names(text: str, names: set[str]) -> str:
    return "(hidden)" if any(n in text for n in names) else text


def log_entries(raw: list[tuple], seat: int, state: dict, last_turn: int | None) -> list[dict]:
    """Turn (seat, Action, turn, extra) records into log entries ``seat`` may see; ``last_turn`` is the
    turn of the log's last entry (a "Turn N" line starts each new turn). An action reads as its label says (the
    shared text of interchangeable copies: ``Action.plain``); the other seat's, only when every object its data
    or its words name is visible to ``seat`` (a scry's label names the cards it sent to the bottom too)."""
    hidden = hidden_ids(state, seat)
    out = []
    for who, action, turn, extra in raw:
        if turn != last_turn and turn is not None:
            out.append({"turn": turn, "who": "game", "text": f"Turn {turn}", "kind": "Turn"})
            last_turn = turn
        if who == seat:
            out.append({"turn": turn, "who": "you", "text": humanize(action.plain, seat), "kind": action.kind, **extra})
            continue
        if action.kind == "PassPriority":
            continue
        text = humanize(action.plain, seat)
        if (object_ids(action.data) | set(action.objects)) & hidden:
            text = {"SelectCards": "chose cards you cannot see", "MulliganDecision": action.label}.get(
                action.kind, "made a choice you cannot see")
        out.append({"turn": turn, "who": "ai", "text": text, "kind": action.kind})
    return out


def on_one_scale(rec, estimate: float | None) -> tuple[float | None, list[dict]]:
    """The headline win estimate and the alternatives' values on one scale.

    The search scores each action by the engine's evaluation after a rollout, squashed into 0..1; the learned
    value model (``estimate``, P(win) of the position) predicts the winner twice as well but cannot tell the
    actions apart. Shown side by side they disagreed: a 25% headline beside a 0.68 value for the same move.
    With an ``estimate``, the recommended action's value *is* the estimate and every other action keeps its
    difference from it as the search measured it (clipped to 0..1), so the table reads "your chance if you
    play this". Without one, the search's own values and its estimate (its best action's value) stand."""
    alts = [dict(a) for a in (rec.alternatives or [])]
    if estimate is None:
        return rec.win_estimate, alts
    own = next((a.get("value") for a in alts if a.get("key") == rec.action.key), None)
    reference = own if own is not None else rec.win_estimate
    for a in alts:
        if a.get("value") is not None and reference is not None:
            a["search_value"] = a["value"]
            a["value"] = min(1.0, max(0.0, estimate + float(a["value"]) - float(reference)))
    return estimate, alts


# what the person is told of an ensemble level's vote (gameplay.core.search.advisor.vote_recommend)
VOTE_FIELDS = ("level", "engine_level", "copies", "max_copies", "copies_dealt", "split", "searched", "search_level",
               "fallback", "refused", "discarded", "cut_off", "tie_break", "out_of_time", "seconds", "position_by")


def recommendation_dict(rec, legal_keys: set[str] | None = None, names: set[str] | None = None,
                        seat: int | None = None, estimate: float | None = None) -> dict:
    """A Recommendation as JSON (an ensemble level's with each alternative's ``votes``/``share`` and ``vote``, how the
    copies voted; a fallback reads "decided on the real game: ..."); with ``names``, texts naming a hidden card are
    redacted; with ``seat``, player numbers read "you" / "the AI"; with ``estimate`` (the value model's P(win) of the position), the
    headline and the alternatives' values on its scale (:func:`on_one_scale`)."""
    names = names or set()
    win_estimate, alternatives = on_one_scale(rec, estimate)

    def _redact(text):
        text = redact_names(str(text), names)
        return humanize(text, seat) if seat is not None else text

    action = rec.action
    out = {
        "action": {"key": action.key, "type": action.kind, "label": _redact(action.label)},
        "line": [_redact(s) for s in (rec.line or [])],
        "win_estimate": None if win_estimate is None else round(float(win_estimate), 4),
        "alternatives": [
            {"label": _redact(a.get("label", "")), "key": a.get("key"),
             "visits": a.get("visits"), "value": None if a.get("value") is None else round(float(a["value"]), 4),
             **({"search_value": round(float(a["search_value"]), 4)} if a.get("search_value") is not None else {}),
             **({"votes": int(a["votes"]), "share": round(float(a["share"]), 4)} if a.get("share") is not None else {})}
            for a in alternatives],
        "simulations": rec.simulations, "elapsed": round(float(rec.elapsed or 0), 3),
        "algorithm": rec.algorithm, "forced": bool(rec.forced),
        "workers": int((rec.stats or {}).get("workers", 1)),
    }
    vote = (rec.stats or {}).get("vote")
    if vote is not None:  # an ensemble level: how the copies voted, and whether the search ran
        out["vote"] = {k: vote.get(k) for k in VOTE_FIELDS}
        if vote.get("fallback"):
            out["vote"]["fallback"] = f"decided on the real game: {vote['fallback']}"
    if legal_keys is not None:
        out["playable"] = action.key in legal_keys
        for alt in out["alternatives"]:
            alt["playable"] = alt["key"] in legal_keys
    return out
