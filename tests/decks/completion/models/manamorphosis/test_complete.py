from collections import Counter

import numpy as np
import pytest
import torch

from decks.completion.models.common import CompletionError
from decks.completion.models.manamorphosis.complete import Completer
from decks.completion.models.manamorphosis.model import DeckDenoiser
from decks.completion.models.manamorphosis.schedule import cosine_schedule

from . import BASICS, EXTRA, FORMATS, V, DotClassifier, make_embeddings, pool, rules, tiny_config, trained_tiny

NAMES = [f"Card {i:02d}" for i in range(V)]


def n(i: int) -> str:
    return NAMES[i]


class FavouriteClassifier(DotClassifier):
    """Wants card ``fav`` for every slot: forces the copy-limit refinement to work."""

    def __init__(self, E, fav):
        super().__init__(E)
        self.fav = fav

    def logits(self, vectors):
        out = super().logits(vectors)
        out[:, self.fav] += 1000.0
        return out


class NumpyClassifier:
    def __init__(self, E):
        self.embeddings = np.asarray(E)

    def logits(self, vectors):
        if isinstance(vectors, torch.Tensor):
            raise TypeError("numpy only")
        return vectors @ self.embeddings.T


def make_completer(model=None, classifier=None, legal=None):
    torch.manual_seed(0)
    model = model if model is not None else DeckDenoiser(tiny_config()).eval()
    E = make_embeddings()
    lg, restricted, copy_limit = rules()
    return Completer(model, cosine_schedule(), classifier or DotClassifier(E), NAMES,
                     lg if legal is None else legal, restricted, copy_limit, FORMATS)


@pytest.fixture(scope="module")
def completer():
    return make_completer()


def check_valid(comp, main_known, side_known, fmt):
    f = FORMATS.index(fmt)
    legal, restricted, copy_limit = rules()
    main, side = Counter(dict(comp.main)), Counter(dict(comp.side))
    assert sum(main.values()) == 60 and sum(side.values()) == 15
    for name, k in main_known:
        assert main[name] >= k
    for name, k in side_known:
        assert side[name] >= k
    total = main + side
    for name, k in total.items():
        i = NAMES.index(name)
        assert legal[f, i], name
        limit = 1 if restricted[f, i] else copy_limit[i]
        assert limit == 0 or k <= limit, (name, k)
    gm, gs = Counter(dict(comp.generated_main)), Counter(dict(comp.generated_side))
    assert gm + Counter(dict(main_known)) == main and gs + Counter(dict(side_known)) == side
    assert [e[0] for e in comp.main] == sorted(e[0] for e in comp.main)


@pytest.mark.parametrize("fmt", FORMATS)
def test_random_model_completions_are_valid(completer, fmt):
    main_known = [(n(0), 10), (n(4), 2)] if fmt != "vintage" else [(n(0), 10), (n(3), 1)]
    side_known = [(n(5), 2)]
    comp = completer.complete(main_known, side_known, fmt, seed=1, steps=8)
    check_valid(comp, main_known, side_known, fmt)
    assert comp.seconds > 0


def test_refinement_enforces_limits_restricted_and_basics():
    c = make_completer(classifier=FavouriteClassifier(make_embeddings(), fav=3))
    # vintage: card 3 is restricted -> at most one copy, everything else must move elsewhere
    comp = c.complete([(n(0), 20)], [], "vintage", seed=0, steps=5, max_rounds=2)
    check_valid(comp, [(n(0), 20)], [], "vintage")
    assert dict(comp.main).get(n(3), 0) + dict(comp.side).get(n(3), 0) == 1
    assert comp.iterations >= 1
    # no refinement rounds at all: the deterministic fallback still gives a valid deck
    comp = c.complete([(n(0), 20)], [], "modern", seed=0, steps=5, max_rounds=0)
    check_valid(comp, [(n(0), 20)], [], "modern")
    assert comp.iterations == 0 and dict(comp.main)[n(3)] == 4
    # a basic land wanted everywhere may fill the whole deck: no copy limit
    b = make_completer(classifier=FavouriteClassifier(make_embeddings(), fav=BASICS[1]))
    comp = b.complete([(n(4), 4)], [], "modern", seed=0, steps=5)
    assert dict(comp.main)[n(1)] == 56 and dict(comp.side)[n(1)] == 15 and comp.iterations == 0


def test_illegal_cards_never_generated():
    # archetype 2's pool (27-38) and card 39 are not legal in standard; the classifier prefers card 30
    c = make_completer(classifier=FavouriteClassifier(make_embeddings(), fav=30))
    comp = c.complete([(n(4), 4)], [(n(5), 1)], "standard", seed=2, steps=5)
    check_valid(comp, [(n(4), 4)], [(n(5), 1)], "standard")
    assert not any(27 <= NAMES.index(name) for name, _ in comp.main + comp.side)


def test_deterministic_for_a_seed(completer):
    args = ([(n(0), 12), (n(7), 3)], [(n(8), 1)], "modern")
    a = completer.complete(*args, seed=5, steps=6)
    b = completer.complete(*args, seed=5, steps=6)
    c = completer.complete(*args, seed=6, steps=6)
    key = lambda x: (x.main, x.side, x.iterations)  # noqa: E731
    assert key(a) == key(b) and key(a) != key(c)
    full = completer.complete(*args, seed=5, sampler="full")
    assert key(full) == key(completer.complete(*args, seed=5, sampler="full"))


def test_full_deck_returned_as_is_and_side_optional(completer):
    main = [(n(0), 24), *[(n(i), 4) for i in range(3, 12)]]
    side = [(n(12), 4), (n(13), 4), (n(14), 4), (n(0), 3)]
    comp = completer.complete(main, side, "modern", seed=0)
    assert comp.generated_main == [] and comp.generated_side == [] and comp.iterations == 0
    assert sorted(comp.main) == sorted(main) and sorted(comp.side) == sorted(side)
    only_side = completer.complete(main, [(n(12), 2)], "modern", seed=0, steps=4)
    assert only_side.generated_main == [] and sum(k for _, k in only_side.side) == 15
    no_side = completer.complete([(n(0), 30)], [(n(12), 2)], "modern", seed=0, steps=4, generate_side=False)
    assert no_side.side == [(n(12), 2)] and no_side.generated_side == []
    assert sum(k for _, k in no_side.main) == 60


def test_progress_reported(completer):
    seen = []
    completer.complete([(n(0), 20)], [], "modern", seed=0, steps=4, progress=lambda f, m: seen.append((f, m)))
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0 and len(seen) >= 8
    assert all(isinstance(m, str) and m for _, m in seen)


def test_numpy_classifier_works():
    c = make_completer(classifier=NumpyClassifier(make_embeddings()))
    comp = c.complete([(n(0), 20)], [], "modern", seed=0, steps=4)
    check_valid(comp, [(n(0), 20)], [], "modern")


@pytest.mark.parametrize("main, side, fmt, words", [
    ([("Nope", 1)], [], "modern", ["Unknown card", "Nope"]),
    ([(n(0), 61)], [], "modern", ["61", "at most 60"]),
    ([(n(0), 20)], [(n(0), 16)], "modern", ["16", "at most 15"]),
    ([(n(4), 3)], [(n(4), 2)], "modern", ["Too many copies", n(4), "5"]),
    ([(n(3), 2)], [], "vintage", ["restricted", n(3)]),
    ([(n(30), 1)], [], "standard", [n(30), "not legal", "Standard"]),
    ([(n(EXTRA), 1)], [], "modern", [n(EXTRA), "not legal", "Modern"]),
    ([(n(0), 1)], [], "commander", ["Unknown format", "commander"]),
    ([], [(n(5), 1)], "modern", ["at least one main-deck card"]),
    ([(n(0), 0)], [], "modern", ["Invalid count"]),
])
def test_bad_input_errors(completer, main, side, fmt, words):
    with pytest.raises(CompletionError) as err:
        completer.complete(main, side, fmt, seed=0, steps=2)
    for w in words:
        assert w in err.value.message
    assert isinstance(err.value, ValueError)


def test_no_legal_completion_possible():
    legal, _, _ = rules()
    legal = legal.copy()
    legal[1, :] = False
    legal[1, 3:6] = True  # modern: 3 legal cards, no basics -> at most 12 cards
    c = make_completer(legal=legal)
    with pytest.raises(CompletionError) as err:
        c.complete([(n(3), 4)], [], "modern", seed=0, steps=2)
    assert "Not enough legal cards" in err.value.message and "main deck" in err.value.message
    legal[1, 3:20] = True  # 17 cards x 4 = 68: the main deck fits, the sideboard does not
    c = make_completer(legal=legal)
    with pytest.raises(CompletionError) as err:
        c.complete([(n(3), 4)], [], "modern", seed=0, steps=2)
    assert "sideboard" in err.value.message
    assert sum(k for _, k in c.complete([(n(3), 4)], [], "modern", seed=0, steps=2,
                                        generate_side=False).main) == 60


def test_trained_model_recovers_the_archetype():
    model, _, _, arrays, _ = trained_tiny()
    c = make_completer(model=model)
    share = []
    for a in range(3):
        deck = Counter(arrays.main[a].tolist())
        given = [(n(a), 12)] + [(n(i), k) for i, k in sorted(deck.items()) if i >= 3][:3]
        for seed in (a, a + 10):
            comp = c.complete(given, [], "modern", seed=seed, steps=25)
            gen = Counter({NAMES.index(name): k for name, k in comp.generated_main})
            share.append(sum(k for i, k in gen.items() if i == a or i in pool(a)) / sum(gen.values()))
    assert np.mean(share) > 0.55, share  # a model ignoring the known cards scores about 1/3


def test_complete_many_matches_single_calls(completer):
    reqs = [([(n(0), 12), (n(7), 3)], [(n(8), 1)], "modern"),
            ([("Nope", 1)], [], "modern"),
            ([(n(1), 20), (n(16), 4)], [], "vintage"),
            ([(n(0), 24), *[(n(i), 4) for i in range(3, 12)]], [], "modern")]  # full main: only the side
    outs = completer.complete_many(reqs, seed=4, steps=6)
    assert len(outs) == 4 and isinstance(outs[1], CompletionError) and "Nope" in outs[1].message
    for req, out in zip(reqs, outs):
        if isinstance(out, CompletionError):
            continue
        check_valid(out, req[0], req[1], req[2])
        alone = completer.complete(*req, seed=4, steps=6)
        assert (alone.main, alone.side, alone.iterations) == (out.main, out.side, out.iterations)
    c = make_completer(classifier=FavouriteClassifier(make_embeddings(), fav=3))
    outs = c.complete_many([([(n(0), 20)], [], "vintage"), ([(n(0), 30)], [], "modern")], seed=0, steps=4)
    check_valid(outs[0], [(n(0), 20)], [], "vintage")
    check_valid(outs[1], [(n(0), 30)], [], "modern")
    assert outs[0].iterations >= 1 and outs[1].iterations >= 1
