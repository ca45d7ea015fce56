"""The Draftsim bot (Daniel Brooks' published model, the bot of draftsim.com), pure: numpy, no Django.

A card's value is ``base rating (0-5) + colour bonus``. The colour bonus depends on the drafter's
*commitment* to each colour, a function of the pool: every pool card adds ``rating - 2.0`` to the
commitment of each of its colours (2.0 is the replacement-level "baseline", so weak cards lower it).

Speculation stage
    * Per colour: ``bonus_c = clip(0.9 * commitment_c / 3.5, 0, 0.9)``: a linear ramp from 0 at no
      commitment to the maximum +0.9 at the commitment threshold 3.5.
    * The second-most-committed colour's bonus is raised to ``0.8 *`` the maximum (top colour's)
      bonus. Reading: "maximum bonus" is the largest colour bonus of the drafter at that pick, so once
      one colour has passed the threshold the second colour gets ``0.8 * 0.9 = 0.72`` (which is what
      the reference port does); before that the raise is proportional, and it never lifts the second
      colour above the first. The raise applies only to a colour with positive commitment (with no
      commitment there is no "second colour"); colours tied for second place are all raised.
    * One-colour cards get their colour's bonus; colourless cards get the largest single-colour bonus.
    * Two- and three-colour cards get ``sum(bonus of the card's colours) - sum(bonus of the other
      colours) - 0.6``. Reading: "on-colour bonuses" are the bonuses of the card's own colours and
      "off-colour ones" the bonuses of the colours the card is not.
    * Four- and five-colour cards get no bonus (0).

Committed stage
    Entered when two colours have commitment >= 3.5, or from pack 2 pick 4 on (0-based
    ``pack_number >= 1 and pick_number >= 3``, and every pick of pack 3). The top colour pair is the
    two most committed colours (ties broken in WUBRG order).
    * Cards whose colours are a subset of the pair get +2.0; colourless cards get the largest
      single-colour bonus, i.e. +2.0 as well.
    * Other cards get ``-1`` per off-colour mana symbol beyond the first:
      ``-max(0, off_colour_pips - 1)``, so a card with one off-colour pip (a splash) gets 0 and
      ``{1}{R}{R}`` outside the pair gets -1.
    * Four- and five-colour cards get no bonus (0).

Mana symbols come from ``DraftCard.color_pips()`` (hybrid symbols count for each of their colours);
when a card has no mana cost (the proxy logs' set lists only know colour identity) each of its colours
counts one symbol. Cards without a rating get ``unknown_rating`` (by default the 10th percentile of
the ratings given).

:meth:`DraftsimBot.score_logs` computes the same values for a whole :class:`DraftLogs` at once.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from drafts.bots.base import PickContext, Ranking, rank
from drafts.core.cards import DraftCard, SetList
from drafts.core.logs import DraftLogs

COLORS = "WUBRG"
BASELINE = 2.0  # rating of a replacement-level card: commitment grows by rating - BASELINE
COMMIT_THRESHOLD = 3.5  # commitment at which the speculation bonus is maximal / a colour is committed
MAX_SPECULATION_BONUS = 0.9
SECOND_COLOR_FRACTION = 0.8
ON_COLOR_BONUS = 2.0
OFF_COLOR_PENALTY = 1.0  # per off-colour mana symbol beyond the first
MULTICOLOR_PENALTY = 0.6
COMMIT_PACK, COMMIT_PICK = 1, 3  # 0-based: pack 2, pick 4


def card_color_vector(card: DraftCard) -> np.ndarray:
    """1.0 for each of the card's colours (WUBRG order)."""
    return np.array([1.0 if c in card.colors else 0.0 for c in COLORS])


def card_pip_vector(card: DraftCard) -> np.ndarray:
    """Coloured mana symbols per colour; one per colour when the card has no mana cost."""
    if card.mana_cost:
        pips = card.color_pips()
        vec = np.array([float(pips.get(c, 0)) for c in COLORS])
        if vec.sum() > 0 or not card.colors:
            return vec
    return card_color_vector(card)


class DraftsimBot:
    """Draftsim's rating + colour-bonus bot. ``ratings``: card name -> base rating (0-5)."""

    def __init__(self, ratings: dict[str, float], name: str = "draftsim", unknown_rating: float | None = None):
        self.name = name
        self.ratings = {str(k): float(v) for k, v in ratings.items()}
        if unknown_rating is None:
            unknown_rating = float(np.percentile(list(self.ratings.values()), 10)) if self.ratings else 0.0
        self.unknown_rating = float(unknown_rating)

    # --- the model, one drafter -------------------------------------------------------------
    def rating(self, name: str) -> float:
        return self.ratings.get(name, self.unknown_rating)

    def commitment(self, pool: Sequence[str], set_list: SetList) -> np.ndarray:
        """Commitment per colour (WUBRG): the sum of ``rating - 2.0`` over pool cards of that colour."""
        out = np.zeros(5)
        for name in pool:
            out += (self.rating(name) - BASELINE) * card_color_vector(set_list.card(name))
        return out

    @staticmethod
    def color_bonuses(commitment: np.ndarray) -> np.ndarray:
        """Speculation bonus per colour, with the second colour raised (see the module docs)."""
        return _color_bonuses(np.asarray(commitment, dtype=float)[None, :])[0]

    @staticmethod
    def is_committed(commitment: np.ndarray, pack_number: int, pick_number: int) -> bool:
        return bool(_committed(np.asarray(commitment, dtype=float)[None, :], np.array([pack_number]),
                               np.array([pick_number]))[0])

    @staticmethod
    def top_pair(commitment: np.ndarray) -> str:
        """The two most committed colours (ties in WUBRG order), as letters in WUBRG order."""
        order = np.argsort(-np.asarray(commitment, dtype=float), kind="stable")[:2]
        return "".join(COLORS[i] for i in sorted(order))

    def color_bonus(self, card: DraftCard, commitment: np.ndarray, committed: bool) -> float:
        colors = card_color_vector(card)[None, :]
        pips = card_pip_vector(card)[None, :]
        commitment = np.asarray(commitment, dtype=float)[None, :]
        return float(_bonus_matrix(commitment, np.array([committed]), colors, pips)[0, 0])

    def value(self, name: str, pool: Sequence[str], context: PickContext) -> float:
        commitment = self.commitment(pool, context.set_list)
        committed = self.is_committed(commitment, context.pack_number, context.pick_number)
        return self.rating(name) + self.color_bonus(context.card(name), commitment, committed)

    def pick(self, pack: Sequence[str], pool: Sequence[str], context: PickContext) -> Ranking:
        pack = list(pack)
        if not pack:
            return []
        commitment = self.commitment(pool, context.set_list)
        committed = self.is_committed(commitment, context.pack_number, context.pick_number)
        cards = [context.card(n) for n in pack]
        colors = np.stack([card_color_vector(c) for c in cards])
        pips = np.stack([card_pip_vector(c) for c in cards])
        bonus = _bonus_matrix(commitment[None, :], np.array([committed]), colors, pips)[0]
        scores = np.array([self.rating(n) for n in pack]) + bonus
        return rank(pack, scores.tolist())

    # --- vectorised over logs -----------------------------------------------------------------
    def score_logs(self, logs: DraftLogs, set_list: SetList, chunk: int = 50000) -> np.ndarray:
        """``[rows, cards]`` values (rating + colour bonus) for every card of every logged pick.

        The same numbers :meth:`pick` gives for that row's pack, pool and pick position; cards
        outside the pack are scored too (the evaluator ignores them).
        """
        cards = [set_list.card(n) for n in logs.cards]
        colors = np.stack([card_color_vector(c) for c in cards])  # [C, 5]
        pips = np.stack([card_pip_vector(c) for c in cards])  # [C, 5]
        ratings = np.array([self.rating(n) for n in logs.cards])  # [C]
        per_card_commit = (ratings - BASELINE)[:, None] * colors  # [C, 5]
        out = np.empty((len(logs), len(cards)), dtype=np.float32)
        for start in range(0, len(logs), chunk):
            stop = min(start + chunk, len(logs))
            commitment = logs.pool[start:stop].astype(np.float64) @ per_card_commit
            committed = _committed(commitment, logs.pack_number[start:stop], logs.pick_number[start:stop])
            out[start:stop] = ratings[None, :] + _bonus_matrix(commitment, committed, colors, pips)
        return out


def _color_bonuses(commitment: np.ndarray) -> np.ndarray:
    """[rows, 5] speculation bonuses for [rows, 5] commitments."""
    bonus = np.clip(MAX_SPECULATION_BONUS * commitment / COMMIT_THRESHOLD, 0.0, MAX_SPECULATION_BONUS)
    top = bonus.max(axis=1, keepdims=True)
    second_value = -np.sort(-commitment, axis=1)[:, 1:2]
    second = (commitment == second_value) & (second_value > 0)
    return np.where(second, np.maximum(bonus, SECOND_COLOR_FRACTION * top), bonus)


def _committed(commitment: np.ndarray, pack_number: np.ndarray, pick_number: np.ndarray) -> np.ndarray:
    pack_number = np.asarray(pack_number, dtype=int)
    pick_number = np.asarray(pick_number, dtype=int)
    two_colors = (commitment >= COMMIT_THRESHOLD).sum(axis=1) >= 2
    late = ((pack_number == COMMIT_PACK) & (pick_number >= COMMIT_PICK)) | (pack_number > COMMIT_PACK)
    return two_colors | late


def _pair_mask(commitment: np.ndarray) -> np.ndarray:
    """[rows, 5] 1.0 for the two most committed colours (stable: ties in WUBRG order)."""
    order = np.argsort(-commitment, axis=1, kind="stable")[:, :2]
    mask = np.zeros_like(commitment)
    np.put_along_axis(mask, order, 1.0, axis=1)
    return mask


def _bonus_matrix(commitment: np.ndarray, committed: np.ndarray, colors: np.ndarray, pips: np.ndarray) -> np.ndarray:
    """Colour bonus [rows, cards] given commitments [rows, 5], committed flags [rows] and the cards'
    colour [cards, 5] and mana-symbol [cards, 5] vectors."""
    n_colors = colors.sum(axis=1)  # [C]
    # speculation stage
    bonus = _color_bonuses(commitment)  # [R, 5]
    on = bonus @ colors.T  # [R, C]: sum of the bonuses of the card's colours
    off = bonus.sum(axis=1, keepdims=True) - on
    largest = bonus.max(axis=1, keepdims=True)
    spec = np.where(n_colors[None, :] == 1, on, 0.0)
    spec = np.where(n_colors[None, :] == 0, largest, spec)
    spec = np.where((n_colors[None, :] >= 2) & (n_colors[None, :] <= 3), on - off - MULTICOLOR_PENALTY, spec)
    # committed stage
    outside = 1.0 - _pair_mask(commitment)  # [R, 5]
    in_pair = (outside @ colors.T) == 0  # [R, C] (colourless cards included: the largest bonus)
    off_pips = outside @ pips.T
    comm = np.where(in_pair, ON_COLOR_BONUS, -OFF_COLOR_PENALTY * np.maximum(off_pips - 1.0, 0.0))
    comm = np.where(n_colors[None, :] >= 4, 0.0, comm)
    return np.where(np.asarray(committed, dtype=bool)[:, None], comm, spec)


__all__ = ["BASELINE", "COMMIT_THRESHOLD", "DraftsimBot", "MAX_SPECULATION_BONUS", "MULTICOLOR_PENALTY",
           "OFF_COLOR_PENALTY", "ON_COLOR_BONUS", "SECOND_COLOR_FRACTION", "card_color_vector", "card_pip_vector"]
