"""decks.embeddings.classifier on a tiny random card table (V=50, dim 16)."""
import numpy as np
import pytest
import torch

from decks.embeddings.classifier import CardClassifier, classifier_accuracy, classifier_report, train_classifier
from decks.embeddings.doc2vec import diffusion_space

V, DIM = 50, 16


@pytest.fixture(scope="module")
def E():
    return diffusion_space(np.random.default_rng(0).standard_normal((V, DIM)).astype(np.float32))


@pytest.fixture(scope="module")
def trained(E):
    calls = []
    W, b = train_classifier(E, epochs=20, noise_std=0.35, batch=32, seed=0, progress=lambda e, t: calls.append(e))
    assert calls == list(range(1, 21))
    return W, b


def test_shapes(trained):
    W, b = trained
    assert W.shape == (V, DIM) and b.shape == (V,) and W.dtype == np.float32


def test_recovers_clean_and_noisy_vectors(E, trained):
    W, b = trained
    assert classifier_accuracy(W, b, E, 0.0) == 1.0
    assert classifier_accuracy(W, b, E, 0.35, seed=1) >= 0.98
    report = classifier_report(W, b, E, (0.0, 0.35), same=np.arange(V))
    assert report[0.0] == {"top1": 1.0, "top1_same_text": 1.0}


def test_cross_entropy_training_learns_from_a_random_start(E):
    W, b = train_classifier(E, epochs=60, noise_std=0.35, batch=64, lr=0.05, seed=0, init="random")
    assert classifier_accuracy(W, b, E, 0.0) >= 0.98


def test_deterministic_for_a_seed(E):
    a = train_classifier(E, epochs=2, seed=5)
    b = train_classifier(E, epochs=2, seed=5)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])


def test_card_classifier_predict_respects_allowed(E, trained):
    W, b = trained
    clf = CardClassifier(torch.from_numpy(W), torch.from_numpy(b), torch.from_numpy(E))
    x = torch.from_numpy(E[:5])
    assert clf.logits(x).shape == (5, V) and clf.embeddings is clf.E and clf.num_cards == V
    assert clf.predict(x).tolist() == [0, 1, 2, 3, 4]
    allowed = torch.ones(V, dtype=torch.bool)
    allowed[:3] = False
    pred = clf.predict(x, allowed)
    assert pred[3:].tolist() == [3, 4]
    assert all(allowed[p] for p in pred.tolist())
    only = torch.zeros(V, dtype=torch.bool)
    only[7] = True
    assert clf.predict(x, only).tolist() == [7] * 5


def test_card_classifier_nearest(E, trained):
    W, b = trained
    clf = CardClassifier(torch.from_numpy(W).half(), torch.from_numpy(b), torch.from_numpy(E).half())
    x = torch.from_numpy(E[10:20]) * 3.0  # cosine ignores scale
    assert clf.nearest(x).tolist() == list(range(10, 20))
    allowed = torch.ones(V, dtype=torch.bool)
    allowed[10] = False
    assert clf.nearest(x[:1], allowed).item() != 10
