"""The advisor's entry points: ``advise(game, seat, level)`` by a level's name, ``recommend(game, seat,
algorithm=..., budget=...)`` for one search, and the levels.

The advisor's levels are named by what they do (``advice_levels()``; ``DEFAULT_LEVEL`` is the first):

- ``vote`` (the default): the ensemble (``gameplay.core.search.ensemble``) of the engine's VeryHard search asked on
  honest copies of the decision (what the seat can see, the rest re-dealt, a fresh engine seed each), the action
  most copies chose; a wall budget caps the copies asked (``VOTE_LEVELS``);
- ``vote+search``: the same vote, then, only where the copies split, the MCTS/PUCT search (with the active
  network when there is one) over the actions the copies chose, on the very copies the vote asked
  (``Vote.states`` as the search's determinizations); the vote's winner is the default it must beat;
- ``search:<name>``: one search at a ``LEVELS`` setting (``search:default`` was the advisor's default before the
  ensemble; the bare names, ``default``, ``fast``..., still work).

Each action's share of the vote stands in the answer's ``alternatives`` beside the search's values where it
ran; the win estimate is the search's value, else the engine's evaluation of the position averaged over the
vote's honest copies (squashed, ``win_probability``). Where no copy loads, the vote was the counted fallback on the real game and
the answer says so (``stats["vote"]["fallback"]``).

``recommend`` answers which action ``seat`` should take now, the expected line, a win estimate and
the alternatives: a forced decision at once, otherwise one search (``gameplay.core.search``: flat
Monte Carlo, MCTS or minimax) on this process, or root parallelism over processes or workers
(``gameplay.core.search.parallel``). ``LEVELS`` name the settings a person (the play page's advice) or a
player (``gameplay.core.matches.players.SearchPlayer``) picks from.

The caller passes the learned models as one argument, ``models`` (``search.evaluation.SearchModels``; the search
looks nothing up): its ``evaluator``, a policy/value network that every level then searches with (its prior in
PUCT, its value at the leaves; None: as before the network), its ``leaf_model`` for the ``learned`` level's leaves
and its ``load_evaluator`` for root parallelism's worker processes. The shell builds the ones in use once per
request or job (``gameplay.models_in_use.search_models()``, from the registry's active versions); a bench builds
its own from files (``gameplay.core.learning.weights.search_models``).

Pure: no Django; imports the engine and the search package only. Used by the
play page's advisor (streams ``on_progress``), the search players and the benches.
"""
from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass
from typing import Callable

from gameplay.core.engine.adapter import Action, EngineError, Game, IllegalAction, determinize
from gameplay.core.search.ensemble import EnsembleConfig, EnsembleStats, Vote, ensemble_vote
from gameplay.core.search.parallel import recommend_parallel
from gameplay.core.search.pruning import prune_actions
from gameplay.core.search.algorithms import ALGORITHMS, make_search
from gameplay.core.search.base import Budget, Recommendation, SearchConfig
from gameplay.core.search.evaluation import SearchModels, win_probability

# Levels, like Magarena's AI levels: an algorithm, a budget, processes, and how SearchPlayer uses
# them: ``defer`` is the engine AI whose choice is the default (and ``defer_low`` once the per-game
# CPU bank ``game_seconds`` is spent), ``contest`` the second opinion that decides what is searched.
# The levels that defer to VeryHard keep it once the bank is spent: falling back to Medium made long games
# worse than the AI they defer to (one Modern mirror played 194 decisions on Medium); VeryHard costs about
# 30 ms a decision, so a whole game still stays well inside 2 minutes of one core.
LEVELS: dict[str, dict] = {
    "fast": {"algorithm": "mcts", "budget": Budget(seconds=2.0, simulations=6), "workers": 1, "defer": "Medium",
             "game_seconds": 40.0, "defer_low": "Easy",
             "config": SearchConfig(prior_level="Medium", determinizations=3, horizon=1, keep_margin=0.03, min_visits=2,
                                    root_finalists=2, max_candidates=4)},
    "default": {"algorithm": "mcts", "budget": Budget(seconds=8.0, simulations=12), "workers": 1, "defer": "VeryHard",
                "contest": "Medium", "game_seconds": 70.0, "defer_low": "VeryHard",
                "config": SearchConfig(prior_level="VeryHard", determinizations=6, horizon=2, keep_margin=0.03,
                                       min_visits=3, root_finalists=2, max_candidates=4)},
    # default with one-turn rollouts scored by the learned value model (gameplay.core.learning.value): it predicts
    # the winner twice as well, yet was not stronger against Medium (bench/README.md), so default keeps
    # the engine's evaluation
    "learned": {"algorithm": "mcts", "budget": Budget(seconds=8.0, simulations=20), "workers": 1, "defer": "VeryHard",
                "contest": "Medium", "game_seconds": 70.0, "defer_low": "VeryHard",
                "config": SearchConfig(prior_level="VeryHard", determinizations=6, horizon=1, keep_margin=0.03,
                                       min_visits=3, root_finalists=2, max_candidates=4, leaf="learned")},
    "strong": {"algorithm": "mcts", "budget": Budget(seconds=10.0, simulations=48), "workers": 2, "defer": "VeryHard",
               "game_seconds": None,
               "config": SearchConfig(prior_level="VeryHard", determinizations=8, horizon=2, keep_margin=0.02,
                                      min_visits=3, root_finalists=3)},
    "flat": {"algorithm": "flat", "budget": Budget(seconds=6.0, simulations=10), "workers": 1, "defer": "VeryHard",
             "game_seconds": 70.0, "defer_low": "VeryHard",
             "config": SearchConfig(prior_level="VeryHard", determinizations=3, horizon=2, keep_margin=0.03, min_visits=2,
                                    max_candidates=4)},
    "minimax": {"algorithm": "minimax", "budget": Budget(seconds=3.0), "workers": 1, "defer": "VeryHard",
                "game_seconds": 70.0, "defer_low": "VeryHard",
                "config": SearchConfig(prior_level="VeryHard", determinizations=1, max_depth=3, horizon=1,
                                       keep_margin=0.03)},
}



PositionModel = Callable[[dict, int, float, float], float]  # (copy, seat, its evaluation, the other's) -> P(win)


@dataclass(frozen=True)
class VoteLevel:
    """An advisor level built on the ensemble: the vote's settings, and the ``LEVELS`` search run where it splits."""

    ensemble: EnsembleConfig
    search: str | None = None   # a LEVELS name: its algorithm, budget and knobs, on the vote's copies; None: never
    about: str = ""


# The vote's wall budget: no new batch of copies starts once the slowest batch so far would overrun it, so a
# decision takes about this long at most plus one batch (two VeryHard calls on two threads; each stops at the
# engine's 1.5 s cap). bench/game_speed.py measures it (docs/game-advice.md has the figures).
VOTE_SECONDS = 1.5
# ties (two copies, one vote each, is common once the budget stops the vote) by the copies' own evaluations
# after each action: no extra load (two loads cost ~0.6 s on a loaded machine)
_VOTE = EnsembleConfig(level="VeryHard", copies=8, settle=4, workers=2, seconds=VOTE_SECONDS, tie_break="copies")
VOTE_LEVELS: dict[str, VoteLevel] = {
    "vote": VoteLevel(_VOTE, None, "the engine's VeryHard search on up to 8 honest copies, the action most chose"),
    "vote+search": VoteLevel(_VOTE, "default", "the vote, then MCTS over the actions the copies chose where they "
                                               "split, on the same copies"),
}
DEFAULT_LEVEL = "vote"
SEARCH_PREFIX = "search:"


def advice_levels() -> tuple[str, ...]:
    """The advisor's levels by name, the default first: the ensemble's, then ``search:<LEVELS name>``."""
    return (*VOTE_LEVELS, *(f"{SEARCH_PREFIX}{name}" for name in LEVELS))


def resolve_level(level: str | None) -> tuple[str, str]:
    """``(kind, name)`` of an advisor level: ``("vote", a VOTE_LEVELS name)`` or ``("search", a LEVELS name)``.
    None is ``DEFAULT_LEVEL``; a bare ``LEVELS`` name (``default``, ``fast``) is that search. ValueError else."""
    level = DEFAULT_LEVEL if level is None else level
    if isinstance(level, str):
        if level in VOTE_LEVELS:
            return "vote", level
        name = level[len(SEARCH_PREFIX):] if level.startswith(SEARCH_PREFIX) else level
        if name in LEVELS:
            return "search", name
    raise ValueError(f"unknown level {level!r}; choose one of {', '.join(advice_levels())}")


def level_spec(level: str) -> dict:
    """A level's settings as plain JSON (what the benches write beside their figures)."""
    spec = LEVELS[level]
    return {"algorithm": spec["algorithm"], "budget": spec["budget"].to_dict(), "workers": spec.get("workers", 1),
            "defer": spec.get("defer"), "defer_low": spec.get("defer_low"), "contest": spec.get("contest"),
            "game_seconds": spec.get("game_seconds"), "config": {k: v for k, v in vars(spec.get("config") or SearchConfig()).items()}}


def forced_recommendation(action: Action, start: float, algorithm: str, estimate: float = 0.5) -> Recommendation:
    """The answer to a decision with one distinct action: that action, nothing searched."""
    return Recommendation(action=action, line=[action.label], win_estimate=estimate,
                          alternatives=[{"label": action.label, "key": action.key, "visits": 0, "value": None}],
                          simulations=0, elapsed=time.perf_counter() - start, algorithm=algorithm, forced=True,
                          stats={"final": True})


def recommend(game: Game, seat: int, *, algorithm: str = "mcts", budget: Budget | None = None, seed: int = 0,
              workers: int = 1, on_progress: Callable[[Recommendation], None] | None = None,
              config: SearchConfig | None = None, hint: Action | None = None,
              include: list[Action] | None = None, spread=None, models: SearchModels | None = None,
              determinizations: list[dict] | None = None, candidates: list[Action] | None = None
              ) -> Recommendation:
    """The best action for ``seat`` now, the expected line, a win estimate and the alternatives.

    Without ``budget``/``config`` the ``default`` level's are used (for flat/minimax, that level's).
    ``game`` is never changed (the search works on loaded copies). ``on_progress`` is called with
    the best answer so far every few simulations or ``config.progress_seconds``, and once at the
    end. A decision with one distinct action returns at once with ``forced=True``. ``hint`` is an
    action the caller already knows the engine AI would take (the prior; saves computing it);
    ``include`` are actions that must stay among the candidates when ``max_candidates`` cuts them.
    ``workers > 1`` is root parallelism: on this machine's processes, or through ``spread`` (a function
    that starts part payloads elsewhere, e.g. on Celery workers; see ``gameplay.core.search.parallel``).
    ``models``: the learned models (``SearchModels``: the policy/value network to search with, None: none; what
    returns the value model, needed by ``config.leaf == "learned"``; how a worker process loads the network from its
    path, needed with a network and ``workers > 1``). ``determinizations``: the copies to search on
    (an ensemble vote's ``Vote.states``; the search then runs here, on exactly those, whatever ``workers``);
    ``candidates``: the root actions to weigh (default: every distinct legal action).
    """
    start = time.perf_counter()
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {', '.join(ALGORITHMS)}")
    level = LEVELS["default"] if algorithm == "mcts" else LEVELS.get(algorithm, LEVELS["default"])
    budget = budget or level["budget"]
    config = config or level["config"]
    legal = game.legal_actions(seat)
    if not legal:
        raise IllegalAction(f"seat {seat} has no decision to make now")
    if candidates is not None:
        actions = list(candidates) or legal[:1]
    else:
        actions = legal if len(legal) == 1 else prune_actions(game, legal)
    if len(actions) == 1:
        # nothing to search; the estimate is the engine's evaluation of the position as it stands
        try:
            estimate = win_probability(game.evaluate(seat))
        except EngineError:
            estimate = 0.5
        rec = forced_recommendation(actions[0] if candidates is not None else legal[0], start, algorithm, estimate)
        if on_progress is not None:
            on_progress(rec)
        return rec
    if workers and workers > 1 and not determinizations:
        return recommend_parallel(game, seat, algorithm=algorithm, budget=budget, seed=seed, workers=workers,
                                  on_progress=on_progress, config=config, hint=hint, actions=actions, start=start,
                                  include=include, spread=spread, models=models)
    search = make_search(game, seat, algorithm=algorithm, budget=budget, seed=seed, config=config,
                         on_progress=on_progress, hint=hint, actions=actions, include=include, models=models,
                         determinizations=determinizations)
    search.start = start
    return search.run()


def advise(game: Game, seat: int, level: str | None = None, *, seed: int = 0,
           on_progress: Callable[[Recommendation], None] | None = None, stats: EnsembleStats | None = None,
           algorithm: str | None = None, budget: Budget | None = None, config: SearchConfig | None = None,
           workers: int = 1, spread=None, models: SearchModels | None = None,
           position_model: PositionModel | None = None) -> Recommendation:
    """The advisor's answer for ``seat`` at ``level`` (an ``advice_levels()`` name; None: ``DEFAULT_LEVEL``).

    A ``search:`` level is one ``recommend`` at that ``LEVELS`` setting (``algorithm``/``budget``/``config``
    replace the level's; ``workers``/``spread`` as there). A vote level runs ``ensemble_vote`` (``stats`` adds the
    decision to a caller's totals), calling ``on_progress`` after each batch of copies; where the copies split and
    the level searches, ``recommend`` weighs the actions the copies chose on the vote's own copies, the vote's
    winner as the default to beat (``algorithm``/``budget``/``config`` replace the search level's);
    ``position_model`` see ``vote_recommend``. ``game`` is never changed. ValueError for an unknown level.
    """
    kind, name = resolve_level(level)
    if kind == "search":
        spec = LEVELS[name]
        return recommend(game, seat, algorithm=algorithm or spec["algorithm"], budget=budget or spec["budget"],
                         config=config or spec["config"], seed=seed, workers=workers, spread=spread,
                         on_progress=on_progress, models=models)
    return vote_recommend(game, seat, name, seed=seed, on_progress=on_progress, stats=stats, algorithm=algorithm,
                          budget=budget, config=config, position_model=position_model, models=models)


def vote_recommend(game: Game, seat: int, level: str = DEFAULT_LEVEL, *, seed: int = 0,
                   on_progress: Callable[[Recommendation], None] | None = None, stats: EnsembleStats | None = None,
                   algorithm: str | None = None, budget: Budget | None = None, config: SearchConfig | None = None,
                   models: SearchModels | None = None, position_model: PositionModel | None = None
                   ) -> Recommendation:
    """A ``VOTE_LEVELS`` level's answer (see ``advise``): the vote, and the search where it splits.
    ``position_model`` (a learned value model's P(win) of a copy) gives ``stats["vote"]["position"]`` on the vote's
    copies, no load of its own (else the engine's evaluation, squashed)."""
    start = time.perf_counter()
    spec = VOTE_LEVELS[level]
    legal = game.legal_actions(seat)
    if not legal:
        raise IllegalAction(f"seat {seat} has no decision to make now")
    rng = random.Random(seed)

    def batch(vote: Vote):
        on_progress(_vote_answer(vote, None, level, start, estimate=_position_value(game, seat, vote, rng,
                                                                                    position_model), final=False))

    vote = ensemble_vote(game, seat, spec.ensemble, rng, stats=stats, legal=legal,
                         on_batch=batch if on_progress is not None else None)
    searched = None
    position = _position_value(game, seat, vote, rng, position_model)
    if spec.search and vote.split and vote.states and not vote.fallback:
        level_ = LEVELS[spec.search]
        chosen = [_action_of(seat, b) for b in vote.ballots if b["votes"]]

        def progress(rec: Recommendation):
            if not rec.stats.get("final"):
                on_progress(_vote_answer(vote, rec, level, start, estimate=position, final=False))

        searched = recommend(game, seat, algorithm=algorithm or level_["algorithm"], budget=budget or level_["budget"],
                             config=config or level_["config"], seed=seed, hint=vote.action,
                             on_progress=progress if on_progress is not None else None, models=models,
                             determinizations=vote.states, candidates=chosen)
    rec = _vote_answer(vote, searched, level, start, estimate=position, final=True)
    if on_progress is not None:
        on_progress(rec)
    return rec


def _action_of(seat: int, ballot: dict) -> Action:
    """A ballot's action (its key is ``{"type", "data"}``; what a search applies)."""
    payload = json.loads(ballot["key"])
    return Action(seat, payload["type"], payload.get("data"), ballot["label"])


def _position_value(game: Game, seat: int, vote: Vote, rng: random.Random,
                    position_model: PositionModel | None = None) -> tuple:
    """(P(``seat`` wins), what said so[, each copy's estimate]) of the position: the mean over the vote's copies
    (honest ones, evaluated as they were asked) of ``position_model`` (a learned value model: "value model", with
    each copy's estimate), else of the engine's
    evaluation squashed ("engine evaluation"); on a fresh copy for a forced decision, on the real game only where
    the vote fell back to it; 0.5 when the engine cannot evaluate."""
    pairs = [(c, e) for c, e in zip(vote.states, vote.evaluations) if e is not None]
    if pairs and position_model is not None:
        try:
            each = [position_model(c, seat, e[0], e[1]) for c, e in pairs]
            return sum(each) / len(each), "value model", each
        except (ValueError, KeyError, TypeError):
            pass
    if pairs:
        return sum(win_probability(e[0]) for _, e in pairs) / len(pairs), "engine evaluation"
    try:
        if vote.fallback is None:
            return win_probability(game.engine.load(determinize(game.state(), seat, rng)).evaluate(seat)), \
                "engine evaluation"
        return win_probability(game.evaluate(seat)), "engine evaluation on the real game"
    except EngineError:
        return 0.5, "none"


def _vote_answer(vote: Vote, searched: Recommendation | None, level: str, start: float, *,
                 estimate: tuple[float, str], final: bool) -> Recommendation:
    """The Recommendation of a vote (and of the search on its copies, where it ran): each candidate's share of the
    vote beside the search's visits and value; ``stats["vote"]`` says how the vote went."""
    search_rows = {a["key"]: a for a in (searched.alternatives if searched is not None else [])}
    action = searched.action if searched is not None else vote.action
    rows = []
    for b in vote.ballots:
        row = {"label": b["label"], "key": b["key"], "votes": b["votes"], "share": b["share"],
               "visits": None, "value": None}
        found = search_rows.get(b["key"])
        if found is not None:
            row.update(visits=found.get("visits"), value=found.get("value"))
        rows.append(row)
    rows.sort(key=lambda r: r["key"] != action.key)  # the recommended action first, then by votes
    summary = vote.to_dict()
    summary.pop("action", None)
    summary.update(level=level, engine_level=VOTE_LEVELS[level].ensemble.level, copies_dealt=len(vote.states),
                   max_copies=VOTE_LEVELS[level].ensemble.copies, searched=searched is not None,
                   search_level=VOTE_LEVELS[level].search)
    stats = {"vote": summary, "level": level}
    if searched is not None:
        stats["search"] = {k: v for k, v in searched.stats.items() if k != "final"}
    if final:
        stats["final"] = True
    summary.update(position=round(estimate[0], 4), position_by=estimate[1])
    if len(estimate) > 2:  # the value model's estimate on each copy: the spread the page shows
        summary.update(position_low=round(min(estimate[2]), 4), position_high=round(max(estimate[2]), 4),
                       position_copies=len(estimate[2]))
    win = searched.win_estimate if searched is not None else estimate[0]
    algorithm = f"vote+{searched.algorithm}" if searched is not None else "vote"
    return Recommendation(action=action, line=list(searched.line) if searched is not None else [action.label],
                          win_estimate=float(win), alternatives=rows,
                          simulations=searched.simulations if searched is not None else 0,
                          elapsed=time.perf_counter() - start, algorithm=algorithm, forced=vote.forced, stats=stats)
