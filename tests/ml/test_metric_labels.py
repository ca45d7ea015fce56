"""The models page's metric headings (ml.metric_labels, pure): every key the shipped versions and the trainers
write reads as words, an unknown key as its own words, never as a raw dotted or underscored key."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ml.metric_labels import metric_label

RAW = re.compile(r"[A-Za-z]_[A-Za-z]|[A-Za-z]\.[A-Za-z]|^[A-Z0-9_.]{4,}$")


@pytest.mark.parametrize("key, label", [
    ("held_out.unforced.mean_rank", "Held-out unforced mean rank"),
    ("HELD_OUT.UNFORCED.MEAN_RANK", "Held-out unforced mean rank"),  # as the page used to shout it
    ("held_out.all.top1", "Held-out top-1"),
    ("eval.held_out.all.top3", "Evaluated held-out top-3"),
    ("val_loss", "Validation loss"),
    ("valid_brier", "Validation Brier score"),
    ("masked_recall_side_k20", "Masked recall sideboard K=20"),
    ("classifier_top1_noise_1.0", "Classifier top-1 noise 1.0"),  # a decimal point is not a separator
    ("train_seconds", "Training time (s)"),
    ("size_bytes", "Size (bytes)"),
    ("validation.side_top15_base_vote", "Validation sideboard top-15, base vote"),
])
def test_known_keys_read_as_words(key, label):
    assert metric_label(key) == label


@pytest.mark.parametrize("key", ["frobnicated_widgets", "alpha.beta_gamma", "x__y", "zeta.all.omega_3"])
def test_an_unknown_key_reads_as_its_own_words(key):
    label = metric_label(key)
    assert label and not RAW.search(label), label
    assert label[0].isupper()
    assert set(re.findall(r"[a-z0-9]+", key.lower())) - {"all"} <= set(re.findall(r"[a-z0-9]+", label.lower()))


def test_every_metric_of_the_shipped_versions_reads_as_words():
    from ml.training import flat_metrics

    manifest = json.loads((Path(__file__).resolve().parents[2] / "ml" / "weights" / "manifest.json").read_text())
    keys = {k for entry in manifest for k in flat_metrics(entry.get("metrics") or {})}
    assert len(keys) > 20
    raw = {k: metric_label(k) for k in keys if RAW.search(metric_label(k))}
    assert not raw, raw
