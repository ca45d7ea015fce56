"""Game review: a finished game replayed, the player's decisions judged by the ensemble of the engine's own search.

:func:`review_game` rebuilds a stored game from its deal and its moves (the engine is deterministic) and, at each
of the player's decisions worth a look (:func:`worth_reviewing`), asks the ensemble what it would have played
(``search.ensemble.ensemble_vote``: the engine's VeryHard AI on a few honest copies of what the player could see,
the action most copies chose). Each reviewed decision records the share of the vote the move played got, the
ensemble's choice and its share, and, where the copies disagree or the choice is not the move played, the value
gap: the engine's evaluation after the ensemble's choice and after the move played, on the vote's own copies
(``Vote.states``), squashed to 0..1 the way the search does (``search.evaluation.win_probability``), averaged.

**What is a mistake** (:func:`mark_mistakes`, ``judge="ensemble"``): a move the ensemble clearly rejects --

- at least ``min_votes`` copies voted (no fallback to the real game, not a forced decision), and
- the move played (or an equivalent one: another copy of the same card) got at most ``played_share`` (0.25) of
  the vote, and the ensemble's choice at least ``best_share`` (0.4: two lands splitting the copies' votes are
  still a clear "play a land"), and
- where the vote is split on it (the move played got some votes), the engine's evaluation does not side with the
  move played: the value gap ``loss`` = value after the choice - value after the move played is known and >= 0.

A mistake is shown with the ensemble's choice as the better line. So a skipped land drop (a pass in one's own main
phase with a land playable and nothing on the stack: VeryHard plays the land on every copy), a missed attack or a
wasted removal is marked. The old judge (``judge="search"``: the advisor's search with ``simulations`` per
candidate move, a mistake when its choice is worth ``margin`` more than the move played) is kept for reviews
stored with it; with 2 simulations it judged "Pass priority" and "Play Island" equal on turn 1.

Hidden information: every copy's hidden cards (the opponent's hand, both libraries) are re-dealt from what the
player could not see at that moment (``engine.determinize``), a copy's choice naming a card the player could not
see is discarded (the ensemble), and every text naming such a card is redacted (``seatview``), as the live
advisor does.

Pure: no Django; imports the engine, the ensemble, the advisor (the old judge), the players' notion of a decision
worth searching, the value model (the caller's learned models: ``review_game(..., models=...)``, a
``search.evaluation.SearchModels``; the shell's are the registry's active versions, ``gameplay.models_in_use``;
without them the shipped ones, ``learning.weights.shipped_models``) and seatview.
"""
from __future__ import annotations

import json
import random
import time
from dataclasses import asdict, dataclass
from typing import Callable, Iterator, Sequence

from gameplay.core.search.advisor import LEVELS, recommend
from gameplay.core.engine.adapter import MAIN_PHASES, Action, EngineError, Game, determinize
from gameplay.core.matches.players import worth_searching
from gameplay.core.search.ensemble import EnsembleConfig, ensemble_vote
from gameplay.core.search.evaluation import SearchModels, win_probability
from gameplay.core.search.pruning import ObjectLookup, prune_actions, signature
from gameplay.core.search.base import Budget
from gameplay.core.engine.seatview import hidden_names, humanize, recommendation_dict, redact_names
from gameplay.core.learning.weights import shipped_models
from gameplay.core.learning.value import position_estimate

JUDGES = ("ensemble", "search")


@dataclass
class ReviewSettings:
    """How the review judges: ``judge`` "ensemble" (the engine's ``ensemble_level`` AI on ``copies`` honest
    copies, stopping once ``settle`` agree, ``workers`` at once; the mistake rule's ``played_share``,
    ``best_share``, ``min_votes``; the value gap on ``value_copies`` of the vote's copies) or "search" (the old
    judge: the advisor's ``level`` with ``simulations`` per candidate move within ``seconds``, a mistake at
    ``margin``). Both: at most ``max_decisions`` decisions judged; ``determinizations`` copies for the win
    estimate. Stored with each review (a stored review's settings without the newer fields read as the defaults)."""

    judge: str = "ensemble"
    ensemble_level: str = "VeryHard"
    copies: int = 6
    settle: int = 4
    workers: int = 2
    played_share: float = 0.25  # a mistake: the move played got at most this share of the vote...
    best_share: float = 0.4     # ...the ensemble's choice at least this...
    min_votes: int = 3          # ...of at least this many copies' votes
    value_copies: int = 3       # the vote's copies on which the value gap is measured
    level: str = "flat"  # the old judge: flat Monte Carlo, every candidate move on the same re-deals
    seconds: float = 6.0
    simulations: int = 2  # per candidate move (the old judge)
    max_decisions: int = 40
    margin: float = 0.1   # the old judge's value gap that makes a mistake
    determinizations: int = 4  # copies the value model averages for the win estimate

    def __post_init__(self):
        if self.judge not in JUDGES:
            raise ValueError(f"judge must be one of {', '.join(JUDGES)}, not {self.judge!r}")
        if self.judge == "ensemble" and not 1 <= self.min_votes <= self.copies:
            raise ValueError(f"min_votes must be between 1 and copies ({self.copies}), not {self.min_votes}")

    def ensemble(self) -> EnsembleConfig:
        return EnsembleConfig(level=self.ensemble_level, copies=self.copies, settle=min(self.settle, self.copies),
                              workers=self.workers)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, stored: dict | None) -> "ReviewSettings":
        """A review's stored settings; keys this version does not know are left out (a newer or older review)."""
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in (stored or {}).items() if k in known})


def positions(engine, decks: Sequence[Sequence[str]], moves: Sequence[Sequence], *, seed: int, first_player: int,
              seat: int) -> Iterator[tuple[int, Game, str]]:
    """Replay the game move by move; before each move of ``seat``, yield (move index, the game, the move's
    key). The game is the live replay: read it before asking for the next position."""
    game = engine.new_game(list(decks[0]), list(decks[1]), seed=seed, first_player=first_player)
    for index, (who, key) in enumerate(moves):
        if who == seat:
            yield index, game, key
        offered = {a.key: a for a in game.legal_actions(who)}
        game.apply(who, offered[key] if key in offered else game.engine_action(who, _payload(key)))


def _payload(key: str) -> dict:
    return json.loads(key)


def worth_reviewing(game: Game, seat: int, legal: list[Action]) -> bool:
    """A real choice: more than one distinct action, and either something on the stack to answer or a
    decision the search players search (main-phase plays of the active player, attacks, blocks)."""
    if len(legal) < 2 or len(prune_actions(game, legal)) < 2:
        return False
    return game.stack_size() > 0 or worth_searching(game, seat)


def skipped_land_drops(engine, decks: Sequence[Sequence[str]], moves: Sequence[Sequence], *, seed: int,
                       first_player: int, seat: int) -> list[int]:
    """The indexes of ``seat``'s moves that skipped a land drop: a pass in its own main phase, nothing on the
    stack, a land among its legal actions (the mistake every review must mark)."""
    out = []
    for index, game, key in positions(engine, decks, moves, seed=seed, first_player=first_player, seat=seat):
        if (_payload(key).get("type") == "PassPriority" and game.active_player() == seat and game.stack_size() == 0
                and game.phase in MAIN_PHASES and any(a.kind == "PlayLand" for a in game.legal_actions(seat))):
            out.append(index)
    return out


def mark_mistakes(decisions: list[dict], margin: float, *, played_share: float = 0.25, best_share: float = 0.4,
                  min_votes: int = 3) -> list[dict]:
    """Mark each decision a mistake or not (``mistake``) and set its ``loss`` (the choice's value - the played
    move's, None when either is unknown).

    A decision judged by the ensemble (it has ``played_share``): the rule of the module's docstring. A decision
    judged by the old search: the advisor's choice worth at least ``margin`` more than the move played. The
    player's taking the judge's choice, or an unknown value where one is needed, is never a mistake."""
    for d in decisions:
        best, played = d.get("best_value"), d.get("played_value")
        known = best is not None and played is not None
        d["loss"] = round(best - played, 4) if known else None
        if "played_share" in d:
            d["mistake"] = bool(
                not d.get("same") and not d.get("fallback") and (d.get("votes") or 0) >= min_votes
                and d["played_share"] <= played_share and (d.get("best_share") or 0) >= best_share
                and (d["played_share"] == 0 or (known and best - played >= 0)))
        else:
            d["mistake"] = bool(known and d.get("best_key") != d.get("played_key") and best - played >= margin)
    return decisions


def review_game(engine, decks: Sequence[Sequence[str]], moves: Sequence[Sequence], *, seed: int, first_player: int,
                seat: int, settings: ReviewSettings | None = None,
                on_progress: Callable[[int, int], None] | None = None, models: SearchModels | None = None) -> dict:
    """The review of a finished game for ``seat``: the win estimate at the start of each of its turns, each
    reviewed decision (played vs the judge's choice, the vote's shares and the values, the better line) and the
    mistakes.

    ``decks``: seat 0's and seat 1's main decks, one name per copy; ``moves``: [seat, action key] in order, as
    the game recorded them. ``on_progress(done, total)`` is called as the decisions are judged. ``models``: the
    learned models (the value model of the win estimates, and the old judge's search's; None: ``shipped_models()``).
    Raises EngineError when the game cannot be rebuilt."""
    settings = settings or ReviewSettings()
    models = models or shipped_models()
    rng = random.Random(f"review:{seed}:{seat}")
    total = sum(1 for who, _ in moves if who == seat)
    turns: dict[int, float] = {}
    decisions: list[dict] = []
    skipped = 0
    started = time.perf_counter()
    for done, (index, game, key) in enumerate(positions(engine, decks, moves, seed=seed, first_player=first_player,
                                                        seat=seat), start=1):
        legal = game.legal_actions(seat)
        state = None
        if game.turn not in turns:
            state = game.state()
            estimate = position_estimate(engine, state, seat, rng, model=models.leaf_model,
                                         determinizations=settings.determinizations)
            if estimate is not None:
                turns[game.turn] = round(estimate, 4)
        if worth_reviewing(game, seat, legal):
            if len(decisions) >= settings.max_decisions:
                skipped += 1
            else:
                judge = _judge_decision if settings.judge == "ensemble" else _review_decision
                decision = judge(engine, game, seat, key, legal, state or game.state(), settings, rng, models)
                if decision is not None:
                    decision["move"] = index
                    decisions.append(decision)
        if on_progress is not None:
            on_progress(done, total)
    mark_mistakes(decisions, settings.margin, played_share=settings.played_share, best_share=settings.best_share,
                  min_votes=settings.min_votes)
    return {"seat": seat, "judge": settings.judge, "turns": [{"turn": t, "estimate": e} for t, e in sorted(turns.items())],
            "decisions": decisions, "mistakes": sum(d["mistake"] for d in decisions), "reviewed": len(decisions),
            "not_reviewed": skipped, "seconds": round(time.perf_counter() - started, 2),
            "settings": settings.to_dict()}


def _judge_decision(engine, game: Game, seat: int, key: str, legal: list[Action], state: dict,
                    settings: ReviewSettings, rng: random.Random, models: SearchModels) -> dict | None:
    """One decision judged by the ensemble: the vote, the shares of the move played and of the choice (equivalent
    actions counted as one), and the value gap on the vote's copies when the vote is split or the choice is not
    the move played."""
    played = next((a for a in legal if a.key == key), None)
    if played is None:
        return None
    names = hidden_names(state, seat, game.observation(seat))
    vote = ensemble_vote(game, seat, settings.ensemble(), rng, legal=legal)
    lookup = ObjectLookup(game)
    by_key = {a.key: a for a in legal}

    def sig(k: str, action: Action | None = None) -> str:
        action = action or by_key.get(k)
        return signature(action, lookup) if action is not None else k

    played_sig = sig(key, played)
    played_share = round(sum(b["share"] for b in vote.ballots if b["votes"] and sig(b["key"]) == played_sig), 4)
    best = vote.action or played
    same = sig(best.key, best) == played_sig
    best_share = played_share if same else vote.share(best.key)

    def shown(label: str) -> str:
        return humanize(redact_names(label, names), seat)

    played_value = best_value = None
    if not same and vote.states:
        played_value, best_value = _values(engine, vote.states[:max(1, settings.value_copies)], seat, played, best)
    estimate = position_estimate(engine, state, seat, rng, model=models.leaf_model,
                                 determinizations=settings.determinizations)
    return {"turn": game.turn, "phase": game.phase, "estimate": None if estimate is None else round(estimate, 4),
            "played": shown(played.plain), "played_key": key, "played_share": played_share,
            "played_value": played_value, "best": shown(best.plain), "best_key": best.key, "best_share": best_share,
            "best_value": best_value, "same": same, "line": [shown(best.plain)], "votes": vote.copies,
            "split": vote.split, "fallback": vote.fallback, "refused": vote.refused, "cut_off": vote.cut_off,
            "seconds": round(vote.seconds, 3),
            "alternatives": [{"label": shown(b["label"]), "votes": b["votes"], "share": b["share"]}
                             for b in vote.ballots if b["votes"]],
            "forced": vote.forced}


def _values(engine, states: list[dict], seat: int, *actions: Action) -> tuple[float | None, ...]:
    """Each action's value for ``seat``: the engine's evaluation of each copy after the action, squashed to 0..1
    (``win_probability``), averaged over the copies that take it; None where no copy does."""
    out = []
    for action in actions:
        values = []
        for state in states:
            try:
                copy = engine.load(state)
                copy.apply(seat, copy.engine_action(seat, json.loads(action.key)))
                values.append(win_probability(copy.evaluate(seat)))
            except (EngineError, ValueError, TypeError, KeyError):
                continue
        out.append(round(sum(values) / len(values), 4) if values else None)
    return tuple(out)


def _review_decision(engine, game: Game, seat: int, key: str, legal: list[Action], state: dict,
                     settings: ReviewSettings, rng: random.Random, models: SearchModels) -> dict | None:
    """One decision judged by the old search: the advisor's search on a re-dealt copy, with the move played kept
    among its candidates and ``settings.simulations`` for each candidate."""
    level = LEVELS[settings.level]
    played = next((a for a in legal if a.key == key), None)
    if played is None:
        return None
    candidates = len(prune_actions(game, legal))
    cap = level["config"].max_candidates
    budget = Budget(seconds=settings.seconds, simulations=settings.simulations * min(candidates, (cap or candidates) + 1))
    names = hidden_names(state, seat, game.observation(seat))
    started = time.perf_counter()
    try:
        copy = engine.load(determinize(state, seat, rng))
        rec = recommend(copy, seat, algorithm=level["algorithm"], budget=budget, seed=rng.randrange(2 ** 31),
                        config=level["config"], include=[played], models=models)
    except EngineError:
        return None  # a position the engine cannot copy back (docs/game-advice.md): not reviewed
    estimate = position_estimate(engine, state, seat, rng, model=models.leaf_model,
                                 determinizations=settings.determinizations)
    shown = recommendation_dict(rec, {a.key for a in legal}, names, seat, estimate)
    values = {a["key"]: a["value"] for a in shown["alternatives"]}
    return {"turn": game.turn, "phase": game.phase, "estimate": shown["win_estimate"],
            "played": humanize(redact_names(played.plain, names), seat), "played_key": key,
            "played_value": values.get(key), "best": shown["action"]["label"], "best_key": rec.action.key,
            "best_value": values.get(rec.action.key), "line": shown["line"],
            "alternatives": [{k: a[k] for k in ("label", "visits", "value")} for a in shown["alternatives"]],
            "forced": shown["forced"], "seconds": round(time.perf_counter() - started, 3)}


__all__ = ["JUDGES", "ReviewSettings", "mark_mistakes", "positions", "review_game", "skipped_land_drops",
           "worth_reviewing"]
