"""Card embeddings: card text -> tokens, Doc2Vec PV-DBOW vectors, embedding -> card classifier.

Pure (no Django): ``text``, ``doc2vec``, ``classifier`` (and this package's lazy re-exports of them). The Django
shell: ``service`` (active version, similar cards) and ``training`` (the ``card_embeddings`` kind's train and
evaluate, ``manage.py models train card_embeddings``). Re-exports are lazy so that importing the tokenizer does
not import torch.
"""
from importlib import import_module

_EXPORTS = {
    "card_tokens": "text", "stopwords": "text",
    "train_doc2vec": "doc2vec", "diffusion_space": "doc2vec", "nearest": "doc2vec",
    "train_classifier": "classifier", "classifier_report": "classifier", "classifier_accuracy": "classifier",
    "CardClassifier": "classifier",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(import_module(f"decks.embeddings.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module 'decks.embeddings' has no attribute {name!r}")
