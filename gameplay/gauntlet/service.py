"""The gauntlet's shell: decks in, runs and games stored, games played by Celery or local processes.

Flow: :func:`load_decks` gathers decks (the sample decks, saved decks, decklist text) ->
:func:`create_run` refuses decks with unknown or unsupported cards (listing them), stores a
``GauntletRun`` and one ``GauntletGame`` per scheduled game -> ``gameplay.gauntlet.tasks.enqueue_games``
sends one Celery task per game (``gameplay.gauntlet_game``), so every worker plays games in parallel;
the command may instead play them in its own processes (:func:`run_locally`).

Each game is claimed (:func:`claim_game`), played outside any transaction, then recorded
(:func:`record_game`) under a row lock: a game is counted once whatever the retries, the run's
``done`` / ``errors`` go up with ``F()`` updates, and whoever records the last game computes the
results (the core's matrix and card statistics). An engine panic is recorded as that game's error
and the run carries on.
"""
from __future__ import annotations

import logging
import multiprocessing
import random
import re
from concurrent.futures import ProcessPoolExecutor, as_completed

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from common.figures import figure_bytes
from decks.core.decklist import parse_decklist
from decks.models import Deck
from decks.services import card_index, parsed_from_deck
from gameplay import carddb
from gameplay.core.matches import roundrobin as core
from gameplay.core.search.advisor import LEVELS
from gameplay.core.engine.adapter import DIFFICULTIES
from gameplay.core.engine.decks import sample_decks
from gameplay.core.matches.players import make_player
from gameplay.models_in_use import search_models
from gameplay.gauntlet.models import GauntletGame, GauntletRun
from gameplay.models import EngineCard
from plumbing import recovery

log = logging.getLogger(__name__)

MIN_MAIN = 40
MAX_DECKS = 16
FINISHED = ("done", "error")


class GauntletError(Exception):
    """A gauntlet that cannot start. ``problems``: one message per problem (per deck for bad cards)."""

    def __init__(self, problems, decks: dict | None = None):
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        self.decks = decks or {}  # deck name -> {"unknown": [...], "unsupported": {card: [problems]}}
        super().__init__("; ".join(self.problems))


# --- decks -----------------------------------------------------------------------------------

def sample_deck(name: str) -> dict:
    decks = sample_decks(settings.MTG_DATA_DIR)
    if name not in decks:
        raise GauntletError(f"No sample deck {name!r}" + (f"; there are: {', '.join(sorted(decks))}" if decks else
                                                           " (the sample decks file is missing; set MTG_DATA_DIR)"))
    d = decks[name]
    return {"name": name, "source": f"sample:{name}", "cards": [[n, int(c)] for n, c in d["main"]]}


def saved_deck(deck_id) -> dict:
    try:
        deck = Deck.objects.get(pk=int(deck_id))
    except (Deck.DoesNotExist, ValueError, TypeError):
        raise GauntletError(f"No saved deck {deck_id}") from None
    parsed = parsed_from_deck(deck)
    return {"name": deck.title, "source": f"deck:{deck.pk}", "cards": [[e.name, e.count] for e in parsed.main]}


_SEPARATOR = re.compile(r"^\s*(?:-{3,}|={3,})\s*$")
_NAME = re.compile(r"^\s*name\s*:", re.IGNORECASE)


def split_decklists(text: str) -> list[str]:
    """Several decklists in one text: separated by ``---`` / ``===`` lines, or each starting with ``Name: ...``."""
    blocks, current = [], []
    for line in (text or "").splitlines():
        if _SEPARATOR.match(line) or (_NAME.match(line) and any(row.strip() for row in current)):
            blocks.append(current)
            current = [] if _SEPARATOR.match(line) else [line]
            continue
        current.append(line)
    blocks.append(current)
    return ["\n".join(b) for b in blocks if any(row.strip() for row in b)]


def decks_from_text(text: str, default_name: str = "deck", source: str = "text") -> list[dict]:
    """Parse decklists (MTGO / Arena / plain text) with the site's parser; errors name the line."""
    out, problems = [], []
    blocks = split_decklists(text)
    for k, block in enumerate(blocks, 1):
        fallback = default_name if len(blocks) == 1 else f"{default_name} {k}"
        result = parse_decklist(block, card_index())
        name = (result.deck.name if result.deck else "") or fallback
        for e in result.errors:
            problems.append(f"{name}, line {e.line_no}: {e.message}" + (f" (did you mean {', '.join(e.suggestions)}?)"
                                                                        if e.suggestions else ""))
        if result.deck is not None:
            out.append({"name": name, "source": source, "cards": [[e.name, e.count] for e in result.deck.main]})
    if problems:
        raise GauntletError(problems)
    return out


def _unique_names(decks: list[dict]) -> None:
    seen: dict[str, int] = {}
    for d in decks:
        base = (d.get("name") or "deck").strip()[:80] or "deck"
        seen[base] = seen.get(base, 0) + 1
        d["name"] = base if seen[base] == 1 else f"{base} ({seen[base]})"


def check_decks(decks: list[dict], *, build_support: bool = False) -> list[dict]:
    """Canonical card names, merged counts; refuses unknown or unsupported cards with the list.

    ``build_support``: compute the engine's per-card support first when it never was (the command
    does; a web request would take minutes, so it says to run ``build_engine_cards``).
    """
    problems: list[str] = []
    if len(decks) < 2:
        problems.append(f"A gauntlet needs at least two decks (got {len(decks)}).")
    if len(decks) > MAX_DECKS:
        problems.append(f"At most {MAX_DECKS} decks in one gauntlet (got {len(decks)}).")
    if problems:
        raise GauntletError(problems)
    if not EngineCard.objects.filter(engine=carddb.ENGINE).exists():
        if not build_support:
            raise GauntletError("The engine's card support has not been computed: run `manage.py build_engine_cards`.")
        carddb.build()
    clean, bad = [], {}
    for d in decks:
        d = {"name": d.get("name") or "deck", "source": d.get("source") or "", "cards": list(d.get("cards") or [])}
        names = [n for n, _ in d["cards"]]
        resolved, unknown = carddb.resolve_names(names)
        support = carddb.deck_support(names)
        totals: dict[str, int] = {}
        for n, c in d["cards"]:
            canonical = resolved[n].name if n in resolved else n
            totals[canonical] = totals.get(canonical, 0) + int(c)
        d["cards"] = sorted([n, c] for n, c in totals.items() if c > 0)
        size = sum(c for _, c in d["cards"])
        if support["unknown"] or support["unsupported"]:
            bad[d["name"]] = {"unknown": support["unknown"], "unsupported": support["unsupported"]}
            if support["unknown"]:
                problems.append(f"{d['name']}: unknown cards: {', '.join(support['unknown'])}")
            if support["unsupported"]:
                problems.append(f"{d['name']}: cards the engine does not fully support: "
                                f"{', '.join(support['unsupported'])}")
        if size < MIN_MAIN:
            problems.append(f"{d['name']}: the main deck has {size} cards; the engine plays decks of at least {MIN_MAIN}.")
        clean.append(d)
    if problems:
        raise GauntletError(problems, bad)
    _unique_names(clean)
    return clean


def player_choices() -> list[str]:
    """Player specs to suggest: the engine's AI levels, random play, and our search levels."""
    return [f"engine:{d}" for d in DIFFICULTIES] + ["random"] + [f"search:{level}" for level in LEVELS]


def check_player(spec: str) -> str:
    spec = (spec or "").strip()
    try:
        make_player(spec, 0)
    except (ValueError, KeyError) as exc:
        raise GauntletError(f"Bad player {spec!r}: {exc}") from None
    return spec


# --- runs ------------------------------------------------------------------------------------

def create_run(decks: list[dict], games_per_pair: int, player: str = "engine:Medium", *, seed: int | None = None,
               max_decisions: int = 5000, user=None, name: str = "", runner: str = "celery",
               build_support: bool = False) -> GauntletRun:
    """Check everything, then store the run and its scheduled games (nothing is played yet)."""
    try:
        games_per_pair = int(games_per_pair)
    except (TypeError, ValueError):
        raise GauntletError("Games per pair must be a whole number.") from None
    if not 1 <= games_per_pair <= core.MAX_GAMES_PER_PAIR:
        raise GauntletError(f"Games per pair must be between 1 and {core.MAX_GAMES_PER_PAIR} (got {games_per_pair}).")
    if not 1 <= int(max_decisions) <= 100_000:
        raise GauntletError("The decision cap must be between 1 and 100000.")
    player = check_player(player)
    decks = check_decks(decks, build_support=build_support)
    seed = random.getrandbits(31) if seed is None else int(seed)
    plan = core.schedule(len(decks), games_per_pair, seed)
    with transaction.atomic():
        run = GauntletRun.objects.create(
            name=name or f"{len(decks)} decks × {games_per_pair} games, {player}", decks=decks,
            games_per_pair=games_per_pair, player=player, max_decisions=int(max_decisions), seed=seed, runner=runner,
            total=len(plan), created_by=user if getattr(user, "is_authenticated", False) else None)
        GauntletGame.objects.bulk_create([
            GauntletGame(run=run, index=g.index, deck_a=g.pair[0], deck_b=g.pair[1], round=g.round,
                         seat0_deck=g.seats[0], seat1_deck=g.seats[1], seed=g.seed) for g in plan], batch_size=1000)
    return run


def game_indexes(run_id: int, *, unfinished_only: bool = False) -> list[int]:
    """The indexes of a run's games to queue, in order: all of them, or those not finished yet."""
    games = GauntletGame.objects.filter(run_id=run_id)
    if unfinished_only:
        games = games.exclude(status__in=FINISHED)
    return list(games.order_by("index").values_list("index", flat=True))


def claim_game(run_id: int, index: int) -> GauntletGame | None:
    """Mark a game as being played; None when it is already finished, its run stopped, or a live worker plays
    it (a copy of its task, redelivered while it runs). A game whose worker died (no heartbeat for
    MTG_JOB_STALE_SECONDS) may be claimed again while it has runs left (MTG_JOB_MAX_ATTEMPTS)."""
    with transaction.atomic():
        game = (GauntletGame.objects.select_for_update(of=("self",)).select_related("run")
                .filter(run_id=run_id, index=index).first())
        if game is None or game.status in FINISHED or game.run.status in ("cancelled", "failed", "done"):
            return None
        if game.status == "running" and not (GauntletGame.objects.filter(recovery.stale_q(), pk=game.pk).exists()
                                             and game.attempts < recovery.max_attempts()):
            return None
        now = timezone.now()
        game.status, game.started, game.heartbeat, game.attempts = "running", now, now, game.attempts + 1
        game.save(update_fields=["status", "started", "heartbeat", "attempts"])
        GauntletRun.objects.filter(pk=run_id, status="pending").update(status="running", started=now)
    return game


def record_game(run_id: int, index: int, outcome: dict) -> bool:
    """Store a game's outcome and count it, once: False when it was already recorded (a retry)."""
    with transaction.atomic():
        game = GauntletGame.objects.select_for_update().filter(run_id=run_id, index=index).first()
        if game is None or game.status in FINISHED:
            return False
        failed = bool(outcome.get("error"))
        winner = outcome.get("winner") if not failed else None
        game.status = "error" if failed else "done"
        game.winner = winner if winner in (0, 1) else None
        game.winner_deck = game.seats[winner] if winner in (0, 1) else None
        game.cut = bool(outcome.get("cut")) and not failed
        game.turns, game.decisions = outcome.get("turns"), outcome.get("decisions")
        game.seconds = outcome.get("seconds")
        game.error = (outcome.get("error") or "")[:2000]
        game.finished = timezone.now()
        game.save()
        # the F() update takes the run's row lock (and SQLite's write lock) before the re-read
        GauntletRun.objects.filter(pk=run_id).update(done=F("done") + 1, errors=F("errors") + int(failed))
        run = GauntletRun.objects.select_for_update().get(pk=run_id)
        if run.done >= run.total and run.status in ("pending", "running"):
            run.status, run.finished = "done", timezone.now()
            run.results = compute_results(run)
            run.save(update_fields=["status", "finished", "results"])
        elif run.status == "cancelled":
            run.results = compute_results(run)
            run.save(update_fields=["results"])
    return True


def play_game_row(run_id: int, index: int) -> dict | None:
    """What the Celery task does: claim, play (no transaction held), record. Never raises for a game."""
    game = claim_game(run_id, index)
    if game is None:
        return None
    with recovery.heartbeat(GauntletGame.objects.filter(pk=game.pk)):
        outcome = _play(carddb.get_engine(), game.run, game)
    record_game(run_id, index, outcome)
    return outcome


def pending_games() -> list[tuple[int, int]]:
    """(run, index) of the games waiting to be played in the running Celery gauntlets."""
    return list(GauntletGame.objects.filter(status="pending", run__runner="celery",
                                            run__status__in=("pending", "running"))
                .order_by("run_id", "index").values_list("run_id", "index"))


def recover_stale_games() -> list[tuple[int, int]]:
    """The games of running Celery gauntlets that a dead worker left running (``plumbing.recovery.stale``): each
    is made pending again while it has runs left (returned as (run, index): the caller queues them), or
    recorded as an error game with the reason after MTG_JOB_MAX_ATTEMPTS runs, so the run still finishes.
    (A run played by the command's own processes is resumed with ``gauntlet --resume``.)"""
    games = GauntletGame.objects.filter(run__runner="celery", run__status__in=("pending", "running"))
    again, _ = recovery.recover_stale(
        games.order_by("run_id", "index"), what="game", again=lambda game: {"status": "pending"},
        fail=lambda game, error: record_game(game.run_id, game.index, {"error": error}))
    return [(game.run_id, game.index) for game in again]


def _play(engine, run: GauntletRun, game: GauntletGame) -> dict:
    decks = [core.expand(d["cards"]) for d in run.decks]
    try:
        return core.play_match(engine, decks[game.seat0_deck], decks[game.seat1_deck], seed=game.seed,
                               player=run.player, max_decisions=run.max_decisions, models=search_models())
    except Exception as exc:  # not an engine error: a bug somewhere; the run still carries on
        log.exception("gauntlet %s game %s crashed", run.pk, game.index)
        return {"winner": None, "turns": None, "decisions": None, "seconds": None, "cut": False,
                "error": f"internal error: {type(exc).__name__}: {exc}"[:2000]}


def run_locally(run: GauntletRun, workers: int = 1, on_game=None) -> GauntletRun:
    """Play a run's unfinished games in this process (``workers`` 1) or a pool of processes.

    ``on_game(index, outcome)`` is called after each game is recorded (the command's progress bar).
    """
    pending = list(run.games.exclude(status__in=FINISHED).order_by("index"))
    if not pending:
        return GauntletRun.objects.get(pk=run.pk)
    now = timezone.now()
    GauntletRun.objects.filter(pk=run.pk, status="pending").update(status="running", started=now)
    decks = [core.expand(d["cards"]) for d in run.decks]
    if workers <= 1:
        engine = carddb.get_engine()
        for g in pending:
            if claim_game(run.pk, g.index) is None:
                continue
            outcome = _play(engine, run, g)
            record_game(run.pk, g.index, outcome)
            if on_game:
                on_game(g.index, outcome)
    else:
        path = carddb.card_data_path()
        if not path.exists():
            carddb.build()
        # spawn: the children load only the pure core and the engine, never Django's connections
        with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                                 initializer=core.pool_init, initargs=(str(path),)) as pool:
            futures = []
            for g in pending:
                if claim_game(run.pk, g.index) is None:
                    continue
                futures.append(pool.submit(core.pool_play, g.index, decks[g.seat0_deck], decks[g.seat1_deck], g.seed,
                                           run.player, run.max_decisions))
            for future in as_completed(futures):
                index, outcome = future.result()
                record_game(run.pk, index, outcome)
                if on_game:
                    on_game(index, outcome)
    return GauntletRun.objects.get(pk=run.pk)


def cancel_run(run: GauntletRun) -> bool:
    """Stop a run: games not yet started are skipped; the results cover the games that finished."""
    with transaction.atomic():
        run = GauntletRun.objects.select_for_update().get(pk=run.pk)
        if run.status not in ("pending", "running"):
            return False
        run.status, run.finished = "cancelled", timezone.now()
        run.results = compute_results(run)
        run.save(update_fields=["status", "finished", "results"])
    return True


def reopen_games(run: GauntletRun) -> bool:
    """Make the games of a run that did not finish (a worker died) playable again, to queue them again
    (``gameplay.gauntlet.tasks.resume_run``); recorded games stay counted once. False when the run is over."""
    if run.status not in ("pending", "running"):
        return False
    GauntletGame.objects.filter(run=run, status="running").update(status="pending")
    return True


# --- results ---------------------------------------------------------------------------------

def finished_games(run: GauntletRun) -> list[dict]:
    rows = run.games.filter(status__in=FINISHED).values("index", "seat0_deck", "seat1_deck", "winner", "cut", "error",
                                                        "turns", "decisions", "seconds", "seed")
    return [{"index": r["index"], "seats": [r["seat0_deck"], r["seat1_deck"]], "winner": r["winner"], "cut": r["cut"],
             "error": r["error"], "turns": r["turns"], "decisions": r["decisions"], "seconds": r["seconds"],
             "seed": r["seed"]} for r in rows]


def compute_results(run: GauntletRun) -> dict:
    games = finished_games(run)
    summary = core.aggregate(run.deck_names, games)
    cards = core.card_stats([{n: c for n, c in d["cards"]} for d in run.decks], games)
    played = [g for g in games if not g["error"]]
    seconds = [g["seconds"] for g in played if g["seconds"] is not None]
    summary["timing"] = {
        "mean_seconds": round(sum(seconds) / len(seconds), 3) if seconds else None,
        "mean_turns": round(sum(g["turns"] or 0 for g in played) / len(played), 2) if played else None,
        "mean_decisions": round(sum(g["decisions"] or 0 for g in played) / len(played), 1) if played else None,
    }
    return {"summary": summary, "cards": cards}


def results_of(run: GauntletRun) -> dict:
    """The stored results, or (while the run goes on) those of the games finished so far."""
    return run.results if run.results and run.finished_or_stopped else compute_results(run)


def run_payload(run: GauntletRun, *, standings: bool = True) -> dict:
    """The run page's poll endpoint: status, progress and (live) standings."""
    out = {
        "id": run.pk, "name": str(run), "status": run.status, "done": run.done, "total": run.total,
        "errors": run.errors, "progress": round(run.progress, 4), "player": run.player,
        "games_per_pair": run.games_per_pair, "decks": run.deck_names, "error": run.error or None,
        "started": run.started.isoformat() if run.started else None,
        "finished": run.finished.isoformat() if run.finished else None,
    }
    if standings:
        out["standings"] = results_of(run)["summary"]["standings"]
    return out


def export(run: GauntletRun) -> dict:
    """Everything about a run, for ``--out`` and the JSON download."""
    return {
        "id": run.pk, "name": str(run), "status": run.status, "player": run.player,
        "games_per_pair": run.games_per_pair, "seed": run.seed, "max_decisions": run.max_decisions,
        "runner": run.runner, "decks": run.decks, "total": run.total, "done": run.done, "errors": run.errors,
        "created": run.created.isoformat(), "started": run.started.isoformat() if run.started else None,
        "finished": run.finished.isoformat() if run.finished else None,
        "draw_policy": core.DRAW_POLICY,
        "results": results_of(run),
        "games": [{**g, "decks": [run.deck_names[g["seats"][0]], run.deck_names[g["seats"][1]]]}
                  for g in finished_games(run)],
    }


def heatmap_bytes(run: GauntletRun, fmt: str = "svg") -> bytes:
    summary = results_of(run)["summary"]
    title = f"{run}: win rate with 95% interval ({summary['games']['scored']} games, draws count half)"
    return figure_bytes(core.heatmap_figure(summary, title=title), fmt)
