"""Training and evaluation of the card embeddings (the registry kind ``card_embeddings``): Doc2Vec PV-DBOW over
card text and the embedding -> card classifier, registered as a new version. Plain functions that
``manage.py train_embeddings`` and the training runs (``ml.training``) call; registered from ``MlConfig.ready``.

Every run adds a new version; ``names`` (all catalogue cards, by name) fixes the card index.
"""
from __future__ import annotations

import hashlib
import json
import time

import numpy as np

from decks.models import Card
from ml.embeddings.doc2vec import diffusion_space, train_doc2vec
from ml.embeddings.text import card_tokens
from ml.kinds import Kind, TrainingError, need, settle
from ml.models import ModelVersion
from ml.progress import Progress
from ml.registry import load_version, save_version

KIND = "card_embeddings"
DEFAULTS = {"epochs": 200, "dim": 128, "seed": 7, "workers": 1, "classifier_epochs": 2, "noise_std": 0.35}
CARD_VALUES = ("name", "mana_cost", "type_line", "supertypes", "types", "subtypes", "oracle_text", "power",
               "toughness", "loyalty", "defense", "faces")
# (card, a functionally close card): the rank of the second among the first's cosine neighbours (1 = nearest).
SANITY_PAIRS = [
    ("Lightning Bolt", "Chain Lightning"),
    ("Counterspell", "Mana Leak"),
    ("Llanowar Elves", "Elvish Mystic"),
    ("Swords to Plowshares", "Path to Exile"),
    ("Brainstorm", "Ponder"),
    ("Thoughtseize", "Inquisition of Kozilek"),
    ("Dark Ritual", "Cabal Ritual"),
]


def neighbour_ranks(E: np.ndarray, names: list[str], pairs=SANITY_PAIRS) -> dict[str, int]:
    index = {n: i for i, n in enumerate(names)}
    unit = E / np.maximum(np.linalg.norm(E, axis=1, keepdims=True), 1e-12)
    ranks = {}
    for a, b in pairs:
        if a in index and b in index:
            sims = unit @ unit[index[a]]
            sims[index[a]] = -np.inf
            ranks[f"{a} -> {b}"] = 1 + int((sims > sims[index[b]]).sum())
    return ranks


def token_groups(docs: list[list[str]]) -> np.ndarray:
    """Group id per card: cards with identical token lists share one."""
    ids: dict[tuple, int] = {}
    return np.array([ids.setdefault(tuple(d), len(ids)) for d in docs], dtype=np.int64)


def train(params: dict, progress: Progress, scope: str = "") -> ModelVersion:
    """Train on the catalogue and register an inactive version (params: DEFAULTS' keys and ``notes``)."""
    # torch takes seconds to import: kept off Django start-up (MlConfig.ready imports this module); gensim is
    # imported by train_doc2vec itself
    import torch  # noqa: PLC0415 kept off Django start-up

    from ml.embeddings.classifier import classifier_report, train_classifier  # noqa: PLC0415 torch: kept off Django start-up

    p = settle(params, DEFAULTS)
    progress.expect(3)  # tokens, doc2vec, classifier
    started = time.perf_counter()
    timings = {}
    rows = list(Card.objects.order_by("name").values(*CARD_VALUES))
    if len(rows) < 2:
        raise TrainingError("The catalogue has fewer than 2 cards: import cards first (manage.py import_cards).")
    names = [r["name"] for r in rows]
    docs = [card_tokens(r) for r in progress.bar(rows, desc="tokens", unit="card")]
    timings["tokens_s"] = time.perf_counter() - started

    t0 = time.perf_counter()
    stats: dict = {}
    with progress.bar(total=p["epochs"], desc="doc2vec", unit="epoch") as bar:
        E = train_doc2vec(docs, dim=p["dim"], epochs=p["epochs"], seed=p["seed"], workers=p["workers"],
                          progress=lambda epoch, total: bar.update(1), stats=stats)
    E_diff = diffusion_space(E)
    timings["doc2vec_s"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    with progress.bar(total=p["classifier_epochs"], desc="classifier", unit="epoch") as bar:
        W, b = train_classifier(E_diff, epochs=p["classifier_epochs"], noise_std=p["noise_std"],
                                seed=p["seed"], progress=lambda epoch, total: bar.update(1))
    timings["classifier_s"] = time.perf_counter() - t0

    # What is stored (float16) is what is measured.
    tensors = {
        "embeddings": torch.from_numpy(E_diff).half(),
        "classifier.weight": torch.from_numpy(W).half(),
        "classifier.bias": torch.from_numpy(b).float(),
    }
    E_eval = tensors["embeddings"].float().numpy()
    t0 = time.perf_counter()
    groups = token_groups(docs)
    levels = sorted({0.0, float(p["noise_std"]), 1.0})
    report = classifier_report(tensors["classifier.weight"].float().numpy(), b, E_eval, levels,
                               seed=p["seed"], same=groups)
    ranks = neighbour_ranks(E_eval, names)
    timings["evaluate_s"] = time.perf_counter() - t0

    metrics = {
        "cards": len(names),
        "token_vocab": stats.get("vocab"),
        "corpus_tokens": stats.get("corpus_words"),
        "cards_sharing_tokens": int(len(groups) - len(np.unique(groups))),
        "empty_docs": sum(1 for d in docs if not d),
        "classifier_top1_clean": report[0.0]["top1"],
        "classifier_top1_noisy": report[float(p["noise_std"])]["top1"],
        "classifier_top1_noisy_same_text": report[float(p["noise_std"])]["top1_same_text"],
        "classifier_top1_noise_1.0": report[1.0]["top1"],
        "noise_std": p["noise_std"],
        "neighbour_ranks": ranks,
        "neighbour_rank_median": float(np.median(list(ranks.values()))) if ranks else None,
    }
    names_sha1 = hashlib.sha1("\n".join(names).encode("utf-8")).hexdigest()
    config = {
        "dim": p["dim"], "epochs": p["epochs"], "seed": p["seed"], "dm": 0, "dbow_words": 0,
        "min_count": 2, "names_sha1": names_sha1, "vocab": len(names), "workers": p["workers"],
        "classifier_epochs": p["classifier_epochs"], "noise_std": p["noise_std"],
    }
    timings["total_s"] = time.perf_counter() - started
    metrics["timings"] = {k: round(v, 1) for k, v in timings.items()}
    return save_version(
        KIND, tensors, config, metrics=metrics, activate=False,
        data_snapshot={"source": "decks.Card", "cards": len(names), "names_sha1": names_sha1},
        metadata={"names": json.dumps(names, ensure_ascii=False)},
        notes=p.get("notes") or "")


def evaluate(version: ModelVersion, params: dict, progress: Progress) -> dict:
    """The classifier's top-1 on the stored embeddings, clean and under noise."""
    from ml.embeddings.classifier import classifier_report  # noqa: PLC0415 torch: kept off Django start-up

    bar = progress.bar(total=2, desc="loading the version")
    loaded = load_version(version)
    E = loaded.tensors["embeddings"].float().numpy()
    W = loaded.tensors["classifier.weight"].float().numpy()
    b = loaded.tensors["classifier.bias"].float().numpy()
    noise = float(params.get("noise_std", version.config.get("noise_std", 0.35)))
    bar.update(1)
    bar.set_description("classifier accuracy under noise")
    report = classifier_report(W, b, E, sorted({0.0, noise, 1.0}), seed=int(params.get("seed", 0)))
    out = {"classifier_top1_clean": report[0.0]["top1"], "classifier_top1_noisy": report[noise]["top1"],
           "classifier_top1_noise_1.0": report[1.0]["top1"], "cards": int(E.shape[0])}
    progress.metric("classifier_top1_noisy", out["classifier_top1_noisy"])
    return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in out.items() if not isinstance(v, np.ndarray)}


# --- the registry kind -------------------------------------------------------------------------------------

def shapes(config: dict) -> dict:
    need(config, "vocab", "dim")
    v, d = int(config["vocab"]), int(config["dim"])
    return {"embeddings": (v, d), "classifier.weight": (v, d), "classifier.bias": (v,)}


def metadata(config: dict) -> dict:
    def names(value):
        try:
            got = json.loads(value)
        except ValueError:
            return "metadata 'names' is not a JSON list"
        if not isinstance(got, list) or len(got) != int(config["vocab"]):
            return f"metadata 'names' must list the {config['vocab']} card names of the vocabulary"
        return None
    return {"names": names}


CARD_EMBEDDINGS = Kind(
    KIND, label="Card embeddings (Doc2Vec + card classifier)", shapes=shapes, metadata=metadata, train=train, evaluate=evaluate,
    dtypes={"embeddings": frozenset({"F16", "F32"}), "classifier.weight": frozenset({"F16", "F32"}),
            "classifier.bias": frozenset({"F32", "F16"})},
    parameters={"epochs": int, "dim": int, "seed": int, "workers": int, "classifier_epochs": int, "noise_std": float},
    quick=lambda scope: {"epochs": 5, "dim": 32, "classifier_epochs": 1, "workers": 1})
