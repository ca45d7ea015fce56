"""PV-DBOW Doc2Vec card embeddings (Manamorphosis: ``Doc2Vec(vector_size=128, dm=0, dbow_words=0, min_count=2)``).

Pure: token lists in, a float32 array out (row i = document i, tagged with its row index).

``dbow_words=0`` (pure PV-DBOW, as Manamorphosis): only document vectors predict their words; no word vectors
are trained, which is what we need (we keep document vectors only) and several times faster than
``dbow_words=1``.

Determinism: gensim 4 seeds its vectors from ``numpy.random.default_rng(seed)`` (``hashfxn`` is no longer used
for initialisation) and its negative/down-sampling from a RandomState seeded with ``seed``, so with
``workers=1`` two runs with the same seed and corpus give identical arrays whatever PYTHONHASHSEED is (the
vocabulary order is frequency then first occurrence, not hash order). With ``workers>1`` the threads race on
the shared weights and runs differ slightly.
"""
from __future__ import annotations

import logging
import zlib
from typing import Callable

import numpy as np

logger = logging.getLogger(__name__)


def _seeded_hash(text: str) -> int:
    """A PYTHONHASHSEED-independent hash for gensim's ``hashfxn`` (kept for any gensim code path that uses it)."""
    return zlib.crc32(text.encode("utf-8"))


def train_doc2vec(docs: list[list[str]], dim: int = 128, epochs: int = 30, seed: int = 7, workers: int = 1,
                  progress: Callable[[int, int], None] | None = None, min_count: int = 2,
                  stats: dict | None = None) -> np.ndarray:
    """Document vectors ``[len(docs), dim]`` (float32) of a PV-DBOW model trained on ``docs``.

    ``progress(epoch, total)`` is called after each epoch (epoch counts from 1). When ``stats`` is a dict it
    receives ``vocab`` (number of distinct tokens kept, count >= min_count) and ``corpus_words``.
    """
    from gensim.models.callbacks import CallbackAny2Vec  # noqa: PLC0415 gensim is heavy: imported only to train
    from gensim.models.doc2vec import Doc2Vec, TaggedDocument  # noqa: PLC0415 gensim is heavy: only to train

    if not docs:
        raise ValueError("train_doc2vec needs at least one document")

    class _Progress(CallbackAny2Vec):
        def __init__(self):
            self.epoch = 0

        def on_epoch_end(self, model):
            self.epoch += 1
            if progress is not None:
                progress(self.epoch, epochs)

    corpus = [TaggedDocument(list(tokens), [i]) for i, tokens in enumerate(docs)]
    model = Doc2Vec(dm=0, dbow_words=0, vector_size=dim, min_count=min_count, seed=seed, workers=max(1, int(workers)),
                    epochs=epochs, hashfxn=_seeded_hash)
    model.build_vocab(corpus)
    model.train(corpus, total_examples=model.corpus_count, epochs=model.epochs, callbacks=[_Progress()])
    if stats is not None:
        stats["vocab"] = len(model.wv)
        stats["corpus_words"] = int(model.corpus_total_words)
    vectors = np.asarray(model.dv.vectors[: len(docs)], dtype=np.float32)
    return vectors.copy()


def diffusion_space(E: np.ndarray) -> np.ndarray:
    """Rows L2-normalised then scaled by sqrt(dim): per-dimension variance about 1, as the DDPM expects."""
    E = np.asarray(E, dtype=np.float32)
    norms = np.linalg.norm(E, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (E / norms * np.sqrt(E.shape[1])).astype(np.float32)


def nearest(E: np.ndarray, i: int, k: int = 10) -> list[tuple[int, float]]:
    """The k rows with the highest cosine similarity to row i (row i excluded), best first."""
    E = np.asarray(E, dtype=np.float32)
    norms = np.linalg.norm(E, axis=1)
    norms[norms == 0] = 1.0
    sims = (E @ E[i]) / (norms * norms[i])
    sims[i] = -np.inf
    k = max(0, min(k, len(E) - 1))
    if k == 0:
        return []
    top = np.argpartition(-sims, k - 1)[:k]
    top = top[np.lexsort((top, -sims[top]))]  # by similarity, ties by index
    return [(int(j), float(sims[j])) for j in top]
