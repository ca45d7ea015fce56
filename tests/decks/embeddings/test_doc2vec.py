"""decks.embeddings.doc2vec on a tiny made-up corpus (dim 16, a few epochs)."""
import random

import numpy as np
import pytest

from decks.embeddings.doc2vec import diffusion_space, nearest, train_doc2vec


@pytest.fixture(scope="module")
def docs():
    rng = random.Random(0)
    red = [f"red{i}" for i in range(15)]
    blue = [f"blue{i}" for i in range(15)]
    return [[rng.choice(red if n % 2 else blue) for _ in range(10)] for n in range(60)]


@pytest.fixture(scope="module")
def E(docs):
    # A 60-doc corpus gives gensim few updates per epoch: it needs ~150 epochs (0.3 s) to separate the topics.
    return train_doc2vec(docs, dim=16, epochs=150, seed=3)


def test_shape_and_dtype(E, docs):
    assert E.shape == (len(docs), 16) and E.dtype == np.float32


def test_deterministic_for_a_seed(E, docs):
    calls = []
    again = train_doc2vec(docs, dim=16, epochs=150, seed=3, progress=lambda epoch, total: calls.append((epoch, total)))
    assert np.array_equal(E, again)
    assert calls == [(e, 150) for e in range(1, 151)]
    other = train_doc2vec(docs, dim=16, epochs=150, seed=4)
    assert not np.allclose(E, other)


def test_vectors_learn_the_topics(E):
    # Even rows are "blue" docs, odd rows "red": neighbours share the topic.
    same_topic = [j % 2 == i % 2 for i in range(len(E)) for j, _ in nearest(E, i, k=5)]
    assert np.mean(same_topic) >= 0.9


def test_nearest_excludes_self_and_is_sorted(E):
    result = nearest(E, 4, k=10)
    assert len(result) == 10 and 4 not in [j for j, _ in result]
    sims = [s for _, s in result]
    assert sims == sorted(sims, reverse=True) and all(-1.0001 <= s <= 1.0001 for s in sims)
    assert len(nearest(E, 0, k=1000)) == len(E) - 1


def test_diffusion_space_norms(E):
    D = diffusion_space(E)
    assert D.dtype == np.float32 and D.shape == E.shape
    np.testing.assert_allclose(np.linalg.norm(D, axis=1), np.sqrt(16), rtol=1e-5)
    assert abs(float((D ** 2).mean()) - 1.0) < 1e-4
    assert np.all(np.isfinite(diffusion_space(np.zeros((2, 4)))))
