"""Train the card embeddings (Doc2Vec PV-DBOW over card text) and the embedding -> card classifier,
and register them as a new ``card_embeddings`` ModelVersion (activated unless --no-activate).

Every run adds a new version; ``names`` (all catalogue cards, by name) fixes the card index.
"""
from __future__ import annotations

import hashlib
import json
import time

import numpy as np
from django.core.management.base import BaseCommand, CommandError

from decks.management.importing import progress
from decks.models import Card

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


class Command(BaseCommand):
    help = "Train card embeddings (Doc2Vec) + the embedding->card classifier on the catalogue; register a new version."

    def add_arguments(self, parser):
        parser.add_argument("--epochs", type=int, default=200, help="Doc2Vec epochs (as Manamorphosis; ~1 s each on 2 cores)")
        parser.add_argument("--dim", type=int, default=128)
        parser.add_argument("--seed", type=int, default=7)
        parser.add_argument("--workers", type=int, default=1, help="Doc2Vec threads (1 = reproducible for a seed)")
        parser.add_argument("--classifier-epochs", type=int, default=2,
                            help="fine-tuning epochs from the Bayes-optimal start (~30 s each for 35k cards on 2 cores)")
        parser.add_argument("--noise-std", type=float, default=0.35, help="classifier training noise (per dimension)")
        parser.add_argument("--activate", action="store_true", default=True, help="make it the active version (default)")
        parser.add_argument("--no-activate", dest="activate", action="store_false")

    def handle(self, *args, **opts):
        import torch

        from ml import registry
        from ml.embeddings.classifier import classifier_report, train_classifier
        from ml.embeddings.doc2vec import diffusion_space, train_doc2vec
        from ml.embeddings.text import card_tokens

        started = time.perf_counter()
        timings = {}
        rows = list(Card.objects.order_by("name").values(*CARD_VALUES))
        if len(rows) < 2:
            raise CommandError("The catalogue has fewer than 2 cards: import cards first (manage.py import_cards).")
        names = [r["name"] for r in rows]
        docs = [card_tokens(r) for r in progress(rows, desc="tokens", unit="card")]
        timings["tokens_s"] = time.perf_counter() - started

        t0 = time.perf_counter()
        stats: dict = {}
        with progress(total=opts["epochs"], desc="doc2vec", unit="epoch") as bar:
            E = train_doc2vec(docs, dim=opts["dim"], epochs=opts["epochs"], seed=opts["seed"], workers=opts["workers"],
                              progress=lambda epoch, total: bar.update(1), stats=stats)
        E_diff = diffusion_space(E)
        timings["doc2vec_s"] = time.perf_counter() - t0

        t0 = time.perf_counter()
        with progress(total=opts["classifier_epochs"], desc="classifier", unit="epoch") as bar:
            W, b = train_classifier(E_diff, epochs=opts["classifier_epochs"], noise_std=opts["noise_std"],
                                    seed=opts["seed"], progress=lambda epoch, total: bar.update(1))
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
        levels = sorted({0.0, float(opts["noise_std"]), 1.0})
        report = classifier_report(tensors["classifier.weight"].float().numpy(), b, E_eval, levels,
                                   seed=opts["seed"], same=groups)
        ranks = neighbour_ranks(E_eval, names)
        timings["evaluate_s"] = time.perf_counter() - t0

        metrics = {
            "cards": len(names),
            "token_vocab": stats.get("vocab"),
            "corpus_tokens": stats.get("corpus_words"),
            "cards_sharing_tokens": int(len(groups) - len(np.unique(groups))),
            "empty_docs": sum(1 for d in docs if not d),
            "classifier_top1_clean": report[0.0]["top1"],
            "classifier_top1_noisy": report[float(opts["noise_std"])]["top1"],
            "classifier_top1_noisy_same_text": report[float(opts["noise_std"])]["top1_same_text"],
            "classifier_top1_noise_1.0": report[1.0]["top1"],
            "noise_std": opts["noise_std"],
            "neighbour_ranks": ranks,
            "neighbour_rank_median": float(np.median(list(ranks.values()))) if ranks else None,
        }
        names_sha1 = hashlib.sha1("\n".join(names).encode("utf-8")).hexdigest()
        config = {
            "dim": opts["dim"], "epochs": opts["epochs"], "seed": opts["seed"], "dm": 0, "dbow_words": 0,
            "min_count": 2, "names_sha1": names_sha1, "vocab": len(names), "workers": opts["workers"],
            "classifier_epochs": opts["classifier_epochs"], "noise_std": opts["noise_std"],
        }
        timings["total_s"] = time.perf_counter() - started
        metrics["timings"] = {k: round(v, 1) for k, v in timings.items()}
        version = registry.save_version(
            "card_embeddings", tensors, config, metrics=metrics, activate=opts["activate"],
            data_snapshot={"source": "decks.Card", "cards": len(names), "names_sha1": names_sha1},
            metadata={"names": json.dumps(names, ensure_ascii=False)})

        out = self.stdout.write
        out(f"cards {len(names)}, token vocabulary {metrics['token_vocab']}, {metrics['cards_sharing_tokens']} cards "
            f"share their token list with another card")
        out(f"classifier top-1: clean {metrics['classifier_top1_clean']:.4f}, noise {opts['noise_std']} "
            f"{metrics['classifier_top1_noisy']:.4f} (same text {metrics['classifier_top1_noisy_same_text']:.4f}), "
            f"noise 1.0 {metrics['classifier_top1_noise_1.0']:.4f}")
        for pair, rank in ranks.items():
            out(f"  neighbour rank {pair}: {rank}")
        out("timings: " + ", ".join(f"{k} {v:.1f}" for k, v in timings.items()))
        self.stdout.write(self.style.SUCCESS(
            f"{version} registered: {version.weights_path} ({version.weights_bytes / 1e6:.1f} MB)"
            f"{'' if opts['activate'] else ' (not activated)'}"))
