"""The masked-diffusion completer's pure core: retrieval, votes, masks, the sampler's legality, gate 1."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
import torch

from decks.completion.models.baselines import NearestDeckBaseline
from decks.completion.models.evaluate import check_completion
from decks.completion.models.retrieval import DeckIndex, NeighbourVoteBaseline, Neighbours, RetrievalParams
from decks.completion.models.common import CompletionError
from decks.completion.models.masked.model import (
    EPS,
    MAX_ADD,
    MaskedConfig,
    MaskedDenoiser,
    at_least,
    collate,
    prior_logits,
    slot_prior,
    slot_scores,
)
from decks.completion.models.masked.data import plan_examples, plan_to_example
from decks.completion.models.masked.sampler import MaskedCompleter
from decks.completion.models.masked.ablation import PlainDenoiser, plain_batch, plan_plain_examples
from decks.completion.models.masked.train import TrainConfig, denoiser_for, prepare, train

from .. import make_corpus

FORMATS = ["alpha", "beta"]
PARAMS = RetrievalParams(neighbours=12, beta=20.0, tau_days=200.0)


@pytest.fixture(scope="module")
def corpus():
    return make_corpus(n=240, seed=3)


@pytest.fixture(scope="module")
def prep(corpus):
    return prepare(corpus.arrays, corpus.V, corpus.legal, corpus.copy_limit, params=PARAMS)


def _train(prep, head):
    torch.manual_seed(0)
    cfg = MaskedConfig(d_model=32, heads=2, layers=1, ff=64, candidates=40, formats=2, head=head)
    state, metrics = train(prep, cfg, TrainConfig(steps=30, batch=16, examples=200, val_examples=32, lr=3e-3))
    model = MaskedDenoiser(MaskedConfig.from_dict(metrics["config"]))
    model.load_state_dict(state)
    return model, metrics


@pytest.fixture(scope="module")
def trained(prep):
    """The default model: the slot head (each candidate's hidden copy count)."""
    return _train(prep, "slot")


@pytest.fixture(scope="module")
def trained_token(prep):
    """A version 1 model: MDLM's token softmax and a count head."""
    return _train(prep, "token")


def names_for(corpus):
    return [f"Card {i}" for i in range(corpus.V)]


def completer(corpus, prep, model=None, gate=None, **kw):
    return MaskedCompleter(model, prep.vote, prep.tables, names_for(corpus), FORMATS, gate=gate, **kw)


# ------------------------------------------------------------------------------------------ retrieval

def test_similarity_is_idf_weighted_multiset_overlap():
    main = np.array([[0] * 20 + [1] * 4 + [2] * 36, [0] * 24 + [3] * 36, [0] * 60])
    side = np.full((3, 15), 4)
    idx = DeckIndex(main, side, np.zeros(3), np.zeros(3), np.ones(3), V=5, F=1)
    # card 0 is in every deck (idf ~ 0); card 1 only in deck 0
    s = idx.similarity(np.array([0, 1]), np.array([4.0, 4.0]), 0)
    assert s[0] == pytest.approx(1.0)
    assert s[1] < 0.01 and s[2] < 0.01
    s = idx.similarity(np.array([1]), np.array([8.0]), 0)  # asks 8 copies, deck 0 holds 4: half the mass
    assert s[0] == pytest.approx(0.5)


def test_neighbours_exclude_rows_and_weigh_recency():
    main = np.array([[1] * 60, [1] * 60, [1] * 60])
    side = np.full((3, 15), 2)
    day = np.array([0.0, 100.0, 200.0])
    idx = DeckIndex(main, side, np.zeros(3), day, np.ones(3), V=3, F=1)
    nb = idx.neighbours(np.array([1]), np.array([4]), 0, 200.0, RetrievalParams(neighbours=3, tau_days=50.0))
    assert nb.rows.tolist() == [2, 1, 0]  # same overlap: the most recent first
    assert nb.weight.sum() == pytest.approx(1.0)
    assert nb.weight[0] / nb.weight[1] == pytest.approx(np.exp(2.0))
    nb = idx.neighbours(np.array([1]), np.array([4]), 0, 200.0, RetrievalParams(neighbours=3), exclude=[2])
    assert 2 not in nb.rows.tolist()


def test_votes_count_the_share_holding_at_least_n_copies():
    main = np.array([[1] * 4 + [0] * 56, [1] * 2 + [0] * 58])
    idx = DeckIndex(main, np.zeros((2, 15), int), np.zeros(2), np.zeros(2), np.ones(2), V=2, F=1)
    nb = idx.neighbours(np.array([0]), np.array([1]), 0, None, RetrievalParams(neighbours=2, tau_days=0))
    v = idx.votes(nb, "main")
    w = dict(zip(nb.rows.tolist(), nb.weight.tolist()))
    assert v.of(1, 1) == pytest.approx(1.0)
    assert v.of(1, 2) == pytest.approx(1.0)
    assert v.of(1, 3) == pytest.approx(w[0])
    assert v.of(1, 5) == 0.0


def test_neighbour_vote_baseline_beats_nearest_deck_on_held_out_decks(corpus):
    from decks.completion.models.evaluate import compare
    from decks.completion.models.deck_arrays import card_popularity

    a = corpus.arrays
    train_rows, test_rows = np.arange(200), np.arange(200, 240)
    tr, te = a.subset(train_rows), a.subset(test_rows)
    vote = NeighbourVoteBaseline(PARAMS).fit(tr, corpus.V, corpus.legal, corpus.copy_limit)
    near = NearestDeckBaseline().fit(tr, corpus.V, corpus.legal, corpus.copy_limit)
    res = compare({"vote": vote.complete, "nearest": near.complete}, te, card_popularity(tr, corpus.V), [5, 20],
                  40, 0, corpus.legal, corpus.copy_limit)
    for K in (5, 20):
        assert res["vote"][K]["valid_share"] == 1.0
        assert res["vote"][K]["main_recall"] >= res["nearest"][K]["main_recall"] - 0.02


# ------------------------------------------------------------------------------------------ masks, examples

def test_plans_hide_whole_groups_and_keep_the_user_cards_inside_the_shown_ones(corpus, prep):
    a = corpus.arrays
    plans = plan_examples(prep.vote.index, a.main, a.side, a.fmt, a.day, np.arange(30), prep.popularity, PARAMS, 0)
    assert any(p.board == 1 for p in plans)
    for p in plans:
        assert np.all(p.shown[p.user])  # the user's cards are always visible
        assert p.row not in p.nb_rows.tolist()  # the deck itself never votes for itself
        if p.board == 0:
            assert 1 <= p.user.sum() <= 59
        ex = plan_to_example(prep.vote.index, prep.tables, p, a.main, a.side, a.fmt, 40)
        truth = Counter((a.main if p.board == 0 else a.side)[p.row].tolist())
        shown = Counter((a.main if p.board == 0 else a.side)[p.row][p.shown].tolist())
        shown.update(dict(zip(p.extra_cards.tolist(), p.extra_counts.tolist())))  # placed by the vote fill
        for c, t in zip(ex.cand_card.tolist(), ex.target.tolist()):
            assert t == max(0, truth[c] - shown[c])  # target = the copies the deck still lacks


def test_sideboard_examples_see_the_main_deck_the_sampler_would_have_made(corpus, prep):
    """Most sideboard examples see the user's main cards plus the vote's fill (as at inference, where the main
    deck is generated), with the share the user gave; the rest see the true main deck (share 1)."""
    a = corpus.arrays
    plans = plan_examples(prep.vote.index, a.main, a.side, a.fmt, a.day, np.arange(60), prep.popularity, PARAMS, 3,
                          side_share=1.0, generated_main=0.7)
    mains = {p.row: p for p in plans if p.board == 0}
    sides = [p for p in plans if p.board == 1]
    generated = [p for p in sides if p.main_cards is not None]
    assert 0 < len(generated) < len(sides)
    for p in generated:
        user = Counter(a.main[p.row][mains[p.row].user].tolist())
        seen = Counter(dict(zip(p.main_cards.tolist(), p.main_counts.tolist())))
        assert not user - seen  # the user's cards are all in the main deck the sideboard sees
        assert sum(seen.values()) <= 60
        assert p.main_given == pytest.approx(sum(user.values()) / 60)
        ex = plan_to_example(prep.vote.index, prep.tables, p, a.main, a.side, a.fmt, 40)
        assert ex.main_given == p.main_given < 1.0
        main_tokens = Counter(dict(zip(ex.vis_tok[ex.vis_seg == 0].tolist(), ex.vis_cnt[ex.vis_seg == 0].tolist())))
        assert main_tokens == Counter({int(prep.tables.token[c]): n for c, n in seen.items()})
    for p in sides:
        if p.main_cards is None:
            assert p.main_given == 1.0


def _batch(corpus, prep, n=8, seed=1):
    a = corpus.arrays
    plans = plan_examples(prep.vote.index, a.main, a.side, a.fmt, a.day, np.arange(n), prep.popularity, PARAMS, seed)
    return plans, collate([plan_to_example(prep.vote.index, prep.tables, p, a.main, a.side, a.fmt, 40) for p in plans])


def test_token_head_at_gate_one_gives_exactly_the_vote_prior(corpus, prep, trained_token):
    model, _ = trained_token
    _, batch = _batch(corpus, prep)
    with torch.no_grad():
        tok, cnt = model(batch, gate=1.0)
        ptok, pcnt = prior_logits(batch)
        assert torch.equal(tok, ptok) and torch.equal(cnt, pcnt)
        tok2, cnt2 = model(batch)  # the learned gate is not 1: the network changes the scores
        assert not torch.equal(tok2, ptok)
        scores, calibrated = model.scores(batch)
        assert not calibrated and torch.allclose(scores, slot_scores(tok2, cnt2))


def test_slot_head_at_gate_one_gives_the_vote_as_slot_probabilities(corpus, prep, trained):
    """At g = 1 the slot head's P(at least j more copies of c) is the neighbours' vote for copy v + j (to the
    floor EPS of the logs); with the learned gate the network moves it."""
    model, _ = trained
    plans, batch = _batch(corpus, prep)
    a = corpus.arrays
    with torch.no_grad():
        assert torch.equal(model(batch, gate=1.0), slot_prior(batch))
        scores, calibrated = model.scores(batch, gate=1.0)
        assert calibrated and torch.all(scores <= 1e-6)
        for i, p in enumerate(plans):
            ex = plan_to_example(prep.vote.index, prep.tables, p, a.main, a.side, a.fmt, 40)
            nb = Neighbours(p.nb_rows, np.zeros(p.nb_rows.size), p.nb_weight)
            votes = prep.vote.index.votes(nb, "main" if p.board == 0 else "side")
            V = prep.tables.token.size
            board = a.main[p.row][p.shown] if p.board == 0 else a.side[p.row][p.shown]
            vis = np.bincount(board, minlength=V)
            vis[p.extra_cards] += p.extra_counts
            for k, c in enumerate(ex.cand_card.tolist()[:10]):
                for j in (1, 2):
                    want = votes.of(c, int(vis[c]) + j)
                    got = float(torch.exp(scores[i, k, j - 1]))
                    assert got == pytest.approx(want, abs=5 * EPS), (c, j)
        assert not torch.equal(model(batch), slot_prior(batch))


def test_slot_scores_fall_with_the_copy_number():
    tok = torch.randn(3, 5)
    cnt = torch.randn(3, 5, MAX_ADD)
    s = slot_scores(tok, cnt)
    assert torch.all(s[..., 1:] <= s[..., :-1] + 1e-6)
    assert torch.allclose(s[..., 0], tok)  # at least one more copy: the token probability itself
    logits = torch.randn(3, 5, MAX_ADD + 1)
    a = at_least(logits)
    assert torch.allclose(a[..., 0], torch.zeros(3, 5), atol=1e-6)  # at least 0 more: certain
    assert torch.all(a[..., 1:] <= a[..., :-1] + 1e-6)


def test_slot_loss_is_the_count_cross_entropy_of_every_candidate(corpus, prep, trained):
    """Absent candidates (target 0) count as much as hidden ones; padding counts for nothing."""
    model, _ = trained
    _, batch = _batch(corpus, prep)
    with torch.no_grad():
        loss, _ = model.loss(batch)
        logits = model(batch)
        target = batch["target"].clamp(max=MAX_ADD)
        per = []
        for i in range(logits.shape[0]):
            keep = ~batch["cand_pad"][i]
            if keep.any():
                per.append(torch.nn.functional.cross_entropy(logits[i][keep], target[i][keep]))
        assert float(loss) == pytest.approx(float(torch.stack(per).mean()), rel=1e-5)
        assert (batch["target"] == 0).logical_and(~batch["cand_pad"]).any()  # the absent cards are targets too


# ------------------------------------------------------------------------------------------ sampler

def test_gate_one_reproduces_the_neighbour_vote_baseline_exactly(corpus, prep):
    c = completer(corpus, prep, gate=1.0)
    a = corpus.arrays
    rng = np.random.default_rng(0)
    for r in rng.choice(len(a), size=25, replace=False):
        k = int(rng.integers(1, 40))
        known = np.sort(rng.choice(a.main[r], size=k, replace=False))
        fmt = int(a.fmt[r])
        assert [x.tolist() for x in c.complete_idx(known, [], fmt)] == \
               [x.tolist() for x in prep.vote.complete(known, [], fmt)]


@pytest.mark.parametrize("steps", [8, 16])
def test_legality_holds_at_every_step_and_the_deck_is_60_plus_15(corpus, trained, steps, monkeypatch):
    """Banned cards the neighbours still play, and limits across main + side, are masked at every step."""
    model, _ = trained
    a = corpus.arrays
    legal = corpus.legal.copy()
    played = np.bincount(a.main[a.fmt == 0].ravel(), minlength=corpus.V)
    played[corpus.basics] = 0
    banned = int(np.argmax(played))  # the format's most played spell, banned after the decks were played
    legal[0, banned] = False
    prep = prepare(a, corpus.V, legal, corpus.copy_limit, params=PARAMS)
    c = MaskedCompleter(model, prep.vote, prep.tables, names_for(corpus), FORMATS, steps=steps)
    checks = []
    real = c._fill_board

    def spy(b, f, nb, board, n, wide=None, given=1.0):
        add = b.add_main if board == 0 else b.add_side

        def checked(card, k=1):
            out = add(card, k)
            counts = b.main_count + b.side_count
            assert not out or legal[f, card], "an illegal card was generated"
            assert not np.any((b.limit > 0) & (counts > b.limit)), "a copy limit was broken mid-sampling"
            assert len(b.main) <= 60 and len(b.side) <= 15
            checks.append(card)
            return out

        if board == 0:
            b.add_main = checked
        else:
            b.add_side = checked
        return real(b, f, nb, board, n, wide, given)

    monkeypatch.setattr(c, "_fill_board", spy)
    side_played = np.bincount(a.side[a.fmt == 0].ravel(), minlength=corpus.V)
    side_played[corpus.basics] = 0
    for r in np.flatnonzero(a.fmt == 0)[:12]:
        known = a.main[r][:10]
        # four copies of the format's favourite sideboard card in the main: the sideboard may add none
        extra = int(np.argmax(side_played * legal[0] * (corpus.copy_limit == 4)))
        known = np.concatenate([known[known != extra][:10], [extra] * 4])
        main, side = c.complete_idx(known, [], 0)
        broken = check_completion(main, side, known, [], 0, legal, corpus.copy_limit)
        assert not any(broken.values()), broken
        assert banned not in main.tolist() + side.tolist()
        assert int((main == extra).sum() + (side == extra).sum()) == 4
    assert checks


def test_same_input_same_deck_and_names_round_trip(corpus, prep, trained):
    model, _ = trained
    c = completer(corpus, prep, model)
    known = [("Card 10", 4), ("Card 11", 4), ("card 12", 2)]  # names are matched case-insensitively
    one = c.complete(known, [], "beta", seed=1)
    two = c.complete(known, [], "beta", seed=1)
    assert one.main == two.main and one.side == two.side
    assert sum(n for _, n in one.main) == 60 and sum(n for _, n in one.side) == 15
    assert ("Card 10", 4) in one.main or any(name == "Card 10" and n >= 4 for name, n in one.main)
    assert set(one.confidence) == {f"main:{n}" for n, _ in one.generated_main} | {f"side:{n}" for n, _ in one.generated_side}
    assert all(0.0 <= v <= 1.0 for v in one.confidence.values())
    assert 1 <= len(one.sources) <= 5 and one.sources[0].weight >= one.sources[-1].weight


def test_restricted_cards_and_partial_user_counts(corpus, prep):
    restricted = np.zeros_like(corpus.legal)
    restricted[:, 10] = True
    prep_r = prepare(corpus.arrays, corpus.V, corpus.legal, corpus.copy_limit, restricted, params=PARAMS)
    c = MaskedCompleter(None, prep_r.vote, prep_r.tables, names_for(corpus), FORMATS, restricted=restricted)
    with pytest.raises(CompletionError, match="restricted"):
        c.complete([("Card 10", 2)], [], "alpha")
    out = c.complete([("Card 10", 1), ("Card 11", 2)], [], "alpha")  # a partial count is topped up, never exceeded
    counts = Counter(dict(out.main)) + Counter(dict(out.side))
    assert counts["Card 10"] == 1 and counts["Card 11"] >= 2


def test_a_card_not_seen_in_the_format_is_kept_with_a_warning(corpus, prep):
    c = completer(corpus, prep, gate=1.0)
    illegal = int(np.flatnonzero(~corpus.legal[0])[0])
    out = c.complete([(f"Card {illegal}", 2), ("Card 10", 4)], [], "alpha")
    assert (f"Card {illegal}", 2) in out.main
    assert any(f"Card {illegal}" in w for w in out.warnings)
    generated = {n for n, _ in out.generated_main + out.generated_side}
    assert all(corpus.legal[0, int(n.split()[1])] for n in generated)  # generated cards stay known-legal


@pytest.mark.parametrize("main,side,fmt,message", [
    ([("Card 10", 4)], [], "gamma", "Unknown format"),
    ([("No Such Card", 4)], [], "alpha", "Unknown card"),
    ([("Card 10", 0)], [], "alpha", "whole number"),
    ([("Card 10", "4")], [], "alpha", "whole number"),
    ([], [("Card 10", 1)], "alpha", "at least one main-deck card"),
    ([("Card 10", 5)], [], "alpha", "Too many copies"),
    ([("Card 10", 3)], [("Card 10", 2)], "alpha", "Too many copies"),
    ([("Card 0", 61)], [], "alpha", "at most 60"),
    ([("Card 10", 1)], [("Card 0", 16)], "alpha", "at most 15"),
    (["Card 10"], [], "alpha", "pair"),
])
def test_bad_input_gets_a_clear_error(corpus, prep, main, side, fmt, message):
    with pytest.raises(CompletionError, match=message):
        completer(corpus, prep, gate=1.0).complete(main, side, fmt)


def test_training_learns_and_resumes(prep, tmp_path):
    cfg = MaskedConfig(d_model=32, heads=2, layers=1, ff=64, candidates=40, formats=2)
    tc = TrainConfig(steps=10, batch=8, examples=80, val_examples=16, checkpoint_every=5)
    full, m_full = train(prep, cfg, tc)
    ckpt = tmp_path / "ckpt.safetensors"
    _, m_half = train(prep, cfg, tc, checkpoint=ckpt, stop_after=0.0)
    assert m_half["steps"] < 10 and ckpt.exists()
    resumed, m_res = train(prep, cfg, tc, checkpoint=ckpt, resume=True)
    assert m_res["steps"] == 10 and m_res["finished"]
    for k in full:
        assert torch.allclose(full[k], resumed[k], atol=1e-5), k


# ------------------------------------------------------------------------------------------ ablations

@pytest.fixture(scope="module")
def plain(prep):
    torch.manual_seed(0)
    cfg = MaskedConfig(d_model=32, heads=2, layers=1, ff=64, candidates=40, formats=2, retrieval=False)
    state, metrics = train(prep, cfg, TrainConfig(steps=60, batch=16, examples=200, val_examples=32, lr=3e-3))
    model = denoiser_for(metrics["config"])
    model.load_state_dict(state)
    return model, metrics


def test_the_no_retrieval_model_learns_without_neighbours(corpus, prep, plain):
    """The ablation trains on masks alone (its loss falls), never reads a vote, and fills legal 60 + 15 decks
    deterministically; its training batches allow only legal cards and target every missing copy."""
    model, metrics = plain
    assert isinstance(model, PlainDenoiser) and metrics["config"]["retrieval"] is False
    assert metrics["val_loss"] < metrics["val_loss_gate1"]  # the first value is the untrained loss here
    a = corpus.arrays
    plans = plan_plain_examples(a.main, a.side, np.arange(20), prep.popularity, seed=0, side_share=1.0)
    batch = plain_batch(prep.tables, plans, a.main, a.side, a.fmt)
    for i, p in enumerate(plans):
        board = a.main[p.row] if p.board == 0 else a.side[p.row]
        truth, vis = np.bincount(board, minlength=corpus.V), np.bincount(board[p.shown], minlength=corpus.V)
        tok = batch["tgt_tok"][i][~batch["tgt_pad"][i]].numpy()
        want = np.flatnonzero((truth > vis) & prep.tables.legal[int(a.fmt[p.row])])
        assert sorted(tok.tolist()) == sorted(prep.tables.token[want].tolist())
        assert batch["allowed"][i, tok].all()
    c = completer(corpus, prep, model)
    assert c.plain

    def no_votes(*args, **kwargs):
        raise AssertionError("the no-retrieval model read the neighbours' votes")

    c._scores = no_votes
    for r in np.flatnonzero(a.fmt == 1)[:6]:
        known = a.main[r][:12]
        main, side = c.complete_idx(known, [], 1)
        broken = check_completion(main, side, known, [], 1, corpus.legal, corpus.copy_limit)
        assert not any(broken.values()), broken
        again = c.complete_idx(known, [], 1)
        assert (main == again[0]).all() and (side == again[1]).all()


def test_a_side_gate_of_one_fills_the_sideboard_as_the_vote_does(corpus, prep, trained):
    """Per-board gates: with the sideboard's gate at 1 the sideboard is the vote's for the same main deck."""
    model, _ = trained
    a = corpus.arrays
    mixed = completer(corpus, prep, model, gate=0.5, side_gate=1.0)
    assert mixed.gate_for(0) == 0.5 and mixed.gate_for(1) == 1.0
    vote = completer(corpus, prep, gate=1.0)
    for r in np.flatnonzero(a.fmt == 0)[:6]:
        main, side = mixed.complete_idx(a.main[r][:10], [], 0)
        _, side_vote = vote.complete_idx(main, [], 0)  # the whole main deck given: only the sideboard is filled
        assert sorted(side.tolist()) == sorted(side_vote.tolist())


def test_recency_order_draws_newer_decks_first_and_every_deck_once():
    from decks.completion.models.masked.train import _recency_order

    days = np.repeat(np.arange(0, 1000, 10.0), 20)  # 100 days x 20 decks
    order = _recency_order(np.random.default_rng(0), days, recency_days=200.0)
    assert sorted(order.tolist()) == list(range(days.size))
    first = days[order[:200]]
    assert first.mean() > days.mean() + 200  # the first draws lean to the newest decks
    assert first.min() < 800  # ... but older decks still appear
    uniform = _recency_order(np.random.default_rng(0), days, recency_days=0)
    assert abs(days[uniform[:200]].mean() - days.mean()) < 100


def test_a_version_1_config_builds_the_version_1_network():
    """Versions stored before the slot head (no "head", no "main_given" in their config) load as they were
    trained: the token head and no input for the share of the main deck the user gave."""
    v1 = {"ff": 64, "heads": 2, "vocab": 50, "layers": 1, "d_model": 32, "dropout": 0.0, "formats": 2,
          "candidates": 40}
    cfg = MaskedConfig.from_dict(v1)
    assert cfg.head == "token" and cfg.main_given is False and cfg.retrieval is True
    keys = set(MaskedDenoiser(cfg).state_dict())
    assert {"tok_head.weight", "cnt_head.weight"} <= keys and not any(k.startswith(("slot_head", "given")) for k in keys)
    new = MaskedConfig.from_dict(MaskedConfig(vocab=50).to_dict())
    assert new.head == "slot" and new.main_given is True
    with pytest.raises(ValueError, match="unknown head"):
        MaskedDenoiser(MaskedConfig(vocab=50, head="bogus"))
