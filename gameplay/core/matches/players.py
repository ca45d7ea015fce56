"""Players: anything that chooses an action for a seat. Used by play-vs-AI, the gauntlet and benches.

``make_player("engine:Medium")``, ``make_player("random")`` and ``make_player("search:default")``
(``SearchPlayer`` at one of the advisor's ``LEVELS``, with the caller's learned models) and
``make_player("net")`` (``NetPlayer``: the network alone, or ``net:<weights file>``) build them from a short spec string.
The learned models a search player uses are the caller's (``make_player(spec, seed, models=...)``, a
``search.evaluation.SearchModels``: the shell's are the registry's active versions, ``gameplay.models_in_use``);
without them, the shipped ones (``learning.weights.shipped_models``: the shipped value model, no network).

Pure: no Django; imports the engine, the search (pruning, base, the advisor) and learning (the network, the models
built from files) only.
"""
from __future__ import annotations

import dataclasses
import random
import time
from pathlib import Path
from typing import Callable, Protocol

from gameplay.core.search.advisor import LEVELS, VOTE_LEVELS, recommend
from gameplay.core.engine.adapter import DIFFICULTIES, ENGINE_LEVELS, MAIN_PHASES, Action, Game
from gameplay.core.engine.honest import HonestStats, honest_ai_action
from gameplay.core.learning.weights import shipped_models
from gameplay.core.learning.network import evaluator_at
from gameplay.core.search.pruning import ObjectLookup, prune_actions, signature
from gameplay.core.search.base import SIM_ERRORS, Budget, Recommendation, SearchConfig
from gameplay.core.search.ensemble import EnsembleConfig, EnsembleStats, ensemble_vote
from gameplay.core.search.evaluation import SearchModels


class Player(Protocol):
    name: str

    def choose(self, game: Game, seat: int) -> Action: ...


class RandomPlayer:
    """Uniformly random legal actions (a floor every other player must beat)."""

    def __init__(self, seed: int = 0):
        self.name = "random"
        self.rng = random.Random(seed)

    def choose(self, game: Game, seat: int) -> Action:
        return self.rng.choice(game.legal_actions(seat))


class PassPlayer:
    """Passes priority whenever it may, keeps its opening hand, else takes the first legal action (a discard to
    hand size): the player who never plays a land or a spell, whose review must mark every skipped land drop."""

    name = "pass"

    def choose(self, game: Game, seat: int) -> Action:
        legal = game.legal_actions(seat)
        return (next((a for a in legal if a.kind == "PassPriority"), None)
                or next((a for a in legal if "keep" in a.label.lower()), legal[0]))


class EnginePlayer:
    """The rules engine's built-in AI at one difficulty, deciding on an honest copy of what its seat can see
    (``honest_ai_action``: hidden cards re-dealt, a fresh engine seed from ``seed``). ``peek=True`` (the spec
    ``engine:<Level>!peek``) is the engine's AI on the real game, reading every zone: a bench reference only,
    never offered on the play page."""

    def __init__(self, difficulty: str = "Medium", seed: int = 0, *, peek: bool = False):
        # ``VeryHard#2``: the same AI under another name, so a benchmark can play it twice on the same jobs (the
        # engine's AI is not always reproducible from one process to the next: the yardstick's noise floor)
        difficulty, bang, flag = difficulty.partition("!")
        if bang and flag != "peek":
            raise ValueError(f"unknown engine player suffix {'!' + flag!r}; the only one is !peek")
        peek = peek or bool(bang)
        difficulty, tag, replica = difficulty.partition("#")
        if difficulty not in ENGINE_LEVELS:
            raise ValueError(f"difficulty must be one of {', '.join(ENGINE_LEVELS)}")
        self.name = f"engine:{difficulty}{tag}{replica}" + ("!peek" if peek else "")
        self.difficulty = difficulty
        self.peek = peek
        self.rng = random.Random(seed)
        self.honest = HonestStats()

    def choose(self, game: Game, seat: int) -> Action:
        if self.peek:
            action = game.ai_action(seat, self.difficulty)
        else:
            action = honest_ai_action(game, seat, self.difficulty, self.rng, self.honest)
        if action is None:  # the AI gave up on a prompt: take the first legal action
            return game.legal_actions(seat)[0]
        return action


class EnsemblePlayer:
    """The engine's AI asked on ``copies`` honest copies of each decision, the action most of them chose
    (``gameplay.core.search.ensemble``). Spec ``ensemble:<Level>:<copies>`` (``ensemble`` alone:
    ``ensemble:VeryHard:8``); ``stats`` counts unanimous and split decisions, fallbacks and cut-off calls."""

    def __init__(self, level: str = "VeryHard", copies: int = 8, seed: int = 0, **config):
        self.config = EnsembleConfig(level=level, copies=copies, settle=min(copies, config.pop("settle", 4)),
                                     **config)
        self.name = self.config.name
        self.rng = random.Random(seed)
        self.stats = EnsembleStats()
        self.last = None

    def choose(self, game: Game, seat: int) -> Action:
        self.last = ensemble_vote(game, seat, self.config, self.rng, stats=self.stats)
        return self.last.action or game.legal_actions(seat)[0]


def _ensemble_player(arg: str, seed: int) -> EnsemblePlayer:
    level, _, copies = (arg or "VeryHard").partition(":")
    try:
        k = int(copies or 8)
    except ValueError:
        raise ValueError(f"ensemble copies must be a whole number, not {copies!r}") from None
    return EnsemblePlayer(level or "VeryHard", k, seed)


def _advisor_player(arg: str, seed: int) -> EnsemblePlayer:
    """``advisor:<vote level>`` (``advisor`` alone: the advisor's default, ``vote``): the ensemble exactly as the
    advisor's vote level runs it (its copies, settle, workers, wall budget and tie break), so a bench measures the
    level a person is advised at, not a stand-in. Only the levels that never search."""
    name = arg or "vote"
    spec = VOTE_LEVELS.get(name)
    if spec is None or spec.search is not None:
        plain = [n for n, s in VOTE_LEVELS.items() if s.search is None]
        raise ValueError(f"advisor level must be one of {', '.join(plain)}, not {name!r}")
    player = EnsemblePlayer(spec.ensemble.level, spec.ensemble.copies, seed)
    player.config = spec.ensemble
    player.name = f"advisor:{name}"
    return player


# ---------------------------------------------------------------------------------------------
# A player that searches


def worth_searching(game: Game, seat: int, prompt: dict | None = None) -> bool:
    """Decisions of real consequence: the active player's main-phase plays, attacks and blocks."""
    prompt = prompt or game.prompt()
    kind = prompt.get("type")
    if kind in ("DeclareAttackers", "DeclareBlockers"):
        return True
    if kind == "Priority" and game.phase in MAIN_PHASES:
        try:
            return game.active_player() == seat and not (game.state()["state"].get("stack"))
        except SIM_ERRORS:
            return False
    return False



class SearchPlayer:
    """Plays a level: forced decisions at once, the others searched or taken from the engine's ``defer`` AI.

    Which decisions are searched: with ``contest`` (a second engine level), those where the two
    engine levels disagree, whatever the step (the engine's levels agree on about 75% of real
    decisions; where they differ the choice is uncertain and worth rollouts); without it, those
    ``worth_searching`` says matter (main-phase plays of the active player, attacks, blocks).

    The engine's ``defer`` choice is the search's prior and its default: the search replaces it
    only when another action did better on the same determinizations (``keep_margin``). A level's
    ``game_seconds`` is a per-game bank of this player's CPU time (like a chess clock: the engine's
    choices it defers to count too): each search may use at most its budget and what is left in the
    bank; with the bank empty the player defers.

    ``models``: the learned models it searches with (``SearchModels``; None: ``shipped_models()``); an
    ``evaluator`` override (the spec's ``+net``) replaces their policy/value network (None: none).
    """

    def __init__(self, level: str = "default", seed: int = 0, *, models: SearchModels | None = None, **overrides):
        if level not in LEVELS:
            raise ValueError(f"unknown search level {level!r}; use one of: {', '.join(LEVELS)}")
        spec = {**LEVELS[level], **overrides}
        self.name = f"search:{level}"
        self.level = level
        self.algorithm = spec["algorithm"]
        self.budget: Budget = spec["budget"]
        self.workers = int(spec.get("workers", 1))
        self.defer = spec.get("defer") or "Medium"
        if self.defer not in ENGINE_LEVELS:
            raise ValueError(f"defer must be one of {', '.join(ENGINE_LEVELS)}")
        self.config: SearchConfig = modelling(spec.get("config") or SearchConfig(), spec.get("opponent_model"))
        self.opponent_model: str | None = spec.get("opponent_model")
        self.game_seconds: float | None = spec.get("game_seconds")
        self.defer_low: str | None = spec.get("defer_low")  # the cheaper AI once the bank is spent
        self.contest: str | None = spec.get("contest")      # search only where this level disagrees
        self.models: SearchModels = models or shipped_models()
        if "evaluator" in spec:  # this network, whatever the caller's models hold
            self.models = self.models.with_evaluator(spec["evaluator"])
        self.seed = seed
        self.rng = random.Random(seed)  # the honest copies the engine's AI decides on (``honest_ai_action``)
        self.honest = HonestStats()
        self.calls = 0
        self._last_turn = 0
        self.bank_spent = 0.0
        self.last: Recommendation | None = None
        self.changes: list[dict] = []  # where the search overruled the engine (for the benches)
        self.stats = {"decisions": 0, "forced": 0, "deferred": 0, "agreed": 0, "searched": 0, "changed": 0,
                      "bank_empty": 0,
                      "search_seconds": 0.0, "simulations": 0, "dropped": 0}

    def _budget(self) -> Budget | None:
        if self.game_seconds is None:
            return self.budget
        left = self.game_seconds - self.bank_spent
        if left <= 0.05:
            return None
        # spend at most a third of what is left on one decision: late decisions (races, lethal) matter too
        seconds = left / 3 if self.budget.seconds is None else min(self.budget.seconds, left / 3)
        return Budget(seconds=seconds, simulations=self.budget.simulations)

    def choose(self, game: Game, seat: int) -> Action:
        if game.turn < self._last_turn:  # a new game: a full bank
            self.bank_spent = 0.0
        self._last_turn = game.turn
        self.stats["decisions"] += 1
        legal = game.legal_actions(seat)
        if len(legal) == 1:
            self.stats["forced"] += 1
            return legal[0]
        actions = prune_actions(game, legal)
        if len(actions) == 1:
            self.stats["forced"] += 1
            return actions[0]
        cpu = time.process_time()
        low = self.game_seconds is not None and self.bank_spent > self.game_seconds
        strong = honest_ai_action(game, seat, self.defer_low if low and self.defer_low else self.defer, self.rng,
                                  self.honest)
        if not self.contest and not worth_searching(game, seat):
            self.stats["deferred"] += 1
            self.bank_spent += time.process_time() - cpu
            return strong or actions[0]
        budget = self._budget()
        if budget is None:
            self.stats["bank_empty"] += 1
            self.bank_spent += time.process_time() - cpu
            return strong or actions[0]
        other = None
        if self.contest:
            # a second opinion from another engine level: when both agree, there is nothing to search
            other = honest_ai_action(game, seat, self.contest, self.rng, self.honest)
            if strong is not None and (other is None or other.key == strong.key or
                                       signature(other, ObjectLookup(game)) == signature(strong, ObjectLookup(game))):
                self.stats["agreed"] += 1
                self.bank_spent += time.process_time() - cpu
                return strong
        self.calls += 1
        search_cpu = time.process_time()
        rec = recommend(game, seat, algorithm=self.algorithm, budget=budget, seed=self.seed * 100_003 + self.calls,
                        workers=self.workers, config=self.config, hint=strong, include=[other] if other else None,
                        models=self.models)
        spent = time.process_time() - search_cpu
        self.bank_spent += time.process_time() - cpu
        self.last = rec
        self.stats["searched"] += 1
        self.stats["search_seconds"] += spent
        self.stats["simulations"] += rec.simulations
        self.stats["dropped"] += rec.stats.get("dropped", 0)
        if strong is None:
            return rec.action
        if rec.action.key != strong.key:
            lookup = ObjectLookup(game)
            if signature(rec.action, lookup) == signature(strong, lookup):
                return strong
            self.stats["changed"] += 1
            if len(self.changes) < 30:
                alts = {a["key"]: a for a in rec.alternatives}
                self.changes.append({"turn": game.turn, "phase": game.phase, "engine": strong.label,
                                     "search": rec.action.label, "search_value": alts.get(rec.action.key, {}).get("value"),
                                     "engine_value": alts.get(strong.key, {}).get("value"),
                                     "simulations": rec.simulations})
            return rec.action
        return strong

    @property
    def evaluator(self):
        """The policy/value network it searches with (None: none)."""
        return self.models.evaluator


class NetPlayer:
    """The policy/value network alone: its most likely action at each real decision, nothing searched."""

    def __init__(self, evaluator):
        if evaluator is None:
            raise ValueError("no policy/value network is active (train one: manage.py models train game_policy_net)")
        self.evaluator = evaluator
        self.name = "net"

    def choose(self, game: Game, seat: int) -> Action:
        legal = game.legal_actions(seat)
        actions = prune_actions(game, legal) if len(legal) > 1 else legal
        if len(actions) == 1:
            return actions[0]
        priors, _ = self.evaluator.predict(game.state(), seat, actions)  # encodes only what the seat may see
        return actions[max(range(len(actions)), key=priors.__getitem__)]


def modelling(config: SearchConfig, opponent_level: str | None) -> SearchConfig:
    """``config`` with the opponent modelled as the engine AI ``opponent_level`` (in the tree and in
    rollouts), for a player that knows which AI it faces (``search:<level>@<AI>``); unchanged for None.
    Measured against Medium it was not stronger at the default budget (bench/README.md), so the
    advisor does not use it."""
    if not opponent_level:
        return config
    if opponent_level not in DIFFICULTIES:
        raise ValueError(f"opponent model must be one of {', '.join(DIFFICULTIES)}")
    return dataclasses.replace(config, opponent_policy=opponent_level, rollout_opponent_policy=opponent_level)



SHIPPED_NET = Path(__file__).resolve().parents[2] / "weights" / "game_policy_net.safetensors"


def _search_player(arg: str, seed: int, models: SearchModels | None = None) -> SearchPlayer:
    """``search:<level>`` or ``search:<level>@<engine level>`` (the opponent is known to play that AI), either
    with ``+net`` (the network shipped in gameplay/weights/) or ``+net=<weights file>``: the search with that
    policy/value network whatever ``models`` hold. Without a suffix the level searches with ``models``' network,
    if any (none in the shipped models: the benches' ``search:<level>`` is the search without it)."""
    arg, plus, net = (arg or "default").partition("+")
    extra = {}
    if plus:
        kind, _, path = net.partition("=")
        if kind != "net":
            raise ValueError(f"unknown search suffix {'+' + net!r}; use +net or +net=<weights file>")
        extra["evaluator"] = evaluator_at(path or SHIPPED_NET)
    level, _, model = arg.partition("@")
    player = SearchPlayer(level or "default", seed=seed, models=models, opponent_model=model or None, **extra)
    if plus:
        player.name += "+" + net
    return player



def _net_player(arg: str, seed: int, models: SearchModels | None = None) -> NetPlayer:
    """``net:<weights file>``, or ``net``: the network of ``models``, else the shipped one."""
    return NetPlayer(evaluator_at(arg) if arg else ((models.evaluator if models else None) or evaluator_at(SHIPPED_NET)))


# The player kinds: name -> factory(argument, seed, models).
FACTORIES: dict[str, Callable[[str, int, SearchModels | None], Player]] = {
    "random": lambda arg, seed, models: RandomPlayer(seed),
    "engine": lambda arg, seed, models: EnginePlayer(arg or "Medium", seed),
    "ensemble": lambda arg, seed, models: _ensemble_player(arg, seed),
    "advisor": lambda arg, seed, models: _advisor_player(arg, seed),
    "search": _search_player,
    "net": _net_player,
}


_LEVEL_WORDS = {"VeryEasy": "Very Easy", "VeryHard": "Very Hard", "CEDH": "cEDH"}
_SEARCH_WORDS = {"learned": "learned leaf"}


def describe_player(spec: str) -> str:
    """A player's spec as a person reads it: ``engine:VeryHard`` -> "Engine AI, Very Hard", ``ensemble:VeryHard:8``
    -> "Vote of 8 Engine AIs, Very Hard", ``search:fast`` -> "Our search, fast", ``random`` -> "Random legal
    moves"; a spec it does not know, as it is."""
    kind, _, arg = str(spec or "").partition(":")
    if kind == "engine":
        level, bang, flag = (arg or "Medium").partition("!")
        level, hash_, replica = level.partition("#")
        text = f"Engine AI, {_LEVEL_WORDS.get(level, level)}" + (f" (replica {replica})" if hash_ else "")
        return text + (" (reads every card: a bench reference)" if bang and flag == "peek" else "")
    if kind == "ensemble":
        level, _, copies = (arg or "VeryHard").partition(":")
        return f"Vote of {copies or 8} Engine AIs, {_LEVEL_WORDS.get(level or 'VeryHard', level)}"
    if kind == "search":
        level, plus, net = (arg or "default").partition("+")
        level, at, model = level.partition("@")
        return (f"Our search, {_SEARCH_WORDS.get(level, level)}" + (f" (opponent model {model})" if at else "")
                + (" with the policy network" if plus else ""))
    if kind == "random" and not arg:
        return "Random legal moves"
    if kind == "net":
        return "Policy network" + (f" ({Path(arg).name})" if arg else "")
    if kind == "pass" and not arg:
        return "Passes every decision"
    return str(spec)


def make_player(spec: str, seed: int = 0, models: SearchModels | None = None) -> Player:
    """Build a player from ``kind[:argument]`` (``random``, ``engine:Hard``, ``ensemble:VeryHard:8``,
    ``advisor:vote``, ``search:default``; the peeking bench reference ``engine:VeryHard!peek``). ``models``: the
    learned models a search or network player uses (None: ``shipped_models()``)."""
    kind, _, arg = (spec or "").partition(":")
    factory = FACTORIES.get(kind)
    if factory is None:
        raise ValueError(f"unknown player {spec!r}; use one of: {', '.join(sorted(FACTORIES))}")
    return factory(arg, seed, models)


def play_game(game: Game, players: tuple[Player, Player], *, max_decisions: int = 5000,
              on_decision: Callable[[Game, int, Action], None] | None = None) -> dict:
    """Play ``game`` to the end. Returns ``{"winner", "turns", "decisions", "refused"}`` (winner None = draw/cut;
    ``refused``: chosen actions the engine refused, each replaced by the next listed one it accepts:
    ``Game.apply_or_next``). ``on_decision(game,
    seat, action)`` is called after each action is applied, with the action really played."""
    decisions = refused = 0
    while not game.is_over() and decisions < max_decisions:
        seat = game.seat_to_act()
        if seat is None:
            break
        chosen = players[seat].choose(game, seat)
        action = game.apply_or_next(seat, chosen)
        refused += action is not chosen
        if on_decision:
            on_decision(game, seat, action)
        decisions += 1
    result = game.result() or {"winner": None}
    return {"winner": result.get("winner"), "turns": game.turn, "decisions": decisions, "refused": refused}

