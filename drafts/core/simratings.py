"""Card ratings from simulated pods (issue 38): a card's win rate when drawn, its interval, and how its order
agrees with 17Lands' (pure: no Django).

A *seat game* is one player's side of one finished game: the set of card names that left their library (opening
hand included, as 17Lands' "games in hand": a card counts once per game however many copies were drawn) and
whether that player won. A card's GIH win rate is its seat games won over its seat games; undecided games are
left out by the caller. ``bench.draft_games`` makes the seat games, the draft page shows the table.

The agreement with 17Lands is Spearman's rho between the simulated and the real GIH win rates of the cards with
at least ``min_games`` seat games; its interval is a percentile bootstrap over *pods* (every game of a pod shares
its eight decks, so pods, not games, are the independent draws), the card set held fixed.
"""
from __future__ import annotations

from typing import Iterable, Mapping, Sequence

import numpy as np

from common.stats import wilson
from drafts.bots.ratings import spearman

SeatGame = tuple[Iterable[str], bool]  # (card names drawn, won)


def gih_counts(seat_games: Iterable[SeatGame]) -> dict[str, list[int]]:
    """Card name -> [seat games won, seat games] over seat games ``(drawn names, won)``; a name counts once per
    seat game."""
    out: dict[str, list[int]] = {}
    for drawn, won in seat_games:
        for name in set(drawn):
            row = out.setdefault(name, [0, 0])
            row[0] += bool(won)
            row[1] += 1
    return out


def gih_table(counts: Mapping[str, Sequence[int]], min_games: int = 0) -> dict[str, dict]:
    """Card name -> ``{"won", "games", "wr", "low", "high"}`` (the win rate and its 95% Wilson interval) for the
    cards with at least ``min_games`` seat games, best win rate first."""
    rows = {}
    for name, (won, games) in counts.items():
        if games < max(min_games, 1):
            continue
        wr, low, high = wilson(won, games)
        rows[name] = {"won": int(won), "games": int(games), "wr": round(wr, 4), "low": round(low, 4),
                      "high": round(high, 4)}
    return dict(sorted(rows.items(), key=lambda kv: (-kv[1]["wr"], kv[0])))


def rank_agreement(counts: Mapping[str, Sequence[int]], reference: Mapping[str, float], min_games: int) -> dict:
    """Spearman's rho between the simulated GIH win rates of the cards with at least ``min_games`` seat games
    and ``reference`` (17Lands' GIH WR), over the cards both have: ``{"rho", "cards"}`` (rho None under 3)."""
    names = sorted(n for n, (_, g) in counts.items() if g >= max(min_games, 1) and reference.get(n) is not None)
    if len(names) < 3:
        return {"rho": None, "cards": len(names)}
    rho = spearman([counts[n][0] / counts[n][1] for n in names], [reference[n] for n in names])
    return {"rho": None if np.isnan(rho) else round(rho, 4), "cards": len(names)}


def noise_ceiling(counts: Mapping[str, Sequence[int]], reference: Mapping[str, float], min_games: int) -> float | None:
    """About the highest correlation the sampling noise allows even if the simulation ranked cards exactly as
    17Lands' players do: sqrt(v / (v + e)), v the variance of the reference win rates and e the mean binomial
    variance p(1-p)/n of the simulated ones (p = 0.5 + the reference's spread is ignored: a rough, slightly high
    bound, for Pearson's r; Spearman's behaves alike). None under 3 cards."""
    names = [n for n, (_, g) in counts.items() if g >= max(min_games, 1) and reference.get(n) is not None]
    if len(names) < 3:
        return None
    ref = np.array([reference[n] for n in names], dtype=float)
    noise = float(np.mean([0.25 / counts[n][1] for n in names]))
    signal = float(ref.var())
    return round((signal / (signal + noise)) ** 0.5, 4) if signal + noise > 0 else None


def pod_matrix(pods: Sequence[Iterable[SeatGame]], names: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """(won, games): arrays [pods, cards] of each pod's seat games of each of ``names``."""
    index = {n: i for i, n in enumerate(names)}
    won = np.zeros((len(pods), len(names)))
    games = np.zeros((len(pods), len(names)))
    for p, seat_games in enumerate(pods):
        for name, (w, g) in gih_counts(seat_games).items():
            if name in index:
                won[p, index[name]] += w
                games[p, index[name]] += g
    return won, games


def bootstrap_rho(pods: Sequence[Sequence[SeatGame]], reference: Mapping[str, float], min_games: int,
                  reps: int = 1000, seed: int = 0, level: float = 0.95) -> dict:
    """Spearman's rho of :func:`rank_agreement` over all ``pods`` (each a list of seat games) with a percentile
    bootstrap interval: ``reps`` resamples of the pods with replacement, each scoring the same cards (those with
    ``min_games`` in the full data) on the resampled games (a card no resample game drew is left out of that
    resample). ``{"rho", "low", "high", "cards", "pods", "reps"}``; rho and the bounds None with under 3 cards or
    under 2 pods."""
    pods = [list(p) for p in pods]
    counts = gih_counts(g for p in pods for g in p)
    point = rank_agreement(counts, reference, min_games)
    out = {**point, "low": None, "high": None, "pods": len(pods), "reps": reps}
    if point["rho"] is None or len(pods) < 2:
        return out
    names = sorted(n for n, (_, g) in counts.items() if g >= max(min_games, 1) and reference.get(n) is not None)
    ref = np.array([reference[n] for n in names], dtype=float)
    won, games = pod_matrix(pods, names)
    rng = np.random.default_rng(seed)
    rhos = []
    for _ in range(reps):
        weights = np.bincount(rng.integers(0, len(pods), len(pods)), minlength=len(pods)).astype(float)
        w, g = weights @ won, weights @ games
        seen = g > 0
        if seen.sum() < 3:
            continue
        rho = spearman(w[seen] / g[seen], ref[seen])
        if not np.isnan(rho):
            rhos.append(rho)
    if rhos:
        tail = (1 - level) / 2
        out["low"], out["high"] = (round(float(q), 4) for q in np.quantile(rhos, [tail, 1 - tail]))
    return out


def growth(pods: Sequence[Sequence[SeatGame]], games_per_pod: Sequence[int], reference: Mapping[str, float],
           checkpoints: Sequence[int], min_games: int, reps: int = 300, seed: int = 0) -> list[dict]:
    """How the agreement grows with the number of games: for each checkpoint (a number of games), the pods played
    by then in order (whole pods: the first pods whose games add up to at most the checkpoint) and
    :func:`bootstrap_rho` on them, with ``games`` the games those pods hold."""
    out = []
    for checkpoint in checkpoints:
        total, k = 0, 0
        while k < len(pods) and total + games_per_pod[k] <= checkpoint:
            total += games_per_pod[k]
            k += 1
        if k == 0 or (out and out[-1]["games"] == total):
            continue
        out.append({"games": total, **bootstrap_rho(pods[:k], reference, min_games, reps=reps, seed=seed)})
    return out


SHOWN_MIN_GAMES = 30  # a simulated rating is shown beside the pick suggestions from this many seat games


def shown_ratings(cards: Mapping[str, Mapping], min_games: int = SHOWN_MIN_GAMES) -> dict[str, dict]:
    """The simulated ratings worth showing: card name -> ``{"wr", "n"}`` for the cards of a results table
    (``gih_table`` rows, or the bench's ``cards``) with at least ``min_games`` seat games."""
    out = {}
    for name, row in cards.items():
        try:
            games, wr = int(row["games"]), float(row["wr"])
        except (KeyError, TypeError, ValueError):
            continue
        if games >= min_games:
            out[name] = {"wr": round(wr, 4), "n": games}
    return out


def agrees_with_players(set_result: Mapping) -> bool:
    """Whether a set's simulated ratings are worth showing at all: the bench's rank correlation of the simulated GIH
    win rates (cards with ``SHOWN_MIN_GAMES`` seat games) with 17Lands' has its 95% interval above zero. Below
    that, a label beside a pick would be sampling noise dressed as a rating (FDN after 106 games: rho -0.04,
    interval -0.43 to 0.32, so nothing is shown)."""
    try:
        return float((set_result.get("spearman") or {})["low"]) > 0
    except (AttributeError, KeyError, TypeError, ValueError):
        return False


def for_cards(ratings: Mapping[str, Mapping], names: Iterable[str]) -> dict[str, dict]:
    """The ratings of ``names`` only (a drafter's own pack): nothing about any other card."""
    return {n: dict(ratings[n]) for n in dict.fromkeys(names) if n in ratings}


def sim_label(rating: Mapping) -> str:
    """``{"wr": 0.561, "n": 41}`` -> "sim GIH 56% (n=41)"."""
    return f"sim GIH {rating['wr'] * 100:.0f}% (n={rating['n']})"


def round_robin(seats: int, rounds: int) -> list[list[tuple[int, int]]]:
    """The first ``rounds`` rounds of a round robin of ``seats`` (even) players by the circle method: seat 0
    stays, the others rotate; each round a list of (seat, seat) tables, no pair met twice."""
    if seats < 2 or seats % 2:
        raise ValueError("a round robin here needs an even number of seats, at least 2")
    if not 0 <= rounds <= seats - 1:
        raise ValueError(f"{seats} seats play at most {seats - 1} rounds")
    ring = list(range(1, seats))
    out = []
    for r in range(rounds):
        order = [0] + ring[r:] + ring[:r]
        out.append([tuple(sorted((order[i], order[seats - 1 - i]))) for i in range(seats // 2)])
    return out


__all__ = ["SHOWN_MIN_GAMES", "agrees_with_players", "bootstrap_rho", "for_cards", "gih_counts", "gih_table", "growth", "noise_ceiling",
           "pod_matrix",
           "rank_agreement", "round_robin", "shown_ratings", "sim_label"]
