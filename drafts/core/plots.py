"""Figures of a draft (pure: matplotlib with the Agg backend, no Django, no pyplot).

* :func:`draft_history_figure` draws one drafter's picks the way madrury/mtg-draftbot does: the
  x axis is the pick (1..42), one line per two-colour pair shows how committed the drafter is to
  that pair after each pick, and a dot per pick marks the card, coloured by its colours and
  outlined by its rarity, at the height of the pair it fits best.
* :func:`weights_heatmap_figure` shows an archetype bot's card-by-archetype weights.
* ``common.figures.figure_bytes`` renders a figure to SVG or PNG bytes.

Figures are made with :class:`matplotlib.figure.Figure` directly rather than pyplot, so nothing is
registered in pyplot's global figure list (safe in a web worker, nothing to leak); matplotlib is
imported only when a figure is drawn, so importing this module costs no more than numpy.
"""
from __future__ import annotations

from itertools import combinations
from typing import Any, Mapping, Sequence

import numpy as np

from common.figures import new_figure
from decks.core.cards import COLOR_ORDER
from drafts.core.cards import SetList

PAIRS = tuple("".join(p) for p in combinations(COLOR_ORDER, 2))  # WU WB WR WG UB UR UG BR BG RG
CARD_COLORS = {"W": "#f8e7b9", "U": "#1f6fb4", "B": "#2b2b2b", "R": "#d3202a", "G": "#2e8b3d",
               "multi": "#d4af37", "colorless": "#9a9a9a"}
RARITY_EDGES = {"common": "#000000", "uncommon": "#a8a8a8", "rare": "#c9a227", "mythic": "#e2461b",
                "basic": "#000000", "special": "#7b3fa0"}
PAIR_NAMES = {"WU": "Azorius", "WB": "Orzhov", "WR": "Boros", "WG": "Selesnya", "UB": "Dimir",
              "UR": "Izzet", "UG": "Simic", "BR": "Rakdos", "BG": "Golgari", "RG": "Gruul"}


def _field(pick: Any, name: str):
    return pick[name] if isinstance(pick, Mapping) else getattr(pick, name)


def card_color_key(colors: str) -> str:
    """The :data:`CARD_COLORS` key of a card: its colour, ``multi`` or ``colorless``."""
    return colors if len(colors) == 1 else ("multi" if colors else "colorless")


def pair_commitment(picks: Sequence[str], set_list: SetList, ratings: Mapping[str, float] | None = None
                    ) -> list[dict[str, float]]:
    """For each pick, the running commitment to every colour pair after it.

    A card adds its weight (its rating when ``ratings`` is given, unrated cards 2.5; else 1) to
    every pair that contains all its colours; a colourless card fits every pair, a card of three
    or more colours fits none.
    """
    totals = {p: 0.0 for p in PAIRS}
    out = []
    for name in picks:
        card = set_list.card(name)
        weight = float(ratings.get(name, 2.5)) if ratings else 1.0
        colors = set(card.colors)
        for pair in PAIRS:
            if colors <= set(pair):
                totals[pair] += weight
        out.append(dict(totals))
    return out


def draft_history_figure(history: Sequence[Any], set_list: SetList, ratings: Mapping[str, float] | None = None,
                         title: str | None = None):
    """One drafter's picks: :class:`PickRecord` objects or dicts with ``pick``, ``pack_number`` and
    ``pick_number`` (0-based), in any order; x is the overall pick, 1..42 for three 14-card packs.

    Each dot sits on the line of the pair that fits the card best: among the pairs sharing the
    most colours with it, the one with the highest commitment after the pick.
    """
    keyed = sorted(((int(_field(h, "pack_number")), int(_field(h, "pick_number")), str(_field(h, "pick")))
                    for h in history), key=lambda t: (t[0], t[1]))
    per_pack = max((k for _, k, _ in keyed), default=0) + 1
    picks = [name for _, _, name in keyed]
    packs = [p for p, _, _ in keyed]
    xs = [p * per_pack + k + 1 for p, k, _ in keyed]  # overall pick, 1-based (1..42 for 3 x 14)
    running = pair_commitment(picks, set_list, ratings)

    fig = new_figure(figsize=(10, 5.2), dpi=100)
    ax = fig.add_subplot(1, 1, 1)
    palette = ["#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#666666",
               "#1f78b4", "#b2182b"]
    for i, pair in enumerate(PAIRS):
        ax.plot(xs, [r[pair] for r in running], color=palette[i], linewidth=1.6, alpha=0.85,
                label=f"{pair} {PAIR_NAMES[pair]}", zorder=2)

    dot_y, faces, edges = [], [], []
    for name, totals in zip(picks, running):
        card = set_list.card(name)
        colors = set(card.colors)
        overlap = max(len(colors & set(p)) for p in PAIRS)
        best = max((p for p in PAIRS if len(colors & set(p)) == overlap), key=lambda p: totals[p])
        dot_y.append(totals[best])
        faces.append(CARD_COLORS[card_color_key(card.colors)])
        edges.append(RARITY_EDGES.get(card.rarity, "#000000"))
    if picks:
        ax.scatter(xs, dot_y, s=46, c=faces, edgecolors=edges, linewidths=1.6, zorder=3)
    for p in sorted(set(packs))[1:]:
        ax.axvline(p * per_pack + 0.5, color="#bbbbbb", linestyle="--", linewidth=0.8, zorder=1)

    ax.set_xlabel("pick")
    ax.set_ylabel("commitment to colour pair" + (" (rating-weighted)" if ratings else " (cards)"))
    ax.set_title(title or f"{set_list.code} draft: colour-pair commitment by pick")
    ax.set_xlim(0.5, max(xs, default=1) + 0.5)
    ax.grid(alpha=0.25)
    ax.legend(loc="upper left", fontsize=8, ncol=2, frameon=False)
    fig.subplots_adjust(left=0.075, right=0.985, bottom=0.1, top=0.93)  # fixed: tight_layout costs ~0.1 s
    return fig


def weights_heatmap_figure(weights, card_names: Sequence[str], archetype_names: Sequence[str], top: int | None = None,
                           title: str | None = None):
    """Heatmap of a ``[cards, archetypes]`` weight matrix.

    Cards are grouped by their strongest archetype (in archetype order) and, within a group, by
    that weight, strongest first, so each archetype's signature cards form a block down the
    diagonal. ``top`` keeps only the ``top`` cards with the largest strongest weight.
    """
    w = np.asarray(weights, dtype=float)
    if w.ndim != 2 or w.shape != (len(card_names), len(archetype_names)):
        raise ValueError(f"weights of shape {w.shape} do not match {len(card_names)} cards x "
                         f"{len(archetype_names)} archetypes")
    best = w.argmax(axis=1) if w.size else np.zeros(0, int)
    strength = w.max(axis=1) if w.size else np.zeros(0)
    rows = np.arange(len(card_names))
    if top is not None and top < len(rows):
        rows = np.sort(np.argsort(-strength, kind="stable")[:top])
    rows = rows[np.lexsort((rows, -strength[rows], best[rows]))]

    labels = [str(card_names[i]) for i in rows]
    height = min(max(3.0, 0.1 * len(rows) + 1.4), 40.0)
    label_in = 0.25 + 0.045 * max((len(t) for t in labels), default=0)  # room for 6 pt card names
    width = label_in + 0.45 * len(archetype_names) + 1.4
    fig = new_figure(figsize=(width, height), dpi=100)
    # fixed margins in inches (tight_layout would measure every label, slow for a whole set)
    fig.subplots_adjust(left=label_in / width, right=1 - 1.3 / width, bottom=0.8 / height, top=1 - 0.4 / height)
    ax = fig.add_subplot(1, 1, 1)
    image = ax.imshow(w[rows] if len(rows) else np.zeros((0, len(archetype_names))), aspect="auto",
                      cmap="viridis", interpolation="nearest")
    ax.set_xticks(range(len(archetype_names)), [str(a) for a in archetype_names], rotation=45, ha="right",
                  fontsize=8)
    # card names as plain texts, one per row: a tick per card (two lines and two labels each) would
    # make a whole set's heatmap several times slower to draw
    ax.set_yticks([])
    size = 6 if height < 40.0 else max(2.0, 6 * 40.0 / (0.1 * len(rows) + 1.4))
    name_at = ax.get_yaxis_transform()  # x in axes fraction, y in rows
    for y, label in enumerate(labels):
        ax.text(-0.01, y, label, transform=name_at, ha="right", va="center", fontsize=size)
    ax.set_title(title or "card weights by archetype", fontsize=10)
    cax = fig.add_axes((1 - 1.15 / width, 0.8 / height, 0.15 / width, 1 - 1.2 / height))
    fig.colorbar(image, cax=cax, label="weight")
    return fig


def loss_curves_figure(history: Mapping[str, Sequence[float]], title: str | None = None):
    """Training and validation loss per epoch (and validation top-1 on a second axis when logged)."""
    fig = new_figure(figsize=(7, 3.8), dpi=100)
    ax = fig.add_subplot(1, 1, 1)
    train = list(history.get("train_loss") or [])
    val = list(history.get("val_loss") or [])
    epochs = list(range(1, max(len(train), len(val)) + 1))
    if train:
        ax.plot(epochs[:len(train)], train, marker="o", markersize=3, label="train loss", color="#1f6fb4")
    if val:
        ax.plot(epochs[:len(val)], val, marker="o", markersize=3, label="validation loss", color="#d95f02")
    best = history.get("best_epoch")
    if isinstance(best, int) and 0 <= best < len(epochs):
        ax.axvline(best + 1, color="#999999", linestyle="--", linewidth=0.8, label="kept")
    from matplotlib.ticker import MaxNLocator  # noqa: PLC0415 - matplotlib is heavy: loaded only to draw

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("epoch")
    ax.set_ylabel("cross-entropy of the logged pick")
    top1 = list(history.get("val_top1") or [])
    if top1:
        twin = ax.twinx()
        twin.plot(epochs[:len(top1)], top1, color="#2e8b3d", linewidth=1, alpha=0.7, label="validation top-1")
        twin.set_ylabel("validation top-1")
        twin.legend(loc="center right", fontsize=8, frameon=False)
    ax.set_title(title or "training")
    ax.grid(alpha=0.25)
    ax.legend(loc="upper right", fontsize=8, frameon=False)
    fig.subplots_adjust(left=0.12, right=0.88, bottom=0.14, top=0.9)
    return fig


__all__ = ["CARD_COLORS", "PAIRS", "RARITY_EDGES", "draft_history_figure", "pair_commitment",
           "weights_heatmap_figure"]
