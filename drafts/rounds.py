"""Play your pod (issue 38): a finished online pod's people play best-of-one rounds against the bots' decks.

A round is a game on /games/'s code path (``gameplay.play.session.create_game``: the unsupported-cards check,
the honest engine AI at the level the person chooses, the advisor, the review) linked to the draft by a
``DraftRound`` row. The pairing is ``drafts.core.rounds.swiss_opponent`` (by record). The person's deck is
the one saved in the deck builder, else the auto-build of their pool; a bot's deck is its auto-built deck,
rebuilt from its pool without the cards the rules engine cannot play when it has some (the person is never
told which: that would name the bot's cards). Refusals raise :class:`RoundError` (400/403/404/409) and
write nothing. Games are logged with the draft (``game_rows``: 17Lands-like game rows for the export,
under the seat's consent) and deleted with the seat's picks (``forget``).
"""
from __future__ import annotations

import csv
import io
import json
from datetime import timezone as dt_timezone

from django.db import IntegrityError, transaction

from decks.models import DeckCard
from drafts.core.deckbuild import build_deck
from drafts.core.rounds import ROUNDS, cards_drawn, records, swiss_opponent
from drafts.models import Draft, DraftRound, DraftSeat
from drafts.pods.service import seat_of
from drafts.services import draftsim_ratings, set_list
from gameplay import carddb
from gameplay.core.engine.adapter import DIFFICULTIES
from gameplay.models import EngineCard, PlayedGame
from gameplay.play import PlayError, session
from gameplay.play.choice import MAX_DECK, MIN_DECK, DeckProblem, opponent_label

LEVELS = tuple(f"engine:{d}" for d in DIFFICULTIES)
DEFAULT_LEVEL = "engine:Medium"


class RoundError(Exception):
    def __init__(self, message: str, code: int = 400, problems: list | None = None):
        super().__init__(message)
        self.code = code
        self.problems = problems or []


# --- decks ---------------------------------------------------------------------------------------------

def _pool(seat: DraftSeat) -> list[str]:
    return list(seat.picks.order_by("pack_number", "pick_number").values_list("pick", flat=True))


def _auto(seat: DraftSeat, exclude: set[str] = frozenset()) -> list[list]:
    s = set_list(seat.draft.set_code)
    ratings, _ = draftsim_ratings(s)
    built = build_deck([n for n in _pool(seat) if n not in exclude], s, ratings=ratings)
    return [[n, c] for n, c in built.main]


def _saved(seat: DraftSeat) -> list[list] | None:
    if seat.deck_id is None:
        return None
    rows = DeckCard.objects.filter(deck_id=seat.deck_id, board="main").order_by("card__name")
    main = [[n, c] for n, c in rows.values_list("card__name", "count")]
    return main or None


def person_deck(seat: DraftSeat) -> list[list]:
    """The person's main deck: saved in the deck builder, else the auto-build of their pool."""
    return _saved(seat) or _auto(seat)


def bot_deck(seat: DraftSeat) -> list[list]:
    """A bot's main deck: its auto-built deck, rebuilt without the cards the engine cannot play when it has any."""
    main = _saved(seat) or _auto(seat)
    support = carddb.deck_support([n for n, _ in main])
    if support["supported"]:
        return main
    bad = set(support["unknown"]) | set(support["unsupported"])
    return _auto(seat, exclude=bad)


def deck_problems(seat: DraftSeat) -> dict:
    """What stops the person's deck on the engine, named before a game starts, with swaps from their pool:
    ``{"unknown": [...], "unsupported": {name: problems}, "supported": bool, "swaps": [[out, in], ...]}``."""
    main = person_deck(seat)
    total = sum(c for _, c in main)
    if not MIN_DECK <= total <= MAX_DECK:
        return {"unknown": [], "unsupported": {}, "supported": False, "swaps": [],
                "message": f"a deck needs {MIN_DECK} to {MAX_DECK} main-deck cards (yours has {total})"}
    support = carddb.deck_support([n for n, _ in main])
    if support["supported"]:
        return {**support, "swaps": []}
    bad = set(support["unknown"]) | set(support["unsupported"])
    in_deck = {n for n, _ in main}
    pool_support = carddb.deck_support(list(dict.fromkeys(_pool(seat))))
    unplayable = set(pool_support["unknown"]) | set(pool_support["unsupported"])
    spare = [n for n, _ in _auto(seat, exclude=unplayable) if n not in in_deck and n not in bad]
    swaps = [[out, spare[i] if i < len(spare) else None] for i, out in enumerate(sorted(bad))]
    return {**support, "swaps": swaps}


def builder_engine(pool: list[str], s, ratings) -> tuple[list[str], list[str]]:
    """For the deck builder: the pool's cards the rules engine cannot play, and the playable auto-build's spells
    (best first, one entry per copy) to swap in for them; nothing when the engine's cards were never built."""
    if not EngineCard.objects.exists():
        return [], []
    support = carddb.deck_support(list(dict.fromkeys(pool)))
    bad = set(support["unknown"]) | set(support["unsupported"])
    if not bad:
        return [], []
    built = build_deck([n for n in pool if n not in bad], s, ratings=ratings)
    basics = set(built.lands)
    return sorted(bad), [n for n, c in built.main if n not in basics for _ in range(c)]


# --- rounds --------------------------------------------------------------------------------------------

def _draft(draft_id) -> Draft:
    draft = Draft.objects.filter(pk=draft_id, kind="online").first()
    if draft is None:
        raise RoundError("no such draft pod", 404)
    return draft


def _person(draft: Draft, user, session_key) -> DraftSeat:
    seat = seat_of(draft, user, session_key)
    if seat is None:
        raise RoundError("you have no seat in this draft: only its drafters play its rounds", 403)
    return seat


def _bots(draft: Draft) -> list[DraftSeat]:
    return list(draft.seat_set.exclude(drafter__in=("human", "deleted")).order_by("seat"))


def _results(draft: Draft) -> list[tuple[int, int, bool]]:
    done = DraftRound.objects.filter(draft=draft, game__status="finished").select_related("seat", "opponent", "game")
    return [(r.seat.seat, r.opponent.seat, bool((r.game.result or {}).get("you_won"))) for r in done]


def start_round(draft_id, level, user=None, session_key: str | None = None) -> DraftRound:
    """Start the person's next round: the game against the bot the Swiss pairs them with (the AI acts until
    the person's first decision). Refused, writing nothing: an unknown pod (404), no seat in it (403), an
    unknown level (400), the draft not over, a round still being played or all rounds played (409), the
    person's deck not playable on the engine (400, the cards named)."""
    draft = _draft(draft_id)
    seat = _person(draft, user, session_key)
    if level not in LEVELS:
        raise RoundError(f"unknown level {level!r}; choose one of {', '.join(LEVELS)}", 400)
    if draft.status != "complete":
        raise RoundError("the draft is not over yet: rounds start once every pick is made", 409)
    mine = list(DraftRound.objects.filter(seat=seat).select_related("game", "opponent"))
    if any(r.game.status != "finished" for r in mine):
        raise RoundError("finish the round you are playing first", 409)
    if len(mine) >= ROUNDS:
        raise RoundError(f"all {ROUNDS} rounds of this draft are played", 409)
    bots = _bots(draft)
    if not bots:
        raise RoundError("this pod has no bots, so no decks to play against", 409)
    bot_no = swiss_opponent(seat.seat, [b.seat for b in bots], draft.seats, records(_results(draft)),
                            [r.opponent.seat for r in mine])
    bot = next(b for b in bots if b.seat == bot_no)
    name = seat.display_name or f"Seat {seat.seat + 1}"
    mine_spec = {"name": f"{name}'s {draft.set_code} draft deck", "main": person_deck(seat)}
    bot_spec = {"name": f"Seat {bot.seat + 1} ({bot.drafter}), {draft.set_code} draft", "main": bot_deck(bot)}
    try:
        with transaction.atomic():
            game, _ = session.create_game(mine_spec, bot_spec, level, user=user, session_key=session_key)
            return DraftRound.objects.create(draft=draft, seat=seat, number=len(mine) + 1, opponent=bot, game=game,
                                             level=level)
    except DeckProblem as exc:
        problems = [p for p in exc.problems if p.get("deck") == "your deck"]
        if not problems:  # the bot's deck, rebuilt without unsupported cards, still cannot be played
            raise RoundError("the bot's deck cannot be played by the rules engine", 409) from None
        raise RoundError(str(DeckProblem(problems)), 400, problems) from None
    except PlayError as exc:
        raise RoundError(str(exc), exc.code if exc.code in (400, 403, 404, 409) else 500) from None
    except IntegrityError:
        raise RoundError("this round was started already", 409) from None


def round_rows(seat: DraftSeat) -> list[dict]:
    """The person's rounds for the pod page and the API: number, opponent seat, level, status, result, turns,
    the game; the opponent's colours only once the game is over."""
    out = []
    for r in DraftRound.objects.filter(seat=seat).select_related("game", "opponent"):
        g = r.game
        over = g.status == "finished"
        out.append({"round": r.number, "opponent_seat": r.opponent.seat, "opponent": r.opponent.drafter,
                    "level": r.level, "level_label": opponent_label(r.level), "status": g.status,
                    "result": (("won" if (g.result or {}).get("you_won") else "lost") if over else None),
                    "turns": g.turn if over else None, "opponent_colors": r.opponent.colors if over else None,
                    "on_play": g.first_player == g.human_seat if g.first_player is not None else None,
                    "game": str(g.pk), "game_url": f"/games/{g.pk}/", "review_url": f"/games/{g.pk}/review/"})
    return out


def summary(draft: Draft, seat: DraftSeat | None) -> dict:
    """The pod page's "Play your pod" panel: the person's rounds, record, next round and deck problems."""
    if seat is None or draft.status != "complete":
        return {"open": False}
    rows = round_rows(seat)
    table = records(_results(draft))
    mine = table.get(seat.seat)
    playing = any(r["status"] != "finished" for r in rows)
    left = ROUNDS - len(rows)
    return {"open": True, "rounds": rows, "wins": mine.wins if mine else 0, "losses": mine.losses if mine else 0,
            "can_start": bool(_bots(draft)) and not playing and left > 0, "next": len(rows) + 1, "left": left,
            "playing": playing, "levels": [(lv, opponent_label(lv)) for lv in LEVELS], "default_level": DEFAULT_LEVEL,
            "problems": deck_problems(seat) if left > 0 and not playing else None, "total": ROUNDS}


def bots_revealed(draft: Draft) -> bool:
    """Whether a pod's bot seats (their picks and decks) may be shown: once every person of the pod has played
    all their rounds. Until then a bot's deck is what its games show of it, nothing more."""
    people = list(draft.seat_set.filter(drafter="human").values_list("pk", flat=True))
    finished = DraftRound.objects.filter(seat_id__in=people, game__status="finished")
    return all(finished.filter(seat_id=p).count() >= ROUNDS for p in people)


def forget(seats) -> int:
    """Delete the games of these seats' rounds (their rounds go with them): the person's games leave with their
    picks. Returns the games deleted."""
    ids = list(DraftRound.objects.filter(seat__in=seats).values_list("game_id", flat=True))
    deleted, _ = PlayedGame.objects.filter(pk__in=ids).delete()
    return len(ids) if deleted else 0


# --- the export: 17Lands-like game rows ------------------------------------------------------------------

GAME_COLUMNS = ["expansion", "event_type", "draft_id", "draft_time", "game_time", "match_number", "game_number",
                "opponent", "main_colors", "opp_colors", "on_play", "num_turns", "won"]


def game_rows(seats) -> tuple[list[str], list[dict]]:
    """(columns, rows) of the finished games of these seats' rounds, one row per game, in the layout of 17Lands'
    game data: the draft's ids, the opponent (the engine level), colours, on the play, turns, won, then
    ``deck_<card>`` (the person's main deck) and ``drawn_<card>`` (cards that left their library, opening hand
    included) counts."""
    rounds = list(DraftRound.objects.filter(seat__in=seats, game__status="finished")
                  .select_related("seat", "seat__draft", "opponent", "game").order_by("seat__draft__created", "seat_id",
                                                                                       "number"))
    cards: list[str] = []
    rows = []
    for r in rounds:
        g, draft = r.game, r.seat.draft
        deck = {}
        for name, count in g.human_deck:
            deck[name] = deck.get(name, 0) + count
        try:
            drawn = cards_drawn(json.loads(g.state or "{}"), g.human_seat, deck,
                                board=(g.final_board or {}).get(str(g.human_seat)))
        except ValueError:
            drawn = {}
        for name in deck:
            if name not in cards:
                cards.append(name)
        started = draft.started or draft.created
        row = {"expansion": draft.set_code, "event_type": draft.event_type, "draft_id": r.seat.log_id,
               "draft_time": started.astimezone(dt_timezone.utc).strftime("%Y-%m-%d %H:%M:%S"),
               "game_time": g.updated.astimezone(dt_timezone.utc).strftime("%Y-%m-%d %H:%M:%S"),
               "match_number": r.number, "game_number": 1, "opponent": r.level, "main_colors": r.seat.colors,
               "opp_colors": r.opponent.colors, "on_play": g.first_player == g.human_seat, "num_turns": g.turn,
               "won": bool((g.result or {}).get("you_won"))}
        row.update({f"deck_{n}": c for n, c in deck.items()})
        row.update({f"drawn_{n}": c for n, c in drawn.items()})
        rows.append(row)
    columns = GAME_COLUMNS + [f"deck_{n}" for n in cards] + [f"drawn_{n}" for n in cards]
    return columns, rows


def games_csv(seats) -> str | None:
    """The game rows as CSV text, or None when these seats played no finished round."""
    columns, rows = game_rows(seats)
    if not rows:
        return None
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, restval=0, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: (str(v) if isinstance(v, bool) else v) for k, v in row.items()})
    return buffer.getvalue()
