"""The paired strength yardstick: a player against an opponent, compared game by game with a baseline player
sitting in the same seat on the same deal.

A *job* is one game: the two decks (seat 0's first), the seed (the deal and the engine's randomness), which
seat is ours and who sits opposite. Each job is played twice, once with our player in the seat and once with
the baseline (the engine's own VeryHard AI), so the deck, the seat, the deal and the opponent are the same for
both; the two results form a *pair*. Most pairs agree (the deal decides); only the discordant ones say which
player is stronger, and the sign test (``gameplay.core.matches.roundrobin.sign_test``) says whether their split could
be chance. Win rates carry Wilson intervals.

Pure: no Django; imports the engine, the players and the round robins' statistics (``roundrobin``). Played by
``bench/game_strength.py`` in local processes or, through the Celery task ``gameplay.strength_game``, on
workers.
"""
from __future__ import annotations

import dataclasses
import time
import zlib
from typing import Iterable, Sequence

from common.stats import sign_test, sprt_path, wilson
from gameplay.core.matches.roundrobin import expand
from gameplay.core.matches.players import make_player, play_game
from gameplay.core.search.ensemble import EnsembleConfig
from gameplay.core.search.evaluation import SearchModels

BASELINE = "engine:VeryHard"


def jobs(pairings: Sequence[Sequence[str]], *, seeds: int, seed: int, opponent: str = BASELINE,
         max_decisions: int = 3000) -> list[dict]:
    """Every pairing (deck a, deck b; a == b for a mirror) on ``seeds`` deals, each deal with our player in
    either seat holding either deck. Deal i of a pairing is seed ``seed + 100 * pairing_number(a, b) + i``: it
    depends on the pairing, not on which others are run, so runs over other selections share their games.
    Interleaved deal by deal across the pairings, so a run cut short leaves each pairing about as far along."""
    out = []
    for i in range(seeds):
        for a, b in pairings:
            orders = [(a, b)] if a == b else [(a, b), (b, a)]
            for decks in orders:
                for ours_seat in (0, 1):
                    out.append({"decks": [decks[0], decks[1]], "seed": seed + 100 * pairing_number(a, b) + i,
                                "ours_seat": ours_seat,
                                "opponent": opponent, "mirror": a == b, "max_decisions": max_decisions})
    return out


def pairing_number(a: str, b: str) -> int:
    """A number from 0 to 99,999 fixed by the two deck names (in either order)."""
    return zlib.crc32("|".join(sorted((a, b))).encode()) % 100_000


def key(game: dict) -> tuple:
    """What makes two games a pair: the same decks in the same seats, deal, seat and opponent."""
    return (tuple(game["decks"]), game["seed"], game["ours_seat"], game["opponent"])


class _Timed:
    """A player whose decisions and their CPU time are counted; ``on_turn(side)`` hears whose decision starts
    (a bench's meter of the engine's calls tells the two sides apart by it)."""

    def __init__(self, player, side: str = "ours", on_turn=None):
        self.player, self.name = player, player.name
        self.side, self.on_turn = side, on_turn
        self.cpu, self.decisions = 0.0, 0

    def choose(self, game, seat):
        if self.on_turn is not None:
            self.on_turn(self.side)
        c = time.process_time()
        try:
            return self.player.choose(game, seat)
        finally:
            self.cpu += time.process_time() - c
            self.decisions += 1


def play(engine, job: dict, player: str, cards: dict[str, list], *, on_turn=None,
         models: SearchModels | None = None) -> dict:
    """Play ``job`` with ``player`` (a ``make_player`` spec) in our seat; ``cards``: deck name -> [[card, n]].
    ``job["workers"]`` (optional): the threads an ensemble player asks its copies on, its first batch included (1
    where the bench runs a game per core, so no more engine searches run at once than there are cores). ``on_turn("ours" | "opponent")``
    is called as each decision starts. ``models``: the learned models a search player searches with (None: the
    shipped ones).

    Returns the job with ``player``, ``winner`` (a seat, None for a draw or a game cut at the decision cap),
    ``score`` (1, 0.5, 0 for us), turns, decisions, whole-game and our player's CPU seconds, and ``error``
    when the engine failed (the game then counts as a draw and is reported)."""
    seat = job["ours_seat"]
    chosen = make_player(player, seed=job["seed"], models=models)
    if job.get("workers") and isinstance(getattr(chosen, "config", None), EnsembleConfig):
        # every batch that wide, the first too (a vote under a wall budget asks its first min_copies at once)
        chosen.config = dataclasses.replace(chosen.config, workers=int(job["workers"]), first_batch=int(job["workers"]))
    ours = _Timed(chosen, "ours", on_turn)
    theirs = _Timed(make_player(job["opponent"], seed=job["seed"] + 1, models=models), "opponent", on_turn)
    players = (ours, theirs) if seat == 0 else (theirs, ours)
    c0 = time.process_time()
    error, result = None, {"winner": None, "turns": None, "decisions": None}
    try:
        game = engine.new_game(expand(cards[job["decks"][0]]), expand(cards[job["decks"][1]]), seed=job["seed"])
        result = play_game(game, players, max_decisions=job.get("max_decisions", 3000))
    except Exception as exc:  # noqa: BLE001 - an engine crash ends the game undecided and is reported
        error = f"{type(exc).__name__}: {str(exc)[:300]}"
    winner = result.get("winner")
    out = {**job, "player": player, "winner": winner, "score": 0.5 if winner is None else float(winner == seat),
           "turns": result.get("turns"), "decisions": result.get("decisions"),
           "cpu_seconds": round(time.process_time() - c0, 2), "ours_cpu_seconds": round(ours.cpu, 2),
           "ours_decisions": ours.decisions}
    if isinstance(getattr(chosen, "config", None), EnsembleConfig):
        out["ours_workers"] = chosen.config.workers  # the threads its copies were asked on
    stats = getattr(ours.player, "stats", None)
    if hasattr(stats, "to_dict"):  # an ensemble's EnsembleStats
        stats = stats.to_dict()
    if stats:
        out["ours_stats"] = {k: (round(v, 2) if isinstance(v, float) else v) for k, v in stats.items()}
    for side, who in (("ours", ours.player), ("opponent", theirs.player)):
        if getattr(who, "honest", None) is not None:  # AI decisions on honest copies, and the counted fallbacks
            out[f"{side}_honest"] = who.honest.to_dict()
    if error:
        out["error"] = error
    return out


def pairs(games: Iterable[dict], player: str, baseline: str = BASELINE) -> list[tuple[dict, dict]]:
    """(our game, the baseline's game) for every job both have played."""
    games = list(games)
    theirs = {key(g): g for g in games if g["player"] == baseline}
    return [(g, theirs[key(g)]) for g in games if g["player"] == player and key(g) in theirs]


def compare(matched: list[tuple[dict, dict]]) -> dict:
    """The paired comparison: our and the baseline's win rates (95% Wilson), the concordant and discordant
    pairs, the two-sided sign test on the discordant ones, and CPU seconds per game. A pair one of whose games
    the engine broke off (``error``) is left out and counted in ``errors``: its result says nothing of play."""
    errors = sum(bool(a.get("error")) or bool(b.get("error")) for a, b in matched)
    matched = [(a, b) for a, b in matched if not a.get("error") and not b.get("error")]
    n = len(matched)
    ours = sum(a["score"] for a, _ in matched)
    base = sum(b["score"] for _, b in matched)
    better = sum(a["score"] > b["score"] for a, b in matched)
    worse = sum(a["score"] < b["score"] for a, b in matched)
    rate, lo, hi = wilson(ours, n)
    b_rate, b_lo, b_hi = wilson(base, n)
    cpu = sorted(a["cpu_seconds"] for a, _ in matched)
    ours_cpu = sorted(a["ours_cpu_seconds"] for a, _ in matched)
    changed = [a["ours_stats"]["changed"] for a, _ in matched if "changed" in (a.get("ours_stats") or {})]
    needed = pairs_needed(better / (better + worse), (better + worse) / n) if better > worse else None
    return {"pairs": n, "win_rate": None if rate is None else round(rate, 4), "ci95": [round(lo, 4), round(hi, 4)],
            "baseline_win_rate": None if b_rate is None else round(b_rate, 4), "baseline_ci95": [round(b_lo, 4), round(b_hi, 4)],
            "both_won": sum(a["score"] == b["score"] == 1.0 for a, b in matched),
            "both_lost": sum(a["score"] == b["score"] == 0.0 for a, b in matched),
            "better": better, "worse": worse, "discordant": better + worse,
            "discordant_share": round((better + worse) / n, 4) if n else None,
            "sign_test_p": round(sign_test(better, worse), 4),
            # how many pairs the split seen so far would need to reach p < 0.05 (None: ours is not ahead)
            "pairs_needed_at_this_split": needed,
            # a search player's decisions that overruled the engine AI it defers to, per game
            "changed_per_game": round(sum(changed) / len(changed), 2) if changed else None,
            "cpu_seconds_per_game": round(sum(cpu) / n, 1) if n else None, "cpu_seconds_max": cpu[-1] if n else None,
            "ours_cpu_seconds_per_game": round(sum(ours_cpu) / n, 1) if n else None,
            "ours_cpu_seconds_max": ours_cpu[-1] if n else None,
            "games_over_2_minutes": sum(c > 120 for c in cpu), "errors": errors,
            **engine_load([a for a, _ in matched], [b for _, b in matched])}


def _cut_off(game: dict, side: str) -> int | None:
    """The engine AI calls of ``side``'s player in ``game`` that ran into the engine's wall-clock cap: the bench's
    meter of every call when it ran, else an ensemble's own count (None when neither was recorded)."""
    calls = (game.get("engine_calls") or {}).get(side)
    if calls is not None:
        return calls.get("cut_off", 0)
    stats = game.get(f"{side}_stats") or {}
    return stats.get("cut_off")


def engine_load(ours: list[dict], baseline: list[dict]) -> dict:
    """What the engine's cap and the honest copies did to these games: our player's AI calls and those cut off at
    the cap, the opponent's, the baseline's (in the same seat), and the decisions that fell back to a call on the
    real game (an honest copy or every ensemble copy refused)."""
    def total(games, side, field):
        values = [((g.get("engine_calls") or {}).get(side) or {}).get(field) for g in games]
        values = [v for v in values if v is not None]
        return sum(values) if values else None

    cut = [c for c in (_cut_off(g, "ours") for g in ours) if c is not None]
    fallbacks = sum((g.get("ours_stats") or {}).get("fallbacks", 0) + (g.get("ours_honest") or {}).get("fallbacks", 0)
                    for g in ours)
    reasons: dict[str, int] = {}
    for g in ours:
        for source in (g.get("ours_honest") or {}, g.get("ours_stats") or {}):
            for text, n in (source.get("reasons") or {}).items():
                reasons[text] = reasons.get(text, 0) + n
    return {"engine_calls": total(ours, "ours", "calls"), "cut_off": sum(cut) if cut else None,
            "opponent_cut_off": total(ours, "opponent", "cut_off"),
            "baseline_cut_off": total(baseline, "ours", "cut_off"),
            "fallbacks": fallbacks, "fallback_reasons": reasons}


def summarize(games: Iterable[dict], baseline: str = BASELINE) -> dict:
    """Per player (all but the baseline): the comparison over all pairs, the mirrors and the other pairings."""
    games = list(games)
    out = {}
    for player in sorted({g["player"] for g in games} - {baseline}):
        matched = pairs(games, player, baseline)
        out[player] = {"all": compare(matched),
                       "mirrors": compare([m for m in matched if m[0].get("mirror")]),
                       "pairings": compare([m for m in matched if not m[0].get("mirror")])}
    return out


def pairs_needed(better_share: float, discordant_share: float, p: float = 0.05) -> int | None:
    """How many pairs a player who wins ``better_share`` of the discordant pairs, with ``discordant_share`` of
    pairs discordant, needs for the expected split to reach sign-test p < ``p`` (None if it never does)."""
    if better_share <= 0.5 or discordant_share <= 0:
        return None
    for d in range(1, 5000):
        better = round(d * better_share)
        if sign_test(better, d - better) < p:
            return int(round(d / discordant_share))
    return None


CUT_OFF_FLAG = 0.05  # a game in which more than this share of a side's engine calls hit the engine's cap is flagged


def cut_off_share(game: dict, side: str) -> tuple[int, int]:
    """(calls cut off at the engine's cap, calls) of ``side``'s player in ``game``, from the bench's meter
    (``engine_calls``); (0, 0) when it was not metered."""
    calls = (game.get("engine_calls") or {}).get(side) or {}
    return int(calls.get("cut_off", 0)), int(calls.get("calls", 0))


def flagged(game: dict, side: str, limit: float = CUT_OFF_FLAG) -> bool:
    cut, calls = cut_off_share(game, side)
    return bool(calls) and cut / calls > limit


def sequential(games: Iterable[dict], player: str, baseline: str = BASELINE, **test) -> dict:
    """The sequential probability ratio test of ``player`` against ``baseline`` in the same seat, over the discordant
    pairs in the order they were completed (a game's ``order``: its place in the run, kept across appended runs),
    and what the engine's wall-clock cap did to each side: calls and cut-off calls of our player, of the baseline in
    the same seat, and of the opponent (in our player's games and in the baseline's), with the games where more than
    ``CUT_OFF_FLAG`` of a side's calls were cut off. ``test``: ``common.stats.sprt``'s p0, p1, alpha, beta. Pairs one
    of whose games the engine broke off (``error``) are left out and counted."""
    matched = pairs(games, player, baseline)
    errors = sum(bool(a.get("error")) or bool(b.get("error")) for a, b in matched)
    matched = [(a, b) for a, b in matched if not a.get("error") and not b.get("error")]
    matched.sort(key=lambda m: max(m[0].get("order", 0), m[1].get("order", 0)))
    outcomes = [a["score"] > b["score"] for a, b in matched if a["score"] != b["score"]]
    result = sprt_path(outcomes, **test)
    if result["stopped_at"] is not None:  # the pairs the test read: up to its discordant pair that crossed
        seen = 0
        for used, (a, b) in enumerate(matched, 1):
            seen += a["score"] != b["score"]
            if seen == result["stopped_at"]:
                break
        counted = matched[:used]
    else:
        counted = matched

    def load(rows, side):
        cut = sum(cut_off_share(g, side)[0] for g in rows)
        calls = sum(cut_off_share(g, side)[1] for g in rows)
        return {"calls": calls, "cut_off": cut, "share": round(cut / calls, 4) if calls else None,
                "games_flagged": sum(flagged(g, side) for g in rows), "games": len(rows)}

    ours, base = [a for a, _ in counted], [b for _, b in counted]
    return {**{k: v for k, v in result.items() if k != "trace"}, "trace": result["trace"],
            "pairs": len(counted), "pairs_played": len(matched), "errors": errors,
            "wins": sum(a["score"] for a in ours), "baseline_wins": sum(b["score"] for b in base),
            "comparison": compare(counted) if counted else None,
            "engine_cap": {"ours": load(ours, "ours"), "baseline": load(base, "ours"),
                           "opponent_of_ours": load(ours, "opponent"), "opponent_of_baseline": load(base, "opponent"),
                           "flag_share": CUT_OFF_FLAG},
            "flagged_pairs": sum(flagged(a, "ours") or flagged(b, "ours") for a, b in counted)}
