"""Readable headings for the flattened metric keys of the models page (pure: no Django).

``held_out.unforced.mean_rank`` reads "Held-out unforced mean rank": a few whole keys have their own words,
then every dotted segment and every underscored word goes through a small table of what the metrics here
abbreviate (``val`` validation, ``top1`` top-1, ``k10`` K=10), and whatever the table does not know is shown
as its own words, underscores as spaces. The page keeps the raw key in the heading's ``title``.
"""
from __future__ import annotations

import re

# whole keys whose generic reading would say less than these
KEYS = {
    "size_bytes": "size (bytes)",
    "val_loss_gate1": "validation loss at gate 1",
    "validation.side_top15_base_vote": "validation sideboard top-15, base vote",
    "validation.side_top15_model": "validation sideboard top-15, model",
}
# one dotted segment, or one underscored phrase inside it
PHRASES = {
    "held_out": "held-out",
    "mean_rank": "mean rank",
    "log_loss": "log loss",
    "noise_std": "noise std",
    "all": "",  # held_out.all.top1: "held-out top-1" (beside held_out.unforced.top1)
}
WORDS = {
    "val": "validation", "valid": "validation", "eval": "evaluated", "train": "training", "side": "sideboard",
    "main": "main deck", "mv": "mana value", "wr": "win rate", "n": "count", "pct": "%", "secs": "time (s)",
    "docs": "documents", "seconds": "time (s)", "num": "number of", "avg": "average", "std": "std", "brier": "Brier score",
}
_TOP = re.compile(r"top(\d+)")
_K = re.compile(r"k(\d+)")
_SEGMENT = re.compile(r"\.(?=[A-Za-z_])")  # 'noise_1.0' keeps its decimal point


def _word(word: str) -> str:
    if word in WORDS:
        return WORDS[word]
    if m := _TOP.fullmatch(word):
        return f"top-{m.group(1)}"
    if m := _K.fullmatch(word):
        return f"K={m.group(1)}"
    return word


def _segment(segment: str) -> str:
    if segment in PHRASES:
        return PHRASES[segment]
    words, out, i = segment.split("_"), [], 0
    while i < len(words):
        pair = "_".join(words[i:i + 2])
        if i + 1 < len(words) and pair in PHRASES:
            out.append(PHRASES[pair])
            i += 2
        else:
            out.append(_word(words[i]))
            i += 1
    return " ".join(w for w in out if w)


def metric_label(key: str) -> str:
    """A metric key as a heading a person reads: 'held_out.all.top1' -> 'Held-out top-1'."""
    key = (key or "").strip()
    text = KEYS.get(key.lower())
    if text is None:
        segments = [_segment(s) for s in _SEGMENT.split(key.lower())]
        text = " ".join(s for s in segments if s) or key
    return text[:1].upper() + text[1:]
