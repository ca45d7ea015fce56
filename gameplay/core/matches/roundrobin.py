"""The gauntlet's pure core: a round robin between N decks, K games per pair with seats swapped.

* :func:`schedule` lists the games: every unordered pair of decks, ``K`` games each. Games come in
  mirrored couples: game ``2m`` puts the first deck of the pair in seat 0, game ``2m + 1`` puts it
  in seat 1, and both use the same seed, so each deck gets the same shuffle luck and goes first
  (seat 0 always starts) as often as the other. With an odd ``K`` the last game has no mirror.
  Games are ordered round by round over the pairs, so a half-finished run covers every pair.
* :func:`play_match` plays one game between two main decks with two players built from one spec
  (``engine:Medium``, ``random``, ``search:fast`` ...; a search player with the caller's ``models``). An engine error (a Rust panic included)
  is returned as the game's ``error``: the caller records it and the gauntlet carries on.
* :func:`aggregate` turns finished games into a win-rate matrix (row deck against column deck)
  with Wilson 95% intervals, overall standings and the first seat's edge.
  **Draws count half**: a draw, or a game cut at the decision cap, gives each deck half a win
  (chess scoring); draws and cut games are also counted separately. Games that ended in an
  error are left out of every rate and counted apart.
* :func:`card_stats` tells which cards are most present in won games: for each card, the share
  of won deck-games whose deck plays it against the same share over lost deck-games, the score
  of the decks playing it with its interval, and the mean copies in won and lost deck-games.
  With a handful of decks a card's figures are those of the decks that play it: read them as
  "what the winning decks have in common", not as the card's own strength.
* :func:`heatmap_figure` draws the matrix (matplotlib, no pyplot); ``common.figures.figure_bytes`` renders it.

No Django here: the shell (``gameplay.gauntlet``) stores runs and games and calls these. The top of
the core's layers: imports engine and players (and so everything below them).
"""
from __future__ import annotations

import random
import time
from dataclasses import dataclass
from itertools import combinations
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from common.figures import new_figure
from common.stats import Z95, wilson
from gameplay.core.engine.adapter import EngineError, PhaseEngine
from gameplay.core.matches.players import make_player, play_game
from gameplay.core.search.evaluation import SearchModels

DRAW_POLICY = "a draw (or a game cut at the decision cap) counts half a win for each deck"
BASIC_LANDS = frozenset({"Plains", "Island", "Swamp", "Mountain", "Forest", "Wastes", "Snow-Covered Plains",
                         "Snow-Covered Island", "Snow-Covered Swamp", "Snow-Covered Mountain", "Snow-Covered Forest",
                         "Snow-Covered Wastes"})
MAX_GAMES_PER_PAIR = 1000


class GauntletInputError(ValueError):
    """A gauntlet that cannot be scheduled (fewer than two decks, K < 1, ...)."""


# --- schedule --------------------------------------------------------------------------------

@dataclass(frozen=True)
class ScheduledGame:
    index: int              # 0..total-1, the order games are dispatched in
    pair: tuple[int, int]   # deck indexes (a, b) with a < b
    round: int              # this game's number within its pair, 0..K-1
    seats: tuple[int, int]  # the deck in seat 0 (plays first) and in seat 1
    seed: int

    @property
    def mirror(self) -> int:
        """Games with the same pair and mirror number share a seed and have their seats swapped."""
        return self.round // 2

    def to_dict(self) -> dict:
        return {"index": self.index, "pair": list(self.pair), "round": self.round, "seats": list(self.seats),
                "seed": self.seed}


def game_seed(base_seed: int, a: int, b: int, mirror: int) -> int:
    """A deterministic 31-bit seed for the ``mirror``-th couple of games between decks ``a`` and ``b``."""
    return random.Random(f"gauntlet:{int(base_seed)}:{a}:{b}:{mirror}").getrandbits(31)


def schedule(n_decks: int, games_per_pair: int, seed: int = 0) -> list[ScheduledGame]:
    """Every unordered pair of ``n_decks`` decks, ``games_per_pair`` games each, seats alternating."""
    if n_decks < 2:
        raise GauntletInputError("a gauntlet needs at least two decks")
    if not 1 <= games_per_pair <= MAX_GAMES_PER_PAIR:
        raise GauntletInputError(f"games per pair must be between 1 and {MAX_GAMES_PER_PAIR}, not {games_per_pair}")
    pairs = list(combinations(range(n_decks), 2))
    out = []
    for rnd in range(games_per_pair):
        for a, b in pairs:
            seats = (a, b) if rnd % 2 == 0 else (b, a)
            out.append(ScheduledGame(len(out), (a, b), rnd, seats, game_seed(seed, a, b, rnd // 2)))
    return out


# --- playing one game -------------------------------------------------------------------------

def expand(cards: Iterable[Sequence]) -> list[str]:
    """``[[name, count], ...]`` -> one name per copy."""
    return [str(name) for name, count in cards for _ in range(int(count))]


def play_match(engine, deck0: Sequence[str], deck1: Sequence[str], *, seed: int, player: str = "engine:Medium",
               max_decisions: int = 5000, models: SearchModels | None = None) -> dict:
    """Play one game (seat 0 starts) between two main decks, both seats played by ``player`` (a search player with
    the learned ``models``; None: the shipped ones).

    Returns ``{"winner": seat | None, "turns", "decisions", "seconds", "cut", "error"}``: ``cut`` when
    the decision cap ended the game, ``error`` (a message) when the engine failed; then the game is
    not scored and ``winner`` is None.
    """
    started = time.perf_counter()
    count = [0]
    game = None

    def on_decision(_game, _seat, _action):
        count[0] += 1

    def turn():
        try:
            return game.turn if game is not None else 0
        except BaseException:  # noqa: BLE001 - a panicking engine: the turn is unknown
            return None

    try:
        game = engine.new_game(list(deck0), list(deck1), seed=seed, first_player=0)
        players = (make_player(player, seed * 2, models), make_player(player, seed * 2 + 1, models))
        result = play_game(game, players, max_decisions=max_decisions, on_decision=on_decision)
        over = game.result()
    except EngineError as exc:
        return {"winner": None, "turns": turn(), "decisions": count[0], "seconds": round(time.perf_counter() - started, 3),
                "cut": False, "error": f"{type(exc).__name__}: {exc}"[:2000]}
    return {"winner": result["winner"], "turns": result["turns"], "decisions": result["decisions"],
            "seconds": round(time.perf_counter() - started, 3), "cut": over is None, "error": None}


# Process-pool helpers (``manage.py gauntlet --workers N``): one engine per worker process.
_pool_engine = None


def pool_init(card_data_path: str) -> None:
    global _pool_engine
    _pool_engine = PhaseEngine(card_data_path)


def pool_play(index: int, deck0: Sequence[str], deck1: Sequence[str], seed: int, player: str,
              max_decisions: int) -> tuple[int, dict]:
    try:
        return index, play_match(_pool_engine, deck0, deck1, seed=seed, player=player, max_decisions=max_decisions)
    except Exception as exc:  # noqa: BLE001 - a player bug must not lose the whole pool: the game records the error
        return index, {"winner": None, "turns": None, "decisions": None, "seconds": None, "cut": False,
                       "error": f"internal error: {type(exc).__name__}: {exc}"[:2000]}


# --- statistics -------------------------------------------------------------------------------

def _record(wins: int, losses: int, draws: int, z: float = Z95) -> dict:
    games = wins + losses + draws
    score = wins + draws / 2
    rate, low, high = wilson(score, games, z)
    return {"games": games, "wins": wins, "losses": losses, "draws": draws, "score": score,
            "rate": None if rate is None else round(rate, 4), "low": round(low, 4), "high": round(high, 4)}


def _field(game: Any, name: str, default=None):
    if isinstance(game, Mapping):
        return game.get(name, default)
    return getattr(game, name, default)


def _scored(games: Iterable[Any]):
    """(seat0 deck, seat1 deck, winning seat or None) of every game that ended without an error."""
    for g in games:
        if _field(g, "error"):
            continue
        seats = _field(g, "seats")
        yield int(seats[0]), int(seats[1]), _field(g, "winner")


def aggregate(deck_names: Sequence[str], games: Iterable[Any], z: float = Z95) -> dict:
    """The win-rate matrix, standings and seat edge of finished games.

    ``games``: dicts (or objects) with ``seats`` ([deck in seat 0, deck in seat 1]), ``winner`` (0, 1
    or None for a draw / cut game), ``error`` (a message, or empty) and optionally ``cut``.
    ``matrix[i][j]`` is deck i's record against deck j (None on the diagonal); rates count draws half.
    """
    games = list(games)
    n = len(deck_names)
    wins = [[0] * n for _ in range(n)]
    draws = [[0] * n for _ in range(n)]
    first_wins = first_games = first_draws = 0
    for d0, d1, winner in _scored(games):
        if not (0 <= d0 < n and 0 <= d1 < n) or d0 == d1:
            raise GauntletInputError(f"a game between decks {d0} and {d1} does not fit {n} decks")
        first_games += 1
        if winner in (0, 1):
            won, lost = (d0, d1) if winner == 0 else (d1, d0)
            wins[won][lost] += 1
            first_wins += winner == 0
        else:
            draws[d0][d1] += 1
            draws[d1][d0] += 1
            first_draws += 1
    matrix = [[None if i == j else _record(wins[i][j], wins[j][i], draws[i][j], z) for j in range(n)]
              for i in range(n)]
    standings = []
    for i in range(n):
        rec = _record(sum(wins[i]), sum(wins[j][i] for j in range(n)), sum(draws[i]), z)
        standings.append({"deck": i, "name": deck_names[i], **rec})
    standings.sort(key=lambda r: (-(r["rate"] if r["rate"] is not None else -1), -r["games"], r["name"]))
    errors = sum(1 for g in games if _field(g, "error"))
    cut = sum(1 for g in games if not _field(g, "error") and _field(g, "cut"))
    return {
        "decks": list(deck_names),
        "draw_policy": DRAW_POLICY,
        "confidence": 0.95 if z == Z95 else None,
        "matrix": matrix,
        "standings": standings,
        "first_seat": _record(first_wins, first_games - first_wins - first_draws, first_draws, z),
        "games": {"finished": len(games), "scored": first_games, "errors": errors, "draws": first_draws, "cut": cut},
    }


def card_stats(deck_cards: Sequence[Mapping[str, int]], games: Iterable[Any], *, include_basics: bool = False,
               z: float = Z95) -> list[dict]:
    """The cards most present in won games, most first.

    ``deck_cards[i]``: deck i's main deck as ``{name: copies}``. Each scored game gives two
    deck-games, one won and one lost (a draw: half of each). For every card:

    * ``won_share`` / ``lost_share``: the share of won (lost) deck-games whose deck plays it;
      ``presence = won_share - lost_share`` (the sort key: positive means more present in wins);
    * ``rate`` [``low``, ``high``]: the score of the deck-games playing it, with a Wilson interval;
    * ``copies_won`` / ``copies_lost``: mean copies per won (lost) deck-game;
    * counts: ``decks`` playing it, ``games`` (deck-games), ``won`` and ``lost`` (draws half).

    Basic lands are left out unless ``include_basics``.
    """
    n = len(deck_cards)
    score = [0.0] * n
    played = [0] * n
    for d0, d1, winner in _scored(games):
        for seat, deck in enumerate((d0, d1)):
            played[deck] += 1
            score[deck] += 1.0 if winner == seat else (0.5 if winner not in (0, 1) else 0.0)
    total_won = sum(score)
    total_lost = sum(played) - total_won
    names = sorted({name for cards in deck_cards for name in cards})
    out = []
    for name in names:
        if not include_basics and name in BASIC_LANDS:
            continue
        holders = [i for i in range(n) if deck_cards[i].get(name)]
        g = sum(played[i] for i in holders)
        won = sum(score[i] for i in holders)
        lost = g - won
        rate, low, high = wilson(won, g, z)
        won_share = won / total_won if total_won else 0.0
        lost_share = lost / total_lost if total_lost else 0.0
        out.append({
            "card": name, "decks": len(holders), "games": g, "won": won, "lost": lost,
            "won_share": round(won_share, 4), "lost_share": round(lost_share, 4),
            "presence": round(won_share - lost_share, 4),
            "rate": None if rate is None else round(rate, 4), "low": round(low, 4), "high": round(high, 4),
            "copies_won": round(sum(deck_cards[i][name] * score[i] for i in holders) / total_won, 3) if total_won else 0.0,
            "copies_lost": round(sum(deck_cards[i][name] * (played[i] - score[i]) for i in holders) / total_lost, 3)
            if total_lost else 0.0,
        })
    out.sort(key=lambda r: (-r["presence"], -r["won_share"], r["card"]))
    return out


# --- text and figures -------------------------------------------------------------------------

def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.0f}%"


def format_matrix(summary: Mapping) -> str:
    """The matrix as a fixed-width text table: each cell ``rate [low-high] n``."""
    names = summary["decks"]
    width = max(12, *(len(n) for n in names)) if names else 12
    cell = 18
    lines = [" " * width + "".join(f"{n[:cell - 1]:>{cell}}" for n in names) + f"{'overall':>{cell}}"]
    overall = {s["deck"]: s for s in summary["standings"]}
    for i, name in enumerate(names):
        row = f"{name:<{width}}"
        for j in range(len(names)):
            c = summary["matrix"][i][j]
            text = "—" if c is None or not c["games"] else \
                f"{_pct(c['rate'])} [{100 * c['low']:.0f}-{100 * c['high']:.0f}] {c['games']}"
            row += f"{text:>{cell}}"
        s = overall[i]
        total = f"{_pct(s['rate'])} [{100 * s['low']:.0f}-{100 * s['high']:.0f}]" if s["games"] else "—"
        row += f"{total:>{cell}}"
        lines.append(row)
    return "\n".join(lines)


def heatmap_figure(summary: Mapping, title: str | None = None):
    """The win-rate matrix as a heat map: rows are the deck whose rate is shown, against the column deck.

    Each cell shows the win rate (draws half), its 95% interval and the number of games; the
    colour goes from red (the row deck loses) through white (even) to blue (it wins). Row labels
    carry each deck's overall rate.
    """
    names = list(summary["decks"])
    n = len(names)
    rates = np.full((n, n), np.nan)
    for i in range(n):
        for j in range(n):
            c = summary["matrix"][i][j]
            if c is not None and c["games"] and c["rate"] is not None:
                rates[i, j] = c["rate"]
    overall = {s["deck"]: s for s in summary["standings"]}
    longest = max((len(x) for x in names), default=0)
    left = 0.75 + 0.065 * longest      # inches for the y label and the deck names
    bottom = 0.65 + 0.045 * longest    # the slanted column names
    cell = 1.45 if n <= 6 else max(0.7, 8.5 / n)
    width, height = left + cell * n + 1.2, bottom + cell * n + 0.55
    fig = new_figure(figsize=(width, height), dpi=100)
    fig.subplots_adjust(left=left / width, right=1 - 1.2 / width, bottom=bottom / height, top=1 - 0.55 / height)
    ax = fig.add_subplot(1, 1, 1)
    from matplotlib import colormaps  # noqa: PLC0415 - matplotlib is heavy: loaded only to draw

    cmap = colormaps["RdBu"].copy()
    cmap.set_bad("#e6e6e6")
    image = ax.imshow(np.ma.masked_invalid(rates), cmap=cmap, vmin=0.0, vmax=1.0, interpolation="nearest",
                      aspect="equal")
    size = 9 if cell >= 1.2 else 7
    for i in range(n):
        for j in range(n):
            c = summary["matrix"][i][j]
            if i == j:
                ax.text(j, i, "—", ha="center", va="center", color="#777777", fontsize=size)
                continue
            if c is None or not c["games"]:
                ax.text(j, i, "no games", ha="center", va="center", color="#777777", fontsize=size - 1)
                continue
            dark = abs(c["rate"] - 0.5) > 0.3
            ax.text(j, i, f"{_pct(c['rate'])}\n[{100 * c['low']:.0f}–{100 * c['high']:.0f}%]\nn={c['games']}",
                    ha="center", va="center", color="white" if dark else "#1a1a1a", fontsize=size, linespacing=1.25)
    labels = [f"{name}\n{_pct(overall[i]['rate'])} overall" if overall[i]["games"] else name
              for i, name in enumerate(names)]
    ax.set_yticks(range(n), labels, fontsize=8)
    ax.set_xticks(range(n), names, rotation=35, ha="right", fontsize=8)
    ax.set_xlabel("opponent")
    ax.set_ylabel("deck (its win rate against the column)")
    ax.set_xticks(np.arange(-0.5, n, 1), minor=True)
    ax.set_yticks(np.arange(-0.5, n, 1), minor=True)
    ax.grid(which="minor", color="white", linewidth=2)
    ax.tick_params(which="minor", length=0)
    games = summary.get("games") or {}
    ax.set_title(title or f"Gauntlet: win rate with 95% interval ({games.get('scored', 0)} games, draws count half)",
                 fontsize=10)
    cax = fig.add_axes((1 - 0.95 / width, bottom / height, 0.18 / width, cell * n / height))
    fig.colorbar(image, cax=cax, label="win rate")
    return fig


__all__ = ["BASIC_LANDS", "DRAW_POLICY", "GauntletInputError", "ScheduledGame", "aggregate", "card_stats", "expand",
           "format_matrix", "game_seed", "heatmap_figure", "play_match", "pool_init", "pool_play",
           "schedule"]
