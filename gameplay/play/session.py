"""A game against the AI: written under a short row lock, and what the person may see of it.

The game's truth is the ``PlayedGame`` row: ``state`` holds the engine's JSON (``Game.state()``).
A change (the person's action, then the AI's replies until the person decides again or the game
ends) is played on a private copy of the game read at revision r: the action is checked legal for
the person's seat *now* and at the revision the client saw, applied, and the AI replies. Then one
short transaction locks the row (``plumbing.live.locked_row``: ``SELECT ... FOR UPDATE`` on PostgreSQL;
a per-game process lock and the write lock on SQLite, where the embedded stack has one server process)
and writes the new state, log and revision together, only if the row is still at r; otherwise nothing
is written and the action is judged again against the game as it is. The AI (a search opponent may
think for many seconds) never thinks under the lock. An illegal or stale action, or an engine panic
anywhere in between, raises :class:`PlayError` and writes nothing: the stored state is the last good
one. Each process keeps the ``Game`` objects it loaded in :data:`GAME_CACHE` (by revision), taken out
for a change and put back only once it is committed.

What leaves the server is built by :func:`view_of` from ``Game.observation(human_seat)`` only:
the opponent's hand and both libraries are never sent. The log shows the opponent's actions only
when every card they name is public afterwards. Advice (``gameplay.play.advice``) searches a
*determinized* copy of the game (the hidden cards re-dealt at random) and its texts are filtered
by ``hidden_names``, so the advisor cannot leak the opponent's hand either; a person's action stops
the advice running for the game (its ticket, here).
"""
from __future__ import annotations

import json
import logging
import random
import uuid
from dataclasses import dataclass, field
from typing import Callable

from django.core.cache import cache
from django.db import transaction

from gameplay import carddb
from gameplay.core.matches.players import make_player
from gameplay.models_in_use import search_models
from gameplay.core.engine.adapter import MAIN_PHASES, Action, BadState, EngineError, EnginePanic, Game, IllegalAction
from gameplay.core.engine.seatview import humanize, log_entries
from gameplay.models import PlayedGame
from gameplay.play import PROTOCOL_VERSION, PlayError
from gameplay.play.choice import DeckProblem, check_deck, check_opponent, opponent_label, resolve_deck
from plumbing import live

log = logging.getLogger(__name__)
LOG_TAIL = 80
MAX_AI_STEPS = 4000  # AI decisions in one advance (a whole game is about 370 decisions for both seats)


# --- locking, loading, caching -----------------------------------------------------------------------

def locked(game_id):
    """One transaction holding the game row's lock; yields the PlayedGame (404 PlayError when missing)."""
    return live.locked_row(PlayedGame.objects.all(), game_id, lambda: PlayError("no such game", 404))


GAME_CACHE = live.RevisionCache(size=32)  # game id -> Game, by revision (see the module docstring)


def get_engine():
    try:
        return carddb.get_engine()
    except ImportError as exc:
        raise PlayError(f"the rules engine is not installed ({exc})", 500) from None


def load_game(row: PlayedGame) -> Game:
    """The stored game. phase.rs writes some states it cannot read back; ``engine.load`` repairs those
    it can (``adapter.repair_state``: an Offspring token's trigger origins, a pump prompt), and a game
    still refused ("current-turn ZoneChanged record has no ledger occurrence", docs/game-advice.md) or
    stored damaged is rebuilt by replaying its moves."""
    try:
        return get_engine().load(row.state)
    except (BadState, EnginePanic) as exc:
        problem = exc
    game = _replay(row)
    if game is None:
        raise PlayError(f"this game's stored state cannot be loaded: {problem}", 500)
    log.warning("game %s: the stored state could not be loaded (%s); rebuilt from its %d moves",
                row.pk, str(problem)[:200], len(row.moves))
    return game


def _replay(row: PlayedGame) -> Game | None:
    """The game rebuilt from its decks, seed and first player by applying ``row.moves`` in order (the
    engine is deterministic), or None when it cannot be (a game stored before moves were recorded,
    a deck the engine no longer knows, a move it now refuses)."""
    if row.first_player is None or len(row.moves) != row.decisions:
        return None
    human, problem = check_deck(row.human_deck, "your deck")
    ai, ai_problem = check_deck(row.ai_deck, "the AI's deck")
    if problem or ai_problem:
        return None
    decks = (human, ai) if row.human_seat == 0 else (ai, human)
    try:
        return get_engine().replay(decks[0], decks[1], row.moves, seed=row.seed, first_player=row.first_player)
    except EngineError:
        return None


def _game_of(row: PlayedGame) -> Game:
    """The game at ``row.revision``: this process's cached copy (taken out: it becomes the caller's) or a load."""
    game = GAME_CACHE.take(row.pk, row.revision)
    return game if game is not None else load_game(row)


def _stack_empty(game: Game) -> bool:
    return game.stack_size() == 0


# --- what the person sees: gameplay.core.engine.seatview -----------------------------------------------------

def _log_entries(raw: list[tuple], row: PlayedGame, state: dict) -> list[dict]:
    last_turn = next((e.get("turn") for e in reversed(row.log) if e.get("turn") is not None), None)
    return log_entries(raw, row.human_seat, state, last_turn)


def _action_view(action: Action, seat: int) -> dict:
    """An offered action as the person sees it: its label (and its interchangeable copies' shared ``group``) from
    their side ("the AI's", "you"), and the ``objects`` it names (the page lights them up on hover)."""
    out = {k: v for k, v in action.to_dict().items() if k != "seat"}
    out["label"] = humanize(action.label, seat)
    if action.group is not None:
        out["group"] = humanize(action.group, seat)
    return out


def view_of(row: PlayedGame, game: Game | None = None) -> dict:
    """Everything the person (``row.human_seat``) may see now: built from their observation only. A finished game
    shows the board as it stood when it ended (``row.final_board``, kept before the engine's clean-up)."""
    seat = row.human_seat
    final = (row.final_board or {}).get(str(seat)) if row.status == "finished" else None
    if final is not None:
        obs, actions = final, []
    else:
        game = game if game is not None else load_game(row)
        obs = game.observation(seat)
        actions = [_action_view(a, seat) for a in game.legal_actions(seat)]
    advice = row.advice if row.advice and row.advice.get("revision") == row.revision else None
    return {
        "v": PROTOCOL_VERSION, "type": "game", "id": str(row.pk), "revision": row.revision, "status": row.status,
        "result": row.result, "turn": obs.get("turn"), "you": seat,
        "decks": {"you": row.human_deck_name, "ai": row.ai_deck_name},
        "opponent": row.opponent, "opponent_label": opponent_label(row.opponent),
        "board": obs, "actions": actions, "your_decision": bool(actions),
        "log": row.log[-LOG_TAIL:], "log_size": len(row.log), "advice": advice,
    }


def provisional_view(row: PlayedGame, game: Game, raw: list) -> dict:
    """The person's view right after their own action, while a slow AI (a search opponent) thinks about
    its reply: the action applied, no decision for them, ``provisional`` and still at the stored
    revision (nothing is written yet; the written view, one revision on, follows). Built like
    :func:`view_of`, from the seat's observation and the filtered log only."""
    view = view_of(row, game)
    log_ = row.log + _log_entries(raw, row, game.state())
    view.update(provisional=True, actions=[], your_decision=False, log=log_[-LOG_TAIL:], log_size=len(log_),
                advice=None)
    return view


def _announcer(row: PlayedGame, game: Game, raw: list, on_applied: Callable[[dict], None]) -> Callable[[], None]:
    """What _advance calls when a slow AI is about to think: hand the provisional view to ``on_applied``."""
    def announce():
        try:
            on_applied(provisional_view(row, game, raw))
        except Exception:  # noqa: BLE001 - showing it early is a courtesy; the action goes on
            log.warning("game %s: the provisional view could not be sent", row.pk, exc_info=True)
    return announce


def _slow_opponent(row: PlayedGame) -> bool:
    """Whether the AI may think for seconds (a search level), so the person should see their action first."""
    return row.opponent.startswith("search")


def game_group(game_id) -> str:
    return f"game-{game_id}"


def owns(row: PlayedGame, user, session_key: str | None) -> bool:
    if row.owner_id is not None:
        return user is not None and user.is_authenticated and user.pk == row.owner_id
    return bool(row.session_key) and row.session_key == session_key


# --- playing ------------------------------------------------------------------------------------------

@dataclass
class Outcome:
    game_id: str
    view: dict
    ack: dict | None = None  # {"client_action_id", "duplicate"}
    events: list = field(default_factory=list)


def _opponent(row: PlayedGame):
    return make_player(row.opponent, seed=(row.seed + row.decisions) % (2 ** 31), models=search_models())


# "Pass until ...": the person's priority is passed for them (stack empty, passing offered) until
# the turn ends, or until their own next turn's main phase. Anything else stops it: the AI putting a
# spell or ability on the stack, a decision that is not a pass (attackers, blockers, a target, a
# discard), the game's end.
PASS_UNTIL = {"end_of_turn": "the end of this turn", "my_turn": "your next turn"}


def _passing_on(game: Game, seat: int, until: tuple[str, int] | None) -> bool:
    """Whether a pass-until (mode, turn it was asked on) still passes for ``seat`` now."""
    if until is None:
        return False
    mode, turn = until
    if game.turn == turn:
        return True
    return mode == "my_turn" and not (game.active_player() == seat and game.phase in MAIN_PHASES)


def _advance(row: PlayedGame, game: Game, raw: list, auto_pass: bool = True,
             until: tuple[str, int] | None = None, before_ai: Callable[[], None] | None = None) -> None:
    """The AI acts until it is the person's decision (a forced pass with an empty stack is taken for
    them, and every pass while a pass-until ``until`` runs) or the game ends. Appends (seat, Action,
    turn, extra) to ``raw``. ``before_ai()`` is called once, before the AI's first decision."""
    human, ai = row.human_seat, 1 - row.human_seat
    player = None
    for _ in range(MAX_AI_STEPS):
        seats = game.seats_to_act()
        if not seats:
            return
        if ai in seats:
            if before_ai is not None:
                before_ai()
                before_ai = None
            player = player or _opponent(row)
            try:
                action = player.choose(game, ai)
            except IllegalAction:
                action = None
            action = _apply_ai_move(row, game, ai, action)
            raw.append((ai, action, game.turn, {}))
            continue
        if human in seats and auto_pass:
            legal = game.legal_actions(human)
            passes = [a for a in legal if a.kind == "PassPriority"]
            if passes and _stack_empty(game) and (len(legal) == 1 or _passing_on(game, human, until)):
                _play(row, game, human, passes[0])
                continue
        return
    log.warning("game %s: the AI took %d decisions without handing over", row.pk, MAX_AI_STEPS)


def _play(row: PlayedGame, game: Game, seat: int, action: Action) -> None:
    """Apply ``action`` for ``seat``, add it to the game's record of moves (``row.moves``, what
    :func:`_replay` rebuilds the game from) and count the decision."""
    game.apply(seat, action)
    row.moves.append([seat, action.key])
    row.decisions += 1


def _apply_ai_move(row: PlayedGame, game: Game, ai: int, chosen: Action | None) -> Action:
    """Apply the AI's chosen move, listed among the offered ones or not; if the engine refuses it, or the AI
    chose nothing, the offered moves in order instead (``Game.apply_or_next``: a game must not stop on its AI's
    mistake). Returns the move applied."""
    def refused(action, exc):
        log.warning("game %s: the engine refused the AI's %s (%s); trying the next offered move", row.pk, action.kind, exc)

    try:
        return game.apply_or_next(ai, chosen, apply=lambda action: _play(row, game, ai, action), on_refused=refused)
    except IllegalAction as exc:
        raise PlayError(f"the AI has no move the rules engine accepts ({exc})", 500) from None


def _save(row: PlayedGame, game: Game, raw: list, conceded: bool = False) -> None:
    """Write what was played: the state, the new log entries, the turn and, once the game is over, the result and
    the final board (each seat's ``Game.final_observation``: the board before the engine's end-of-game clean-up;
    ``conceded``: the person conceded); one revision on."""
    state = game.state()
    row.log = row.log + _log_entries(raw, row, state)
    row.state = json.dumps(state, separators=(",", ":"))
    row.turn = game.turn
    result = game.result()
    if result is not None:
        winner = result.get("winner")
        row.status = "finished"
        row.result = {"winner": winner, "you_won": winner == row.human_seat, "draw": winner is None,
                      **({"conceded": True} if conceded else {})}
        row.final_board = {str(s): game.final_observation(s) for s in (0, 1)}
        text = ("You conceded: the AI won" if conceded else "You won" if winner == row.human_seat
                else "Draw" if winner is None else "The AI won")
        row.log = row.log + [{"turn": row.turn, "who": "game", "kind": "GameOver", "text": text}]
    row.revision += 1
    row.save()


def _guarded(fn: Callable, *args):
    """Run engine work; an engine panic or an unexpected engine error becomes a 500 PlayError."""
    try:
        return fn(*args)
    except EnginePanic as exc:
        log.warning("engine panic: %s", exc)
        raise PlayError(f"the rules engine crashed ({exc}); the game is kept as it was before this action", 500,
                        panic=True) from None
    except IllegalAction as exc:  # the AI's own move was refused: treat as an engine failure
        raise PlayError(f"the rules engine refused a move: {exc}", 500) from None


def create_game(human_deck, ai_deck, opponent: str = "engine:Medium", *, human_seat: int = 0,
                first: str = "random", user=None, session_key: str | None = None, seed: int | None = None,
                auto_pass: bool = True) -> tuple[PlayedGame, Outcome]:
    """Start a game; the AI acts until the person's first decision. Raises PlayError / DeckProblem."""
    if human_seat not in (0, 1) or isinstance(human_seat, bool):
        raise PlayError("seat must be 0 or 1")
    if first not in ("you", "ai", "random"):
        raise PlayError("first must be 'you', 'ai' or 'random'")
    signed_in = user is not None and user.is_authenticated
    if not signed_in and not session_key:
        raise PlayError("a guest needs a session (enable cookies)", 403)
    opponent = check_opponent(opponent)
    h_name, h_main = resolve_deck(human_deck, "your deck")
    a_name, a_main = resolve_deck(ai_deck, "the AI's deck")
    h_names, h_problem = check_deck(h_main, "your deck")
    a_names, a_problem = check_deck(a_main, "the AI's deck")
    if h_problem or a_problem:
        raise DeckProblem([p for p in (h_problem, a_problem) if p])
    if seed is None:
        seed = random.SystemRandom().randrange(2 ** 31)
    elif not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2 ** 31:
        raise PlayError("seed must be an integer from 0 to 2^31-1")
    first_player = {"you": human_seat, "ai": 1 - human_seat, "random": seed % 2}[first]
    row = PlayedGame(owner=user if signed_in else None, session_key="" if signed_in else session_key,
                     human_deck_name=h_name, human_deck=h_main, ai_deck_name=a_name, ai_deck=a_main,
                     opponent=opponent, human_seat=human_seat, seed=seed, first_player=first_player, moves=[],
                     engine=f"phase {carddb.engine_version()}".strip())
    decks = (h_names, a_names) if human_seat == 0 else (a_names, h_names)
    game = _guarded(lambda: get_engine().new_game(decks[0], decks[1], seed=seed, first_player=first_player))
    raw: list = []
    _guarded(_advance, row, game, raw, auto_pass)
    with transaction.atomic():
        row.state = ""
        _guarded(_save, row, game, raw)
        GAME_CACHE.keep(row.pk, row.revision, game)
        view = view_of(row, game)
    return row, Outcome(str(row.pk), view)


def _find_action(game: Game, seat: int, action) -> Action:
    """The offered action a client named by its ``key`` (string) or as ``{"type", "data"}``."""
    if isinstance(action, dict):
        if not isinstance(action.get("type"), str):
            raise PlayError("an action object needs a 'type' (and its 'data')", 400)
        action = json.dumps({"type": action["type"], "data": action.get("data")}, sort_keys=True, separators=(",", ":"))
    elif isinstance(action, str):
        try:
            json.loads(action)
        except ValueError:
            raise PlayError("an action key is the 'key' of one of the offered actions (a JSON text)", 400) from None
    else:
        raise PlayError("send the action's key (a string) or an object {\"type\", \"data\"}", 400)
    legal = {a.key: a for a in game.legal_actions(seat)}
    if action not in legal:
        raise PlayError("that action is not legal now", 409)
    return legal[action]


def _read(game_id) -> PlayedGame:
    row = PlayedGame.objects.filter(pk=game_id).first()
    if row is None:
        raise PlayError("no such game", 404)
    return row


def _commit(row: PlayedGame, game: Game, raw: list, conceded: bool = False) -> PlayedGame | None:
    """Write what was played on ``row`` (read at ``row.revision``, then played on without a lock) in one
    short locked transaction, if the stored game is still at that revision. Returns the written row,
    or None when the game changed meanwhile (nothing is written)."""
    with locked(row.pk) as fresh:
        if fresh.revision != row.revision:
            return None
        fresh.decisions, fresh.moves = row.decisions, row.moves
        _guarded(_save, fresh, game, raw, conceded)
        GAME_CACHE.keep(fresh.pk, fresh.revision, game)
        return fresh


def _duplicate(row: PlayedGame, client_action_id: str | None) -> Outcome | None:
    if client_action_id and any(e.get("id") == client_action_id for e in row.log[-400:]):
        return Outcome(str(row.pk), view_of(row), ack={"client_action_id": client_action_id, "duplicate": True})
    return None


COMMIT_TRIES = 3  # an action played on a revision that moved on meanwhile is re-checked against the new one


def human_action(game_id, seat: int, action, expected_revision: int | None = None,
                 client_action_id: str | None = None, auto_pass: bool = True, pass_until: str | None = None,
                 on_applied: Callable[[dict], None] | None = None) -> Outcome:
    """Apply the person's action, then let the AI reply. See the module docstring for the guarantees.

    ``action``: an offered action's ``key`` (string) or ``{"type", "data"}``. ``expected_revision``:
    the revision the client saw (a different one is refused as stale, 409). ``client_action_id``:
    a resend with the same id is answered (``ack.duplicate``), never applied twice. ``pass_until``
    (with a pass only): one of PASS_UNTIL, the person's priority is passed for them until then.
    ``on_applied(view)``: called with the :func:`provisional_view` once the action is applied, when a
    slow AI is about to think (the shells publish it, so the person sees their action at once).

    The AI thinks without holding the game's row lock (a search opponent may think for many seconds;
    on SQLite the lock is the whole database's write lock): the action and the AI's replies are played
    on a private copy of the game read at revision r, and written in one short locked transaction only
    if the game is still at r. Otherwise nothing is written and the action is judged again against the
    game as it now is (a resend of an action that landed meanwhile is answered as a duplicate)."""
    if client_action_id is not None and (not isinstance(client_action_id, str) or not 0 < len(client_action_id) <= 64):
        raise PlayError("client_action_id is 1 to 64 characters")
    if expected_revision is not None and (not isinstance(expected_revision, int) or isinstance(expected_revision, bool)):
        raise PlayError("revision must be an integer")
    if pass_until is not None and (not isinstance(pass_until, str) or pass_until not in PASS_UNTIL):
        raise PlayError(f"pass_until is one of: {', '.join(PASS_UNTIL)}")
    for _ in range(COMMIT_TRIES):
        row = _read(game_id)
        duplicate = _duplicate(row, client_action_id)
        if duplicate is not None:
            return duplicate
        if seat != row.human_seat:
            raise PlayError(f"seat {seat} is not yours in this game", 403)
        if row.status != "playing":
            raise PlayError("the game is over", 409)
        if expected_revision is not None and expected_revision != row.revision:
            raise PlayError(f"stale action: the game is at revision {row.revision}, you sent one for revision "
                            f"{expected_revision}; look again and choose", 409, revision=row.revision)
        game = _game_of(row)
        try:
            if seat not in game.seats_to_act():
                raise PlayError("it is not your decision now", 409)
            chosen = _find_action(game, seat, action)
            if pass_until is not None and chosen.kind != "PassPriority":
                raise PlayError("pass_until goes with passing priority, not with this action")
        except PlayError:
            GAME_CACHE.put(row.pk, row.revision, game)  # untouched: the next request need not load it
            raise
        until = (pass_until, game.turn) if pass_until else None
        try:
            _play(row, game, seat, chosen)
        except IllegalAction as exc:
            raise PlayError(f"that action is not legal now ({exc})", 409) from None
        except EnginePanic as exc:
            log.warning("engine panic in game %s: %s", row.pk, exc)
            raise PlayError(f"the rules engine crashed ({exc}); the game is kept as it was before this action",
                            500, panic=True) from None
        raw = [(seat, chosen, game.turn, {"id": client_action_id} if client_action_id else {})]
        announce = _announcer(row, game, raw, on_applied) if on_applied is not None and _slow_opponent(row) else None
        _guarded(_advance, row, game, raw, auto_pass, until, announce)  # the AI thinks here, no lock held
        written = _commit(row, game, raw)
        if written is not None:
            cancel_advice(game_id)
            return Outcome(str(game_id), view_of(written, game),
                           ack={"client_action_id": client_action_id, "duplicate": False})
    raise PlayError("the game kept changing while this action was played; look again and choose", 409)


def concede(game_id, seat: int) -> Outcome:
    """The person concedes the game: it ends at once, the AI wins, and it can be reviewed. The board shown is
    the one as it stood when they conceded (the engine then exiles every card of theirs). Refused, writing
    nothing: a seat that is not theirs (403), no such game (404), a finished game (409); an engine failure
    (500) keeps the game as it was. Like an action, it is played on a private copy and written only if no
    other request wrote the game meanwhile (else judged again); it stops the game's running advice."""
    for _ in range(COMMIT_TRIES):
        row = _read(game_id)
        if seat != row.human_seat:
            raise PlayError(f"seat {seat} is not yours in this game", 403)
        if row.status != "playing":
            raise PlayError("the game is over", 409)
        game = _game_of(row)
        try:
            action = game.concede(seat)
        except IllegalAction as exc:
            raise PlayError(f"the rules engine refused the concession ({exc})", 500) from None
        except EnginePanic as exc:
            raise PlayError(f"the rules engine crashed ({exc}); the game is kept as it was", 500, panic=True) from None
        row.moves.append([seat, action.key])
        row.decisions += 1
        written = _commit(row, game, [], conceded=True)
        if written is not None:
            cancel_advice(game_id)
            return Outcome(str(game_id), view_of(written, game))
    raise PlayError("the game kept changing while you conceded; try again", 409)


def resume(game_id) -> Outcome | None:
    """Let the AI play on when the stored game waits for it (an advance cut at MAX_AI_STEPS, or a state
    written by other code). None when the person has the decision, the game is over, or another
    request played the AI's move meanwhile. The AI thinks without the row lock, as in human_action."""
    row = _read(game_id)
    if row.status != "playing":
        return None
    game = _game_of(row)
    if (1 - row.human_seat) not in game.seats_to_act():
        GAME_CACHE.put(row.pk, row.revision, game)
        return None
    raw: list = []
    _guarded(_advance, row, game, raw)
    written = _commit(row, game, raw)
    return Outcome(str(game_id), view_of(written, game)) if written is not None else None


def snapshot(game_id) -> dict:
    return view_of(_read(game_id))


# --- publishing ---------------------------------------------------------------------------------------

async def publish(layer, outcome: Outcome | None) -> None:
    if layer is None or outcome is None:
        return
    await layer.group_send(game_group(outcome.game_id), {"type": "game.view", "view": outcome.view})


def publish_sync(outcome: Outcome | None) -> None:
    live.publish_sync(publish, outcome)


def send_to_game(game_id, message: dict) -> None:
    """An advisor's message to every socket of the game."""
    live.send_to_group(game_group(game_id), {"type": "game.advice", "message": message})


# --- the advice ticket: which advice request is wanted (the advisor stops when it is not) --------------

def _ticket_key(game_id) -> str:
    return f"game:{game_id}:advice"


def new_ticket(game_id) -> str:
    """Mark a new advice request as the wanted one (an older search stops at its next progress)."""
    ticket = uuid.uuid4().hex
    cache.set(_ticket_key(game_id), ticket, 3600)
    return ticket


def cancel_advice(game_id, only: str | None = None) -> None:
    """Stop the running advice of a game (with ``only``: if it is still that request)."""
    try:
        if only and cache.get(_ticket_key(game_id)) != only:
            return
        cache.set(_ticket_key(game_id), "", 3600)
    except Exception:  # noqa: BLE001 - the cache is down (its backend's errors share no base class): running advice simply finishes
        log.warning("could not cancel the advice of game %s", game_id)


def advice_wanted(game_id, ticket: str | None) -> bool:
    """Whether the advice request ``ticket`` is still the wanted one (no ticket: always)."""
    if not ticket:
        return True
    try:
        return cache.get(_ticket_key(game_id)) == ticket
    except Exception:  # noqa: BLE001 - the cache is down (its backend's errors share no base class): advise anyway
        return True
