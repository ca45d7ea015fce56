"""The calibration bench's choices that decide what a player is shown: which sources may be chosen with few
training games, and the held-out Limited games (never a training deck)."""
import gzip
import json

from bench import game_calibration as gc
from bench.harness import calibration_decks


def test_many_input_sources_wait_for_enough_training_decks_and_games():
    choice = {"engine": 0.20, "baseline": 0.22, "logistic": 0.05, "blend": 0.10, "value_retrained": 0.02}
    few = gc.eligible_sources(choice, train_decks=11, train_games=6)
    assert set(few) == {"engine", "baseline"} and min(few, key=few.get) == "engine"
    assert min(gc.eligible_sources(choice, gc.MIN_TRAIN_DECKS, gc.MIN_TRAIN_GAMES - 1), key=choice.get) == "engine"
    many = gc.eligible_sources(choice, gc.MIN_TRAIN_DECKS, gc.MIN_TRAIN_GAMES)
    assert min(many, key=many.get) == "value_retrained"


def test_limited_decks_come_from_the_drafted_pods(tmp_path):
    path = tmp_path / "draft_games.jsonl.gz"
    pods = [{"kind": "pod", "set": "FDN", "pod": p, "decks": [[["Savannah Lions", 2], ["Plains", 17]]] * 3}
            for p in (1, 0, 2)]
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        for rec in pods + [{"kind": "game", "set": "FDN", "pod": 0}]:
            fh.write(json.dumps(rec) + "\n")
    decks = calibration_decks.limited_decks(path, pods=2)
    assert [d["name"] for d in decks] == [f"limited_FDN_pod{p}_seat{s}" for p in (0, 1) for s in range(3)]
    assert decks[0] == {"name": "limited_FDN_pod0_seat0", "format": "Limited",
                        "main": [["Savannah Lions", 2], ["Plains", 17]]}
    assert calibration_decks.limited_decks(tmp_path / "missing.jsonl.gz") == []


def test_limited_games_are_held_out_between_two_limited_decks(monkeypatch):
    def deck(name):
        return {"name": name, "format": "x", "main": [["Plains", 40]]}

    monkeypatch.setattr(calibration_decks, "load", lambda: {
        "train": [deck(f"t{i}") for i in range(6)], "heldout": [deck(f"h{i}") for i in range(4)],
        "heldout_limited": [deck(f"l{i}") for i in range(4)], "train_limited": [deck(f"m{i}") for i in range(4)]})
    limited = gc.jobs("limited", 30)
    assert len(limited) == 30 and len({j["id"] for j in limited}) == 30
    assert all(j["side"] == "heldout" and j["id"].startswith("limited-") for j in limited)
    assert all(set(j["decks"]) <= {"l0", "l1", "l2", "l3"} and j["decks"][0] != j["decks"][1] for j in limited)
    assert {tuple(j["seats"]) for j in limited} >= set(gc.SEATS)  # every mix of strengths, the ensemble included
    train = gc.jobs("train", 30)
    assert all(not any(p.startswith("ensemble:") for p in j["seats"]) for j in train)
    assert all(set(j["decks"]) <= {f"t{i}" for i in range(6)} for j in train)
    trained = gc.jobs("train_limited", 10)
    assert all(j["side"] == "train" and set(j["decks"]) <= {f"m{i}" for i in range(4)} for j in trained)
    assert not {d for j in trained for d in j["decks"]} & {d for j in limited for d in j["decks"]}


def test_limited_training_decks_come_from_other_pods(tmp_path):
    path = tmp_path / "draft_games.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        for p in range(5):
            fh.write(json.dumps({"kind": "pod", "set": "FDN", "pod": p, "decks": [[["Plains", 40]]] * 2}) + "\n")
    held = calibration_decks.limited_decks(path, pods=2)
    train = calibration_decks.limited_decks(path, pods=6, skip=2)
    assert [d["name"] for d in train] == [f"limited_FDN_pod{p}_seat{s}" for p in (2, 3, 4) for s in range(2)]
    assert not {d["name"] for d in held} & {d["name"] for d in train}
