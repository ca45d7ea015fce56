"""drafts.bots.neural: training on tiny synthetic logs, pick() vs score_logs(), serialization,
unknown cards, and (realdata) the shipped weights on the held-out pods of a proxy set."""
import json
import os
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from drafts.bots.base import PickContext
from drafts.bots.neural import (UNKNOWN_SCORE, NeuralBot, NeuralConfig, NeuralPickNet, card_feature_matrix,
                                load_bot, save_bot, train_neural)
from drafts.core.cards import DraftCard, SetList
from drafts.core.evaluate import agreement, ranks_from_scores
from drafts.core.logs import DraftLogs

ROOT = Path(__file__).resolve().parents[3]
N_CARDS, PACK, PICKS = 16, 6, 5
CARDS = [f"Card {i:02d}" for i in range(N_CARDS)]
TINY = {"hidden": [32], "dropout": 0.0, "input_dropout": 0.0, "epochs": 40, "batch_size": 64, "lr": 0.01,
        "weight_decay": 0.0, "patience": 40, "refit": False}


def synthetic_logs(drafts: int = 300, seed: int = 0) -> DraftLogs:
    """Each draft: PICKS picks from packs of PACK random cards; the drafter always takes the
    lowest-numbered card (a fixed preference order), except that a card sharing its parity with
    most of the pool gets a bonus (so the pool matters)."""
    rng = np.random.default_rng(seed)
    rows = drafts * PICKS
    pack = np.zeros((rows, N_CARDS), np.uint8)
    pool = np.zeros((rows, N_CARDS), np.uint8)
    pick = np.zeros(rows, np.int16)
    ids, pick_no = [], []
    r = 0
    for d in range(drafts):
        have = np.zeros(N_CARDS, np.uint8)
        for k in range(PICKS):
            cards = rng.choice(N_CARDS, PACK - k, replace=False)
            pack[r, cards] = 1
            pool[r] = have
            score = -cards.astype(float)
            if have.sum():
                odd_share = have[1::2].sum() / have.sum()
                score += 6.0 * np.where(cards % 2 == 1, odd_share, 1 - odd_share)
            chosen = cards[int(np.argmax(score))]
            pick[r] = chosen
            have[chosen] += 1
            ids.append(f"draft{d:04d}")
            pick_no.append(k)
            r += 1
    return DraftLogs(set_code="TST", cards=list(CARDS), draft_id=np.array(ids), draft_time=np.full(rows, "", object),
                     pack_number=np.zeros(rows, np.int8), pick_number=np.array(pick_no, np.int8), pick=pick,
                     pack=pack, pool=pool, event_type=np.full(rows, "PremierDraft", object))


@pytest.fixture(scope="module")
def logs():
    return synthetic_logs()


@pytest.fixture(scope="module")
def split(logs):
    draft = np.array([int(d[5:]) for d in logs.draft_id])
    return draft % 5 == 1, draft % 5 == 0, draft % 5 >= 2  # val, test, train


@pytest.fixture(scope="module")
def trained(logs, split):
    torch.set_num_threads(1)
    val, test, train = split
    calls = []
    bot, history = train_neural(logs, train, val, config=TINY, seed=0,
                                on_epoch=lambda *a: calls.append(a))
    return bot, history, calls


def context():
    return PickContext(set_list=SetList(code="TST", cards=tuple(DraftCard(name=n) for n in CARDS)))


def test_learns_the_preference_and_beats_random(logs, split, trained):
    bot, history, calls = trained
    _, test, _ = split
    test_logs = logs.select(test)
    result = agreement(test_logs, ranks_from_scores(test_logs, bot.score_logs(test_logs)))
    random_top1 = float(np.mean(1.0 / test_logs.pack.sum(axis=1)))
    assert result["all"]["top1"] >= 0.9 > random_top1 + 0.4
    assert len(calls) == len(history["members"][0]["train_loss"]) and len(calls[0]) == 4
    epoch, train_loss, val_loss, val_top1 = calls[-1]
    assert history["members"][0]["val_loss"][0] > min(history["members"][0]["val_loss"])
    assert bot.metrics["val_top1"] >= 0.9 and bot.config()["metrics"]["train_picks"] > 0


def test_deterministic_for_a_seed(logs, split):
    torch.set_num_threads(1)
    val, _, train = split
    cfg = {**TINY, "epochs": 3}
    a, _ = train_neural(logs, train, val, config=cfg, seed=3)
    b, _ = train_neural(logs, train, val, config=cfg, seed=3)
    ta, tb = a.to_tensors(), b.to_tensors()
    assert ta.keys() == tb.keys() and all(torch.equal(ta[k], tb[k]) for k in ta)


def test_refit_and_card_features(logs, split):
    torch.set_num_threads(1)
    val, _, train = split
    calls = []
    s = SetList(code="TST", cards=tuple(DraftCard(name=n, colors="WU"[i % 2]) for i, n in enumerate(CARDS)))
    bot, history = train_neural(logs, train, val, config={**TINY, "epochs": 4, "refit": True}, seed=0, set_list=s,
                                on_epoch=lambda *a: calls.append(a))
    best = history["members"][0]["best_epoch"]
    assert len(history["refit"][0]["train_loss"]) == best + 1 and len(calls) == 4 + best + 1
    assert bot.metrics["card_features"] and bot.metrics["refit_picks"] > bot.metrics["train_picks"]
    assert set(bot.to_tensors()) == set(NeuralBot(CARDS, NeuralPickNet(N_CARDS, TINY)).to_tensors())  # folded


def test_pick_agrees_with_score_logs(logs, split, trained):
    bot = trained[0]
    _, test, _ = split
    test_logs = logs.select(test)
    scores = bot.score_logs(test_logs)
    ctx = context()
    for row in range(0, len(test_logs), 7):
        pack, pool = test_logs.pack_names(row), test_logs.pool_names(row)
        ranking = bot.pick(pack, pool, ctx)
        assert sorted(n for n, _ in ranking) == sorted(pack)
        assert [s for _, s in ranking] == sorted((s for _, s in ranking), reverse=True)
        for name, score in ranking:
            assert score == pytest.approx(float(scores[row, CARDS.index(name)]), abs=1e-4)
        # scores are log-probabilities over the pack
        assert sum(np.exp(s) for _, s in ranking) == pytest.approx(1.0, abs=1e-4)


def test_serialization_round_trip_gives_identical_scores(logs, trained, tmp_path):
    bot = trained[0]
    config = json.loads(json.dumps(bot.config()))  # JSON-serializable
    assert config["cards"] == CARDS and config["ensemble"] == 1 and config["net"]["hidden"] == [32]
    tensors = bot.to_tensors()
    assert all(t.dtype == torch.float16 for t in tensors.values())
    again = NeuralBot.from_tensors(tensors, config)
    assert np.array_equal(again.score_logs(logs), bot.score_logs(logs))
    weights, sidecar = save_bot(bot, tmp_path / "neural-TST")
    assert weights.exists() and json.loads(sidecar.read_text())["cards"] == CARDS
    loaded = load_bot(weights)
    assert np.array_equal(loaded.score_logs(logs), bot.score_logs(logs))
    assert loaded.pick(["Card 03", "Card 01"], ["Card 05"], context()) == bot.pick(["Card 03", "Card 01"], ["Card 05"], context())


def test_unknown_cards(trained, logs):
    bot = trained[0]
    ctx = context()
    ranking = bot.pick(["Mystery Card", "Card 07", "Card 02"], ["Card 01", "Unheard Of"], ctx)
    assert [n for n, _ in ranking][-1] == "Mystery Card" and ranking[-1][1] == UNKNOWN_SCORE
    assert ranking[:2] == bot.pick(["Card 07", "Card 02"], ["Card 01"], ctx)
    only_unknown = bot.pick(["X", "Y"], [], ctx)
    assert [n for n, _ in only_unknown] == ["X", "Y"] and all(s == UNKNOWN_SCORE for _, s in only_unknown)
    # logs over a different card list: matched by name, unknown columns score lowest
    order = list(reversed(CARDS)) + ["Stranger"]
    perm = [CARDS.index(n) for n in reversed(CARDS)]
    rows = 50
    other = DraftLogs(set_code="TST", cards=order, draft_id=logs.draft_id[:rows], draft_time=logs.draft_time[:rows],
                      pack_number=logs.pack_number[:rows], pick_number=logs.pick_number[:rows],
                      pick=np.array([order.index(CARDS[p]) for p in logs.pick[:rows]], np.int16),
                      pack=np.concatenate([logs.pack[:rows][:, perm], np.ones((rows, 1), np.uint8)], axis=1),
                      pool=np.concatenate([logs.pool[:rows][:, perm], np.full((rows, 1), 2, np.uint8)], axis=1))
    mine = bot.score_logs(logs.select(np.arange(len(logs)) < rows))
    theirs = bot.score_logs(other)
    assert np.allclose(theirs[:, :N_CARDS], mine[:, perm], atol=1e-5)
    assert (theirs[:, -1] == UNKNOWN_SCORE).all()
    assert (ranks_from_scores(other, theirs) < other.pack.sum(axis=1)).all()  # the stranger is never above the pick


def test_card_features_fold_into_a_plain_net():
    torch.manual_seed(0)
    cards = [DraftCard(name=f"C{i}", colors="WU"[i % 2], rarity="rare" if i == 3 else "common", mana_value=i % 5,
                       types="Creature" if i % 3 else "Instant", mana_cost="{1}") for i in range(10)]
    feats = card_feature_matrix(cards)
    assert feats.shape[0] == 10 and feats[0, 0] == 1 and feats[1, 1] == 1 and feats[3].sum() >= 4
    net = NeuralPickNet(10, {"hidden": [16, 8]}, card_features=feats).eval()
    plain = net.fold_features()
    x = torch.from_numpy(np.random.default_rng(0).integers(0, 3, (5, 10)).astype(np.float32))
    with torch.no_grad():
        assert torch.allclose(net(x), plain(x), atol=1e-5)
    bot = NeuralBot([c.name for c in cards], plain, config={**plain.config.to_dict(), "dtype": "float32"})
    with torch.no_grad():
        ref = torch.log_softmax(plain(x[:1]), 1)[0].numpy()
    ranking = dict(bot.pick([c.name for c in cards], ["C1"] * int(x[0, 1]) + ["C0"] * int(x[0, 0]) + sum(
        ([f"C{i}"] * int(x[0, i]) for i in range(2, 10)), []), context()))
    assert all(abs(ranking[f"C{i}"] - ref[i]) < 1e-4 for i in range(10))


def test_pick_is_fast_at_full_size():
    n = 281
    net = NeuralPickNet(n, NeuralConfig())
    bot = NeuralBot([f"Card {i}" for i in range(n)], net)
    rng = np.random.default_rng(0)
    pack = [f"Card {i}" for i in rng.choice(n, 14, replace=False)]
    pool = [f"Card {i}" for i in rng.choice(n, 30)]
    ctx = context()
    bot.pick(pack, pool, ctx)
    start = time.perf_counter()
    for _ in range(200):
        bot.pick(pack, pool, ctx)
    per_pick = (time.perf_counter() - start) / 200
    assert per_pick < 0.005  # ~0.2 ms unloaded; generous for a busy machine


DATA = Path(os.environ.get("MTG_DATA_DIR", "/work/shared/data"))


# held-out top-1 floors: the 0.655 target is met on FDN; BLB (0.654) and DSK (0.646) fall short
# (see docs/draft-bots-neural.md), so for them the floor only guards against regressions.
FLOORS = {"FDN": 0.655, "BLB": 0.65, "DSK": 0.64}


@pytest.mark.realdata
@pytest.mark.parametrize("code", ["FDN", "BLB", "DSK"])
def test_shipped_weights_on_held_out_pods(code):
    from drafts.core.logs import held_out_mask, pod_keys, read_17lands_csv, read_seats

    csv_path = DATA / "drafts" / f"draft_data_proxy.{code}.PremierDraft.train.csv.gz"
    seats_path = DATA / "drafts" / f"draft_data_proxy.{code}.PremierDraft.train.seats.csv"
    weights = ROOT / "ml" / "weights" / "drafts" / f"neural-{code}.safetensors"
    if not (csv_path.exists() and seats_path.exists()):
        pytest.skip(f"proxy draft logs not found under {DATA} (set MTG_DATA_DIR)")
    assert weights.exists() and weights.stat().st_size < 3_000_000
    bot = load_bot(weights)
    assert bot.config()["metrics"]["set"] == code
    logs = read_17lands_csv(csv_path)  # the whole file (about 5 s): held-out pods are spread over it
    held = held_out_mask(pod_keys(logs, read_seats(seats_path)))
    test = logs.select(held)
    result = agreement(test, ranks_from_scores(test, bot.score_logs(test)))
    shipped = bot.config()["metrics"]["held_out"]["all"]
    assert result["all"]["top1"] == pytest.approx(shipped["top1"], abs=1e-4)
    assert result["all"]["top1"] >= FLOORS[code]
